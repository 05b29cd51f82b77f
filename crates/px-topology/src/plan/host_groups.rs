//! The tenant's host groups: reading them (and the members of the ones it no longer
//! wants), and their part of the plan.
//!
//! A group the desired state drops is deleted only when nothing but hosts pxfa
//! manages is in it; a group still holding other hosts is kept, as a refusal.

use std::collections::{BTreeMap, BTreeSet};

use flasharray::models::HostGroup;
use flasharray::{
    ErrorKind, FlashArray, FlashArrayExt, HostGroupName, MemberParams, Result, TagResource,
};
use futures_util::future::try_join_all;

use super::change::{Action, Blocker, Change, Kind, Payload};
use super::observed::{Observed, key};
use super::ownership::Claims;
use crate::desired::DesiredState;

/// The named host groups that exist.
pub(crate) async fn lookup_host_groups(
    array: &dyn FlashArray,
    names: &[String],
) -> Result<Vec<HostGroup>> {
    array.lookup_host_groups(names).await
}

/// The members of each of `groups`, by lower-cased group name (a group that is
/// gone has none).
pub(crate) async fn read_members(
    array: &dyn FlashArray,
    groups: &[String],
) -> Result<BTreeMap<String, Vec<String>>> {
    let calls = groups.iter().map(|g| async move {
        let m = array
            .list_host_group_members(&MemberParams {
                group_names: vec![g.clone()],
                member_names: vec![],
            })
            .await;
        match m {
            Ok(m) => Ok((
                key(g),
                m.into_iter()
                    .filter_map(|m| m.member.name)
                    .collect::<Vec<_>>(),
            )),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok((key(g), vec![])),
            Err(e) => Err(e),
        }
    });
    Ok(try_join_all(calls).await?.into_iter().collect())
}

/// The desired groups' changes, and the lower-cased names of the groups pxfa may
/// connect volumes to.
pub(crate) fn plan_groups(
    desired: &DesiredState,
    obs: &Observed,
    claims: &mut Claims<'_>,
) -> (Vec<Change>, BTreeSet<String>) {
    let mut changes = Vec::new();
    let mut usable = BTreeSet::new();
    for dg in &desired.host_groups {
        let name = dg.name.as_str();
        let Some(o) = obs.host_groups.get(&key(name)) else {
            changes.push(
                Change::new(Action::Create, Kind::HostGroup, name, "not on the array").with(
                    Payload::HostGroup {
                        name: dg.name.clone(),
                    },
                ),
            );
            usable.insert(key(name));
            continue;
        };
        let pristine = o.host_count.unwrap_or(0) == 0 && o.connection_count.unwrap_or(0) == 0;
        let kind = (Kind::HostGroup, TagResource::HostGroup);
        if claims.claim(kind, name, dg.scope, &dg.tags, pristine) {
            changes.push(Change::new(
                Action::NoOp,
                Kind::HostGroup,
                name,
                "as desired",
            ));
            usable.insert(key(name));
        }
    }
    (changes, usable)
}

/// The deletions of the groups tagged for the tenant that the desired state no
/// longer names, and the refusals for those still holding hosts pxfa does not manage.
pub(crate) fn delete_orphans(
    desired: &DesiredState,
    obs: &Observed,
) -> (Vec<Change>, Vec<Blocker>) {
    let orphan_hosts: BTreeSet<String> = obs.orphans.hosts.iter().map(|h| key(h)).collect();
    let desired_hosts: BTreeSet<String> = desired.hosts.iter().map(|h| h.name.key()).collect();
    let mut deletes = Vec::new();
    let mut refusals = Vec::new();
    for name in &obs.orphans.host_groups {
        if !obs.host_groups.contains_key(&key(name)) {
            continue;
        }
        let Ok(gn) = HostGroupName::new(name.as_str()) else {
            continue;
        };
        let strangers: Vec<&str> = obs
            .group_members
            .get(&key(name))
            .into_iter()
            .flatten()
            .filter(|m| !orphan_hosts.contains(&key(m)) && !desired_hosts.contains(&key(m)))
            .map(String::as_str)
            .collect();
        if !strangers.is_empty() {
            refusals.push(Blocker {
                kind: Kind::HostGroup,
                name: name.clone(),
                reason: format!(
                    "no longer desired but still holds hosts pxfa does not manage ({}); kept",
                    strangers.join(", ")
                ),
                resolution: "remove those hosts from the group by hand, then apply again".into(),
            });
            continue;
        }
        deletes.push(
            Change::new(
                Action::Delete,
                Kind::HostGroup,
                name,
                "tagged for this tenant but no longer desired",
            )
            .with(Payload::HostGroup { name: gn }),
        );
    }
    (deletes, refusals)
}
