//! `pxfa` authenticated by an API client (OAuth2) against `pxfa sim serve`: plan,
//! apply and status from flags, the same from Pure's environment names with an
//! encrypted key, and a scan of every output at `-vvv` for the private key, the ID
//! token and the access token. Refusals: a missing setting exits 2 before anything
//! is sent; a key the array does not know exits 1 naming the cause.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::harness::{Sim, import_host_group_spec, pxfa, streams};

const KEY: &str = include_str!("../../crates/flasharray-client/tests/keys/client-pkcs8.pem");
const ENCRYPTED: &str =
    include_str!("../../crates/flasharray-client/tests/keys/client-encrypted.pem");
const PASSWORD: &str = "correct horse";
const PUBLIC: &str = include_str!("../../crates/flasharray-client/tests/keys/client-public.pem");
const OTHER_KEY: &str = include_str!("../../crates/flasharray-client/tests/keys/other-pkcs8.pem");

/// An owner-only file in `dir`.
fn private_file(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    path
}

/// Registers the API client `pxfa-e2e` (array_admin) on the simulator through its
/// REST API with the admin token, enables it, and returns its id and key id.
fn register(sim: &Sim) -> (String, String) {
    sim.with_http(async |http| {
        let login = http
            .post(format!("{}/api/2.38/login", sim.url))
            .header("api-token", sim.token())
            .send()
            .await
            .unwrap();
        let session = login.headers()["x-auth-token"].to_str().unwrap().to_string();
        let call = |method: reqwest::Method, body: serde_json::Value| {
            http.request(method, format!("{}/api/2.38/api-clients?names=pxfa-e2e", sim.url))
                .header("x-auth-token", &session)
                .json(&body)
                .send()
        };
        let created: serde_json::Value = call(
            reqwest::Method::POST,
            serde_json::json!({"issuer": "pxfa-e2e", "public_key": PUBLIC, "max_role": "array_admin"}),
        )
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
        let enabled = call(reqwest::Method::PATCH, serde_json::json!({"enabled": true}))
            .await
            .unwrap();
        assert!(enabled.status().is_success());
        let item = &created["items"][0];
        (
            item["id"].as_str().unwrap().to_string(),
            item["key_id"].as_str().unwrap().to_string(),
        )
    })
}

/// Fails when anything secret of an API client login shows: a line of the private
/// key, any JWT (an ID or access token starts `eyJ`, base64 of `{"`), a bearer
/// header, or the admin token.
fn assert_no_secret(sim: &Sim, what: &str, out: &Output) {
    let (stdout, stderr) = streams(out);
    for text in [&stdout, &stderr] {
        for line in KEY
            .lines()
            .chain(ENCRYPTED.lines())
            .filter(|l| !l.starts_with("-----"))
        {
            assert!(
                !text.contains(line),
                "{what}: a line of the private key leaked"
            );
        }
        assert!(!text.contains("eyJ"), "{what}: a JWT leaked:\n{text}");
        assert!(
            !text.to_ascii_lowercase().contains("bearer "),
            "{what}: a bearer header leaked"
        );
    }
    sim.assert_no_token(&stdout, &stderr);
}

/// `pxfa` against the simulator with the API client on the command line.
fn client_cmd(sim: &Sim, id: &str, key_id: &str, key: &Path) -> assert_cmd::Command {
    let mut c = pxfa();
    c.args(["--array", &sim.url])
        .arg("--ca-file")
        .arg(&sim.cert)
        .args([
            "--client-id",
            id,
            "--key-id",
            key_id,
            "--issuer",
            "pxfa-e2e",
        ])
        .args(["--username", "pureuser", "--private-key-file"])
        .arg(key);
    c
}

#[test]
fn apply_with_an_api_client_leaks_nothing_at_vvv() {
    let sim = Sim::start();
    let (id, key_id) = register(&sim);
    let key = private_file(sim.dir.path(), "client.pem", KEY);
    let spec = import_host_group_spec(sim.dir.path());
    let spec_s = spec.to_str().unwrap();
    let out_dir = sim.dir.path().join("out");
    let runs: [(&str, Vec<&str>); 4] = [
        ("plan", vec!["plan", "-f", spec_s]),
        (
            "apply",
            vec![
                "apply",
                "--allow-endpoint-mismatch",
                "--yes",
                "-f",
                spec_s,
                "--out",
                out_dir.to_str().unwrap(),
            ],
        ),
        ("status", vec!["status", "-f", spec_s, "-o", "json"]),
        ("volume list", vec!["volume", "list", "-o", "yaml"]),
    ];
    for (what, args) in runs {
        let out = client_cmd(&sim, &id, &key_id, &key)
            .arg("-vvv")
            .args(&args)
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&out);
        assert!(out.status.success(), "{what}: {stdout}\n{stderr}");
        assert_no_secret(&sim, what, &out);
        if what == "apply" {
            assert!(stdout.contains("0 failed"), "{stdout}");
        }
    }
    for f in std::fs::read_dir(&out_dir).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap_or_default();
        assert!(!text.contains("eyJ") && !text.contains(KEY.lines().nth(1).unwrap()));
    }
    // Converged, read back by the admin token.
    sim.cmd()
        .args(["plan", "--detailed-exitcode", "-f", spec_s])
        .assert()
        .code(0);
    // And taken down by the API client, leaking nothing either.
    let out = client_cmd(&sim, &id, &key_id, &key)
        .args([
            "-vvv",
            "destroy",
            "--allow-endpoint-mismatch",
            "--yes",
            "-f",
            spec_s,
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "destroy: {stdout}\n{stderr}");
    assert_no_secret(&sim, "destroy", &out);
    sim.cmd()
        .args(["plan", "--detailed-exitcode", "-f", spec_s])
        .assert()
        .code(predicates::ord::ne(0));
}

#[test]
fn pure_environment_names_and_an_encrypted_key() {
    let sim = Sim::start();
    let (id, key_id) = register(&sim);
    let key = private_file(sim.dir.path(), "client-enc.pem", ENCRYPTED);
    let password = private_file(sim.dir.path(), "password", &format!("{PASSWORD}\n"));
    let env = |c: &mut assert_cmd::Command| {
        c.env("PUREFA_URL", &sim.url)
            .env("PUREFA_CLIENT_ID", &id)
            .env("PUREFA_KEY_ID", &key_id)
            .env("PUREFA_ISSUER", "pxfa-e2e")
            .env("PUREFA_USERNAME", "pureuser")
            .env("PUREFA_PRIVATE_KEY_FILE", &key);
    };
    let mut c = pxfa();
    env(&mut c);
    let out = c
        .arg("--ca-file")
        .arg(&sim.cert)
        .arg("--private-key-password-file")
        .arg(&password)
        .args(["-vvv", "volume", "list", "-o", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", streams(&out).1);
    assert_no_secret(&sim, "volume list (env)", &out);
    let (stdout, stderr) = streams(&out);
    assert!(!stdout.contains(PASSWORD) && !stderr.contains(PASSWORD));

    // The password from the environment; a wrong one exits 2 without quoting it.
    let mut c = pxfa();
    env(&mut c);
    let out = c
        .env("PUREFA_PRIVATE_KEY_PASSWORD", "not-the-password")
        .arg("--ca-file")
        .arg(&sim.cert)
        .args(["volume", "list"])
        .output()
        .unwrap();
    let (_, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("wrong password") && stderr.contains("--private-key-file"),
        "{stderr}"
    );
    assert!(!stderr.contains("not-the-password"), "{stderr}");

    // An API client and an API token from the environment at once: refused.
    let mut c = pxfa();
    env(&mut c);
    let out = c
        .env("PUREFA_API", sim.token())
        .args(["volume", "list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        streams(&out).1.contains("PUREFA_API and PUREFA_"),
        "{}",
        streams(&out).1
    );
}

#[test]
fn refusals_name_the_cause() {
    let sim = Sim::start();
    let (id, key_id) = register(&sim);
    let key = private_file(sim.dir.path(), "client.pem", KEY);
    // A setting missing: exit 2 before anything is sent.
    let out = pxfa()
        .args([
            "--array",
            &sim.url,
            "--client-id",
            &id,
            "--private-key-file",
        ])
        .arg(&key)
        .args(["volume", "list"])
        .output()
        .unwrap();
    let (_, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--key-id (PUREFA_KEY_ID)") && stderr.contains("--issuer"),
        "{stderr}"
    );

    // A CR/LF in a setting (it would end the JWT's header line): exit 2 naming that
    // setting's flag, not the key file's (issue #38 L5).
    let out = client_cmd(&sim, &format!("{id}\r\nX-Injected: 1"), &key_id, &key)
        .args(["volume", "list"])
        .output()
        .unwrap();
    let (_, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--client-id (PUREFA_CLIENT_ID)")
            && stderr.contains("control characters")
            && !stderr.contains("--private-key-file"),
        "{stderr}"
    );

    // A key the array does not have for this client: exit 1, the cause named.
    let other = private_file(sim.dir.path(), "other.pem", OTHER_KEY);
    let out = client_cmd(&sim, &id, &key_id, &other)
        .args(["volume", "list"])
        .output()
        .unwrap();
    let (_, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Invalid signature") && stderr.contains(&key_id),
        "{stderr}"
    );
    assert_no_secret(&sim, "wrong key", &out);
}
