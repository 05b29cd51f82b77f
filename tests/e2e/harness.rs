//! Starting the simulator, running `pxfa`, and checking output.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;

/// The binary under test.
pub(crate) fn pxfa_path() -> &'static str {
    env!("CARGO_BIN_EXE_pxfa")
}

/// `pxfa` with a clean environment: no `PUREFA_*`, no colours.
pub(crate) fn pxfa() -> Command {
    let mut c = Command::new(pxfa_path());
    c.env_remove("PUREFA_URL")
        .env_remove("PUREFA_API")
        // Never the tester's pxfa profiles (a current-profile would name an array).
        .env_remove("PXFA_PROFILE")
        .env("PXFA_CONFIG", no_config())
        // status, doctor, orphans and apply read it: never the tester's cluster.
        .env_remove("KUBECONFIG")
        // An API client's settings (Pure's names).
        .env_remove("PUREFA_CLIENT_ID")
        .env_remove("PUREFA_KEY_ID")
        .env_remove("PUREFA_ISSUER")
        .env_remove("PUREFA_USERNAME")
        .env_remove("PUREFA_PRIVATE_KEY_FILE")
        .env_remove("PUREFA_PRIVATE_KEY_PASSWORD")
        // The token journal's default folder: never the real home of whoever runs
        // the tests.
        .env(
            "XDG_STATE_HOME",
            std::env::temp_dir().join(format!("pxfa-e2e-state-{}", std::process::id())),
        )
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(60));
    c
}

/// A pxfa config file that does not exist: no profile applies unless a test writes
/// its own file and points `PXFA_CONFIG` at it.
pub(crate) fn no_config() -> PathBuf {
    std::env::temp_dir().join(format!("pxfa-e2e-no-config-{}.yaml", std::process::id()))
}

/// `pxfa` as a child process to watch while it runs: the clean environment of
/// [`pxfa`], no stdin or stdout, stderr piped.
pub(crate) fn pxfa_child() -> StdCommand {
    let mut c = StdCommand::new(pxfa_path());
    c.env_remove("PUREFA_URL")
        .env_remove("PUREFA_API")
        .env_remove("PXFA_PROFILE")
        .env("PXFA_CONFIG", no_config())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// An example spec from `examples/`.
pub(crate) fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

/// The direct-access example tenant.
pub(crate) fn direct_access_spec() -> PathBuf {
    example("tenant-direct-access.yaml")
}

/// The direct-access example switched to pre-created volumes connected through the
/// management host group (import needs Portworx 3.7 with the FA/FB driver), written
/// into `dir`: the tenant whose plan creates volumes, hosts and a host group.
pub(crate) fn import_host_group_spec(dir: &std::path::Path) -> PathBuf {
    let text = std::fs::read_to_string(direct_access_spec()).unwrap();
    let text = text
        .replacen("version: 3.6.2", "version: 3.7.0", 1)
        .replacen(
            "attach: fada",
            "attach: host-group\n    provisioning: import",
            1,
        )
        .replacen(
            "hostGroup: hcp-mgmt",
            "hostGroup: hcp-mgmt\n    faFbDriver: true",
            1,
        );
    let path = dir.join("tenant-import.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A `pxfa sim serve` child process on a free port; killed when dropped.
pub(crate) struct Sim {
    child: Option<Child>,
    /// `https://127.0.0.1:PORT`.
    pub(crate) url: String,
    /// Folder with the token, certificate and state files.
    pub(crate) dir: tempfile::TempDir,
    /// The token file.
    pub(crate) token_file: PathBuf,
    /// The certificate (PEM).
    pub(crate) cert: PathBuf,
}

impl Sim {
    /// Runs `f` with an HTTP client that trusts this simulator's certificate (for
    /// tests that speak to the REST API directly), on a runtime of its own.
    pub(crate) fn with_http<T>(&self, f: impl AsyncFnOnce(reqwest::Client) -> T) -> T {
        flasharray::rest::install_crypto_provider();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let cert = std::fs::read(&self.cert).unwrap();
        let http = reqwest::Client::builder()
            .tls_certs_only(reqwest::Certificate::from_pem_bundle(&cert).unwrap())
            .build()
            .unwrap();
        rt.block_on(f(http))
    }

    /// Starts a simulator with extra `sim serve` arguments.
    pub(crate) fn start_with(extra: &[&str]) -> Sim {
        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("token");
        let cert = dir.path().join("cert.pem");
        let mut child = StdCommand::new(pxfa_path())
            .args([
                "sim",
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--api-token-file",
            ])
            .arg(&token_file)
            .arg("--cert-out")
            .arg(&cert)
            .args(extra)
            .env_remove("PUREFA_URL")
            .env_remove("PUREFA_API")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start pxfa sim serve");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the simulator printed no readiness line within 30 s");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("https://"))
            .unwrap_or_else(|| panic!("no URL in readiness line {line:?}"))
            .to_string();
        Sim {
            child: Some(child),
            url,
            dir,
            token_file,
            cert,
        }
    }

    /// Starts a plain simulator.
    pub(crate) fn start() -> Sim {
        Self::start_with(&[])
    }

    /// The API token the simulator accepts.
    pub(crate) fn token(&self) -> String {
        std::fs::read_to_string(&self.token_file)
            .unwrap()
            .trim()
            .to_string()
    }

    /// `pxfa` pointed at this simulator (URL, CA file, token file).
    pub(crate) fn cmd(&self) -> Command {
        let mut c = pxfa();
        c.arg("--array")
            .arg(&self.url)
            .arg("--ca-file")
            .arg(&self.cert)
            .arg("--api-token-file")
            .arg(&self.token_file);
        c
    }

    /// Runs `pxfa ARGS -o json` against the simulator, expects success, returns JSON.
    pub(crate) fn json(&self, args: &[&str]) -> serde_json::Value {
        let out = self.cmd().args(args).args(["-o", "json"]).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(
            out.status.success(),
            "pxfa {args:?} failed ({:?}):\n{stderr}",
            out.status.code()
        );
        self.assert_no_token(&stdout, &stderr);
        serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("pxfa {args:?}: stdout is not JSON ({e}):\n{stdout}"))
    }

    /// The names `pxfa volume list` shows.
    pub(crate) fn volume_names(&self) -> Vec<String> {
        self.json(&["volume", "list"])
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// Fails when the API token appears in either stream.
    pub(crate) fn assert_no_token(&self, stdout: &str, stderr: &str) {
        let t = self.token();
        assert!(!stdout.contains(&t), "the API token leaked to stdout");
        assert!(!stderr.contains(&t), "the API token leaked to stderr");
    }

    /// Sends SIGTERM and waits for the process to end; returns whether it exited 0.
    pub(crate) fn terminate(mut self) -> bool {
        let mut child = self.child.take().unwrap();
        let status = StdCommand::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(s) = child.try_wait().unwrap() {
                return s.success();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Every file under `dir`.
pub(crate) fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Edits a spec file's first `replicas: FROM` to `replicas: TO`.
pub(crate) fn set_replicas(spec: &Path, from: u32, to: u32) {
    let text = std::fs::read_to_string(spec).unwrap();
    let new = text.replacen(&format!("replicas: {from}"), &format!("replicas: {to}"), 1);
    assert_ne!(text, new, "the spec has replicas: {from}");
    std::fs::write(spec, new).unwrap();
}

/// stdout and stderr of an output as strings.
pub(crate) fn streams(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// The objects of a `-o json` listing that are not tenant-demo's, by name, with the
/// fields pxfa must never change about them (sorted, for comparing before/after).
pub(crate) fn foreign_items(items: &[serde_json::Value], fields: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = items
        .iter()
        .filter(|i| !i["name"].as_str().unwrap_or("").starts_with("tenant-demo"))
        .map(|i| {
            let picked: Vec<String> = fields.iter().map(|f| i[*f].to_string()).collect();
            format!("{} {}", i["name"], picked.join(" "))
        })
        .collect();
    out.sort();
    out
}
