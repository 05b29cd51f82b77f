//! The array objects a tenant needs, as drivers describe them and the converge engine
//! applies them.
//!
//! Every object pxfa creates carries tags in the `pxfa.io` namespace:
//! `managed-by=pxfa` always; `tenant=<name>` and `tenant-namespace=<namespace>` (the
//! tenant's identity, [`TenantId`]) on objects that belong to one tenant;
//! `scope=shared` on management-cluster objects (the management nodes' hosts and their
//! host group) that several tenants use. pxfa changes or destroys only objects whose
//! tags say it owns them; destroying a tenant never removes shared objects.

use std::collections::BTreeMap;
use std::time::Duration;

use flasharray::{ConnectionTarget, HostGroupName, HostName, PodName, RealmName, Size, VolumeName};
use serde::Serialize;

/// The tag namespace pxfa writes its ownership tags in (defined here, not in the
/// client: the client knows tags, not whose they are).
pub const TAG_NAMESPACE: &str = "pxfa.io";
/// Tag key marking pxfa's objects; value [`MANAGED_BY_VALUE`].
pub(crate) const TAG_MANAGED_BY: &str = "managed-by";
/// Value of [`TAG_MANAGED_BY`].
pub(crate) const MANAGED_BY_VALUE: &str = "pxfa";
/// Tag key naming the owning tenant (its `metadata.name`).
pub const TAG_TENANT: &str = "tenant";
/// Tag key naming the owning tenant's namespace (its `metadata.namespace`). An earlier
/// pxfa wrote [`TAG_TENANT`] alone: such an object is no tenant's until claimed.
pub const TAG_TENANT_NAMESPACE: &str = "tenant-namespace";
/// Tag key on the pod of a tenant with an API token: the array user that owns the
/// token (`spec.array.tokenUser`, default `pxfa-<name>`). Array users carry no
/// tags, so the tenant's anchor object records whose user it is, and another
/// tenant never takes, rotates or deletes a user a pod names
/// (`plan::ownership`). Every mode with a token keeps its drives in a pod. User
/// names are at most 32 characters (`spec::identifiers`), well inside a tag value's
/// 256.
pub(crate) const TAG_TOKEN_USER: &str = "token-user";
/// Tag key for shared objects; value [`SCOPE_SHARED`].
pub(crate) const TAG_SCOPE: &str = "scope";
/// Value of `TAG_SCOPE` on shared objects.
pub const SCOPE_SHARED: &str = "shared";
/// Tag key for the object's role (`px-data`, `px-metadata`, `mgmt-host`, ...).
pub(crate) const TAG_ROLE: &str = "role";
/// Tag key for the worker index a volume belongs to.
pub const TAG_NODE: &str = "node-index";
/// Tag key for the disk index on that worker.
pub const TAG_DISK: &str = "disk-index";
/// Tag key naming the management claim (`namespace/name`) a dynamically provisioned
/// drive was created for. That the array accepts `/` in a tag value is what the mock
/// models; a real array's character rules for tag values are unconfirmed [L].
pub(crate) const TAG_CLAIM: &str = "claim";
/// Tag key on a direct-access tenant's pod: the `spec.storage.capacity` (bytes) its
/// drives were last sized for, so that a later plan can tell a capacity decrease
/// from a scale-out (both give a smaller fresh drive size).
pub const TAG_CAPACITY: &str = "capacity";
/// Tag key on a direct-access tenant's pod: the data drive size (bytes) in use, as
/// the last plan sized it. With [`TAG_DRIVES_PER_NODE`] and [`TAG_METADATA_SIZE`] it
/// is the sizing in use, read back when the drives themselves cannot be seen
/// (dynamic drives nobody tagged: no cluster access), so that a scale-out never
/// re-divides the capacity into smaller drives. A scale-out or scale-in does not
/// change them (no tag write); a capacity growth does.
pub(crate) const TAG_DRIVE_SIZE: &str = "drive-size";
/// Tag key on a direct-access tenant's pod: data drives per worker in use.
pub(crate) const TAG_DRIVES_PER_NODE: &str = "drives-per-node";
/// Tag key on a direct-access tenant's pod: the metadata drive size (bytes) in use.
pub(crate) const TAG_METADATA_SIZE: &str = "metadata-size";

/// The namespace of a spec without `metadata.namespace`: where `oc apply` puts a
/// namespaced object when neither the object nor the kubeconfig context names one.
pub const DEFAULT_TENANT_NAMESPACE: &str = "default";

/// Who a tenant is: its namespace and its name. Two teams may both call a tenant
/// `dev`; their objects are told apart by both (see `plan::ownership`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TenantId {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`: what the array names derive from.
    pub name: String,
}

impl TenantId {
    /// The tenant `namespace/name`.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        TenantId {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

/// `namespace/name`, as Kubernetes writes an object's identity.
impl std::fmt::Display for TenantId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// `namespace/name`, or a bare name in [`DEFAULT_TENANT_NAMESPACE`] (as a spec
/// without `metadata.namespace` reads).
impl From<&str> for TenantId {
    fn from(s: &str) -> Self {
        match s.split_once('/') {
            Some((ns, name)) => TenantId::new(ns, name),
            None => TenantId::new(DEFAULT_TENANT_NAMESPACE, s),
        }
    }
}

impl Serialize for TenantId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Who an object belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Only this tenant: created, changed and destroyed with it.
    Tenant,
    /// Shared with other tenants (management hosts, their host group): created and
    /// updated, never destroyed by a tenant's `destroy`.
    Shared,
}

/// Ownership tags for an object of `tenant` in `scope` with `role`.
pub fn ownership_tags(tenant: &TenantId, scope: Scope, role: &str) -> BTreeMap<String, String> {
    let mut t = BTreeMap::new();
    t.insert(TAG_MANAGED_BY.to_string(), MANAGED_BY_VALUE.to_string());
    match scope {
        Scope::Tenant => {
            t.insert(TAG_TENANT.to_string(), tenant.name.clone());
            t.insert(TAG_TENANT_NAMESPACE.to_string(), tenant.namespace.clone());
        }
        Scope::Shared => {
            t.insert(TAG_SCOPE.to_string(), SCOPE_SHARED.to_string());
        }
    }
    t.insert(TAG_ROLE.to_string(), role.to_string());
    t
}

impl DesiredState {
    /// Records the token user on the tenant's pod ([`TAG_TOKEN_USER`]): what the
    /// driver of a mode with a token calls once both are built.
    pub(crate) fn with_token_user_tag(mut self) -> Self {
        if let (Some(t), Some(pod)) = (&self.api_token, self.pod.as_mut()) {
            pod.tags.insert(TAG_TOKEN_USER.to_string(), t.admin.clone());
        }
        self
    }
}

/// A pod for the tenant's volumes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DesiredPod {
    /// The pod's array name, derived from the tenant (see `naming`).
    pub name: PodName,
    /// Quota; `None` for unlimited.
    pub quota: Option<Size>,
    /// Tags (`pxfa.io` namespace).
    pub tags: BTreeMap<String, String>,
}

/// A volume.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DesiredVolume {
    /// Full name, `pod::vol` when in the tenant's pod.
    pub name: VolumeName,
    /// Provisioned size.
    pub size: Size,
    /// Tags (`pxfa.io` namespace): ownership, role, node and disk index.
    pub tags: BTreeMap<String, String>,
}

/// A management-cluster PersistentVolumeClaim, by namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct DriveClaim {
    /// Namespace (the hosted control plane namespace).
    pub namespace: String,
    /// The claim's name within that namespace.
    pub name: String,
}

impl std::fmt::Display for DriveClaim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// A drive the management Portworx creates when its claim binds (dynamic
/// provisioning): pxfa does not create the volume, it finds it (claim, bound PV,
/// array volume) and tags it, so that later plans, `status` and `destroy` know it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DesiredDrive {
    /// The claim whose binding creates the volume.
    pub claim: DriveClaim,
    /// The size the claim requests.
    pub size: Size,
    /// The pod the class places the volume in (`pure_fa_pod_name`); `None` puts it
    /// at the array's top level.
    pub pod: Option<PodName>,
    /// Tags pxfa sets once it found the volume (`pxfa.io`): ownership, role,
    /// node index, disk index and claim. Role, node and disk index identify the
    /// drive in later plans, without a cluster.
    pub tags: BTreeMap<String, String>,
}

/// A management node the array must reach through a host group (`attach:
/// host-group`): its initiators identify the array host(s) that are the node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DesiredHost {
    /// The Kubernetes node name (the spec's `management.nodes[].name`).
    pub node: String,
    /// The name pxfa gives the host when no host holds the node's initiators. Never
    /// used to look a host up: hosts are found by initiator.
    pub name: HostName,
    /// FC WWNs, normalised (16 upper-case hex digits).
    pub wwns: Vec<String>,
    /// iSCSI IQNs.
    pub iqns: Vec<String>,
    /// NVMe NQNs.
    pub nqns: Vec<String>,
    /// Personality, usually none for Linux.
    pub personality: Option<String>,
    /// The host group the host must be in.
    pub host_group: Option<HostGroupName>,
    /// Tenant-owned or shared.
    pub scope: Scope,
    /// Tags (`pxfa.io` namespace).
    pub tags: BTreeMap<String, String>,
}

/// A host group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DesiredHostGroup {
    /// The host group's array name: the tenant's, or the shared group's.
    pub name: HostGroupName,
    /// Tenant-owned or shared.
    pub scope: Scope,
    /// Tags (`pxfa.io` namespace).
    pub tags: BTreeMap<String, String>,
}

/// A connection of one volume to a host or host group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DesiredConnection {
    /// The host or host group.
    #[serde(serialize_with = "ser_target")]
    pub target: ConnectionTarget,
    /// The volume.
    pub volume: VolumeName,
    /// A fixed LUN, or `None` to let the array choose.
    pub lun: Option<u32>,
}

fn ser_target<S: serde::Serializer>(t: &ConnectionTarget, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&t.to_string())
}

/// An API token for the tenant's Portworx (`px-pure-secret`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DesiredApiToken {
    /// The array admin user the token belongs to; must exist on the array unless it
    /// is the realm user pxfa creates ([`DesiredRealm::user`]).
    pub admin: String,
    /// Token lifetime; `None` never expires.
    pub lifetime: Option<Duration>,
}

/// The tenant's realm (secure multi-tenancy). Realms carry no tags: a realm is this
/// tenant's when the tenant's pod inside it is (see `plan`), and pxfa never removes a
/// realm that holds anything else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DesiredRealm {
    /// The realm's array name, from `spec.array.realm`.
    pub name: RealmName,
    /// The realm-scoped user of the tenant's Portworx (cloud-drive only).
    pub user: Option<DesiredRealmUser>,
}

/// A token-only array admin whose only rights come from one management access
/// policy: `role` inside the realm. Neither carries tags either: pxfa recognises
/// them by content (the policy grants exactly this, the admin holds exactly it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DesiredRealmUser {
    /// The admin (the token user).
    pub admin: String,
    /// The management access policy the admin holds.
    pub policy: String,
    /// The built-in role inside the realm (`storage`).
    pub role: String,
    /// The policy's aggregation strategy (`least-common-permissions`).
    pub aggregation_strategy: String,
}

/// Everything one tenant needs on the array.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DesiredState {
    /// The tenant (the `tenant` and `tenant-namespace` tag values).
    pub tenant: TenantId,
    /// The realm the tenant's pod is in, if any (created before the pod).
    pub realm: Option<DesiredRealm>,
    /// The tenant's pod, if any.
    pub pod: Option<DesiredPod>,
    /// The host groups the management hosts join.
    pub host_groups: Vec<DesiredHostGroup>,
    /// One host per management node that attaches the tenant's volumes.
    pub hosts: Vec<DesiredHost>,
    /// The volumes pxfa creates and sizes itself; the dynamically provisioned ones are
    /// `drives`.
    pub volumes: Vec<DesiredVolume>,
    /// The volume-to-host or volume-to-host-group connections the volumes need.
    pub connections: Vec<DesiredConnection>,
    /// Drives the management Portworx creates (dynamic provisioning); pxfa finds and
    /// tags them.
    pub drives: Vec<DesiredDrive>,
    /// API token for the tenant.
    pub api_token: Option<DesiredApiToken>,
    /// Facts about this desired state the plan prints before its changes (e.g. why
    /// there are no hosts).
    pub notes: Vec<String>,
}

impl DesiredState {
    /// True when the tenant needs nothing on the array (KubeVirt CSI mapping).
    pub fn is_empty(&self) -> bool {
        self.pod.is_none()
            && self.realm.is_none()
            && self.host_groups.is_empty()
            && self.hosts.is_empty()
            && self.volumes.is_empty()
            && self.connections.is_empty()
            && self.drives.is_empty()
            && self.api_token.is_none()
    }
}
