//! The pure diff: desired state and observed state in, plan out.

use std::collections::{BTreeMap, BTreeSet};

use flasharray::models::{Connection, HostPatch, HostPost, Tag};
use flasharray::{
    ConnectionTarget, HostGroupName, HostName, PodName, Size, TagResource, VolumeName,
};

use super::observe::{Observed, TokenState};
use super::{Action, Blocker, Change, Detail, Kind, Payload, Plan, PlanOptions};
use crate::desired::{
    DesiredState, MANAGED_BY_VALUE, SCOPE_SHARED, Scope, TAG_MANAGED_BY, TAG_NAMESPACE, TAG_SCOPE,
    TAG_TENANT,
};

/// Who owns an object, from its `pxfa.io` tags.
#[derive(Debug, PartialEq, Eq)]
enum Owner<'a> {
    /// Tagged for this tenant.
    Tenant,
    /// Tagged as a shared management object.
    Shared,
    /// Tagged for another tenant.
    OtherTenant(&'a str),
    /// No usable pxfa tags.
    Unmanaged,
}

fn owner<'a>(tags: Option<&'a BTreeMap<String, String>>, tenant: &str) -> Owner<'a> {
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

fn to_tags(resource: &str, tags: &BTreeMap<String, String>) -> Vec<Tag> {
    tags.iter()
        .map(|(k, v)| Tag::new(resource, TAG_NAMESPACE, k, v))
        .collect()
}

fn key(s: &str) -> String {
    s.to_ascii_lowercase()
}

fn norm_set(items: &[String], upper: bool) -> BTreeSet<String> {
    items
        .iter()
        .map(|s| {
            if upper {
                s.to_ascii_uppercase()
            } else {
                s.to_ascii_lowercase()
            }
        })
        .collect()
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
    fn conflict(&mut self, kind: Kind, name: &str, reason: String) {
        self.conflicts.push(Blocker {
            kind,
            name: name.to_string(),
            reason,
        });
    }

    fn refuse(&mut self, kind: Kind, name: &str, reason: String) {
        self.refusals.push(Blocker {
            kind,
            name: name.to_string(),
            reason,
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
                self.conflict(kind, name, format!("exists and is tagged for tenant {t:?}; pxfa never touches another tenant's objects"));
                false
            }
            (Owner::Shared, Scope::Tenant) => {
                self.conflict(kind, name, "exists as a shared management object (scope=shared); a tenant object cannot take its name".into());
                false
            }
            (Owner::Tenant, Scope::Shared) => {
                self.conflict(kind, name, "exists tagged for this tenant only, but the desired state shares it between tenants; retag it by hand".into());
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
                self.conflict(kind, name, format!("exists without pxfa's tags (managed-by=pxfa, tenant={}); pxfa will not change it unless you adopt it.{hint}", self.tenant));
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

    /// True when the object is tagged for this tenant (orphans, membership moves).
    fn tenant_owned(&self, resource: TagResource, name: &str) -> bool {
        owner(self.obs.tags.get(resource, name), self.tenant) == Owner::Tenant
    }

    fn pxfa_owned(&self, resource: TagResource, name: &str) -> bool {
        matches!(
            owner(self.obs.tags.get(resource, name), self.tenant),
            Owner::Tenant | Owner::Shared
        )
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
                    match dp.quota {
                        Some(q) if o.quota_limit != Some(q.as_u64()) => {
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

    for dh in &desired.hosts {
        let name = dh.name.as_str();
        let wwns: Vec<String> = dh.wwns.iter().map(|w| w.to_ascii_uppercase()).collect();
        let post = HostPost {
            iqns: dh.iqns.clone(),
            nqns: dh.nqns.clone(),
            wwns: wwns.clone(),
            personality: dh.personality.clone(),
            // Creation tags are added when the create is scheduled (converge).
            tags: Vec::new(),
        };
        let current_group: Option<String>;
        match obs.hosts.get(&key(name)) {
            None => {
                let mut c = Change::new(Action::Create, Kind::Host, name, "not on the array");
                let initiators = dh.wwns.len() + dh.iqns.len() + dh.nqns.len();
                c = c.detail("initiators", initiators);
                hosts.push(c.with(Payload::Host {
                    name: dh.name.clone(),
                    post: Box::new(post),
                    patch: Box::default(),
                }));
                usable_targets.insert((false, key(name)));
                current_group = None;
            }
            Some(o) => {
                let same_initiators = norm_set(&o.wwns, true) == norm_set(&wwns, true)
                    && norm_set(&o.iqns, false) == norm_set(&dh.iqns, false)
                    && norm_set(&o.nqns, false) == norm_set(&dh.nqns, false);
                let pristine = same_initiators
                    && o.host_group.name.is_none()
                    && o.connection_count.unwrap_or(0) == 0;
                if !p.claim(
                    Kind::Host,
                    TagResource::Host,
                    name,
                    dh.scope,
                    &dh.tags,
                    pristine,
                ) {
                    continue;
                }
                usable_targets.insert((false, key(name)));
                current_group = o.host_group.name.clone();
                let mut patch = HostPatch::default();
                let mut what = Vec::new();
                if norm_set(&o.wwns, true) != norm_set(&wwns, true) {
                    patch.wwns = Some(wwns.clone());
                    what.push("wwns");
                }
                if norm_set(&o.iqns, false) != norm_set(&dh.iqns, false) {
                    patch.iqns = Some(dh.iqns.clone());
                    what.push("iqns");
                }
                if norm_set(&o.nqns, false) != norm_set(&dh.nqns, false) {
                    patch.nqns = Some(dh.nqns.clone());
                    what.push("nqns");
                }
                if o.personality != dh.personality {
                    patch.personality = Some(dh.personality.clone().unwrap_or_default());
                    what.push("personality");
                }
                if what.is_empty() {
                    hosts.push(Change::new(Action::NoOp, Kind::Host, name, "as desired"));
                } else {
                    hosts.push(
                        Change::new(
                            Action::Update,
                            Kind::Host,
                            name,
                            format!("{} differ", what.join(", ")),
                        )
                        .with(Payload::Host {
                            name: dh.name.clone(),
                            post: Box::new(post),
                            patch: Box::new(patch),
                        }),
                    );
                }
            }
        }
        let host = dh.name.clone();
        match (&dh.host_group, current_group) {
            (Some(g), None) => members.push(
                Change::new(
                    Action::Create,
                    Kind::HostGroupMembership,
                    format!("{name} -> {g}"),
                    "host not in its group",
                )
                .with(Payload::Membership {
                    host,
                    from: None,
                    to: Some(g.clone()),
                }),
            ),
            (Some(g), Some(c)) if c.eq_ignore_ascii_case(g.as_str()) => members.push(Change::new(
                Action::NoOp,
                Kind::HostGroupMembership,
                format!("{name} -> {g}"),
                "as desired",
            )),
            (Some(g), Some(c)) => {
                if p.pxfa_owned(TagResource::HostGroup, &c) {
                    let from = HostGroupName::new(c.as_str()).ok();
                    members.push(
                        Change::new(
                            Action::Update,
                            Kind::HostGroupMembership,
                            format!("{name} -> {g}"),
                            "host is in another pxfa group",
                        )
                        .detail("from", &c)
                        .with(Payload::Membership {
                            host,
                            from,
                            to: Some(g.clone()),
                        }),
                    );
                } else {
                    p.conflict(
                        Kind::HostGroupMembership,
                        &format!("{name} -> {g}"),
                        format!(
                            "host is in host group {c}, which pxfa does not manage; move it by hand"
                        ),
                    );
                }
            }
            (None, Some(c)) if p.tenant_owned(TagResource::HostGroup, &c) => {
                let from = HostGroupName::new(c.as_str()).ok();
                member_deletes.push(
                    Change::new(
                        Action::Delete,
                        Kind::HostGroupMembership,
                        format!("{name} -> {c}"),
                        "host no longer belongs in this tenant group",
                    )
                    .with(Payload::Membership {
                        host,
                        from,
                        to: None,
                    }),
                );
            }
            (None, _) => {}
        }
    }

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
                        p.refuse(Kind::Volume, name, format!("is {have} on the array, desired {}: shrinking loses data; allow shrinking explicitly to do it", dv.size));
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
    let orphan_volumes: BTreeSet<String> = obs.orphans.volumes.iter().map(|n| key(n)).collect();
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
        if let Some(o) = obs.volumes.get(&key(name))
            && !o.destroyed
            && let Ok(vn) = VolumeName::new(name.as_str())
        {
            volume_deletes.push(
                Change::new(Action::Delete, Kind::Volume, name, "tagged for this tenant but no longer desired; destroyed, recoverable until eradicated")
                    .detail("size", Size::bytes(o.provisioned))
                    .with(Payload::Volume { name: vn, size: o.provisioned, truncate: false }),
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

    if let Some(t) = &desired.api_token {
        let payload = Payload::Token {
            admin: t.admin.clone(),
            lifetime: t.lifetime,
        };
        match obs.token {
            TokenState::AdminMissing => p.conflict(Kind::ApiToken, &t.admin, "the admin user does not exist on the array; create it (or name another) first".into()),
            TokenState::NoToken => {
                let mut c = Change::new(Action::Create, Kind::ApiToken, &t.admin, "the admin has no API token");
                if let Some(l) = t.lifetime {
                    c = c.detail("lifetime", l);
                }
                token.push(c.with(payload));
            }
            TokenState::HasToken => token.push(Change::new(
                Action::NoOp,
                Kind::ApiToken,
                &t.admin,
                "the admin already has an API token; pxfa keeps it (delete it on the array to rotate)",
            )),
            TokenState::NotWanted => {}
        }
    }

    let tag_changes = std::mem::take(&mut p.tag_changes);
    let changes: Vec<Change> = [
        pods,
        groups,
        hosts,
        members,
        volumes,
        tag_changes,
        connections,
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
    Plan::new(&desired.tenant, changes, p.conflicts, p.refusals, serials)
}
