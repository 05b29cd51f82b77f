//! `apply` checks everything before its first write and reports every finding at
//! once: kubeconfigs and contexts, the spec's `array.endpoint` against the array being
//! written, free space. A refused apply changes nothing.

use predicates::str::contains;

use crate::harness::{Sim, direct_access_spec, pxfa, streams};

fn sim_apply(state: &std::path::Path) -> assert_cmd::Command {
    let mut c = pxfa();
    c.args(["--array", "sim", "--sim-state"])
        .arg(state)
        .args(["apply", "--yes", "-f"])
        .arg(direct_access_spec());
    c
}

#[test]
fn apply_missing_kubeconfig_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let missing = dir.path().join("nope.kubeconfig");
    sim_apply(&state)
        .arg("--kubeconfig")
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(contains("nope.kubeconfig"))
        .stderr(contains("nothing was changed"));
    assert!(
        !state.exists(),
        "the array changed before the kubeconfig was checked"
    );
}

#[test]
fn apply_unknown_context_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let kubeconfig = dir.path().join("mgmt.kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: real\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: real\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user:\n    token: not-a-secret\n",
    )
    .unwrap();
    let out = sim_apply(&state)
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["--context", "nope"])
        .output()
        .unwrap();
    let (_, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("nope"), "{stderr}");
    assert!(
        !state.exists(),
        "the array changed before the context was checked"
    );
}

fn spec_with_endpoint(dir: &std::path::Path, endpoint: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(direct_access_spec())
        .unwrap()
        .replace(
            "endpoint: fa1-mgmt.example.net",
            &format!("endpoint: {endpoint}"),
        );
    let p = dir.join(format!("spec-{}.yaml", endpoint.replace(':', "-")));
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn apply_refuses_other_endpoint() {
    let sim = Sim::start();
    let dir = tempfile::tempdir().unwrap();
    let port = sim.url.rsplit(':').next().unwrap().to_string();
    let other = spec_with_endpoint(dir.path(), "fa-other.invalid");
    let out = sim
        .cmd()
        .args(["apply", "--yes", "-f"])
        .arg(&other)
        .output()
        .unwrap();
    let (_, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--allow-endpoint-mismatch"), "{stderr}");
    assert!(stderr.contains("fa-other.invalid"), "{stderr}");
    assert_eq!(sim.json(&["volume", "list"]).as_array().unwrap().len(), 0);
    assert_eq!(sim.json(&["host", "list"]).as_array().unwrap().len(), 0);
    // The same with a destroy: refused before the confirmation.
    sim.cmd()
        .args(["destroy", "--yes", "-f"])
        .arg(&other)
        .assert()
        .code(2)
        .stderr(contains("--allow-endpoint-mismatch"));

    // The array's own address, the same by resolution, and the override all pass.
    for (spec, extra) in [
        (
            spec_with_endpoint(dir.path(), &format!("127.0.0.1:{port}")),
            None,
        ),
        (
            spec_with_endpoint(dir.path(), &format!("localhost:{port}")),
            None,
        ),
        (other.clone(), Some("--allow-endpoint-mismatch")),
    ] {
        let mut c = sim.cmd();
        c.args(["apply", "--yes", "-f"]).arg(&spec);
        if let Some(e) = extra {
            c.arg(e);
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            spec.display(),
            streams(&out).1
        );
    }
}

#[test]
fn apply_overcommit_refused_before_writes() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(&state)
        .args(["volume", "create", "existing", "--size", "1GiB"])
        .assert()
        .success();
    // A 1 TiB array; the example tenant provisions 4 TiB and more.
    let mut st: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let cap = st
        .pointer_mut("/array/capacity")
        .expect("the state file has the array's capacity");
    *cap = serde_json::json!(1u64 << 40);
    std::fs::write(&state, serde_json::to_vec(&st).unwrap()).unwrap();
    let before = std::fs::read(&state).unwrap();

    // The import variant pre-creates its drives, so the plan provisions them.
    let spec = crate::harness::import_host_group_spec(dir.path());
    // `plan` only warns, with its own exit code.
    pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(&state)
        .args(["plan", "-f"])
        .arg(&spec)
        .assert()
        .success()
        .stderr(contains("apply would refuse"))
        .stderr(contains("--allow-overcommit"));

    let out = pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(&state)
        .args(["apply", "--yes", "-f"])
        .arg(&spec)
        .output()
        .unwrap();
    let (_, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--allow-overcommit"), "{stderr}");
    assert!(stderr.contains("nothing was changed"), "{stderr}");
    assert_eq!(std::fs::read(&state).unwrap(), before, "the array changed");

    pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(&state)
        .args(["apply", "--yes", "--allow-overcommit", "-f"])
        .arg(&spec)
        .assert()
        .success();
}
