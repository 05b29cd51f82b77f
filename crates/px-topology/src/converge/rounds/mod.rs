//! From a plan to the graph of batched operations that [`super::schedule`] runs:
//! one builder step per kind of operation, in the order the nodes enter the graph
//! (deletions first, then realm, pod, host groups, hosts, memberships, volumes,
//! tags, connections, realm policy and user, token). Each step records which nodes make an object ready, so that
//! later steps can depend on exactly those nodes.

use std::collections::BTreeMap;

use flasharray::models::{Tag, TagBody, VolumeBatchPost};
use flasharray::{ConnectionTarget, HostGroupName, TagResource};

use super::ops::Op;
use super::schedule::Graph;
use crate::desired::{
    DesiredState, TAG_MANAGED_BY, TAG_NAMESPACE, TAG_ROLE, TAG_SCOPE, TAG_TENANT,
    TAG_TENANT_NAMESPACE, TAG_TOKEN_USER,
};
use crate::plan::{Action, Change, Kind, MAX_NAMES_PER_CALL, Payload, Plan};

mod realm;

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
/// are the same for every object of a batch, so batching is unaffected. The pod's
/// token user is one: a pod is born naming it, before the token is made.
const CREATION_KEYS: [&str; 6] = [
    TAG_MANAGED_BY,
    TAG_TENANT,
    TAG_TENANT_NAMESPACE,
    TAG_SCOPE,
    TAG_ROLE,
    TAG_TOKEN_USER,
];

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

/// The changes of `kind` with `action`, by index.
fn by(changes: &[Change], kind: Kind, action: Action) -> impl Iterator<Item = (usize, &Change)> {
    changes
        .iter()
        .enumerate()
        .filter(move |(_, c)| c.kind == kind && c.action == action)
}

/// Creation tags and detail tags of the desired object `name`.
fn want_tags(desired: &DesiredState, kind: TagResource, name: &str) -> (TagMap, TagMap) {
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
}

/// Detail tags follow the create in the tag round; none means no tag call.
fn detail(items: &mut TagItems, change: usize, name: &str, tags: &TagMap, node: usize) {
    if !tags.is_empty() {
        items.push((change, tags_for(name, tags), vec![node]));
    }
}

/// Builds the operation graph of a plan.
pub(super) fn build_graph(desired: &DesiredState, plan: &Plan) -> Graph {
    let mut b = Builder {
        desired,
        changes: &plan.changes,
        g: Graph::default(),
        disconnect_of_volume: NodeMap::new(),
        disconnect_of_target: NodeMap::new(),
        left_group: NodeMap::new(),
        left_from: NodeMap::new(),
        destroyed_volumes: NodeMap::new(),
        deleted_hosts: Vec::new(),
        pod_ready: NodeMap::new(),
        group_ready: NodeMap::new(),
        host_ready: NodeMap::new(),
        volume_ready: NodeMap::new(),
        realm_ready: Vec::new(),
        user_ready: Vec::new(),
    };
    // Deletions first in the graph: they free names, LUNs and initiators.
    b.disconnect();
    b.leave_groups();
    b.destroy_volumes();
    b.delete_hosts();
    b.delete_host_groups();
    b.destroy_pods();
    b.realm();
    b.pods();
    b.host_groups();
    b.hosts();
    b.join_groups();
    b.volumes();
    b.retag();
    b.connect();
    b.realm_user();
    b.tokens();
    b.g
}

/// The graph under construction and, per object, the nodes later steps wait for.
struct Builder<'a> {
    desired: &'a DesiredState,
    changes: &'a [Change],
    g: Graph,
    /// Disconnections, by volume.
    disconnect_of_volume: NodeMap,
    /// Disconnections, by host or host group.
    disconnect_of_target: NodeMap,
    /// Hosts leaving a group, by host.
    left_group: NodeMap,
    /// Hosts leaving a group, by group.
    left_from: NodeMap,
    /// Volume destructions, by pod name.
    destroyed_volumes: NodeMap,
    /// Host deletions (orphan hosts leave their group when deleted; freed
    /// initiators may be reused by patched hosts).
    deleted_hosts: Vec<usize>,
    /// Pod creations and recoveries, by pod.
    pod_ready: NodeMap,
    /// Host group creations, by group.
    group_ready: NodeMap,
    /// Host creations, by host.
    host_ready: NodeMap,
    /// Volume creations and recoveries, by volume.
    volume_ready: NodeMap,
    /// Realm creation or recovery (the pod inside it waits for them).
    realm_ready: Vec<usize>,
    /// Realm user creation (its token waits for it).
    user_ready: Vec<usize>,
}

impl Builder<'_> {
    /// Disconnections, one call per target: they free LUNs, and hosts and groups
    /// can only go once nothing is connected to them.
    fn disconnect(&mut self) {
        let mut disconnects: BTreeMap<(bool, String), TargetBatch> = BTreeMap::new();
        for (i, c) in by(self.changes, Kind::Connection, Action::Delete) {
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
                let n = self.g.add(
                    Op::Disconnect {
                        target: target.clone(),
                        volumes,
                    },
                    [],
                    chunk.iter().map(|(i, _)| *i),
                );
                for (_, v) in chunk {
                    push(&mut self.disconnect_of_volume, v.as_str(), n);
                }
                push(&mut self.disconnect_of_target, target.name(), n);
            }
        }
    }

    /// Hosts leaving groups (deletes and the first half of moves), one call per group.
    fn leave_groups(&mut self) {
        let mut leaving: BTreeMap<String, (HostGroupName, Vec<(usize, flasharray::HostName)>)> =
            BTreeMap::new();
        for (i, c) in self.changes.iter().enumerate() {
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
        for (group, items) in leaving.into_values() {
            for chunk in items.chunks(MAX_NAMES_PER_CALL) {
                let hosts = chunk.iter().map(|(_, h)| h.clone()).collect();
                let n = self.g.add(
                    Op::RemoveMembers {
                        group: group.clone(),
                        hosts,
                    },
                    [],
                    chunk.iter().map(|(i, _)| *i),
                );
                for (_, h) in chunk {
                    push(&mut self.left_group, h.as_str(), n);
                }
                push(&mut self.left_from, group.as_str(), n);
            }
        }
    }

    /// Destroys volumes, after their disconnections.
    fn destroy_volumes(&mut self) {
        let doomed: Vec<(usize, flasharray::VolumeName)> =
            by(self.changes, Kind::Volume, Action::Delete)
                .filter_map(|(i, c)| match &c.payload {
                    Payload::Volume { name, .. } => Some((i, name.clone())),
                    _ => None,
                })
                .collect();
        for chunk in doomed.chunks(MAX_NAMES_PER_CALL) {
            let deps: Vec<usize> = chunk
                .iter()
                .flat_map(|(_, v)| deps_of(&self.disconnect_of_volume, v.as_str()))
                .collect();
            let names: Vec<flasharray::VolumeName> = chunk.iter().map(|(_, v)| v.clone()).collect();
            let n = self.g.add(
                Op::DestroyVolumes {
                    names: names.clone(),
                },
                deps,
                chunk.iter().map(|(i, _)| *i),
            );
            for v in &names {
                if let Some(p) = v.pod() {
                    push(&mut self.destroyed_volumes, p, n);
                }
            }
        }
    }

    /// Deletes hosts, after their disconnections and after they left their groups.
    fn delete_hosts(&mut self) {
        let doomed_hosts: Vec<(usize, flasharray::HostName)> =
            by(self.changes, Kind::Host, Action::Delete)
                .filter_map(|(i, c)| match &c.payload {
                    Payload::Host { name, .. } => Some((i, name.clone())),
                    _ => None,
                })
                .collect();
        for chunk in doomed_hosts.chunks(MAX_NAMES_PER_CALL) {
            let deps: Vec<usize> = chunk
                .iter()
                .flat_map(|(_, h)| {
                    [
                        deps_of(&self.disconnect_of_target, h.as_str()),
                        deps_of(&self.left_group, h.as_str()),
                    ]
                    .concat()
                })
                .collect();
            let names = chunk.iter().map(|(_, h)| h.clone()).collect();
            self.deleted_hosts.push(self.g.add(
                Op::DeleteHosts { names },
                deps,
                chunk.iter().map(|(i, _)| *i),
            ));
        }
    }

    /// Deletes host groups, after their disconnections, their members leaving and
    /// orphan hosts going.
    fn delete_host_groups(&mut self) {
        let doomed_groups: Vec<(usize, HostGroupName)> =
            by(self.changes, Kind::HostGroup, Action::Delete)
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
                        deps_of(&self.disconnect_of_target, gname.as_str()),
                        deps_of(&self.left_from, gname.as_str()),
                    ]
                    .concat()
                })
                .collect();
            // Orphan hosts leave the group when they are deleted.
            deps.extend(self.deleted_hosts.iter().copied());
            let names = chunk.iter().map(|(_, n)| n.clone()).collect();
            self.g.add(
                Op::DeleteHostGroups { names },
                deps,
                chunk.iter().map(|(i, _)| *i),
            );
        }
    }

    /// Destroys pods, after their volumes.
    fn destroy_pods(&mut self) {
        for (i, c) in by(self.changes, Kind::Pod, Action::Delete) {
            if let Payload::Pod { name, .. } = &c.payload {
                self.g.add(
                    Op::DestroyPods {
                        names: vec![name.clone()],
                    },
                    deps_of(&self.destroyed_volumes, name.as_str()),
                    [i],
                );
            }
        }
    }

    /// Round 1: the pod (create, recover, quota).
    fn pods(&mut self) {
        let mut pod_tags = Vec::new();
        for (i, c) in self.changes.iter().enumerate() {
            let Payload::Pod { name, quota } = &c.payload else {
                continue;
            };
            match c.action {
                Action::Create => {
                    let (born, later) = want_tags(self.desired, TagResource::Pod, name.as_str());
                    let n = self.g.add(
                        Op::CreatePod {
                            name: name.clone(),
                            quota: *quota,
                            tags: creation_body(&born),
                        },
                        self.realm_ready.clone(),
                        [i],
                    );
                    push(&mut self.pod_ready, name.as_str(), n);
                    detail(&mut pod_tags, i, name.as_str(), &later, n);
                }
                Action::Recover => {
                    let n = self.g.add(
                        Op::RecoverPods {
                            names: vec![name.clone()],
                        },
                        self.realm_ready.clone(),
                        [i],
                    );
                    push(&mut self.pod_ready, name.as_str(), n);
                }
                Action::Update => {
                    if let Some(q) = quota {
                        let deps = deps_of(&self.pod_ready, name.as_str());
                        let n = self.g.add(
                            Op::SetPodQuota {
                                name: name.clone(),
                                quota: *q,
                            },
                            deps,
                            [i],
                        );
                        // A raised quota comes before the volumes it makes room
                        // for (a scale-out or a growth), so the array never
                        // refuses them on quota.
                        push(&mut self.pod_ready, name.as_str(), n);
                    }
                }
                _ => {}
            }
        }
        add_tag_ops(&mut self.g, TagResource::Pod, pod_tags);
    }

    /// Round 1: host groups, one POST per set of creation tags.
    fn host_groups(&mut self) {
        // One POST per set of creation tags (all names of a call get the same tags).
        let mut new_groups: BTreeMap<TagMap, Vec<(usize, HostGroupName, TagMap)>> = BTreeMap::new();
        for (i, c) in by(self.changes, Kind::HostGroup, Action::Create) {
            if let Payload::HostGroup { name } = &c.payload {
                let (born, later) = want_tags(self.desired, TagResource::HostGroup, name.as_str());
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
                let n = self.g.add(
                    Op::CreateHostGroups {
                        names,
                        tags: creation_body(&born),
                    },
                    [],
                    chunk.iter().map(|(i, _, _)| *i),
                );
                for (i, name, later) in chunk {
                    push(&mut self.group_ready, name.as_str(), n);
                    detail(&mut group_tags, *i, name.as_str(), later, n);
                }
            }
        }
        add_tag_ops(&mut self.g, TagResource::HostGroup, group_tags);
    }

    /// Round 1: hosts (create, initiator patches).
    fn hosts(&mut self) {
        let mut host_tags = Vec::new();
        for (i, c) in self.changes.iter().enumerate() {
            if c.kind != Kind::Host {
                continue;
            }
            let Payload::Host { name, post, patch } = &c.payload else {
                continue;
            };
            match c.action {
                Action::Create => {
                    let (born, later) = want_tags(self.desired, TagResource::Host, name.as_str());
                    let n = self.g.add(
                        Op::CreateHost {
                            name: name.clone(),
                            post: (**post).clone().with_tags(creation_body(&born)),
                        },
                        [],
                        [i],
                    );
                    push(&mut self.host_ready, name.as_str(), n);
                    detail(&mut host_tags, i, name.as_str(), &later, n);
                }
                Action::Update => {
                    // Initiators freed by deleted hosts may be reused here.
                    self.g.add(
                        Op::PatchHost {
                            name: name.clone(),
                            patch: (**patch).clone(),
                        },
                        self.deleted_hosts.clone(),
                        [i],
                    );
                }
                _ => {}
            }
        }
        add_tag_ops(&mut self.g, TagResource::Host, host_tags);
    }

    /// Round 2: hosts joining groups, one call per group.
    fn join_groups(&mut self) {
        let mut joining: BTreeMap<String, (HostGroupName, Vec<(usize, flasharray::HostName)>)> =
            BTreeMap::new();
        for (i, c) in self.changes.iter().enumerate() {
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
                let mut deps = deps_of(&self.group_ready, group.as_str());
                for (_, h) in chunk {
                    deps.extend(deps_of(&self.host_ready, h.as_str()));
                    deps.extend(deps_of(&self.left_group, h.as_str()));
                }
                let hosts = chunk.iter().map(|(_, h)| h.clone()).collect();
                self.g.add(
                    Op::AddMembers {
                        group: group.clone(),
                        hosts,
                    },
                    deps,
                    chunk.iter().map(|(i, _)| *i),
                );
            }
        }
    }

    /// Round 2: volumes, one POST per size batch, one PATCH per recover / resize
    /// batch.
    fn volumes(&mut self) {
        let pod_deps = |name: &flasharray::VolumeName| {
            name.pod()
                .map(|p| deps_of(&self.pod_ready, p))
                .unwrap_or_default()
        };
        // Every new volume in one `POST /volumes/batch` per chunk, whatever its size
        // or role, each born with all its tags (creation and detail): no tag round
        // follows, and no volume ever exists without its node and disk index.
        let mut creates: Vec<(usize, VolumeBatchPost)> = Vec::new();
        let mut recovers = Vec::new();
        let mut resizes: BTreeMap<(u64, bool), Vec<(usize, flasharray::VolumeName)>> =
            BTreeMap::new();
        for (i, c) in self.changes.iter().enumerate() {
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
                    let (born, later) = want_tags(self.desired, TagResource::Volume, name.as_str());
                    let mut item = VolumeBatchPost::new(name.clone(), *size);
                    item.tags = creation_body(&born);
                    item.tags.extend(creation_body(&later));
                    creates.push((i, item));
                }
                Action::Recover => recovers.push((i, name.clone())),
                Action::Update => resizes
                    .entry((*size, *truncate))
                    .or_default()
                    .push((i, name.clone())),
                _ => {}
            }
        }
        for chunk in creates.chunks(MAX_NAMES_PER_CALL) {
            let deps: Vec<usize> = chunk
                .iter()
                .flat_map(|(_, item)| pod_deps(&item.name))
                .collect();
            let items: Vec<VolumeBatchPost> = chunk.iter().map(|(_, item)| item.clone()).collect();
            let n = self.g.add(
                Op::CreateVolumes { items },
                deps,
                chunk.iter().map(|(i, _)| *i),
            );
            for (_, item) in chunk {
                push(&mut self.volume_ready, item.name.as_str(), n);
            }
        }
        for chunk in recovers.chunks(MAX_NAMES_PER_CALL) {
            let deps: Vec<usize> = chunk.iter().flat_map(|(_, v)| pod_deps(v)).collect();
            let names = chunk.iter().map(|(_, v)| v.clone()).collect();
            let n = self.g.add(
                Op::RecoverVolumes { names },
                deps,
                chunk.iter().map(|(i, _)| *i),
            );
            for (_, v) in chunk {
                push(&mut self.volume_ready, v.as_str(), n);
            }
        }
        for ((size, truncate), items) in resizes {
            for chunk in items.chunks(MAX_NAMES_PER_CALL) {
                let deps: Vec<usize> = chunk
                    .iter()
                    .flat_map(|(_, v)| {
                        let mut d = deps_of(&self.volume_ready, v.as_str());
                        d.extend(pod_deps(v));
                        d
                    })
                    .collect();
                let names = chunk.iter().map(|(_, v)| v.clone()).collect();
                self.g.add(
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
    }

    /// Tags of existing objects (adoption, drift), one PUT per kind.
    fn retag(&mut self) {
        let mut retag: BTreeMap<u8, (TagResource, TagItems)> = BTreeMap::new();
        for (i, c) in self.changes.iter().enumerate() {
            if c.kind != Kind::Tag || c.action == Action::NoOp {
                continue;
            }
            if let Payload::Tags { resource, tags } = &c.payload {
                let name = tags
                    .first()
                    .and_then(|t| t.resource.name.clone())
                    .unwrap_or_default();
                let deps = match resource {
                    TagResource::Volume => deps_of(&self.volume_ready, &name),
                    TagResource::Pod => deps_of(&self.pod_ready, &name),
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
            add_tag_ops(&mut self.g, resource, items);
        }
    }

    /// Round 3: connections, one POST per target (and per fixed LUN).
    fn connect(&mut self) {
        let mut connects: BTreeMap<(bool, String, Option<u32>), TargetBatch> = BTreeMap::new();
        for (i, c) in by(self.changes, Kind::Connection, Action::Create) {
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
                    ConnectionTarget::HostGroup(gn) => deps_of(&self.group_ready, gn.as_str()),
                    ConnectionTarget::Host(h) => deps_of(&self.host_ready, h.as_str()),
                };
                for (_, v) in chunk {
                    deps.extend(deps_of(&self.volume_ready, v.as_str()));
                }
                let volumes = chunk.iter().map(|(_, v)| v.clone()).collect();
                self.g.add(
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
    }

    /// The tenant's API token.
    /// A replaced token (an interrupted apply's, see `crate::token_journal`) is deleted
    /// first: an admin holds at most one token.
    fn tokens(&mut self) {
        let mut deleted = Vec::new();
        for (i, c) in by(self.changes, Kind::ApiToken, Action::Delete) {
            if let Payload::Token { admin, .. } = &c.payload {
                let n = self.g.add(
                    Op::DeleteToken {
                        admin: admin.clone(),
                    },
                    [],
                    [i],
                );
                deleted.push(n);
            }
        }
        for (i, c) in by(self.changes, Kind::ApiToken, Action::Create) {
            if let Payload::Token { admin, lifetime } = &c.payload {
                self.g.add(
                    Op::CreateToken {
                        admin: admin.clone(),
                        lifetime: *lifetime,
                    },
                    deleted
                        .iter()
                        .copied()
                        .chain(self.user_ready.iter().copied()),
                    [i],
                );
            }
        }
    }
}
