//! The tenant's volumes (direct-access drives and the others pxfa names): reading
//! them, and their part of the plan.
//!
//! A volume only grows unless shrinking is allowed; a destroyed one is recovered,
//! not re-created, except a drive of a released worker (its Portworx node was
//! probably decommissioned). The drives of workers the desired state dropped are
//! retained with their data; only `--release-removed-workers` destroys them, and
//! those the management Portworx created (dynamic provisioning) only with
//! `--destroy-dynamic-drives` too: Portworx releases those itself.

use std::collections::{BTreeMap, BTreeSet};

use flasharray::models::Volume;
use flasharray::{FlashArray, FlashArrayExt, Result, Size, TagResource, VolumeName};

use super::change::{Action, Blocker, Change, Detail, Kind, Payload, PlanOptions};
use super::observed::{Observed, key};
use super::ownership::Claims;
use crate::desired::{DesiredState, DesiredVolume, Scope, TAG_NODE, TAG_ROLE, TenantId};

/// The named volumes that exist, destroyed ones included (the lookup rule is
/// [`flasharray::FlashArrayExt::lookup_volumes`]'s).
pub(crate) async fn lookup_volumes(
    array: &dyn FlashArray,
    names: &[String],
) -> Result<Vec<Volume>> {
    array.lookup_volumes(names).await
}

/// The desired volumes' part of a plan.
#[derive(Debug, Default)]
pub(crate) struct VolumePlan {
    /// Creates, recoveries, resizes and no-ops.
    pub(crate) changes: Vec<Change>,
    /// Changes refused (a shrink, a released worker's drive).
    pub(crate) refusals: Vec<Blocker>,
    /// Lower-cased names of the volumes pxfa may connect.
    pub(crate) usable: BTreeSet<String>,
    /// Serials of the volumes already on the array.
    pub(crate) serials: BTreeMap<String, String>,
}

/// Plans every desired volume.
pub(crate) fn plan_volumes(
    desired: &DesiredState,
    obs: &Observed,
    opts: &PlanOptions,
    claims: &mut Claims<'_>,
) -> VolumePlan {
    let mut out = VolumePlan::default();
    let released = released_indexes(obs, &desired.tenant);
    for dv in &desired.volumes {
        let name = dv.name.as_str();
        let Some(o) = obs.volumes.get(&key(name)) else {
            out.changes.push(
                Change::new(Action::Create, Kind::Volume, name, "not on the array")
                    .detail("size", dv.size)
                    .with(payload(dv, false)),
            );
            out.usable.insert(key(name));
            continue;
        };
        let pristine = o.provisioned == dv.size.as_u64()
            && o.connection_count.unwrap_or(0) == 0
            && !o.destroyed;
        let kind = (Kind::Volume, TagResource::Volume);
        if !claims.claim(kind, name, Scope::Tenant, &dv.tags, pristine) {
            continue;
        }
        let index = drive_index(obs.tags.get(TagResource::Volume, name));
        if o.destroyed && !opts.recover_released && index.is_some_and(|i| released.contains(&i)) {
            out.refusals
                .push(released_refusal(name, index.unwrap_or_default(), o));
            continue;
        }
        // A refused drive is not usable: nothing is connected to it.
        out.usable.insert(key(name));
        if let Some(s) = &o.serial {
            out.serials.insert(name.to_string(), s.clone());
        }
        if o.destroyed {
            let mut c = Change::new(
                Action::Recover,
                Kind::Volume,
                name,
                "destroyed and still pending eradication: recovered, not re-created",
            );
            if let Some(ms) = o.time_remaining {
                c = c.detail("eradicated in", Detail::Millis(ms));
            }
            out.changes.push(c.with(payload(dv, false)));
        }
        match resize(dv, o, opts.allow_shrink) {
            Ok(Some(c)) => out.changes.push(c),
            Ok(None) => {}
            Err(b) => out.refusals.push(b),
        }
    }
    out
}

fn payload(dv: &DesiredVolume, truncate: bool) -> Payload {
    Payload::Volume {
        name: dv.name.clone(),
        size: dv.size.as_u64(),
        truncate,
    }
}

/// A destroyed drive of a released worker is not recovered on its own.
fn released_refusal(name: &str, index: u32, o: &Volume) -> Blocker {
    let left = o.time_remaining.map_or(String::new(), |ms| {
        format!(" (eradicated in {})", crate::duration::human_ms(ms))
    });
    Blocker {
        kind: Kind::Volume,
        name: name.to_string(),
        reason: format!(
            "drive of worker {index}, which was released: destroyed and pending \
             eradication{left}; its Portworx node was probably decommissioned, \
             so its old pool must not come back on its own"
        ),
        resolution: format!(
            "eradicate it (`pxfa volume eradicate {name}`; with SafeMode wait \
             for its eradication), or --recover-released if the Portworx node was \
             never decommissioned"
        ),
    }
}

/// Grow, an allowed shrink, a refused shrink, or (same size, live) a no-op.
fn resize(dv: &DesiredVolume, o: &Volume, allow_shrink: bool) -> Result<Option<Change>, Blocker> {
    let name = dv.name.as_str();
    let want = dv.size.as_u64();
    let have = Size::bytes(o.provisioned);
    if o.provisioned < want {
        return Ok(Some(
            Change::new(Action::Update, Kind::Volume, name, "grow")
                .detail("from", have)
                .detail("to", dv.size)
                .with(payload(dv, false)),
        ));
    }
    if o.provisioned > want {
        if !allow_shrink {
            return Err(Blocker {
                kind: Kind::Volume,
                name: name.to_string(),
                reason: format!(
                    "is {have} on the array, desired {}: shrinking loses data; allow shrinking explicitly to do it",
                    dv.size
                ),
                resolution:
                    "restore the size in the spec, or --allow-shrink (truncates: destroys data)"
                        .to_string(),
            });
        }
        return Ok(Some(
            Change::new(
                Action::Update,
                Kind::Volume,
                name,
                "shrink (allowed): data past the new end is lost",
            )
            .detail("from", have)
            .detail("to", dv.size)
            .with(payload(dv, true)),
        ));
    }
    Ok((!o.destroyed).then(|| {
        Change::new(Action::NoOp, Kind::Volume, name, "as desired").detail("size", dv.size)
    }))
}

/// Worker indexes whose every drive tagged for `tenant` is destroyed (pending
/// eradication) while the tenant still has a live drive: released by
/// `--release-removed-workers` (or by hand), not by `destroy`, which takes every
/// drive. Recovering such a drive brings back a decommissioned node's pool, so it
/// takes `--recover-released`.
fn released_indexes(obs: &Observed, tenant: &TenantId) -> BTreeSet<u32> {
    let mut live: BTreeMap<u32, bool> = BTreeMap::new();
    for name in obs.tags.owned_by(TagResource::Volume, tenant) {
        let (Some(i), Some(v)) = (
            drive_index(obs.tags.get(TagResource::Volume, &name)),
            obs.volumes.get(&key(&name)),
        ) else {
            continue;
        };
        *live.entry(i).or_default() |= !v.destroyed;
    }
    if !live.values().any(|l| *l) {
        return BTreeSet::new();
    }
    live.into_iter()
        .filter(|(_, l)| !*l)
        .map(|(i, _)| i)
        .collect()
}

/// The worker index of a drive volume tagged `role=px-data|px-metadata` with a
/// `node-index`; `None` for other volumes.
fn drive_index(tags: Option<&BTreeMap<String, String>>) -> Option<u32> {
    let tags = tags?;
    match tags.get(TAG_ROLE).map(String::as_str) {
        Some("px-data" | "px-metadata") => tags.get(TAG_NODE)?.parse().ok(),
        _ => None,
    }
}

/// What happens to the live drives of worker indexes the desired state dropped.
#[derive(Debug, Default)]
pub(crate) struct Retention {
    /// Kept with their data (`retain`, not a change).
    pub(crate) retained: Vec<Change>,
    /// Released (`--release-removed-workers`): destroyed with the other orphans.
    pub(crate) released: BTreeSet<String>,
    /// The retained workers whose drives the management Portworx created (dynamic
    /// provisioning): released through Portworx, not on the array.
    pub(crate) dynamic: BTreeSet<u32>,
    /// Of those, the drives a release asked for keeps (no `--destroy-dynamic-drives`).
    pub(crate) held: usize,
}

impl Retention {
    /// Said when a release kept drives the management Portworx releases: the apply
    /// would otherwise look as if the flag did nothing.
    pub(crate) fn held_warning(&self) -> Option<String> {
        (self.held > 0).then(|| {
            format!(
                "--release-removed-workers holds {} drive(s) of worker(s) {}: the management \
                 Portworx created them and releases them (each PV's reclaim policy to Delete, \
                 then delete the claims: `pxfa runbook scale-in`); `--destroy-dynamic-drives` \
                 destroys them on the array instead, for a management Portworx that is gone",
                self.held,
                (self.dynamic.iter())
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }

    /// The worker indexes whose drives are retained, once each.
    pub(crate) fn workers(&self) -> Vec<u32> {
        let mut workers: Vec<u32> = self
            .retained
            .iter()
            .filter_map(|c| match c.details.get("worker")? {
                Detail::Count(n) => u32::try_from(*n).ok(),
                _ => None,
            })
            .collect();
        workers.dedup();
        workers
    }

    /// The lower-cased names of the retained drives.
    pub(crate) fn keys(&self) -> BTreeSet<String> {
        self.retained.iter().map(|c| key(&c.name)).collect()
    }
}

/// Drives of worker indexes the desired state dropped (scale-in, or drives the
/// management Portworx now provisions) are retained: they hold Portworx pools.
/// Only `release_removed_workers` releases them, and only past the last desired
/// worker index.
pub(crate) fn retain_drives(
    desired: &DesiredState,
    obs: &Observed,
    opts: &PlanOptions,
) -> Retention {
    let desired_workers = desired
        .volumes
        .iter()
        .map(|v| &v.tags)
        .chain(desired.drives.iter().map(|d| &d.tags))
        .filter_map(|t| t.get(TAG_NODE)?.parse::<u32>().ok())
        .map(|i| i + 1)
        .max()
        .unwrap_or(0);
    let mut out = Retention::default();
    for name in &obs.orphans.volumes {
        let Some(index) = drive_index(obs.tags.get(TagResource::Volume, name)) else {
            continue;
        };
        let Some(o) = obs.volumes.get(&key(name)) else {
            continue;
        };
        if o.destroyed {
            continue;
        }
        let claim = obs.tags.claim_of(name);
        let release =
            opts.release_removed_workers && desired_workers > 0 && index >= desired_workers;
        if release && (claim.is_none() || opts.destroy_dynamic_drives) {
            out.released.insert(key(name));
            continue;
        }
        let why = match claim {
            Some(claim) => {
                out.dynamic.insert(index);
                out.held += usize::from(release);
                held_dynamic(index, claim, release)
            }
            None => format!(
                "drive of worker {index}, which the desired state no longer has: kept with its \
                 data until `--release-removed-workers` releases it, after `pxfa runbook scale-in`"
            ),
        };
        out.retained.push(
            Change::new(Action::Retain, Kind::Volume, name, why)
                .detail("size", Size::bytes(o.provisioned))
                .detail("worker", index),
        );
    }
    out
}

/// Why a removed worker's drive that the management Portworx created stays: an
/// array-side destroy would leave Portworx's volume record and the PV stale (#36
/// N6), as `destroy` holds them too.
fn held_dynamic(index: u32, claim: &str, release: bool) -> String {
    let asked = if release {
        "held, not destroyed on the array"
    } else {
        "kept with its data"
    };
    format!(
        "drive of worker {index} (claim {claim}), which the desired state no longer has: {asked}; \
         the management Portworx created it and releases it: set the claim's PV reclaim policy to \
         Delete, then delete the claim (`pxfa runbook scale-in`); `--release-removed-workers \
         --destroy-dynamic-drives` destroys it on the array instead (for a management Portworx \
         that is gone)"
    )
}

/// Destroys (recoverably) the live volumes tagged for the tenant that the desired
/// state no longer names, except the retained drives.
pub(crate) fn delete_orphans(obs: &Observed, retention: &Retention) -> Vec<Change> {
    let retained = retention.keys();
    let mut out = Vec::new();
    for name in &obs.orphans.volumes {
        if retained.contains(&key(name)) {
            continue;
        }
        let why = if retention.released.contains(&key(name)) {
            "drive of a removed worker, released (--release-removed-workers); destroyed, recoverable until eradicated"
        } else {
            "tagged for this tenant but no longer desired; destroyed, recoverable until eradicated"
        };
        if let Some(o) = obs.volumes.get(&key(name))
            && !o.destroyed
            && let Ok(vn) = VolumeName::new(name.as_str())
        {
            out.push(
                Change::new(Action::Delete, Kind::Volume, name, why)
                    .detail("size", Size::bytes(o.provisioned))
                    .with(Payload::Volume {
                        name: vn,
                        size: o.provisioned,
                        truncate: false,
                    }),
            );
        }
    }
    out
}
