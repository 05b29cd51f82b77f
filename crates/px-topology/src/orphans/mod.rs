//! `pxfa orphans`: what pxfa made or manages that no tenant accounts for, across the
//! array and the management cluster, with the evidence for each, and its cleanup.
//!
//! The tenants that exist are given ([`Known`]: the specs, or the TenantStorage
//! objects), with what says whether a tenant missing from them is gone
//! ([`Evidence`]: the management cluster's TenantStorage objects and
//! HostedClusters, or the user's statement that the specs are every tenant); a
//! tenant neither given nor gone on evidence is *not accounted for*: listed with
//! its objects ([`Unaccounted`]), never cleaned up (`evidence`). Only what carries
//! pxfa's marks is ever listed: on the array the
//! `pxfa.io` ownership tags (read by the plan's one ownership rule,
//! `ownership`); on the cluster pxfa's labels and annotations, or
//! the link to a volume pxfa tagged. The kinds are [`OrphanKind`]; the array rules
//! are in `array`, the cluster rules in `cluster` (pure, over the [`ClusterFacts`]
//! px-cluster reads through the [`ClusterReader`] seam).
//!
//! A gone tenant's realm (realms carry no tags) is one when every pod in it is
//! tagged for that tenant (`realm`).
//!
//! [`scan`] only reads. [`cleanup`] soft-destroys array volumes, pods and a gone
//! tenant's realm (never eradicates: destroyed objects stay recoverable for the
//! eradication delay, longer under SafeMode), deletes hosts (they hold no data) after disconnecting them, and
//! deletes the Kubernetes leftovers. Destroyed objects pending eradication are no
//! orphans: they are listed apart, so a scan after a cleanup is empty.

mod array;
mod cluster;
mod evidence;
mod realm;
mod seen;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use async_trait::async_trait;
use flasharray::FlashArray;
use serde::Serialize;

use crate::Tenant;
pub use evidence::{Evidence, TenantRef, Unaccounted};
pub use seen::{
    ClaimFact, ClusterFacts, HostedClusterFact, HotplugPodFact, PvFact, SafeMode,
    TENANT_OBJECT_KINDS, TenantObjectFact, VmDiskFact, VmFact,
};

/// The document's `apiVersion`.
pub(crate) const API_VERSION: &str = "pxfa.io/v1alpha1";
/// The document's `kind`.
pub(crate) const KIND: &str = "Orphans";

/// What kind of leftover an orphan is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OrphanKind {
    /// An array object tagged for a tenant that is gone, on evidence.
    TenantGone,
    /// A drive volume of a tenant that no claim backs, past the grace period.
    UnboundDrive,
    /// A host pxfa created whose initiators no node has.
    HostWithoutNode,
    /// A connection of a pxfa volume to such a host (a node that is gone).
    ConnectionToGoneHost,
    /// A Released PV whose array volume or claim was pxfa's.
    ReleasedVolume,
    /// A claim labelled by pxfa that no tenant accounts for.
    LeftoverClaim,
    /// A disk pxfa attached to a worker VM whose claim is gone.
    VmDiskWithoutClaim,
    /// A KubeVirt hotplug attachment pod of pxfa's claims whose VM is gone.
    HotplugPodWithoutVm,
    /// An object pxfa rendered for a tenant that is gone, on evidence: its MetalLB
    /// pool and advertisement (still reserving the range), its pull-secret and
    /// SSH-key Secrets, its NodePool ConfigMap.
    TenantObject,
}

impl OrphanKind {
    /// Every kind, array kinds first.
    pub const ALL: [OrphanKind; 9] = [
        OrphanKind::TenantGone,
        OrphanKind::UnboundDrive,
        OrphanKind::HostWithoutNode,
        OrphanKind::ConnectionToGoneHost,
        OrphanKind::ReleasedVolume,
        OrphanKind::LeftoverClaim,
        OrphanKind::VmDiskWithoutClaim,
        OrphanKind::HotplugPodWithoutVm,
        OrphanKind::TenantObject,
    ];

    /// The kebab-case name (the JSON value, the metric label).
    pub fn as_str(self) -> &'static str {
        match self {
            OrphanKind::TenantGone => "tenant-gone",
            OrphanKind::UnboundDrive => "unbound-drive",
            OrphanKind::HostWithoutNode => "host-without-node",
            OrphanKind::ConnectionToGoneHost => "connection-to-gone-host",
            OrphanKind::ReleasedVolume => "released-volume",
            OrphanKind::LeftoverClaim => "leftover-claim",
            OrphanKind::VmDiskWithoutClaim => "vm-disk-without-claim",
            OrphanKind::HotplugPodWithoutVm => "hotplug-pod-without-vm",
            OrphanKind::TenantObject => "tenant-object",
        }
    }

    /// Whether finding it needs the management cluster (everything but the tenant
    /// and host rules, which read the array and the specs alone).
    pub fn needs_cluster(self) -> bool {
        !matches!(
            self,
            OrphanKind::TenantGone | OrphanKind::HostWithoutNode | OrphanKind::ConnectionToGoneHost
        )
    }
}

/// What a cleanup acts on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Target {
    /// An array object of a tenant that is gone: cleaned up with the tenant's
    /// soft destroy (every object tagged for it, in dependency order).
    GoneTenant {
        /// The tenant named by the tags.
        tenant: String,
    },
    /// An array volume: disconnected, then soft-destroyed.
    Volume {
        /// The volume.
        name: String,
    },
    /// An array host: disconnected, taken out of its group, deleted.
    Host {
        /// The host.
        name: String,
    },
    /// A gone tenant's realm: soft-destroyed after the tenant's pods (see
    /// `realm`: the array refuses a realm that holds a live pod).
    Realm {
        /// The realm.
        name: String,
        /// The gone tenant whose pods it holds.
        tenant: String,
    },
    /// A private connection of a volume to a host.
    Connection {
        /// The volume.
        volume: String,
        /// The host.
        host: String,
    },
    /// A Kubernetes object of the management cluster.
    Cluster(ClusterTarget),
}

/// A Kubernetes leftover, as px-cluster deletes it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ClusterTarget {
    /// A PersistentVolume: deleted.
    PersistentVolume {
        /// Its name.
        name: String,
    },
    /// A PersistentVolumeClaim: deleted.
    PersistentVolumeClaim {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// A disk of a VirtualMachine: removed from the VM (`removevolume`).
    VmDisk {
        /// The VM's namespace.
        namespace: String,
        /// The VM.
        vm: String,
        /// The disk's volume name (its serial).
        volume: String,
    },
    /// A Pod: deleted.
    Pod {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// An object of one of `TENANT_OBJECT_KINDS`: deleted.
    Object {
        /// Its kind (`Secret`, ...).
        object_kind: String,
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
}

/// One orphan, with why pxfa thinks so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Orphan {
    /// What kind of leftover.
    pub kind: OrphanKind,
    /// `array` or `management`.
    pub layer: &'static str,
    /// The object, as `kind name` (`volume tenant-blue::x`, `PersistentVolume pvc-1`).
    pub object: String,
    /// The tenant it was made for, when its marks name one.
    pub tenant: Option<String>,
    /// What was read that makes it an orphan, and that it is pxfa's.
    pub evidence: String,
    /// How long ago the array created it, ms, where the array says (volumes).
    pub age_ms: Option<u64>,
    /// What `--cleanup` does with it.
    pub cleanup: Target,
}

/// An array object pxfa made that is destroyed and waits for eradication: not an
/// orphan any more, listed so that nobody looks for it in vain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingEradication {
    /// The object, as `kind name`.
    pub object: String,
    /// The tenant its tags name.
    pub tenant: Option<String>,
    /// Milliseconds until the array eradicates it, when it says.
    pub time_remaining_ms: Option<u64>,
}

/// A kind the scan could not check, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotChecked {
    /// The kind of orphan that was not looked for.
    pub kind: OrphanKind,
    /// Why not: what could not be read (a cluster not given, a listing refused).
    pub why: String,
}

/// The scan's result (`kind: Orphans`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrphanReport {
    /// `pxfa.io/v1alpha1`.
    pub api_version: &'static str,
    /// `Orphans`.
    pub kind: &'static str,
    /// The tenants that exist, as `namespace/name` (the name alone where no
    /// namespace is known).
    pub tenants: Vec<String>,
    /// The kinds looked for.
    pub checked: Vec<OrphanKind>,
    /// The kinds not looked for, and why.
    pub not_checked: Vec<NotChecked>,
    /// The orphans, array first.
    pub orphans: Vec<Orphan>,
    /// Tenants the tags name that nobody accounts for and no evidence says are
    /// gone: kept, never cleaned up.
    pub unaccounted: Vec<Unaccounted>,
    /// pxfa's destroyed objects waiting for eradication.
    pub pending_eradication: Vec<PendingEradication>,
    /// The array's eradication settings, as the cleanup respects them.
    pub safe_mode: SafeMode,
}

impl OrphanReport {
    /// Orphans per kind, every kind present (zero included): what the controller
    /// reports as metrics and Events.
    pub fn counts(&self) -> BTreeMap<OrphanKind, usize> {
        let mut out: BTreeMap<OrphanKind, usize> =
            OrphanKind::ALL.iter().map(|k| (*k, 0)).collect();
        for o in &self.orphans {
            *out.entry(o.kind).or_default() += 1;
        }
        out
    }

    /// True when nothing was found.
    pub fn is_empty(&self) -> bool {
        self.orphans.is_empty()
    }
}

/// The tenants that exist: the loaded ones, whose objects pxfa can tell, and
/// those that exist but could not be loaded (an invalid TenantStorage): their
/// objects are never orphans, and the rules that need every tenant's details
/// (nodes, claims) are not checked while one is unknown. [`Evidence`] says whether
/// a tenant missing here is gone.
#[derive(Debug, Clone, Default)]
pub struct Known {
    /// Loaded tenants.
    pub tenants: Vec<Tenant>,
    /// Tenants that exist but could not be loaded, with why.
    pub unloaded: Vec<(TenantRef, String)>,
    /// What says a tenant missing from the two lists above is gone.
    pub evidence: Evidence,
}

impl Known {
    /// Every tenant's identity.
    pub(super) fn ids(&self) -> impl Iterator<Item = TenantRef> + '_ {
        self.tenants
            .iter()
            .map(TenantRef::of)
            .chain(self.unloaded.iter().map(|(id, _)| id.clone()))
    }

    /// Whether `tenant`, as pxfa's tags or labels name it, is one of these; one
    /// without a namespace (an earlier pxfa's label) is while any tenant of that
    /// name is.
    fn exists(&self, tenant: &TenantRef) -> bool {
        self.ids().any(|id| id.matches(tenant))
    }

    /// Why the rules needing every tenant's details cannot run, if one is unknown.
    fn incomplete(&self) -> Option<String> {
        (!self.unloaded.is_empty()).then(|| {
            let names: Vec<String> = self
                .unloaded
                .iter()
                .map(|(n, why)| format!("{n} ({why})"))
                .collect();
            format!(
                "tenants that could not be loaded: {}; their nodes and claims are unknown",
                names.join(", ")
            )
        })
    }
}

/// The scan's clock and grace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanOptions {
    /// Now, ms since the Unix epoch, against which the array's `created` times are
    /// aged.
    pub now_ms: u64,
    /// A drive younger than this is never an unbound drive: its claim may not be
    /// made or bound yet.
    pub drive_grace_ms: u64,
}

impl ScanOptions {
    /// The default grace of a drive before it can be an unbound drive: one hour.
    pub const DEFAULT_DRIVE_GRACE_MS: u64 = 3_600_000;

    /// At `now_ms`, with the default grace.
    pub fn at(now_ms: u64) -> Self {
        ScanOptions {
            now_ms,
            drive_grace_ms: Self::DEFAULT_DRIVE_GRACE_MS,
        }
    }
}

/// The management cluster, as the scan reads it and the cleanup changes it: the
/// seam px-cluster implements.
#[async_trait]
pub trait ClusterReader: Send + Sync {
    /// One read of what the cluster rules need.
    async fn facts(&self) -> Result<ClusterFacts, String>;
    /// Deletes (or detaches) one leftover; an object already gone is no error.
    async fn remove(&self, target: &ClusterTarget) -> Result<(), String>;
}

/// Why a scan did not finish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// Reading the array failed.
    #[error("reading the array: {0}")]
    Array(#[from] flasharray::Error),
    /// Reading the management cluster failed.
    #[error("reading the management cluster: {0}")]
    Cluster(String),
}

/// Finds the orphans; reads only. Without `cluster`, the kinds that need it are
/// listed as not checked.
pub async fn scan(
    array: &dyn FlashArray,
    cluster: Option<&dyn ClusterReader>,
    known: &Known,
    opts: &ScanOptions,
) -> Result<OrphanReport, ScanError> {
    let facts = match cluster {
        Some(c) => Some(c.facts().await.map_err(ScanError::Cluster)?),
        None => None,
    };
    let seen = array::read(array, known).await?;
    let judged = evidence::judge(&seen, known, facts.as_ref());
    let mut not_checked = Vec::new();
    let mut orphans = array::find(
        &seen,
        (known, &judged),
        facts.as_ref(),
        opts,
        &mut not_checked,
    );
    match &facts {
        Some(f) => orphans.extend(cluster::find(f, known, &judged, &seen, &mut not_checked)),
        None => not_checked.extend(
            OrphanKind::ALL
                .into_iter()
                .filter(|k| k.needs_cluster())
                .map(|kind| NotChecked {
                    kind,
                    why: "needs the management cluster (--kubeconfig)".into(),
                }),
        ),
    }
    let skipped: BTreeSet<OrphanKind> = not_checked.iter().map(|n| n.kind).collect();
    let mut names: Vec<String> = known.ids().map(|id| id.to_string()).collect();
    names.sort();
    Ok(OrphanReport {
        api_version: API_VERSION,
        kind: KIND,
        tenants: names,
        checked: OrphanKind::ALL
            .into_iter()
            .filter(|k| !skipped.contains(k))
            .collect(),
        not_checked,
        orphans,
        unaccounted: unaccounted(&seen, known, &judged, facts.as_ref()),
        pending_eradication: array::pending(&seen, known),
        safe_mode: seen.safe_mode.clone(),
    })
}

/// Every tenant kept though nobody accounts for it, with its array objects and its
/// labelled cluster objects (one entry per tenant).
fn unaccounted(
    seen: &seen::Seen,
    known: &Known,
    judged: &evidence::Judged,
    facts: Option<&ClusterFacts>,
) -> Vec<Unaccounted> {
    let mut out = array::unaccounted(seen, judged);
    for u in facts
        .map(|f| cluster::unaccounted(f, known, judged))
        .unwrap_or_default()
    {
        match out
            .iter_mut()
            .find(|o| o.tenant.eq_ignore_ascii_case(&u.tenant))
        {
            Some(o) => o.objects.extend(u.objects),
            None => out.push(u),
        }
    }
    out
}

/// One cleanup action's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanupItem {
    /// The orphan's object.
    pub object: String,
    /// What was done (`soft-destroyed`, `deleted`, `disconnected`, ...), or why not.
    pub outcome: String,
    /// False when it failed or was skipped.
    pub ok: bool,
}

/// What [`cleanup`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanupReport {
    /// One entry per orphan (a gone tenant's objects share their tenant's).
    pub items: Vec<CleanupItem>,
    /// Objects left destroyed, pending eradication by the array.
    pub pending_eradication: Vec<String>,
}

impl CleanupReport {
    /// True when nothing failed.
    pub fn is_success(&self) -> bool {
        self.items.iter().all(|i| i.ok)
    }
}

/// Cleans up what `report` found: the array first (gone tenants by their soft
/// destroy, then connections, unbound drives, hosts), then the cluster. Never
/// eradicates. Every action is attempted; failures are reported, not fatal.
pub async fn cleanup(
    array: &dyn FlashArray,
    cluster: Option<&dyn ClusterReader>,
    report: &OrphanReport,
) -> CleanupReport {
    let mut out = array::cleanup(array, &report.orphans).await;
    for o in &report.orphans {
        let Target::Cluster(t) = &o.cleanup else {
            continue;
        };
        let item = match cluster {
            Some(c) => match c.remove(t).await {
                Ok(()) => CleanupItem {
                    object: o.object.clone(),
                    outcome: if matches!(t, ClusterTarget::VmDisk { .. }) {
                        "removed from the VM".into()
                    } else {
                        "deleted".into()
                    },
                    ok: true,
                },
                Err(e) => CleanupItem {
                    object: o.object.clone(),
                    outcome: format!("failed: {e}"),
                    ok: false,
                },
            },
            None => CleanupItem {
                object: o.object.clone(),
                outcome: "skipped: no management cluster".into(),
                ok: false,
            },
        };
        out.items.push(item);
    }
    out
}
