//! Dynamic provisioning's other half: finding the drive volumes the management
//! Portworx created for the tenant's claims, so that pxfa can tag, report and
//! destroy them.
//!
//! A desired drive ([`DesiredDrive`]) is found in one of two ways:
//!
//! * **by its tags** (tenant, role, node index, disk index) once pxfa tagged it:
//!   in `observe`'s first round, from the tag listing it reads anyway, without a
//!   cluster;
//! * **through its claim**: a [`DriveLocator`] says which claims are bound and to
//!   which PersistentVolume; the array volume is the one in the claim's pod whose
//!   name ends with the PV name ([`is_fada_volume_for`]), read with one filtered
//!   listing per batch of claims ([`locate_drives`]).
//!
//! The plan then says, per drive: tagged → no-op; bound, found exactly once and
//! untagged → pxfa tags it; bound with no or several matching volumes, or a match
//! that is someone else's → a conflict; not bound (or no cluster was asked) →
//! pending.

use std::collections::BTreeMap;

use async_trait::async_trait;
use flasharray::models::Volume;
use flasharray::{ErrorKind, FlashArray, ListParams, Size, TagResource, VolumeName};
use futures_util::future::try_join_all;

use super::change::{Action, Blocker, Change, Detail, Kind, Payload};
use super::ownership::{CLAIM_HINT, Owner, TagIndex, drifted, owner, tag_change};
use crate::desired::{
    DesiredDrive, DesiredState, DriveClaim, TAG_DISK, TAG_NODE, TAG_ROLE, TenantId,
};

/// Why a locator could not say which claims are bound.
pub type LocateError = Box<dyn std::error::Error + Send + Sync>;

/// A claim bound to its PersistentVolume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The claim.
    pub claim: DriveClaim,
    /// The bound PV's name (the claim's `spec.volumeName`).
    pub volume_name: String,
}

/// Which of the tenant's drive claims are bound, and to which PV: the seam between
/// the plan (network-free) and whatever knows the management cluster (px-cluster
/// reads the claims; a simulated management Portworx answers for `--array sim`).
#[async_trait]
pub trait DriveLocator: Send + Sync {
    /// The bindings of the bound claims among `claims`; unbound or missing claims
    /// are left out.
    async fn bound(&self, claims: &[DriveClaim]) -> Result<Vec<Binding>, LocateError>;
}

/// A drive found through its bound claim.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundDrive {
    /// The PV the claim is bound to.
    pub pv: String,
    /// The array volumes whose name matches the PV (exactly one is expected).
    pub matches: Vec<Volume>,
}

/// What the array (and the locator, when asked) says about the desired drives.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObservedDrives {
    /// Drives found by their tags: the volumes (as the array spells them) carrying
    /// the drive's tenant, role, node and disk index tags.
    pub tagged: BTreeMap<DriveClaim, Vec<String>>,
    /// Drives not found by tags whose claim is bound.
    pub bound: BTreeMap<DriveClaim, BoundDrive>,
    /// Whether a locator was asked; without one, untagged drives are pending.
    pub located: bool,
}

impl ObservedDrives {
    /// Every volume found by tags.
    pub(crate) fn tagged_names(&self) -> Vec<String> {
        self.tagged.values().flatten().cloned().collect()
    }
}

/// Claims per filtered listing: keeps the filter (one `name='<pod>::*<pv>'` term
/// per claim, ≈ 80 bytes encoded) far below the query limits arrays accept.
const CLAIMS_PER_LISTING: usize = 16;

/// The matching rule between a FlashArray volume and the PV of a FADA claim.
///
/// Portworx names a FADA volume `px_<cluster-uuid-prefix>-pvc-<pvc-uid>`, prefixed
/// by `<pod>::` when the class names a pod (`pure_fa_pod_name`): PX-CSI "Control
/// volume placement using FlashArray pods" [H for PX-CSI, M for Portworx
/// Enterprise FADA; reference `peers.md`]. The PV name is `pvc-<claim uid>`, the
/// CSI external-provisioner's default (`--volume-name-prefix=pvc`) \[M\]. The rule
/// therefore takes the PV name from the claim (not its uid) and asks only that the
/// volume, in the claim's pod, is that PV name or ends with it after a `-` or `_`,
/// so that whatever prefix comes before (the cluster UUID prefix, or another) is
/// tolerated. Names compare without case, as the array's do.
pub fn is_fada_volume_for(volume: &str, pod: Option<&str>, pv: &str) -> bool {
    let (vpod, short) = match volume.split_once("::") {
        Some((p, s)) => (Some(p), s),
        None => (None, volume),
    };
    let same_pod = match (vpod, pod) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        (None, None) => true,
        _ => false,
    };
    if !same_pod || pv.is_empty() {
        return false;
    }
    let short = short.to_ascii_lowercase();
    let pv = pv.to_ascii_lowercase();
    short == pv
        || short
            .strip_suffix(&pv)
            .is_some_and(|head| head.ends_with('-') || head.ends_with('_'))
}

/// A PV name pxfa can put in a filter: a Kubernetes object name (lower-case
/// letters, digits, `-`, `.`), so it needs no quoting and holds no wildcard.
fn is_kubernetes_name(pv: &str) -> bool {
    !pv.is_empty()
        && pv.len() <= 253
        && pv
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
}

/// The filter that lists the candidates of [`is_fada_volume_for`] for `pvs`.
fn candidates_filter(pod: Option<&str>, pvs: &[&str]) -> String {
    pvs.iter()
        .map(|pv| match pod {
            Some(p) => format!("name='{p}::*{pv}'"),
            None => format!("name='*{pv}'"),
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

/// The drives among `desired` whose tags are on the array: matched by tenant (the
/// volume is the tenant's), role, node index and disk index. Pure; `observe` calls
/// it with the tags of its first round.
pub(crate) fn by_tags(
    desired: &DesiredState,
    tags: &TagIndex,
) -> BTreeMap<DriveClaim, Vec<String>> {
    let owned = tags.owned_by(TagResource::Volume, &desired.tenant);
    let mut out: BTreeMap<DriveClaim, Vec<String>> = BTreeMap::new();
    for name in owned {
        let Some(have) = tags.get(TagResource::Volume, &name) else {
            continue;
        };
        if let Some(d) = desired.drives.iter().find(|d| same_drive(&d.tags, have)) {
            out.entry(d.claim.clone()).or_default().push(name);
        }
    }
    out
}

/// Same role, node index and disk index.
fn same_drive(want: &BTreeMap<String, String>, have: &BTreeMap<String, String>) -> bool {
    [TAG_ROLE, TAG_NODE, TAG_DISK]
        .iter()
        .all(|k| want.get(*k).is_some_and(|w| have.get(*k) == Some(w)))
}

/// Asks `locator` about the drives `observe` did not find by tags and looks the
/// bound ones up on the array (one filtered listing per pod and batch of claims);
/// records the result in `drives`. Read-only on the array.
pub(crate) async fn locate_bound(
    array: &dyn FlashArray,
    desired: &DesiredState,
    drives: &mut ObservedDrives,
    locator: &dyn DriveLocator,
) -> Result<(), LocateError> {
    drives.located = true;
    let open: Vec<&DesiredDrive> = desired
        .drives
        .iter()
        .filter(|d| !drives.tagged.contains_key(&d.claim))
        .collect();
    if open.is_empty() {
        return Ok(());
    }
    let claims: Vec<DriveClaim> = open.iter().map(|d| d.claim.clone()).collect();
    let bindings: BTreeMap<DriveClaim, String> = locator
        .bound(&claims)
        .await?
        .into_iter()
        .map(|b| (b.claim, b.volume_name))
        .collect();
    // Per pod, the drives whose PV can go into a filter; the others are recorded
    // with no match (a conflict that names the PV).
    let mut by_pod: BTreeMap<Option<String>, Vec<(&DesiredDrive, &str)>> = BTreeMap::new();
    for d in &open {
        let Some(pv) = bindings.get(&d.claim) else {
            continue;
        };
        if is_kubernetes_name(pv) {
            by_pod
                .entry(d.pod.as_ref().map(|p| p.to_string()))
                .or_default()
                .push((d, pv.as_str()));
        } else {
            drives.bound.insert(
                d.claim.clone(),
                BoundDrive {
                    pv: pv.clone(),
                    matches: Vec::new(),
                },
            );
        }
    }
    let calls = by_pod.iter().flat_map(|(pod, items)| {
        items
            .chunks(CLAIMS_PER_LISTING)
            .map(move |chunk| async move {
                let pvs: Vec<&str> = chunk.iter().map(|(_, pv)| *pv).collect();
                let params = ListParams::all().filter(candidates_filter(pod.as_deref(), &pvs));
                let found = match array.list_volumes(&params).await {
                    Ok(v) => v,
                    Err(e) if e.kind() == ErrorKind::NotFound => Vec::new(),
                    Err(e) => return Err(e),
                };
                Ok(chunk
                    .iter()
                    .map(|(d, pv)| {
                        let matches = found
                            .iter()
                            .filter(|v| is_fada_volume_for(&v.name, pod.as_deref(), pv))
                            .cloned()
                            .collect();
                        (
                            d.claim.clone(),
                            BoundDrive {
                                pv: pv.to_string(),
                                matches,
                            },
                        )
                    })
                    .collect::<Vec<_>>())
            })
    });
    for found in try_join_all(calls).await? {
        drives.bound.extend(found);
    }
    Ok(())
}

/// The plan's part for dynamic drives.
#[derive(Debug, Default)]
pub(crate) struct DrivePlan {
    /// No-ops, recoveries and pending drives, with the volumes.
    pub(crate) volumes: Vec<Change>,
    /// Tags of found drives (first tagging, or drift).
    pub(crate) tags: Vec<Change>,
    /// Drives pxfa cannot tell apart or must not take.
    pub(crate) conflicts: Vec<Blocker>,
}

fn drive_label(d: &DesiredDrive) -> String {
    let get = |k: &str| d.tags.get(k).map_or("?", String::as_str);
    format!(
        "{} drive of worker {} (disk {})",
        get(TAG_ROLE),
        get(TAG_NODE),
        get(TAG_DISK)
    )
}

fn drive_tag_change(action: Action, name: &str, reason: String, d: &DesiredDrive) -> Change {
    tag_change(
        action,
        Kind::Volume,
        TagResource::Volume,
        name,
        reason,
        &d.tags,
    )
}

/// What the plan of the drives reads of the observation.
#[derive(Clone, Copy)]
pub(crate) struct DriveFacts<'a> {
    /// The drives found by tags and through their claims.
    pub(crate) drives: &'a ObservedDrives,
    /// pxfa's tags.
    pub(crate) tags: &'a TagIndex,
    /// The volumes read, by lower-cased name.
    pub(crate) volumes: &'a BTreeMap<String, Volume>,
}

/// Per desired drive: no-op, recover, tag, pending or conflict (module text). Pure.
pub(crate) fn plan_drives(desired: &DesiredState, facts: DriveFacts<'_>) -> DrivePlan {
    let mut out = DrivePlan::default();
    for d in &desired.drives {
        let claim = &d.claim;
        if let Some(names) = facts.drives.tagged.get(claim) {
            plan_tagged(d, names, facts, &mut out);
        } else if let Some(b) = facts.drives.bound.get(claim) {
            plan_bound(d, b, facts.tags, &desired.tenant, &mut out);
        } else {
            out.volumes.push(pending(d, facts.drives.located));
        }
    }
    out
}

/// A drive whose claim is not bound (or whose claims nobody read).
fn pending(d: &DesiredDrive, located: bool) -> Change {
    let claim = &d.claim;
    let mut why = format!("created by the management Portworx when claim {claim} binds");
    if !located {
        why.push_str(
            "; pxfa tags it on an apply that can read the claims (--kubeconfig) once bound",
        );
    }
    Change::new(
        Action::Pending,
        Kind::Volume,
        format!("for claim {claim}"),
        why,
    )
    .detail("size", d.size)
}

/// A drive found through its bound claim: exactly one matching volume, which no
/// one tagged yet, is tagged; anything else is a conflict.
fn plan_bound(
    d: &DesiredDrive,
    b: &BoundDrive,
    tags: &TagIndex,
    tenant: &TenantId,
    out: &mut DrivePlan,
) {
    let claim = &d.claim;
    let resolution = "check that the claim uses the tenant's FADA class (its pure_fa_pod_name is the tenant's pod) \
         and that the management Portworx uses this array";
    let v = match b.matches.as_slice() {
        [v] => v,
        [] => {
            out.conflicts.push(Blocker {
                kind: Kind::Volume,
                name: format!("for claim {claim}"),
                reason: format!(
                    "claim {claim} is bound to PV {}, but no array volume {} is named after it",
                    b.pv,
                    d.pod
                        .as_ref()
                        .map_or("outside pods".to_string(), |p| format!("in pod {p}"))
                ),
                resolution: resolution.to_string(),
            });
            return;
        }
        many => {
            out.conflicts.push(Blocker {
                kind: Kind::Volume,
                name: format!("for claim {claim}"),
                reason: format!(
                    "claim {claim} (PV {}) matches {} array volumes: {}",
                    b.pv,
                    many.len(),
                    many.iter().map(|v| v.name.as_str()).collect::<Vec<_>>().join(", ")
                ),
                resolution: "rename or remove the volumes that are not the claim's by hand; pxfa tags exactly one"
                    .to_string(),
            });
            return;
        }
    };
    match owner(tags.get(TagResource::Volume, &v.name), tenant) {
        Owner::Unmanaged if v.destroyed => out.conflicts.push(Blocker {
            kind: Kind::Volume,
            name: v.name.clone(),
            reason: format!(
                "bound to claim {claim} (PV {}) but destroyed on the array",
                b.pv
            ),
            resolution: format!(
                "recover it (pxfa volume recover {}) or delete the claim and its PV",
                v.name
            ),
        }),
        Owner::Unmanaged => out.tags.push(drive_tag_change(
            Action::Create,
            &v.name,
            format!(
                "created by the management Portworx for claim {claim} (PV {}): pxfa tags it as the {}",
                b.pv,
                drive_label(d)
            ),
            d,
        )),
        other => out.conflicts.push(Blocker {
            kind: Kind::Volume,
            name: v.name.clone(),
            reason: format!(
                "bound to claim {claim} (PV {}) but already tagged {}",
                b.pv,
                match other {
                    Owner::OtherTenant(t) => format!("for tenant {t}"),
                    Owner::Unclaimed => format!("by an earlier pxfa for this tenant's name with no namespace ({CLAIM_HINT})"),
                    Owner::Shared => "as a shared object".to_string(),
                    _ => "as another drive of this tenant".to_string(),
                }
            ),
            resolution: "fix the claim or the volume's pxfa.io tags by hand; pxfa never retags another's volume"
                .to_string(),
        }),
    }
}

/// The detail of a found drive's volume change naming its claim (`NAMESPACE/NAME`):
/// the tenant picture draws the edge from the volume to the claim with it.
pub const CLAIM_DETAIL: &str = "claim";

/// A drive found by its tags: one volume expected.
fn plan_tagged(d: &DesiredDrive, names: &[String], facts: DriveFacts<'_>, out: &mut DrivePlan) {
    let claim = &d.claim;
    let [name] = names else {
        out.conflicts.push(Blocker {
            kind: Kind::Volume,
            name: format!("for claim {claim}"),
            reason: format!(
                "{} volumes carry the tags of the {}: {}",
                names.len(),
                drive_label(d),
                names.join(", ")
            ),
            resolution: format!(
                "remove pxfa's tags from the volumes that are not bound to claim {claim} by hand"
            ),
        });
        return;
    };
    let Some(v) = facts.volumes.get(&name.to_ascii_lowercase()) else {
        return;
    };
    let size = Size::bytes(v.provisioned);
    if v.destroyed {
        let mut c = Change::new(
            Action::Recover,
            Kind::Volume,
            name,
            // The claim is the detail (CLAIM_DETAIL), said once.
            "drive destroyed and still pending eradication: recovered",
        )
        .detail(CLAIM_DETAIL, Detail::Text(claim.to_string()));
        if let Some(ms) = v.time_remaining {
            c = c.detail("eradicated in", Detail::Millis(ms));
        }
        if let Ok(vn) = VolumeName::new(name.as_str()) {
            out.volumes.push(c.with(Payload::Volume {
                name: vn,
                size: v.provisioned,
                truncate: false,
            }));
        }
    } else {
        out.volumes.push(
            Change::new(
                Action::NoOp,
                Kind::Volume,
                name,
                "drive created by the management Portworx, found by its tags",
            )
            .detail("size", size)
            .detail(CLAIM_DETAIL, Detail::Text(claim.to_string())),
        );
    }
    let drift = drifted(&d.tags, facts.tags.get(TagResource::Volume, name));
    if !drift.is_empty() && !v.destroyed {
        out.tags.push(drive_tag_change(
            Action::Update,
            name,
            format!("pxfa tags differ: {}", drift.join(", ")),
            d,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_volume_ends_with_the_pv_name_in_the_claims_pod() {
        let pv = "pvc-0b6f3c1e-5d2a-4f7e-9a10-6c1d2e3f4a51";
        let pod = Some("tenant-demo");
        assert!(is_fada_volume_for(
            &format!("tenant-demo::px_5c1e7a3b-{pv}"),
            pod,
            pv
        ));
        // Another cluster prefix, or none, is tolerated; case does not matter.
        assert!(is_fada_volume_for(
            &format!("TENANT-DEMO::px_x_{}", pv.to_uppercase()),
            pod,
            pv
        ));
        assert!(is_fada_volume_for(&format!("tenant-demo::{pv}"), pod, pv));
        // Another pod, no pod, or a longer uid are not the claim's.
        assert!(!is_fada_volume_for(
            &format!("tenant-blue::px_5c1e7a3b-{pv}"),
            pod,
            pv
        ));
        assert!(!is_fada_volume_for(&format!("px_5c1e7a3b-{pv}"), pod, pv));
        assert!(!is_fada_volume_for(
            &format!("tenant-demo::px_5c1e7a3b-{pv}0"),
            pod,
            pv
        ));
        assert!(!is_fada_volume_for(
            &format!("tenant-demo::px_5c1e7a3bx{pv}"),
            pod,
            pv
        ));
        assert!(is_fada_volume_for(&format!("px_5c1e7a3b-{pv}"), None, pv));
        assert!(!is_fada_volume_for("tenant-demo::anything", pod, ""));
    }

    #[test]
    fn the_filter_names_each_pv_once_and_only_kubernetes_names_go_in() {
        let f = candidates_filter(Some("p"), &["pvc-a", "pvc-b"]);
        assert_eq!(f, "name='p::*pvc-a' or name='p::*pvc-b'");
        assert_eq!(candidates_filter(None, &["pvc-a"]), "name='*pvc-a'");
        assert!(is_kubernetes_name("pvc-0b6f.x"));
        for bad in ["", "pvc-'x", "pvc-*", "PVC-A", "a b"] {
            assert!(!is_kubernetes_name(bad), "{bad}");
        }
    }
}
