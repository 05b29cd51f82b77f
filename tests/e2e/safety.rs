//! Nothing pxfa holds is lost: a px-pure-secret with a real token is never replaced by
//! a template, `--sim-state` is written only when the array changed, and Ctrl-C
//! keeps what was done.

use std::path::Path;

use predicates::str::contains;

use crate::harness::{direct_access_spec, example, pxfa, streams};

fn sim_cmd(state: &Path) -> assert_cmd::Command {
    let mut c = pxfa();
    c.args(["--array", "sim", "--sim-state"]).arg(state);
    c
}

/// The README's cloud-drive walkthrough, verbatim: the second apply (no
/// `--include-secrets`) must not turn the only copy of the token into a template.
#[test]
fn readme_cloud_drive_walkthrough_keeps_the_secret() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("pxfa-sim.json");
    let out_a = dir.path().join("out-a");
    let spec = example("tenant-cloud-drive.yaml");
    let secret = out_a.join("tenant/02-secret-px-pure-secret.yaml");

    sim_cmd(&state)
        .arg("apply")
        .arg("-f")
        .arg(&spec)
        .args(["--yes", "--out"])
        .arg(&out_a)
        .arg("--include-secrets")
        .assert()
        .success();
    let first = std::fs::read(&secret).unwrap();
    assert!(!String::from_utf8_lossy(&first).contains("<paste"));

    let out = sim_cmd(&state)
        .arg("apply")
        .arg("-f")
        .arg(&spec)
        .args(["--yes", "--out"])
        .arg(&out_a)
        .output()
        .unwrap();
    let (_, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        std::fs::read(&secret).unwrap(),
        first,
        "the secret file must be kept byte for byte"
    );
    assert!(stderr.contains("kept"), "{stderr}");
    assert!(stderr.contains("pxfa-tenant-cd"), "{stderr}");
}

/// `plan`, a refused `apply` and `volume list` change nothing, so they leave the
/// state file exactly as it was (bytes and modification time).
#[test]
fn read_only_commands_do_not_touch_sim_state() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let spec = direct_access_spec();

    // Without a state file, a read-only command does not create one.
    let plan = || {
        sim_cmd(&state)
            .arg("plan")
            .arg("-f")
            .arg(&spec)
            .assert()
            .success();
    };
    plan();
    assert!(!state.exists(), "plan created the state file");

    sim_cmd(&state)
        .args(["volume", "create", "keep-1", "--size", "1G"])
        .assert()
        .success();
    let bytes = std::fs::read(&state).unwrap();
    let mtime = std::fs::metadata(&state).unwrap().modified().unwrap();
    // Coarse file systems keep mtimes in whole seconds or worse.
    std::thread::sleep(std::time::Duration::from_millis(1100));

    plan();
    // Not a terminal and no --yes: refused before any change.
    sim_cmd(&state)
        .arg("apply")
        .arg("-f")
        .arg(&spec)
        .write_stdin("n\n")
        .assert()
        .code(2);
    sim_cmd(&state)
        .args(["volume", "list"])
        .assert()
        .success()
        .stdout(contains("keep-1"));

    assert_eq!(std::fs::read(&state).unwrap(), bytes);
    assert_eq!(
        std::fs::metadata(&state).unwrap().modified().unwrap(),
        mtime,
        "a read-only command rewrote the state file"
    );
}

/// Ctrl-C during an apply: exit 130, the finished writes are in `--sim-state`, and
/// the next apply converges from there.
#[cfg(unix)]
#[test]
fn ctrl_c_saves_sim_state() {
    use std::io::{BufRead, BufReader};
    use std::process::Command;
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    // The import variant writes in several rounds (pod, then volumes, then connections).
    let spec = crate::harness::import_host_group_spec(dir.path());
    let mut child = crate::harness::pxfa_child()
        .args([
            "-v",
            "--array",
            "sim",
            "--sim-latency",
            "200ms",
            "--sim-state",
        ])
        .arg(&state)
        .args(["apply", "--yes", "-f"])
        .arg(&spec)
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            // Round 2 started: round 1's writes have finished.
            if line.contains("round started") && line.contains("round=2") {
                let _ = tx.send(None);
            }
            all.push_str(&line);
            all.push('\n');
        }
        let _ = tx.send(Some(all));
    });
    match rx.recv_timeout(Duration::from_secs(60)).unwrap() {
        None => {}
        Some(all) => panic!("the apply ended before round 2:\n{all}"),
    }
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "pxfa did not end after SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    let rest = loop {
        if let Some(all) = rx.recv_timeout(Duration::from_secs(10)).unwrap() {
            break all;
        }
    };
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(rest.contains("interrupted"), "{rest}");
    assert!(state.exists(), "the interrupted apply saved nothing");

    // Round 1's objects are there: the plan creates less than on an empty array.
    let fresh = pxfa()
        .args(["--array", "sim", "plan", "-o", "json", "-f"])
        .arg(&spec)
        .output()
        .unwrap();
    let fresh: serde_json::Value = serde_json::from_slice(&fresh.stdout).unwrap();
    let left = sim_cmd(&state)
        .args(["plan", "-o", "json", "-f"])
        .arg(&spec)
        .output()
        .unwrap();
    let left: serde_json::Value = serde_json::from_slice(&left.stdout).unwrap();
    let creates = |p: &serde_json::Value| p["summary"]["create"].as_u64().unwrap();
    assert!(creates(&left) < creates(&fresh), "{left}");

    // The rerun converges with no duplicates and nothing failed.
    sim_cmd(&state)
        .args(["apply", "--yes", "-f"])
        .arg(&spec)
        .assert()
        .success();
    sim_cmd(&state)
        .args(["plan", "--detailed-exitcode", "-f"])
        .arg(&spec)
        .assert()
        .code(0);
}
