//! The pure diff: desired state and observed state in, plan out.

use std::collections::{BTreeMap, BTreeSet};

use flasharray::models::{Connection, Tag};
use flasharray::{
    ConnectionTarget, HostGroupName, HostName, PodName, Size, TagResource, VolumeName,
};

use super::hosts::resolve_hosts;
use super::observe::{Observed, TokenJournal, TokenState};
use super::{Action, Blocker, Change, Detail, Kind, Payload, Plan, PlanOptions};
use crate::desired::{
    DesiredState, MANAGED_BY_VALUE, SCOPE_SHARED, Scope, TAG_MANAGED_BY, TAG_NAMESPACE, TAG_NODE,
    TAG_ROLE, TAG_SCOPE, TAG_TENANT,
};

/// Who owns an object, from its `pxfa.io` tags.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Owner<'a> {
    /// Tagged for this tenant.
    Tenant,
    /// Tagged as a shared management object.
    Shared,
    /// Tagged for another tenant.
    OtherTenant(&'a str),
    /// No usable pxfa tags.
    Unmanaged,
}

pub(super) fn owner<'a>(tags: Option<&'a BTreeMap<String, String>>, tenant: &str) -> Owner<'a> {
    let Some(tags) = tags else {
        return Owner::Unmanaged;
    };
    if tags.get(TAG_MANAGED_BY).map(String::as_str) != Some(MANAGED_BY_VALUE) {
        return Owner::Unmanaged;
    }
    match tags.get(TAG_TENANT) {
        Some(t) if t == tenant => Owner::Tenant,
        Some(t) => Owner::OtherTenant(t),
        None if tags.get(TAG_SCOPE).map(String::as_str) == Some(SCOPE_SHARED) => Owner::Shared,
        None => Owner::Unmanaged,
    }
}

pub(super) fn to_tags(resource: &str, tags: &BTreeMap<String, String>) -> Vec<Tag> {
    tags.iter()
        .map(|(k, v)| Tag::new(resource, TAG_NAMESPACE, k, v))
        .collect()
}

fn key(s: &str) -> String {
    s.to_ascii_lowercase()
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

fn target_key(t: &ConnectionTarget) -> (bool, String) {
    (matches!(t, ConnectionTarget::HostGroup(_)), key(t.name()))
}

fn connection_name(volume: &str, target: &ConnectionTarget) -> String {
    format!("{volume} -> {}", target.name())
}

struct Planner<'a> {
    tenant: &'a str,
    obs: &'a Observed,
    opts: PlanOptions,
    conflicts: Vec<Blocker>,
    refusals: Vec<Blocker>,
    tag_changes: Vec<Change>,
}

impl Planner<'_> {
    fn conflict(&mut self, kind: Kind, name: &str, reason: String, resolution: &str) {
        self.conflicts.push(Blocker {
            kind,
            name: name.to_string(),
            reason,
            resolution: resolution.to_string(),
        });
    }

    fn refuse(&mut self, kind: Kind, name: &str, reason: String, resolution: &str) {
        self.refusals.push(Blocker {
            kind,
            name: name.to_string(),
            reason,
            resolution: resolution.to_string(),
        });
    }

    /// Decides whether pxfa may manage the existing object `name`; records a conflict
    /// when not, and a tag change when its tags must be set (adoption or drift).
    fn claim(
        &mut self,
        kind: Kind,
        resource: TagResource,
        name: &str,
        scope: Scope,
        want: &BTreeMap<String, String>,
        pristine: bool,
    ) -> bool {
        let have = self.obs.tags.get(resource, name);
        let ok = match (owner(have, self.tenant), scope) {
            (Owner::OtherTenant(t), _) => {
                self.conflict(kind, name, format!("exists and is tagged for tenant {t:?}; pxfa never touches another tenant's objects"), "give this tenant's object another name (metadata.name, spec.storage.pod)");
                false
            }
            (Owner::Shared, Scope::Tenant) => {
                self.conflict(kind, name, "exists as a shared management object (scope=shared); a tenant object cannot take its name".into(), "give this tenant's object another name (metadata.name, spec.storage.pod)");
                false
            }
            (Owner::Tenant, Scope::Shared) => {
                self.conflict(kind, name, "exists tagged for this tenant only, but the desired state shares it between tenants; retag it by hand".into(), "retag it by hand (pxfa.io scope=shared), or delete it");
                false
            }
            (Owner::Unmanaged, _) if self.opts.adopt => {
                let c = Change::new(
                    Action::Create,
                    Kind::Tag,
                    name,
                    "adopted: exists without pxfa's tags and adoption was asked for",
                )
                .detail("on", kind.label())
                .with(Payload::Tags {
                    resource,
                    tags: to_tags(name, want),
                });
                self.tag_changes.push(c);
                return true;
            }
            (Owner::Unmanaged, _) => {
                let hint = if pristine {
                    " It matches what pxfa would create, so it may be left by an apply interrupted before tagging; if so, adopt it."
                } else {
                    ""
                };
                self.conflict(kind, name, format!("exists without pxfa's tags (managed-by=pxfa, tenant={}); pxfa will not change it unless you adopt it.{hint}", self.tenant), "adopt it (--adopt), or rename or remove it on the array");
                false
            }
            (Owner::Tenant, Scope::Tenant) | (Owner::Shared, Scope::Shared) => true,
        };
        if ok {
            let have = have.cloned().unwrap_or_default();
            let drift: BTreeMap<String, String> = want
                .iter()
                .filter(|(k, v)| have.get(*k) != Some(*v))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !drift.is_empty() {
                let keys: Vec<&str> = drift.keys().map(String::as_str).collect();
                let c = Change::new(
                    Action::Update,
                    Kind::Tag,
                    name,
                    format!("pxfa tags differ: {}", keys.join(", ")),
                )
                .detail("on", kind.label())
                .with(Payload::Tags {
                    resource,
                    tags: to_tags(name, want),
                });
                self.tag_changes.push(c);
            }
        }
        ok
    }
}

/// Computes the plan. Pure: no array access, same inputs give the same plan.
pub fn plan(desired: &DesiredState, observed: &Observed, opts: &PlanOptions) -> Plan {
    let mut p = Planner {
        tenant: &desired.tenant,
        obs: observed,
        opts: *opts,
        conflicts: Vec::new(),
        refusals: Vec::new(),
        tag_changes: Vec::new(),
    };
    let obs = observed;
    let mut pods = Vec::new();
    let mut groups = Vec::new();
    let mut hosts = Vec::new();
    let mut members = Vec::new();
    let mut volumes = Vec::new();
    let mut connections = Vec::new();
    let mut token = Vec::new();
    // Deletions, in the order they must happen.
    let mut disconnects = Vec::new();
    let mut volume_deletes = Vec::new();
    let mut member_deletes = Vec::new();
    let mut host_deletes = Vec::new();
    let mut group_deletes = Vec::new();
    let mut pod_deletes = Vec::new();

    // Objects pxfa may act on, by lower-cased name; connections only to these.
    let mut usable_volumes = BTreeSet::new();
    let mut usable_targets = BTreeSet::new();

    if let Some(dp) = &desired.pod {
        let name = dp.name.as_str();
        let payload = Payload::Pod {
            name: dp.name.clone(),
            quota: dp.quota.map(Size::as_u64),
        };
        match obs.pods.get(&key(name)) {
            None => {
                let mut c =
                    Change::new(Action::Create, Kind::Pod, name, "not on the array").with(payload);
                if let Some(q) = dp.quota {
                    c = c.detail("quota", q);
                }
                pods.push(c);
            }
            Some(o) => {
                if p.claim(
                    Kind::Pod,
                    TagResource::Pod,
                    name,
                    Scope::Tenant,
                    &dp.tags,
                    false,
                ) {
                    if o.destroyed {
                        pods.push(Change::new(Action::Recover, Kind::Pod, name, "destroyed and still pending eradication: recovered, not re-created").with(payload.clone()));
                    }
                    // A quota only grows: after a scale-in the retained drives still
                    // count against it, and lowering it could make the array refuse
                    // the next write half way.
                    match dp.quota {
                        Some(q) if o.quota_limit.is_none_or(|l| l < q.as_u64()) => {
                            let from = o
                                .quota_limit
                                .map_or(Detail::Text("unlimited".into()), Detail::Bytes);
                            pods.push(
                                Change::new(Action::Update, Kind::Pod, name, "quota differs")
                                    .detail("from", from)
                                    .detail("to", q)
                                    .with(payload),
                            );
                        }
                        _ if !o.destroyed => {
                            pods.push(Change::new(Action::NoOp, Kind::Pod, name, "as desired"))
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    for dg in &desired.host_groups {
        let name = dg.name.as_str();
        match obs.host_groups.get(&key(name)) {
            None => {
                groups.push(
                    Change::new(Action::Create, Kind::HostGroup, name, "not on the array").with(
                        Payload::HostGroup {
                            name: dg.name.clone(),
                        },
                    ),
                );
                usable_targets.insert((true, key(name)));
            }
            Some(o) => {
                let pristine =
                    o.host_count.unwrap_or(0) == 0 && o.connection_count.unwrap_or(0) == 0;
                if p.claim(
                    Kind::HostGroup,
                    TagResource::HostGroup,
                    name,
                    dg.scope,
                    &dg.tags,
                    pristine,
                ) {
                    groups.push(Change::new(
                        Action::NoOp,
                        Kind::HostGroup,
                        name,
                        "as desired",
                    ));
                    usable_targets.insert((true, key(name)));
                }
            }
        }
    }

    // Hosts by identity: found by initiator among every host on the array.
    let resolved = resolve_hosts(desired, &obs.all_hosts, &obs.tags);
    hosts.extend(resolved.hosts);
    members.extend(resolved.members);
    p.tag_changes.extend(resolved.tags);
    p.conflicts.extend(resolved.conflicts);
    for h in &resolved.usable {
        usable_targets.insert((false, h.clone()));
    }
    let host_map = resolved.map;
    let warnings = resolved.warnings;

    let released = released_indexes(obs, &desired.tenant);
    let mut serials = BTreeMap::new();
    for dv in &desired.volumes {
        let name = dv.name.as_str();
        let want = dv.size.as_u64();
        let payload = |truncate| Payload::Volume {
            name: dv.name.clone(),
            size: want,
            truncate,
        };
        match obs.volumes.get(&key(name)) {
            None => {
                volumes.push(
                    Change::new(Action::Create, Kind::Volume, name, "not on the array")
                        .detail("size", dv.size)
                        .with(payload(false)),
                );
                usable_volumes.insert(key(name));
            }
            Some(o) => {
                let pristine =
                    o.provisioned == want && o.connection_count.unwrap_or(0) == 0 && !o.destroyed;
                if !p.claim(
                    Kind::Volume,
                    TagResource::Volume,
                    name,
                    Scope::Tenant,
                    &dv.tags,
                    pristine,
                ) {
                    continue;
                }
                let index = drive_index(obs.tags.get(TagResource::Volume, name));
                if o.destroyed
                    && !p.opts.recover_released
                    && index.is_some_and(|i| released.contains(&i))
                {
                    let left = o.time_remaining.map_or(String::new(), |ms| {
                        format!(" (eradicated in {})", crate::duration::human_ms(ms))
                    });
                    p.refuse(
                        Kind::Volume,
                        name,
                        format!(
                            "drive of worker {}, which was released: destroyed and pending \
                             eradication{left}; its Portworx node was probably decommissioned, \
                             so its old pool must not come back on its own",
                            index.unwrap_or_default()
                        ),
                        &format!(
                            "eradicate it (`pxfa volume eradicate {name}`; with SafeMode wait \
                             for its eradication), or --recover-released if the Portworx node was \
                             never decommissioned"
                        ),
                    );
                    continue;
                }
                // A refused drive is not usable: nothing is connected to it.
                usable_volumes.insert(key(name));
                if let Some(s) = &o.serial {
                    serials.insert(name.to_string(), s.clone());
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
                    volumes.push(c.with(payload(false)));
                }
                let have = Size::bytes(o.provisioned);
                if o.provisioned < want {
                    volumes.push(
                        Change::new(Action::Update, Kind::Volume, name, "grow")
                            .detail("from", have)
                            .detail("to", dv.size)
                            .with(payload(false)),
                    );
                } else if o.provisioned > want {
                    if p.opts.allow_shrink {
                        volumes.push(
                            Change::new(
                                Action::Update,
                                Kind::Volume,
                                name,
                                "shrink (allowed): data past the new end is lost",
                            )
                            .detail("from", have)
                            .detail("to", dv.size)
                            .with(payload(true)),
                        );
                    } else {
                        p.refuse(Kind::Volume, name, format!("is {have} on the array, desired {}: shrinking loses data; allow shrinking explicitly to do it", dv.size), "restore the size in the spec, or --allow-shrink (truncates: destroys data)");
                    }
                } else if !o.destroyed {
                    volumes.push(
                        Change::new(Action::NoOp, Kind::Volume, name, "as desired")
                            .detail("size", dv.size),
                    );
                }
            }
        }
    }

    // Dynamically provisioned drives: found by tags or through their claims.
    let drive_plan = super::drives::plan_drives(desired, obs);
    volumes.extend(drive_plan.volumes);
    p.tag_changes.extend(drive_plan.tags);
    p.conflicts.extend(drive_plan.conflicts);

    let mut wanted_pairs = BTreeSet::new();
    for dc in &desired.connections {
        let vol = dc.volume.as_str();
        let tk = target_key(&dc.target);
        wanted_pairs.insert((tk.clone(), key(vol)));
        if !usable_volumes.contains(&key(vol)) || !usable_targets.contains(&tk) {
            // The volume or the target is in conflict (already reported) or not in the
            // desired state at all.
            if !desired.volumes.iter().any(|v| v.name == dc.volume) {
                p.conflict(
                    Kind::Connection,
                    &connection_name(vol, &dc.target),
                    "names a volume the desired state does not contain".into(),
                    "this is a pxfa bug: report it with the spec",
                );
            }
            continue;
        }
        let name = connection_name(vol, &dc.target);
        let found = obs.connections.iter().find(|c| {
            c.volume
                .name
                .as_deref()
                .is_some_and(|v| v.eq_ignore_ascii_case(vol))
                && row_target(c).is_some_and(|t| target_key(&t) == tk)
        });
        match found {
            Some(c) => match dc.lun {
                Some(l) if c.lun != Some(l) => p.refuse(
                    Kind::Connection,
                    &name,
                    format!("connected with LUN {:?}, desired LUN {l}; changing a LUN disconnects the volume, do it by hand", c.lun),
                    "reconnect the volume by hand at the desired LUN, or drop the fixed LUN",
                ),
                _ => connections.push(Change::new(Action::NoOp, Kind::Connection, name, "as desired")),
            },
            None => {
                let mut c = Change::new(Action::Create, Kind::Connection, name, "not connected");
                if let Some(l) = dc.lun {
                    c = c.detail("lun", l);
                }
                connections.push(c.with(Payload::Connection { target: dc.target.clone(), volume: dc.volume.clone(), lun: dc.lun }));
            }
        }
    }

    // Orphans: objects tagged for this tenant that the desired state dropped.
    // Drives of worker indexes the desired state dropped (scale-in, or drives the
    // management Portworx now provisions) are retained: they hold Portworx pools.
    // Only `release_removed_workers` releases them, and only past the last desired
    // worker index.
    let desired_workers = desired
        .volumes
        .iter()
        .map(|v| &v.tags)
        .chain(desired.drives.iter().map(|d| &d.tags))
        .filter_map(|t| t.get(TAG_NODE)?.parse::<u32>().ok())
        .map(|i| i + 1)
        .max()
        .unwrap_or(0);
    let mut retained = Vec::new();
    let mut released: BTreeSet<String> = BTreeSet::new();
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
        if opts.release_removed_workers && desired_workers > 0 && index >= desired_workers {
            released.insert(key(name));
            continue;
        }
        retained.push(
            Change::new(
                Action::Retain,
                Kind::Volume,
                name,
                format!("drive of worker {index}, which the desired state no longer has: kept with its data"),
            )
            .detail("size", Size::bytes(o.provisioned))
            .detail("worker", index),
        );
    }
    let retained_keys: BTreeSet<String> = retained.iter().map(|c| key(&c.name)).collect();
    let mut retained_workers: Vec<u32> = retained
        .iter()
        .filter_map(|c| match c.details.get("worker")? {
            Detail::Count(n) => u32::try_from(*n).ok(),
            _ => None,
        })
        .collect();
    retained_workers.dedup();
    let orphan_volumes: BTreeSet<String> = obs
        .orphans
        .volumes
        .iter()
        .map(|n| key(n))
        .filter(|k| !retained_keys.contains(k))
        .collect();
    let orphan_targets: BTreeSet<(bool, String)> = obs
        .orphans
        .hosts
        .iter()
        .map(|h| (false, key(h)))
        .chain(obs.orphans.host_groups.iter().map(|g| (true, key(g))))
        .collect();
    let mut seen = BTreeSet::new();
    for row in &obs.connections {
        let (Some(vol), Some(target)) = (row.volume.name.as_deref(), row_target(row)) else {
            continue;
        };
        let tk = target_key(&target);
        let vk = key(vol);
        if wanted_pairs.contains(&(tk.clone(), vk.clone()))
            || !seen.insert((tk.clone(), vk.clone()))
        {
            continue;
        }
        let ours_pair = usable_volumes.contains(&vk)
            && (usable_targets.contains(&tk) || orphan_targets.contains(&tk));
        let dropped = orphan_volumes.contains(&vk) || orphan_targets.contains(&tk);
        if !(ours_pair || dropped) {
            continue;
        }
        let Ok(volume) = VolumeName::new(vol) else {
            continue;
        };
        disconnects.push(
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
    for name in &obs.orphans.volumes {
        if retained_keys.contains(&key(name)) {
            continue;
        }
        let why = if released.contains(&key(name)) {
            "drive of a removed worker, released (--release-removed-workers); destroyed, recoverable until eradicated"
        } else {
            "tagged for this tenant but no longer desired; destroyed, recoverable until eradicated"
        };
        if let Some(o) = obs.volumes.get(&key(name))
            && !o.destroyed
            && let Ok(vn) = VolumeName::new(name.as_str())
        {
            volume_deletes.push(
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
    let orphan_hosts: BTreeSet<String> = obs.orphans.hosts.iter().map(|h| key(h)).collect();
    for name in &obs.orphans.hosts {
        let (Some(o), Ok(hn)) = (obs.hosts.get(&key(name)), HostName::new(name.as_str())) else {
            continue;
        };
        if let Some(g) = &o.host_group.name {
            member_deletes.push(
                Change::new(
                    Action::Delete,
                    Kind::HostGroupMembership,
                    format!("{name} -> {g}"),
                    "host no longer desired",
                )
                .with(Payload::Membership {
                    host: hn.clone(),
                    from: HostGroupName::new(g.as_str()).ok(),
                    to: None,
                }),
            );
        }
        host_deletes.push(
            Change::new(
                Action::Delete,
                Kind::Host,
                name,
                "tagged for this tenant but no longer desired",
            )
            .with(Payload::Host {
                name: hn,
                post: Box::default(),
                patch: Box::default(),
            }),
        );
    }
    let desired_hosts: BTreeSet<String> = desired.hosts.iter().map(|h| h.name.key()).collect();
    for name in &obs.orphans.host_groups {
        if !obs.host_groups.contains_key(&key(name)) {
            continue;
        }
        let Ok(gn) = HostGroupName::new(name.as_str()) else {
            continue;
        };
        let strangers: Vec<&String> = obs
            .group_members
            .get(&key(name))
            .into_iter()
            .flatten()
            .filter(|m| !orphan_hosts.contains(&key(m)) && !desired_hosts.contains(&key(m)))
            .collect();
        if !strangers.is_empty() {
            let list: Vec<&str> = strangers.iter().map(|s| s.as_str()).collect();
            p.refuse(
                Kind::HostGroup,
                name,
                format!(
                    "no longer desired but still holds hosts pxfa does not manage ({}); kept",
                    list.join(", ")
                ),
                "remove those hosts from the group by hand, then apply again",
            );
            continue;
        }
        group_deletes.push(
            Change::new(
                Action::Delete,
                Kind::HostGroup,
                name,
                "tagged for this tenant but no longer desired",
            )
            .with(Payload::HostGroup { name: gn }),
        );
    }
    for name in &obs.orphans.pods {
        if let Some(o) = obs.pods.get(&key(name))
            && !o.destroyed
            && let Ok(pn) = PodName::new(name.as_str())
        {
            pod_deletes.push(
                Change::new(Action::Delete, Kind::Pod, name, "tagged for this tenant but no longer desired; destroyed, recoverable until eradicated")
                    .with(Payload::Pod { name: pn, quota: None }),
            );
        }
    }

    let realm = super::realm::plan_realm(desired, obs, &p.opts);
    p.conflicts.extend(realm.conflicts);
    if let Some(t) = &desired.api_token {
        let payload = Payload::Token {
            admin: t.admin.clone(),
            lifetime: t.lifetime,
        };
        match obs.token {
            // The realm user pxfa is about to create has no token yet.
            TokenState::AdminMissing if realm.creates_admin => {
                token.push(Change::new(Action::Create, Kind::ApiToken, &t.admin, "the realm user is new").with(payload));
            }
            TokenState::AdminMissing => p.conflict(Kind::ApiToken, &t.admin, "the admin user does not exist on the array; create it (or name another) first".into(), "create the admin on the array, or name an existing one"),
            TokenState::NoToken => {
                let mut c = Change::new(Action::Create, Kind::ApiToken, &t.admin, "the admin has no API token");
                if let Some(l) = t.lifetime {
                    c = c.detail("lifetime", l);
                }
                token.push(c.with(payload));
            }
            TokenState::HasToken => match obs.token_journal {
                // The token journal holds it: delivered by apply, no array write.
                TokenJournal::PendingDelivery => token.push(Change::new(
                    Action::Update,
                    Kind::ApiToken,
                    &t.admin,
                    "deliver (pending): created by an earlier apply and never delivered; the token journal holds it",
                )),
                // Created by an apply that died before the answer reached the journal:
                // nobody has the value, so it is replaced (delete, then create).
                TokenJournal::Interrupted => {
                    token.push(Change::new(
                        Action::Delete,
                        Kind::ApiToken,
                        &t.admin,
                        "created by an interrupted apply, never delivered (its value never left the array): replaced",
                    ).with(payload.clone()));
                    let mut c = Change::new(Action::Create, Kind::ApiToken, &t.admin, "replaces the token an interrupted apply created");
                    if let Some(l) = t.lifetime {
                        c = c.detail("lifetime", l);
                    }
                    token.push(c.with(payload));
                }
                TokenJournal::None | TokenJournal::Stale => token.push(Change::new(
                    Action::NoOp,
                    Kind::ApiToken,
                    &t.admin,
                    "the admin already has an API token; pxfa keeps it (`pxfa token rotate` replaces it without a gap)",
                )),
            },
            TokenState::NotWanted => {}
        }
    }

    let tag_changes = std::mem::take(&mut p.tag_changes);
    let changes: Vec<Change> = [
        retained,
        realm.realm,
        pods,
        groups,
        hosts,
        members,
        volumes,
        tag_changes,
        connections,
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
    let mut plan = Plan::new(&desired.tenant, changes, p.conflicts, p.refusals, serials);
    plan.host_map = host_map;
    plan.warnings = warnings;
    plan.notes = desired.notes.clone();
    plan.next_steps = retained_workers
        .iter()
        .flat_map(|&w| super::lifecycle::decommission_steps(&desired.tenant, w))
        .collect();
    plan
}

/// Worker indexes whose every drive tagged for `tenant` is destroyed (pending
/// eradication) while the tenant still has a live drive: released by
/// `--release-removed-workers` (or by hand), not by `destroy`, which takes every
/// drive. Recovering such a drive brings back a decommissioned node's pool, so it
/// takes `--recover-released`.
fn released_indexes(obs: &Observed, tenant: &str) -> BTreeSet<u32> {
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
