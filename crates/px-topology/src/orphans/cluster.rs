//! The management cluster's orphans, as pure rules over what px-cluster read:
//! Released PVs and leftover claims that were pxfa's, VM disks pxfa attached whose
//! claim is gone, hotplug attachment pods of pxfa's claims whose VM is gone, and the
//! other objects pxfa rendered for a tenant that is gone (its MetalLB pool, Secrets
//! and NodePool ConfigMap, which outlive the HostedCluster).
//!
//! What makes a cluster object pxfa's: the labels pxfa renders on its claims
//! (`app.kubernetes.io/managed-by: pxfa`, `pxfa.io/tenant`,
//! `pxfa.io/tenant-namespace`, read by [`crate::labels`]' one rule), the
//! worker-index annotation pxfa puts on a worker VM together with a disk named by a
//! pxfa serial, or the link to an array volume pxfa tagged. Nothing else is listed.
//!
//! Whose a labelled object is: [`whose`]. An object an earlier pxfa labelled with
//! the tenant's name alone is no tenant's until claimed: while any tenant of that
//! name exists (or is not accounted for) it is kept and the report says why
//! ([`unaccounted`]); it is an orphan only when every tenant of that name is gone on
//! evidence.

use std::collections::{BTreeMap, BTreeSet};

use super::evidence::{Judged, TenantRef, Unaccounted};
use super::seen::{ClaimFact, ClusterFacts, Seen, TaggedDrive, tagged_drives};
use super::{ClusterTarget, Known, NotChecked, Orphan, OrphanKind, Target};
use crate::labels::{LabelledTenant, TENANT_LABEL, TENANT_NAMESPACE_LABEL};
use crate::render::Cluster;

/// The claims the known tenants render, by `namespace/name`, with the tenant
/// (`namespace/name`); `None` when a tenant's manifests cannot be rendered (its
/// claims are then unknown).
fn rendered_claims(known: &Known) -> Option<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for t in &known.tenants {
        for m in t.manifests().ok()? {
            if m.cluster == Cluster::Management && m.kind == "PersistentVolumeClaim" {
                let ns = m.namespace.clone().unwrap_or_default();
                out.insert(format!("{ns}/{}", m.name), t.desired.tenant.to_string());
            }
        }
    }
    Some(out)
}

/// Whose an object pxfa labelled is, as the orphan rules decide it.
#[derive(Debug)]
enum Whose {
    /// A known tenant's: both labels name it.
    Known(TenantRef),
    /// A tenant's that is gone, with the evidence (the labels first).
    Gone(TenantRef, String),
    /// Kept, with why: a tenant not accounted for, or an earlier pxfa's label whose
    /// name a tenant that exists bears.
    Kept(String),
}

/// How the labels read, for evidence: both, or the name alone.
fn label_text(l: &LabelledTenant) -> String {
    match l {
        LabelledTenant::Tenant(id) => format!(
            "labelled {TENANT_LABEL}={},{TENANT_NAMESPACE_LABEL}={}",
            id.name, id.namespace
        ),
        LabelledTenant::Unclaimed(name) => format!(
            "labelled {TENANT_LABEL}={name} without {TENANT_NAMESPACE_LABEL} (an earlier pxfa)"
        ),
    }
}

/// The one decision about an object pxfa labelled for `l`: a known tenant's, gone
/// on evidence, or kept (the safe side). An earlier pxfa's label (the name alone)
/// is kept while any tenant of that name exists: it may be that tenant's.
fn whose(l: &LabelledTenant, known: &Known, judged: &Judged) -> Whose {
    let r = TenantRef::from(l);
    if known.exists(&r) {
        return match l {
            LabelledTenant::Tenant(_) => Whose::Known(r),
            LabelledTenant::Unclaimed(name) => {
                let owners: Vec<String> = known
                    .ids()
                    .filter(|id| id.matches(&r))
                    .map(|id| id.to_string())
                    .collect();
                let why = format!(
                    "{}: tenant {} bears the name and may own it, so it is no orphan until claimed; \
                     applying that tenant again labels its own objects, and one that stays unlabelled is \
                     deleted by hand once known to be no tenant's (selector {})",
                    label_text(l),
                    owners.join(", "),
                    crate::labels::unclaimed_selector(name)
                );
                Whose::Kept(why)
            }
        };
    }
    if let Some(evidence) = judged.gone(&r) {
        return Whose::Gone(r, format!("{}; {evidence}", label_text(l)));
    }
    let why = judged
        .unaccounted(&r)
        .map_or_else(|| "not judged".to_string(), str::to_string);
    Whose::Kept(format!("{}; {why}", label_text(l)))
}

/// The labelled objects kept though no known tenant accounts for them, by tenant,
/// with why: the report's `unaccounted`, beside the array's.
pub(super) fn unaccounted(
    facts: &ClusterFacts,
    known: &Known,
    judged: &Judged,
) -> Vec<Unaccounted> {
    let claims = facts.claims.iter().filter_map(|c| {
        Some((
            c.pxfa_tenant()?,
            format!("PersistentVolumeClaim {}", c.key()),
        ))
    });
    let objects = facts.tenant_objects.iter().filter_map(|o| {
        Some((
            o.pxfa_tenant()?,
            format!("{} {}/{}", o.kind, o.namespace, o.name),
        ))
    });
    let mut by_tenant: BTreeMap<String, Unaccounted> = BTreeMap::new();
    for (l, object) in claims.chain(objects) {
        if let Whose::Kept(why) = whose(&l, known, judged) {
            by_tenant
                .entry(l.to_string())
                .or_insert_with(|| Unaccounted {
                    tenant: l.to_string(),
                    objects: Vec::new(),
                    evidence: why,
                })
                .objects
                .push(object);
        }
    }
    by_tenant.into_values().collect()
}

/// Whether `serial` is a disk name pxfa gives (`pxdata<N>`, `pxmeta`).
fn is_pxfa_serial(serial: &str) -> bool {
    use crate::naming::DiskRole;
    serial == DiskRole::Metadata.serial()
        || serial
            .strip_prefix(DiskRole::Data(0).serial().trim_end_matches('0'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The cluster's orphans.
pub(super) fn find(
    facts: &ClusterFacts,
    known: &Known,
    judged: &Judged,
    seen: &Seen,
    not_checked: &mut Vec<NotChecked>,
) -> Vec<Orphan> {
    let drives = tagged_drives(seen);
    let gone_objects = match &facts.tenant_objects_unread {
        Some(why) => {
            not_checked.push(NotChecked {
                kind: OrphanKind::TenantObject,
                why: why.clone(),
            });
            Vec::new()
        }
        None => tenant_objects(facts, known, judged),
    };
    let rendered = match (known.incomplete(), rendered_claims(known)) {
        (None, Some(r)) => r,
        (why, _) => {
            let why = why.unwrap_or_else(|| "a tenant's manifests cannot be rendered".into());
            not_checked.extend(
                [
                    OrphanKind::LeftoverClaim,
                    OrphanKind::ReleasedVolume,
                    OrphanKind::HotplugPodWithoutVm,
                ]
                .map(|kind| NotChecked {
                    kind,
                    why: why.clone(),
                }),
            );
            let mut out = vm_disks(facts);
            out.extend(gone_objects);
            return out;
        }
    };
    let mut out = released_pvs(facts, &rendered, &drives);
    out.extend(leftover_claims(facts, (known, judged), &rendered, &drives));
    out.extend(vm_disks(facts));
    out.extend(hotplug_pods(facts, &rendered, &drives));
    out.extend(gone_objects);
    out
}

/// The labelled objects of a tenant that is gone, on evidence ([`Judged`]). A tenant
/// that exists, or is not accounted for, keeps them: which of them a live tenant
/// still needs is its bundle's business.
fn tenant_objects(facts: &ClusterFacts, known: &Known, judged: &Judged) -> Vec<Orphan> {
    let mut out = Vec::new();
    for o in &facts.tenant_objects {
        let Some(l) = o.pxfa_tenant() else {
            continue;
        };
        let Whose::Gone(t, evidence) = whose(&l, known, judged) else {
            continue;
        };
        out.push(orphan(
            OrphanKind::TenantObject,
            format!("{} {}/{}", o.kind, o.namespace, o.name),
            Some(t.to_string()),
            evidence,
            ClusterTarget::Object {
                object_kind: o.kind.clone(),
                namespace: o.namespace.clone(),
                name: o.name.clone(),
            },
        ));
    }
    out
}

fn orphan(
    kind: OrphanKind,
    object: String,
    tenant: Option<String>,
    evidence: String,
    t: ClusterTarget,
) -> Orphan {
    Orphan {
        kind,
        layer: "management",
        object,
        tenant,
        evidence,
        age_ms: None,
        cleanup: Target::Cluster(t),
    }
}

/// Released PVs whose claim pxfa rendered or whose array volume pxfa tagged.
fn released_pvs(
    facts: &ClusterFacts,
    rendered: &BTreeMap<String, String>,
    drives: &[TaggedDrive],
) -> Vec<Orphan> {
    let mut out = Vec::new();
    for pv in facts
        .pvs
        .iter()
        .filter(|p| p.phase.as_deref() == Some("Released"))
    {
        let claim = pv.claim.as_deref();
        let link = drives
            .iter()
            .find(|d| d.backs(Some(&pv.name), claim))
            .map(|d| {
                (
                    d.tenant.clone(),
                    format!("it backs array volume {} of tenant {}", d.name, d.tenant),
                )
            })
            .or_else(|| {
                let t = rendered.get(claim?)?;
                Some((
                    t.clone(),
                    format!("its claim was a drive claim of tenant {t}"),
                ))
            });
        let Some((tenant, why)) = link else {
            continue;
        };
        out.push(orphan(
            OrphanKind::ReleasedVolume,
            format!("PersistentVolume {}", pv.name),
            Some(tenant),
            format!(
                "Released: its claim {} is gone; {why}",
                claim.unwrap_or("(none)")
            ),
            ClusterTarget::PersistentVolume {
                name: pv.name.clone(),
            },
        ));
    }
    out
}

/// Claims labelled by pxfa for a tenant that is gone (on evidence: [`Judged`]), or
/// for one that renders no such claim and has no live drive behind it (a removed
/// worker's claim whose drive was released). A tenant not accounted for keeps its
/// claims.
fn leftover_claims(
    facts: &ClusterFacts,
    (known, judged): (&Known, &Judged),
    rendered: &BTreeMap<String, String>,
    drives: &[TaggedDrive],
) -> Vec<Orphan> {
    let mut out = Vec::new();
    for c in &facts.claims {
        let Some(l) = c.pxfa_tenant() else {
            continue;
        };
        let (t, why) = match whose(&l, known, judged) {
            Whose::Gone(t, evidence) => (t, evidence),
            Whose::Kept(_) => continue,
            Whose::Known(_) if rendered.contains_key(&c.key()) => continue,
            Whose::Known(_)
                if drives
                    .iter()
                    .any(|d| d.live && d.backs(c.volume_name.as_deref(), Some(&c.key()))) =>
            {
                continue; // a retained drive's claim: kept until its drive is released
            }
            Whose::Known(t) => {
                let why = format!(
                    "{}; tenant {t} renders no such claim and no live drive of it is bound here",
                    label_text(&l)
                );
                (t, why)
            }
        };
        out.push(orphan(
            OrphanKind::LeftoverClaim,
            format!("PersistentVolumeClaim {}", c.key()),
            Some(t.to_string()),
            why,
            ClusterTarget::PersistentVolumeClaim {
                namespace: c.namespace.clone(),
                name: c.name.clone(),
            },
        ));
    }
    out
}

/// Disks pxfa attached (a pxfa serial on a VM carrying pxfa's worker index) whose
/// claim does not exist.
fn vm_disks(facts: &ClusterFacts) -> Vec<Orphan> {
    let claims: BTreeSet<String> = facts.claims.iter().map(ClaimFact::key).collect();
    let mut out = Vec::new();
    for vm in facts.vms.iter().filter(|v| v.worker_index.is_some()) {
        for d in &vm.disks {
            let key = format!("{}/{}", vm.namespace, d.claim);
            // pxfa's disks are known by serial: `virtctl addvolume --persist` names
            // the disk and volume after the claim.
            if !is_pxfa_serial(&d.serial) || claims.contains(&key) {
                continue;
            }
            out.push(orphan(
                OrphanKind::VmDiskWithoutClaim,
                format!(
                    "VirtualMachine {}/{} disk {}",
                    vm.namespace, vm.name, d.volume
                ),
                None,
                format!(
                    "pxfa's disk {} (serial {}, worker index {}) names claim {key}, which does not exist",
                    d.volume,
                    d.serial,
                    vm.worker_index.as_deref().unwrap_or_default()
                ),
                ClusterTarget::VmDisk {
                    namespace: vm.namespace.clone(),
                    vm: vm.name.clone(),
                    volume: d.volume.clone(),
                },
            ));
        }
    }
    out
}

/// Hotplug attachment pods mounting a claim of pxfa's whose virt-launcher pod (and
/// so its VM instance) is gone.
fn hotplug_pods(
    facts: &ClusterFacts,
    rendered: &BTreeMap<String, String>,
    drives: &[TaggedDrive],
) -> Vec<Orphan> {
    let labelled: BTreeMap<String, String> = facts
        .claims
        .iter()
        .filter_map(|c| Some((c.key(), TenantRef::from(&c.pxfa_tenant()?).to_string())))
        .collect();
    let mut out = Vec::new();
    for p in &facts.hotplug_pods {
        let tenant = p.claims.iter().find_map(|c| {
            let key = format!("{}/{c}", p.namespace);
            labelled
                .get(&key)
                .or_else(|| rendered.get(&key))
                .cloned()
                .or_else(|| {
                    drives
                        .iter()
                        .find(|d| d.backs(None, Some(&key)))
                        .map(|d| d.tenant.clone())
                })
        });
        let Some(tenant) = tenant else {
            continue;
        };
        let owner_alive = p.owner_pod.as_ref().is_some_and(|o| {
            facts
                .launcher_pods
                .contains(&format!("{}/{o}", p.namespace))
        });
        if owner_alive {
            continue;
        }
        out.push(orphan(
            OrphanKind::HotplugPodWithoutVm,
            format!("Pod {}/{}", p.namespace, p.name),
            Some(tenant),
            format!(
                "hotplug attachment pod of claim(s) {}; its virt-launcher pod {} is gone, so no VM runs",
                p.claims.join(", "),
                p.owner_pod.as_deref().unwrap_or("(none)")
            ),
            ClusterTarget::Pod {
                namespace: p.namespace.clone(),
                name: p.name.clone(),
            },
        ));
    }
    out
}
