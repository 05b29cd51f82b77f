//! The plan's vocabulary: one change to one object ([`Change`], typed by [`Action`]
//! and [`Kind`], carrying the [`Payload`] `apply` needs), what blocks one
//! ([`Blocker`]), and the ordered list of them with its counts ([`Plan`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use flasharray::models::{HostPatch, HostPost, Tag};
use flasharray::{
    ConnectionTarget, HostGroupName, HostName, PodName, RealmName, Size, TagResource, VolumeName,
};
use schemars::JsonSchema;
use serde::Serialize;

/// Most names sent in one REST call: the client's bound, which its lookups use too.
pub(crate) const MAX_NAMES_PER_CALL: usize = flasharray::MAX_NAMES_PER_CALL;

/// What a change does to its object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Make an object that does not exist.
    Create,
    /// Change an existing object (size, initiators, quota, tags, group).
    Update,
    /// Remove an object: destroy (recoverable) for volumes and pods, delete otherwise.
    Delete,
    /// Undo a pending destruction instead of creating a duplicate.
    Recover,
    /// Already as desired; listed so that a plan accounts for every object.
    #[serde(rename = "noop")]
    NoOp,
    /// Kept although the desired state no longer names it: a drive of a removed
    /// worker, which holds Portworx data. Not a change.
    Retain,
    /// Nothing for pxfa to do on the array yet. Not a change. A drive the
    /// management Portworx creates when its claim binds, or an API token held back
    /// while nothing would keep its value (see `Planned::holding_a_new_token`).
    Pending,
}

impl Action {
    fn symbol(self) -> char {
        match self {
            Action::Create => '+',
            Action::Update | Action::Recover => '~',
            Action::Delete => '-',
            Action::NoOp => '=',
            Action::Retain => '!',
            Action::Pending => '?',
        }
    }
}

/// The kind of array object a change is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A pod.
    Pod,
    /// A host group.
    HostGroup,
    /// A host.
    Host,
    /// A volume.
    Volume,
    /// pxfa's tags on an existing object (adoption or drift).
    Tag,
    /// A volume connected to a host or host group.
    Connection,
    /// A host's membership in a host group.
    HostGroupMembership,
    /// The tenant's API token.
    ApiToken,
    /// The tenant's realm (secure multi-tenancy).
    Realm,
    /// The management access policy giving the realm user its role in the realm.
    AccessPolicy,
    /// The realm-scoped array admin of the tenant's Portworx.
    RealmUser,
}

impl Kind {
    /// Words for human output (`host group`, `volume`).
    pub fn label(self) -> &'static str {
        match self {
            Kind::Pod => "pod",
            Kind::HostGroup => "host group",
            Kind::Host => "host",
            Kind::Volume => "volume",
            Kind::Tag => "tags of",
            Kind::Connection => "connection",
            Kind::HostGroupMembership => "membership",
            Kind::ApiToken => "api token of",
            Kind::Realm => "realm",
            Kind::AccessPolicy => "access policy",
            Kind::RealmUser => "realm user",
        }
    }
}

/// One change to one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Change {
    /// What happens.
    pub action: Action,
    /// To what kind of object.
    pub kind: Kind,
    /// The object: its name; `volume -> target` for connections, `host -> group` for
    /// memberships, the admin user for tokens.
    pub name: String,
    /// Why, in words an admin understands.
    pub reason: String,
    /// Extra facts (`size`, `from`, `to`, `lun`, ...): sizes in bytes, durations in
    /// milliseconds, counts as numbers, words as strings. Always present, maybe empty.
    pub details: BTreeMap<String, Detail>,
    /// What `apply` needs to carry the change out; not part of the JSON contract.
    #[serde(skip)]
    #[schemars(skip)]
    pub(crate) payload: Payload,
}

/// Typed data behind a change, so that `apply` never re-derives or re-parses names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum Payload {
    /// No data needed (no-ops).
    #[default]
    None,
    /// Pod create/recover/update/destroy.
    Pod { name: PodName, quota: Option<u64> },
    /// Host group create/delete.
    HostGroup { name: HostGroupName },
    /// Host create (`post`), update (`patch`) or delete.
    Host {
        name: HostName,
        post: Box<HostPost>,
        patch: Box<HostPatch>,
    },
    /// Membership: `from` is the group to leave first (update, delete), `to` the
    /// group to join (create, update).
    Membership {
        host: HostName,
        from: Option<HostGroupName>,
        to: Option<HostGroupName>,
    },
    /// Volume create/recover/resize/destroy; `truncate` for an allowed shrink.
    Volume {
        name: VolumeName,
        size: u64,
        truncate: bool,
    },
    /// Tags to set on one object; `tags` carries the resource name.
    Tags {
        resource: TagResource,
        tags: Vec<Tag>,
    },
    /// Connect or disconnect.
    Connection {
        target: ConnectionTarget,
        volume: VolumeName,
        lun: Option<u32>,
    },
    /// Realm create, recover or destroy.
    Realm { name: RealmName },
    /// Management access policy create: `role` inside `realm`.
    AccessPolicy {
        name: String,
        realm: RealmName,
        role: String,
        aggregation_strategy: String,
    },
    /// Realm user (token-only admin holding `policy`) create.
    RealmUser { admin: String, policy: String },
    /// Token creation.
    Token {
        admin: String,
        lifetime: Option<Duration>,
    },
}

impl Change {
    pub(crate) fn new(
        action: Action,
        kind: Kind,
        name: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Change {
            action,
            kind,
            name: name.into(),
            reason: reason.into(),
            details: BTreeMap::new(),
            payload: Payload::None,
        }
    }

    pub(crate) fn detail(mut self, key: &str, value: impl Into<Detail>) -> Self {
        self.details.insert(key.to_string(), value.into());
        self
    }

    pub(crate) fn with(mut self, payload: Payload) -> Self {
        self.payload = payload;
        self
    }

    /// One line: `+ create volume tenant-w00-data0 (512 GiB)`.
    pub fn to_line(&self) -> String {
        let verb = match (self.action, self.kind) {
            (Action::Delete, Kind::Volume | Kind::Pod | Kind::Realm) => "destroy",
            (Action::Delete, Kind::Connection) => "disconnect",
            (Action::Delete, _) => "delete",
            (Action::Create, Kind::Connection) => "connect",
            (Action::Create, Kind::Tag) => "adopt (tag)",
            (Action::Create, _) => "create",
            (Action::Update, _) => "update",
            (Action::Recover, _) => "recover",
            (Action::NoOp, _) => "keep",
            (Action::Retain, _) => "retain",
            (Action::Pending, _) => "pending",
        };
        let mut s = format!(
            "{} {verb} {} {}",
            self.action.symbol(),
            self.kind.label(),
            self.name
        );
        if !self.details.is_empty() {
            let d: Vec<String> = self
                .details
                .iter()
                .map(|(k, v)| {
                    if k == "size" {
                        v.to_string()
                    } else {
                        format!("{k} {v}")
                    }
                })
                .collect();
            let _ = write!(s, " ({})", d.join(", "));
        }
        s
    }
}

/// One fact about a change, typed so that scripts need not parse `4 TiB`.
///
/// JSON carries the bare value (bytes, milliseconds, a count or a string); the key
/// says which. Text output formats it for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Detail {
    /// A size or quota, in bytes.
    Bytes(u64),
    /// A duration, in milliseconds.
    Millis(u64),
    /// A count or number (initiators, LUN).
    Count(u64),
    /// Words: an object kind, a group name, `unlimited`.
    Text(String),
}

impl std::fmt::Display for Detail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Detail::Bytes(b) => write!(f, "{}", Size::bytes(*b)),
            Detail::Millis(ms) => f.write_str(&crate::duration::human_ms(*ms)),
            Detail::Count(n) => write!(f, "{n}"),
            Detail::Text(t) => f.write_str(t),
        }
    }
}

impl From<Size> for Detail {
    fn from(s: Size) -> Self {
        Detail::Bytes(s.as_u64())
    }
}

impl From<Duration> for Detail {
    fn from(d: Duration) -> Self {
        Detail::Millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

impl From<usize> for Detail {
    fn from(n: usize) -> Self {
        Detail::Count(n as u64)
    }
}

impl From<u32> for Detail {
    fn from(n: u32) -> Self {
        Detail::Count(u64::from(n))
    }
}

impl From<&str> for Detail {
    fn from(s: &str) -> Self {
        Detail::Text(s.to_string())
    }
}

impl From<String> for Detail {
    fn from(s: String) -> Self {
        Detail::Text(s)
    }
}

impl From<&String> for Detail {
    fn from(s: &String) -> Self {
        Detail::Text(s.clone())
    }
}

/// Something that stops a plan or one change: an object pxfa must not touch, or a
/// change that would lose data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Blocker {
    /// The kind of the object that blocks.
    pub kind: Kind,
    /// The object's name, as the array or the spec spells it.
    pub name: String,
    /// Why the plan or the change cannot go on.
    pub reason: String,
    /// What the admin can do about it: an edit (`spec.management.nodes[1].host`) or
    /// a flag.
    pub resolution: String,
}

/// Counts per action, as the JSON contract wants them (recover counts as update).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Summary {
    /// Objects to create.
    pub create: usize,
    /// Objects to update or recover.
    pub update: usize,
    /// Objects to destroy or delete.
    pub delete: usize,
    /// Objects already as desired.
    pub noop: usize,
    /// Drives of removed workers kept with their data.
    pub retain: usize,
    /// Drives waiting for their claim to bind (dynamic provisioning), and an API
    /// token held back until something can keep it.
    pub pending: usize,
}

impl Summary {
    /// The counts of `changes`.
    pub(crate) fn of(changes: &[Change]) -> Self {
        let mut summary = Summary::default();
        for c in changes {
            match c.action {
                Action::Create => summary.create += 1,
                Action::Update | Action::Recover => summary.update += 1,
                Action::Delete => summary.delete += 1,
                Action::NoOp => summary.noop += 1,
                Action::Retain => summary.retain += 1,
                Action::Pending => summary.pending += 1,
            }
        }
        summary
    }
}

/// Switches of the plan stage ([`crate::Observation::plan`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// Take over same-named objects without pxfa's tags by tagging them. Objects
    /// tagged for another tenant are never adopted.
    pub adopt: bool,
    /// Allow shrinking volumes (`truncate`), which discards the data past the new end.
    pub allow_shrink: bool,
    /// Soft-destroy the retained drives of worker indexes at or past the desired
    /// workers (CLI `--release-removed-workers`); never touches desired indexes.
    pub release_removed_workers: bool,
    /// With `release_removed_workers`: also destroy on the array the drives the
    /// management Portworx created (dynamic provisioning; CLI
    /// `--destroy-dynamic-drives`). Without it they stay retained for Portworx to
    /// release (PV reclaim policy Delete, claim deleted), as `destroy` keeps them.
    pub destroy_dynamic_drives: bool,
    /// Recover the destroyed drives of a released worker index when the desired
    /// state has that index again (CLI `--recover-released`); without it that is a
    /// refusal, since the index's Portworx node was probably decommissioned.
    pub recover_released: bool,
}

/// The ordered changes that bring the array to the desired state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Plan {
    /// The tenant planned for, `namespace/name` (its `tenant-namespace` and
    /// `tenant` tag values).
    pub tenant: String,
    /// Every change, no-ops included, in the order they take effect.
    pub changes: Vec<Change>,
    /// Objects pxfa must not touch; any conflict blocks the whole plan.
    pub conflicts: Vec<Blocker>,
    /// Changes refused because they would lose data or disrupt I/O; the rest of the
    /// plan still applies.
    pub refusals: Vec<Blocker>,
    /// Counts per action.
    pub summary: Summary,
    /// Which array hosts are the management nodes (`attach: host-group` only).
    pub host_map: Vec<NodeHost>,
    /// What the admin should know that does not block the plan.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Facts printed before the changes (from the desired state).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What the admin does outside pxfa (decommissioning retained workers).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub next_steps: Vec<String>,
    /// Volume serials already on the array, so that `apply` can report every
    /// volume's serial without another read.
    #[serde(skip)]
    #[schemars(skip)]
    pub(crate) serials: BTreeMap<String, String>,
}

impl Plan {
    /// A plan with nothing in it: `plan --destroy` of a tenant nothing on the array is
    /// tagged for.
    pub fn empty(tenant: &crate::desired::TenantId) -> Self {
        Plan::new(tenant, Vec::new(), Vec::new(), Vec::new(), BTreeMap::new())
    }

    pub(crate) fn new(
        tenant: &crate::desired::TenantId,
        changes: Vec<Change>,
        conflicts: Vec<Blocker>,
        refusals: Vec<Blocker>,
        serials: BTreeMap<String, String>,
    ) -> Self {
        let summary = Summary::of(&changes);
        Plan {
            tenant: tenant.to_string(),
            changes,
            conflicts,
            refusals,
            summary,
            host_map: Vec::new(),
            warnings: Vec::new(),
            notes: Vec::new(),
            next_steps: Vec::new(),
            serials,
        }
    }

    /// True when a conflict forbids applying anything.
    pub fn is_blocked(&self) -> bool {
        !self.conflicts.is_empty()
    }

    /// True when nothing blocks applying: no conflict and no refusal. `plan` exits 1
    /// and `apply` writes nothing otherwise.
    pub fn is_applicable(&self) -> bool {
        self.conflicts.is_empty() && self.refusals.is_empty()
    }

    /// True when applying would change the array.
    pub fn has_changes(&self) -> bool {
        self.actionable().next().is_some()
    }

    /// The API token creation held back because nothing would keep the token yet
    /// (`Planned::holding_a_new_token`), if it was: its reason says why.
    pub fn held_token(&self) -> Option<&Change> {
        self.changes
            .iter()
            .find(|c| c.action == Action::Pending && c.kind == Kind::ApiToken)
    }

    /// The changes `apply` would make (no-ops, retained and pending drives left out).
    pub fn actionable(&self) -> impl Iterator<Item = &Change> {
        self.changes
            .iter()
            .filter(|c| !matches!(c.action, Action::NoOp | Action::Retain | Action::Pending))
    }

    /// A readable diff, one line per change; no-ops only when `verbose`.
    pub fn to_text(&self, verbose: bool) -> String {
        let mut out = String::new();
        for n in &self.notes {
            let _ = writeln!(out, "{n}");
        }
        for h in &self.host_map {
            let _ = writeln!(out, "{}", h.to_line());
        }
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        for c in &self.conflicts {
            let _ = writeln!(
                out,
                "! conflict {} {}: {}",
                c.kind.label(),
                c.name,
                c.reason
            );
            if !c.resolution.is_empty() {
                let _ = writeln!(out, "  resolution: {}", c.resolution);
            }
        }
        for r in &self.refusals {
            let _ = writeln!(out, "x refused {} {}: {}", r.kind.label(), r.name, r.reason);
            if !r.resolution.is_empty() {
                let _ = writeln!(out, "  resolution: {}", r.resolution);
            }
        }
        for c in &self.changes {
            if c.action == Action::NoOp && !verbose {
                continue;
            }
            out.push_str(&c.to_line());
            if verbose {
                let _ = write!(out, "  # {}", c.reason);
            }
            out.push('\n');
        }
        for step in &self.next_steps {
            let _ = writeln!(out, "  next: {step}");
        }
        let s = self.summary;
        let _ = write!(
            out,
            "Plan for {}: {} to create, {} to update, {} to delete, {} unchanged",
            self.tenant, s.create, s.update, s.delete, s.noop
        );
        if s.retain > 0 {
            let _ = write!(out, ", {} retained", s.retain);
        }
        if s.pending > 0 {
            let _ = write!(out, ", {} pending", s.pending);
        }
        out.push_str(".\n");
        if self.is_blocked() {
            out.push_str(
                "Blocked: resolve the conflicts above (or adopt the objects) before applying.\n",
            );
        }
        out
    }
}

/// Who made a management host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HostOwner {
    /// pxfa created it (`managed-by=pxfa`, shared or this tenant's).
    Pxfa,
    /// Someone else did: pxfa adds it to its group at most.
    Foreign,
}

/// Which array hosts stand for one management node, and how they were found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct NodeHost {
    /// The Kubernetes node name from the spec.
    pub node: String,
    /// The array hosts that are this node (one to create when none holds its
    /// initiators).
    pub hosts: Vec<String>,
    /// The initiators that found them (`wwn 2100…`); empty for a host to create.
    pub found_by: Vec<String>,
    /// Who made the hosts (foreign when any is).
    pub owner: HostOwner,
    /// The node's initiators no host holds.
    pub missing_initiators: Vec<String>,
    /// True when pxfa will create the host.
    pub created: bool,
}

impl NodeHost {
    /// `= node worker-01 is host px-mgmt-worker-01 (found by wwn 2100F4C7AA002706; not pxfa's)`.
    pub fn to_line(&self) -> String {
        if self.created {
            return format!(
                "+ node {} gets new host {} (no host holds its initiators)",
                self.node,
                self.hosts.join(", ")
            );
        }
        let owner = match self.owner {
            HostOwner::Pxfa => "pxfa's",
            HostOwner::Foreign => "not pxfa's",
        };
        let verb = if self.hosts.len() > 1 {
            "is hosts"
        } else {
            "is host"
        };
        format!(
            "= node {} {verb} {} (found by {}; {owner})",
            self.node,
            self.hosts.join(", "),
            self.found_by.join(", ")
        )
    }
}
