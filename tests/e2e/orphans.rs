//! `pxfa orphans` through the binary against `pxfa sim serve --seed brownfield`:
//! tenant-demo applied and given as a folder of specs, the seed's other pxfa tenant
//! (tenant-blue) given no spec. Without evidence tenant-blue is not accounted for
//! and `--cleanup --yes` leaves it live; with `--all-tenants-given` the scan lists
//! exactly its objects with that evidence and changes nothing, `--cleanup` names it
//! with its object count and refuses without --yes off a terminal, soft-destroys
//! with it, and a second scan is empty (its objects wait for eradication).

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

/// tenant-demo applied on the brownfield simulator, given alone as a folder of
/// specs, the scan's output (`-o json` or text) and exit code.
struct Given {
    sim: Sim,
    tenants: std::path::PathBuf,
}

impl Given {
    fn start() -> Given {
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
        Given { sim, tenants }
    }

    /// `pxfa [pre...] orphans -f TENANTS [extra...]`: exit code, stdout, stderr.
    fn orphans(&self, pre: &[&str], extra: &[&str]) -> (Option<i32>, String, String) {
        let out = self
            .sim
            .cmd()
            .env_remove("KUBECONFIG")
            .args(pre)
            .args(["orphans", "-f"])
            .arg(&self.tenants)
            .args(extra)
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&out);
        self.sim.assert_no_token(&stdout, &stderr);
        (out.status.code(), stdout, stderr)
    }

    /// tenant-blue's live volumes and pod on the array.
    fn blue_live(&self) -> usize {
        array_state(&self.sim)
            .iter()
            .flatten()
            .filter(|v| v.starts_with("\"tenant-blue") && !v.contains(" true "))
            .count()
    }
}

/// Issue #34 item 2: `orphans -f A --cleanup --yes` leaves every tenant not given
/// live. The seed's tenant-blue, left out of the specs with no management cluster
/// read, is listed as not accounted for with its objects and evidence, nothing of
/// it is an orphan, and the cleanup changes nothing on the array.
#[test]
fn orphans_given_one_spec_keeps_every_other_tenant() {
    let g = Given::start();
    let before = array_state(&g.sim);
    let blue = g.blue_live();
    assert_eq!(blue, 7, "tenant-blue's pod and six drives: {before:#?}");

    let (code, stdout, stderr) = g.orphans(&[], &["-o", "json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r["kind"], "Orphans");
    assert_eq!(r["tenants"], serde_json::json!(["default/tenant-demo"]));
    assert!(
        r["orphans"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["tenant"] != "team-blue/tenant-blue"),
        "{r:#}"
    );
    let unaccounted = r["unaccounted"].as_array().unwrap();
    assert_eq!(unaccounted.len(), 1, "{r:#}");
    assert_eq!(unaccounted[0]["tenant"], "team-blue/tenant-blue");
    assert_eq!(unaccounted[0]["objects"].as_array().unwrap().len(), 7);
    assert!(
        unaccounted[0]["evidence"]
            .as_str()
            .unwrap()
            .contains("no evidence it is gone"),
        "{r:#}"
    );
    let not_checked: Vec<&str> = r["notChecked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["kind"].as_str().unwrap())
        .collect();
    assert!(not_checked.contains(&"released-volume"), "{not_checked:?}");
    assert!(
        not_checked.contains(&"host-without-node"),
        "{not_checked:?}"
    );

    let (code, text, _) = g.orphans(&[], &[]);
    assert_eq!(code, Some(0));
    assert!(
        text.contains(
            "Not accounted for, kept (no evidence it is gone): tenant team-blue/tenant-blue, 7 object(s)"
        ),
        "{text}"
    );

    let (code, stdout, stderr) = g.orphans(&["--yes"], &["--cleanup"]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(!stdout.contains("Cleaned up"), "{stdout}");
    assert_eq!(g.blue_live(), 7, "tenant-blue left live");
    assert_eq!(array_state(&g.sim), before, "nothing changed");
    assert!(g.sim.terminate());
}

/// With every tenant stated given (`--all-tenants-given`), tenant-blue is gone on
/// that statement: the scan lists its objects with that evidence and writes
/// nothing, the cleanup's question names it with its object count and needs
/// --yes off a terminal, and with --yes it is soft-destroyed; a second scan is
/// empty (its objects wait for eradication).
#[test]
fn orphans_with_every_tenant_stated_given_cleans_up_softly_and_names_each_tenant() {
    let g = Given::start();
    let before = array_state(&g.sim);
    let all = "--all-tenants-given";
    let (code, stdout, stderr) = g.orphans(&[], &[all, "-o", "json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    let orphans = r["orphans"].as_array().unwrap();
    assert_eq!(orphans.len(), 7, "tenant-blue's pod and six drives: {r:#}");
    for o in orphans {
        assert_eq!(o["kind"], "tenant-gone", "{o}");
        assert_eq!(o["tenant"], "team-blue/tenant-blue", "{o}");
        assert!(o["evidence"].as_str().unwrap().contains(all), "{o}");
    }
    assert!(orphans.iter().any(|o| o["ageMs"].is_u64()), "{r:#}");
    assert_eq!(r["unaccounted"], serde_json::json!([]));
    assert_eq!(array_state(&g.sim), before, "a scan writes nothing");

    // A cleanup asks, naming the tenant and its object count; without a terminal
    // it needs --yes, and then nothing changed.
    let (code, _, stderr) = g.orphans(&[], &[all, "--cleanup"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--yes"), "{stderr}");
    assert!(
        stderr.contains(
            "soft-destroy every object of tenant team-blue/tenant-blue (7 object(s)) as gone"
        ),
        "{stderr}"
    );
    assert_eq!(
        array_state(&g.sim),
        before,
        "a refused cleanup writes nothing"
    );

    let (code, stdout, stderr) = g.orphans(&["--yes"], &[all, "--cleanup"]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("Cleaned up 7 of 7"), "{stdout}");
    assert!(
        stderr.contains("tenant team-blue/tenant-blue (7 object(s))"),
        "{stderr}"
    );
    assert_eq!(g.blue_live(), 0, "tenant-blue destroyed (soft)");

    let (code, stdout, _) = g.orphans(&[], &[all, "-o", "json"]);
    assert_eq!(code, Some(0));
    let again: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(again["orphans"], serde_json::json!([]), "{again:#}");
    let pending = again["pendingEradication"].as_array().unwrap();
    assert!(
        pending.iter().any(|p| p["object"] == "pod tenant-blue"),
        "{again:#}"
    );
    assert_eq!(pending.len(), 7, "{again:#}");
    assert!(g.sim.terminate());
}

/// `--all-tenants-given` is a statement about the specs: it needs -f, and the
/// management cluster's evidence is not mixed with it.
#[test]
fn all_tenants_given_needs_specs_and_no_cluster() {
    let sim = Sim::start();
    for args in [
        vec!["orphans", "--all-tenants-given"],
        vec![
            "orphans",
            "-f",
            "x.yaml",
            "--all-tenants-given",
            "--kubeconfig",
            "k",
        ],
    ] {
        let out = sim
            .cmd()
            .env_remove("KUBECONFIG")
            .args(&args)
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stdout.is_empty());
        assert!(stderr.contains("--all-tenants-given"), "{stderr}");
    }
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
