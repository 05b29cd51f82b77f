//! The pure diff: desired state and observed state in, plan out. Each kind's file
//! plans its objects; this puts their changes in the order they take effect.

use std::collections::{BTreeMap, BTreeSet};

use super::change::{Action, Plan, PlanOptions};
use super::connections::{Usable, disconnects, plan_connections};
use super::drives::{DriveFacts, plan_drives};
use super::hosts::resolve_hosts;
use super::observed::{Observed, key};
use super::ownership::Claims;
use super::realm::plan_realm;
use super::token::plan_token;
use super::{host_groups, hosts, pods, volumes};
use crate::desired::DesiredState;

/// Computes the plan. Pure: no array access, same inputs give the same plan.
pub(crate) fn plan(desired: &DesiredState, observed: &Observed, opts: &PlanOptions) -> Plan {
    let obs = observed;
    let mut claims = Claims::new(&desired.tenant, &obs.tags, opts.adopt);
    let pods = pods::plan_pod(desired, obs, &mut claims);
    let (groups, usable_groups) = host_groups::plan_groups(desired, obs, &mut claims);
    // Hosts by identity: found by initiator among every host on the array.
    let resolved = resolve_hosts(desired, &obs.all_hosts, &obs.tags);
    claims.tag_changes.extend(resolved.tags);
    claims.conflicts.extend(resolved.conflicts);
    let desired_volumes = volumes::plan_volumes(desired, obs, opts, &mut claims);
    let mut refusals = desired_volumes.refusals;
    // Dynamically provisioned drives: found by tags or through their claims.
    let drive_plan = plan_drives(desired, drive_facts(obs));
    claims.tag_changes.extend(drive_plan.tags);
    claims.conflicts.extend(drive_plan.conflicts);
    let usable = Usable {
        volumes: desired_volumes.usable,
        targets: usable_groups
            .into_iter()
            .map(|g| (true, g))
            .chain(resolved.usable.into_iter().map(|h| (false, h)))
            .collect(),
    };
    let connections = plan_connections(desired, &obs.connections, &usable);
    claims.conflicts.extend(connections.conflicts);
    refusals.extend(connections.refusals);

    // Orphans: objects tagged for this tenant that the desired state dropped.
    let retention = volumes::retain_drives(desired, obs, opts);
    let retained = retention.keys();
    let orphan_volumes: BTreeSet<String> = obs
        .orphans
        .volumes
        .iter()
        .map(|n| key(n))
        .filter(|k| !retained.contains(k))
        .collect();
    let disconnects = disconnects(obs, &connections.wanted, &usable, &orphan_volumes);
    let volume_deletes = volumes::delete_orphans(obs, &retention);
    let (member_deletes, host_deletes) = hosts::delete_orphans(obs);
    let (group_deletes, group_refusals) = host_groups::delete_orphans(desired, obs);
    refusals.extend(group_refusals);
    let pod_deletes = pods::delete_orphans(obs);

    let realm = plan_realm(desired, (&obs.realm, &obs.tags), opts);
    claims.conflicts.extend(realm.conflicts);
    let token = match super::token::claimed_elsewhere(desired, &obs.tags).map_or_else(
        || plan_token(desired, (obs.token, obs.token_journal), realm.creates_admin),
        Err,
    ) {
        Ok(changes) => changes,
        Err(conflict) => {
            claims.conflicts.push(conflict);
            Vec::new()
        }
    };

    let held = retention.held_warning();
    let next_steps = retention
        .workers()
        .iter()
        .flat_map(|&w| {
            let dynamic = retention.dynamic.contains(&w);
            super::lifecycle::decommission_steps(&desired.tenant.name, w, dynamic)
        })
        .collect();
    let changes: Vec<_> = [
        retention.retained,
        realm.realm,
        pods,
        groups,
        resolved.hosts,
        resolved.members,
        desired_volumes.changes,
        drive_plan.volumes,
        claims.tag_changes,
        connections.changes,
        realm.user,
        token,
        disconnects,
        member_deletes,
        volume_deletes,
        host_deletes,
        group_deletes,
        pod_deletes,
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut plan = Plan::new(
        &desired.tenant,
        changes,
        claims.conflicts,
        refusals,
        desired_volumes.serials,
    );
    plan.host_map = resolved.map;
    plan.warnings = resolved.warnings;
    plan.warnings.extend(held);
    plan.notes = desired.notes.clone();
    plan.next_steps = next_steps;
    plan
}

fn drive_facts(obs: &Observed) -> DriveFacts<'_> {
    DriveFacts {
        drives: &obs.drives,
        tags: &obs.tags,
        volumes: &obs.volumes,
    }
}

/// Only the first tagging of the drives found through their bound claims: what a
/// destroy (which goes by tags) needs first, so that a tenant deleted before an
/// apply tagged its drives does not leave them in its pod. A drive pxfa cannot tell
/// apart (a claim matching two volumes, a volume tagged for another tenant) is not
/// tagged: it is a note, not a blocker, so the others are still taken. Pure.
pub(crate) fn plan_drive_adoption(desired: &DesiredState, obs: &Observed) -> Plan {
    let drives = plan_drives(desired, drive_facts(obs));
    let first_tagging = drives
        .tags
        .into_iter()
        .filter(|c| c.action == Action::Create)
        .collect();
    let mut plan = Plan::new(
        &desired.tenant,
        first_tagging,
        Vec::new(),
        Vec::new(),
        BTreeMap::new(),
    );
    plan.notes = drives
        .conflicts
        .iter()
        .map(|c| format!("not tagged: {} {}: {}", c.kind.label(), c.name, c.reason))
        .collect();
    plan
}

#[cfg(test)]
mod tests {
    use super::plan;
    use crate::driver::driver_for;
    use crate::plan::{Action, Observed, PlanOptions, TokenState};
    use crate::sizing::size;
    use crate::spec::parse_valid_spec;

    /// The plan against a fresh array (nothing there, the token user missing), from
    /// an observation built by hand: a stage of the pipeline on its own.
    #[test]
    fn plan_text_names_the_realm_objects() {
        let yaml = include_str!("../../../../examples/tenant-cloud-drive-realm.yaml");
        let spec = parse_valid_spec(yaml).unwrap();
        let d = driver_for(&spec)
            .desired_state(&spec, &size(&spec, None).unwrap())
            .unwrap();
        let fresh = Observed {
            token: TokenState::AdminMissing,
            ..Default::default()
        };
        let p = plan(&d, &fresh, &PlanOptions::default());
        let text = p.to_text(false);
        for line in [
            "+ create realm tenant-cdr-realm",
            "+ create pod tenant-cdr-realm::tenant-cdr",
            "+ create access policy pxfa-tenant-cdr",
            "+ create realm user pxfa-tenant-cdr",
            "+ create api token of pxfa-tenant-cdr",
        ] {
            assert!(text.contains(line), "{line:?} not in\n{text}");
        }
        assert!(p.changes.iter().all(|c| c.action == Action::Create));
    }
}
