//! `spec.array.realm` through the binary: on an array whose REST version has no
//! realms, `plan`, `apply` and `destroy` exit 2 naming the field and REST 2.36, and
//! nothing is written; offline commands never contact the array; on a current array
//! the realm tenant applies and re-plans with no changes.

use flasharray_mock::MockArray;
use flasharray_sim::{RunningSim, SimConfig, Simulator};

use crate::harness::{example, pxfa};

const TOKEN: &str = "7c2e4a1b-3d5f-4e6a-9b8c-1d2e3f4a5b6c";

/// A simulator in its own runtime, with the `GET /api/api_version` list given.
struct OldArray {
    _rt: tokio::runtime::Runtime,
    sim: RunningSim,
    mock: MockArray,
    dir: tempfile::TempDir,
}

impl OldArray {
    fn start(versions: &[&str]) -> OldArray {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let mock = MockArray::new();
        let cfg = SimConfig {
            versions: versions.iter().map(|v| v.to_string()).collect(),
            ..SimConfig::new(TOKEN.into())
        };
        let sim = rt
            .block_on(Simulator::start(mock.clone(), cfg))
            .expect("simulator");
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        std::fs::write(dir.path().join("cert.pem"), sim.cert_pem()).unwrap();
        OldArray {
            _rt: rt,
            sim,
            mock,
            dir,
        }
    }

    fn cmd(&self) -> assert_cmd::Command {
        let mut c = pxfa();
        c.arg("--array")
            .arg(self.sim.url())
            .arg("--ca-file")
            .arg(self.dir.path().join("cert.pem"))
            .arg("--api-token-file")
            .arg(self.dir.path().join("token"));
        c
    }
}

#[test]
fn an_array_without_realms_exits_2_naming_the_field_and_version() {
    let array = OldArray::start(&["1.19", "2.0", "2.21", "2.35"]);
    let spec = example("tenant-cloud-drive-realm.yaml");
    let out_dir = array.dir.path().join("out");
    let runs: [Vec<std::ffi::OsString>; 4] = [
        vec!["plan".into(), "-f".into(), spec.clone().into()],
        vec![
            "apply".into(),
            "-f".into(),
            spec.clone().into(),
            "--yes".into(),
            "--include-secrets".into(),
            "--allow-endpoint-mismatch".into(),
            "--out".into(),
            out_dir.clone().into(),
        ],
        vec![
            "plan".into(),
            "--destroy".into(),
            "-f".into(),
            spec.clone().into(),
        ],
        vec![
            "destroy".into(),
            "-f".into(),
            spec.clone().into(),
            "--yes".into(),
        ],
    ];
    for args in runs {
        let before = array.mock.generation();
        let out = array.cmd().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("spec.array.realm") && stderr.contains("2.36"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("2.35"), "names the version found: {stderr}");
        assert!(!stderr.contains(TOKEN) && !String::from_utf8_lossy(&out.stdout).contains(TOKEN));
        assert_eq!(array.mock.generation(), before, "{args:?}: nothing written");
    }
    assert!(!out_dir.exists(), "apply wrote no manifests");
    let log = array.sim.request_log();
    assert!(
        log.iter().all(|r| r.method == "GET"
            || r.path.ends_with("/login")
            || r.path.ends_with("/logout")),
        "only reads and sessions: {log:#?}"
    );
    assert!(log.iter().all(|r| !r.path.contains("realms")), "{log:#?}");
}

#[test]
fn offline_commands_do_not_need_realms() {
    let spec = example("tenant-cloud-drive-realm.yaml");
    let dir = tempfile::tempdir().unwrap();
    for args in [vec!["size", "-f"], vec!["lint", "-f"]] {
        let out = pxfa().args(&args).arg(&spec).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = pxfa()
        .args(["render", "-f"])
        .arg(&spec)
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let secret =
        std::fs::read_to_string(dir.path().join("tenant/02-secret-px-pure-secret.yaml")).unwrap();
    assert!(
        secret.contains("\"Realm\": \"tenant-cdr-realm\""),
        "{secret}"
    );
    let lint = pxfa()
        .arg("lint")
        .arg(dir.path().join("management"))
        .arg(dir.path().join("tenant"))
        .output()
        .unwrap();
    assert!(
        lint.status.success(),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
    assert!(String::from_utf8_lossy(&lint.stdout).contains("no findings"));
}

#[test]
fn the_realm_tenant_applies_and_then_plans_no_changes() {
    let array = OldArray::start(&[]);
    let spec = example("tenant-cloud-drive-realm.yaml");
    let out_dir = array.dir.path().join("out");
    let out = array
        .cmd()
        .args(["apply", "-f"])
        .arg(&spec)
        .args([
            "--yes",
            "--include-secrets",
            "--allow-endpoint-mismatch",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let secret =
        std::fs::read_to_string(out_dir.join("tenant/02-secret-px-pure-secret.yaml")).unwrap();
    assert!(
        secret.contains("\"Realm\": \"tenant-cdr-realm\""),
        "{secret}"
    );
    assert!(
        !secret.contains("<paste"),
        "the realm user's token is filled in"
    );
    let again = array
        .cmd()
        .args(["plan", "--detailed-exitcode", "-f"])
        .arg(&spec)
        .output()
        .unwrap();
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&again.stdout),
        String::from_utf8_lossy(&again.stderr)
    );
}
