//! The runbook steps `pxfa status` verifies once it reads the clusters
//! ([`px_topology::runbook::steps::STATUS_CHECKS`]): one [`Item`] per step, named by
//! its id, so that an operator following `pxfa runbook` sees whether the step took.
//! `doctor` can call [`runbook_checks`] as it is. Reads only.
//!
//! Some steps are verified by status's other layers already (claims Bound, drives
//! tagged, disks attached): [`BY_LAYERS`] says which layer, the rest are checked
//! here.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kube::api::{Api, DynamicObject, ListParams};
use kube::{Client, ResourceExt};
use px_topology::TenantStorage;
use px_topology::render::{Cluster, Form, Manifest};
use px_topology::runbook::steps::verifiable;
use px_topology::spec::StorageMode;

use crate::ATTACHED_VM_ANNOTATION;
use crate::discovery::status_code;
use crate::error::{Error, Result};
use crate::kinds::STORAGE_NODE;
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
];

/// The label pxfa puts on each drive claim: its worker index.
const NODE_INDEX_LABEL: &str = "pxfa.io/node-index";

/// What the checks read once.
struct Read {
    vms: Vec<VmInfo>,
    /// The tenant's drive claims (pxfa's labels), by name.
    claims: BTreeMap<String, PersistentVolumeClaim>,
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

/// The runbook steps' checks for the tenant of `spec`, rendered as `manifests`
/// (direct-access: the others keep no worker index pxfa could check). The node
/// checks need `tenant`; without it they are left out.
pub async fn runbook_checks(
    spec: &TenantStorage,
    manifests: &[Manifest],
    management: &Client,
    tenant: Option<&Client>,
) -> Result<Layer> {
    let mut layer = Layer {
        name: "runbook steps".into(),
        items: Vec::new(),
    };
    if spec.mode() != StorageMode::DirectAccess {
        return Ok(layer);
    }
    let r = read(spec, management, tenant).await?;
    let replicas = spec.spec.hosted_cluster.replicas;
    layer.items.push(scale_in(&r.vms, replicas));
    layer.items.push(find_vm(&r, replicas));
    layer.items.push(grow(&r, manifests));
    let released = released_pvs(management, &spec.hcp_namespace()).await?;
    for id in ["release.pvs", "delete.released-pvs"] {
        layer.items.push(item(
            id,
            released.is_empty(),
            if released.is_empty() {
                "no Released PV of the hosted control plane namespace".into()
            } else {
                format!("Released: {}", released.join(", "))
            },
        ));
    }
    if let Some(nodes) = &r.nodes {
        let (ok, state) = removed_nodes_gone(&r, nodes, replicas);
        for id in [
            "decommission.cluster-delete",
            "decommission.offline-cluster-delete",
        ] {
            layer.items.push(item(id, ok, state.clone()));
        }
        layer.items.push(joined(nodes, replicas));
    }
    Ok(layer)
}

async fn read(spec: &TenantStorage, management: &Client, tenant: Option<&Client>) -> Result<Read> {
    let ns = spec.hcp_namespace();
    let vms = discover_vms(management, &ns, &spec.node_pool()).await?;
    let api: Api<PersistentVolumeClaim> = Api::namespaced(management.clone(), &ns);
    let lp = ListParams::default().labels(&format!("pxfa.io/tenant={}", spec.tenant_name()));
    let claims = api
        .list(&lp)
        .await
        .map_err(|e| Error::kube(format!("cannot list the drive claims in {ns}"), e))?
        .items
        .into_iter()
        .filter(|c| c.labels().contains_key(NODE_INDEX_LABEL))
        .map(|c| (c.name_any(), c))
        .collect();
    let nodes = match tenant {
        Some(t) => Some(storage_nodes(t, &spec.spec.portworx.namespace).await?),
        None => None,
    };
    Ok(Read { vms, claims, nodes })
}

async fn storage_nodes(tenant: &Client, ns: &str) -> Result<Vec<(String, bool)>> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(tenant.clone(), ns, &STORAGE_NODE.resource());
    match api.list(&ListParams::default()).await {
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

fn request(body: &serde_json::Value) -> Option<String> {
    body.pointer("/spec/resources/requests/storage")?
        .as_str()
        .map(str::to_string)
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
        if have != want {
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

/// The Released PVs whose claim was in `ns`.
async fn released_pvs(management: &Client, ns: &str) -> Result<Vec<String>> {
    let api: Api<PersistentVolume> = Api::all(management.clone());
    let list = api
        .list(&ListParams::default())
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
        ];
        let by_layers: Vec<&str> = BY_LAYERS.iter().map(|(id, _)| *id).collect();
        let all: BTreeSet<&str> = built.iter().chain(&by_layers).copied().collect();
        let listed: BTreeSet<&str> = px_topology::runbook::steps::STATUS_CHECKS
            .iter()
            .copied()
            .collect();
        assert_eq!(all, listed);
        for id in listed {
            assert!(verifiable(id).is_some(), "{id}");
        }
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
