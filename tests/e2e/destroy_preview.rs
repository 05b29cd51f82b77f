//! `plan --destroy` and the `destroy` prompt: what goes is listed, nothing is written.

use crate::harness::{import_host_group_spec, pxfa, streams};

#[test]
fn plan_destroy_lists_the_volumes_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let spec = import_host_group_spec(dir.path());
    let spec_s = spec.to_str().unwrap();
    let sim = |args: &[&str]| {
        let mut c = pxfa();
        c.args(["--array", "sim", "--sim-state"])
            .arg(&state)
            .args(args);
        c
    };
    let out = sim(&["apply", "--yes", "--allow-endpoint-mismatch", "-f", spec_s])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", streams(&out).1);
    let vols = sim(&["volume", "list", "-o", "json"]).output().unwrap();
    let vols: serde_json::Value = serde_json::from_slice(&vols.stdout).unwrap();
    let names: Vec<String> = vols
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!names.is_empty());
    let before = std::fs::read(&state).unwrap();

    // The preview: every volume as a delete, in text and JSON; the state is unchanged.
    let out = sim(&["plan", "--destroy", "-f", spec_s]).output().unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    for n in &names {
        assert!(stdout.contains(n.as_str()), "{n} missing from\n{stdout}");
    }
    let out = sim(&["plan", "--destroy", "-f", spec_s, "-o", "json"])
        .output()
        .unwrap();
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let changes = plan["changes"].as_array().unwrap();
    assert!(changes.iter().all(|c| c["action"] == "delete"), "{plan}");
    for n in &names {
        assert!(
            changes
                .iter()
                .any(|c| c["kind"] == "volume" && c["name"] == n.as_str()),
            "{n} missing from {plan}"
        );
    }
    sim(&["plan", "--destroy", "--detailed-exitcode", "-f", spec_s])
        .assert()
        .code(3);
    assert_eq!(
        std::fs::read(&state).unwrap(),
        before,
        "plan --destroy wrote"
    );

    // destroy without --yes: stdin closed, then `n`: listed, refused, unchanged.
    for stdin in [None, Some("n\n")] {
        let mut c = sim(&["destroy", "--allow-endpoint-mismatch", "-f", spec_s]);
        if let Some(s) = stdin {
            c.write_stdin(s);
        }
        let out = c.output().unwrap();
        let (_, stderr) = streams(&out);
        assert!(!out.status.success(), "{stderr}");
        assert!(stderr.contains("recoverable"), "{stderr}");
        for n in &names {
            assert!(stderr.contains(n.as_str()), "{n} missing from\n{stderr}");
        }
        assert_eq!(
            std::fs::read(&state).unwrap(),
            before,
            "destroy without --yes wrote"
        );
    }
}
