//! What a scan read, and nothing it decides: the array's pxfa objects (`Seen`,
//! read once by `array`, with the realms of gone tenants' pods) and the management
//! cluster's objects (`ClusterFacts`, read by px-cluster). The rules (`array`,
//! `cluster`, `realm`) and the evidence (`evidence`) all read it, so it imports none
//! of them.

use std::collections::{BTreeMap, BTreeSet};

use flasharray::TagResource;
use flasharray::models::{Connection, Host, Pod, Volume};
use serde::Serialize;

use crate::desired::TenantId;
use crate::labels::{LabelledTenant, labelled_tenant};
use crate::plan::{Owner, TagIndex, marked_tenant, owner};

/// The array's eradication settings: pxfa never eradicates, and says how long
/// destroyed objects stay.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SafeMode {
    /// True when SafeMode disables manual eradication (all or part).
    pub enabled: bool,
    /// The array's eradication delay, ms, when it says.
    pub eradication_delay_ms: Option<u64>,
}

/// What the array holds of pxfa's, read once.
#[derive(Debug, Default)]
pub(super) struct Seen {
    pub(super) tags: TagIndex,
    pub(super) volumes: BTreeMap<String, Volume>,
    pub(super) pods: BTreeMap<String, Pod>,
    pub(super) hosts: Vec<Host>,
    pub(super) connections: Vec<Connection>,
    /// The realms gone tenants' pods live in.
    pub(super) realms: Vec<RealmSeen>,
    pub(super) safe_mode: SafeMode,
}

/// The names of `kind` pxfa made, with the tenant their tags name (`namespace/name`;
/// `None`: a shared object, named as the index keys it). Tenant objects come
/// through the ownership rule's `owned_by`, spelled as the array spells them. An
/// object an earlier pxfa tagged without a namespace is left out: it is no
/// tenant's until claimed, so never an orphan.
pub(super) fn marked(tags: &TagIndex, kind: TagResource) -> Vec<(String, Option<String>)> {
    let mut tenants = BTreeSet::new();
    let mut out = Vec::new();
    for (key, t) in tags.of(kind) {
        if let Some(id) = marked_tenant(t).and_then(|m| m.id()) {
            tenants.insert(id);
        } else if owner(Some(t), &TenantId::default()) == Owner::Shared {
            out.push((key.clone(), None));
        }
    }
    for t in tenants {
        out.extend(
            tags.owned_by(kind, &t)
                .into_iter()
                .map(|n| (n, Some(t.to_string()))),
        );
    }
    out
}

/// A realm a gone tenant's pod lives in, as read.
#[derive(Debug, Clone, Default)]
pub(super) struct RealmSeen {
    pub(super) name: String,
    pub(super) destroyed: bool,
    pub(super) time_remaining: Option<u64>,
    /// Every pod in it (`realm::pod`), destroyed ones included.
    pub(super) pods: Vec<String>,
    /// Access policies with a rule inside it.
    pub(super) policies: Vec<String>,
}

/// A drive volume pxfa tagged, as the cluster rules link PVs and claims to it.
#[derive(Debug, Clone)]
pub(super) struct TaggedDrive {
    /// The volume, as the array spells it.
    pub(super) name: String,
    /// The tenant its tags name, `namespace/name`.
    pub(super) tenant: String,
    /// Not destroyed.
    pub(super) live: bool,
    /// Its `claim` tag (`namespace/name`), for dynamic drives.
    pub(super) claim: Option<String>,
}

impl TaggedDrive {
    /// Whether the PV `pv` (bound to `claim`, `namespace/name`) is this volume: the
    /// claim tag, the FADA volume name of the PV, or import's claim named like the
    /// volume.
    pub(super) fn backs(&self, pv: Option<&str>, claim: Option<&str>) -> bool {
        let (pod, short) = match self.name.split_once("::") {
            Some((p, s)) => (Some(p), s),
            None => (None, self.name.as_str()),
        };
        let claim_name = claim.and_then(|c| c.split_once('/')).map(|(_, n)| n);
        (claim.is_some() && self.claim.as_deref() == claim)
            || pv.is_some_and(|pv| crate::plan::is_fada_volume_for(&self.name, pod, pv))
            || claim_name.is_some_and(|n| n.eq_ignore_ascii_case(short))
    }
}

/// Every volume tagged for a tenant, destroyed ones included (their tags stay until
/// eradication).
pub(super) fn tagged_drives(seen: &Seen) -> Vec<TaggedDrive> {
    marked(&seen.tags, TagResource::Volume)
        .into_iter()
        .filter_map(|(name, tenant)| {
            let tenant = tenant?;
            let live = seen
                .volumes
                .get(&name.to_ascii_lowercase())
                .is_some_and(|v| !v.destroyed);
            let claim = seen.tags.claim_of(&name).map(str::to_string);
            Some(TaggedDrive {
                name,
                tenant,
                live,
                claim,
            })
        })
        .collect()
}

/// A PersistentVolumeClaim.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ClaimFact {
    /// The claim's namespace (a hosted control plane namespace for pxfa's claims).
    pub namespace: String,
    /// The claim's name within it.
    pub name: String,
    /// Its labels, where pxfa's `pxfa.io/tenant` and `pxfa.io/tenant-namespace`
    /// marks are read (`crate::labels`).
    pub labels: BTreeMap<String, String>,
    /// `status.phase`.
    pub phase: Option<String>,
    /// `spec.volumeName`: the PV it is bound to.
    pub volume_name: Option<String>,
}

impl ClaimFact {
    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// The tenant pxfa's labels name, when pxfa labelled it.
    pub(super) fn pxfa_tenant(&self) -> Option<LabelledTenant> {
        labelled_tenant(&self.labels)
    }
}

/// A PersistentVolume.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PvFact {
    /// The PV's name (cluster-scoped).
    pub name: String,
    /// `status.phase`.
    pub phase: Option<String>,
    /// `spec.claimRef` as `namespace/name`.
    pub claim: Option<String>,
}

/// A disk of a VM backed by a claim.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct VmDiskFact {
    /// The volume name in the VM (what `removevolume` takes).
    pub volume: String,
    /// The serial of its disk (what names `/dev/disk/by-id` in the guest and marks
    /// pxfa's disks, `pxdata<N>`/`pxmeta`); the volume name when the disk has none.
    /// Not the disk name: `virtctl addvolume --persist` names the disk after the claim.
    pub serial: String,
    /// The claim it names.
    pub claim: String,
}

/// A KubeVirt VirtualMachine.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct VmFact {
    /// The VM's namespace (the hosted control plane namespace of its cluster).
    pub namespace: String,
    /// The VM's name within it.
    pub name: String,
    /// The worker index pxfa recorded on it, when it did.
    pub worker_index: Option<String>,
    /// Its claim-backed volumes.
    pub disks: Vec<VmDiskFact>,
}

/// A KubeVirt hotplug attachment pod (`kubevirt.io: hotplug-disk`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HotplugPodFact {
    /// The pod's namespace (that of the VM it serves).
    pub namespace: String,
    /// The pod's name within it.
    pub name: String,
    /// The virt-launcher pod that owns it.
    pub owner_pod: Option<String>,
    /// The claims it mounts.
    pub claims: Vec<String>,
}

/// An object pxfa rendered for one tenant that the HostedCluster's deletion leaves
/// behind: a MetalLB `IPAddressPool` or `L2Advertisement` (`metallb-system`), a
/// `Secret` (pull secret, SSH key) or a `ConfigMap` (the NodePool's MachineConfig) in
/// the HostedCluster's namespace. Read by pxfa's labels.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TenantObjectFact {
    /// `IPAddressPool`, `L2Advertisement`, `Secret` or `ConfigMap`.
    pub kind: String,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its labels, where pxfa's `pxfa.io/tenant` and `pxfa.io/tenant-namespace`
    /// marks are read (`crate::labels`).
    pub labels: BTreeMap<String, String>,
}

impl TenantObjectFact {
    /// The tenant pxfa's labels name, when pxfa labelled it.
    pub(super) fn pxfa_tenant(&self) -> Option<LabelledTenant> {
        labelled_tenant(&self.labels)
    }
}

/// The kinds of [`TenantObjectFact`], as px-cluster lists them.
pub const TENANT_OBJECT_KINDS: [&str; 4] =
    ["IPAddressPool", "L2Advertisement", "Secret", "ConfigMap"];

/// A HyperShift HostedCluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HostedClusterFact {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its `Available` condition is `True`: the hosted cluster is made.
    pub available: bool,
    /// It has a deletion timestamp: it is being deleted.
    pub deleting: bool,
}

impl HostedClusterFact {
    /// Its hosted control plane namespace, `<namespace>-<name>`, where its worker
    /// VMs and drive claims live.
    pub fn hcp_namespace(&self) -> String {
        format!("{}-{}", self.namespace, self.name)
    }

    /// Whether it is made and stays: available and not being deleted. A drive of a
    /// tenant whose HostedCluster is anything else may be waiting for claims that
    /// the cluster's making will bring back.
    pub fn settled(&self) -> bool {
        self.available && !self.deleting
    }
}

/// What px-cluster read of the management cluster, once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ClusterFacts {
    /// Every claim of the management cluster, in every namespace.
    pub claims: Vec<ClaimFact>,
    /// Every PV of the management cluster.
    pub pvs: Vec<PvFact>,
    /// Every KubeVirt VirtualMachine of the management cluster.
    pub vms: Vec<VmFact>,
    /// Every hotplug attachment pod.
    pub hotplug_pods: Vec<HotplugPodFact>,
    /// Every virt-launcher pod, as `namespace/name`.
    pub launcher_pods: BTreeSet<String>,
    /// Every HyperShift HostedCluster (none when HyperShift is not installed).
    pub hosted_clusters: Vec<HostedClusterFact>,
    /// The objects of [`TENANT_OBJECT_KINDS`] that carry pxfa's labels.
    pub tenant_objects: Vec<TenantObjectFact>,
    /// Why some of those kinds could not be listed (the reader may not list Secrets:
    /// the controller's shipped role does not); `tenant-object` is then not checked.
    pub tenant_objects_unread: Option<String>,
}
