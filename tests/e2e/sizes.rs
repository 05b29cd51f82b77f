//! Issue #24 item 1: sizes never move by accident. The manual flow 3 -> 4 -> 3 -> 4
//! workers on the brownfield array, `apply` without `--kubeconfig` (as the README's
//! walkthrough runs it), with dynamic and with import provisioning: every claim
//! pxfa renders and every drive on the array keeps the size it had, because the
//! sizing in use is recorded on the tenant's pod and read back.
//!
//! Against `pxfa sim serve` nothing stands in for the management cluster: pxfa
//! cannot see which claims bound, as against a real array without `--kubeconfig`.
//! The test plays the management Portworx there (`SimFada` over REST): it creates
//! each drive when its claim is applied, and nobody tags it.

use std::collections::BTreeMap;
use std::path::Path;

use flasharray::Size;
use flasharray::rest::RestArray;
use flasharray_mock::SimFada;
use flasharray_mock::fada::SimClaim;
use serde_json::Value;

use crate::harness::{Sim, direct_access_spec, import_host_group_spec, pxfa, set_replicas, walk};

/// Where the flow runs: the embedded array in a state file (its simulated
/// management Portworx binds the claims and pxfa tags the drives), or `sim serve`
/// over HTTPS (no cluster at all).
enum Target<'a> {
    Embedded(&'a Path),
    Served(&'a Sim),
}

impl Target<'_> {
    fn cmd(&self) -> assert_cmd::Command {
        let mut c = match self {
            Target::Embedded(state) => {
                let mut c = pxfa();
                c.args(["--array", "sim", "--sim-seed", "brownfield", "--sim-state"])
                    .arg(state);
                c
            }
            Target::Served(sim) => sim.cmd(),
        };
        c.env_remove("KUBECONFIG");
        c
    }

    /// The management Portworx binds `claims` (name -> (namespace, size)): on `sim
    /// serve`, a volume in the tenant's pod for each claim that has none.
    fn bind(&self, claims: &BTreeMap<String, (String, String)>) {
        let Target::Served(sim) = self else {
            return;
        };
        let claims: Vec<SimClaim> = claims
            .iter()
            .map(|(name, (namespace, size))| SimClaim {
                namespace: namespace.clone(),
                name: name.clone(),
                size: Size::gib(size.strip_suffix("Gi").unwrap().parse().unwrap()),
            })
            .collect();
        let array = RestArray::builder(&sim.url)
            .api_token(sim.token().into())
            .ca_pem(std::fs::read(&sim.cert).unwrap())
            .build()
            .unwrap();
        let pod = flasharray::PodName::new("tenant-demo").unwrap();
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(SimFada::new().provision(&array, Some(&pod), &claims))
            .unwrap();
    }
}

fn run(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    text
}

/// The tenant's live volumes on the array: name -> provisioned bytes.
fn volumes(at: &Target<'_>) -> BTreeMap<String, u64> {
    let out = at
        .cmd()
        .args(["volume", "list", "-o", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "volume list");
    serde_json::from_slice::<Vec<Value>>(&out.stdout)
        .unwrap()
        .into_iter()
        .filter(|v| {
            v["name"]
                .as_str()
                .unwrap_or("")
                .starts_with("tenant-demo::")
        })
        .filter(|v| v["destroyed"] == false)
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["provisioned"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The pod's quota on the array.
fn pod_quota(at: &Target<'_>) -> u64 {
    let out = at
        .cmd()
        .args(["pod", "list", "-o", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "pod list");
    serde_json::from_slice::<Vec<Value>>(&out.stdout)
        .unwrap()
        .into_iter()
        .find(|p| p["name"] == "tenant-demo")
        .and_then(|p| p["quota_limit"].as_u64())
        .expect("the tenant's pod has a quota")
}

/// The drive claims rendered under `dir`: claim name -> (namespace, requested
/// storage).
fn claims(dir: &Path) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    for file in walk(dir) {
        let body = std::fs::read_to_string(&file).unwrap();
        for doc in body.split("\n---") {
            if !doc.contains("kind: PersistentVolumeClaim")
                || !doc.contains("pxfa-fada-tenant-demo")
            {
                continue;
            }
            let field = |key: &str| {
                doc.lines()
                    .map(str::trim)
                    .find_map(|l| l.strip_prefix(key))
                    .map(|v| v.trim().trim_matches('"').to_string())
                    .unwrap_or_else(|| panic!("{key} in {doc}"))
            };
            out.insert(field("name:"), (field("namespace:"), field("storage:")));
        }
    }
    out
}

/// 3 -> 4 -> 3 -> 4 workers, each apply without `--kubeconfig` and rendering into a
/// fresh folder: no claim or drive changes size, every worker gets the one data
/// drive size, the pod quota covers the drives.
fn scale_3_4_3_4(at: &Target<'_>, spec: &Path, dir: &Path) {
    let mut all_claims: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut all_volumes: BTreeMap<String, u64> = BTreeMap::new();
    for (step, (from, to)) in [(3, 3), (3, 4), (4, 3), (3, 4)].into_iter().enumerate() {
        if from != to {
            set_replicas(spec, from as u32, to as u32);
        }
        let out = dir.join(format!("manifests-{step}"));
        let mut apply = at.cmd();
        apply.args(["apply", "--yes", "--out"]).arg(&out);
        if matches!(at, Target::Served(_)) {
            // The spec names the real array's endpoint, not the simulator's.
            apply.arg("--allow-endpoint-mismatch");
        }
        run(apply.arg("-f").arg(spec));
        let c = claims(&out);
        assert_eq!(
            c.len(),
            2 * to,
            "one data, one metadata claim per worker: {c:?}"
        );
        // A removed worker's claims are no longer rendered; every one that is keeps
        // the size it had.
        for (name, claim) in &c {
            if let Some(was) = all_claims.get(name) {
                assert_eq!(claim, was, "at {to} workers: claim {name} kept its size");
            }
        }
        let data: std::collections::BTreeSet<&String> = c
            .iter()
            .filter(|(n, _)| n.contains("-data"))
            .map(|(_, (_, s))| s)
            .collect();
        assert_eq!(data.len(), 1, "one data drive size: {c:?}");
        at.bind(&c);
        let v = volumes(at);
        assert!(v.len() >= 2 * to, "{v:?}");
        for (name, size) in &all_volumes {
            assert_eq!(
                v.get(name),
                Some(size),
                "at {to} workers: drive {name} kept its size"
            );
        }
        let held: u64 = v.values().sum();
        assert!(
            pod_quota(at) >= held,
            "at {to} workers: the pod quota covers the drives"
        );
        all_claims.extend(c);
        all_volumes.extend(v);
    }
}

#[test]
fn dynamic_scale_3_4_3_4_without_any_cluster_keeps_every_size() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("tenant.yaml");
    std::fs::copy(direct_access_spec(), &spec).unwrap();
    let sim = Sim::start_with(&["--seed", "brownfield"]);
    scale_3_4_3_4(&Target::Served(&sim), &spec, dir.path());
}

#[test]
fn dynamic_scale_3_4_3_4_on_the_embedded_array_keeps_every_size() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("tenant.yaml");
    std::fs::copy(direct_access_spec(), &spec).unwrap();
    let state = dir.path().join("state.json");
    scale_3_4_3_4(&Target::Embedded(&state), &spec, dir.path());
}

#[test]
fn import_scale_3_4_3_4_without_cluster_access_keeps_every_size() {
    let dir = tempfile::tempdir().unwrap();
    let spec = import_host_group_spec(dir.path());
    let state = dir.path().join("state.json");
    scale_3_4_3_4(&Target::Embedded(&state), &spec, dir.path());
}
