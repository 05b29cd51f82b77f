//! Management hosts found by identity: a node *is* the array host that holds its
//! initiators, whatever that host is called.
//!
//! On a shared array the management Portworx (or an admin) usually registered the
//! management nodes long before pxfa, under names pxfa cannot guess. So a host is
//! looked up by initiator (WWN, IQN, NQN), never by name; the spec's host name is only
//! the name pxfa gives a host it has to create. pxfa never creates a second host for
//! an initiator, never changes the initiators of a host it did not create, and never
//! moves a host between groups. The resolution is a pure function so that every rule
//! is unit-tested without an array.
//!
//! Hosts tagged for the tenant that the desired state no longer names are deleted
//! (after leaving their group), like every kind's orphans.

use std::collections::{BTreeMap, BTreeSet};

use flasharray::models::{Host, HostPatch, HostPersonality, HostPost};
use flasharray::{FlashArray, FlashArrayExt, HostGroupName, HostName, Result, TagResource, Wwn};

use super::change::{Action, Blocker, Change, HostOwner, Kind, NodeHost, Payload};
use super::observed::{Observed, key};
use super::ownership::{TagIndex, drifted, is_pxfas, tag_change};
use crate::desired::{DesiredHost, DesiredState};

/// Initiator kinds, compared normalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Proto {
    Wwn,
    Iqn,
    Nqn,
}

impl Proto {
    fn word(self) -> &'static str {
        match self {
            Proto::Wwn => "wwn",
            Proto::Iqn => "iqn",
            Proto::Nqn => "nqn",
        }
    }
}

type Initiator = (Proto, String);

/// The initiator in its compared form ([`Wwn::initiator_key`]: a WWN as the array
/// stores it, an IQN or NQN lower-cased).
fn normalise(raw: &str) -> String {
    Wwn::initiator_key(raw)
}

fn initiators(wwns: &[String], iqns: &[String], nqns: &[String]) -> Vec<Initiator> {
    let mut out: Vec<Initiator> = Vec::new();
    for (proto, list) in [(Proto::Wwn, wwns), (Proto::Iqn, iqns), (Proto::Nqn, nqns)] {
        for raw in list {
            let i = (proto, normalise(raw));
            if !out.contains(&i) {
                out.push(i);
            }
        }
    }
    out
}

fn host_initiators(h: &Host) -> Vec<Initiator> {
    initiators(&h.wwns, &h.iqns, &h.nqns)
}

fn show(i: &Initiator) -> String {
    format!("{} {}", i.0.word(), i.1)
}

/// The outcome of [`resolve_hosts`]: the node → host map and the changes, conflicts
/// and warnings it implies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HostResolution {
    /// One entry per desired node host that resolved.
    pub map: Vec<NodeHost>,
    /// Host creates, initiator additions (pxfa's hosts only) and no-ops.
    pub hosts: Vec<Change>,
    /// Tag drift on pxfa's hosts.
    pub tags: Vec<Change>,
    /// Memberships in the desired group.
    pub members: Vec<Change>,
    /// What stops the plan.
    pub conflicts: Vec<Blocker>,
    /// What the admin should know but does not stop the plan.
    pub warnings: Vec<String>,
    /// Lower-cased names of the hosts pxfa may connect volumes to.
    pub usable: BTreeSet<String>,
}

impl HostResolution {
    fn conflict(&mut self, kind: Kind, name: &str, reason: String, resolution: &str) {
        self.conflicts.push(Blocker {
            kind,
            name: name.to_string(),
            reason,
            resolution: resolution.to_string(),
        });
    }
}

/// The named hosts that exist.
pub(crate) async fn lookup_hosts(array: &dyn FlashArray, names: &[String]) -> Result<Vec<Host>> {
    array.lookup_hosts(names).await
}

/// Every host on the array by initiator, and the desired nodes by initiator.
struct Holders<'a> {
    by_key: BTreeMap<String, &'a Host>,
    holder: BTreeMap<Initiator, String>,
    node_inits: Vec<Vec<Initiator>>,
}

impl<'a> Holders<'a> {
    fn index(desired: &DesiredState, hosts: &'a [Host]) -> Self {
        let by_key = hosts.iter().map(|h| (key(&h.name), h)).collect();
        let mut holder = BTreeMap::new();
        for h in hosts {
            for i in host_initiators(h) {
                holder.insert(i, key(&h.name));
            }
        }
        let node_inits = desired
            .hosts
            .iter()
            .map(|d| initiators(&d.wwns, &d.iqns, &d.nqns))
            .collect();
        Holders {
            by_key,
            holder,
            node_inits,
        }
    }

    /// The hosts holding node `n`'s initiators, and the initiators that found them.
    fn holding(&self, n: usize) -> (Vec<&'a Host>, Vec<String>) {
        let mut found: Vec<&Host> = Vec::new();
        let mut found_by = Vec::new();
        for i in &self.node_inits[n] {
            if let Some(h) = self.holder.get(i).and_then(|k| self.by_key.get(k)) {
                found_by.push(show(i));
                if !found.iter().any(|f| f.name.eq_ignore_ascii_case(&h.name)) {
                    found.push(h);
                }
            }
        }
        (found, found_by)
    }

    /// The other desired nodes whose initiators `h` holds too.
    fn other_nodes<'d>(&self, desired: &'d DesiredState, h: &Host, n: usize) -> Vec<&'d str> {
        let node_of: BTreeMap<&Initiator, usize> = self
            .node_inits
            .iter()
            .enumerate()
            .flat_map(|(m, list)| list.iter().map(move |i| (i, m)))
            .collect();
        let others: BTreeSet<&str> = host_initiators(h)
            .iter()
            .filter_map(|i| node_of.get(i))
            .filter(|&&m| m != n)
            .map(|&m| desired.hosts[m].node.as_str())
            .collect();
        others.into_iter().collect()
    }
}

/// Resolves every desired node host against `hosts` (every host on the array) and
/// pxfa's host tags. Pure.
pub(crate) fn resolve_hosts(
    desired: &DesiredState,
    hosts: &[Host],
    tags: &TagIndex,
) -> HostResolution {
    let mut out = HostResolution::default();
    let holders = Holders::index(desired, hosts);
    // pxfa may change a host's initiators and tags only when it made the host.
    let pxfa_made = |name: &str| is_pxfas(tags.get(TagResource::Host, name), &desired.tenant);
    for (n, dh) in desired.hosts.iter().enumerate() {
        let (mut found, found_by) = holders.holding(n);
        if found.is_empty() {
            match holders.by_key.get(&dh.name.key()) {
                // pxfa's own host under the spec name, whose initiators all changed:
                // it is still the node; the new initiators are added below.
                Some(h) if pxfa_made(&h.name) => found.push(h),
                Some(h) => {
                    name_taken(&mut out, dh, h, n);
                    continue;
                }
                None => {
                    create(&mut out, dh, n);
                    continue;
                }
            }
        }
        // A host that also holds another node's initiators: the spec describes two
        // nodes the array sees as one server.
        let mut clash = false;
        for h in &found {
            let others = holders.other_nodes(desired, h, n);
            if !others.is_empty() {
                clash = true;
                out.conflict(
                    Kind::Host,
                    &h.name,
                    format!(
                        "host {} holds initiators of node {} and of node {}; the array sees them as one server",
                        h.name,
                        dh.node,
                        others.join(", ")
                    ),
                    "fix the initiators in spec.management.nodes",
                );
            }
        }
        if !clash {
            let node = Node {
                dh,
                inits: &holders.node_inits[n],
                found,
                found_by,
            };
            stand_for(&mut out, &node, tags, &pxfa_made);
        }
    }
    out
}

/// The spec's name for node `n` belongs to a host holding none of its initiators.
fn name_taken(out: &mut HostResolution, dh: &DesiredHost, h: &Host, n: usize) {
    let theirs: Vec<String> = host_initiators(h).iter().map(show).collect();
    out.conflict(
        Kind::Host,
        dh.name.as_str(),
        format!(
            "host {} exists and belongs to another server (initiators {}); node {} holds none of them",
            h.name,
            if theirs.is_empty() { "none".to_string() } else { theirs.join(", ") },
            dh.node
        ),
        &format!("set spec.management.nodes[{n}].host to a free name"),
    );
}

/// One desired node and the hosts that hold its initiators.
struct Node<'a> {
    dh: &'a DesiredHost,
    inits: &'a [Initiator],
    found: Vec<&'a Host>,
    found_by: Vec<String>,
}

/// The hosts found for a node stand for it: usable, joined to the desired group,
/// their tags kept, and the initiators they lack added to the one pxfa host of the
/// node (never to a host pxfa did not make: a warning then).
fn stand_for(
    out: &mut HostResolution,
    node: &Node<'_>,
    tags: &TagIndex,
    pxfa_made: &dyn Fn(&str) -> bool,
) {
    let dh = node.dh;
    let held: BTreeSet<Initiator> = node.found.iter().flat_map(|h| host_initiators(h)).collect();
    let missing: Vec<&Initiator> = node.inits.iter().filter(|i| !held.contains(*i)).collect();
    let all_pxfa = node.found.iter().all(|h| pxfa_made(&h.name));
    // The missing initiators go to the one pxfa host standing for the node.
    let add_missing = all_pxfa && node.found.len() == 1 && !missing.is_empty();
    for h in &node.found {
        out.usable.insert(key(&h.name));
        let Ok(name) = HostName::new(h.name.as_str()) else {
            continue;
        };
        if pxfa_made(&h.name) {
            drift(out, dh, &h.name, tags);
        }
        let change = if add_missing {
            add_initiators(dh, &name, &missing)
        } else {
            Change::new(
                Action::NoOp,
                Kind::Host,
                &h.name,
                format!("is node {}", dh.node),
            )
        };
        out.hosts.push(change);
        membership(out, dh, &name, h.host_group.name.as_deref());
    }
    if !missing.is_empty() && !add_missing {
        let list: Vec<String> = missing.iter().map(|i| i.1.clone()).collect();
        let names: Vec<&str> = node.found.iter().map(|h| h.name.as_str()).collect();
        out.warnings.push(format!(
            "host {} lacks {}; pxfa never changes the initiators of a host it did not create, and never creates a second host for a node",
            names.join(", "),
            list.join(", ")
        ));
    }
    out.map.push(NodeHost {
        node: dh.node.clone(),
        hosts: node.found.iter().map(|h| h.name.clone()).collect(),
        found_by: node.found_by.clone(),
        owner: if all_pxfa {
            HostOwner::Pxfa
        } else {
            HostOwner::Foreign
        },
        missing_initiators: missing.iter().map(|i| i.1.clone()).collect(),
        created: false,
    });
}

/// Adds the node's `missing` initiators to pxfa's host `name` (none removed).
fn add_initiators(dh: &DesiredHost, name: &HostName, missing: &[&Initiator]) -> Change {
    let mut patch = HostPatch::default();
    for (proto, v) in missing.iter().map(|i| (i.0, i.1.clone())) {
        match proto {
            Proto::Wwn => patch.add_wwns.push(v),
            Proto::Iqn => patch.add_iqns.push(v),
            Proto::Nqn => patch.add_nqns.push(v),
        }
    }
    let list: Vec<String> = missing.iter().map(|i| show(i)).collect();
    Change::new(
        Action::Update,
        Kind::Host,
        name.as_str(),
        format!(
            "node {} has initiators its host lacks: {} (added, none removed)",
            dh.node,
            list.join(", ")
        ),
    )
    .detail("add", list.join(", "))
    .with(Payload::Host {
        name: name.clone(),
        post: Box::default(),
        patch: Box::new(patch),
    })
}

/// A new host under the spec's name with all the node's initiators.
fn create(out: &mut HostResolution, dh: &DesiredHost, n: usize) {
    let wwns: Vec<String> = dh.wwns.iter().map(|w| normalise(w)).collect();
    // Creation tags are added when the create is scheduled (converge).
    let mut post = HostPost::default()
        .with_iqns(dh.iqns.clone())
        .with_nqns(dh.nqns.clone())
        .with_wwns(wwns);
    post.personality = dh.personality.as_deref().map(HostPersonality::from);
    let count = dh.wwns.len() + dh.iqns.len() + dh.nqns.len();
    out.hosts.push(
        Change::new(
            Action::Create,
            Kind::Host,
            dh.name.as_str(),
            format!(
                "no host holds the initiators of node {} (spec.management.nodes[{n}])",
                dh.node
            ),
        )
        .detail("initiators", count)
        .with(Payload::Host {
            name: dh.name.clone(),
            post: Box::new(post),
            patch: Box::default(),
        }),
    );
    out.usable.insert(dh.name.key());
    membership(out, dh, &dh.name, None);
    out.map.push(NodeHost {
        node: dh.node.clone(),
        hosts: vec![dh.name.to_string()],
        found_by: Vec::new(),
        owner: HostOwner::Pxfa,
        missing_initiators: Vec::new(),
        created: true,
    });
}

/// Joins the host to the desired group when it is in none; never moves it.
fn membership(out: &mut HostResolution, dh: &DesiredHost, host: &HostName, current: Option<&str>) {
    let Some(g) = &dh.host_group else {
        return;
    };
    let name = format!("{host} -> {g}");
    match current {
        None => out.members.push(
            Change::new(
                Action::Create,
                Kind::HostGroupMembership,
                name,
                "host in no group",
            )
            .with(Payload::Membership {
                host: host.clone(),
                from: None,
                to: Some(g.clone()),
            }),
        ),
        Some(c) if c.eq_ignore_ascii_case(g.as_str()) => out.members.push(Change::new(
            Action::NoOp,
            Kind::HostGroupMembership,
            name,
            "as desired",
        )),
        Some(c) => out.conflict(
            Kind::HostGroupMembership,
            &name,
            format!("host {host} is in host group {c}; pxfa never moves a host"),
            "`attach: fada` needs no host group; or move the host by hand",
        ),
    }
}

/// A tag change when pxfa's host lacks the desired tags.
fn drift(out: &mut HostResolution, dh: &DesiredHost, name: &str, tags: &TagIndex) {
    let keys = drifted(&dh.tags, tags.get(TagResource::Host, name));
    if keys.is_empty() {
        return;
    }
    let why = format!("pxfa tags differ: {}", keys.join(", "));
    out.tags.push(tag_change(
        Action::Update,
        Kind::Host,
        TagResource::Host,
        name,
        why,
        &dh.tags,
    ));
}

/// The deletions of the hosts tagged for the tenant that the desired state no
/// longer names: each leaves its group first (`memberships`), then goes.
pub(crate) fn delete_orphans(obs: &Observed) -> (Vec<Change>, Vec<Change>) {
    let mut memberships = Vec::new();
    let mut deletes = Vec::new();
    for name in &obs.orphans.hosts {
        let (Some(o), Ok(hn)) = (obs.hosts.get(&key(name)), HostName::new(name.as_str())) else {
            continue;
        };
        if let Some(g) = &o.host_group.name {
            memberships.push(
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
        deletes.push(
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
    (memberships, deletes)
}

#[cfg(test)]
mod tests {
    use flasharray::HostGroupName;
    use flasharray::models::Tag;

    use super::*;
    use crate::desired::{Scope, ownership_tags};

    const TENANT: &str = "tenant-demo";

    fn node(node: &str, create_as: &str, wwns: &[&str]) -> DesiredHost {
        DesiredHost {
            node: node.into(),
            name: HostName::new(create_as).unwrap(),
            wwns: wwns.iter().map(|w| w.to_string()).collect(),
            iqns: vec![],
            nqns: vec![],
            personality: None,
            host_group: Some(HostGroupName::new("hcp-mgmt").unwrap()),
            scope: Scope::Shared,
            tags: ownership_tags(&TENANT.into(), Scope::Shared, "mgmt-host"),
        }
    }

    fn desired(nodes: Vec<DesiredHost>) -> DesiredState {
        DesiredState {
            tenant: TENANT.into(),
            hosts: nodes,
            ..DesiredState::default()
        }
    }

    fn host(name: &str, wwns: &[&str], group: Option<&str>) -> Host {
        let mut host = Host::default();
        host.name = name.into();
        host.wwns = wwns.iter().map(|w| w.to_string()).collect();
        host.host_group.name = group.map(str::to_string);
        host
    }

    fn pxfa_tags(hosts: &[&str]) -> TagIndex {
        let mut t = TagIndex::default();
        for h in hosts {
            let tags: Vec<Tag> = ownership_tags(&TENANT.into(), Scope::Shared, "mgmt-host")
                .iter()
                .map(|(k, v)| Tag::new(*h, crate::desired::TAG_NAMESPACE, k, v))
                .collect();
            t.insert(TagResource::Host, &tags);
        }
        t
    }

    fn actions(r: &HostResolution) -> Vec<(Action, Kind, String)> {
        r.hosts
            .iter()
            .chain(&r.members)
            .map(|c| (c.action, c.kind, c.name.clone()))
            .collect()
    }

    /// The brownfield hosts: names unlike the node names, a subset host, a decoy.
    fn brownfield() -> Vec<Host> {
        vec![
            host("px-mgmt-worker-01", &["2100F4C7AA002706"], None),
            host(
                "px-mgmt-worker-02",
                &["2100F4C7AA002806", "2100F4C7AA002807"],
                None,
            ),
            host("worker-03", &["2100F4C7AA002906", "2100F4C7AA002907"], None),
            host("worker-02", &["2100F4C7AA00FF01"], None),
        ]
    }

    fn spec_nodes() -> Vec<DesiredHost> {
        vec![
            node(
                "worker-01",
                "worker-01",
                &["21:00:f4:c7:aa:00:27:06", "21:00:f4:c7:aa:00:27:07"],
            ),
            node(
                "worker-02",
                "worker-02",
                &["21:00:f4:c7:aa:00:28:06", "21:00:f4:c7:aa:00:28:07"],
            ),
            node(
                "worker-03",
                "worker-03",
                &["21:00:f4:c7:aa:00:29:06", "21:00:f4:c7:aa:00:29:07"],
            ),
        ]
    }

    #[test]
    fn node_found_by_wwn_whatever_its_name() {
        let r = resolve_hosts(&desired(spec_nodes()), &brownfield(), &TagIndex::default());
        assert!(r.conflicts.is_empty(), "{:?}", r.conflicts);
        let hosts: Vec<(&str, &[String])> = r
            .map
            .iter()
            .map(|m| (m.node.as_str(), m.hosts.as_slice()))
            .collect();
        assert_eq!(hosts[0].0, "worker-01");
        assert_eq!(hosts[0].1, ["px-mgmt-worker-01"]);
        assert_eq!(hosts[1].1, ["px-mgmt-worker-02"]);
        assert_eq!(hosts[2].1, ["worker-03"]);
        assert!(r.map.iter().all(|m| m.owner == HostOwner::Foreign));
        assert_eq!(
            r.map[0].to_line(),
            "= node worker-01 is host px-mgmt-worker-01 (found by wwn 2100F4C7AA002706; not pxfa's)"
        );
        // No host is created or changed; each joins the group.
        assert!(r.hosts.iter().all(|c| c.action == Action::NoOp));
        assert_eq!(
            r.members
                .iter()
                .filter(|c| c.action == Action::Create)
                .count(),
            3
        );
    }

    #[test]
    fn decoy_host_with_node_name_is_ignored() {
        let r = resolve_hosts(&desired(spec_nodes()), &brownfield(), &TagIndex::default());
        assert!(
            actions(&r)
                .iter()
                .all(|(_, _, n)| !n.starts_with("worker-02")),
            "{:?}",
            actions(&r)
        );
        assert!(!r.usable.contains("worker-02"));
    }

    #[test]
    fn subset_host_gives_warning_not_second_host() {
        let r = resolve_hosts(&desired(spec_nodes()), &brownfield(), &TagIndex::default());
        assert!(r.hosts.iter().all(|c| c.action != Action::Create));
        assert_eq!(r.map[0].missing_initiators, ["2100F4C7AA002707"]);
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(
            r.warnings[0].starts_with("host px-mgmt-worker-01 lacks 2100F4C7AA002707"),
            "{}",
            r.warnings[0]
        );
        // No patch of a foreign host.
        assert!(r.hosts.iter().all(|c| c.action != Action::Update));
    }

    #[test]
    fn pxfa_host_missing_an_initiator_gets_it_added_never_replaced() {
        let hosts = vec![host("worker-01", &["2100F4C7AA002706"], Some("hcp-mgmt"))];
        let d = desired(vec![spec_nodes().remove(0)]);
        let r = resolve_hosts(&d, &hosts, &pxfa_tags(&["worker-01"]));
        assert!(r.warnings.is_empty());
        let upd: Vec<&Change> = r
            .hosts
            .iter()
            .filter(|c| c.action == Action::Update)
            .collect();
        assert_eq!(upd.len(), 1);
        let Payload::Host { patch, .. } = &upd[0].payload else {
            panic!("{:?}", upd[0].payload)
        };
        assert_eq!(patch.add_wwns, ["2100F4C7AA002707"]);
        assert!(patch.wwns.is_none() && patch.remove_wwns.is_empty());
        assert_eq!(r.members[0].action, Action::NoOp);
        assert_eq!(r.map[0].owner, HostOwner::Pxfa);
    }

    #[test]
    fn missing_host_is_created_under_spec_name() {
        let d = desired(vec![node("worker-09", "mgmt-09", &["2100F4C7AA009906"])]);
        let r = resolve_hosts(&d, &brownfield(), &TagIndex::default());
        assert_eq!(
            actions(&r),
            vec![
                (Action::Create, Kind::Host, "mgmt-09".to_string()),
                (
                    Action::Create,
                    Kind::HostGroupMembership,
                    "mgmt-09 -> hcp-mgmt".to_string()
                ),
            ]
        );
        assert!(r.map[0].created);
    }

    #[test]
    fn name_taken_by_other_server_is_a_conflict_naming_host_field() {
        // Node worker-02 of another site: none of its initiators is registered, and
        // the name it would get belongs to the decoy.
        let d = desired(vec![
            node("worker-01", "w1", &["2100F4C7AA002706"]),
            node("worker-02", "worker-02", &["2100F4C7AA00AA01"]),
        ]);
        let r = resolve_hosts(&d, &brownfield(), &TagIndex::default());
        assert_eq!(r.conflicts.len(), 1, "{:?}", r.conflicts);
        let c = &r.conflicts[0];
        assert!(
            c.reason.contains("belongs to another server"),
            "{}",
            c.reason
        );
        assert!(c.reason.contains("2100F4C7AA00FF01"), "{}", c.reason);
        assert_eq!(
            c.resolution,
            "set spec.management.nodes[1].host to a free name"
        );
        assert!(r.hosts.iter().all(|c| c.action != Action::Create));
    }

    #[test]
    fn host_spanning_two_nodes_is_a_conflict() {
        let hosts = vec![host("big", &["2100F4C7AA002706", "2100F4C7AA002806"], None)];
        let d = desired(vec![
            node("worker-01", "w1", &["2100F4C7AA002706"]),
            node("worker-02", "w2", &["2100F4C7AA002806"]),
        ]);
        let r = resolve_hosts(&d, &hosts, &TagIndex::default());
        assert_eq!(r.conflicts.len(), 2, "{:?}", r.conflicts);
        assert!(r.conflicts[0].reason.contains("one server"));
        assert_eq!(
            r.conflicts[0].resolution,
            "fix the initiators in spec.management.nodes"
        );
        assert!(r.hosts.is_empty() && r.members.is_empty());
    }

    #[test]
    fn host_in_foreign_group_is_a_conflict_never_moved() {
        let hosts = vec![host("esx-01", &["2100F4C7AA002706"], Some("esx-prod"))];
        let d = desired(vec![node("worker-01", "w1", &["2100F4C7AA002706"])]);
        let r = resolve_hosts(&d, &hosts, &TagIndex::default());
        assert_eq!(r.conflicts.len(), 1);
        assert_eq!(r.conflicts[0].kind, Kind::HostGroupMembership);
        assert!(r.conflicts[0].resolution.contains("attach: fada"));
        assert!(r.members.is_empty());
        // Even a group pxfa made for something else is not left.
        let r = resolve_hosts(&d, &hosts, &pxfa_tags(&[]));
        assert!(
            r.members
                .iter()
                .all(|c| !matches!(c.payload, Payload::Membership { from: Some(_), .. }))
        );
    }

    #[test]
    fn fc_and_iscsi_hosts_of_one_node_both_stand_for_it() {
        let mut n = node("worker-01", "w1", &["2100F4C7AA002706"]);
        n.iqns = vec!["IQN.2020-01.com.example:w1".into()];
        let mut iscsi = host("w1-iscsi", &[], None);
        iscsi.iqns = vec!["iqn.2020-01.com.example:w1".into()];
        let hosts = vec![host("w1-fc", &["2100F4C7AA002706"], None), iscsi];
        let r = resolve_hosts(&desired(vec![n]), &hosts, &TagIndex::default());
        assert!(r.conflicts.is_empty() && r.warnings.is_empty());
        assert_eq!(r.map[0].hosts, ["w1-fc", "w1-iscsi"]);
        assert_eq!(r.members.len(), 2);
    }

    #[test]
    fn no_node_hosts_resolve_to_nothing() {
        let r = resolve_hosts(&desired(vec![]), &brownfield(), &TagIndex::default());
        assert_eq!(r, HostResolution::default());
    }
}
