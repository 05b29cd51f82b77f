//! `pxfa runbook`: every operation for every mode through the binary (the steps, or
//! exit 2 with the reason when the operation does not apply), the versioned
//! document, and exit 2 on bad input with nothing on stdout. No array, no cluster:
//! the runbook is made from the spec alone.

use std::path::{Path, PathBuf};

use crate::harness::{example, pxfa, streams};

const OPERATIONS: [&str; 6] = [
    "scale-out",
    "scale-in",
    "grow",
    "add-pool",
    "replace-vm",
    "delete",
];

/// The example `name` with `replicas` workers, written into `dir` under `file`.
fn spec_with_replicas(dir: &Path, name: &str, replicas: u32, file: &str) -> PathBuf {
    let text = std::fs::read_to_string(example(name)).unwrap();
    let text = text.replacen("replicas: 3", &format!("replicas: {replicas}"), 1);
    let text = text.replacen("replicas: 2", &format!("replicas: {replicas}"), 1);
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path
}

/// (mode, operation) pairs that have no runbook, and exit 2.
const NOT_APPLICABLE: [(&str, &str); 3] = [
    ("tenant-cloud-drive.yaml", "add-pool"),
    ("tenant-kubevirt-csi.yaml", "grow"),
    ("tenant-kubevirt-csi.yaml", "add-pool"),
];

#[test]
fn every_operation_for_every_mode_prints_steps_or_says_why_not() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "tenant-cloud-drive.yaml",
        "tenant-direct-access.yaml",
        "tenant-kubevirt-csi.yaml",
    ] {
        let spec = spec_with_replicas(dir.path(), name, 4, name);
        for op in OPERATIONS {
            let mut cmd = pxfa();
            cmd.args(["runbook", op, "-f"]).arg(&spec);
            if op == "replace-vm" && name == "tenant-direct-access.yaml" {
                cmd.args(["--worker", "1"]);
            }
            let out = cmd.output().unwrap();
            let (stdout, stderr) = streams(&out);
            if NOT_APPLICABLE.contains(&(name, op)) {
                assert_eq!(out.status.code(), Some(2), "{name} {op}: {stderr}");
                assert!(stderr.contains("does not apply"), "{name} {op}: {stderr}");
                assert!(stdout.is_empty(), "{name} {op}: {stdout}");
                continue;
            }
            assert!(out.status.success(), "{name} {op}: {stderr}");
            assert!(
                stdout.starts_with(&format!("Runbook {op}: tenant ")),
                "{stdout}"
            );
            assert!(stdout.contains(" 1. ["), "{name} {op}: no steps\n{stdout}");
            // Every step names its source.
            let steps = stdout.matches("\n    check: ").count();
            assert_eq!(stdout.matches("\n    source: ").count(), steps, "{stdout}");
        }
    }
}

#[test]
fn the_json_document_is_versioned_and_names_this_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_with_replicas(dir.path(), "tenant-direct-access.yaml", 4, "da.yaml");
    let out = pxfa()
        .args(["runbook", "scale-in", "--worker", "3", "-o", "json", "-f"])
        .arg(&spec)
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["apiVersion"], "pxfa.io/v1alpha1");
    assert_eq!(doc["kind"], "Runbook");
    assert_eq!(doc["operation"], "scale-in");
    assert_eq!(doc["mode"], "direct-access");
    assert_eq!(doc["workers"], serde_json::json!([3]));
    let steps = doc["steps"].as_array().unwrap();
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["number"], i + 1);
        assert!(
            ["management", "tenant", "local"].contains(&s["on"].as_str().unwrap()),
            "{s}"
        );
        assert!(!s["source"]["url"].as_str().unwrap().is_empty(), "{s}");
        assert_ne!(s["confidence"], "L", "{s}");
        assert!(!s["check"].as_str().unwrap().is_empty(), "{s}");
    }
    let commands: Vec<&str> = steps.iter().filter_map(|s| s["command"].as_str()).collect();
    let all = commands.join("\n");
    assert!(
        all.contains(
            "oc get pvc -n clusters-tenant-demo tenant-demo-w03-data0 tenant-demo-w03-meta"
        ),
        "{all}"
    );
    assert!(all.contains("pxctl service kvdb members"), "{all}");
    assert!(all.contains("pxctl service maintenance --enter"), "{all}");
    assert!(all.contains("pxctl cluster delete <node-id-w03>"), "{all}");
    assert!(
        all.contains(
            "oc delete pvc -n clusters-tenant-demo tenant-demo-w03-data0 tenant-demo-w03-meta"
        ),
        "{all}"
    );
    // The YAML form is the same document.
    let yaml = pxfa()
        .args(["runbook", "scale-in", "--worker", "3", "-o", "yaml", "-f"])
        .arg(&spec)
        .output()
        .unwrap();
    assert!(
        streams(&yaml)
            .0
            .starts_with("apiVersion: pxfa.io/v1alpha1\nkind: Runbook\n")
    );
}

#[test]
fn replace_vm_decommissions_wipes_and_never_adopts_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_with_replicas(dir.path(), "tenant-direct-access.yaml", 3, "da.yaml");
    let out = pxfa()
        .args(["runbook", "replace-vm", "--worker", "2", "-f"])
        .arg(&spec)
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    let at = |s: &str| {
        stdout
            .find(s)
            .unwrap_or_else(|| panic!("{s} missing:\n{stdout}"))
    };
    assert!(
        at("pxctl cluster delete <node-id-w02>")
            < at("<management-kubeconfig> --adopt-replaced-vms")
    );
    assert!(at("<management-kubeconfig> --adopt-replaced-vms") < at("wipefs -a"));
    assert!(stdout.contains("Off by default"), "{stdout}");
    assert!(stdout.contains("[L] no Portworx document says"), "{stdout}");
}

#[test]
fn a_spec_path_is_quoted_in_the_commands() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_with_replicas(dir.path(), "tenant-cloud-drive.yaml", 3, "my spec;x.yaml");
    let out = pxfa()
        .args(["runbook", "delete", "-f"])
        .arg(&spec)
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    let quoted = format!("pxfa destroy -f '{}' --yes", spec.display());
    assert!(stdout.contains(&quoted), "{quoted}\n{stdout}");
}

#[test]
fn bad_input_exits_2_with_nothing_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let da = spec_with_replicas(dir.path(), "tenant-direct-access.yaml", 4, "da.yaml");
    let cd = example("tenant-cloud-drive.yaml");
    let missing = dir.path().join("missing.yaml");
    let cases: Vec<(Vec<&str>, &Path, &str)> = vec![
        (vec!["runbook", "shrink"], &da, "invalid value"),
        (
            vec!["runbook", "scale-in", "--worker", "1"],
            &da,
            "highest worker indexes",
        ),
        (
            vec!["runbook", "scale-in", "--worker", "2", "--worker", "3"],
            &da,
            "minimum of 3",
        ),
        (vec!["runbook", "grow", "--worker", "7"], &da, "4 workers"),
        (vec!["runbook", "replace-vm"], &da, "exactly one --worker"),
        (
            vec!["runbook", "delete", "--worker", "0"],
            &da,
            "no --worker",
        ),
        (
            vec!["runbook", "scale-in", "--worker", "2"],
            &cd,
            "direct-access",
        ),
        (
            vec!["runbook", "grow", "--worker", "x"],
            &da,
            "invalid value",
        ),
        (vec!["runbook", "grow"], &missing, "missing.yaml"),
    ];
    for (args, spec, want) in cases {
        let out = pxfa().args(&args).arg("-f").arg(spec).output().unwrap();
        let (stdout, stderr) = streams(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: want {want:?} in {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
    }
}
