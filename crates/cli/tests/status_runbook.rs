//! `pxfa status --kubeconfig`'s runbook section through the binary (#24 item 2):
//! the embedded simulated array holding the tenant (a state file) and a fake API
//! server (px-cluster's test support, shared by path) holding the NodePool's VMs,
//! the PVs, for direct-access the drive claims, and for cloud-drive and
//! direct-access the tenant's StorageNodes and StorageCluster. Each runbook step
//! status verifies is ok exactly when the clusters show it, the text output names
//! the layer, and status writes nothing on either side. `release.drives`, which
//! rests on the array alone, shows in status's array layer.
// A test scenario reads top to bottom; the 120-line rule is for library code.
#![allow(clippy::too_many_lines)]

mod fake_sites;

use std::collections::BTreeMap;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::fake_sites::support::{Fake, claims_on_vms, rendered};
use crate::fake_sites::{applied, example, list, pxfa, spec_of, writes};

/// The clusters as a test sets them up.
struct Site {
    /// Namespace of the hosted control plane and the NodePool's name.
    hcp: String,
    node_pool: String,
    vms: usize,
    /// The VMs carry pxfa's worker index (direct-access).
    indexed: bool,
    /// PVs: (name, claim namespace, phase).
    pvs: Vec<(String, String, &'static str)>,
    /// The drive claims in the hosted control plane namespace (direct-access).
    claims: Vec<Value>,
    /// Tenant side (cloud-drive and direct-access).
    tenant: Option<TenantSide>,
}

/// A tenant's Portworx as the fake tenant cluster shows it.
struct TenantSide {
    /// Portworx namespace.
    px: String,
    /// StorageCluster name.
    stc: String,
    /// StorageNodes: (name, phase).
    nodes: Vec<(String, &'static str)>,
    /// The StorageCluster's delete strategy.
    strategy: Option<&'static str>,
}

async fn mount(fake: &Fake, site: &Site) {
    let vms: Vec<Value> = (0..site.vms)
        .map(|i| {
            let annotations = if site.indexed {
                json!({"pxfa.io/worker-index": i.to_string()})
            } else {
                json!({})
            };
            json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                   "metadata": {"name": format!("{}-{i}", site.node_pool), "namespace": site.hcp,
                                "annotations": annotations},
                   "spec": {"template": {"spec": {"volumes": []}}}})
        })
        .collect();
    Mock::given(method("GET"))
        .and(path(format!(
            "/apis/kubevirt.io/v1/namespaces/{}/virtualmachines",
            site.hcp
        )))
        .respond_with(list("VirtualMachine", vms))
        .mount(&fake.server)
        .await;
    let pvs: Vec<Value> = site
        .pvs
        .iter()
        .map(|(name, ns, phase)| {
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                   "spec": {"claimRef": {"namespace": ns, "name": "c"}}, "status": {"phase": phase}})
        })
        .collect();
    Mock::given(method("GET"))
        .and(path("/api/v1/persistentvolumes"))
        .respond_with(list("PersistentVolume", pvs))
        .mount(&fake.server)
        .await;
    if !site.claims.is_empty() {
        Mock::given(method("GET"))
            .and(path(format!(
                "/api/v1/namespaces/{}/persistentvolumeclaims",
                site.hcp
            )))
            .respond_with(list("PersistentVolumeClaim", site.claims.clone()))
            .mount(&fake.server)
            .await;
    }
    let Some(TenantSide {
        px,
        stc,
        nodes,
        strategy,
    }) = &site.tenant
    else {
        return;
    };
    let nodes: Vec<Value> = nodes
        .iter()
        .map(|(n, phase)| {
            json!({"apiVersion": "core.libopenstorage.org/v1", "kind": "StorageNode",
                   "metadata": {"name": n, "namespace": px}, "status": {"phase": phase}})
        })
        .collect();
    Mock::given(method("GET"))
        .and(path(format!(
            "/apis/core.libopenstorage.org/v1/namespaces/{px}/storagenodes"
        )))
        .respond_with(list("StorageNode", nodes))
        .mount(&fake.server)
        .await;
    let mut body = json!({"apiVersion": "core.libopenstorage.org/v1", "kind": "StorageCluster",
        "metadata": {"name": stc, "namespace": px}, "spec": {}});
    if let Some(t) = strategy {
        body["spec"]["deleteStrategy"] = json!({"type": t});
    }
    Mock::given(method("GET"))
        .and(path(format!(
            "/apis/core.libopenstorage.org/v1/namespaces/{px}/storageclusters/{stc}"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&fake.server)
        .await;
}

/// `pxfa status` with the fake as the management (and, with `tenant`, the
/// tenant) cluster: the runbook layer's steps by id, the text output, the
/// non-GET requests the fake saw, and whether the array state changed.
async fn status(
    site: Site,
    mode: &str,
    tenant: bool,
) -> (BTreeMap<String, (bool, String)>, String, usize, bool) {
    let fake = Fake::start().await;
    mount(&fake, &site).await;
    let dir = tempfile::tempdir().unwrap();
    let spec = example(mode);
    let state = applied(dir.path(), &spec).to_str().unwrap().to_string();
    // A tenant that needs nothing on the array leaves no state file: none after either.
    let before = std::fs::read(&state).ok();
    let kubeconfig = fake.kubeconfig.to_str().unwrap().to_string();
    let run = |format: &'static str| {
        let (state, spec, kubeconfig) = (state.clone(), spec.clone(), kubeconfig.clone());
        tokio::task::spawn_blocking(move || {
            let mut a = vec![
                "--array",
                "sim",
                "--sim-state",
                &state,
                "status",
                "-f",
                spec.to_str().unwrap(),
                "--kubeconfig",
                &kubeconfig,
                "--context",
                "fake",
                "-o",
                format,
            ];
            if tenant {
                a.extend([
                    "--tenant-kubeconfig",
                    &kubeconfig,
                    "--tenant-context",
                    "fake",
                ]);
            }
            pxfa(&a)
        })
    };
    let json_out = run("json").await.unwrap();
    let text_out = run("table").await.unwrap();
    let doc: Value = serde_json::from_slice(&json_out.stdout).unwrap_or_else(|e| {
        panic!(
            "status -o json: {e}: {}",
            String::from_utf8_lossy(&json_out.stderr)
        )
    });
    let layer = doc["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "runbook steps")
        .unwrap_or_else(|| panic!("no runbook layer: {doc:#}"))
        .clone();
    let steps = layer["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["object"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("runbook step ")
                    .to_string(),
                (
                    i["ok"].as_bool().unwrap(),
                    i["state"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect();
    let writes = writes(&fake).await;
    let unchanged = std::fs::read(&state).ok() == before;
    (
        steps,
        String::from_utf8(text_out.stdout).unwrap(),
        writes,
        unchanged,
    )
}

fn oks(steps: &BTreeMap<String, (bool, String)>) -> BTreeMap<&str, bool> {
    steps.iter().map(|(k, (ok, _))| (k.as_str(), *ok)).collect()
}

#[tokio::test]
async fn kubevirt_csi_status_verifies_the_nodepool_and_the_infra_pvs() {
    let spec = example("kubevirt-csi");
    let tenant: px_topology::TenantStorage =
        px_topology::parse_valid_spec(&std::fs::read_to_string(&spec).unwrap()).unwrap();
    let replicas = tenant.spec.hosted_cluster.replicas as usize;
    let site = |vms: usize, released_here: bool| Site {
        hcp: tenant.hcp_namespace(),
        node_pool: tenant.node_pool(),
        vms,
        indexed: false,
        pvs: [
            ("pv-apps".to_string(), "apps".to_string(), "Released"),
            (
                "pv-guest".to_string(),
                tenant.hcp_namespace(),
                if released_here { "Released" } else { "Bound" },
            ),
        ]
        .into(),
        claims: Vec::new(),
        tenant: None,
    };
    let (steps, text, writes, unchanged) =
        status(site(replicas, false), "kubevirt-csi", false).await;
    assert_eq!(
        oks(&steps),
        [
            ("csi.delete-machine", true),
            ("csi.scale-out", true),
            ("delete.csi-pvs", true),
            ("nodepool.mark-node-machine", true),
        ]
        .into(),
        "{steps:#?}"
    );
    assert!(text.contains("runbook step csi.scale-out"), "{text}");
    assert_eq!(writes, 0, "status wrote to the cluster");
    assert!(unchanged, "status changed the array");

    let (steps, text, writes, unchanged) =
        status(site(replicas + 1, true), "kubevirt-csi", false).await;
    assert!(oks(&steps).values().all(|ok| !ok), "{steps:#?}");
    assert!(
        steps["csi.scale-out"]
            .1
            .contains(&format!("{} VM(s)", replicas + 1)),
        "{steps:#?}"
    );
    let pvs = &steps["delete.csi-pvs"].1;
    assert!(
        pvs.contains("pv-guest") && !pvs.contains("pv-apps"),
        "{pvs}"
    );
    assert!(text.contains("see pxfa runbook"), "{text}");
    assert_eq!(writes, 0);
    assert!(unchanged);
}

#[tokio::test]
async fn cloud_drive_status_verifies_the_storage_nodes_and_the_delete_strategy() {
    let spec = example("cloud-drive");
    let tenant: px_topology::TenantStorage =
        px_topology::parse_valid_spec(&std::fs::read_to_string(&spec).unwrap()).unwrap();
    let replicas = tenant.spec.hosted_cluster.replicas as usize;
    let node_pool = tenant.node_pool();
    let vm = |i: usize| format!("{node_pool}-{i}");
    let site = |nodes: Vec<(String, &'static str)>, strategy| Site {
        hcp: tenant.hcp_namespace(),
        node_pool: node_pool.clone(),
        vms: replicas,
        indexed: false,
        pvs: Vec::new(),
        claims: Vec::new(),
        tenant: Some(TenantSide {
            px: tenant.spec.portworx.namespace.clone(),
            stc: tenant.portworx_cluster_name(),
            nodes,
            strategy,
        }),
    };
    let online: Vec<(String, &'static str)> = (0..replicas).map(|i| (vm(i), "Online")).collect();
    let (steps, _, writes, unchanged) = status(
        site(online.clone(), Some("UninstallAndDelete")),
        "cloud-drive",
        true,
    )
    .await;
    assert_eq!(
        oks(&steps),
        [
            ("cloud.cluster-delete", true),
            ("delete.delete-strategy", true),
            ("node.joined", true),
            ("nodepool.mark-node-machine", true),
        ]
        .into(),
        "{steps:#?}"
    );
    assert!(
        steps["delete.delete-strategy"]
            .1
            .contains("UninstallAndDelete")
    );
    assert_eq!(writes, 0);
    assert!(unchanged);

    // A removed node still in the Portworx cluster.
    let mut nodes = online;
    nodes.push(("removed-node".into(), "Online"));
    let (steps, _, writes, _) = status(site(nodes, None), "cloud-drive", true).await;
    assert!(!steps["cloud.cluster-delete"].0, "{steps:#?}");
    assert!(steps["cloud.cluster-delete"].1.contains("removed-node"));
    assert!(
        steps["delete.delete-strategy"].0,
        "no delete under way: {steps:#?}"
    );
    assert!(
        steps["delete.delete-strategy"]
            .1
            .contains("set UninstallAndDelete")
    );
    assert_eq!(writes, 0);
}

/// Direct-access (no CLI e2e before): the NodePool's VMs by worker index, the
/// drive claims recording them, the claims' sizes against the plan, Released PVs of
/// the hosted control plane namespace, and the StorageNodes against the workers.
/// First a tenant as the runbooks leave it (every step ok), then one a step was
/// missed on: a growth not applied, a Released PV left, a removed worker whose VM
/// is still a StorageNode.
#[tokio::test]
async fn direct_access_status_verifies_workers_claims_and_storage_nodes() {
    let spec_path = example("direct-access");
    let tenant = spec_of(&spec_path);
    let replicas = tenant.spec.hosted_cluster.replicas;
    let node_pool = tenant.node_pool();
    let vm = |i: u32| format!("{node_pool}-{i}");
    // The drive claims as rendered, each recording its worker's VM.
    let claims = claims_on_vms(&rendered(&tenant), vm);
    assert!(claims.len() >= replicas as usize, "{claims:#?}");
    let site = |claims: Vec<Value>, pvs, extra_node: Option<String>| Site {
        hcp: tenant.hcp_namespace(),
        node_pool: node_pool.clone(),
        vms: replicas as usize,
        indexed: true,
        pvs,
        claims,
        tenant: Some(TenantSide {
            px: tenant.spec.portworx.namespace.clone(),
            stc: tenant.portworx_cluster_name(),
            nodes: (0..replicas)
                .map(vm)
                .chain(extra_node)
                .map(|n| (n, "Online"))
                .collect(),
            strategy: None,
        }),
    };
    let apps_pv = ("pv-apps".to_string(), "apps".to_string(), "Released");
    let (steps, text, writes, unchanged) = status(
        site(claims.clone(), vec![apps_pv.clone()], None),
        "direct-access",
        true,
    )
    .await;
    let all_ok: BTreeMap<&str, bool> = [
        "decommission.cluster-delete",
        "decommission.offline-cluster-delete",
        "delete.released-pvs",
        "grow.apply",
        "node.joined",
        "nodepool.scale-in",
        "release.pvs",
        "worker.find-vm",
    ]
    .into_iter()
    .map(|id| (id, true))
    .collect();
    assert_eq!(oks(&steps), all_ok, "{steps:#?}");
    assert!(text.contains("runbook step worker.find-vm"), "{text}");
    assert_eq!(writes, 0, "status wrote to the cluster");
    assert!(unchanged, "status changed the array");

    // A growth not applied yet: one data claim asks 1Gi, less than the plan.
    let mut grown = claims;
    let data = grown
        .iter_mut()
        .find(|c| c["metadata"]["name"].as_str().unwrap().contains("-data"))
        .expect("a data claim");
    data["spec"]["resources"]["requests"]["storage"] = json!("1Gi");
    // A removed worker (the index past the last): its claim records a VM that is
    // still a StorageNode.
    let mut removed = grown[0].clone();
    removed["metadata"]["name"] = json!("removed-worker-data0");
    removed["metadata"]["labels"]["pxfa.io/node-index"] = json!(replicas.to_string());
    removed["metadata"]["annotations"] = json!({"pxfa.io/attached-vm": vm(9)});
    grown.push(removed);
    let released = ("pv-old".to_string(), tenant.hcp_namespace(), "Released");
    let (steps, text, writes, unchanged) = status(
        site(grown, vec![apps_pv, released], Some(vm(9))),
        "direct-access",
        true,
    )
    .await;
    let mut want = all_ok;
    for id in [
        "grow.apply",
        "release.pvs",
        "delete.released-pvs",
        "decommission.cluster-delete",
        "decommission.offline-cluster-delete",
    ] {
        want.insert(id, false);
    }
    assert_eq!(oks(&steps), want, "{steps:#?}");
    assert!(steps["grow.apply"].1.contains("1Gi"), "{steps:#?}");
    let pvs = &steps["release.pvs"].1;
    assert!(pvs.contains("pv-old") && !pvs.contains("pv-apps"), "{pvs}");
    assert!(
        steps["decommission.cluster-delete"].1.contains(&vm(9)),
        "{steps:#?}"
    );
    assert!(text.contains("see pxfa runbook"), "{text}");
    assert_eq!(writes, 0);
    assert!(unchanged);
}

/// `release.drives` (soft-destroy the removed workers' retained drives) rests on
/// the array alone, and status's array layer shows it without a cluster and without
/// writing: after a scale-in the removed worker's live drives are problems
/// ("retained", naming the worker), held by `--release-removed-workers` alone (they
/// are dynamic), and once `--destroy-dynamic-drives` too has destroyed them the
/// tenant is healthy.
#[test]
fn release_drives_shows_in_the_array_layer() {
    let dir = tempfile::tempdir().unwrap();
    let three = example("direct-access");
    let text = std::fs::read_to_string(&three).unwrap();
    assert!(text.contains("replicas: 3"), "{text}");
    let four = dir.path().join("four.yaml");
    std::fs::write(&four, text.replace("replicas: 3", "replicas: 4")).unwrap();
    let state = applied(dir.path(), &four);
    let state = state.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--array", "sim", "--sim-state", state, "--yes"];
        all.extend(args);
        all.extend(["-f", three.to_str().unwrap()]);
        let out = pxfa(&all);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    let status = || {
        let before = std::fs::read(state).unwrap();
        let three = three.to_str().unwrap();
        let out = pxfa(&[
            "--array",
            "sim",
            "--sim-state",
            state,
            "-o",
            "json",
            "status",
            "-f",
            three,
        ]);
        assert_eq!(std::fs::read(state).unwrap(), before, "status wrote");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        // Exit 0 when healthy, 3 with problems (#37).
        let code = if doc["healthy"] == true { 0 } else { 3 };
        assert_eq!(out.status.code(), Some(code), "{doc}");
        let removed: Vec<Value> = doc["layers"][0]["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| {
                i["problem"]
                    .as_str()
                    .is_some_and(|p| p.contains("drive of worker 3"))
            })
            .cloned()
            .collect();
        (doc["healthy"].as_bool().unwrap(), removed)
    };
    // Scale-in to 3 workers: worker 3's drives are retained, live.
    run(&["apply"]);
    let (healthy, removed) = status();
    assert!(!healthy);
    assert!(!removed.is_empty());
    let retained = |removed: &[Value]| {
        removed.iter().all(|i| {
            i["ok"] == false
                && i["state"] == "retained, of a removed worker"
                && i["problem"]
                    .as_str()
                    .is_some_and(|p| !p.contains("run pxfa apply"))
        })
    };
    assert!(retained(&removed), "{removed:#?}");
    // The example's drives are dynamic: the release flag alone holds them (the
    // management Portworx releases them, #36 N6), and status still shows them.
    run(&["apply", "--release-removed-workers"]);
    let (healthy, removed) = status();
    assert!(!healthy);
    assert!(retained(&removed), "{removed:#?}");
    assert!(
        (removed.iter()).all(|i| i["problem"]
            .as_str()
            .is_some_and(|p| p.contains("the management Portworx created it and releases it"))),
        "{removed:#?}"
    );
    // The array-side release (a management Portworx that is gone).
    run(&[
        "apply",
        "--release-removed-workers",
        "--destroy-dynamic-drives",
    ]);
    let (healthy, removed) = status();
    assert!(healthy, "{removed:#?}");
    assert!(removed.is_empty(), "{removed:#?}");
}
