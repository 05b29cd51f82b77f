//! What each storage mode does, as capabilities: the one place outside the drivers'
//! dispatch (`driver::driver_for`) and the per-mode tables (the runbook's steps, its
//! checks in px-cluster) that names a [`StorageMode`]. Every answer is an
//! exhaustive `match`, so a fourth mode does not compile until each question here is
//! answered for it; callers ask the question (`mode.needs_token()`), never compare
//! the mode with a variant. `tests/it/storage_modes.rs` holds the workspace to that.

use super::model::{Protocol, StorageMode};

impl StorageMode {
    /// Every mode, in the order documented.
    pub const ALL: [StorageMode; 3] = [
        StorageMode::CloudDrive,
        StorageMode::DirectAccess,
        StorageMode::KubevirtCsi,
    ];

    /// The spelling in the spec.
    pub fn as_str(self) -> &'static str {
        match self {
            StorageMode::CloudDrive => "cloud-drive",
            StorageMode::DirectAccess => "direct-access",
            StorageMode::KubevirtCsi => "kubevirt-csi",
        }
    }

    /// The protocols this mode supports (empty: the protocol does not apply).
    pub fn protocols(self) -> &'static [Protocol] {
        match self {
            StorageMode::CloudDrive => &[Protocol::Iscsi, Protocol::NvmeTcp],
            StorageMode::DirectAccess => &[Protocol::Fc, Protocol::Iscsi, Protocol::NvmeTcp],
            StorageMode::KubevirtCsi => &[],
        }
    }

    /// Whether Portworx runs inside the tenant (and so has a storage pool to size).
    pub fn runs_portworx(self) -> bool {
        match self {
            StorageMode::CloudDrive | StorageMode::DirectAccess => true,
            StorageMode::KubevirtCsi => false,
        }
    }

    /// Whether the tenant puts any object on the array (and so can have a realm).
    pub fn uses_array(self) -> bool {
        match self {
            StorageMode::CloudDrive | StorageMode::DirectAccess => true,
            StorageMode::KubevirtCsi => false,
        }
    }

    /// Whether the tenant's Portworx calls the array's REST API itself, with an API
    /// token of its own user (pure.json in `px-pure-secret`, with the endpoint): the
    /// tenant has a token user (a realm user in a realm), the token is rotated, and
    /// an array credential in the tenant is expected. Such a Portworx works inside
    /// its realm, so manifests name its pod without the realm by default.
    pub fn needs_token(self) -> bool {
        match self {
            StorageMode::CloudDrive => true,
            StorageMode::DirectAccess | StorageMode::KubevirtCsi => false,
        }
    }

    /// Whether the tenant's Portworx creates its own drives on the array
    /// (FlashArray cloud drives): always in a pod, whose quota bounds them, and a
    /// new node brings drives only when labelled to.
    pub fn portworx_creates_drives(self) -> bool {
        match self {
            StorageMode::CloudDrive => true,
            StorageMode::DirectAccess | StorageMode::KubevirtCsi => false,
        }
    }

    /// Whether the worker VMs reach the array themselves: the tenant's Portworx
    /// attaches its drives from inside the guest over the storage network, so the
    /// workers join that network by default, their storage addresses must survive
    /// live migration, and the management Portworx is not needed for them.
    pub fn guest_reaches_array(self) -> bool {
        match self {
            StorageMode::CloudDrive => true,
            StorageMode::DirectAccess | StorageMode::KubevirtCsi => false,
        }
    }

    /// Whether each tenant drive is an array volume pxfa provisions and hot-plugs
    /// into one worker VM as a disk: the drives belong to worker indexes, are
    /// limited by the largest VM disk, take a provisioning strategy, and follow the
    /// management cluster's hotplug gate.
    pub fn drives_are_vm_disks(self) -> bool {
        match self {
            StorageMode::DirectAccess => true,
            StorageMode::CloudDrive | StorageMode::KubevirtCsi => false,
        }
    }

    /// Whether the tenant's volumes are connected to the management nodes' array
    /// hosts (FADA, or the management host group): the nodes and their initiators
    /// are needed, and the management Portworx reaches the array over the SAN.
    pub fn uses_management_hosts(self) -> bool {
        match self {
            StorageMode::DirectAccess => true,
            StorageMode::CloudDrive | StorageMode::KubevirtCsi => false,
        }
    }

    /// Whether the guest's claims are disks of management claims, hot-plugged into
    /// the VMs by the KubeVirt CSI driver (no file system is shared between VMs).
    pub fn guest_claims_are_management_claims(self) -> bool {
        match self {
            StorageMode::KubevirtCsi => true,
            StorageMode::CloudDrive | StorageMode::DirectAccess => false,
        }
    }
}
