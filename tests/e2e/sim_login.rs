//! `pxfa sim serve --admin-password-file`: `pureuser` logs in with its password
//! through the REST 1.x login route Pure's `purefa_token` uses, a wrong password
//! does not, and a simulator without the file has no password login at all.

use crate::harness::{Sim, pxfa};

/// POSTs `username`/`password` to the simulator's `/api/1.19/auth/apitoken` and
/// returns the HTTP status and body.
fn password_login(sim: &Sim, username: &str, password: &str) -> (u16, serde_json::Value) {
    sim.with_http(async |http| {
        let answer = http
            .post(format!("{}/api/1.19/auth/apitoken", sim.url))
            .json(&serde_json::json!({"username": username, "password": password}))
            .send()
            .await
            .unwrap();
        let status = answer.status().as_u16();
        let body = answer.json().await.unwrap_or(serde_json::Value::Null);
        (status, body)
    })
}

#[test]
fn pureuser_logs_in_with_the_password_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let pw = dir.path().join("pw");
    std::fs::write(&pw, "s3cret-pw\nignored second line\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let sim = Sim::start_with(&["--admin-password-file", pw.to_str().unwrap()]);
    let (status, body) = password_login(&sim, "pureuser", "s3cret-pw");
    assert_eq!(status, 200, "{body}");
    assert!(
        body["api_token"].as_str().is_some_and(|t| !t.is_empty()),
        "{body}"
    );
    assert_ne!(password_login(&sim, "pureuser", "wrong").0, 200);
    assert_ne!(
        password_login(&sim, "pureuser", "ignored second line").0,
        200
    );

    let plain = Sim::start();
    assert_ne!(password_login(&plain, "pureuser", "s3cret-pw").0, 200);
}

#[test]
fn an_unreadable_or_empty_password_file_exits_2_before_serving() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    for (file, says) in [
        (dir.path().join("missing"), "cannot read"),
        (empty, "is empty"),
    ] {
        let token = dir.path().join("token");
        let out = pxfa()
            .args([
                "sim",
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--api-token-file",
            ])
            .arg(&token)
            .arg("--admin-password-file")
            .arg(&file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("--admin-password-file") && stderr.contains(says),
            "{stderr}"
        );
        assert!(!token.exists(), "no token file is written");
    }
}
