//! The management cluster's side of `pxfa orphans`: one read of what the orphan
//! rules need (claims, PVs, VMs, KubeVirt's hotplug attachment and virt-launcher
//! pods, HyperShift's HostedClusters), the deletes of a cleanup, and the TenantStorage objects that say which
//! tenants exist. The rules are px-topology's ([`px_topology::orphans`]); this
//! module only reads and deletes.
//!
//! KubeVirt labels a hotplug attachment pod `kubevirt.io: hotplug-disk` and makes
//! it owned by the VM's virt-launcher pod (`kubevirt.io: virt-launcher`), so an
//! attachment pod whose owner is gone belongs to no running VM
//! (kubevirt/kubevirt `pkg/virt-controller/services/template.go` \[M\];
//! kubevirt/csi-driver#182 and #183 report such leftovers). A VM disk is removed
//! with the VM's `removevolume` subresource, what `virtctl removevolume --persist`
//! calls (<https://kubevirt.io/user-guide/storage/hotplug_volumes/>).

use std::collections::BTreeSet;

use crate::bounds::{list_all, list_all_metadata};
use async_trait::async_trait;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, Pod};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams};
use kube::{Client, ResourceExt};
use px_topology::orphans::{
    ClaimFact, ClusterFacts, ClusterReader, ClusterTarget, HostedClusterFact, HotplugPodFact,
    PvFact, TenantObjectFact, TenantRef, VmDiskFact, VmFact,
};
use serde_json::{Value, json};

use crate::WORKER_INDEX_ANNOTATION;
use crate::discovery::status_code;
use crate::kinds::{HOSTED_CLUSTER, Kind, VIRTUAL_MACHINE};

/// The label KubeVirt puts on its pods: `hotplug-disk` or `virt-launcher`.
const KUBEVIRT_APP_LABEL: &str = "kubevirt.io";

/// Reads and cleans the management cluster a client reaches.
#[derive(Clone)]
pub struct ClusterOrphans {
    client: Client,
}

impl std::fmt::Debug for ClusterOrphans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClusterOrphans")
    }
}

impl ClusterOrphans {
    /// Over the management cluster `client` reaches.
    pub fn new(client: Client) -> Self {
        ClusterOrphans { client }
    }
}

fn err(what: &str, e: &kube::Error) -> String {
    format!("cannot {what}: {e}")
}

/// A list that is empty when the kind is not served (no KubeVirt).
async fn list_or_none<K>(api: Api<K>, lp: &ListParams, what: &str) -> Result<Vec<K>, String>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match list_all(&api, lp).await {
        Ok(l) => Ok(l.items),
        Err(e) if status_code(&e) == Some(404) => Ok(Vec::new()),
        Err(e) => Err(err(what, &e)),
    }
}

/// The kinds of a tenant's other leftovers ([`TENANT_OBJECT_KINDS`]), as listed and
/// deleted.
const TENANT_OBJECT_RESOURCES: [Kind; 4] = [
    Kind {
        group: "metallb.io",
        version: "v1beta1",
        kind: "IPAddressPool",
        plural: "ipaddresspools",
    },
    Kind {
        group: "metallb.io",
        version: "v1beta1",
        kind: "L2Advertisement",
        plural: "l2advertisements",
    },
    Kind {
        group: "",
        version: "v1",
        kind: "Secret",
        plural: "secrets",
    },
    Kind {
        group: "",
        version: "v1",
        kind: "ConfigMap",
        plural: "configmaps",
    },
];

fn tenant_object_kind(kind: &str) -> Option<&'static Kind> {
    TENANT_OBJECT_RESOURCES.iter().find(|k| k.kind == kind)
}

/// The objects of [`TENANT_OBJECT_RESOURCES`] labelled `managed-by: pxfa`, by
/// metadata only: a Secret's data is dropped as it is read, never kept. A kind not
/// served (no MetalLB) has none.
async fn tenant_objects(c: &Client) -> Result<(Vec<TenantObjectFact>, Option<String>), String> {
    let lp = ListParams::default().labels("app.kubernetes.io/managed-by=pxfa");
    let mut out = Vec::new();
    let mut forbidden = Vec::new();
    for k in &TENANT_OBJECT_RESOURCES {
        // Metadata only: the Secrets' data (pull secret, SSH key) is never read.
        let api = Api::<DynamicObject>::all_with(c.clone(), &k.resource());
        let items = match list_all_metadata(&api, &lp).await {
            Ok(l) => l.items,
            Err(e) if status_code(&e) == Some(404) => Vec::new(),
            // A reader without `list` on the kind (the controller's role, for
            // Secrets and ConfigMaps) leaves the kind unchecked, not the whole scan.
            Err(e) if status_code(&e) == Some(403) => {
                forbidden.push(format!("{}s", k.kind));
                Vec::new()
            }
            Err(e) => return Err(err(&format!("list {}s", k.kind), &e)),
        };
        out.extend(items.into_iter().map(|o| TenantObjectFact {
            kind: k.kind.to_string(),
            namespace: o.namespace().unwrap_or_default(),
            name: o.name_any(),
            labels: o.labels().clone(),
        }));
    }
    let unread = (!forbidden.is_empty()).then(|| {
        format!(
            "listing {} is forbidden to this user (list on them, cluster-wide: docs/cli.md#orphans)",
            forbidden.join(", ")
        )
    });
    Ok((out, unread))
}

fn claim_fact(c: PersistentVolumeClaim) -> ClaimFact {
    ClaimFact {
        namespace: c.namespace().unwrap_or_default(),
        name: c.name_any(),
        labels: c.labels().clone(),
        phase: c.status.as_ref().and_then(|s| s.phase.clone()),
        volume_name: c.spec.as_ref().and_then(|s| s.volume_name.clone()),
    }
}

fn pv_fact(p: PersistentVolume) -> PvFact {
    let claim = p.spec.as_ref().and_then(|s| s.claim_ref.as_ref()).map(|r| {
        format!(
            "{}/{}",
            r.namespace.clone().unwrap_or_default(),
            r.name.clone().unwrap_or_default()
        )
    });
    PvFact {
        name: p.name_any(),
        phase: p.status.as_ref().and_then(|s| s.phase.clone()),
        claim,
    }
}

fn vm_fact(vm: &DynamicObject) -> VmFact {
    let disks = crate::vms::claim_volumes(&vm.data)
        .into_iter()
        .map(|v| VmDiskFact {
            volume: v.name,
            serial: v.serial,
            claim: v.claim,
        })
        .collect();
    VmFact {
        namespace: vm.namespace().unwrap_or_default(),
        name: vm.name_any(),
        worker_index: vm.annotations().get(WORKER_INDEX_ANNOTATION).cloned(),
        disks,
    }
}

/// A HostedCluster: made when its `Available` condition is `True`, going when it
/// has a deletion timestamp.
fn hosted_cluster_fact(hc: &DynamicObject) -> HostedClusterFact {
    let available = hc.data["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Available" && c["status"] == "True");
    HostedClusterFact {
        namespace: hc.namespace().unwrap_or_default(),
        name: hc.name_any(),
        available,
        deleting: hc.metadata.deletion_timestamp.is_some(),
    }
}

fn hotplug_fact(p: &Pod) -> HotplugPodFact {
    let owner_pod = p
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.kind == "Pod")
        .map(|o| o.name.clone());
    let claims = p
        .spec
        .iter()
        .flat_map(|s| s.volumes.iter().flatten())
        .filter_map(|v| v.persistent_volume_claim.as_ref())
        .map(|c| c.claim_name.clone())
        .collect();
    HotplugPodFact {
        namespace: p.namespace().unwrap_or_default(),
        name: p.name_any(),
        owner_pod,
        claims,
    }
}

#[async_trait]
impl ClusterReader for ClusterOrphans {
    async fn facts(&self) -> Result<ClusterFacts, String> {
        let c = &self.client;
        let all = ListParams::default();
        let by_app =
            |app: &str| ListParams::default().labels(&format!("{KUBEVIRT_APP_LABEL}={app}"));
        let claims: Vec<PersistentVolumeClaim> = list_all(&Api::all(c.clone()), &all)
            .await
            .map_err(|e| err("list PersistentVolumeClaims", &e))?
            .items;
        let pvs: Vec<PersistentVolume> = list_all(&Api::all(c.clone()), &all)
            .await
            .map_err(|e| err("list PersistentVolumes", &e))?
            .items;
        let vms = list_or_none(
            Api::<DynamicObject>::all_with(c.clone(), &VIRTUAL_MACHINE.resource()),
            &all,
            "list VirtualMachines",
        )
        .await?;
        let hotplug = list_or_none(
            Api::<Pod>::all(c.clone()),
            &by_app("hotplug-disk"),
            "list hotplug attachment pods",
        )
        .await?;
        let launchers = list_or_none(
            Api::<Pod>::all(c.clone()),
            &by_app("virt-launcher"),
            "list virt-launcher pods",
        )
        .await?;
        // No HyperShift (the kind not served) means no HostedCluster exists.
        let hosted = list_or_none(
            Api::<DynamicObject>::all_with(c.clone(), &HOSTED_CLUSTER.resource()),
            &all,
            "list HostedClusters",
        )
        .await?;
        let (tenant_objects, tenant_objects_unread) = tenant_objects(c).await?;
        Ok(ClusterFacts {
            claims: claims.into_iter().map(claim_fact).collect(),
            pvs: pvs.into_iter().map(pv_fact).collect(),
            vms: vms.iter().map(vm_fact).collect(),
            hotplug_pods: hotplug.iter().map(hotplug_fact).collect(),
            launcher_pods: launchers
                .iter()
                .map(|p| format!("{}/{}", p.namespace().unwrap_or_default(), p.name_any()))
                .collect::<BTreeSet<_>>(),
            hosted_clusters: hosted.iter().map(hosted_cluster_fact).collect(),
            tenant_objects,
            tenant_objects_unread,
        })
    }

    async fn remove(&self, target: &ClusterTarget) -> Result<(), String> {
        let c = self.client.clone();
        let dp = DeleteParams::default();
        let gone = |r: Result<(), kube::Error>, what: String| match r {
            Ok(()) => Ok(()),
            Err(e) if status_code(&e) == Some(404) => Ok(()),
            Err(e) => Err(err(&what, &e)),
        };
        match target {
            ClusterTarget::PersistentVolume { name } => {
                let r = Api::<PersistentVolume>::all(c).delete(name, &dp).await;
                gone(r.map(|_| ()), format!("delete PersistentVolume {name}"))
            }
            ClusterTarget::PersistentVolumeClaim { namespace, name } => {
                let r = Api::<PersistentVolumeClaim>::namespaced(c, namespace)
                    .delete(name, &dp)
                    .await;
                gone(
                    r.map(|_| ()),
                    format!("delete PersistentVolumeClaim {namespace}/{name}"),
                )
            }
            ClusterTarget::Pod { namespace, name } => {
                let r = Api::<Pod>::namespaced(c, namespace).delete(name, &dp).await;
                gone(r.map(|_| ()), format!("delete Pod {namespace}/{name}"))
            }
            ClusterTarget::Object {
                object_kind,
                namespace,
                name,
            } => {
                let what = format!("delete {object_kind} {namespace}/{name}");
                let Some(k) = tenant_object_kind(object_kind) else {
                    return Err(format!("cannot {what}: not a kind pxfa cleans up"));
                };
                let r = Api::<DynamicObject>::namespaced_with(c, namespace, &k.resource())
                    .delete(name, &dp)
                    .await;
                gone(r.map(|_| ()), what)
            }
            ClusterTarget::VmDisk {
                namespace,
                vm,
                volume,
            } => {
                let r = remove_volume(&c, namespace, vm, volume).await;
                gone(
                    r,
                    format!("remove disk {volume} from VirtualMachine {namespace}/{vm}"),
                )
            }
        }
    }
}

/// The `removevolume` request body.
fn remove_volume_body(volume: &str) -> Value {
    json!({ "name": volume })
}

async fn remove_volume(
    client: &Client,
    namespace: &str,
    vm: &str,
    volume: &str,
) -> Result<(), kube::Error> {
    let uri = format!(
        "/apis/subresources.kubevirt.io/v1/namespaces/{namespace}/virtualmachines/{vm}/removevolume"
    );
    let req = http::Request::put(uri)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(remove_volume_body(volume).to_string().into_bytes())
        .map_err(kube::Error::HttpError)?;
    client.request_text(req).await.map(|_| ())
}

/// The TenantStorage resource (`pxfa.io/v1alpha1`, `tenantstorages`).
pub(crate) fn tenant_storage_resource() -> ApiResource {
    use px_topology::crd::{GROUP, PLURAL, VERSION};
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(GROUP, VERSION, px_topology::spec::KIND),
        PLURAL,
    )
}

/// The identity of a TenantStorage object: its namespace and name.
pub fn tenant_storage_id(obj: &DynamicObject) -> TenantRef {
    TenantRef::new(obj.namespace().as_deref(), &obj.name_any())
}

/// Every TenantStorage object on the cluster (every namespace): the tenants that
/// exist. An empty list when the CRD is not installed.
pub async fn tenant_storages(client: &Client) -> crate::Result<Vec<DynamicObject>> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &tenant_storage_resource());
    match list_all(&api, &ListParams::default()).await {
        Ok(l) => Ok(l.items),
        Err(e) if status_code(&e) == Some(404) => Ok(Vec::new()),
        Err(e) => Err(crate::Error::kube("cannot list TenantStorage objects", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use px_topology::orphans::TENANT_OBJECT_KINDS;

    #[test]
    fn a_hosted_cluster_is_made_when_available_and_going_when_deleted() {
        let hc = |status: &str, deleting: bool| -> DynamicObject {
            let mut meta = json!({"name": "blue", "namespace": "clusters"});
            if deleting {
                meta["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
            }
            serde_json::from_value(json!({
                "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
                "metadata": meta,
                "status": {"conditions": [
                    {"type": "Degraded", "status": "True"},
                    {"type": "Available", "status": status}]}
            }))
            .unwrap()
        };
        let made = hosted_cluster_fact(&hc("True", false));
        assert!(made.available && !made.deleting && made.settled());
        assert_eq!(made.hcp_namespace(), "clusters-blue");
        assert!(!hosted_cluster_fact(&hc("False", false)).settled());
        assert!(!hosted_cluster_fact(&hc("True", true)).settled());
    }

    #[test]
    fn every_tenant_object_kind_is_listed_and_deleted() {
        for k in TENANT_OBJECT_KINDS {
            assert_eq!(tenant_object_kind(k).map(|r| r.kind), Some(k));
        }
        assert_eq!(TENANT_OBJECT_RESOURCES.len(), TENANT_OBJECT_KINDS.len());
    }

    #[test]
    fn remove_volume_names_the_disk() {
        assert_eq!(remove_volume_body("pxdata0"), json!({"name": "pxdata0"}));
    }

    #[test]
    fn a_vm_lists_its_claim_disks_and_pxfas_index() {
        // pxdata0 as pxfa's patch names it; pxmeta as `virtctl addvolume --persist`
        // does: disk and volume named after the claim, the serial set by --serial.
        let vm: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": "w-0", "namespace": "ns", "annotations": {"pxfa.io/worker-index": "0"}},
            "spec": {"template": {"spec": {
                "domain": {"devices": {"disks": [
                    {"name": "pxdata0", "serial": "pxdata0", "disk": {"bus": "scsi"}},
                    {"name": "t-w00-meta", "serial": "pxmeta", "disk": {"bus": "scsi"}}]}},
                "volumes": [
                    {"name": "rootdisk", "dataVolume": {"name": "root"}},
                    {"name": "pxdata0", "persistentVolumeClaim": {"claimName": "t-w00-data0"}},
                    {"name": "t-w00-meta", "persistentVolumeClaim": {"claimName": "t-w00-meta"}}]}}}
        }))
        .unwrap();
        let f = vm_fact(&vm);
        assert_eq!(f.worker_index.as_deref(), Some("0"));
        assert_eq!(
            f.disks,
            vec![
                VmDiskFact {
                    volume: "pxdata0".into(),
                    serial: "pxdata0".into(),
                    claim: "t-w00-data0".into()
                },
                VmDiskFact {
                    volume: "t-w00-meta".into(),
                    serial: "pxmeta".into(),
                    claim: "t-w00-meta".into()
                }
            ]
        );
    }
}
