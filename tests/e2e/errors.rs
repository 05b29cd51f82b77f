//! Error paths and exit codes: usage, invalid input before sending, unreachable
//! arrays, bad credentials, untrusted certificates, and secrets in output.

use predicates::str::contains;

use crate::harness::{Sim, pxfa, streams};

/// Nothing listens on port 1: any attempt to send would fail with exit 1, so an exit
/// 2 proves the input was refused before sending.
const DEAD: &str = "https://127.0.0.1:1";

fn token_file(dir: &std::path::Path, token: &str) -> std::path::PathBuf {
    let f = dir.join("tok");
    std::fs::write(&f, token).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    f
}

#[test]
fn invalid_input_exits_2_before_anything_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let tok = token_file(dir.path(), "whatever");
    let run = |args: &[&str]| {
        pxfa()
            .args(["--array", DEAD, "--api-token-file"])
            .arg(&tok)
            .args(args)
            .assert()
            .code(2)
    };
    run(&["volume", "create", "v1", "--size", "10 parsecs"]).stderr(contains("not a valid size"));
    run(&["volume", "create", "v1", "--size", "100"]).stderr(contains("multiple of 512"));
    run(&["volume", "create", "v1", "--size", "512"]).stderr(contains("1 MiB"));
    run(&["volume", "create", "bad name", "--size", "1GiB"])
        .stderr(contains("invalid volume name"));
    run(&["volume", "create", "v1", "V1", "--size", "1GiB"]).stderr(contains("twice"));
    run(&["host", "create", "h1", "--wwn", "12:34"]).stderr(contains("WWN"));
    run(&[
        "connection",
        "create",
        "--host",
        "h1",
        "v1",
        "v2",
        "--lun",
        "3",
    ]);
    run(&["pod", "destroy", "*", "--yes"]).stderr(contains("wildcard"));
}

#[test]
fn usage_errors_exit_2() {
    pxfa().args(["volume", "frobnicate"]).assert().code(2);
    pxfa()
        .args(["volume", "create", "v1"])
        .assert()
        .code(2)
        .stderr(contains("--size"));
    // A token is never accepted as an argument value.
    pxfa()
        .args(["--array", DEAD, "--api-token", "secret", "array", "info"])
        .assert()
        .code(2);
    pxfa()
        .args(["array", "info"])
        .assert()
        .code(2)
        .stderr(contains("no array given"));
    pxfa()
        .args(["--array", "http://fa.example", "array", "info"])
        .assert()
        .code(2)
        .stderr(contains("https"));
    pxfa()
        .arg("--version")
        .assert()
        .success()
        .stdout(contains("pxfa"));
}

#[test]
fn unreachable_array_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let tok = token_file(dir.path(), "whatever");
    let out = pxfa()
        .args([
            "--array",
            DEAD,
            "--retries",
            "1",
            "--retry-for",
            "3s",
            "--api-token-file",
        ])
        .arg(&tok)
        .args(["volume", "list"])
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("error: "), "{stderr}");
    assert!(
        stderr.contains("127.0.0.1") || stderr.contains("connect"),
        "{stderr}"
    );
    assert!(!stderr.contains("whatever"));
}

#[test]
fn bad_token_exits_1_without_echoing_it() {
    let sim = Sim::start();
    let dir = tempfile::tempdir().unwrap();
    let tok = token_file(dir.path(), "11111111-2222-3333-4444-555555555555");
    let out = pxfa()
        .args(["--array", &sim.url, "--ca-file"])
        .arg(&sim.cert)
        .arg("--api-token-file")
        .arg(&tok)
        .args(["-vv", "volume", "list"])
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("11111111-2222"), "{stderr}");
    assert!(!stdout.contains("11111111-2222"));
    sim.assert_no_token(&stdout, &stderr);
}

#[test]
fn untrusted_certificate_is_refused_without_ca_file() {
    let sim = Sim::start();
    let out = pxfa()
        .args(["--array", &sim.url, "--retries", "0", "--api-token-file"])
        .arg(&sim.token_file)
        .args(["array", "info"])
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.to_lowercase().contains("certificate"), "{stderr}");
    assert!(stderr.contains("hint: "), "{stderr}");
    sim.assert_no_token(&stdout, &stderr);

    // --insecure works, loudly.
    let out = pxfa()
        .args(["--array", &sim.url, "--insecure", "--api-token-file"])
        .arg(&sim.token_file)
        .args(["array", "info"])
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("warning: --insecure"), "{stderr}");
    sim.assert_no_token(&stdout, &stderr);
}

#[test]
fn token_never_in_output_even_with_debug_logs() {
    let sim = Sim::start();
    for args in [
        &["-vv", "volume", "create", "x1", "--size", "1GiB"][..],
        &["-vvv", "volume", "list"][..],
        &["-vv", "volume", "create", "x1", "--size", "1GiB"][..],
        &["-vv", "array", "info", "-o", "json"][..],
    ] {
        let out = sim.cmd().args(args).output().unwrap();
        let (stdout, stderr) = streams(&out);
        sim.assert_no_token(&stdout, &stderr);
    }
}

#[test]
fn environment_and_pure_json() {
    let sim = Sim::start();
    // PUREFA_URL + PUREFA_API, the names Pure's tooling uses.
    pxfa()
        .env("PUREFA_URL", &sim.url)
        .env("PUREFA_API", sim.token())
        .arg("--ca-file")
        .arg(&sim.cert)
        .args(["array", "info"])
        .assert()
        .success();

    // pure.json, with a warning because it is readable by others.
    let pj = sim.dir.path().join("pure.json");
    let endpoint = sim.url.trim_start_matches("https://");
    std::fs::write(
        &pj,
        format!(
            r#"{{"FlashArrays":[{{"MgmtEndPoint":"{endpoint}","APIToken":"{}"}}]}}"#,
            sim.token()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pj, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let out = pxfa()
        .arg("--pure-json")
        .arg(&pj)
        .arg("--ca-file")
        .arg(&sim.cert)
        .args(["array", "info"])
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    #[cfg(unix)]
    assert!(stderr.contains("chmod 600"), "{stderr}");
    sim.assert_no_token(&stdout, &stderr);

    // The flag beats the environment: a dead PUREFA_URL is not used.
    sim.cmd()
        .env("PUREFA_URL", DEAD)
        .args(["array", "info"])
        .assert()
        .success();
}
