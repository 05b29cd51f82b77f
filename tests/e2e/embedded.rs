//! The embedded simulated array (`--array sim`, `--sim-state`), `demo`, simulator
//! state across restarts, completions.

use predicates::str::contains;

use crate::harness::{Sim, direct_access_spec, pxfa, streams};

#[test]
fn sim_state_carries_across_commands() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let sim = |args: &[&str]| {
        let mut c = pxfa();
        c.args(["--array", "sim", "--sim-state"])
            .arg(&state)
            .args(args);
        c
    };
    sim(&["volume", "create", "kept1", "kept2", "--size", "2GiB"])
        .assert()
        .success();
    assert!(state.exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&state).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "state holds tokens: owner only");
    }
    let out = sim(&["volume", "list", "-o", "json"]).output().unwrap();
    let vols: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(vols.as_array().unwrap().len(), 2);

    // A failed command still saves (and does not corrupt) the state.
    sim(&["volume", "create", "kept1", "--size", "1GiB"])
        .assert()
        .code(1)
        .stderr(contains("already exists"));

    // The tenant workflow on the embedded array.
    let spec = direct_access_spec();
    sim(&["apply", "--yes", "-f", spec.to_str().unwrap()])
        .assert()
        .success();
    sim(&["plan", "--detailed-exitcode", "-f", spec.to_str().unwrap()])
        .assert()
        .code(0);

    // Without --sim-state, every process starts empty.
    let out = pxfa()
        .args(["--array", "sim", "volume", "list", "-o", "json"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
}

#[test]
fn demo_runs_the_whole_flow() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("demo-out");
    let out = pxfa()
        .arg("demo")
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for needle in [
        "Sizing",
        "Plan",
        "Apply",
        "Array state",
        "0 change(s) the second time",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?}:\n{stdout}");
    }
    assert!(stdout.contains(out_dir.to_str().unwrap()), "{stdout}");
    assert!(std::fs::read_dir(&out_dir).unwrap().count() > 0);
}

#[test]
fn demo_runs_on_the_brownfield_array_too() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("demo-out");
    let out = pxfa()
        .args(["--sim-seed", "brownfield", "demo", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // The management Portworx's hosts and drives are there; the tenant adds its pod.
    for needle in [
        "px-mgmt-worker-01",
        "tenant-blue",
        "attach: fada",
        "+ create pod tenant-demo",
        "Wrote 2 objects on the array (1 created, 1 tagged); 0 failed.",
        "0 change(s) the second time",
        "Wrote 0 objects on the array; 0 failed.",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?}:\n{stdout}");
    }
}

#[test]
fn simulator_saves_state_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("sim-state.json");
    let state_s = state.to_str().unwrap();
    let sim = Sim::start_with(&["--state", state_s, "--seed-volumes", "3"]);
    assert_eq!(sim.json(&["volume", "list"]).as_array().unwrap().len(), 3);
    sim.json(&["volume", "create", "survivor", "--size", "1GiB"]);
    assert!(sim.terminate(), "clean exit on SIGTERM");
    assert!(state.exists());

    let again = Sim::start_with(&["--state", state_s]);
    let names: Vec<String> = again.volume_names();
    assert!(names.contains(&"survivor".to_string()), "{names:?}");
    assert_eq!(names.len(), 4);
}

/// Issue #28: the state is saved after each change, so a killed simulator (no
/// shutdown) keeps every answered write; while it serves, `--array sim` on the same
/// file waits for its lock instead of overwriting its saves.
#[test]
fn a_killed_simulator_keeps_every_answered_write() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("sim-state.json");
    let state_s = state.to_str().unwrap();
    let sim = Sim::start_with(&["--state", state_s]);
    sim.json(&["volume", "create", "kept", "--size", "1GiB"]);
    let o = pxfa()
        .args(["--array", "sim", "--sim-state", state_s, "volume", "list"])
        .timeout(std::time::Duration::from_secs(5))
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0), "ran beside the serving simulator");
    drop(sim); // SIGKILL: no shutdown, no final save.
    let o = pxfa()
        .args([
            "--array",
            "sim",
            "--sim-state",
            state_s,
            "volume",
            "list",
            "-o",
            "name",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("volume/kept"), "{stdout}");
}

/// `pxfa sim serve --rest-version 2.35` is an array without realms: pxfa's client
/// refuses a realm tenant before sending anything (issue #25).
#[test]
fn sim_serve_answers_as_an_older_array() {
    let sim = Sim::start_with(&["--rest-version", "2.35"]);
    let o = sim
        .cmd()
        .args(["plan", "-f"])
        .arg(crate::harness::example("tenant-cloud-drive-realm.yaml"))
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("2.36"), "{stderr}");
    // At 2.38 there are realms but no pod tags, which pxfa's ownership needs.
    let sim = Sim::start_with(&["--rest-version", "2.38"]);
    let o = sim
        .cmd()
        .args(["apply", "--yes", "-f"])
        .arg(crate::harness::example("tenant-cloud-drive.yaml"))
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("2.39") && stderr.contains("pods"),
        "{stderr}"
    );
    assert!(sim.volume_names().is_empty());
}

#[test]
fn simulator_faults_and_latency_are_survived() {
    let sim = Sim::start_with(&[
        "--latency",
        "5ms",
        "--faults",
        "busy:every=3,429:nth=2:retry-after=1",
    ]);
    sim.json(&["volume", "create", "f1", "f2", "--size", "1GiB"]);
    assert_eq!(sim.json(&["volume", "list"]).as_array().unwrap().len(), 2);
    pxfa()
        .args([
            "sim",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--faults",
            "nonsense",
        ])
        .arg("--api-token-file")
        .arg(sim.dir.path().join("other-token"))
        .assert()
        .code(2);
}

#[test]
fn completions() {
    for shell in ["bash", "zsh", "fish"] {
        pxfa()
            .args(["completions", shell])
            .assert()
            .success()
            .stdout(contains("volume"));
    }
}

/// A cloud-drive apply creates the tenant's API token, whose value the array shows only
/// once: without a place to keep it the apply is refused before any change; with
/// `--out --include-secrets` the token lands in px-pure-secret (mode 0600), once.
#[test]
fn new_token_is_never_created_without_a_place_to_keep_it() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let out_dir = dir.path().join("out");
    let spec = crate::harness::example("tenant-cloud-drive.yaml");
    let sim = |args: &[&str]| {
        let mut c = pxfa();
        c.args(["--array", "sim", "--sim-state"])
            .arg(&state)
            .args(args)
            .arg("-f")
            .arg(&spec);
        c
    };
    sim(&["apply", "--yes"])
        .assert()
        .code(2)
        .stderr(contains("--include-secrets"));
    // Nothing was changed: the plan still creates everything, the token included.
    let out = sim(&["plan", "-o", "json"]).output().unwrap();
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let changes = plan["changes"].as_array().unwrap();
    assert!(changes.iter().all(|c| c["action"] == "create"), "{plan}");
    assert!(changes.iter().any(|c| c["kind"] == "api-token"), "{plan}");

    let out_arg = out_dir.to_str().unwrap();
    let out = sim(&["apply", "--yes", "--include-secrets", "--out", out_arg])
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    let secret =
        std::fs::read_to_string(out_dir.join("tenant/02-secret-px-pure-secret.yaml")).unwrap();
    assert!(!secret.contains("<paste"), "{secret}");
    assert!(secret.contains("APIToken"), "{secret}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(out_dir.join("tenant/02-secret-px-pure-secret.yaml")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o077, 0);
    }
    // The token value went to the file only, never to the terminal.
    let token_line = secret
        .lines()
        .find(|l| l.contains("\"APIToken\""))
        .unwrap()
        .to_string();
    let token = token_line.split('"').nth(3).unwrap();
    assert!(!token.is_empty());
    assert!(!stdout.contains(token) && !stderr.contains(token));
    // The token exists now: a later apply has nothing to create and needs no secrets.
    sim(&["apply", "--yes"]).assert().success();
}
