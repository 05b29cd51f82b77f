//! Issue #10, the tenant's lifetime through the CLI on an embedded array kept in a
//! state file: scale out keeps the drive size in use, scale in retains the removed
//! worker's drives until `--release-removed-workers`, scaling out onto a released
//! index is refused until `--recover-released`, a capacity raise grows the drives
//! (resize, or add-pool past the pool ceiling) and a decrease is refused before any
//! write; every second apply writes nothing.

use serde_json::Value;

use crate::harness::{import_host_group_spec, pxfa, set_replicas};

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

    // 3 -> 4 again: the released index is refused (its Portworx node was probably
    // decommissioned) by plan and apply, naming both ways out; nothing is written.
    set_replicas(&spec, 3, 4);
    let before = std::fs::read(&state).unwrap();
    let out = refused(&state, &spec, "plan", &["--detailed-exitcode"]);
    assert!(out.contains("--recover-released"), "{out}");
    assert!(out.contains("pxfa volume eradicate"), "{out}");
    refused(&state, &spec, "apply", &["--yes"]);
    assert_eq!(std::fs::read(&state).unwrap(), before, "no write");
    // The flag recovers the released drive instead of making it anew.
    apply(&state, &spec, &["--recover-released"]);
    assert_eq!(size_of(&volumes(&state), w03), Some((drive, false)));
    plan_has_no_changes(&state, &spec);
}

/// Runs `pxfa <command> -f spec` expecting exit 1 (a plan that cannot be applied);
/// stdout and stderr.
fn refused(
    state: &std::path::Path,
    spec: &std::path::Path,
    command: &str,
    extra: &[&str],
) -> String {
    let out = pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(state)
        .arg(command)
        .args(extra)
        .arg("-f")
        .arg(spec)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{command}: {text}");
    text
}

fn set_field(spec: &std::path::Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(spec).unwrap();
    let new = text.replacen(from, to, 1);
    assert_ne!(text, new, "the spec has {from}");
    std::fs::write(spec, new).unwrap();
}

fn pod_quota(state: &std::path::Path) -> u64 {
    list(state, "pod")
        .iter()
        .find(|p| p["name"] == "tenant-demo")
        .and_then(|p| p["quota_limit"].as_u64())
        .expect("the tenant pod has a quota")
}

#[test]
fn capacity_raise_grows_drives_and_quota_and_a_decrease_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let spec = import_host_group_spec(dir.path());
    let w00 = "tenant-demo::tenant-demo-w00-data0";
    let w03 = "tenant-demo::tenant-demo-w03-data0";
    const GIB: u64 = 1 << 30;

    apply(&state, &spec, &[]);
    set_replicas(&spec, 3, 4);
    apply(&state, &spec, &[]);
    let quota_before = pod_quota(&state);

    // 4Ti -> 6Ti at 4 workers: 4.5 TiB per worker, past the 4 TiB drives: resize.
    set_field(&spec, "capacity: 4Ti", "capacity: 6Ti");
    let out = pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(&state)
        .args(["plan", "--detailed-exitcode", "-f"])
        .arg(&spec)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("capacity growth: resize"), "{text}");
    assert!(
        text.contains("4608 GiB per data drive")
            && text.contains("pxctl service pool update --resize <pool-uid>"),
        "{text}"
    );
    let out = apply(&state, &spec, &[]);
    assert!(out.contains("Wrote "), "the write summary: {out}");
    let vols = volumes(&state);
    assert_eq!(size_of(&vols, w00), Some((4608 * GIB, false)));
    assert_eq!(size_of(&vols, w03), Some((4608 * GIB, false)));
    assert!(pod_quota(&state) > quota_before, "the quota follows");
    plan_has_no_changes(&state, &spec);

    // A decrease: plan and apply exit 1 naming --allow-shrink; nothing is written.
    set_field(&spec, "capacity: 6Ti", "capacity: 5Ti");
    let before = std::fs::read(&state).unwrap();
    let out = refused(&state, &spec, "plan", &[]);
    assert!(out.contains("--allow-shrink"), "{out}");
    refused(&state, &spec, "apply", &["--yes"]);
    assert_eq!(std::fs::read(&state).unwrap(), before, "no write");

    // Past the 15 TiB pool ceiling (20Ti at 4 workers: 15 TiB per worker fits, 24Ti
    // does not): refused naming add-pool; with add-pool, new drives of the size in use.
    set_field(&spec, "capacity: 5Ti", "capacity: 24Ti");
    let out = refused(&state, &spec, "plan", &[]);
    assert!(out.contains("capacityGrowth: add-pool"), "{out}");
    set_field(
        &spec,
        "diskBus: scsi",
        "diskBus: scsi\n    capacityGrowth: add-pool",
    );
    // 72 TiB of drives is more than the simulated array has free (thin).
    let out = apply(&state, &spec, &["--allow-overcommit"]);
    assert!(out.contains("capacity growth: add-pool"), "{out}");
    assert!(out.contains("--newpool"), "{out}");
    let vols = volumes(&state);
    // 18 TiB per worker from 4.5 TiB drives: 4 drives each.
    for d in 1..4 {
        let name = format!("tenant-demo::tenant-demo-w03-data{d}");
        assert_eq!(size_of(&vols, &name), Some((4608 * GIB, false)), "{name}");
    }
    assert_eq!(
        size_of(&vols, w00),
        Some((4608 * GIB, false)),
        "never resized"
    );
    assert!(size_of(&vols, "tenant-demo::tenant-demo-w00-data4").is_none());
    plan_has_no_changes(&state, &spec);
}

fn list(state: &std::path::Path, what: &str) -> Vec<Value> {
    let out = pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(state)
        .args([what, "list", "-o", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{what} list");
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

#[test]
fn on_a_brownfield_array_nothing_foreign_changes_and_no_second_host_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    // The first command only reads; the seeded array is kept all the same.
    pxfa()
        .args(["--array", "sim", "--sim-seed", "brownfield", "--sim-state"])
        .arg(&state)
        .args(["host", "list"])
        .assert()
        .success();
    let vol_fields = ["provisioned", "destroyed", "connection_count"];
    let host_fields = ["wwns", "iqns", "nqns"];
    let volumes_before = crate::harness::foreign_items(&volumes(&state), &vol_fields);
    let hosts_before = crate::harness::foreign_items(&list(&state, "host"), &host_fields);
    assert!(hosts_before.len() >= 4, "the seed has the management hosts");

    // The default (dynamic, attach: fada) tenant, on a copy of the array (the import
    // tenant below has the same name): its pod, and the drives the simulated
    // management Portworx makes (tests/e2e/dynamic.rs follows them to destroy).
    let copy = dir.path().join("dynamic.json");
    std::fs::copy(&state, &copy).unwrap();
    let dynamic = crate::harness::direct_access_spec();
    apply(&copy, &dynamic, &[]);
    plan_has_no_changes(&copy, &dynamic);
    assert_eq!(
        crate::harness::foreign_items(&list(&copy, "host"), &host_fields),
        hosts_before
    );
    assert_eq!(
        crate::harness::foreign_items(&volumes(&copy), &vol_fields),
        volumes_before
    );
    // The import tenant with a host group: the nodes are the hosts found by WWN.
    let import = import_host_group_spec(dir.path());
    apply(&state, &import, &[]);
    plan_has_no_changes(&state, &import);

    assert_eq!(
        crate::harness::foreign_items(&volumes(&state), &vol_fields).len(),
        volumes_before.len()
    );
    let hosts_after = crate::harness::foreign_items(&list(&state, "host"), &host_fields);
    assert_eq!(
        hosts_after, hosts_before,
        "no host made, none re-initiatored"
    );
    // Foreign volumes: same sizes, never destroyed; only connections to the tenant's
    // group may be added to hosts pxfa found, never to these volumes.
    assert_eq!(
        crate::harness::foreign_items(&volumes(&state), &vol_fields),
        volumes_before
    );
}

#[test]
fn apply_json_report_carries_the_write_counts() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let spec = import_host_group_spec(dir.path());
    let out = pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(&state)
        .args(["apply", "--yes", "-o", "json", "-f"])
        .arg(&spec)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let writes = &doc["report"]["writes"];
    // The pod, the group, three hosts and six drives; the drives joined the group.
    assert_eq!(writes["created"], 11, "{writes}");
    assert_eq!(writes["connected"], 6, "{writes}");
    assert_eq!(doc["report"]["partial"], serde_json::json!([]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Wrote ") && stderr.contains("; 0 failed."),
        "{stderr}"
    );
}

#[test]
fn size_on_array_explains_the_drives_in_use_and_the_growth_path() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let spec = import_host_group_spec(dir.path());
    apply(&state, &spec, &[]);
    let size = |spec: &std::path::Path| {
        let out = pxfa()
            .args(["--array", "sim", "--sim-state"])
            .arg(&state)
            .args(["size", "--on-array", "-f"])
            .arg(spec)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let before = std::fs::read(&state).unwrap();
    set_replicas(&spec, 3, 4);
    let text = size(&spec);
    assert!(
        text.contains("drives in use     = 1 x 4 TiB per worker"),
        "{text}"
    );
    assert!(text.contains("existing drives are never shrunk"), "{text}");
    assert!(text.contains("capacity growth: none needed"), "{text}");
    assert!(text.contains("array "), "the array's space: {text}");
    set_field(&spec, "capacity: 4Ti", "capacity: 6Ti");
    let text = size(&spec);
    assert!(text.contains("capacity growth: resize"), "{text}");
    assert!(text.contains("4 TiB -> 4.50 TiB"), "{text}");
    assert_eq!(std::fs::read(&state).unwrap(), before, "size only reads");
}
