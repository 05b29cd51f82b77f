//! What removing a tenant takes, from one observation and without touching the
//! array: the removals in the order they take effect, what is kept and why, and
//! the calls that carry them out (`converge` runs exactly these).
//!
//! Only objects tagged `managed-by=pxfa` for this tenant (`tenant` and
//! `tenant-namespace`) go (see `ownership`): shared management objects
//! (`scope=shared`), other tenants' objects, an earlier pxfa's unclaimed ones and
//! untagged objects are reported as kept. The calls come in dependent rounds, in reverse dependency
//! order: disconnect; destroy volumes and leave host groups; eradicate volumes (if
//! asked) and delete hosts; destroy the pod and delete groups; eradicate the pod
//! (if asked), the token, and the realm (`destroy/realm.rs`).

mod realm;
mod steps;

use std::collections::{BTreeMap, BTreeSet};

use flasharray::models::{Host, HostGroup, Pod, Volume};
use flasharray::{ConnectionTarget, HostGroupName, HostName, PodName, TagResource, VolumeName};

use super::change::{Action, Blocker, Change, Kind, MAX_NAMES_PER_CALL, Plan};
use super::connections::row_target;
use super::observed::{Observed, key};
use super::ownership::{is_tenants, kept_reason};
use super::token::TokenState;
use crate::desired::{DesiredApiToken, DesiredState, TenantId};
use realm::RealmRemoval;
pub use steps::DestroyScope;
use steps::{After, Steps};
pub(crate) use steps::{Removal, Step};

/// Why destroy did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DestroyError {
    /// Reading the array failed.
    #[error("reading the array: {0}")]
    Observe(#[from] flasharray::Error),
    /// Nothing on the array is tagged for the tenant: refusing a destructive call
    /// with an empty selection (wrong tenant name, wrong array, already gone).
    #[error("nothing on the array is tagged for tenant {tenant}; nothing to destroy")]
    NothingSelected {
        /// The tenant.
        tenant: TenantId,
    },
}

/// What `plan_destroy` decided: the changes in the order they take effect, what
/// is kept and why, and the calls that carry the changes out. The destroy runs
/// exactly these calls, so a preview (`pxfa plan --destroy`, the confirmation
/// prompt) lists what goes.
#[derive(Debug)]
pub struct DestroyPlan {
    /// The tenant.
    pub tenant: TenantId,
    /// Every removal, in order (all `delete`).
    pub changes: Vec<Change>,
    /// Objects of the desired state that are present but not this tenant's.
    pub kept: Vec<Blocker>,
    pub(crate) steps: Vec<Step>,
    /// The steps that eradicate: a SafeMode refusal there is pending, not failed.
    pub(crate) eradications: Vec<usize>,
}

impl DestroyPlan {
    /// The preview as a [`Plan`], for the plan's text, JSON, YAML and pictures; kept
    /// objects are notes (they block nothing).
    pub fn to_plan(&self) -> Plan {
        let mut plan = Plan::new(
            &self.tenant,
            self.changes.clone(),
            Vec::new(),
            Vec::new(),
            BTreeMap::new(),
        );
        plan.notes = self
            .kept
            .iter()
            .map(|k| format!("kept {} {}: {}", k.kind.label(), k.name, k.reason))
            .collect();
        plan
    }
}

/// The tenant's objects among those observed; the others are kept.
struct Selection<'a> {
    volumes: Vec<&'a Volume>,
    hosts: Vec<&'a Host>,
    groups: Vec<&'a HostGroup>,
    pods: Vec<&'a Pod>,
    token: Option<&'a DesiredApiToken>,
    realm: RealmRemoval,
    kept: Vec<Blocker>,
    /// Drives are left for the management Portworx to release (a destroy with
    /// nothing else to remove is then an empty plan, not "nothing tagged").
    held: bool,
}

impl<'a> Selection<'a> {
    fn of(obs: &'a Observed, desired: &'a DesiredState, scope: DestroyScope) -> Self {
        let tenant = &desired.tenant;
        let mut kept = Vec::new();
        let mut ours = |kind: Kind, resource: TagResource, name: &str| {
            let tags = obs.tags.get(resource, name);
            let mine = is_tenants(tags, tenant);
            if !mine {
                kept.push(Blocker {
                    kind,
                    name: name.to_string(),
                    reason: format!("kept: {}", kept_reason(tags, tenant)),
                    resolution: "nothing to do: pxfa keeps what is not this tenant's".to_string(),
                });
            }
            mine
        };
        let mut volumes: Vec<&Volume> = (obs.volumes.values())
            .filter(|v| ours(Kind::Volume, TagResource::Volume, &v.name))
            .collect();
        let hosts = (obs.hosts.values())
            .filter(|h| ours(Kind::Host, TagResource::Host, &h.name))
            .collect();
        let groups = (obs.host_groups.values())
            .filter(|g| ours(Kind::HostGroup, TagResource::HostGroup, &g.name))
            .collect();
        let mut pods: Vec<&Pod> = (obs.pods.values())
            .filter(|p| ours(Kind::Pod, TagResource::Pod, &p.name))
            .collect();
        let mut realm = realm::select(obs, desired, scope, &mut kept);
        let held = !scope.destroy_dynamic_drives
            && hold_dynamic_drives(obs, &mut volumes, &mut kept).is_some_and(|in_pods| {
                hold_their_places(&in_pods, &mut pods, &mut realm, &mut kept)
            });
        // A realm user pxfa deletes takes its token with it. The user's name derives
        // from the tenant's name alone: its token is this tenant's only beside
        // objects tagged for this tenant (never a same-named tenant's of another
        // namespace).
        let owns_objects = !(volumes.is_empty() && pods.is_empty());
        // The management Portworx may still need the token to release the drives.
        let token = (desired.api_token.as_ref())
            .filter(|_| scope.delete_token && obs.token == TokenState::HasToken && owns_objects)
            .filter(|_| !held)
            .filter(|t| !realm.deletes_user(&t.admin))
            .filter(|t| keeps_anothers_token(obs, t, &mut kept));
        Selection {
            volumes,
            hosts,
            groups,
            pods,
            token,
            realm,
            kept,
            held,
        }
    }

    fn is_empty(&self) -> bool {
        self.realm.is_empty()
            && self.volumes.is_empty()
            && self.hosts.is_empty()
            && self.groups.is_empty()
            && self.pods.is_empty()
            && self.token.is_none()
    }
}

/// How a kept dynamic drive's reason begins (and what keeps its pod and realm).
const RELEASED_BY_PORTWORX: &str = "kept: released through the management Portworx";

/// Whether `b` is a live dynamic drive (or what it keeps) held for the management
/// Portworx to release.
pub(crate) fn is_held_dynamic_drive(b: &Blocker) -> bool {
    b.reason.starts_with(RELEASED_BY_PORTWORX)
}

/// The live drives the management Portworx created (dynamic provisioning: pxfa
/// tagged them with their claim) leave `volumes` for `kept`: they are released
/// through Portworx, whose volume records and PVs an array-side destroy would leave
/// stale. Destroyed ones stay in `volumes` (Portworx already released them; only
/// their eradication is pxfa's). Returns the held drives' pods (keys), `None` when
/// no drive is held.
fn hold_dynamic_drives(
    obs: &Observed,
    volumes: &mut Vec<&Volume>,
    kept: &mut Vec<Blocker>,
) -> Option<BTreeSet<String>> {
    let mut pods = BTreeSet::new();
    let before = volumes.len();
    volumes.retain(|v| {
        let claim = obs.tags.claim_of(&v.name);
        let Some(claim) = claim.filter(|_| !v.destroyed) else {
            return true;
        };
        if let Some(pod) = VolumeName::new(v.name.as_str()).ok().and_then(|n| n.pod().map(key)) {
            pods.insert(pod);
        }
        kept.push(Blocker {
            kind: Kind::Volume,
            name: v.name.clone(),
            reason: format!(
                "{RELEASED_BY_PORTWORX}, which created it for claim {claim} (dynamic provisioning)"
            ),
            resolution: "set its PV's reclaim policy to Delete and delete the claim (`pxfa runbook delete`); \
                 or, with the management Portworx gone, `pxfa destroy --destroy-dynamic-drives`"
                .to_string(),
        });
        false
    });
    (volumes.len() < before).then_some(pods)
}

/// A pod holding a drive Portworx still has to release stays, and so do the realm
/// around it (the array refuses to destroy either while they hold a live volume).
/// Always `true`: something is held.
fn hold_their_places(
    held: &BTreeSet<String>,
    pods: &mut Vec<&Pod>,
    realm: &mut RealmRemoval,
    kept: &mut Vec<Blocker>,
) -> bool {
    pods.retain(|p| {
        if p.destroyed || !held.contains(&key(&p.name)) {
            return true;
        }
        kept.push(Blocker {
            kind: Kind::Pod,
            name: p.name.clone(),
            reason: format!(
                "{RELEASED_BY_PORTWORX}: it holds drives Portworx has not released yet"
            ),
            resolution: "destroy again once the management Portworx released the drives"
                .to_string(),
        });
        false
    });
    realm.hold(kept, RELEASED_BY_PORTWORX);
    true
}

/// Whether `token`'s user is free of other tenants (`true`: it may go); a user
/// another tenant's objects may use (`TagIndex::note_token_claimants`) is kept,
/// with the reason.
fn keeps_anothers_token(obs: &Observed, token: &DesiredApiToken, kept: &mut Vec<Blocker>) -> bool {
    let others = obs.tags.token_claimants();
    if others.is_empty() {
        return true;
    }
    kept.push(Blocker {
        kind: Kind::ApiToken,
        name: token.admin.clone(),
        reason: format!(
            "kept: array user {} is {others} too, whose objects are on the array",
            token.admin
        ),
        resolution: "delete the token by hand once no tenant uses it".to_string(),
    });
    false
}

/// What was disconnected: the calls per volume and per (is a group, target).
#[derive(Default)]
struct Disconnected {
    volumes: After,
    targets: BTreeMap<(bool, String), Vec<usize>>,
}

/// What would be destroyed, from an observation. Pure: no array access.
pub(crate) fn plan_destroy(
    obs: &Observed,
    desired: &DesiredState,
    scope: impl Into<DestroyScope>,
) -> Result<DestroyPlan, DestroyError> {
    let scope = scope.into();
    let sel = Selection::of(obs, desired, scope);
    if sel.is_empty() && !sel.held {
        return Err(DestroyError::NothingSelected {
            tenant: desired.tenant.clone(),
        });
    }
    let mut s = Steps::default();
    let disconnected = disconnect(obs, &sel, &mut s);
    let (destroyed, destroyed_in_pod) = destroy_volumes(&sel, &disconnected, &mut s);
    let (left_host, left_group) = leave_groups(&sel, &mut s);
    let eradicated_in_pod = if scope.eradicate {
        eradicate_volumes(&sel, &destroyed, &mut s)
    } else {
        After::new()
    };
    let host_deletes = delete_hosts(&sel, &disconnected, &left_host, &mut s);
    let pod_destroys = destroy_pods(&sel, &destroyed_in_pod, &mut s);
    delete_groups(&sel, (&disconnected, &left_group), &host_deletes, &mut s);
    let mut pods_gone: After = (pod_destroys.iter())
        .map(|(p, n)| (p.clone(), vec![*n]))
        .collect();
    if scope.eradicate {
        eradicate_pods(
            &sel,
            (&eradicated_in_pod, &pod_destroys),
            &mut pods_gone,
            &mut s,
        );
    }
    if let Some(t) = sel.token {
        let id = s.change(Change::new(
            Action::Delete,
            Kind::ApiToken,
            &t.admin,
            "tenant destroyed (delete_token)",
        ));
        s.add(Removal::DeleteToken(t.admin.clone()), vec![], vec![id]);
    }
    realm::add(&sel.realm, scope, &mut s, &pods_gone);
    Ok(DestroyPlan {
        tenant: desired.tenant.clone(),
        changes: s.changes,
        kept: sel.kept,
        steps: s.steps,
        eradications: s.eradications,
    })
}

/// Disconnects every connection of our volumes, and of our hosts and groups, one
/// call per target and batch of volumes.
fn disconnect(obs: &Observed, sel: &Selection<'_>, s: &mut Steps) -> Disconnected {
    let our_volumes: BTreeSet<String> = sel.volumes.iter().map(|v| key(&v.name)).collect();
    let our_hosts: BTreeSet<String> = sel.hosts.iter().map(|h| key(&h.name)).collect();
    let our_groups: BTreeSet<String> = sel.groups.iter().map(|g| key(&g.name)).collect();
    let mut by_target: BTreeMap<(bool, String), (ConnectionTarget, Vec<VolumeName>)> =
        BTreeMap::new();
    for row in &obs.connections {
        let (Some(vol), Some(target)) = (row.volume.name.as_deref(), row_target(row)) else {
            continue;
        };
        let is_group = matches!(target, ConnectionTarget::HostGroup(_));
        let ours = if is_group { &our_groups } else { &our_hosts };
        let target_ours = ours.contains(&key(target.name()));
        if !our_volumes.contains(&key(vol)) && !target_ours {
            continue;
        }
        let Ok(vn) = VolumeName::new(vol) else {
            continue;
        };
        let entry = (by_target.entry((is_group, key(target.name()))))
            .or_insert_with(|| (target.clone(), Vec::new()));
        if !entry.1.contains(&vn) {
            entry.1.push(vn);
        }
    }
    let mut out = Disconnected::default();
    for (target_key, (target, volumes)) in by_target {
        for chunk in volumes.chunks(MAX_NAMES_PER_CALL) {
            let ids: Vec<usize> = (chunk.iter())
                .map(|v| {
                    let name = format!("{v} -> {}", target.name());
                    s.change(Change::new(
                        Action::Delete,
                        Kind::Connection,
                        name,
                        "tenant destroyed",
                    ))
                })
                .collect();
            let call = Removal::Disconnect {
                target: target.clone(),
                volumes: chunk.to_vec(),
            };
            let n = s.add(call, vec![], ids);
            for v in chunk {
                out.volumes.entry(v.key()).or_default().push(n);
            }
            out.targets.entry(target_key.clone()).or_default().push(n);
        }
    }
    out
}

/// Destroys the live volumes once disconnected; the destroy call per volume, and
/// the destroy calls per pod.
fn destroy_volumes(
    sel: &Selection<'_>,
    disc: &Disconnected,
    s: &mut Steps,
) -> (BTreeMap<String, usize>, After) {
    let mut per_volume = BTreeMap::new();
    let mut in_pod = After::new();
    let live: Vec<VolumeName> = (sel.volumes.iter())
        .filter(|v| !v.destroyed)
        .filter_map(|v| VolumeName::new(v.name.as_str()).ok())
        .collect();
    for chunk in live.chunks(MAX_NAMES_PER_CALL) {
        let ids = s.deletes(
            Kind::Volume,
            chunk,
            "tenant destroyed; recoverable until eradicated",
        );
        let after = (chunk.iter())
            .flat_map(|v| disc.volumes.get(&v.key()).cloned().unwrap_or_default())
            .collect();
        let n = s.add(Removal::DestroyVolumes(chunk.to_vec()), after, ids);
        for v in chunk {
            per_volume.insert(v.key(), n);
            if let Some(p) = v.pod() {
                in_pod.entry(key(p)).or_default().push(n);
            }
        }
    }
    (per_volume, in_pod)
}

/// Takes our hosts out of their groups; the calls per host and per group.
fn leave_groups(sel: &Selection<'_>, s: &mut Steps) -> (After, After) {
    let mut by_group: BTreeMap<String, (HostGroupName, Vec<HostName>)> = BTreeMap::new();
    for h in &sel.hosts {
        if let (Some(gname), Ok(hn)) =
            (h.host_group.name.as_deref(), HostName::new(h.name.as_str()))
            && let Ok(gn) = HostGroupName::new(gname)
        {
            (by_group.entry(key(gname)))
                .or_insert_with(|| (gn, Vec::new()))
                .1
                .push(hn);
        }
    }
    let mut left_host = After::new();
    let mut left_group = After::new();
    for (gkey, (group, members)) in by_group {
        for chunk in members.chunks(MAX_NAMES_PER_CALL) {
            let ids = (chunk.iter())
                .map(|h| {
                    let name = format!("{h} -> {group}");
                    s.change(Change::new(
                        Action::Delete,
                        Kind::HostGroupMembership,
                        name,
                        "tenant destroyed",
                    ))
                })
                .collect();
            let call = Removal::RemoveMembers {
                group: group.clone(),
                hosts: chunk.to_vec(),
            };
            let n = s.add(call, vec![], ids);
            for h in chunk {
                left_host.entry(h.key()).or_default().push(n);
            }
            left_group.entry(gkey.clone()).or_default().push(n);
        }
    }
    (left_host, left_group)
}

/// Eradicates every volume once destroyed; the eradication calls per pod.
fn eradicate_volumes(
    sel: &Selection<'_>,
    destroyed: &BTreeMap<String, usize>,
    s: &mut Steps,
) -> After {
    let mut in_pod = After::new();
    let all: Vec<VolumeName> = (sel.volumes.iter())
        .filter_map(|v| VolumeName::new(v.name.as_str()).ok())
        .collect();
    for chunk in all.chunks(MAX_NAMES_PER_CALL) {
        let ids = s.eradications(Kind::Volume, chunk);
        let after = (chunk.iter())
            .filter_map(|v| destroyed.get(&v.key()).copied())
            .collect();
        let n = s.add(Removal::EradicateVolumes(chunk.to_vec()), after, ids);
        s.eradications.push(n);
        for v in chunk {
            if let Some(p) = v.pod() {
                in_pod.entry(key(p)).or_default().push(n);
            }
        }
    }
    in_pod
}

/// Deletes our hosts once disconnected and out of their groups; the calls.
fn delete_hosts(
    sel: &Selection<'_>,
    disc: &Disconnected,
    left: &After,
    s: &mut Steps,
) -> Vec<usize> {
    let names: Vec<HostName> = (sel.hosts.iter())
        .filter_map(|h| HostName::new(h.name.as_str()).ok())
        .collect();
    let mut calls = Vec::new();
    for chunk in names.chunks(MAX_NAMES_PER_CALL) {
        let ids = s.deletes(Kind::Host, chunk, "tenant destroyed");
        let mut after = Vec::new();
        for h in chunk {
            after.extend(
                disc.targets
                    .get(&(false, h.key()))
                    .cloned()
                    .unwrap_or_default(),
            );
            after.extend(left.get(&h.key()).cloned().unwrap_or_default());
        }
        calls.push(s.add(Removal::DeleteHosts(chunk.to_vec()), after, ids));
    }
    calls
}

/// Destroys our live pods once their volumes are destroyed; the call per pod.
fn destroy_pods(
    sel: &Selection<'_>,
    destroyed_in_pod: &After,
    s: &mut Steps,
) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for p in sel.pods.iter().filter(|p| !p.destroyed) {
        let Ok(pn) = PodName::new(p.name.as_str()) else {
            continue;
        };
        let ids = s.deletes(
            Kind::Pod,
            &[p.name.as_str()],
            "tenant destroyed; recoverable until eradicated",
        );
        let after = destroyed_in_pod
            .get(&key(&p.name))
            .cloned()
            .unwrap_or_default();
        out.insert(
            key(&p.name),
            s.add(Removal::DestroyPods(vec![pn]), after, ids),
        );
    }
    out
}

/// Deletes our groups once disconnected, emptied and their hosts deleted.
fn delete_groups(
    sel: &Selection<'_>,
    (disc, left): (&Disconnected, &After),
    host_deletes: &[usize],
    s: &mut Steps,
) {
    for grp in &sel.groups {
        let Ok(gn) = HostGroupName::new(grp.name.as_str()) else {
            continue;
        };
        let ids = s.deletes(Kind::HostGroup, &[grp.name.as_str()], "tenant destroyed");
        let mut after = disc
            .targets
            .get(&(true, key(&grp.name)))
            .cloned()
            .unwrap_or_default();
        after.extend(left.get(&key(&grp.name)).cloned().unwrap_or_default());
        after.extend(host_deletes.iter().copied());
        s.add(Removal::DeleteHostGroups(vec![gn]), after, ids);
    }
}

/// Eradicates every pod of ours once its volumes are eradicated and it is destroyed;
/// adds the calls to `pods_gone`.
fn eradicate_pods(
    sel: &Selection<'_>,
    (eradicated_in_pod, destroys): (&After, &BTreeMap<String, usize>),
    pods_gone: &mut After,
    s: &mut Steps,
) {
    for p in &sel.pods {
        let Ok(pn) = PodName::new(p.name.as_str()) else {
            continue;
        };
        let ids = s.eradications(Kind::Pod, &[p.name.as_str()]);
        let mut after = eradicated_in_pod
            .get(&key(&p.name))
            .cloned()
            .unwrap_or_default();
        after.extend(destroys.get(&key(&p.name)).copied());
        let n = s.add(Removal::EradicatePods(vec![pn]), after, ids);
        s.eradications.push(n);
        pods_gone.entry(key(&p.name)).or_default().push(n);
    }
}
