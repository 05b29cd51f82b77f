//! `pxfa orphans` through the binary against `pxfa sim serve --seed brownfield`:
//! tenant-demo applied and given as a folder of specs, the seed's other pxfa tenant
//! (tenant-blue) given no spec. The scan lists exactly tenant-blue's objects with
//! their evidence, names the cluster kinds it could not check, and changes nothing;
//! `--cleanup` refuses without --yes off a terminal, soft-destroys with it, and a
//! second scan is empty (tenant-blue's objects wait for eradication).

use serde_json::Value;

use crate::harness::{Sim, import_host_group_spec, streams};

/// Everything on the array that a cleanup could change, without the fields that
/// move with time (space, time remaining): per kind, each object's name with its
/// destroyed flag, size or quota, connection count and host group.
fn array_state(sim: &Sim) -> Vec<Vec<String>> {
    ["volume", "host", "pod"]
        .iter()
        .map(|k| {
            let mut rows: Vec<String> = sim
                .json(&[k, "list"])
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    format!(
                        "{} {} {} {} {} {}",
                        o["name"],
                        o["destroyed"],
                        o["provisioned"],
                        o["quota_limit"],
                        o["connection_count"],
                        o["host_group"]
                    )
                })
                .collect();
            rows.sort();
            rows
        })
        .collect()
}

#[test]
fn orphans_lists_the_gone_tenant_writes_nothing_and_cleans_up_softly() {
    let sim = Sim::start_with(&["--seed", "brownfield"]);
    let tenants = sim.dir.path().join("tenants");
    std::fs::create_dir(&tenants).unwrap();
    let spec = import_host_group_spec(&tenants);
    let out = sim
        .cmd()
        .args(["apply", "--yes", "--allow-endpoint-mismatch", "-f"])
        .arg(&spec)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", streams(&out).1);
    let before = array_state(&sim);

    let scan = |extra: &[&str]| {
        let out = sim
            .cmd()
            .env_remove("KUBECONFIG")
            .args(["orphans", "-f"])
            .arg(&tenants)
            .args(extra)
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&out);
        sim.assert_no_token(&stdout, &stderr);
        (out.status.code(), stdout, stderr)
    };
    let (code, stdout, stderr) = scan(&["-o", "json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r["kind"], "Orphans");
    assert_eq!(r["tenants"], serde_json::json!(["default/tenant-demo"]));
    let orphans = r["orphans"].as_array().unwrap();
    assert_eq!(orphans.len(), 7, "tenant-blue's pod and six drives: {r:#}");
    for o in orphans {
        assert_eq!(o["kind"], "tenant-gone", "{o}");
        assert_eq!(o["tenant"], "team-blue/tenant-blue", "{o}");
        assert!(
            o["evidence"]
                .as_str()
                .unwrap()
                .contains("no tenant named team-blue/tenant-blue exists"),
            "{o}"
        );
    }
    let not_checked: Vec<&str> = r["notChecked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["kind"].as_str().unwrap())
        .collect();
    assert!(not_checked.contains(&"released-volume"), "{not_checked:?}");
    assert!(!not_checked.contains(&"host-without-node"));
    let (code, text, _) = scan(&[]);
    assert_eq!(code, Some(0));
    assert!(text.contains("7 orphan(s)"), "{text}");
    assert!(text.contains("Not checked: unbound-drive"), "{text}");
    assert_eq!(array_state(&sim), before, "a scan writes nothing");

    // A cleanup asks; without a terminal it needs --yes, and then nothing changed.
    let (code, _, stderr) = scan(&["--cleanup"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--yes"), "{stderr}");
    assert_eq!(
        array_state(&sim),
        before,
        "a refused cleanup writes nothing"
    );

    let (code, stdout, stderr) = {
        let out = sim
            .cmd()
            .env_remove("KUBECONFIG")
            .args(["--yes", "orphans", "--cleanup", "-f"])
            .arg(&tenants)
            .output()
            .unwrap();
        let (o, e) = streams(&out);
        (out.status.code(), o, e)
    };
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("Cleaned up 7 of 7"), "{stdout}");
    let after = array_state(&sim);
    let blue_live = after[0]
        .iter()
        .filter(|v| v.starts_with("\"tenant-blue::") && !v.contains(" true "))
        .count();
    assert_eq!(blue_live, 0, "tenant-blue's drives destroyed (soft)");

    let (code, stdout, _) = scan(&["-o", "json"]);
    assert_eq!(code, Some(0));
    let again: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(again["orphans"], serde_json::json!([]), "{again:#}");
    let pending = again["pendingEradication"].as_array().unwrap();
    assert!(
        pending.iter().any(|p| p["object"] == "pod tenant-blue"),
        "{again:#}"
    );
    assert_eq!(pending.len(), 7, "{again:#}");
    assert!(sim.terminate());
}

#[test]
fn orphans_without_tenants_is_refused_before_any_read() {
    let sim = Sim::start();
    let out = sim
        .cmd()
        .env_remove("KUBECONFIG")
        .arg("orphans")
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("-f SPEC|DIR"), "{stderr}");
    let empty = tempfile::tempdir().unwrap();
    let out = sim
        .cmd()
        .env_remove("KUBECONFIG")
        .args(["orphans", "-f"])
        .arg(empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(streams(&out).1.contains("no .yaml or .yml"));
}
