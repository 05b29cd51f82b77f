//! Issue #13, input and transport safety: secrets pasted into an address are never
//! echoed, unreadable credential files exit 2, offline commands ignore `PUREFA_*`,
//! and a name that does not resolve fails at once with the hint.

use std::io::Write;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use predicates::str::contains;

use crate::harness::{direct_access_spec, pxfa, streams};

fn private_file(dir: &std::path::Path, name: &str, body: &str) -> std::path::PathBuf {
    let f = dir.join(name);
    std::fs::File::create(&f)
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    f
}

#[test]
fn secrets_in_the_address_are_never_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let tok = private_file(dir.path(), "tok", "t\n");
    for addr in [
        "http://u:pxfa-SECRET-1@fa1.invalid",
        "https://pxfa-SECRET-2@fa1.invalid:8443",
        "https://fa1.invalid/?api_token=pxfa-SECRET-3&x=1",
        "fa1.invalid?api-token=pxfa-SECRET-4",
        "https://fa1.invalid/#pxfa-SECRET-5",
        "ht!tp://u:pxfa-SECRET-6@fa1.invalid",
    ] {
        for verbosity in ["-q", "-vvv"] {
            let out = pxfa()
                .args(["--array", addr, "--api-token-file"])
                .arg(&tok)
                .args([verbosity, "volume", "list"])
                .output()
                .unwrap();
            let (stdout, stderr) = streams(&out);
            assert_eq!(out.status.code(), Some(2), "{addr}: {stderr}");
            assert!(!stdout.contains("SECRET"), "{addr}: {stdout}");
            assert!(!stderr.contains("SECRET"), "{addr}: {stderr}");
            if verbosity == "-vvv" {
                assert!(stderr.contains("fa1.invalid"), "{addr}: {stderr}");
            }
        }
    }
}

#[test]
fn unreadable_token_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let tok = private_file(dir.path(), "tok", "t\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tok, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    // As root, mode 000 is still readable: a directory path fails for everybody.
    let unreadable = if std::fs::read(&tok).is_ok() {
        dir.path().to_path_buf()
    } else {
        tok
    };
    pxfa()
        .args(["--array", "https://127.0.0.1:1", "--api-token-file"])
        .arg(&unreadable)
        .args(["volume", "list"])
        .assert()
        .code(2)
        .stderr(contains("cannot read API token file"));
}

#[test]
fn garbage_ca_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let tok = private_file(dir.path(), "tok", "t\n");
    let ca = private_file(dir.path(), "ca.pem", "this is not a certificate\n");
    pxfa()
        .args(["--array", "https://127.0.0.1:1", "--api-token-file"])
        .arg(&tok)
        .arg("--ca-file")
        .arg(&ca)
        .args(["volume", "list"])
        .assert()
        .code(2)
        .stderr(contains("CERTIFICATE"));
    pxfa()
        .args(["--array", "https://127.0.0.1:1", "--api-token-file"])
        .arg(&tok)
        .arg("--ca-file")
        .arg(dir.path().join("missing.pem"))
        .args(["volume", "list"])
        .assert()
        .code(2)
        .stderr(contains("cannot read CA file"));
}

/// A listener that counts the connections it accepts, on a free port.
fn counting_listener() -> (String, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}", l.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            if conn.is_ok() {
                count.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    (url, accepted)
}

#[test]
fn offline_commands_ignore_purefa_env() {
    let (url, accepted) = counting_listener();
    let dir = tempfile::tempdir().unwrap();
    let spec = direct_access_spec();
    let with_env = || {
        let mut c = pxfa();
        c.env("PUREFA_URL", &url);
        c
    };
    with_env().arg("size").arg("-f").arg(&spec).assert().code(0);
    with_env()
        .arg("render")
        .arg("-f")
        .arg(&spec)
        .arg("--out")
        .arg(dir.path().join("out"))
        .assert()
        .code(0);
    with_env().arg("lint").arg(&spec).assert().code(0);
    // An explicit --array is ignored with one warning.
    pxfa()
        .args(["--array", &url, "size", "-f"])
        .arg(&spec)
        .assert()
        .code(0)
        .stderr(contains("does not contact the array"));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "an offline command connected"
    );
}

#[test]
fn dns_failure_exits_fast() {
    let dir = tempfile::tempdir().unwrap();
    let tok = private_file(dir.path(), "tok", "t\n");
    let started = Instant::now();
    let out = pxfa()
        .args(["--array", "no-such.invalid", "--api-token-file"])
        .arg(&tok)
        .args(["volume", "list"])
        .output()
        .unwrap();
    let (_, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}: {stderr}",
        started.elapsed()
    );
    assert!(stderr.contains("cannot resolve"), "{stderr}");
    assert!(stderr.contains("PUREFA_URL"), "{stderr}");
}
