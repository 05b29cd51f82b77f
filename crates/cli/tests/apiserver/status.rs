//! `pxfa status --kubeconfig --tenant-kubeconfig` and its runbook steps
//! (px-cluster's `status::runbook_checks`) reading real objects: the sites of the
//! binary's fake-server tests (`tests/status_runbook.rs`) made as real objects, and
//! the same findings asserted. The real server is both the management and the
//! tenant cluster; status runs as the user `pxfa` that `deploy/rbac` binds (the
//! admin impersonating it), so a read the shipped roles lack fails here.
//!
//! Each scenario is a tenant of its own (the example renamed: its own hosted
//! control plane and Portworx namespaces, its own PV names), so the objects other
//! tests leave on the shared server are not its.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::controller::install_deploy;
use crate::fake_sites::support::{claims_on_vms, rendered};
use crate::fake_sites::{applied, command, example, spec_of};
use crate::harness::{
    self, Server, apply_as, ensure_namespace, versions, workspace, yaml_documents,
};
use crate::site::{impersonating, load, remove};

/// A tenant's clusters as a scenario makes them (what the fake test mounts).
struct Site {
    vms: usize,
    /// The VMs carry pxfa's worker index (direct-access).
    indexed: bool,
    /// PVs: (name, claim namespace, phase).
    pvs: Vec<(String, String, &'static str)>,
    /// The drive claims in the hosted control plane namespace (direct-access).
    claims: Vec<Value>,
    /// The tenant's Portworx (cloud-drive and direct-access).
    tenant: Option<(Vec<StorageNode>, Option<&'static str>)>,
}

/// A StorageNode (name, phase); beside them, the StorageCluster's delete strategy.
type StorageNode = (String, &'static str);

/// `examples/tenant-{mode}.yaml` renamed to `name` (its HostedCluster, NodePool
/// and Portworx namespace follow), written to `dir`.
fn renamed(mode: &str, name: &str, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(example(mode))
        .unwrap()
        .replace("tenant-demo", name);
    let mut doc: Value = serde_saphyr::from_str(&text).unwrap();
    doc["spec"]["portworx"]["namespace"] = json!(format!("px-{name}"));
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    path
}

/// The site's objects, as the fake test's `mount` answers with them.
fn objects(tenant: &px_topology::TenantStorage, site: &Site) -> Vec<Value> {
    let hcp = tenant.hcp_namespace();
    let node_pool = tenant.node_pool();
    let mut out: Vec<Value> = (0..site.vms)
        .map(|i| {
            let annotations = if site.indexed {
                json!({"pxfa.io/worker-index": i.to_string()})
            } else {
                json!({})
            };
            json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                   "metadata": {"name": format!("{node_pool}-{i}"), "namespace": hcp,
                                "annotations": annotations},
                   "spec": {"template": {"spec": {"volumes": []}}}})
        })
        .collect();
    out.extend(site.pvs.iter().map(|(name, ns, phase)| {
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
               "spec": {"claimRef": {"namespace": ns, "name": "c"}}, "status": {"phase": phase}})
    }));
    out.extend(site.claims.iter().cloned());
    if let Some((nodes, strategy)) = &site.tenant {
        let px = &tenant.spec.portworx.namespace;
        out.extend(nodes.iter().map(|(n, phase)| {
            json!({"apiVersion": "core.libopenstorage.org/v1", "kind": "StorageNode",
                   "metadata": {"name": n, "namespace": px}, "status": {"phase": phase}})
        }));
        let mut stc = json!({"apiVersion": "core.libopenstorage.org/v1", "kind": "StorageCluster",
            "metadata": {"name": tenant.portworx_cluster_name(), "namespace": px}, "spec": {}});
        if let Some(t) = strategy {
            stc["spec"]["deleteStrategy"] = json!({"type": t});
        }
        out.push(stc);
    }
    out
}

/// The RoleBindings deploy/rbac says to make per namespace pxfa works in: the
/// management tenant role in the hosted control plane namespace; with Portworx in
/// the tenant, `deploy/rbac/tenant.yaml` (the server is the tenant cluster too), its
/// Portworx RoleBinding in the tenant's Portworx namespace (in `portworx`, where
/// tenant.yaml puts it, management.yaml's binding of the same name is, as on a
/// management cluster).
async fn bind_pxfa(admin: &kube::Client, tenant: &px_topology::TenantStorage) {
    let hcp = tenant.hcp_namespace();
    ensure_namespace(admin, &hcp).await;
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "pxfa", "namespace": hcp},
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "pxfa"}],
        "roleRef": {"kind": "ClusterRole", "apiGroup": "rbac.authorization.k8s.io",
                    "name": "pxfa-management-tenant"},
    });
    apply_as(admin, "pxfa-test-deploy", &binding).await;
    if tenant.spec.storage.mode.as_str() == "kubevirt-csi" {
        return;
    }
    let px = &tenant.spec.portworx.namespace;
    for mut doc in yaml_documents(&workspace().join("deploy/rbac/tenant.yaml")) {
        if doc["metadata"]["namespace"].is_string() {
            doc["metadata"]["namespace"] = json!(px);
            ensure_namespace(admin, px).await;
        }
        apply_as(admin, "pxfa-test-deploy", &doc).await;
    }
}

/// Tenant `name` of `mode` applied to a simulated array, its site made on the real
/// server, and `pxfa status -o json` as the user `pxfa`: the runbook steps by id
/// (ok, state), and whether the array state stayed as it was.
async fn status(
    server: &Server,
    mode: &str,
    name: &str,
    site: impl FnOnce(&px_topology::TenantStorage) -> Site,
) -> (BTreeMap<String, (bool, String)>, bool) {
    let admin = server.admin().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = renamed(mode, name, dir.path());
    let tenant = spec_of(&spec);
    bind_pxfa(&admin, &tenant).await;
    let loaded = load(&admin, objects(&tenant, &site(&tenant))).await;
    let versions_before = versions(&admin, &loaded).await;
    let state = applied(dir.path(), &spec);
    let before = std::fs::read(&state).ok();
    let kubeconfig = impersonating(server, "pxfa", dir.path());
    let mut cmd = command(&["--array", "sim", "--sim-state"]);
    cmd.arg(&state).args(["status", "-f"]).arg(&spec);
    cmd.arg("--kubeconfig").arg(&kubeconfig);
    // kubevirt-csi has no Portworx in the tenant.
    if mode != "kubevirt-csi" {
        cmd.arg("--tenant-kubeconfig").arg(&kubeconfig);
    }
    cmd.args(["-o", "json"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "status -o json: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(
        !doc.to_string().contains("forbidden"),
        "status as pxfa was refused a read deploy/rbac should allow: {doc:#}"
    );
    assert_eq!(
        versions(&admin, &loaded).await,
        versions_before,
        "status wrote to the cluster"
    );
    // doctor (site.rs) lists StorageClusters cluster-wide: this tenant's go. (Its
    // claims and PVs stay, held by their protection finalizers; doctor reads neither.)
    remove(&admin, &loaded).await;
    let layer = doc["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "runbook steps")
        .unwrap_or_else(|| panic!("no runbook layer: {doc:#}"));
    let steps = layer["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let id = i["object"].as_str().unwrap();
            let id = id.trim_start_matches("runbook step ").to_string();
            let state = i["state"].as_str().unwrap().to_string();
            (id, (i["ok"].as_bool().unwrap(), state))
        })
        .collect();
    (steps, std::fs::read(&state).ok() == before)
}

fn oks(steps: &BTreeMap<String, (bool, String)>) -> BTreeMap<&str, bool> {
    steps.iter().map(|(k, (ok, _))| (k.as_str(), *ok)).collect()
}

fn all(ids: &[&'static str], ok: bool) -> BTreeMap<&'static str, bool> {
    ids.iter().map(|id| (*id, ok)).collect()
}

#[tokio::test]
async fn status_runbook_steps_read_real_objects_as_the_fake_tests_find_them() {
    let Some((server, _turn)) = harness::shared().await else {
        return;
    };
    install_deploy(&server.admin().await).await;
    kubevirt_csi(server).await;
    cloud_drive(server).await;
    direct_access(server).await;
}

/// `kubevirt_csi_status_verifies_the_nodepool_and_the_infra_pvs`.
async fn kubevirt_csi(server: &Server) {
    const STEPS: [&str; 4] = [
        "csi.delete-machine",
        "csi.scale-out",
        "delete.csi-pvs",
        "nodepool.mark-node-machine",
    ];
    let site = |extra: usize, released_here: bool, name: &'static str| {
        move |t: &px_topology::TenantStorage| Site {
            vms: t.spec.hosted_cluster.replicas as usize + extra,
            indexed: false,
            pvs: vec![
                (format!("{name}-pv-apps"), "apps".into(), "Released"),
                (
                    format!("{name}-pv-guest"),
                    t.hcp_namespace(),
                    if released_here { "Released" } else { "Bound" },
                ),
            ],
            claims: Vec::new(),
            tenant: None,
        }
    };
    let (steps, unchanged) =
        status(server, "kubevirt-csi", "rs-kv-a", site(0, false, "rs-kv-a")).await;
    assert_eq!(oks(&steps), all(&STEPS, true), "{steps:#?}");
    assert!(unchanged, "status changed the array");

    let (steps, _) = status(server, "kubevirt-csi", "rs-kv-b", site(1, true, "rs-kv-b")).await;
    assert_eq!(oks(&steps), all(&STEPS, false), "{steps:#?}");
    let replicas = spec_of(&example("kubevirt-csi"))
        .spec
        .hosted_cluster
        .replicas as usize;
    assert!(
        steps["csi.scale-out"]
            .1
            .contains(&format!("{} VM(s)", replicas + 1)),
        "{steps:#?}"
    );
    let pvs = &steps["delete.csi-pvs"].1;
    assert!(
        pvs.contains("rs-kv-b-pv-guest") && !pvs.contains("pv-apps"),
        "{pvs}"
    );
}

/// `cloud_drive_status_verifies_the_storage_nodes_and_the_delete_strategy`.
async fn cloud_drive(server: &Server) {
    let site = |removed: bool, strategy: Option<&'static str>| {
        move |t: &px_topology::TenantStorage| {
            let mut nodes: Vec<StorageNode> = (0..t.spec.hosted_cluster.replicas)
                .map(|i| (format!("{}-{i}", t.node_pool()), "Online"))
                .collect();
            if removed {
                nodes.push(("removed-node".into(), "Online"));
            }
            Site {
                vms: t.spec.hosted_cluster.replicas as usize,
                indexed: false,
                pvs: Vec::new(),
                claims: Vec::new(),
                tenant: Some((nodes, strategy)),
            }
        }
    };
    let (steps, unchanged) = status(
        server,
        "cloud-drive",
        "rs-cd-a",
        site(false, Some("UninstallAndDelete")),
    )
    .await;
    let ids = [
        "cloud.cluster-delete",
        "delete.delete-strategy",
        "node.joined",
        "nodepool.mark-node-machine",
    ];
    assert_eq!(oks(&steps), all(&ids, true), "{steps:#?}");
    assert!(
        steps["delete.delete-strategy"]
            .1
            .contains("UninstallAndDelete")
    );
    assert!(unchanged, "status changed the array");

    let (steps, _) = status(server, "cloud-drive", "rs-cd-b", site(true, None)).await;
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
}

/// `direct_access_status_verifies_workers_claims_and_storage_nodes`.
async fn direct_access(server: &Server) {
    const STEPS: [&str; 8] = [
        "decommission.cluster-delete",
        "decommission.offline-cluster-delete",
        "delete.released-pvs",
        "grow.apply",
        "node.joined",
        "nodepool.scale-in",
        "release.pvs",
        "worker.find-vm",
    ];
    let site = |missed: bool, name: &'static str| {
        move |t: &px_topology::TenantStorage| {
            let replicas = t.spec.hosted_cluster.replicas;
            let node_pool = t.node_pool();
            let vm = |i: u32| format!("{node_pool}-{i}");
            let mut claims = claims_on_vms(&rendered(t), vm);
            let mut pvs = vec![(format!("{name}-pv-apps"), "apps".into(), "Released")];
            let mut nodes: Vec<StorageNode> = (0..replicas).map(|i| (vm(i), "Online")).collect();
            if missed {
                // A growth not applied, a Released PV left, a removed worker whose
                // VM is still a StorageNode.
                let data = claims
                    .iter_mut()
                    .find(|c| c["metadata"]["name"].as_str().unwrap().contains("-data"))
                    .expect("a data claim");
                data["spec"]["resources"]["requests"]["storage"] = json!("1Gi");
                let mut removed = claims[0].clone();
                removed["metadata"]["name"] = json!("removed-worker-data0");
                removed["metadata"]["labels"]["pxfa.io/node-index"] = json!(replicas.to_string());
                removed["metadata"]["annotations"] = json!({"pxfa.io/attached-vm": vm(9)});
                claims.push(removed);
                pvs.push((format!("{name}-pv-old"), t.hcp_namespace(), "Released"));
                nodes.push((vm(9), "Online"));
            }
            Site {
                vms: replicas as usize,
                indexed: true,
                pvs,
                claims,
                tenant: Some((nodes, None)),
            }
        }
    };
    let (steps, unchanged) =
        status(server, "direct-access", "rs-da-a", site(false, "rs-da-a")).await;
    assert_eq!(oks(&steps), all(&STEPS, true), "{steps:#?}");
    assert!(unchanged, "status changed the array");

    let (steps, _) = status(server, "direct-access", "rs-da-b", site(true, "rs-da-b")).await;
    let mut want = all(&STEPS, true);
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
    assert!(
        pvs.contains("rs-da-b-pv-old") && !pvs.contains("pv-apps"),
        "{pvs}"
    );
    assert!(
        steps["decommission.cluster-delete"]
            .1
            .contains("rs-da-b-workers-9"),
        "{steps:#?}"
    );
}
