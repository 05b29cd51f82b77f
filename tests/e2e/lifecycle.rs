//! Issue #10, the tenant's lifetime through the CLI on an embedded array kept in a
//! state file: scale out keeps the drive size in use, scale in retains the removed
//! worker's drives until `--release-removed-workers`, and scaling out again brings
//! them back; every second apply writes nothing.

use serde_json::Value;

use crate::harness::{import_host_group_spec, pxfa};

fn volumes(state: &std::path::Path) -> Vec<Value> {
    let out = pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(state)
        .args(["volume", "list", "-o", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

fn size_of(vols: &[Value], name: &str) -> Option<(u64, bool)> {
    vols.iter()
        .find(|v| v["name"] == name)
        .map(|v| (v["provisioned"].as_u64().unwrap(), v["destroyed"] == true))
}

fn apply(state: &std::path::Path, spec: &std::path::Path, extra: &[&str]) -> String {
    let out = pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(state)
        .args(["apply", "--yes"])
        .args(extra)
        .arg("-f")
        .arg(spec)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    String::from_utf8_lossy(&out.stdout).to_string() + &stderr
}

fn set_replicas(spec: &std::path::Path, from: u32, to: u32) {
    let text = std::fs::read_to_string(spec).unwrap();
    let new = text.replacen(&format!("replicas: {from}"), &format!("replicas: {to}"), 1);
    assert_ne!(text, new, "the spec has replicas: {from}");
    std::fs::write(spec, new).unwrap();
}

fn plan_has_no_changes(state: &std::path::Path, spec: &std::path::Path) {
    pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(state)
        .args(["plan", "--detailed-exitcode", "-f"])
        .arg(spec)
        .assert()
        .code(0);
}

#[test]
fn scale_3_4_3_4_keeps_sizes_retains_and_releases_only_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let spec = import_host_group_spec(dir.path());
    let w00 = "tenant-demo::tenant-demo-w00-data0";
    let w03 = "tenant-demo::tenant-demo-w03-data0";

    apply(&state, &spec, &[]);
    plan_has_no_changes(&state, &spec);
    let (drive, _) = size_of(&volumes(&state), w00).expect("worker 0's drive");

    // 3 -> 4: the new worker gets the size in use; nothing existing is resized.
    set_replicas(&spec, 3, 4);
    apply(&state, &spec, &[]);
    let vols = volumes(&state);
    assert_eq!(size_of(&vols, w00), Some((drive, false)), "kept as it was");
    assert_eq!(
        size_of(&vols, w03),
        Some((drive, false)),
        "same size as in use"
    );
    plan_has_no_changes(&state, &spec);

    // 4 -> 3: worker 3's drives are retained, not destroyed.
    set_replicas(&spec, 4, 3);
    let out = apply(&state, &spec, &[]);
    assert!(out.contains("retain"), "{out}");
    assert_eq!(size_of(&volumes(&state), w03), Some((drive, false)));
    plan_has_no_changes(&state, &spec);

    // Only the explicit flag releases them, softly.
    apply(&state, &spec, &["--release-removed-workers"]);
    assert_eq!(size_of(&volumes(&state), w03), Some((drive, true)));
    assert_eq!(size_of(&volumes(&state), w00), Some((drive, false)));

    // 3 -> 4 again: the released drive is recovered, not made anew.
    set_replicas(&spec, 3, 4);
    apply(&state, &spec, &[]);
    assert_eq!(size_of(&volumes(&state), w03), Some((drive, false)));
    plan_has_no_changes(&state, &spec);
}
