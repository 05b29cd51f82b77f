//! The `TenantStorage` document, field for field as admins write it.
//!
//! Every struct refuses unknown fields so that a typo (`modee:`) is an error with its
//! path rather than a silently ignored setting. Defaults that do not depend on the
//! tenant are serde defaults (the `default_*` functions, listed in `docs/spec.md`);
//! defaults derived from the tenant name (node pool, token user, Portworx cluster
//! name, app StorageClass) stay `None` after deserialising and are resolved by the
//! accessors on [`TenantStorage`](super::TenantStorage) and filled in by
//! [`parse_spec`](super::parse_spec), so serialising a parsed spec shows every
//! effective value.
// The field docs are the CRD's descriptions (`kubectl explain`), where `[L]` and
// `[M]` are confidence marks for the admin, not links: rustdoc's escapes would show
// there as `\[L\]`.
#![allow(rustdoc::broken_intra_doc_links)]

use std::fmt;

use flasharray::{HostGroupName, HostName, PodName, RealmName, Size};
use serde::{Deserialize, Serialize};

use super::net::{Ipv4Cidr, Ipv4Range};
use super::version::Version;

/// The only accepted `apiVersion`.
pub const API_VERSION: &str = "pxfa.io/v1alpha1";
/// The only accepted `kind`.
pub const KIND: &str = "TenantStorage";

/// Default HostedCluster namespace.
pub const DEFAULT_NAMESPACE: &str = "clusters";
/// Default number of worker VMs.
pub const DEFAULT_REPLICAS: u32 = 3;
/// Default vCPU cores per worker VM: the PX-StoreV2 minimum.
pub const DEFAULT_CORES: u32 = 8;
/// Default memory per worker VM.
pub const DEFAULT_MEMORY: Size = Size::gib(32);
/// Default root disk per worker VM: what PX-StoreV2 needs when `/var` and `/opt` share
/// the root disk.
pub const DEFAULT_ROOT_VOLUME: Size = Size::gib(128);
/// Default management StorageClass for VM root disks.
pub const DEFAULT_ROOT_STORAGE_CLASS: &str = "pxfa-vm-rootdisk";
/// Default Portworx replication factor of the tenant's app StorageClass.
pub const DEFAULT_REPLICATION: u8 = 3;
/// Default drives per storage node before the pool ceiling adds more.
pub const DEFAULT_DRIVES_PER_NODE: u32 = 1;
/// Default (and minimum) PX-StoreV2 metadata device.
pub const DEFAULT_METADATA_SIZE: Size = Size::gib(64);
/// Prefix of the default per-tenant management FADA StorageClass (direct-access),
/// followed by the tenant name.
pub const DEFAULT_FADA_STORAGE_CLASS_PREFIX: &str = "pxfa-fada-";
/// Default guest StorageClass name (kubevirt-csi).
pub const DEFAULT_GUEST_STORAGE_CLASS: &str = "px-kubevirt-csi";
/// Default Portworx namespace.
pub const DEFAULT_PORTWORX_NAMESPACE: &str = "portworx";
/// Default Portworx version: the first supported for hosted control planes.
pub const DEFAULT_PORTWORX_VERSION: Version = Version::new(3, 6, 2);
/// Default secondary-network MTU.
pub const DEFAULT_MTU: u32 = 1500;
/// Default NetworkAttachmentDefinition name.
pub const DEFAULT_NAD_NAME: &str = "storage-network";
/// Default guest interface for the storage network.
pub const DEFAULT_GUEST_INTERFACE: &str = "enp2s0";
/// Default management VolumeSnapshotClass mapped into a kubevirt-csi guest: the one
/// the Portworx operator creates for CSI snapshots ([M]: name as in Portworx's docs).
pub const DEFAULT_INFRA_SNAPSHOT_CLASS: &str = "px-csi-snapclass";
/// Default guest VolumeSnapshotClass name (kubevirt-csi).
pub const DEFAULT_GUEST_SNAPSHOT_CLASS: &str = "px-kubevirt-csi-snap";

/// One tenant's storage, as a Kubernetes-shaped resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TenantStorage {
    /// Must be [`API_VERSION`].
    pub api_version: String,
    /// Must be [`KIND`].
    pub kind: String,
    /// The tenant's name and labels.
    pub metadata: Metadata,
    /// What the tenant needs.
    pub spec: TenantSpec,
}

/// Object metadata; `name` is the tenant name every derived object name starts from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Metadata {
    /// Tenant name: DNS-1123 label, at most 40 characters.
    pub name: String,
    /// Namespace of the resource when it is stored as a custom resource; not used by
    /// pxfa (the tenant's namespaces are `hostedCluster.namespace` and the HCP
    /// namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Free-form labels, carried for a future controller.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub labels: std::collections::BTreeMap<String, String>,
    /// Free-form annotations, carried for a future controller.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub annotations: std::collections::BTreeMap<String, String>,
}

/// The body of the spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TenantSpec {
    /// The HostedCluster and its NodePool.
    pub hosted_cluster: HostedClusterSpec,
    /// The tenant's storage option and capacity.
    pub storage: StorageSpec,
    /// The FlashArray.
    #[serde(default)]
    pub array: ArraySpec,
    /// The management cluster's nodes as the array sees them.
    pub management: ManagementSpec,
    /// Optional secondary storage network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSpec>,
    /// Portworx in the tenant.
    #[serde(default)]
    pub portworx: PortworxSpec,
    /// Controller only (the CLI ignores it): whether the controller applies array
    /// changes on its own or waits for an approval annotation. Default `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply: Option<ApplyPolicy>,
    /// Controller only: the Secret (in the object's namespace) holding the array
    /// credentials, so that they never sit in the object itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret: Option<CredentialsSecretRef>,
    /// Controller only: what deleting the object does on the array. Default
    /// `destroy` (recoverable for the array's eradication delay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_delete: Option<OnDelete>,
    /// Controller only: deleting the object destroys the dynamic FADA drives (the
    /// ones the management Portworx created for the drive claims) on the array, as
    /// `pxfa destroy --destroy-dynamic-drives` does; for a management Portworx that is
    /// gone, since it leaves that Portworx's volume records and PVs stale. Default
    /// false: they are released through the management Portworx (PV reclaim policy
    /// Delete, claim deleted: `pxfa runbook delete`), and the delete waits, saying so
    /// in the status, until Portworx has released them, then destroys the rest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub destroy_dynamic_drives: bool,
}

/// Whether the controller applies a plan by itself.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ApplyPolicy {
    /// Apply every plan, and re-converge drift.
    #[default]
    Auto,
    /// Plan only; one apply runs per approval annotation (`pxfa.io/approve-apply`).
    Manual,
}

/// What deleting a TenantStorage object does to the tenant's array objects.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum OnDelete {
    /// Destroy: volumes and the pod stay recoverable for the eradication delay.
    #[default]
    Destroy,
    /// Destroy and eradicate: irreversible.
    Eradicate,
    /// Leave the array objects as they are.
    Keep,
}

/// A Secret holding a pure.json and optionally the array's CA certificate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CredentialsSecretRef {
    /// Secret name, in the TenantStorage object's namespace.
    pub name: String,
    /// Key holding the pure.json document.
    #[serde(default = "default_pure_json_key")]
    pub pure_json_key: String,
    /// Key holding the array's CA certificate (PEM); optional in the Secret.
    #[serde(default = "default_ca_key")]
    pub ca_key: String,
}

/// Default key of the pure.json document in the credentials Secret.
pub const DEFAULT_PURE_JSON_KEY: &str = "pure.json";
/// Default key of the CA certificate in the credentials Secret.
pub const DEFAULT_CA_KEY: &str = "ca.crt";

fn default_pure_json_key() -> String {
    DEFAULT_PURE_JSON_KEY.to_string()
}
fn default_ca_key() -> String {
    DEFAULT_CA_KEY.to_string()
}

/// The HostedCluster and its KubeVirt NodePool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostedClusterSpec {
    /// HostedCluster name.
    pub name: String,
    /// HostedCluster/NodePool namespace; the control plane runs in `<namespace>-<name>`.
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// NodePool name; default `<metadata.name>-workers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_pool: Option<String>,
    /// Worker VMs.
    #[serde(default = "default_replicas")]
    pub replicas: u32,
    /// vCPU cores per worker VM.
    #[serde(default = "default_cores")]
    pub cores: u32,
    /// Memory per worker VM.
    #[serde(default = "default_memory")]
    #[schemars(schema_with = "super::schema::size_schema")]
    pub memory: Size,
    /// Root disk per worker VM.
    #[serde(default = "default_root_volume")]
    #[schemars(schema_with = "super::schema::size_schema")]
    pub root_volume_size: Size,
    /// OpenShift release image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_image: Option<String>,
    /// OpenShift version of the hosted cluster; derived from the release image tag
    /// when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub ocp_version: Option<Version>,
    /// Deprecated place of `management.virtualizationVersion` (the version is the
    /// management cluster's); read only when that field is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub virtualization_version: Option<Version>,
    /// Management StorageClass for VM root disks (must be RWX Block).
    #[serde(default = "default_root_storage_class")]
    pub root_storage_class: String,
    /// Name of the pull-secret Secret in `namespace` the HostedCluster refers to;
    /// default `<name>-pull-secret`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_secret: Option<String>,
    /// Name of a Secret in `namespace` holding the SSH public key (`id_rsa.pub`) for
    /// the worker VMs; none: no SSH key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_key_secret: Option<String>,
    /// Management StorageClass for the hosted etcd volumes; none: the management
    /// cluster's default class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etcd_storage_class: Option<String>,
}

/// The three ways a tenant gets its storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StorageMode {
    /// Portworx in the tenant creates its own FlashArray volumes (FACD).
    CloudDrive,
    /// Pre-provisioned FlashArray volumes passed into the worker VMs.
    DirectAccess,
    /// No Portworx in the tenant: the guest's PVCs map to management PVCs.
    KubevirtCsi,
}

impl fmt::Display for StorageMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// SAN protocol between hosts and the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// Fibre Channel (WWNs).
    Fc,
    /// iSCSI (IQNs).
    Iscsi,
    /// NVMe over TCP (NQNs).
    NvmeTcp,
}

impl Protocol {
    /// The spelling in the spec.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Fc => "fc",
            Protocol::Iscsi => "iscsi",
            Protocol::NvmeTcp => "nvme-tcp",
        }
    }

    /// The node field holding this protocol's initiators.
    pub fn initiator_field(self) -> &'static str {
        match self {
            Protocol::Fc => "wwns",
            Protocol::Iscsi => "iqns",
            Protocol::NvmeTcp => "nqns",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How direct-access volumes reach the worker VMs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Attach {
    /// The management Portworx attaches the volume on demand through a FADA PVC.
    #[default]
    Fada,
    /// pxfa connects the volumes to the management host group up front.
    HostGroup,
}

/// How direct-access drive volumes come to exist (see `spec::provisioning`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Provisioning {
    /// By the Portworx release: dynamic everywhere import is not documented.
    #[default]
    Auto,
    /// The management Portworx creates each volume when its claim binds.
    Dynamic,
    /// pxfa pre-creates the volumes and the claims import them (only where the
    /// Portworx release documents import).
    Import,
}

/// What raising `spec.storage.capacity` does to the drives already on the array
/// (see `docs/lifecycle.md`, "Grow").
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum CapacityGrowth {
    /// Grow every data drive (PX-StoreV2 pools expand by resize-drive only), up to
    /// the pool ceiling `spec.portworx.maxPoolSize`.
    #[default]
    Resize,
    /// Add data drives of the size in use to every worker, each a new pool (the
    /// Portworx `drive add` step is unconfirmed, [L]).
    AddPool,
}

/// The virtual disk bus of direct-access disks inside the VM.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum DiskBus {
    /// virtio-scsi: stable `/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_<serial>` paths.
    #[default]
    Scsi,
    /// virtio-blk: `/dev/disk/by-id/virtio-<serial>` paths (serial truncated to 20).
    Virtio,
}

impl DiskBus {
    /// The bus as the spec and KubeVirt's disk `bus` field spell it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            DiskBus::Scsi => "scsi",
            DiskBus::Virtio => "virtio",
        }
    }
}

/// The tenant's storage option and capacity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StorageSpec {
    /// cloud-drive, direct-access or kubevirt-csi.
    pub mode: StorageMode,
    /// SAN protocol; required for cloud-drive and direct-access, refused for
    /// kubevirt-csi.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    /// Usable capacity for the tenant's apps, after replication.
    #[schemars(schema_with = "super::schema::size_schema")]
    pub capacity: Size,
    /// Portworx replication of the app StorageClass, 1..=3.
    #[serde(default = "default_replication")]
    pub replication: u8,
    /// Drives per storage node; sizing adds drives to stay under the pool ceiling.
    #[serde(default = "default_drives_per_node")]
    pub drives_per_node: u32,
    /// PX-StoreV2 metadata device per node (>= 64Gi).
    #[serde(default = "default_metadata_size")]
    #[schemars(schema_with = "super::schema::size_schema")]
    pub metadata_size: Size,
    /// Optional FlashArray pod for the tenant's volumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub pod: Option<PodName>,
    /// direct-access: how volumes reach the VMs.
    #[serde(default)]
    pub attach: Attach,
    /// direct-access: how drive volumes come to exist (`auto` resolves by the
    /// Portworx release).
    #[serde(default)]
    pub provisioning: Provisioning,
    /// direct-access: the VM disk bus.
    #[serde(default)]
    pub disk_bus: DiskBus,
    /// What a `capacity` raise does to existing drives: `resize` (default) or
    /// `add-pool`.
    #[serde(default)]
    pub capacity_growth: CapacityGrowth,
    /// direct-access: management FADA StorageClass name; default
    /// `pxfa-fada-<metadata.name>` (one per tenant: its `pure_fa_pod_name` parameter
    /// is immutable). Read it through [`super::TenantStorage::fada_storage_class`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fada_storage_class: Option<String>,
    /// Tenant StorageClass name; default `px-repl<replication>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_storage_class: Option<String>,
    /// Make the tenant's StorageClass its default class
    /// (`storageclass.kubernetes.io/is-default-class`). Portworx modes only: with
    /// kubevirt-csi HyperShift owns the guest class.
    #[serde(default)]
    pub default_storage_class: bool,
    /// kubevirt-csi: the guest StorageClass name.
    #[serde(default = "default_guest_storage_class")]
    pub guest_storage_class: String,
    /// Access modes the tenant's apps ask for (`ReadWriteOnce`, `ReadWriteMany`, ...);
    /// used by lint (kubevirt-csi cannot give RWX Filesystem). Empty: `ReadWriteOnce`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_modes: Vec<String>,
    /// The volume mode the tenant's apps ask for; with `accessModes`, what lint
    /// checks against kubevirt-csi (RWX Block works there, RWX Filesystem does not).
    #[serde(default)]
    pub volume_mode: VolumeMode,
    /// kubevirt-csi: the management VolumeSnapshotClass mapped into the guest.
    #[serde(default = "default_infra_snapshot_class")]
    pub infra_snapshot_class: String,
    /// kubevirt-csi: the guest VolumeSnapshotClass name.
    #[serde(default = "default_guest_snapshot_class")]
    pub guest_snapshot_class: String,
}

/// A PersistentVolumeClaim's volume mode.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum VolumeMode {
    /// A mounted file system.
    #[default]
    Filesystem,
    /// A raw block device.
    Block,
}

/// The FlashArray. Credentials never live here.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArraySpec {
    /// Management endpoint (`MgmtEndPoint` in pure.json): host name or IP, no scheme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// cloud-drive: the array admin owning the tenant's API token; default
    /// `pxfa-<metadata.name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_user: Option<String>,
    /// How long the API tokens pxfa creates for the tenant's token user live (at
    /// `apply` and `token rotate`): a duration such as `365d` or `2160h`, or `never`;
    /// default `365d`. `pxfa token rotate` before it ends keeps the token fresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_lifetime: Option<String>,
    /// Secure multi-tenancy (REST 2.36+, see `docs/realms.md`): the FlashArray realm
    /// pxfa creates for the tenant's pod (`<realm>::<pod>`); for cloud-drive the
    /// token user becomes a user with rights only inside this realm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub realm: Option<RealmName>,
    /// With `realm` (cloud-drive): the built-in role the token user gets inside the
    /// realm; default `storage` (Portworx creates and connects volumes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realm_role: Option<String>,
    /// With `realm` (cloud-drive): the access policy's aggregation strategy; default
    /// `least-common-permissions`, so that no other policy can widen the user's rights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realm_aggregation_strategy: Option<String>,
    /// With `realm`: how manifests name the pod inside the realm to Portworx
    /// (`auto`: cloud-drive without the realm, direct-access with it; both [L]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realm_pod_form: Option<RealmPodForm>,
}

/// How the rendered manifests name a pod inside a realm.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum RealmPodForm {
    /// Cloud-drive `short` (the realm comes from pure.json), direct-access `qualified`
    /// (the management Portworx's token is array-wide).
    #[default]
    Auto,
    /// `<pod>`.
    Short,
    /// `<realm>::<pod>`.
    Qualified,
}

/// The management cluster as the array sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManagementSpec {
    /// Host group of the management nodes (shared by tenants).
    #[schemars(with = "String")]
    pub host_group: HostGroupName,
    /// Management worker nodes; required (non-empty) for direct-access, whose volumes
    /// are connected to these nodes' hosts.
    #[serde(default)]
    pub nodes: Vec<ManagementNode>,
    /// MetalLB pool for the hosted API server's LoadBalancer service; pxfa renders
    /// the MetalLB instance, pool and L2 advertisement from it. Needed unless
    /// `externalLoadBalancer` (lint PXFA028).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metallb: Option<MetallbSpec>,
    /// A statement about the site: a load balancer other than a pxfa-rendered MetalLB
    /// pool already serves LoadBalancer services in the hosted control plane namespace
    /// (an existing MetalLB pool, or hardware). Then pxfa renders no MetalLB objects.
    #[serde(default)]
    pub external_load_balancer: bool,
    /// A statement about the site: the KubeVirt volume-hotplug feature gate the
    /// management cluster's HyperConverged runs under, which decides how direct-access
    /// disks are hotplugged (see [`HotplugGate`]).
    #[serde(default)]
    pub hotplug_gate: HotplugGate,
    /// A statement about the site: the most disks a worker VM takes by hotplug there
    /// (direct-access drives: `drivesPerNode` data drives and the metadata drive). Absent: the documented
    /// limit of the disk bus, [L]: 4 on `virtio` (each hotplugged virtio disk takes a
    /// PCIe port; the fifth fails "No more available PCI slots", kubevirt/kubevirt
    /// #14180) and 255 on `scsi` (OpenShift Virtualization's tested maximum of
    /// hot-pluggable disks per VM, "Supported limits"). Lint PXFA036 warns past it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hotplug_disk_limit: Option<u32>,
    /// The management StorageCluster runs the FA/FB driver
    /// (`portworx.io/pure-csi-integration: "true"`); only the provisioning table
    /// reads it.
    #[serde(default)]
    pub fa_fb_driver: bool,
    /// The management cluster's OpenShift version: with `virtualizationVersion`, it
    /// decides `nodiscard` on the VM disk classes (the discard problems are on the
    /// nodes that run the VM disks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub openshift_version: Option<Version>,
    /// OpenShift Virtualization version on the management cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub virtualization_version: Option<Version>,
    /// A statement about the site: the management Portworx's release (its
    /// StorageCluster). Direct-access reads it, not `portworx.version` (the tenant's
    /// own Portworx), for the FA/FB live-migration rule and the provisioning table,
    /// because the management Portworx creates and attaches the drives. Absent and not
    /// read from the site: taken to be `portworx.version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub portworx_version: Option<Version>,
    /// A statement about the site: the name of a MachineConfig that already writes
    /// the FlashArray host files (`/etc/multipath.conf`, ...) on the management
    /// workers, which the management Portworx install applied. Then pxfa renders no
    /// second one (it would write the same paths and reboot every worker). Absent:
    /// read from the site where it was read (`pxfa doctor`: `multipath-machineconfig`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub existing_machine_config: Option<String>,
}

/// One management worker node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManagementNode {
    /// Kubernetes node name.
    pub name: String,
    /// Array host name for this node; default the node name, which must then be a
    /// valid array host name (no dots: set `host` for FQDN node names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub host: Option<HostName>,
    /// Fibre Channel port WWNs.
    #[serde(default)]
    pub wwns: Vec<String>,
    /// iSCSI initiator names.
    #[serde(default)]
    pub iqns: Vec<String>,
    /// NVMe host NQNs.
    #[serde(default)]
    pub nqns: Vec<String>,
    /// The node's address on the storage network, with prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub storage_address: Option<Ipv4Cidr>,
}

/// MetalLB address pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MetallbSpec {
    /// Address ranges or prefixes (`198.51.100.50-198.51.100.69`, `198.51.100.64/28`).
    pub addresses: Vec<String>,
}

/// Secondary storage network: a linux bridge on a VLAN uplink of every management
/// node, and a NetworkAttachmentDefinition the worker VMs attach to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NetworkSpec {
    /// Linux bridge name.
    pub bridge: String,
    /// Physical uplink interface on the management nodes.
    pub uplink: String,
    /// VLAN id, 1..=4094; absent: untagged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vlan: Option<u16>,
    /// MTU of the VLAN sub-interface and the bridge.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// A statement about the site: the MTU the uplink runs at (its switch port must
    /// carry it). Absent: `mtu`. The NNCP declares the uplink with it, because a VLAN
    /// cannot exceed its parent's MTU and nmstate rolls back the whole policy when it
    /// would; at least `mtu`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplink_mtu: Option<u32>,
    /// A statement about the site: what kind of interface the uplink is on every
    /// management node (`ethernet`, or `bond` for an existing bond), as nmstate names it.
    #[serde(default)]
    pub uplink_type: UplinkType,
    /// A statement about the site: whereabouts' IP reconciler runs on the management
    /// cluster (on OpenShift it is opt-in: the cluster network operator starts the
    /// `whereabouts-reconciler` DaemonSet in `openshift-multus` once a whereabouts
    /// network is listed in `networks.operator.openshift.io/cluster`
    /// `spec.additionalNetworks`). Without it, addresses of deleted pods are never
    /// returned (lint PXFA031 when the workers join the network).
    #[serde(default)]
    pub whereabouts_reconciler: bool,
    /// A statement about the site, and a choice: the worker VMs' storage addresses
    /// survive live migration. The management cluster's default network is
    /// OVN-Kubernetes and OpenShift Virtualization (4.18 or later) runs its IPAM
    /// controller (HyperConverged `spec.featureGates.deployKubevirtIpamController`),
    /// which keeps a VM's address in an IPAMClaim. pxfa then renders the storage NAD
    /// as an OVN-Kubernetes `localnet` network with `allowPersistentIPs` and the
    /// NNCPs as an OVS bridge with the matching OVN bridge mapping, instead of a
    /// linux bridge with whereabouts. Absent: on for a tenant whose workers join the
    /// network where the site was read (`doctor`, `render --site`, `apply
    /// --kubeconfig`) and keeps addresses, unless the bridge already runs as a linux
    /// bridge there (converting it drops the storage sessions on it); else off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_ips: Option<bool>,
    /// The storage subnet.
    #[schemars(with = "String")]
    pub subnet: Ipv4Cidr,
    /// Gateway, inside the subnet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub gateway: Option<std::net::Ipv4Addr>,
    /// Addresses handed to worker VMs, inside the subnet.
    #[schemars(with = "String")]
    pub vm_range: Ipv4Range,
    /// Interface name of the storage NIC inside the worker VMs.
    #[serde(default = "default_guest_interface")]
    pub guest_interface: String,
    /// NetworkAttachmentDefinition name.
    #[serde(default = "default_nad_name")]
    pub nad_name: String,
    /// Whether the worker VMs get a NIC on this network (the NAD and the NodePool's
    /// `additionalNetworks`). Default: only for cloud-drive, whose Portworx reaches
    /// the array from inside the VMs; a direct-access or kubevirt-csi tenant never
    /// talks to the array, so putting it on the array's network only widens its reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attach_workers: Option<bool>,
}

impl NetworkSpec {
    /// Whether the storage network is the OVN-Kubernetes localnet network with
    /// persistent IPs: `persistentIps` stated, or set from the site by
    /// `site::resolve`; absent is the linux bridge with whereabouts.
    pub fn keeps_addresses(&self) -> bool {
        self.persistent_ips == Some(true)
    }
}

/// The KubeVirt feature gate under which volumes hotplug on the management cluster
/// (kubevirt/user-guide `docs/storage/hotplug_volumes.md`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum HotplugGate {
    /// `HotplugVolumes` is enabled (alone, or with `DeclarativeHotplugVolumes`, over
    /// which it takes precedence): only the `addvolume` subresource (`virtctl
    /// addvolume --persist`) hotplugs live; a VM template edit waits for a restart.
    #[default]
    HotplugVolumes,
    /// Only `DeclarativeHotplugVolumes` is enabled: adding a hotpluggable volume to
    /// the VM template hotplugs it live.
    DeclarativeHotplugVolumes,
}

/// The nmstate interface type of the storage uplink on the management nodes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum UplinkType {
    /// A NIC (`type: ethernet`).
    #[default]
    Ethernet,
    /// An existing bond (`type: bond`); pxfa sets only its MTU, never its ports.
    Bond,
}

impl UplinkType {
    /// The nmstate `type` value.
    pub fn as_str(self) -> &'static str {
        match self {
            UplinkType::Ethernet => "ethernet",
            UplinkType::Bond => "bond",
        }
    }
}

/// Portworx in the tenant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PortworxSpec {
    /// Portworx Enterprise version (>= 3.6.2 for hosted clusters).
    #[serde(default = "default_portworx_version")]
    #[schemars(with = "String")]
    pub version: Version,
    /// Namespace of the StorageCluster in the tenant.
    #[serde(default = "default_portworx_namespace")]
    pub namespace: String,
    /// StorageCluster name; default `px-<metadata.name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_name: Option<String>,
    /// PX-StoreV2 pool ceiling; default 15Ti (`-max_thin_pool_size`, fixed at pool
    /// creation). Sizing adds drives so that no pool exceeds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::schema::optional_size_schema")]
    pub max_pool_size: Option<Size>,
    /// [L] direct-access: set env `PX_NESTED=true` on the tenant StorageCluster (its
    /// Portworx runs in VMs whose disks the management Portworx serves). No Portworx
    /// page documents the variable; default `true` as pxfa always rendered it.
    #[serde(default = "default_true")]
    pub nested: bool,
}

impl Default for PortworxSpec {
    fn default() -> Self {
        PortworxSpec {
            version: DEFAULT_PORTWORX_VERSION,
            namespace: default_portworx_namespace(),
            cluster_name: None,
            max_pool_size: None,
            nested: true,
        }
    }
}

fn default_namespace() -> String {
    DEFAULT_NAMESPACE.to_string()
}
fn default_replicas() -> u32 {
    DEFAULT_REPLICAS
}
fn default_cores() -> u32 {
    DEFAULT_CORES
}
fn default_memory() -> Size {
    DEFAULT_MEMORY
}
fn default_root_volume() -> Size {
    DEFAULT_ROOT_VOLUME
}
fn default_root_storage_class() -> String {
    DEFAULT_ROOT_STORAGE_CLASS.to_string()
}
fn default_replication() -> u8 {
    DEFAULT_REPLICATION
}
fn default_drives_per_node() -> u32 {
    DEFAULT_DRIVES_PER_NODE
}
fn default_metadata_size() -> Size {
    DEFAULT_METADATA_SIZE
}
fn default_guest_storage_class() -> String {
    DEFAULT_GUEST_STORAGE_CLASS.to_string()
}
fn default_portworx_namespace() -> String {
    DEFAULT_PORTWORX_NAMESPACE.to_string()
}
fn default_portworx_version() -> Version {
    DEFAULT_PORTWORX_VERSION
}
fn default_mtu() -> u32 {
    DEFAULT_MTU
}
fn default_guest_interface() -> String {
    DEFAULT_GUEST_INTERFACE.to_string()
}
fn default_nad_name() -> String {
    DEFAULT_NAD_NAME.to_string()
}
fn default_infra_snapshot_class() -> String {
    DEFAULT_INFRA_SNAPSHOT_CLASS.to_string()
}
fn default_guest_snapshot_class() -> String {
    DEFAULT_GUEST_SNAPSHOT_CLASS.to_string()
}

fn default_true() -> bool {
    true
}
