//! The tenant workflow against the HTTPS simulator: size, render, lint, plan,
//! apply, re-apply, destroy.

use predicates::str::contains;

use crate::harness::{Sim, direct_access_spec, example, import_host_group_spec, pxfa, streams};

#[test]
fn size_explains_from_the_spec_alone() {
    let out = pxfa()
        .args(["size", "-f"])
        .arg(direct_access_spec())
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("tenant-demo"), "{stdout}");
    // Proportions as bars for people (issue #17): the example's drives fill 91 % of
    // the pod quota (10 % headroom) and replication 3 leaves a third usable.
    assert!(
        stdout.contains("quota in use      = [#########.]  91% drives"),
        "{stdout}"
    );
    assert!(
        stdout.contains("usable of raw     = [###.......]  33%"),
        "{stdout}"
    );

    let json: serde_json::Value = serde_json::from_slice(
        &pxfa()
            .args(["size", "-o", "json", "-f"])
            .arg(direct_access_spec())
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(json["total_provisioned"].as_u64().unwrap() > 0, "{json}");
    assert!(json.get("array").is_none());

    // size never contacts an array (issue #13): an explicit array is ignored.
    let sim = Sim::start();
    let with_array = sim.json(&["size", "-f", direct_access_spec().to_str().unwrap()]);
    assert!(with_array.get("array").is_none(), "{with_array}");
    assert_eq!(with_array["total_provisioned"], json["total_provisioned"]);
}

#[test]
fn render_writes_manifests_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    // No array options at all: render never contacts an array.
    let out = pxfa()
        .args(["render", "-f"])
        .arg(example("tenant-cloud-drive.yaml"))
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("wrote"), "{stderr}");
    assert!(!stdout.is_empty());
    let mut files = Vec::new();
    let mut stack = vec![out_dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    assert!(
        files
            .iter()
            .any(|f| f.extension().is_some_and(|e| e == "yaml"))
    );

    // The rendered folder lints without errors.
    pxfa().arg("lint").arg(&out_dir).assert().success();
}

#[test]
fn lint_examples() {
    for f in [
        "tenant-direct-access.yaml",
        "tenant-cloud-drive.yaml",
        "tenant-kubevirt-csi.yaml",
    ] {
        let out = pxfa().arg("lint").arg(example(f)).output().unwrap();
        assert!(out.status.success(), "{f}: {}", streams(&out).1);
    }
    let json: serde_json::Value = serde_json::from_slice(
        &pxfa()
            .args(["lint", "-o", "json"])
            .arg(direct_access_spec())
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(json.is_array());
}

#[test]
fn invalid_spec_exits_2_with_the_field_path() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    let text = std::fs::read_to_string(direct_access_spec())
        .unwrap()
        .replace("capacity: 4Ti", "capacity: lots");
    std::fs::write(&bad, text).unwrap();
    for cmd in ["plan", "apply", "size", "destroy"] {
        pxfa()
            .args(["--array", "https://127.0.0.1:1", cmd, "-f"])
            .arg(&bad)
            .assert()
            .code(2)
            .stderr(contains("spec.storage.capacity"));
    }
    let unknown = dir.path().join("unknown.yaml");
    let text = std::fs::read_to_string(direct_access_spec())
        .unwrap()
        .replace("  storage:\n", "  storage:\n    colour: blue\n");
    std::fs::write(&unknown, text).unwrap();
    pxfa()
        .args(["render", "--out"])
        .arg(dir.path().join("o"))
        .arg("-f")
        .arg(&unknown)
        .assert()
        .code(2)
        .stderr(contains("colour"));
}

/// render is the GitOps path: a spec with error-level lint findings (Portworx 3.5.2,
/// below the first release supported with hosted control planes; no load balancer)
/// exits 2 with nothing written, unless --force; warnings go to stderr either way.
#[test]
fn render_refuses_error_level_lint_findings_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("old.yaml");
    let text = std::fs::read_to_string(example("tenant-cloud-drive.yaml"))
        .unwrap()
        .replace("    version: 3.6.2\n", "    version: 3.5.2\n");
    assert!(text.contains("3.5.2"));
    std::fs::write(&spec, text).unwrap();
    let out_dir = dir.path().join("out");
    pxfa()
        .args(["render", "-f"])
        .arg(&spec)
        .arg("--out")
        .arg(&out_dir)
        .assert()
        .code(2)
        .stderr(contains("PXFA001"))
        .stderr(contains("--force"));
    assert!(!out_dir.exists(), "nothing written on a refusal");
    pxfa()
        .args(["render", "--force", "-f"])
        .arg(&spec)
        .arg("--out")
        .arg(&out_dir)
        .assert()
        .success()
        .stderr(contains("PXFA001"));
    assert!(out_dir.join("README.txt").is_file());
    // A warning alone renders, printed on stderr: PXFA032 (no realm) here.
    pxfa()
        .args(["render", "-f"])
        .arg(example("tenant-cloud-drive.yaml"))
        .arg("--out")
        .arg(dir.path().join("ok"))
        .assert()
        .success()
        .stderr(contains("warning:"))
        .stderr(contains("PXFA032"));
}

#[test]
fn plan_apply_reapply_destroy() {
    let sim = Sim::start();
    let spec = import_host_group_spec(sim.dir.path());
    let spec_s = spec.to_str().unwrap();

    // Changes pending: exit 3 with --detailed-exitcode, 0 without.
    sim.cmd()
        .args(["plan", "--detailed-exitcode", "-f", spec_s])
        .assert()
        .code(3);
    let plan = sim.json(&["plan", "-f", spec_s]);
    assert!(plan["summary"]["create"].as_u64().unwrap() > 0, "{plan}");
    let first = &plan["changes"][0];
    assert!(first["action"].is_string() && first["kind"].is_string() && first["name"].is_string());

    // Not a terminal and no --yes: refused, nothing changed.
    sim.cmd()
        .args(["apply", "--allow-endpoint-mismatch", "-f", spec_s])
        .assert()
        .code(2);
    sim.cmd()
        .args(["plan", "--detailed-exitcode", "-f", spec_s])
        .assert()
        .code(3);

    let dir = tempfile::tempdir().unwrap();
    let out = sim
        .cmd()
        .args([
            "apply",
            "--allow-endpoint-mismatch",
            "--yes",
            "-f",
            spec_s,
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("0 failed"), "{stdout}");
    // Progress lines on stderr when it is not a terminal.
    assert!(stderr.contains("... ok"), "{stderr}");
    sim.assert_no_token(&stdout, &stderr);
    assert!(std::fs::read_dir(dir.path()).unwrap().count() > 0);

    // Converged: no changes, exit 0 with --detailed-exitcode; re-apply changes nothing.
    sim.cmd()
        .args(["plan", "--detailed-exitcode", "-f", spec_s])
        .assert()
        .code(0);
    let again = sim.json(&["apply", "--allow-endpoint-mismatch", "--yes", "-f", spec_s]);
    assert!(
        again["report"]["applied"].as_array().unwrap().is_empty(),
        "{again}"
    );
    let vols = sim.json(&["volume", "list"]);
    assert!(!vols.as_array().unwrap().is_empty());

    // Destroy needs --yes without a terminal, then removes the tenant's objects.
    sim.cmd()
        .args(["destroy", "--allow-endpoint-mismatch", "-f", spec_s])
        .assert()
        .code(2);
    let out = sim
        .cmd()
        .args([
            "destroy",
            "--allow-endpoint-mismatch",
            "--yes",
            "-f",
            spec_s,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", streams(&out).1);
    let live = sim.json(&["volume", "list", "--live"]);
    assert!(live.as_array().unwrap().is_empty(), "{live}");
    sim.cmd()
        .args(["plan", "--detailed-exitcode", "-f", spec_s])
        .assert()
        .code(3);
}

#[test]
fn conflicting_unowned_object_blocks_apply() {
    let sim = Sim::start();
    let spec = import_host_group_spec(sim.dir.path());
    let spec_s = spec.to_str().unwrap();
    let plan = sim.json(&["plan", "-f", spec_s]);
    let group = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "host-group")
        .map(|c| c["name"].as_str().unwrap().to_string())
        .expect("the direct-access example needs a host group");
    // Same name, no pxfa tags: a conflict, and apply changes nothing (exit 1).
    sim.json(&["hostgroup", "create", &group]);
    let out = sim
        .cmd()
        .args(["apply", "--allow-endpoint-mismatch", "--yes", "-f", spec_s])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", streams(&out).1);
    assert!(streams(&out).1.contains("conflict"), "{}", streams(&out).1);
    assert_eq!(sim.json(&["volume", "list"]).as_array().unwrap().len(), 0);
}

#[test]
fn failed_changes_are_reported_with_request_ids_and_exit_4() {
    let sim = Sim::start();
    let spec = import_host_group_spec(sim.dir.path());
    let spec_s = spec.to_str().unwrap();
    // The management group exists without pxfa's tags (adopted below) and shares a
    // volume at LUN 254; worker-01's host, found by its WWN, sees another volume
    // privately at LUN 254. The plan does not read foreign LUNs: the array refuses
    // the host's membership at apply time.
    sim.json(&["hostgroup", "create", "hcp-mgmt"]);
    sim.json(&["host", "create", "intruder", "--wwn", "2100F4C7AA002706"]);
    sim.json(&[
        "volume",
        "create",
        "shared-x",
        "private-y",
        "--size",
        "1GiB",
    ]);
    sim.json(&[
        "connection",
        "create",
        "--hostgroup",
        "hcp-mgmt",
        "shared-x",
        "--lun",
        "254",
    ]);
    sim.json(&[
        "connection",
        "create",
        "--host",
        "intruder",
        "private-y",
        "--lun",
        "254",
    ]);
    let apply = [
        "apply",
        "--allow-endpoint-mismatch",
        "--yes",
        "--adopt",
        "-f",
        spec_s,
    ];
    let out = sim.cmd().args(apply).output().unwrap();
    let (stdout, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(stdout.contains("FAILED"), "{stdout}");
    assert!(stdout.contains("already in use"), "{stdout}");
    assert!(stdout.contains("request id"), "{stdout}");
    assert!(stdout.contains("skipped"), "{stdout}");
    sim.assert_no_token(&stdout, &stderr);

    // Fix the cause; apply continues where it stopped and converges.
    sim.json(&[
        "connection",
        "delete",
        "--host",
        "intruder",
        "private-y",
        "--yes",
    ]);
    sim.cmd().args(apply).assert().success();
    sim.cmd()
        .args(["plan", "--detailed-exitcode", "-f", spec_s])
        .assert()
        .code(0);
}
