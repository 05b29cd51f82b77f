//! Issue #10, option (b) on Portworx 3.6.2 with dynamic provisioning, through the
//! CLI on the brownfield array (`--array sim --sim-seed brownfield`): apply creates
//! the pod, the simulated management Portworx binds the claims and creates the
//! drives, pxfa tags them; a re-apply writes nothing; `status` shows the drives;
//! `destroy` soft-destroys the tenant's drives and pod and nothing else; the claims
//! import nothing and the drive class retains.

use std::path::Path;

use flasharray_mock::MockArray;
use flasharray_mock::foreign::ForeignView;
use serde_json::Value;

use crate::harness::{direct_access_spec, pxfa, set_replicas, walk};

fn sim(state: &Path) -> assert_cmd::Command {
    let mut c = pxfa();
    c.env_remove("KUBECONFIG")
        .args(["--array", "sim", "--sim-seed", "brownfield", "--sim-state"])
        .arg(state);
    c
}

fn list(state: &Path, what: &str) -> Vec<Value> {
    let out = sim(state)
        .args([what, "list", "-o", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{what} list");
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

/// The foreign volumes, hosts and pods.
fn foreign_view(state: &Path) -> Vec<String> {
    let mut v = crate::harness::foreign_items(
        &list(state, "volume"),
        &["provisioned", "destroyed", "connection_count"],
    );
    v.extend(crate::harness::foreign_items(
        &list(state, "host"),
        &["wwns", "iqns", "host_group"],
    ));
    v.extend(crate::harness::foreign_items(
        &list(state, "pod"),
        &["quota_limit", "destroyed"],
    ));
    v
}

/// The simulator's own view of everything not tagged for the tenant, read from the
/// state file through the `FlashArray` trait.
fn foreign_objects(state: &Path) -> ForeignView {
    let mock = MockArray::builder().build();
    let text = std::fs::read_to_string(state).unwrap();
    mock.restore(serde_json::from_str(&text).unwrap());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(ForeignView::read(&mock, "tenant-demo"))
        .unwrap()
}

fn run(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    text
}

fn drives(state: &Path) -> Vec<Value> {
    list(state, "volume")
        .into_iter()
        .filter(|v| {
            v["name"]
                .as_str()
                .unwrap_or("")
                .starts_with("tenant-demo::px_5c1e7a3b-pvc-")
        })
        .collect()
}

#[test]
fn dynamic_option_b_on_3_6_2_on_the_brownfield_array() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let spec = direct_access_spec();
    let before = foreign_view(&state);
    assert!(before.len() > 10, "the brownfield seed: {before:?}");
    let objects = foreign_objects(&state);

    // Apply: the pod, then the simulated Portworx's drives, tagged by pxfa.
    let out = dir.path().join("manifests");
    let text = run(sim(&state)
        .args(["apply", "--yes", "--out"])
        .arg(&out)
        .arg("-f")
        .arg(&spec));
    assert!(text.contains("? pending volume for claim"), "{text}");
    assert!(text.contains("simulated management Portworx"), "{text}");
    assert!(text.contains("Drives found: Applied 6 change(s)"), "{text}");
    let found = drives(&state);
    assert_eq!(found.len(), 6, "{found:?}");
    assert!(found.iter().all(|v| v["destroyed"] == false));
    assert_eq!(
        foreign_objects(&state).changes_since(&objects),
        Vec::<String>::new(),
        "the found drives are the tenant's now"
    );

    // Re-apply: nothing written (the state file is saved only after a write).
    let saved = std::fs::read(&state).unwrap();
    let again = run(sim(&state).args(["apply", "--yes", "-f"]).arg(&spec));
    assert!(again.contains("No changes"), "{again}");
    assert_eq!(std::fs::read(&state).unwrap(), saved, "zero writes");
    sim(&state)
        .args(["plan", "--detailed-exitcode", "-f"])
        .arg(&spec)
        .assert()
        .code(0);

    // Status shows the drives, found by their tags.
    let status = run(sim(&state).args(["status", "-f"]).arg(&spec));
    let shown = status
        .lines()
        .filter(|l| l.contains("tenant-demo::px_5c1e7a3b-pvc-") && l.contains("present, tagged"))
        .count();
    assert_eq!(shown, 6, "{status}");
    assert!(status.contains("healthy"), "{status}");

    // The management claims import nothing; the drive class retains.
    let mut claims = 0;
    for entry in walk(&out) {
        let body = std::fs::read_to_string(&entry).unwrap();
        assert!(
            !body.contains("pure-volume-name") && !body.contains("pure_vol_name"),
            "{}: an import annotation on 3.6",
            entry.display()
        );
        if body.contains("kind: PersistentVolumeClaim") && body.contains("pxfa-fada-tenant-demo") {
            claims += 1;
        }
        if body.contains("kind: StorageClass") && body.contains("pure_fa_pod_name") {
            assert!(body.contains("reclaimPolicy: Retain"), "{body}");
        }
    }
    assert_eq!(claims, 6, "one claim per drive");

    // Destroy without the management Portworx's help: kept, and said why (#36 N6).
    let kept = run(sim(&state).args(["destroy", "--yes", "-f"]).arg(&spec));
    assert!(
        kept.contains("released through the management Portworx"),
        "{kept}"
    );
    assert!(
        drives(&state).iter().all(|v| v["destroyed"] == false),
        "kept live"
    );
    // Destroy on the array, as asked: the tenant's drives and pod, softly; nothing foreign.
    let gone = run(sim(&state)
        .args(["destroy", "--destroy-dynamic-drives", "--yes", "-f"])
        .arg(&spec));
    assert!(gone.contains("Released"), "{gone}");
    let after = drives(&state);
    assert_eq!(after.len(), 6);
    assert!(
        after.iter().all(|v| v["destroyed"] == true),
        "soft-destroyed: {after:?}"
    );
    assert_eq!(foreign_view(&state), before, "nothing foreign changed");
    assert_eq!(
        foreign_objects(&state).changes_since(&objects),
        Vec::<String>::new()
    );
}

#[test]
fn dynamic_scale_3_4_3_holds_removed_drives_until_told_to_destroy_them() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let spec = dir.path().join("tenant.yaml");
    std::fs::copy(direct_access_spec(), &spec).unwrap();
    let objects = {
        foreign_view(&state);
        foreign_objects(&state)
    };
    run(sim(&state).args(["apply", "--yes", "-f"]).arg(&spec));
    let three = drives(&state);
    assert_eq!(three.len(), 6);

    // 3 -> 4: two new claims bind and are tagged; the existing drives stay as they are.
    set_replicas(&spec, 3, 4);
    let text = run(sim(&state).args(["apply", "--yes", "-f"]).arg(&spec));
    assert!(text.contains("Drives found: Applied 2 change(s)"), "{text}");
    let four = drives(&state);
    assert_eq!(four.len(), 8);
    for d in &three {
        assert!(four.contains(d), "{d} unchanged");
    }
    let saved = std::fs::read(&state).unwrap();
    run(sim(&state).args(["apply", "--yes", "-f"]).arg(&spec));
    assert_eq!(std::fs::read(&state).unwrap(), saved, "zero writes at 4");

    // 4 -> 3: worker 3's drives are retained, with the decommission steps.
    set_replicas(&spec, 4, 3);
    let text = run(sim(&state).args(["apply", "--yes", "-f"]).arg(&spec));
    assert!(text.contains("2 retained"), "{text}");
    // Released through the management Portworx (#36 N6): the steps say how.
    assert!(text.contains("persistentVolumeReclaimPolicy"), "{text}");
    assert_eq!(std::fs::read(&state).unwrap(), saved, "zero writes at 3");
    assert_eq!(drives(&state), four, "nothing destroyed");

    // A plain release holds them (#36 N6): the management Portworx created them and
    // releases them; the plan says so, with the reclaim-policy steps, and writes nothing.
    let held = run(sim(&state)
        .args(["apply", "--yes", "--release-removed-workers", "-f"])
        .arg(&spec));
    assert!(
        held.contains("--release-removed-workers holds 2 drive(s) of worker(s) 3"),
        "{held}"
    );
    assert!(held.contains("persistentVolumeReclaimPolicy"), "{held}");
    assert!(held.contains("--destroy-dynamic-drives"), "{held}");
    assert_eq!(std::fs::read(&state).unwrap(), saved, "zero writes held");
    assert_eq!(drives(&state), four, "nothing destroyed");
    // The flag alone is refused: it only widens a release.
    sim(&state)
        .args(["apply", "--yes", "--destroy-dynamic-drives", "-f"])
        .arg(&spec)
        .assert()
        .code(2);
    // Asked to, pxfa destroys worker 3's drives on the array (softly), and only them.
    run(sim(&state)
        .args([
            "apply",
            "--yes",
            "--release-removed-workers",
            "--destroy-dynamic-drives",
            "-f",
        ])
        .arg(&spec));
    let after = drives(&state);
    assert_eq!(after.len(), 8, "{after:?}");
    let destroyed: Vec<&Value> = after.iter().filter(|v| v["destroyed"] == true).collect();
    assert_eq!(destroyed.len(), 2, "{after:?}");
    assert!(
        destroyed.iter().all(|v| !three.contains(v)),
        "only worker 3's drives: {destroyed:?}"
    );
    assert_eq!(
        foreign_objects(&state).changes_since(&objects),
        Vec::<String>::new()
    );
}
