//! The management cluster's orphans, as pure rules over what px-cluster read:
//! Released PVs and leftover claims that were pxfa's, VM disks pxfa attached whose
//! claim is gone, hotplug attachment pods of pxfa's claims whose VM is gone, and the
//! other objects pxfa rendered for a tenant that is gone (its MetalLB pool, Secrets
//! and NodePool ConfigMap, which outlive the HostedCluster).
//!
//! What makes a cluster object pxfa's: the labels pxfa renders on its claims
//! (`app.kubernetes.io/managed-by: pxfa`, `pxfa.io/tenant`, from
//! [`crate::render::management::labels`]), the worker-index annotation pxfa puts on
//! a worker VM together with a disk named by a pxfa serial, or the link to an array
//! volume pxfa tagged. Nothing else is listed.

use std::collections::{BTreeMap, BTreeSet};

use super::evidence::Judged;
use super::seen::{ClaimFact, ClusterFacts, Seen, TaggedDrive, tagged_drives};
use super::{ClusterTarget, Known, NotChecked, Orphan, OrphanKind, Target};
use crate::render::Cluster;

/// The claims the known tenants render, by `namespace/name` and tenant; `None`
/// when a tenant's manifests cannot be rendered (its claims are then unknown).
fn rendered_claims(known: &Known) -> Option<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for t in &known.tenants {
        for m in t.manifests().ok()? {
            if m.cluster == Cluster::Management && m.kind == "PersistentVolumeClaim" {
                let ns = m.namespace.clone().unwrap_or_default();
                out.insert(format!("{ns}/{}", m.name), t.spec.tenant_name().to_string());
            }
        }
    }
    Some(out)
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
        let Some(t) = o.pxfa_tenant() else {
            continue;
        };
        if known.exists(t) {
            continue;
        }
        let Some(evidence) = judged.gone(t) else {
            continue;
        };
        out.push(orphan(
            OrphanKind::TenantObject,
            format!("{} {}/{}", o.kind, o.namespace, o.name),
            Some(t.to_string()),
            format!("labelled pxfa.io/tenant={t}; {evidence}"),
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
        let Some(t) = c.pxfa_tenant() else {
            continue;
        };
        let why = if !known.exists(t) {
            match judged.gone(t) {
                Some(evidence) => format!("labelled pxfa.io/tenant={t}; {evidence}"),
                None => continue,
            }
        } else if rendered.contains_key(&c.key()) {
            continue;
        } else if drives
            .iter()
            .any(|d| d.live && d.backs(c.volume_name.as_deref(), Some(&c.key())))
        {
            continue; // a retained drive's claim: kept until its drive is released
        } else {
            format!(
                "labelled pxfa.io/tenant={t}; tenant {t} renders no such claim and no live drive of it is bound here"
            )
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
        .filter_map(|c| Some((c.key(), c.pxfa_tenant()?.to_string())))
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
