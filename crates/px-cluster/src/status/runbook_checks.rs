//! The runbook steps `pxfa status` verifies once it reads the clusters
//! ([`px_topology::runbook::STATUS_CHECKS`]): one [`Item`] per step, named by
//! its id, so that an operator following `pxfa runbook` sees whether the step took.
//! `doctor` can call [`runbook_checks`] as it is. Reads only.
//!
//! Some steps are verified by status's other layers already (claims Bound, drives
//! tagged, disks attached): [`BY_LAYERS`] says which layer, the rest are checked
//! here.

use std::collections::{BTreeMap, BTreeSet};

use crate::bounds::list_all;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kube::api::{Api, DynamicObject, ListParams};
use kube::{Client, ResourceExt};
use px_topology::runbook::verifiable;
use px_topology::spec::StorageMode;
use px_topology::{
    Cluster, Form, LabelledTenant, Manifest, TENANT_LABEL, TenantStorage, labelled_tenant,
};

use crate::ATTACHED_VM_ANNOTATION;
use crate::discovery::status_code;
use crate::error::{Error, Result};
use crate::kinds::{STORAGE_CLUSTER, STORAGE_NODE};
use crate::readiness::{readiness, to_value};
use crate::status::{Item, Layer};
use crate::vms::{VmInfo, discover_vms};

/// Steps of `STATUS_CHECKS` that status's other layers verify, and which layer.
pub const BY_LAYERS: &[(&str, &str)] = &[
    (
        "nodepool.scale-out",
        "management claims, VM disks and the array layer",
    ),
    (
        "drives.status",
        "management claims, the array layer and tenant Portworx",
    ),
    ("replace.attach", "VM disks"),
    ("add-pool.apply", "management claims and VM disks"),
    (
        "release.drives",
        "the array layer (a removed worker's live drive is a problem)",
    ),
];

/// The label pxfa puts on each drive claim: its worker index.
const NODE_INDEX_LABEL: &str = "pxfa.io/node-index";

/// What the checks read once.
struct Read {
    vms: Vec<VmInfo>,
    /// The tenant's drive claims (pxfa's labels name its identity), by name.
    claims: BTreeMap<String, PersistentVolumeClaim>,
    /// Drive claims an earlier pxfa labelled with the tenant's name alone (no
    /// `pxfa.io/tenant-namespace`): not the tenant's for certain, so not read as
    /// its; the next `pxfa apply` of the tenant labels its own.
    unlabelled: Vec<String>,
    /// StorageNodes of the tenant (name, online); `None` without the tenant cluster.
    nodes: Option<Vec<(String, bool)>>,
}

fn item(id: &str, ok: bool, state: String) -> Item {
    Item {
        object: format!("runbook step {id}"),
        problem: (!ok).then(|| {
            format!(
                "expected after this step: {}; see pxfa runbook",
                verifiable(id).unwrap_or("(no check)")
            )
        }),
        state,
        ok,
    }
}

/// The runbook steps' checks for the tenant of `spec`, rendered as `manifests`:
/// direct-access by worker index, cloud-drive and kubevirt-csi by the NodePool's
/// VMs, the StorageNodes and the tenant StorageCluster (`cloud_drive`,
/// `kubevirt_csi`). The node and StorageCluster checks need `tenant`; without it
/// they are left out.
pub async fn runbook_checks(
    spec: &TenantStorage,
    manifests: &[Manifest],
    management: &Client,
    tenant: Option<&Client>,
) -> Result<Layer> {
    let items = match spec.mode() {
        StorageMode::DirectAccess => direct_access(spec, manifests, management, tenant).await?,
        StorageMode::CloudDrive => cloud_drive(spec, management, tenant).await?,
        StorageMode::KubevirtCsi => kubevirt_csi(spec, management).await?,
    };
    Ok(Layer {
        name: "runbook steps".into(),
        items,
    })
}

async fn direct_access(
    spec: &TenantStorage,
    manifests: &[Manifest],
    management: &Client,
    tenant: Option<&Client>,
) -> Result<Vec<Item>> {
    let mut items = Vec::new();
    let r = read(spec, management, tenant).await?;
    let replicas = spec.spec.hosted_cluster.replicas;
    items.push(scale_in(&r.vms, replicas));
    items.push(with_unlabelled(find_vm(&r, replicas), &r));
    items.push(with_unlabelled(grow(&r, manifests), &r));
    items.extend(no_released_pvs(management, spec, &["release.pvs", "delete.released-pvs"]).await?);
    if let Some(nodes) = &r.nodes {
        let (ok, state) = removed_nodes_gone(&r, nodes, replicas);
        for id in [
            "decommission.cluster-delete",
            "decommission.offline-cluster-delete",
        ] {
            items.push(item(id, ok, state.clone()));
        }
        items.push(joined(nodes, replicas));
    }
    Ok(items)
}

/// One item per step `ids`: no Released PV whose claim was in the hosted control
/// plane namespace.
async fn no_released_pvs(
    management: &Client,
    spec: &TenantStorage,
    ids: &[&str],
) -> Result<Vec<Item>> {
    let released = released_pvs(management, &spec.hcp_namespace()).await?;
    let state = if released.is_empty() {
        "no Released PV of the hosted control plane namespace".to_string()
    } else {
        format!("Released: {}", released.join(", "))
    };
    Ok(ids
        .iter()
        .map(|id| item(id, released.is_empty(), state.clone()))
        .collect())
}

async fn read(spec: &TenantStorage, management: &Client, tenant: Option<&Client>) -> Result<Read> {
    let ns = spec.hcp_namespace();
    let vms = discover_vms(management, &ns, &spec.node_pool()).await?;
    let api: Api<PersistentVolumeClaim> = Api::namespaced(management.clone(), &ns);
    // Every claim pxfa labelled with the tenant's name, then the one rule
    // (`labelled_tenant`) says which are this tenant's: both labels name its
    // identity. An earlier pxfa's (the name alone) are counted apart.
    let lp = ListParams::default().labels(&format!(
        "app.kubernetes.io/managed-by=pxfa,{TENANT_LABEL}={}",
        spec.tenant_name()
    ));
    let me = spec.tenant_id();
    let mut claims = BTreeMap::new();
    let mut unlabelled = Vec::new();
    let listed = list_all(&api, &lp)
        .await
        .map_err(|e| Error::kube(format!("cannot list the drive claims in {ns}"), e))?;
    for c in listed.items {
        if !c.labels().contains_key(NODE_INDEX_LABEL) {
            continue;
        }
        match labelled_tenant(c.labels()) {
            Some(LabelledTenant::Tenant(id)) if id == me => {
                claims.insert(c.name_any(), c);
            }
            Some(LabelledTenant::Unclaimed(_)) => unlabelled.push(c.name_any()),
            _ => {}
        }
    }
    let nodes = match tenant {
        Some(t) => Some(storage_nodes(t, &spec.spec.portworx.namespace).await?),
        None => None,
    };
    Ok(Read {
        vms,
        claims,
        unlabelled,
        nodes,
    })
}

async fn storage_nodes(tenant: &Client, ns: &str) -> Result<Vec<(String, bool)>> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(tenant.clone(), ns, &STORAGE_NODE.resource());
    match list_all(&api, &ListParams::default()).await {
        Ok(l) => Ok(l
            .items
            .iter()
            .map(|n| {
                (
                    n.name_any(),
                    readiness(STORAGE_NODE.kind, &to_value(n)).is_ok(),
                )
            })
            .collect()),
        Err(e) if status_code(&e) == Some(404) => Ok(Vec::new()),
        Err(e) => Err(Error::kube(format!("cannot list StorageNodes in {ns}"), e)),
    }
}

fn index_of(c: &PersistentVolumeClaim) -> Option<u32> {
    c.labels().get(NODE_INDEX_LABEL)?.parse().ok()
}

/// `nodepool.scale-in`: the NodePool has `replicas` VMs carrying 0..replicas.
fn scale_in(vms: &[VmInfo], replicas: u32) -> Item {
    let indexes: BTreeSet<u32> = vms.iter().filter_map(|v| v.index).collect();
    let want: BTreeSet<u32> = (0..replicas).collect();
    let ok = vms.len() == replicas as usize && indexes == want;
    item(
        "nodepool.scale-in",
        ok,
        format!(
            "{} VM(s), worker indexes {:?}; the spec has {replicas}",
            vms.len(),
            indexes
        ),
    )
}

/// `worker.find-vm`: every worker's claims record one VM that exists.
fn find_vm(r: &Read, replicas: u32) -> Item {
    let names: BTreeSet<&str> = r.vms.iter().map(|v| v.name.as_str()).collect();
    let mut bad = Vec::new();
    for w in 0..replicas {
        let recorded: BTreeSet<&str> = r
            .claims
            .values()
            .filter(|c| index_of(c) == Some(w))
            .filter_map(|c| {
                c.annotations()
                    .get(ATTACHED_VM_ANNOTATION)
                    .map(String::as_str)
            })
            .collect();
        match recorded.iter().next() {
            Some(vm) if recorded.len() == 1 && names.contains(vm) => {}
            _ => bad.push(format!("worker {w}: {recorded:?}")),
        }
    }
    item(
        "worker.find-vm",
        bad.is_empty(),
        if bad.is_empty() {
            format!("each of the {replicas} workers' claims name one existing VM")
        } else {
            format!("claims not naming one existing VM: {}", bad.join("; "))
        },
    )
}

/// `it`, saying which claims were not read as the tenant's because an earlier pxfa
/// labelled them with its name alone: the checks count them missing until the
/// next `pxfa apply` of the tenant adds `pxfa.io/tenant-namespace` to its claims.
fn with_unlabelled(mut it: Item, r: &Read) -> Item {
    if !r.unlabelled.is_empty() {
        it.state.push_str(&format!(
            "; not read as this tenant's: {} (labelled by an earlier pxfa without pxfa.io/tenant-namespace; \
             pxfa apply labels this tenant's)",
            r.unlabelled.join(", ")
        ));
    }
    it
}

fn request(body: &serde_json::Value) -> Option<String> {
    body.pointer("/spec/resources/requests/storage")?
        .as_str()
        .map(str::to_string)
}

/// Two quantities are the same size. Compared as sizes, not text: the API server
/// stores a request in its canonical form (`4096Gi` comes back as `4Ti`). Text that
/// is not a size is compared as text.
fn same_size(have: Option<&str>, want: Option<&str>) -> bool {
    let size = |q: Option<&str>| q.and_then(|q| q.parse::<flasharray::Size>().ok());
    match (size(have), size(want)) {
        (Some(h), Some(w)) => h == w,
        _ => have == want,
    }
}

/// `grow.apply`: each data claim asks the size pxfa renders for it.
fn grow(r: &Read, manifests: &[Manifest]) -> Item {
    let mut off = Vec::new();
    for m in manifests.iter().filter(|m| {
        m.cluster == Cluster::Management
            && m.form == Form::Resource
            && m.kind == "PersistentVolumeClaim"
            && m.name.contains("-data")
    }) {
        let want = request(&m.body);
        let have = r.claims.get(&m.name).and_then(|c| {
            c.spec
                .as_ref()?
                .resources
                .as_ref()?
                .requests
                .as_ref()?
                .get("storage")
                .map(|q| q.0.clone())
        });
        if !same_size(have.as_deref(), want.as_deref()) {
            off.push(format!(
                "{}: {} (planned {})",
                m.name,
                have.as_deref().unwrap_or("missing"),
                want.as_deref().unwrap_or("?")
            ));
        }
    }
    item(
        "grow.apply",
        off.is_empty(),
        if off.is_empty() {
            "every data claim asks the planned drive size".into()
        } else {
            off.join("; ")
        },
    )
}

/// Cloud-drive: the NodePool's size after a scale-in, the StorageNodes against
/// the NodePool's VMs (a removed node gone from the Portworx cluster), the nodes
/// Online, and the tenant StorageCluster's delete strategy.
async fn cloud_drive(
    spec: &TenantStorage,
    management: &Client,
    tenant: Option<&Client>,
) -> Result<Vec<Item>> {
    let replicas = spec.spec.hosted_cluster.replicas;
    let vms = discover_vms(management, &spec.hcp_namespace(), &spec.node_pool()).await?;
    let mut items = vec![nodepool_size("nodepool.mark-node-machine", &vms, replicas)];
    let Some(t) = tenant else {
        return Ok(items);
    };
    let nodes = storage_nodes(t, &spec.spec.portworx.namespace).await?;
    items.push(nodes_are_vms(&nodes, &vms, replicas));
    items.push(joined(&nodes, replicas));
    items.push(delete_strategy(t, spec).await?);
    Ok(items)
}

/// Kubevirt-csi (no Portworx in the tenant): the NodePool's size after a
/// scale-out, a scale-in or a replaced VM, and the infra PVs after a delete.
async fn kubevirt_csi(spec: &TenantStorage, management: &Client) -> Result<Vec<Item>> {
    let replicas = spec.spec.hosted_cluster.replicas;
    let vms = discover_vms(management, &spec.hcp_namespace(), &spec.node_pool()).await?;
    let mut items: Vec<Item> = [
        "csi.scale-out",
        "nodepool.mark-node-machine",
        "csi.delete-machine",
    ]
    .iter()
    .map(|id| nodepool_size(id, &vms, replicas))
    .collect();
    items.extend(no_released_pvs(management, spec, &["delete.csi-pvs"]).await?);
    Ok(items)
}

/// The NodePool has as many VMs as the spec's replicas (no worker index to check
/// outside direct-access).
fn nodepool_size(id: &str, vms: &[VmInfo], replicas: u32) -> Item {
    item(
        id,
        vms.len() == replicas as usize,
        format!(
            "{} VM(s) in the NodePool; the spec has {replicas}",
            vms.len()
        ),
    )
}

/// `cloud.cluster-delete`: every StorageNode is a VM of the NodePool (a tenant
/// node carries its VM's name [M]) and there are no more than the workers: a
/// removed node still listed was not deleted from the Portworx cluster.
fn nodes_are_vms(nodes: &[(String, bool)], vms: &[VmInfo], replicas: u32) -> Item {
    let names: BTreeSet<&str> = vms.iter().map(|v| v.name.as_str()).collect();
    let strangers: Vec<&str> = nodes
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| !names.contains(n))
        .collect();
    let ok = strangers.is_empty() && nodes.len() <= replicas as usize;
    let state = if ok {
        format!(
            "{} StorageNode(s), each a VM of the NodePool; {replicas} workers",
            nodes.len()
        )
    } else if strangers.is_empty() {
        format!("{} StorageNode(s) for {replicas} workers", nodes.len())
    } else {
        format!(
            "StorageNodes that are no VM of the NodePool (still in the Portworx cluster): {}",
            strangers.join(", ")
        )
    };
    item("cloud.cluster-delete", ok, state)
}

/// The delete strategy the Portworx operator reads
/// (<https://docs.portworx.com/portworx-enterprise/reference/crd/storage-cluster>):
/// with `UninstallAndDelete` it deletes the cloud drives with the StorageCluster.
const UNINSTALL_AND_DELETE: &str = "UninstallAndDelete";

/// `delete.delete-strategy`: the tenant StorageCluster is never deleted without
/// `UninstallAndDelete` (its drives and hosts would stay on the array). Before a
/// delete any strategy is fine and the state says what to set; a StorageCluster
/// already gone is done.
async fn delete_strategy(tenant: &Client, spec: &TenantStorage) -> Result<Item> {
    let ns = &spec.spec.portworx.namespace;
    let name = spec.portworx_cluster_name();
    let api: Api<DynamicObject> =
        Api::namespaced_with(tenant.clone(), ns, &STORAGE_CLUSTER.resource());
    let stc = api
        .get_opt(&name)
        .await
        .map_err(|e| Error::kube(format!("cannot read StorageCluster {ns}/{name}"), e))?;
    let id = "delete.delete-strategy";
    let Some(stc) = stc else {
        return Ok(item(
            id,
            true,
            format!("StorageCluster {ns}/{name} is gone"),
        ));
    };
    let strategy = stc
        .data
        .pointer("/spec/deleteStrategy/type")
        .and_then(|v| v.as_str());
    let safe = strategy == Some(UNINSTALL_AND_DELETE);
    let deleting = stc.metadata.deletion_timestamp.is_some();
    let shown = strategy.unwrap_or("not set (Uninstall)");
    Ok(match (safe, deleting) {
        (true, _) => item(
            id,
            true,
            format!(
                "deleteStrategy {UNINSTALL_AND_DELETE}: the operator deletes the drives with the StorageCluster"
            ),
        ),
        (false, false) => item(
            id,
            true,
            format!(
                "deleteStrategy {shown}: set {UNINSTALL_AND_DELETE} before deleting the tenant (pxfa runbook delete)"
            ),
        ),
        (false, true) => item(
            id,
            false,
            format!(
                "StorageCluster {ns}/{name} is being deleted with deleteStrategy {shown}: its FlashArray drives and hosts stay behind (pxfa orphans finds them)"
            ),
        ),
    })
}

/// The Released PVs whose claim was in `ns`.
async fn released_pvs(management: &Client, ns: &str) -> Result<Vec<String>> {
    let api: Api<PersistentVolume> = Api::all(management.clone());
    let list = list_all(&api, &ListParams::default())
        .await
        .map_err(|e| Error::kube("cannot list PersistentVolumes", e))?;
    Ok(list
        .items
        .into_iter()
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Released"))
        .filter(|p| {
            p.spec
                .as_ref()
                .and_then(|s| s.claim_ref.as_ref())
                .and_then(|c| c.namespace.as_deref())
                == Some(ns)
        })
        .map(|p| p.name_any())
        .collect())
}

/// The decommission steps: the VMs recorded on the claims of removed indexes
/// (at or past `replicas`) are not StorageNodes any more (a tenant node carries
/// its VM's name [M]).
fn removed_nodes_gone(r: &Read, nodes: &[(String, bool)], replicas: u32) -> (bool, String) {
    let removed: BTreeSet<&str> = r
        .claims
        .values()
        .filter(|c| index_of(c).is_some_and(|i| i >= replicas))
        .filter_map(|c| {
            c.annotations()
                .get(ATTACHED_VM_ANNOTATION)
                .map(String::as_str)
        })
        .collect();
    let still: Vec<&str> = nodes
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| removed.contains(n))
        .collect();
    if still.is_empty() {
        (
            true,
            format!("no removed worker's VM among the StorageNodes (removed: {removed:?})"),
        )
    } else {
        (false, format!("still StorageNodes: {}", still.join(", ")))
    }
}

/// `node.joined`: a StorageNode per worker, Online.
fn joined(nodes: &[(String, bool)], replicas: u32) -> Item {
    let online = nodes.iter().filter(|(_, ok)| *ok).count();
    item(
        "node.joined",
        online >= replicas as usize,
        format!(
            "{online} of {} StorageNode(s) Online; {replicas} workers",
            nodes.len()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_check_is_built_and_verifiable() {
        let built = [
            "nodepool.scale-in",
            "worker.find-vm",
            "grow.apply",
            "release.pvs",
            "delete.released-pvs",
            "decommission.cluster-delete",
            "decommission.offline-cluster-delete",
            "node.joined",
            "nodepool.mark-node-machine",
            "cloud.cluster-delete",
            "delete.delete-strategy",
            "csi.scale-out",
            "csi.delete-machine",
            "delete.csi-pvs",
        ];
        let by_layers: Vec<&str> = BY_LAYERS.iter().map(|(id, _)| *id).collect();
        let all: BTreeSet<&str> = built.iter().chain(&by_layers).copied().collect();
        let listed: BTreeSet<&str> = px_topology::runbook::STATUS_CHECKS
            .iter()
            .copied()
            .collect();
        assert_eq!(all, listed);
        for id in listed {
            assert!(verifiable(id).is_some(), "{id}");
        }
    }

    #[test]
    fn a_claim_size_is_compared_as_a_size() {
        // A real API server returns the 4096Gi pxfa rendered as 4Ti.
        assert!(same_size(Some("4Ti"), Some("4096Gi")));
        assert!(!same_size(Some("1Gi"), Some("4096Gi")));
        // Decimal and binary units differ, as in Kubernetes.
        assert!(!same_size(Some("4T"), Some("4Ti")));
        assert!(!same_size(None, Some("4096Gi")));
        assert!(same_size(Some("odd"), Some("odd")));
    }

    #[test]
    fn scale_in_wants_exactly_the_indexes() {
        let vm = |i: Option<u32>| VmInfo {
            name: format!("vm-{i:?}"),
            created: String::new(),
            index: i,
            claims: BTreeMap::new(),
        };
        assert!(scale_in(&[vm(Some(0)), vm(Some(1)), vm(Some(2))], 3).ok);
        assert!(!scale_in(&[vm(Some(0)), vm(Some(1)), vm(Some(2)), vm(Some(3))], 3).ok);
        assert!(!scale_in(&[vm(Some(0)), vm(Some(1)), vm(None)], 3).ok);
    }
}
