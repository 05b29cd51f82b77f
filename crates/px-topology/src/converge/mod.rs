//! Carrying a plan out on the array (`apply`) and removing a tenant (`destroy`).
//!
//! Both build a graph of batched REST operations from the plan and run it in
//! dependent rounds (pod, then host groups and hosts, then volumes and memberships,
//! then tags and connections). Independent operations of a round run concurrently
//! up to [`ApplyOptions::concurrency`]; a failed operation does not stop independent
//! ones, but the operations that need its result are skipped with a reason. After a
//! lost answer the affected objects are re-read before anything is sent again, so
//! no object is ever created twice.
//!
//! Nothing here prints or exits: results come back as reports, and progress through
//! a callback the CLI can draw bars from.

mod destroy;
mod ops;
mod schedule;

use std::collections::BTreeMap;

use flasharray::models::{Tag, TagBody};
use flasharray::{ConnectionTarget, FlashArray, HostGroupName, TagResource};
use serde::Serialize;

pub use destroy::{DestroyError, DestroyOptions, DestroyReport, PendingEradication, destroy};

use crate::desired::{
    DesiredState, TAG_MANAGED_BY, TAG_NAMESPACE, TAG_ROLE, TAG_SCOPE, TAG_TENANT,
};
use crate::driver::ArrayFacts;
use crate::plan::{Action, Change, Kind, MAX_NAMES_PER_CALL, Payload, Plan};
use ops::Op;
use schedule::Graph;

/// Switches of [`apply`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApplyOptions {
    /// Most REST calls in flight at once. Arrays rate-limit per session; 8 keeps a
    /// tenant's apply fast without provoking 429s.
    pub concurrency: usize,
    /// When the token admin already has a token, read its value (with
    /// `expose_api_token`) so that the report can carry it for `px-pure-secret`.
    pub read_existing_token: bool,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions {
            concurrency: 8,
            read_existing_token: false,
        }
    }
}

/// How one change ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Outcome {
    /// Done.
    Applied,
    /// The array refused or the call broke.
    Failed {
        /// What failed, with the array's message.
        error: String,
        /// `X-Request-ID` of the failed call, for the array's logs.
        request_id: Option<String>,
    },
    /// Not attempted.
    Skipped {
        /// Why.
        reason: String,
    },
}

/// What `apply` and `destroy` report while they work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgressEvent {
    /// A round of concurrent calls begins.
    RoundStarted {
        /// 1-based round number.
        round: usize,
        /// Rounds in all.
        rounds: usize,
        /// Calls sent in this round.
        calls: usize,
    },
    /// Work on a change begins.
    ChangeStarted {
        /// Index in the plan's changes.
        index: usize,
        /// The change.
        change: Change,
    },
    /// A change ended.
    ChangeFinished {
        /// Index in the plan's changes.
        index: usize,
        /// The change.
        change: Change,
        /// How.
        outcome: Outcome,
    },
    /// A round ended.
    RoundFinished {
        /// 1-based round number.
        round: usize,
        /// Rounds in all.
        rounds: usize,
    },
}

/// A change that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedChange {
    /// The change.
    pub change: Change,
    /// What failed, with the array's message.
    pub error: String,
    /// `X-Request-ID` of the failed call.
    pub request_id: Option<String>,
}

/// A change that was not attempted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedChange {
    /// The change.
    pub change: Change,
    /// Why.
    pub reason: String,
}

/// The result of [`apply`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct ApplyReport {
    /// Changes carried out.
    pub applied: Vec<Change>,
    /// Changes that failed.
    pub failed: Vec<FailedChange>,
    /// Changes not attempted (their prerequisites failed, or the plan was blocked).
    pub skipped: Vec<SkippedChange>,
    /// Dependent rounds of calls.
    pub rounds: usize,
    /// REST calls made, re-reads after lost answers included.
    pub calls: usize,
    /// Serials and token, for the manifests.
    pub facts: ArrayFacts,
}

impl ApplyReport {
    /// True when every change was applied.
    pub fn is_success(&self) -> bool {
        self.failed.is_empty() && self.skipped.is_empty()
    }
}

/// Changes (by index) with the object each one is about.
type Batch<T> = Vec<(usize, T)>;
/// Connection changes to one target.
type TargetBatch = (ConnectionTarget, Batch<flasharray::VolumeName>);
/// Tag changes: change index, tags, dependencies.
type TagItems = Vec<(usize, Vec<Tag>, Vec<usize>)>;

/// Lower-cased names to graph nodes, for dependencies.
type NodeMap = BTreeMap<String, Vec<usize>>;

fn push(map: &mut NodeMap, name: &str, node: usize) {
    map.entry(name.to_ascii_lowercase()).or_default().push(node);
}

fn deps_of(map: &NodeMap, name: &str) -> Vec<usize> {
    map.get(&name.to_ascii_lowercase())
        .cloned()
        .unwrap_or_default()
}

/// The tags an object is created with: who owns it and what it is for. They go in
/// the create call itself, so that an apply killed right after a create leaves an
/// object the next plan recognises as pxfa's (never an untagged "conflict"). They
/// are the same for every object of a batch, so batching is unaffected.
const CREATION_KEYS: [&str; 4] = [TAG_MANAGED_BY, TAG_TENANT, TAG_SCOPE, TAG_ROLE];

type TagMap = BTreeMap<String, String>;

/// Splits desired tags into creation tags (see [`CREATION_KEYS`]) and detail tags
/// (node index, disk index, ...) that follow in the batched tag round; a plan that
/// finds an owned object without its detail tags plans a tag update.
fn split_tags(tags: &TagMap) -> (TagMap, TagMap) {
    tags.iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .partition(|(k, _)| CREATION_KEYS.contains(&k.as_str()))
}

fn creation_body(tags: &TagMap) -> Vec<TagBody> {
    tags.iter()
        .map(|(k, v)| TagBody::new(TAG_NAMESPACE, k, v))
        .collect()
}

fn tags_for(resource: &str, tags: &TagMap) -> Vec<Tag> {
    tags.iter()
        .map(|(k, v)| Tag::new(resource, TAG_NAMESPACE, k, v))
        .collect()
}

/// Adds one batched tag operation per resource kind for the `(change, tags)` items.
fn add_tag_ops(
    graph: &mut Graph,
    resource: TagResource,
    items: Vec<(usize, Vec<Tag>, Vec<usize>)>,
) {
    // Batches of MAX_NAMES_PER_CALL objects keep each PUT body bounded.
    for chunk in items.chunks(MAX_NAMES_PER_CALL) {
        let tags: Vec<Tag> = chunk.iter().flat_map(|(_, t, _)| t.clone()).collect();
        let deps: Vec<usize> = chunk.iter().flat_map(|(_, _, d)| d.clone()).collect();
        let changes: Vec<usize> = chunk.iter().map(|(c, _, _)| *c).collect();
        graph.add(Op::SetTags { resource, tags }, deps, changes);
    }
}

/// Builds the operation graph of a plan.
fn build_graph(desired: &DesiredState, plan: &Plan) -> Graph {
    let mut g = Graph::default();
    let changes = &plan.changes;
    let by = |kind: Kind, action: Action| {
        changes
            .iter()
            .enumerate()
            .filter(move |(_, c)| c.kind == kind && c.action == action)
    };
    // Creation tags and detail tags of the desired object `name`.
    let want_tags = |kind: TagResource, name: &str| -> (TagMap, TagMap) {
        let found = match kind {
            TagResource::Pod => desired
                .pod
                .iter()
                .find(|p| p.name.as_str().eq_ignore_ascii_case(name))
                .map(|p| &p.tags),
            TagResource::HostGroup => desired
                .host_groups
                .iter()
                .find(|x| x.name.as_str().eq_ignore_ascii_case(name))
                .map(|x| &x.tags),
            TagResource::Host => desired
                .hosts
                .iter()
                .find(|x| x.name.as_str().eq_ignore_ascii_case(name))
                .map(|x| &x.tags),
            TagResource::Volume => desired
                .volumes
                .iter()
                .find(|x| x.name.as_str().eq_ignore_ascii_case(name))
                .map(|x| &x.tags),
        };
        found.map(split_tags).unwrap_or_default()
    };
    // Detail tags follow the create in the tag round; none means no tag call.
    let detail = |items: &mut TagItems, change: usize, name: &str, tags: &TagMap, node: usize| {
        if !tags.is_empty() {
            items.push((change, tags_for(name, tags), vec![node]));
        }
    };

    // --- deletions first in the graph: they free names, LUNs and initiators.
    let mut disconnect_of_volume = NodeMap::new();
    let mut disconnect_of_target = NodeMap::new();
    let mut disconnects: BTreeMap<(bool, String), TargetBatch> = BTreeMap::new();
    for (i, c) in by(Kind::Connection, Action::Delete) {
        if let Payload::Connection { target, volume, .. } = &c.payload {
            let key = (
                matches!(target, ConnectionTarget::HostGroup(_)),
                target.name().to_ascii_lowercase(),
            );
            disconnects
                .entry(key)
                .or_insert_with(|| (target.clone(), Vec::new()))
                .1
                .push((i, volume.clone()));
        }
    }
    for (target, items) in disconnects.into_values() {
        for chunk in items.chunks(MAX_NAMES_PER_CALL) {
            let volumes = chunk.iter().map(|(_, v)| v.clone()).collect();
            let n = g.add(
                Op::Disconnect {
                    target: target.clone(),
                    volumes,
                },
                [],
                chunk.iter().map(|(i, _)| *i),
            );
            for (_, v) in chunk {
                push(&mut disconnect_of_volume, v.as_str(), n);
            }
            push(&mut disconnect_of_target, target.name(), n);
        }
    }
    // Leaving groups (deletes and the first half of moves), one call per group.
    let mut leaving: BTreeMap<String, (HostGroupName, Vec<(usize, flasharray::HostName)>)> =
        BTreeMap::new();
    for (i, c) in changes.iter().enumerate() {
        if c.kind != Kind::HostGroupMembership
            || !matches!(c.action, Action::Delete | Action::Update)
        {
            continue;
        }
        if let Payload::Membership {
            host,
            from: Some(from),
            ..
        } = &c.payload
        {
            leaving
                .entry(from.key())
                .or_insert_with(|| (from.clone(), Vec::new()))
                .1
                .push((i, host.clone()));
        }
    }
    let mut left_group = NodeMap::new(); // by host
    let mut left_from = NodeMap::new(); // by group
    for (group, items) in leaving.into_values() {
        for chunk in items.chunks(MAX_NAMES_PER_CALL) {
            let hosts = chunk.iter().map(|(_, h)| h.clone()).collect();
            let n = g.add(
                Op::RemoveMembers {
                    group: group.clone(),
                    hosts,
                },
                [],
                chunk.iter().map(|(i, _)| *i),
            );
            for (_, h) in chunk {
                push(&mut left_group, h.as_str(), n);
            }
            push(&mut left_from, group.as_str(), n);
        }
    }
    let mut destroyed_volumes = NodeMap::new(); // by pod name
    let doomed: Vec<(usize, flasharray::VolumeName)> = by(Kind::Volume, Action::Delete)
        .filter_map(|(i, c)| match &c.payload {
            Payload::Volume { name, .. } => Some((i, name.clone())),
            _ => None,
        })
        .collect();
    for chunk in doomed.chunks(MAX_NAMES_PER_CALL) {
        let deps: Vec<usize> = chunk
            .iter()
            .flat_map(|(_, v)| deps_of(&disconnect_of_volume, v.as_str()))
            .collect();
        let names: Vec<flasharray::VolumeName> = chunk.iter().map(|(_, v)| v.clone()).collect();
        let n = g.add(
            Op::DestroyVolumes {
                names: names.clone(),
            },
            deps,
            chunk.iter().map(|(i, _)| *i),
        );
        for v in &names {
            if let Some(p) = v.pod() {
                push(&mut destroyed_volumes, p, n);
            }
        }
    }
    let doomed_hosts: Vec<(usize, flasharray::HostName)> = by(Kind::Host, Action::Delete)
        .filter_map(|(i, c)| match &c.payload {
            Payload::Host { name, .. } => Some((i, name.clone())),
            _ => None,
        })
        .collect();
    let mut deleted_hosts = Vec::new();
    for chunk in doomed_hosts.chunks(MAX_NAMES_PER_CALL) {
        let deps: Vec<usize> = chunk
            .iter()
            .flat_map(|(_, h)| {
                [
                    deps_of(&disconnect_of_target, h.as_str()),
                    deps_of(&left_group, h.as_str()),
                ]
                .concat()
            })
            .collect();
        let names = chunk.iter().map(|(_, h)| h.clone()).collect();
        deleted_hosts.push(g.add(
            Op::DeleteHosts { names },
            deps,
            chunk.iter().map(|(i, _)| *i),
        ));
    }
    let doomed_groups: Vec<(usize, HostGroupName)> = by(Kind::HostGroup, Action::Delete)
        .filter_map(|(i, c)| match &c.payload {
            Payload::HostGroup { name } => Some((i, name.clone())),
            _ => None,
        })
        .collect();
    for chunk in doomed_groups.chunks(MAX_NAMES_PER_CALL) {
        let mut deps: Vec<usize> = chunk
            .iter()
            .flat_map(|(_, gname)| {
                [
                    deps_of(&disconnect_of_target, gname.as_str()),
                    deps_of(&left_from, gname.as_str()),
                ]
                .concat()
            })
            .collect();
        // Orphan hosts leave the group when they are deleted.
        deps.extend(deleted_hosts.iter().copied());
        let names = chunk.iter().map(|(_, n)| n.clone()).collect();
        g.add(
            Op::DeleteHostGroups { names },
            deps,
            chunk.iter().map(|(i, _)| *i),
        );
    }
    for (i, c) in by(Kind::Pod, Action::Delete) {
        if let Payload::Pod { name, .. } = &c.payload {
            g.add(
                Op::DestroyPods {
                    names: vec![name.clone()],
                },
                deps_of(&destroyed_volumes, name.as_str()),
                [i],
            );
        }
    }

    // --- round 1 material: pod, host groups, hosts, token.
    let mut pod_ready = NodeMap::new();
    let mut pod_tags = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        let Payload::Pod { name, quota } = &c.payload else {
            continue;
        };
        match c.action {
            Action::Create => {
                let (born, later) = want_tags(TagResource::Pod, name.as_str());
                let n = g.add(
                    Op::CreatePod {
                        name: name.clone(),
                        quota: *quota,
                        tags: creation_body(&born),
                    },
                    [],
                    [i],
                );
                push(&mut pod_ready, name.as_str(), n);
                detail(&mut pod_tags, i, name.as_str(), &later, n);
            }
            Action::Recover => {
                let n = g.add(
                    Op::RecoverPods {
                        names: vec![name.clone()],
                    },
                    [],
                    [i],
                );
                push(&mut pod_ready, name.as_str(), n);
            }
            Action::Update => {
                if let Some(q) = quota {
                    let deps = deps_of(&pod_ready, name.as_str());
                    g.add(
                        Op::SetPodQuota {
                            name: name.clone(),
                            quota: *q,
                        },
                        deps,
                        [i],
                    );
                }
            }
            _ => {}
        }
    }
    add_tag_ops(&mut g, TagResource::Pod, pod_tags);

    let mut group_ready = NodeMap::new();
    // One POST per set of creation tags (all names of a call get the same tags).
    let mut new_groups: BTreeMap<TagMap, Vec<(usize, HostGroupName, TagMap)>> = BTreeMap::new();
    for (i, c) in by(Kind::HostGroup, Action::Create) {
        if let Payload::HostGroup { name } = &c.payload {
            let (born, later) = want_tags(TagResource::HostGroup, name.as_str());
            new_groups
                .entry(born)
                .or_default()
                .push((i, name.clone(), later));
        }
    }
    let mut group_tags = Vec::new();
    for (born, items) in new_groups {
        for chunk in items.chunks(MAX_NAMES_PER_CALL) {
            let names: Vec<HostGroupName> = chunk.iter().map(|(_, n, _)| n.clone()).collect();
            let n = g.add(
                Op::CreateHostGroups {
                    names,
                    tags: creation_body(&born),
                },
                [],
                chunk.iter().map(|(i, _, _)| *i),
            );
            for (i, name, later) in chunk {
                push(&mut group_ready, name.as_str(), n);
                detail(&mut group_tags, *i, name.as_str(), later, n);
            }
        }
    }
    add_tag_ops(&mut g, TagResource::HostGroup, group_tags);

    let mut host_ready = NodeMap::new();
    let mut host_tags = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        if c.kind != Kind::Host {
            continue;
        }
        let Payload::Host { name, post, patch } = &c.payload else {
            continue;
        };
        match c.action {
            Action::Create => {
                let (born, later) = want_tags(TagResource::Host, name.as_str());
                let n = g.add(
                    Op::CreateHost {
                        name: name.clone(),
                        post: flasharray::models::HostPost {
                            tags: creation_body(&born),
                            ..(**post).clone()
                        },
                    },
                    [],
                    [i],
                );
                push(&mut host_ready, name.as_str(), n);
                detail(&mut host_tags, i, name.as_str(), &later, n);
            }
            Action::Update => {
                // Initiators freed by deleted hosts may be reused here.
                g.add(
                    Op::PatchHost {
                        name: name.clone(),
                        patch: (**patch).clone(),
                    },
                    deleted_hosts.clone(),
                    [i],
                );
            }
            _ => {}
        }
    }
    add_tag_ops(&mut g, TagResource::Host, host_tags);

    // Joining groups, one call per group.
    let mut joining: BTreeMap<String, (HostGroupName, Vec<(usize, flasharray::HostName)>)> =
        BTreeMap::new();
    for (i, c) in changes.iter().enumerate() {
        if c.kind != Kind::HostGroupMembership
            || !matches!(c.action, Action::Create | Action::Update)
        {
            continue;
        }
        if let Payload::Membership {
            host, to: Some(to), ..
        } = &c.payload
        {
            joining
                .entry(to.key())
                .or_insert_with(|| (to.clone(), Vec::new()))
                .1
                .push((i, host.clone()));
        }
    }
    for (group, items) in joining.into_values() {
        for chunk in items.chunks(MAX_NAMES_PER_CALL) {
            let mut deps = deps_of(&group_ready, group.as_str());
            for (_, h) in chunk {
                deps.extend(deps_of(&host_ready, h.as_str()));
                deps.extend(deps_of(&left_group, h.as_str()));
            }
            let hosts = chunk.iter().map(|(_, h)| h.clone()).collect();
            g.add(
                Op::AddMembers {
                    group: group.clone(),
                    hosts,
                },
                deps,
                chunk.iter().map(|(i, _)| *i),
            );
        }
    }

    // --- volumes: one POST per size batch, one PATCH per recover / resize batch.
    let mut volume_ready = NodeMap::new();
    let pod_deps = |name: &flasharray::VolumeName| {
        name.pod()
            .map(|p| deps_of(&pod_ready, p))
            .unwrap_or_default()
    };
    // One POST per size and set of creation tags (data and metadata volumes of the
    // same size differ in role, so they are two calls).
    type VolumeBatch = Vec<(usize, flasharray::VolumeName, TagMap)>;
    let mut creates: BTreeMap<(u64, TagMap), VolumeBatch> = BTreeMap::new();
    let mut recovers = Vec::new();
    let mut resizes: BTreeMap<(u64, bool), Vec<(usize, flasharray::VolumeName)>> = BTreeMap::new();
    for (i, c) in changes.iter().enumerate() {
        if c.kind != Kind::Volume {
            continue;
        }
        let Payload::Volume {
            name,
            size,
            truncate,
        } = &c.payload
        else {
            continue;
        };
        match c.action {
            Action::Create => {
                let (born, later) = want_tags(TagResource::Volume, name.as_str());
                creates
                    .entry((*size, born))
                    .or_default()
                    .push((i, name.clone(), later));
            }
            Action::Recover => recovers.push((i, name.clone())),
            Action::Update => resizes
                .entry((*size, *truncate))
                .or_default()
                .push((i, name.clone())),
            _ => {}
        }
    }
    let mut volume_tags = Vec::new();
    for ((size, born), items) in creates {
        for chunk in items.chunks(MAX_NAMES_PER_CALL) {
            let deps: Vec<usize> = chunk.iter().flat_map(|(_, v, _)| pod_deps(v)).collect();
            let names = chunk.iter().map(|(_, v, _)| v.clone()).collect();
            let n = g.add(
                Op::CreateVolumes {
                    size,
                    names,
                    tags: creation_body(&born),
                },
                deps,
                chunk.iter().map(|(i, _, _)| *i),
            );
            for (i, v, later) in chunk {
                push(&mut volume_ready, v.as_str(), n);
                detail(&mut volume_tags, *i, v.as_str(), later, n);
            }
        }
    }
    for chunk in recovers.chunks(MAX_NAMES_PER_CALL) {
        let deps: Vec<usize> = chunk.iter().flat_map(|(_, v)| pod_deps(v)).collect();
        let names = chunk.iter().map(|(_, v)| v.clone()).collect();
        let n = g.add(
            Op::RecoverVolumes { names },
            deps,
            chunk.iter().map(|(i, _)| *i),
        );
        for (_, v) in chunk {
            push(&mut volume_ready, v.as_str(), n);
        }
    }
    for ((size, truncate), items) in resizes {
        for chunk in items.chunks(MAX_NAMES_PER_CALL) {
            let deps: Vec<usize> = chunk
                .iter()
                .flat_map(|(_, v)| deps_of(&volume_ready, v.as_str()))
                .collect();
            let names = chunk.iter().map(|(_, v)| v.clone()).collect();
            g.add(
                Op::ResizeVolumes {
                    size,
                    truncate,
                    names,
                },
                deps,
                chunk.iter().map(|(i, _)| *i),
            );
        }
    }
    add_tag_ops(&mut g, TagResource::Volume, volume_tags);

    // --- tags of existing objects (adoption, drift), one PUT per kind.
    let mut retag: BTreeMap<u8, (TagResource, TagItems)> = BTreeMap::new();
    for (i, c) in changes.iter().enumerate() {
        if c.kind != Kind::Tag || c.action == Action::NoOp {
            continue;
        }
        if let Payload::Tags { resource, tags } = &c.payload {
            let name = tags
                .first()
                .and_then(|t| t.resource.name.clone())
                .unwrap_or_default();
            let deps = match resource {
                TagResource::Volume => deps_of(&volume_ready, &name),
                TagResource::Pod => deps_of(&pod_ready, &name),
                _ => Vec::new(),
            };
            let slot = match resource {
                TagResource::Volume => 0,
                TagResource::Host => 1,
                TagResource::HostGroup => 2,
                TagResource::Pod => 3,
            };
            retag
                .entry(slot)
                .or_insert_with(|| (*resource, Vec::new()))
                .1
                .push((i, tags.clone(), deps));
        }
    }
    for (resource, items) in retag.into_values() {
        add_tag_ops(&mut g, resource, items);
    }

    // --- connections: one POST per target (and per fixed LUN).
    let mut connects: BTreeMap<(bool, String, Option<u32>), TargetBatch> = BTreeMap::new();
    for (i, c) in by(Kind::Connection, Action::Create) {
        if let Payload::Connection {
            target,
            volume,
            lun,
        } = &c.payload
        {
            // A fixed LUN only makes sense for one volume per call.
            let key = (
                matches!(target, ConnectionTarget::HostGroup(_)),
                target.name().to_ascii_lowercase(),
                *lun,
            );
            let entry = connects
                .entry(key)
                .or_insert_with(|| (target.clone(), Vec::new()));
            entry.1.push((i, volume.clone()));
        }
    }
    for ((_, _, lun), (target, items)) in connects {
        let size = if lun.is_some() { 1 } else { MAX_NAMES_PER_CALL };
        for chunk in items.chunks(size) {
            let mut deps = match &target {
                ConnectionTarget::HostGroup(gn) => deps_of(&group_ready, gn.as_str()),
                ConnectionTarget::Host(h) => deps_of(&host_ready, h.as_str()),
            };
            for (_, v) in chunk {
                deps.extend(deps_of(&volume_ready, v.as_str()));
            }
            let volumes = chunk.iter().map(|(_, v)| v.clone()).collect();
            g.add(
                Op::Connect {
                    target: target.clone(),
                    volumes,
                    lun,
                },
                deps,
                chunk.iter().map(|(i, _)| *i),
            );
        }
    }

    // --- token.
    for (i, c) in by(Kind::ApiToken, Action::Create) {
        if let Payload::Token { admin, lifetime } = &c.payload {
            g.add(
                Op::CreateToken {
                    admin: admin.clone(),
                    lifetime: *lifetime,
                },
                [],
                [i],
            );
        }
    }
    g
}

/// Carries out `plan` on `array`. A blocked plan changes nothing: every change comes
/// back skipped. Refused changes are not in the plan's changes and are not applied.
pub async fn apply(
    array: &dyn FlashArray,
    desired: &DesiredState,
    plan: &Plan,
    opts: &ApplyOptions,
    progress: &(dyn Fn(ProgressEvent) + Send + Sync),
) -> ApplyReport {
    let mut report = ApplyReport::default();
    report.facts.volume_serials = plan.serials.clone();
    if plan.is_blocked() {
        let reason = format!(
            "plan is blocked by {} conflict(s); nothing was changed",
            plan.conflicts.len()
        );
        report.skipped = plan
            .actionable()
            .map(|c| SkippedChange {
                change: c.clone(),
                reason: reason.clone(),
            })
            .collect();
        return report;
    }
    let graph = build_graph(desired, plan);
    let run = schedule::run(array, &graph, &plan.changes, opts.concurrency, progress).await;
    report.rounds = run.rounds;
    report.calls = run.calls;
    for (i, outcome) in run.change_outcomes.iter().enumerate() {
        let change = plan.changes[i].clone();
        match outcome {
            Some(Outcome::Applied) => report.applied.push(change),
            Some(Outcome::Failed { error, request_id }) => report.failed.push(FailedChange {
                change,
                error: error.clone(),
                request_id: request_id.clone(),
            }),
            Some(Outcome::Skipped { reason }) => report.skipped.push(SkippedChange {
                change,
                reason: reason.clone(),
            }),
            None => {}
        }
    }
    let wanted: BTreeMap<String, &str> = desired
        .volumes
        .iter()
        .map(|v| (v.name.key(), v.name.as_str()))
        .collect();
    for v in run.output.volumes {
        if let (Some(serial), Some(name)) = (v.serial, wanted.get(&v.name.to_ascii_lowercase())) {
            report.facts.volume_serials.insert(name.to_string(), serial);
        }
    }
    report.facts.api_token = run.output.token;
    if report.facts.api_token.is_none()
        && opts.read_existing_token
        && let Some(t) = &desired.api_token
        && plan
            .changes
            .iter()
            .any(|c| c.kind == Kind::ApiToken && c.action == Action::NoOp)
    {
        report.calls += 1;
        match array
            .list_api_tokens(std::slice::from_ref(&t.admin), true)
            .await
        {
            Ok(items) => {
                report.facts.api_token = items
                    .into_iter()
                    .find(|a| a.name.eq_ignore_ascii_case(&t.admin))
                    .and_then(|a| a.api_token.token);
            }
            Err(e) => report.failed.push(FailedChange {
                change: Change::new(
                    Action::NoOp,
                    Kind::ApiToken,
                    &t.admin,
                    "read the existing token",
                ),
                error: format!("read API token of {}: {e}", t.admin),
                request_id: e.request_id().map(str::to_string),
            }),
        }
    }
    report
}
