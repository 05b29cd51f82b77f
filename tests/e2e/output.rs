//! The admin's output contracts (issue #17): `-o name`, `-o wide`, `--no-headers`,
//! the typed plan document, the pictures, colours, `--version`, `lint -f`, and the
//! examples in `--help`, and the array options listed once.

use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

use crate::harness::{direct_access_spec, pxfa};

fn sim(state: &std::path::Path, args: &[&str]) -> assert_cmd::Command {
    let mut c = pxfa();
    c.args(["--array", "sim", "--sim-state"])
        .arg(state)
        .args(args);
    c
}

#[test]
fn lists_print_names_wide_columns_and_no_headers() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    sim(&state, &["volume", "create", "v1", "v2", "--size", "1GiB"])
        .assert()
        .success();
    let out = sim(&state, &["volume", "list", "-o", "name"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "volume/v1\nvolume/v2\n"
    );

    let out = sim(&state, &["volume", "list", "--no-headers"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("NAME"), "{text}");
    assert_eq!(text.lines().count(), 2, "{text}");

    let out = sim(&state, &["volume", "list", "-o", "wide"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("QOS IOPS"), "{text}");

    sim(
        &state,
        &["host", "create", "h1", "--wwn", "2100F4C7AA002706"],
    )
    .assert()
    .success();
    sim(&state, &["host", "list"])
        .assert()
        .success()
        .stdout(contains("21:00:f4:c7:aa:00:27:06"));
    // `-o name` is for lists only.
    sim(&state, &["array", "info", "-o", "name"])
        .assert()
        .code(2);
}

#[test]
fn plan_is_a_typed_document_and_a_picture() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    // The import variant pre-creates its drives, so the plan has volumes to draw.
    let spec = crate::harness::import_host_group_spec(dir.path());
    let spec = spec.to_str().unwrap();
    let out = sim(&state, &["plan", "-f", spec, "-o", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["apiVersion"], "pxfa.io/v1alpha1");
    assert_eq!(doc["kind"], "Plan");
    assert!(doc["refusals"].is_array() && doc["conflicts"].is_array());
    let volume = doc["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "volume")
        .unwrap();
    assert!(volume["details"]["size"].is_u64(), "{volume}");

    let out = sim(&state, &["plan", "-f", spec, "-o", "mermaid"])
        .output()
        .unwrap();
    let m = String::from_utf8(out.stdout).unwrap();
    assert!(m.starts_with("flowchart LR\n"), "{m}");
    for node in [
        "pod ",
        "volume ",
        "PVC ",
        "worker 00 VM disks",
        "StorageCluster ",
    ] {
        assert!(m.contains(node), "{node} missing in {m}");
    }
    // The import claim is drawn from the array volume it names.
    let id_of = |label: &str| {
        m.lines()
            .find(|l| l.contains(&format!("[\"{label}\"]")))
            .and_then(|l| l.trim().split('[').next())
            .map(str::to_string)
            .unwrap_or_else(|| panic!("{label} missing in {m}"))
    };
    let vol = id_of("volume tenant-demo::tenant-demo-w00-data0");
    let pvc = id_of("PVC tenant-demo-w00-data0");
    assert!(m.contains(&format!("{vol} --> {pvc}")), "{m}");
    let out = sim(&state, &["status", "-f", spec, "-o", "dot"])
        .output()
        .unwrap();
    let d = String::from_utf8(out.stdout).unwrap();
    assert!(
        d.starts_with("digraph pxfa {") && d.trim_end().ends_with('}'),
        "{d}"
    );

    let out = sim(&state, &["status", "-f", spec, "-o", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["kind"], "Status");
    assert_eq!(doc["healthy"], false, "nothing applied yet");
}

#[test]
fn plan_colours_only_when_asked_and_never_with_no_color() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let spec = direct_access_spec();
    let spec = spec.to_str().unwrap();
    let out = sim(&state, &["plan", "-f", spec, "--color", "always"])
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("\x1b[32m+ create")
    );
    let out = sim(&state, &["plan", "-f", spec, "--color", "always"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!String::from_utf8(out.stdout).unwrap().contains('\x1b'));
}

#[test]
fn version_help_examples_and_lint_dash_f() {
    pxfa()
        .arg("--version")
        .assert()
        .success()
        .stdout(contains("FlashArray REST API: 2."))
        .stdout(contains("Portworx"))
        .stdout(contains("OpenShift"));
    for cmd in [
        "plan", "apply", "destroy", "status", "size", "lint", "render", "volume",
    ] {
        pxfa()
            .args([cmd, "--help"])
            .assert()
            .success()
            .stdout(contains("Examples:"))
            .stdout(contains("`pxfa help array` lists them"));
    }
    let spec = direct_access_spec();
    pxfa().args(["lint", "-f"]).arg(&spec).assert().success();
    pxfa().arg("lint").arg(&spec).assert().success();
    pxfa().arg("lint").assert().code(2);
}

/// The array options are listed by `pxfa --help` and `pxfa help array`; every other
/// command's help points there instead of repeating them, and they still work there.
#[test]
fn array_options_are_listed_once_and_pointed_to() {
    let listed = [
        "--array <URL|sim>",
        "--api-token-file <FILE>",
        "--ca-file <FILE>",
        "--sim-seed <SEED>",
    ];
    for args in [&["--help"][..], &["help", "array"], &["array", "--help"]] {
        let out = pxfa().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let help = String::from_utf8(out.stdout).unwrap();
        for option in listed {
            assert!(help.contains(option), "{args:?} lists {option}");
        }
    }
    for args in [
        &["plan", "--help"][..],
        &["volume", "list", "--help"],
        &["help", "volume"],
        &["token", "create", "--help"],
        &["array", "info", "--help"],
        &["sim", "serve", "-h"],
    ] {
        let out = pxfa().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(
            help.contains("`pxfa help array` lists them"),
            "{args:?} points to the list:\n{help}"
        );
        for option in ["--array <URL|sim>", "--ca-file <FILE>", "--retries <N>"] {
            assert!(!help.contains(option), "{args:?} repeats {option}:\n{help}");
        }
        assert!(
            help.contains("--output <OUTPUT>"),
            "{args:?} keeps the output options"
        );
    }
    // `sim serve` requires the token file, so its help shows that one.
    pxfa()
        .args(["sim", "serve", "--help"])
        .assert()
        .success()
        .stdout(contains("--api-token-file <FILE>"));
    // The controller takes its credentials from Secrets: no pointer to array options.
    pxfa()
        .args(["controller", "run", "--help"])
        .assert()
        .success()
        .stdout(contains("pxfa help array").not());
    // Hidden from the help, the options are the same global ones after any command.
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    pxfa()
        .args([
            "volume",
            "list",
            "--array",
            "sim",
            "--retries",
            "1",
            "--sim-state",
        ])
        .arg(&state)
        .args(["-o", "json"])
        .assert()
        .success()
        .stdout("[]\n");
}

/// A dynamic drive's claim is drawn from the volume the array holds for it once the
/// management Portworx made it and pxfa found it (the plan's `claim` detail).
#[test]
fn status_draws_a_found_dynamic_drive_into_its_claim() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let spec = direct_access_spec();
    let spec = spec.to_str().unwrap();
    let out = sim(&state, &["apply", "-f", spec, "--yes"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = sim(&state, &["plan", "-f", spec, "-o", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<(String, String)> = doc["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "volume" && c["details"]["claim"].is_string())
        .map(|c| {
            let claim = c["details"]["claim"].as_str().unwrap();
            let name = claim.rsplit('/').next().unwrap().to_string();
            (c["name"].as_str().unwrap().to_string(), name)
        })
        .collect();
    assert_eq!(found.len(), 6, "three workers, two drives each: {doc}");
    let out = sim(&state, &["status", "-f", spec, "-o", "mermaid"])
        .output()
        .unwrap();
    let m = String::from_utf8(out.stdout).unwrap();
    let id_of = |label: &str| {
        m.lines()
            .find(|l| l.contains(&format!("[\"{label}\"]")))
            .and_then(|l| l.trim().split('[').next())
            .map(str::to_string)
            .unwrap_or_else(|| panic!("{label} missing in {m}"))
    };
    for (volume, claim) in &found {
        let (v, c) = (
            id_of(&format!("volume {volume}")),
            id_of(&format!("PVC {claim}")),
        );
        assert!(
            m.contains(&format!("{v} --> {c}")),
            "{volume} -> {claim}:\n{m}"
        );
    }
}
