//! The runbook steps `pxfa status` verifies, against the fake API server: a
//! direct-access tenant of 4 workers, one VM per index, the claims recording them,
//! one claim asking less than the plan (a growth not applied yet), a removed
//! worker's VM still a StorageNode and a Released PV of the hosted control plane
//! namespace. Each step is ok or not as the clusters say.

use std::collections::BTreeMap;

use px_topology::render::Cluster;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::*;

fn list(kind: &str, items: Vec<Value>) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "apiVersion": "v1", "kind": format!("{kind}List"), "metadata": {}, "items": items}))
}

#[tokio::test]
async fn each_verifiable_step_is_ok_only_when_the_clusters_show_it() {
    let fake = Fake::start().await;
    let spec = direct_access_spec();
    let ns = spec.hcp_namespace();
    let manifests = rendered(&spec);
    let vm = |i: u32| format!("tenant-full-workers-{i}");
    let vms: Vec<Value> = (0..4)
        .map(|i| vm_json(&vm(i), "2026-01-01T00:00:00Z", Some(i), json!([])))
        .collect();
    let mut claims: Vec<Value> = manifests
        .iter()
        .filter(|m| m.cluster == Cluster::Management && m.kind == "PersistentVolumeClaim")
        .filter_map(|m| {
            let index = m.body["metadata"]["labels"]["pxfa.io/node-index"].as_str()?;
            let mut c = m.body.clone();
            c["metadata"]["annotations"] =
                json!({"pxfa.io/attached-vm": vm(index.parse().unwrap())});
            Some(c)
        })
        .collect();
    assert!(claims.len() >= 8, "{claims:#?}");
    // A growth not applied yet: one data claim asks 1Gi less than the plan.
    let data = claims
        .iter_mut()
        .find(|c| c["metadata"]["name"].as_str().unwrap().contains("-data"))
        .unwrap();
    data["spec"]["resources"]["requests"]["storage"] = json!("1Gi");
    // A removed worker (index 4): its claim records a VM that is still a StorageNode.
    let mut removed = claims[0].clone();
    removed["metadata"]["name"] = json!("tenant-full-w04-data0");
    removed["metadata"]["labels"]["pxfa.io/node-index"] = json!("4");
    removed["metadata"]["annotations"] = json!({"pxfa.io/attached-vm": vm(9)});
    claims.push(removed);
    Mock::given(method("GET"))
        .and(path(format!(
            "/apis/kubevirt.io/v1/namespaces/{ns}/virtualmachines"
        )))
        .respond_with(list("VirtualMachine", vms))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!(
            "/api/v1/namespaces/{ns}/persistentvolumeclaims"
        )))
        .respond_with(list("PersistentVolumeClaim", claims))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/v1/persistentvolumes"))
        .respond_with(list(
            "PersistentVolume",
            vec![
                json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-old"},
                   "spec": {"claimRef": {"namespace": ns, "name": "tenant-full-w05-data0"}},
                   "status": {"phase": "Released"}}),
                json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-apps"},
                   "spec": {"claimRef": {"namespace": "apps", "name": "db"}},
                   "status": {"phase": "Released"}}),
            ],
        ))
        .mount(&fake.server)
        .await;
    let node = |name: &str| {
        json!({"apiVersion": "core.libopenstorage.org/v1", "kind": "StorageNode",
               "metadata": {"name": name, "namespace": "portworx"}, "status": {"phase": "Online"}})
    };
    Mock::given(method("GET"))
        .and(path(
            "/apis/core.libopenstorage.org/v1/namespaces/portworx/storagenodes",
        ))
        .respond_with(list(
            "StorageNode",
            (0..4).map(|i| node(&vm(i))).chain([node(&vm(9))]).collect(),
        ))
        .mount(&fake.server)
        .await;

    let client = fake.client().await;
    let layer = px_cluster::status::runbook_checks(&spec, &manifests, &client, Some(&client))
        .await
        .expect("the checks read");
    let ok: BTreeMap<String, bool> = layer
        .items
        .iter()
        .map(|i| {
            (
                i.object.trim_start_matches("runbook step ").to_string(),
                i.ok,
            )
        })
        .collect();
    let want: BTreeMap<String, bool> = [
        ("nodepool.scale-in", true),
        ("worker.find-vm", true),
        ("grow.apply", false),
        ("release.pvs", false),
        ("delete.released-pvs", false),
        ("decommission.cluster-delete", false),
        ("decommission.offline-cluster-delete", false),
        ("node.joined", true),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(ok, want, "{:#?}", layer.items);
    let grow = layer
        .items
        .iter()
        .find(|i| i.object.ends_with("grow.apply"))
        .unwrap();
    assert!(grow.state.contains("1Gi"), "{grow:?}");
    let released = layer
        .items
        .iter()
        .find(|i| i.object.ends_with("release.pvs"))
        .unwrap();
    assert!(released.state.contains("pv-old") && !released.state.contains("pv-apps"));
    let gone = layer
        .items
        .iter()
        .find(|i| i.object.ends_with("decommission.cluster-delete"))
        .unwrap();
    assert!(gone.state.contains(&vm(9)), "{gone:?}");
    assert!(gone.problem.as_deref().unwrap().contains("StorageNodes"));
}
