//! The runbook steps `pxfa status` verifies, against the fake API server: a
//! direct-access tenant of 4 workers, one VM per index, the claims recording them,
//! one claim asking less than the plan (a growth not applied yet), a removed
//! worker's VM still a StorageNode and a Released PV of the hosted control plane
//! namespace. Each step is ok or not as the clusters say.

use std::collections::BTreeMap;

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
    let mut claims = claims_on_vms(&manifests, vm);
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
    // Worker 0's claim as an earlier pxfa labelled it (the name alone) and as a
    // same-named tenant of another namespace labels it, each recording another VM:
    // neither is read as this tenant's (worker 0 would name two VMs), and the
    // earlier pxfa's is named in the state.
    let mut old = claims[0].clone();
    old["metadata"]["name"] = json!("tenant-full-w00-old");
    old["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("pxfa.io/tenant-namespace")
        .expect("rendered claims carry the namespace label");
    old["metadata"]["annotations"] = json!({"pxfa.io/attached-vm": vm(8)});
    let mut other = claims[0].clone();
    other["metadata"]["name"] = json!("tenant-full-w00-other");
    other["metadata"]["labels"]["pxfa.io/tenant-namespace"] = json!("team-other");
    other["metadata"]["annotations"] = json!({"pxfa.io/attached-vm": vm(7)});
    claims.extend([old, other]);
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
    let find = layer
        .items
        .iter()
        .find(|i| i.object.ends_with("worker.find-vm"))
        .unwrap();
    assert!(
        find.state
            .contains("not read as this tenant's: tenant-full-w00-old")
            && !find.state.contains("w00-other"),
        "{find:?}"
    );
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

/// Which steps of `layer` are ok, by id.
fn oks(layer: &px_cluster::status::Layer) -> BTreeMap<String, bool> {
    layer
        .items
        .iter()
        .map(|i| {
            (
                i.object.trim_start_matches("runbook step ").to_string(),
                i.ok,
            )
        })
        .collect()
}

fn want(pairs: &[(&str, bool)]) -> BTreeMap<String, bool> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// Mounts the NodePool's VMs (`count`, named `{nodepool}-{i}`), the PVs, and on the
/// tenant side the StorageNodes and the tenant StorageCluster.
async fn mount_mode_site(
    fake: &Fake,
    spec: &px_topology::TenantStorage,
    count: u32,
    pvs: Vec<Value>,
    nodes: &[(String, &str)],
    stc: Option<Value>,
) {
    let ns = spec.hcp_namespace();
    let vms: Vec<Value> = (0..count)
        .map(|i| {
            vm_json(
                &format!("{}-{i}", spec.node_pool()),
                "2026-01-01T00:00:00Z",
                None,
                json!([]),
            )
        })
        .collect();
    Mock::given(method("GET"))
        .and(path(format!(
            "/apis/kubevirt.io/v1/namespaces/{ns}/virtualmachines"
        )))
        .respond_with(list("VirtualMachine", vms))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/v1/persistentvolumes"))
        .respond_with(list("PersistentVolume", pvs))
        .mount(&fake.server)
        .await;
    let px = &spec.spec.portworx.namespace;
    let nodes: Vec<Value> = nodes
        .iter()
        .map(|(name, phase)| {
            json!({"apiVersion": "core.libopenstorage.org/v1", "kind": "StorageNode",
                   "metadata": {"name": name, "namespace": px}, "status": {"phase": phase}})
        })
        .collect();
    Mock::given(method("GET"))
        .and(path(format!(
            "/apis/core.libopenstorage.org/v1/namespaces/{px}/storagenodes"
        )))
        .respond_with(list("StorageNode", nodes))
        .mount(&fake.server)
        .await;
    let stc_path = format!(
        "/apis/core.libopenstorage.org/v1/namespaces/{px}/storageclusters/{}",
        spec.portworx_cluster_name()
    );
    let answer = match stc {
        Some(s) => ResponseTemplate::new(200).set_body_json(s),
        None => ResponseTemplate::new(404).set_body_json(json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404})),
    };
    Mock::given(method("GET"))
        .and(path(stc_path))
        .respond_with(answer)
        .mount(&fake.server)
        .await;
}

fn storage_cluster(
    spec: &px_topology::TenantStorage,
    strategy: Option<&str>,
    deleting: bool,
) -> Value {
    let mut s = json!({"apiVersion": "core.libopenstorage.org/v1", "kind": "StorageCluster",
        "metadata": {"name": spec.portworx_cluster_name(), "namespace": spec.spec.portworx.namespace},
        "spec": {}});
    if let Some(t) = strategy {
        s["spec"]["deleteStrategy"] = json!({"type": t});
    }
    if deleting {
        s["metadata"]["deletionTimestamp"] = json!("2026-01-02T00:00:00Z");
    }
    s
}

/// Cloud-drive: the NodePool's size, the StorageNodes against its VMs, Online
/// nodes and the delete strategy, each ok exactly when the clusters show it.
#[tokio::test]
async fn cloud_drive_steps_follow_the_nodepool_the_storage_nodes_and_the_delete_strategy() {
    let spec = cloud_drive_spec();
    let replicas = spec.spec.hosted_cluster.replicas;
    let vm = |i: u32| format!("{}-{i}", spec.node_pool());
    let manifests = rendered(&spec);

    // As the runbook leaves it: replicas VMs, each an Online StorageNode, and the
    // strategy set before the delete.
    let fake = Fake::start().await;
    let online: Vec<(String, &str)> = (0..replicas).map(|i| (vm(i), "Online")).collect();
    let stc = storage_cluster(&spec, Some("UninstallAndDelete"), false);
    mount_mode_site(&fake, &spec, replicas, Vec::new(), &online, Some(stc)).await;
    let client = fake.client().await;
    let layer = px_cluster::status::runbook_checks(&spec, &manifests, &client, Some(&client))
        .await
        .unwrap();
    let all_ok = [
        ("nodepool.mark-node-machine", true),
        ("cloud.cluster-delete", true),
        ("node.joined", true),
        ("delete.delete-strategy", true),
    ];
    assert_eq!(oks(&layer), want(&all_ok), "{:#?}", layer.items);

    // Mid-way: a VM too many, a removed node still a StorageNode, nodes
    // offline (two), and the StorageCluster being deleted with the default strategy.
    let fake = Fake::start().await;
    let mut nodes: Vec<(String, &str)> = (0..replicas).map(|i| (vm(i), "Online")).collect();
    nodes[0].1 = "Offline";
    nodes[1].1 = "Offline";
    nodes.push(("removed-node".to_string(), "Online"));
    let stc = storage_cluster(&spec, None, true);
    mount_mode_site(&fake, &spec, replicas + 1, Vec::new(), &nodes, Some(stc)).await;
    let client = fake.client().await;
    let layer = px_cluster::status::runbook_checks(&spec, &manifests, &client, Some(&client))
        .await
        .unwrap();
    let all_bad = [
        ("nodepool.mark-node-machine", false),
        ("cloud.cluster-delete", false),
        ("node.joined", false),
        ("delete.delete-strategy", false),
    ];
    assert_eq!(oks(&layer), want(&all_bad), "{:#?}", layer.items);
    let find = |id: &str| layer.items.iter().find(|i| i.object.ends_with(id)).unwrap();
    assert!(find("cloud.cluster-delete").state.contains("removed-node"));
    assert!(
        find("delete.delete-strategy")
            .state
            .contains("being deleted")
    );

    // Without the tenant cluster only the NodePool is checked; a StorageCluster
    // that is gone has nothing left to strategise.
    let layer = px_cluster::status::runbook_checks(&spec, &manifests, &client, None)
        .await
        .unwrap();
    assert_eq!(oks(&layer), want(&[("nodepool.mark-node-machine", false)]));
    let fake = Fake::start().await;
    mount_mode_site(&fake, &spec, replicas, Vec::new(), &online, None).await;
    let client = fake.client().await;
    let layer = px_cluster::status::runbook_checks(&spec, &manifests, &client, Some(&client))
        .await
        .unwrap();
    assert_eq!(oks(&layer), want(&all_ok), "{:#?}", layer.items);
}

/// Kubevirt-csi: the NodePool's size after scale-out, scale-in or a replaced VM,
/// and no Released infra PV of the hosted control plane namespace after a delete.
#[tokio::test]
async fn kubevirt_csi_steps_follow_the_nodepool_and_the_infra_pvs() {
    let spec = kubevirt_csi_spec();
    let replicas = spec.spec.hosted_cluster.replicas;
    let manifests = rendered(&spec);
    let released = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pvc-guest"},
        "spec": {"claimRef": {"namespace": spec.hcp_namespace(), "name": "guest-db"}},
        "status": {"phase": "Released"}});
    let elsewhere = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-apps"},
        "spec": {"claimRef": {"namespace": "apps", "name": "db"}}, "status": {"phase": "Released"}});
    for (count, pvs, ok) in [
        (replicas, vec![elsewhere.clone()], true),
        (replicas - 1, vec![released, elsewhere], false),
    ] {
        let fake = Fake::start().await;
        mount_mode_site(&fake, &spec, count, pvs, &[], None).await;
        let client = fake.client().await;
        let layer = px_cluster::status::runbook_checks(&spec, &manifests, &client, Some(&client))
            .await
            .unwrap();
        let expected = [
            ("csi.scale-out", ok),
            ("nodepool.mark-node-machine", ok),
            ("csi.delete-machine", ok),
            ("delete.csi-pvs", ok),
        ];
        assert_eq!(oks(&layer), want(&expected), "{:#?}", layer.items);
        if !ok {
            let pvs = layer
                .items
                .iter()
                .find(|i| i.object.ends_with("delete.csi-pvs"))
                .unwrap();
            assert!(pvs.state.contains("pvc-guest") && !pvs.state.contains("pv-apps"));
        }
    }
}
