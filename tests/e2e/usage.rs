//! `pxfa usage` and `volume list --tenant` on the embedded brownfield array: rows
//! per tenant by the ownership tags (the other team's tenant, an earlier pxfa's
//! unclaimed one, a tenant applied here), untagged and destroyed objects apart,
//! never guessed; per worker drive sizes; table, JSON (valid against
//! docs/usage.schema.json), CSV; read only.

use std::path::Path;

use crate::harness::{direct_access_spec, pxfa, streams};

/// `pxfa --array sim --sim-state STATE ARGS`; stdout on success.
fn sim(state: &Path, args: &[&str]) -> String {
    let out = pxfa()
        .args(["--array", "sim", "--sim-seed", "brownfield", "--sim-state"])
        .arg(state)
        .args(args)
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "pxfa {args:?}: {stdout}\n{stderr}");
    stdout
}

fn json(state: &Path, args: &[&str]) -> serde_json::Value {
    let stdout = sim(state, &[args, &["-o", "json"]].concat());
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn row<'a>(doc: &'a serde_json::Value, holder: &str) -> &'a serde_json::Value {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| holder_text(&r["holder"]) == holder)
        .unwrap_or_else(|| panic!("no row {holder}: {doc:#}"))
}

fn holder_text(h: &serde_json::Value) -> String {
    match h["kind"].as_str().unwrap() {
        "tenant" => format!(
            "{}/{}",
            h["namespace"].as_str().unwrap(),
            h["name"].as_str().unwrap()
        ),
        "unclaimed" => format!("{} (unclaimed)", h["name"].as_str().unwrap()),
        other => other.to_string(),
    }
}

#[test]
fn usage_reports_each_tenant_by_its_tags_and_never_writes() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let spec = direct_access_spec();
    sim(&state, &["apply", "--yes", "-f", spec.to_str().unwrap()]);
    // A volume Portworx made in the tenant's pod carries no pxfa tags: its pod's.
    sim(
        &state,
        &[
            "volume",
            "create",
            "tenant-demo::px_cloud1",
            "--size",
            "10GiB",
        ],
    );
    // A volume tagged for a tenant by hand, without managed-by=pxfa: nobody's.
    sim(&state, &["volume", "create", "loose", "--size", "1GiB"]);
    sim(
        &state,
        &[
            "volume",
            "tag",
            "loose",
            "--namespace",
            "pxfa.io",
            "--set",
            "tenant=tenant-demo",
            "--set",
            "tenant-namespace=default",
        ],
    );
    let before = std::fs::read(&state).unwrap();

    let doc = json(&state, &["usage"]);
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/usage.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    for key in schema["required"].as_array().unwrap() {
        assert!(doc.get(key.as_str().unwrap()).is_some(), "{key} missing");
    }
    assert_eq!(doc["kind"], "Usage");
    let blue = row(&doc, "team-blue/tenant-blue");
    assert_eq!(blue["volumes"], 6);
    assert_eq!(blue["quota"], serde_json::json!(14u64 << 40));
    assert_eq!(blue["used"], serde_json::json!(3 * (3u64 << 39)));
    assert_eq!(blue["shareOfCapacity"], 4.5);
    let demo = row(&doc, "default/tenant-demo");
    assert_eq!(demo["pods"], serde_json::json!(["tenant-demo"]));
    // Its drives (the embedded array stands in for the management Portworx and
    // creates them, tagged) and the untagged volume in its pod.
    assert_eq!(demo["volumesThroughPod"], 1);
    let workers = doc["workers"].as_array().unwrap();
    let demo_drives: Vec<u64> = workers
        .iter()
        .filter(|w| w["tenant"] == "default/tenant-demo")
        .flat_map(|w| w["drives"].as_array().unwrap().iter())
        .map(|d| d["provisioned"].as_u64().unwrap())
        .collect();
    assert!(!demo_drives.is_empty());
    assert_eq!(
        demo["volumes"].as_u64().unwrap() as usize,
        demo_drives.len() + 1
    );
    assert_eq!(
        demo["provisioned"].as_u64().unwrap(),
        demo_drives.iter().sum::<u64>() + (10u64 << 30)
    );
    assert_eq!(
        row(&doc, "tenant-gray (unclaimed)")["pods"],
        serde_json::json!(["tenant-gray"])
    );
    assert_eq!(row(&doc, "destroyed")["volumes"], 1);
    assert!(
        row(&doc, "untagged")["volumes"].as_u64().unwrap() >= 15,
        "loose is untagged"
    );
    let blue_workers: Vec<_> = workers
        .iter()
        .filter(|w| w["tenant"] == "team-blue/tenant-blue")
        .collect();
    assert_eq!(blue_workers.len(), 3, "tenant-blue's three workers");
    assert_eq!(blue_workers[0]["drives"][0]["disk"], "0");
    assert_eq!(blue_workers[0]["drives"][1]["disk"], "meta");

    // The table, the filter and CSV.
    let table = sim(&state, &["usage"]);
    for needle in [
        "TENANT",
        "team-blue/tenant-blue",
        "14 TiB",
        "4.5%",
        "tenant-gray (unclaimed)",
        "untagged",
    ] {
        assert!(table.contains(needle), "{needle}:\n{table}");
    }
    let only = json(&state, &["usage", "--tenant", "tenant-blue"]);
    assert_eq!(only["rows"].as_array().unwrap().len(), 1);
    let none = json(&state, &["usage", "--tenant", "team-x/tenant-blue"]);
    assert!(none["rows"].as_array().unwrap().is_empty());
    let csv = sim(&state, &["usage", "--workers", "-o", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0].trim_end(), "TENANT,WORKER,DISK,VOLUME,SIZE,USED");
    let blue_lines = lines
        .iter()
        .filter(|l| l.starts_with("team-blue/tenant-blue,"))
        .count();
    assert_eq!(blue_lines, 6, "{csv}");
    let first_blue = lines.iter().find(|l| l.starts_with("team-blue/")).unwrap();
    assert!(
        first_blue.starts_with("team-blue/tenant-blue,0,0,tenant-blue::"),
        "{csv}"
    );
    assert!(
        first_blue
            .trim_end()
            .ends_with(",4398046511104,1649267441664"),
        "{csv}"
    );

    assert_eq!(
        std::fs::read(&state).unwrap(),
        before,
        "usage writes nothing"
    );

    // Bad input exits 2; csv is for reports only.
    for (args, says) in [
        (&["usage", "--tenant", "a/b/c"][..], "--tenant"),
        (&["volume", "list", "-o", "csv"][..], "-o csv"),
    ] {
        let out = pxfa().args(["--array", "sim"]).args(args).output().unwrap();
        let (_, stderr) = streams(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

#[test]
fn volume_list_filters_by_tenant_and_shows_the_worker() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let names = |args: &[&str]| -> Vec<String> {
        json(&state, &[&["volume", "list"][..], args].concat())
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap().to_string())
            .collect()
    };
    let blue = names(&["--tenant", "team-blue/tenant-blue"]);
    assert_eq!(blue.len(), 6);
    assert!(blue.iter().all(|n| n.starts_with("tenant-blue::")));
    assert_eq!(
        names(&["--tenant", "tenant-blue"]),
        blue,
        "a bare name: any namespace"
    );
    assert!(names(&["--tenant", "other-ns/tenant-blue"]).is_empty());
    assert_eq!(names(&["--tenant", "tenant-blue", "--limit", "2"]).len(), 2);

    let wide = sim(
        &state,
        &["volume", "list", "--tenant", "tenant-blue", "-o", "wide"],
    );
    let header = wide.lines().next().unwrap();
    assert!(
        header.contains("TENANT") && header.contains("WORKER"),
        "{header}"
    );
    let w1 = wide
        .lines()
        .find(|l| l.contains("b1b1b1b1"))
        .expect("worker 1's data drive");
    assert!(
        w1.contains("team-blue/tenant-blue") && w1.contains("1 (0)"),
        "{w1}"
    );
    // Untagged volumes show their holder too.
    let all = sim(&state, &["volume", "list", "-o", "wide"]);
    let analytics = all
        .lines()
        .find(|l| l.contains("analytics::warehouse01"))
        .unwrap();
    assert!(analytics.contains("untagged"), "{analytics}");
    // Without -o wide or --tenant no tag is read and the columns are not there.
    assert!(
        !sim(&state, &["volume", "list"])
            .lines()
            .next()
            .unwrap()
            .contains("WORKER")
    );
}
