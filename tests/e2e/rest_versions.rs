//! pxfa's tenant commands at every REST version it claims (issue #25), against `pxfa
//! sim serve --rest-version 2.N`: `plan`, `apply`, `status`, a converged `plan` and
//! `destroy` at the oldest version each storage mode supports, at 2.36 and at the
//! newest (2.39), and the clear refusal (exit 2, nothing changed) just below the
//! oldest. The oldest versions (README, docs/simulator.md) come from what pxfa tags:
//! volumes from 2.2 (the client's oldest), hosts and host groups from 2.34, pods
//! from 2.39, realms from 2.36.

use std::path::{Path, PathBuf};

use crate::harness::{Sim, example, import_host_group_spec, streams};

/// The newest REST version the simulator serves.
const NEWEST: &str = "2.39";

/// `spec` without its `spec.storage.pod` line, written into `dir` as `name`.
fn without_pod(spec: &Path, dir: &Path, name: &str) -> PathBuf {
    let text = std::fs::read_to_string(spec).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start() != "pod: tenant-demo")
        .collect();
    assert_eq!(kept.len() + 1, text.lines().count(), "one pod line");
    let path = dir.join(name);
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    path
}

/// The direct-access tenant importing its volumes into no pod, attached through
/// the management host group: volumes, and the group's hosts (host tags: 2.34).
fn host_group_import(dir: &Path) -> PathBuf {
    without_pod(&import_host_group_spec(dir), dir, "host-group.yaml")
}

/// The same tenant with `attach: fada`: volumes only (volume tags: 2.2).
fn fada_import(dir: &Path) -> PathBuf {
    let host_group = host_group_import(dir);
    let text = std::fs::read_to_string(host_group).unwrap();
    let path = dir.join("fada.yaml");
    std::fs::write(
        &path,
        text.replacen("attach: host-group", "attach: fada", 1),
    )
    .unwrap();
    path
}

/// Runs `pxfa ARGS -f SPEC` against `sim`, returns (exit code, stdout, stderr).
fn run(sim: &Sim, args: &[&str], spec: &Path) -> (i32, String, String) {
    let o = sim.cmd().args(args).arg("-f").arg(spec).output().unwrap();
    let (stdout, stderr) = streams(&o);
    sim.assert_no_token(&stdout, &stderr);
    (o.status.code().unwrap_or(-1), stdout, stderr)
}

/// The tenant's volumes the array holds, live ones only.
fn tenant_volumes(sim: &Sim) -> Vec<String> {
    let mut names: Vec<String> = sim
        .volume_names()
        .into_iter()
        .filter(|n| n.starts_with("tenant-demo-"))
        .collect();
    names.sort();
    names
}

/// plan (changes), apply, status, plan (converged), destroy: the whole life of a
/// tenant that makes `volumes` volumes, at `version`.
fn lifecycle(version: &str, spec: &Path, volumes: usize) {
    let sim = Sim::start_with(&["--rest-version", version]);
    let out = sim.dir.path().join("out");
    let (code, stdout, stderr) = run(&sim, &["plan", "--detailed-exitcode"], spec);
    assert_eq!(code, 3, "{version}: plan\n{stdout}{stderr}");
    let apply = [
        "apply",
        "--yes",
        "--allow-endpoint-mismatch",
        "--out",
        out.to_str().unwrap(),
    ];
    let (code, stdout, stderr) = run(&sim, &apply, spec);
    assert_eq!(code, 0, "{version}: apply\n{stdout}{stderr}");
    assert_eq!(tenant_volumes(&sim).len(), volumes, "{version}");
    let (code, stdout, stderr) = run(&sim, &["status", "-o", "json"], spec);
    assert_eq!(code, 0, "{version}: status\n{stdout}{stderr}");
    let status: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let shown = status.to_string();
    for name in tenant_volumes(&sim) {
        assert!(shown.contains(&name), "{version}: status lacks {name}");
    }
    // Every volume carries its ownership tags: a second plan has nothing to do.
    let (code, stdout, stderr) = run(&sim, &["plan", "--detailed-exitcode"], spec);
    assert_eq!(code, 0, "{version}: converged plan\n{stdout}{stderr}");
    let destroy = [
        "destroy",
        "--yes",
        "--eradicate",
        "--allow-endpoint-mismatch",
    ];
    let (code, stdout, stderr) = run(&sim, &destroy, spec);
    assert_eq!(code, 0, "{version}: destroy\n{stdout}{stderr}");
    assert!(
        tenant_volumes(&sim).is_empty(),
        "{version}: destroy left volumes"
    );
}

/// A refusal below the mode's oldest version: exit 2 naming the version needed,
/// nothing on the array.
fn refused(version: &str, spec: &Path, needs: &str) {
    let sim = Sim::start_with(&["--rest-version", version]);
    for args in [
        &["plan"][..],
        &["apply", "--yes", "--allow-endpoint-mismatch"][..],
        &["status"][..],
        &["destroy", "--yes", "--allow-endpoint-mismatch"][..],
    ] {
        let (code, stdout, stderr) = run(&sim, args, spec);
        assert_eq!(code, 2, "{version} {args:?}\n{stdout}{stderr}");
        assert!(stderr.contains(needs), "{version} {args:?}: {stderr}");
    }
    // Below 2.2 pxfa cannot even list (no version in common): nothing was sent.
    if version != "2.1" {
        assert!(sim.volume_names().is_empty(), "{version}");
    }
}

/// Volumes only (`attach: fada`, imported): from 2.2, the client's oldest, where
/// volumes are created in groups of one size and then tagged (no `volumes/batch`
/// before 2.32, no tags in create bodies before 2.39).
#[test]
fn volumes_only_tenant_from_2_2() {
    let dir = tempfile::tempdir().unwrap();
    let spec = fada_import(dir.path());
    for version in ["2.2", "2.36", NEWEST] {
        lifecycle(version, &spec, 6);
    }
    // Below 2.2 the client and the array have no REST version in common.
    refused("2.1", &spec, "2.2");
}

/// Hosts and a host group (`attach: host-group`, imported, no pod): from 2.34.
#[test]
fn host_group_tenant_from_2_34() {
    let dir = tempfile::tempdir().unwrap();
    let spec = host_group_import(dir.path());
    for version in ["2.34", "2.36", NEWEST] {
        lifecycle(version, &spec, 6);
    }
    refused("2.33", &spec, "2.34");
}

/// kubevirt-csi puts nothing of the tenant's on the array: every command works
/// from 2.2 as at the newest, and destroy finds nothing to destroy at each.
#[test]
fn kubevirt_csi_tenant_from_2_2() {
    let spec = example("tenant-kubevirt-csi.yaml");
    for version in ["2.2", "2.36", NEWEST] {
        let sim = Sim::start_with(&["--rest-version", version]);
        let out = sim.dir.path().join("out");
        for args in [
            &["plan"][..],
            &["apply", "--yes", "--out", out.to_str().unwrap()][..],
            &["status"][..],
        ] {
            let (code, stdout, stderr) = run(&sim, args, &spec);
            assert_eq!(code, 0, "{version} {args:?}\n{stdout}{stderr}");
        }
        let (code, _, stderr) = run(&sim, &["destroy", "--yes"], &spec);
        assert_eq!(code, 0, "{version}: {stderr}");
        assert!(stderr.contains("nothing to destroy"), "{version}: {stderr}");
    }
    refused("2.1", &spec, "2.2");
}

/// A tenant with a pod (cloud-drive, realm or not; direct-access with
/// `spec.storage.pod`): pod tags are 2.39's, so the newest is also the oldest.
#[test]
fn pod_tenants_at_2_39_only() {
    for name in ["tenant-cloud-drive.yaml", "tenant-cloud-drive-realm.yaml"] {
        let spec = example(name);
        let sim = Sim::start_with(&["--rest-version", NEWEST]);
        let out = sim.dir.path().join("out");
        let apply = [
            "apply",
            "--yes",
            "--allow-endpoint-mismatch",
            "--include-secrets",
            "--out",
            out.to_str().unwrap(),
        ];
        for args in [&["plan"][..], &apply[..], &["status"][..]] {
            let (code, stdout, stderr) = run(&sim, args, &spec);
            assert_eq!(code, 0, "{name} {args:?}\n{stdout}{stderr}");
        }
        let (code, stdout, stderr) = run(&sim, &["plan", "--detailed-exitcode"], &spec);
        assert_eq!(code, 0, "{name}: converged plan\n{stdout}{stderr}");
        let destroy = [
            "destroy",
            "--yes",
            "--eradicate",
            "--allow-endpoint-mismatch",
        ];
        let (code, stdout, stderr) = run(&sim, &destroy, &spec);
        assert_eq!(code, 0, "{name}: destroy\n{stdout}{stderr}");
        refused("2.38", &spec, "2.39");
    }
    // The realm is named first when the array has no realms at all.
    refused("2.35", &example("tenant-cloud-drive-realm.yaml"), "2.36");
}
