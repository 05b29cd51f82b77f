//! Connections of the tenant's volumes to hosts and host groups: reading them, and
//! their part of the plan.
//!
//! A connection is made only between objects pxfa may act on (neither in conflict),
//! and a LUN is never changed (that disconnects the volume): a different LUN is a
//! refusal. Connections pxfa no longer wants are removed only when pxfa owns one
//! side of them.

use std::collections::BTreeSet;

use flasharray::models::Connection;
use flasharray::{
    ConnectionParams, ConnectionTarget, ErrorKind, FlashArray, HostGroupName, HostName, Result,
    TagResource, VolumeName, membership_filter,
};
use futures_util::future::try_join_all;

use super::change::{Action, Blocker, Change, Kind, MAX_NAMES_PER_CALL, Payload};
use super::observed::{Observed, key};
use crate::desired::{DesiredState, TenantId};

/// Connections of the given volumes, hosts and host groups, one call per chunk of
/// names and side, concurrently, by membership filter (`volume.name=(...)`), so that
/// missing names simply have no rows; without duplicate rows.
pub(crate) async fn list_connections_of(
    array: &dyn FlashArray,
    volumes: &[String],
    hosts: &[String],
    groups: &[String],
) -> Result<Vec<Connection>> {
    let mut params = Vec::new();
    for (field, names) in [
        ("volume.name", volumes),
        ("host.name", hosts),
        ("host_group.name", groups),
    ] {
        for c in names.chunks(MAX_NAMES_PER_CALL) {
            params.push(ConnectionParams {
                filter: Some(membership_filter(field, c)),
                ..Default::default()
            });
        }
    }
    let calls = params.iter().map(|p| async move {
        match array.list_connections(p).await {
            Ok(rows) => Ok(rows),
            // Nothing matched the filter.
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    });
    let rows = try_join_all(calls).await?.into_iter().flatten().collect();
    Ok(dedup_rows(rows))
}

/// `rows` without repeats of the same host, group and volume (names ignore case).
pub(crate) fn dedup_rows(rows: Vec<Connection>) -> Vec<Connection> {
    let mut seen = BTreeSet::new();
    rows.into_iter()
        .filter(|c| {
            seen.insert((
                c.host.name.as_deref().map(key),
                c.host_group.name.as_deref().map(key),
                c.volume.name.as_deref().map(key),
            ))
        })
        .collect()
}

/// The rows the tenant's plan looks at: of live volumes that exist, and of the
/// tenant's own hosts and groups (by the tags the array holds, not the desired
/// state).
pub(crate) fn tenant_rows(
    rows: Vec<Connection>,
    obs: &Observed,
    tenant: &TenantId,
) -> Vec<Connection> {
    let mine = |kind: TagResource, name: &str| obs.tags.is_tenants(kind, name, tenant);
    let live = |v: &str| obs.volumes.get(&key(v)).is_some_and(|v| !v.destroyed);
    let keep = |c: &Connection| {
        c.volume.name.as_deref().is_some_and(live)
            || c.host
                .name
                .as_deref()
                .is_some_and(|h| obs.hosts.contains_key(&key(h)) && mine(TagResource::Host, h))
            || c.host_group.name.as_deref().is_some_and(|g| {
                obs.host_groups.contains_key(&key(g)) && mine(TagResource::HostGroup, g)
            })
    };
    dedup_rows(rows).into_iter().filter(keep).collect()
}

/// The side of an observed connection row: the group for shared LUNs, else the host.
pub(crate) fn row_target(c: &Connection) -> Option<ConnectionTarget> {
    if let Some(g) = c.host_group.name.as_deref() {
        return HostGroupName::new(g).ok().map(ConnectionTarget::HostGroup);
    }
    c.host
        .name
        .as_deref()
        .and_then(|h| HostName::new(h).ok())
        .map(ConnectionTarget::Host)
}

/// A target as a key: (is a group, lower-cased name).
pub(crate) type TargetKey = (bool, String);

pub(crate) fn target_key(t: &ConnectionTarget) -> TargetKey {
    (matches!(t, ConnectionTarget::HostGroup(_)), key(t.name()))
}

fn connection_name(volume: &str, target: &ConnectionTarget) -> String {
    format!("{volume} -> {}", target.name())
}

/// The objects connections may be made between or removed from, by key.
#[derive(Debug, Default)]
pub(crate) struct Usable {
    /// Volumes pxfa may act on.
    pub(crate) volumes: BTreeSet<String>,
    /// Hosts and groups pxfa may act on.
    pub(crate) targets: BTreeSet<TargetKey>,
}

/// The desired connections' part of a plan.
#[derive(Debug, Default)]
pub(crate) struct ConnectionPlan {
    /// Connects and no-ops.
    pub(crate) changes: Vec<Change>,
    /// A desired connection naming a volume the desired state lacks (a bug).
    pub(crate) conflicts: Vec<Blocker>,
    /// LUNs pxfa will not change.
    pub(crate) refusals: Vec<Blocker>,
    /// The desired (target, volume) pairs.
    pub(crate) wanted: BTreeSet<(TargetKey, String)>,
}

/// Plans every desired connection between usable objects.
pub(crate) fn plan_connections(
    desired: &DesiredState,
    rows: &[Connection],
    usable: &Usable,
) -> ConnectionPlan {
    let mut out = ConnectionPlan::default();
    for dc in &desired.connections {
        let vol = dc.volume.as_str();
        let tk = target_key(&dc.target);
        out.wanted.insert((tk.clone(), key(vol)));
        let name = connection_name(vol, &dc.target);
        if !usable.volumes.contains(&key(vol)) || !usable.targets.contains(&tk) {
            // The volume or the target is in conflict (already reported) or not in the
            // desired state at all.
            if !desired.volumes.iter().any(|v| v.name == dc.volume) {
                out.conflicts.push(Blocker {
                    kind: Kind::Connection,
                    name,
                    reason: "names a volume the desired state does not contain".into(),
                    resolution: "this is a pxfa bug: report it with the spec".into(),
                });
            }
            continue;
        }
        let found = rows.iter().find(|c| {
            c.volume
                .name
                .as_deref()
                .is_some_and(|v| v.eq_ignore_ascii_case(vol))
                && row_target(c).is_some_and(|t| target_key(&t) == tk)
        });
        match found {
            Some(c) => match dc.lun {
                Some(l) if c.lun != Some(l) => out.refusals.push(Blocker {
                    kind: Kind::Connection,
                    name,
                    reason: format!("connected with LUN {:?}, desired LUN {l}; changing a LUN disconnects the volume, do it by hand", c.lun),
                    resolution: "reconnect the volume by hand at the desired LUN, or drop the fixed LUN".into(),
                }),
                _ => out.changes.push(Change::new(Action::NoOp, Kind::Connection, name, "as desired")),
            },
            None => {
                let mut c = Change::new(Action::Create, Kind::Connection, name, "not connected");
                if let Some(l) = dc.lun {
                    c = c.detail("lun", l);
                }
                out.changes.push(c.with(Payload::Connection { target: dc.target.clone(), volume: dc.volume.clone(), lun: dc.lun }));
            }
        }
    }
    out
}

/// Disconnects the observed connections pxfa no longer wants: between usable
/// objects, or of an object the desired state dropped (`orphan_volumes` without the
/// retained drives; the orphan hosts and groups).
pub(crate) fn disconnects(
    obs: &Observed,
    wanted: &BTreeSet<(TargetKey, String)>,
    usable: &Usable,
    orphan_volumes: &BTreeSet<String>,
) -> Vec<Change> {
    let orphan_targets: BTreeSet<TargetKey> = obs
        .orphans
        .hosts
        .iter()
        .map(|h| (false, key(h)))
        .chain(obs.orphans.host_groups.iter().map(|g| (true, key(g))))
        .collect();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for row in &obs.connections {
        let (Some(vol), Some(target)) = (row.volume.name.as_deref(), row_target(row)) else {
            continue;
        };
        let pair = (target_key(&target), key(vol));
        if wanted.contains(&pair) || !seen.insert(pair.clone()) {
            continue;
        }
        let (tk, vk) = pair;
        let ours_pair = usable.volumes.contains(&vk)
            && (usable.targets.contains(&tk) || orphan_targets.contains(&tk));
        let dropped = orphan_volumes.contains(&vk) || orphan_targets.contains(&tk);
        if !(ours_pair || dropped) {
            continue;
        }
        let Ok(volume) = VolumeName::new(vol) else {
            continue;
        };
        out.push(
            Change::new(
                Action::Delete,
                Kind::Connection,
                connection_name(vol, &target),
                "connection no longer desired",
            )
            .with(Payload::Connection {
                target,
                volume,
                lun: row.lun,
            }),
        );
    }
    out
}
