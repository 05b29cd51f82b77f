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
    // Delivered: the token journal let go of it and its folder is gone.
    assert!(!out_a.join(".pxfa").exists(), "token journal left in --out");

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
        .args(["volume", "create", "keep-1", "--size", "1GB"])
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

/// An `--array sim --sim-latency 200ms` apply of a spec that writes in several
/// rounds, interrupted with `sigints` SIGINTs (50 ms apart) once round 2 started:
/// (exit status, stderr).
#[cfg(unix)]
fn interrupted_apply(state: &Path, spec: &Path, sigints: usize) -> (Option<i32>, String) {
    use std::io::{BufRead, BufReader};
    use std::process::Command;
    use std::time::{Duration, Instant};

    let mut child = crate::harness::pxfa_child()
        .args([
            "-v",
            "--array",
            "sim",
            "--sim-latency",
            "200ms",
            "--sim-state",
        ])
        .arg(state)
        .args(["apply", "--yes", "-f"])
        .arg(spec)
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
    for i in 0..sigints {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(50));
        }
        let ok = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
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
    (status.code(), rest)
}

/// After an interrupted apply: the state holds round 1's objects (the plan creates
/// less than on an empty array), and the rerun converges with no duplicates.
#[cfg(unix)]
fn rerun_converges(state: &Path, spec: &Path) {
    assert!(state.exists(), "the interrupted apply saved nothing");
    let fresh = pxfa()
        .args(["--array", "sim", "plan", "-o", "json", "-f"])
        .arg(spec)
        .output()
        .unwrap();
    let fresh: serde_json::Value = serde_json::from_slice(&fresh.stdout).unwrap();
    let left = sim_cmd(state)
        .args(["plan", "-o", "json", "-f"])
        .arg(spec)
        .output()
        .unwrap();
    let left: serde_json::Value = serde_json::from_slice(&left.stdout).unwrap();
    let creates = |p: &serde_json::Value| p["summary"]["create"].as_u64().unwrap();
    assert!(creates(&left) < creates(&fresh), "{left}");
    sim_cmd(state)
        .args(["apply", "--yes", "-f"])
        .arg(spec)
        .assert()
        .success();
    sim_cmd(state)
        .args(["plan", "--detailed-exitcode", "-f"])
        .arg(spec)
        .assert()
        .code(0);
}

/// Ctrl-C during an apply: the calls in flight finish, no new ones start, the report
/// says "interrupted: N applied", exit 130, the finished writes are in `--sim-state`,
/// and the next apply converges from there with no duplicates.
#[cfg(unix)]
#[test]
fn ctrl_c_saves_sim_state() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    // The import variant writes in several rounds (pod, then volumes, then connections).
    let spec = crate::harness::import_host_group_spec(dir.path());
    let (code, rest) = interrupted_apply(&state, &spec, 1);
    assert_eq!(code, Some(130), "{rest}");
    // The first Ctrl-C lets the calls in flight finish and the apply report itself.
    assert!(
        rest.contains("interrupting: no new calls are started"),
        "{rest}"
    );
    assert!(
        rest.lines()
            .any(|l| l.contains("interrupted: ") && l.contains(" applied; run apply again")),
        "{rest}"
    );
    assert!(
        !rest.contains("FAILED"),
        "an in-flight call was cut off:\n{rest}"
    );
    rerun_converges(&state, &spec);
}

/// A second Ctrl-C ends the apply at once, still saving `--sim-state`.
#[cfg(unix)]
#[test]
fn second_ctrl_c_ends_at_once_and_saves_sim_state() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let spec = crate::harness::import_host_group_spec(dir.path());
    let (code, rest) = interrupted_apply(&state, &spec, 2);
    assert_eq!(code, Some(130), "{rest}");
    assert!(
        rest.contains("interrupting: no new calls are started"),
        "{rest}"
    );
    assert!(
        rest.contains("interrupted: the changes that finished are kept"),
        "{rest}"
    );
    rerun_converges(&state, &spec);
}

/// A token of the tenant user that pxfa has no copy of (made outside pxfa's journal
/// and files) is reported, exit 4 naming `pxfa token rotate`, and never replaced.
#[test]
fn token_with_no_copy_is_reported_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("pxfa-sim.json");
    let out = dir.path().join("out");
    let spec = example("tenant-cloud-drive.yaml");
    // The listing shows the token's creation time: equal listings, same token.
    let created_at = |state: &Path| -> String {
        let o = sim_cmd(state)
            .args(["token", "list", "pxfa-tenant-cd", "-o", "json"])
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap()
    };
    // Someone made the token by hand and kept the value elsewhere (or lost it).
    sim_cmd(&state)
        .args(["token", "create", "pxfa-tenant-cd", "--out"])
        .arg(dir.path().join("elsewhere"))
        .assert()
        .success();
    let before = created_at(&state);
    assert!(before.contains("\"created_at\": 1"), "{before}");

    let o = sim_cmd(&state)
        .arg("apply")
        .arg("-f")
        .arg(&spec)
        .args(["--yes", "--include-secrets", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let (_, stderr) = streams(&o);
    assert_eq!(o.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("has an API token pxfa has no copy of"),
        "{stderr}"
    );
    assert!(stderr.contains("pxfa token rotate"), "{stderr}");
    assert_eq!(created_at(&state), before, "the token was replaced");
    assert!(!out.join(".pxfa").exists(), "nothing to journal");
}

/// The remedy for a token nobody has: `token rotate --out DIR`, one step per run
/// (the admin applies the file in between), ends with the token user holding a new
/// token that the file holds, the alternate's token gone, and apply content.
#[test]
fn file_only_rotation_replaces_a_token_nobody_has() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("pxfa-sim.json");
    let out = dir.path().join("out");
    let spec = example("tenant-cloud-drive.yaml");
    let secret = out.join("tenant/02-secret-px-pure-secret.yaml");
    sim_cmd(&state)
        .args(["token", "create", "pxfa-tenant-cd", "--out"])
        .arg(dir.path().join("lost"))
        .assert()
        .success();
    sim_cmd(&state)
        .arg("apply")
        .arg("-f")
        .arg(&spec)
        .args(["--yes", "--include-secrets", "--out"])
        .arg(&out)
        .assert()
        .code(4);
    let rotate = || {
        let o = sim_cmd(&state)
            .args(["--yes", "token", "rotate", "--grace", "0s", "-f"])
            .arg(&spec)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&o);
        assert!(o.status.success(), "{stdout}{stderr}");
        (stdout, std::fs::read_to_string(&secret).unwrap())
    };
    let (s1, f1) = rotate();
    assert!(
        s1.contains("created a new token for pxfa-tenant-cd-alt"),
        "{s1}"
    );
    assert!(
        f1.contains("pxfa.io/token-user: pxfa-tenant-cd-alt"),
        "{f1}"
    );
    assert!(!f1.contains("<paste"), "{f1}");
    let (s2, f2) = rotate();
    assert!(
        s2.contains("deleted the old token of pxfa-tenant-cd"),
        "{s2}"
    );
    assert!(f2.contains("pxfa.io/token-user: pxfa-tenant-cd\n"), "{f2}");
    let (s3, _) = rotate();
    assert!(
        s3.contains("deleted the old token of pxfa-tenant-cd-alt"),
        "{s3}"
    );
    assert!(s3.contains("rotated"), "{s3}");
    assert!(!out.join(".pxfa").exists(), "journal left");
    // The alternate holds no token any more; apply keeps the file that holds the
    // token user's, and is content.
    let alt = sim_cmd(&state)
        .args(["token", "list", "pxfa-tenant-cd-alt", "-o", "json"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&alt.stdout).contains("\"created_at\": 1"));
    let o = sim_cmd(&state)
        .arg("apply")
        .arg("-f")
        .arg(&spec)
        .args(["--yes", "--include-secrets", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let (_, stderr) = streams(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("kept"), "{stderr}");
}

/// The first number under a `created_at` key anywhere in `v`.
fn find_created_at(v: &serde_json::Value) -> Option<u64> {
    match v {
        serde_json::Value::Object(m) => m
            .get("created_at")
            .and_then(serde_json::Value::as_u64)
            .or_else(|| m.values().find_map(find_created_at)),
        serde_json::Value::Array(a) => a.iter().find_map(find_created_at),
        _ => None,
    }
}

/// What a killed apply leaves in `--out DIR/.pxfa/`, picked up by the next apply:
/// a journaled token is delivered without an array write, and a token whose value
/// never reached the journal is replaced, each said in the plan.
#[test]
fn the_next_apply_finishes_what_the_journal_holds() {
    let spec = example("tenant-cloud-drive.yaml");
    let user = "pxfa-tenant-cd";
    for state_word in ["created", "creating"] {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("pxfa-sim.json");
        let out = dir.path().join("out");
        let secret = out.join("tenant/02-secret-px-pure-secret.yaml");
        // The token the killed apply created.
        let value_file = dir.path().join("value");
        sim_cmd(&state)
            .args(["token", "create", user, "--out"])
            .arg(&value_file)
            .assert()
            .success();
        let value = std::fs::read_to_string(&value_file)
            .unwrap()
            .trim()
            .to_string();
        let listed = sim_cmd(&state)
            .args(["token", "list", user, "-o", "json"])
            .output()
            .unwrap();
        let created_at = find_created_at(&serde_json::from_slice(&listed.stdout).unwrap()).unwrap();
        let journal = out.join(".pxfa");
        std::fs::create_dir_all(&journal).unwrap();
        // Owner-only, as pxfa makes it: pxfa refuses, never chmods, an open one.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        let entry = if state_word == "created" {
            serde_json::json!({"v": 1, "array": "sim", "user": user, "state": "created",
                "intent_at_ms": created_at, "created_at": created_at, "token": value})
        } else {
            serde_json::json!({"v": 1, "array": "sim", "user": user, "state": "creating",
                "intent_at_ms": created_at, "observed": "no-token"})
        };
        std::fs::write(
            journal.join(format!("pxfa-token-sim-{user}.json")),
            entry.to_string(),
        )
        .unwrap();

        // -v: the plan shows each change's reason.
        let o = sim_cmd(&state)
            .args(["-v", "apply", "-f"])
            .arg(&spec)
            .args(["--yes", "--include-secrets", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&o);
        assert!(o.status.success(), "{state_word}: {stdout}{stderr}");
        let file = std::fs::read_to_string(&secret).unwrap();
        if state_word == "created" {
            assert!(stdout.contains("~ update api token of"), "{stdout}");
            assert!(stdout.contains("deliver (pending)"), "{stdout}");
            assert!(
                file.contains(&value),
                "the journaled token was not delivered"
            );
        } else {
            assert!(
                stdout.contains("created by an interrupted apply"),
                "{stdout}"
            );
            assert!(!file.contains(&value), "the undelivered token was kept");
            assert!(!file.contains("<paste"), "{file}");
        }
        assert!(!journal.exists(), "{state_word}: journal left");
        // Nothing left to do, and the token the file holds is the array's.
        sim_cmd(&state)
            .args(["plan", "--detailed-exitcode", "-f"])
            .arg(&spec)
            .assert()
            .code(0);
    }
}

/// An `--out` journal folder open to other users is refused before the array is
/// written (issue #28: pxfa never chmods a folder it did not create, and a refusal
/// must not come after the pod was made).
#[cfg(unix)]
#[test]
fn an_open_journal_folder_is_refused_before_any_write() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("pxfa-sim.json");
    let out = dir.path().join("out");
    let journal = out.join(".pxfa");
    std::fs::create_dir_all(&journal).unwrap();
    std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = sim_cmd(&state)
        .args(["apply", "-f"])
        .arg(example("tenant-cloud-drive.yaml"))
        .args(["--yes", "--include-secrets", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("open to other users"), "{stderr}");
    assert!(!state.exists(), "the array changed before the refusal");
    assert_eq!(
        std::fs::metadata(&journal).unwrap().permissions().mode() & 0o777,
        0o755,
        "the folder was chmod-ed"
    );
}
