//! The building blocks of manifests for both clusters (the [`Manifest`] type, the
//! shared management and tenant objects, MachineConfigs) and writing them as
//! numbered files with a header saying where and why to apply each one. The drivers
//! assemble a tenant's manifests from these; `manifests::render` puts them together.
//!
//! Output is deterministic: no timestamps, no random names, keys in
//! `apiVersion, kind, metadata, spec` order, files sorted by cluster and step. The
//! same inputs give the same bytes, so the files can be reviewed and diffed in git.

pub(crate) mod hosted_cluster;
pub(crate) mod machineconfig;
pub(crate) mod management;
mod manifest;
pub(crate) mod shell;
pub(crate) mod tenant;
mod write;

use std::path::PathBuf;

use flasharray::Size;
use flasharray::name::NameError;
use flasharray::size::{GIB, MIB};

pub use manifest::{Cluster, Form, Manifest};
pub(crate) use write::HEADER_MARK;
pub use write::{WriteOutcome, check_out_dir, to_yaml, write_dir};

/// Apply steps. Files are numbered by their rank among the steps actually present,
/// so the numbers in a directory are always 01, 02, ... without gaps.
pub(crate) mod step {
    /// Cluster-wide settings: the MultiClusterEngine components (HyperShift on) and
    /// the ingress wildcard policy.
    pub(crate) const MCE: u32 = 10;
    /// Operator instances (NMState, MetalLB) that the later objects need.
    pub(crate) const OPERATORS: u32 = 15;
    /// MetalLB pool and advertisement.
    pub(crate) const METALLB: u32 = 20;
    /// The management nodes' multipath/udev MachineConfig (rolls the nodes).
    pub(crate) const NODE_CONFIG: u32 = 25;
    /// Storage network on the management nodes.
    pub(crate) const NNCP: u32 = 30;
    /// Management StorageClasses (VM root disks, FADA).
    pub(crate) const STORAGE_CLASS: u32 = 40;
    /// The HostedCluster's namespace and pull secret.
    pub(crate) const HC_NAMESPACE: u32 = 45;
    /// The HostedCluster.
    pub(crate) const HOSTED_CLUSTER: u32 = 50;
    /// MachineConfig ConfigMaps referenced by the NodePool.
    pub(crate) const MACHINE_CONFIG: u32 = 60;
    /// The storage NAD, in the HCP namespace (after the HostedCluster exists).
    pub(crate) const NAD: u32 = 70;
    /// Management PVCs for tenant disks, in the HCP namespace.
    pub(crate) const CLAIMS: u32 = 80;
    /// The NodePool (creates the VMs).
    pub(crate) const NODE_POOL: u32 = 90;
    /// Disk hotplug patches (after the VMs exist).
    pub(crate) const VM_DISKS: u32 = 100;
    /// Tenant: Portworx namespace.
    pub(crate) const T_NAMESPACE: u32 = 10;
    /// Tenant: px-pure-secret.
    pub(crate) const T_SECRET: u32 = 20;
    /// Tenant: the Portworx operator (OperatorGroup and OLM Subscription), before the
    /// StorageCluster whose CRD it brings.
    pub(crate) const T_OPERATOR: u32 = 25;
    /// Tenant: StorageCluster.
    pub(crate) const T_STORAGE_CLUSTER: u32 = 30;
    /// Tenant: application StorageClass.
    pub(crate) const T_STORAGE_CLASS: u32 = 40;
    /// Tenant: validation PVC.
    pub(crate) const T_VALIDATE: u32 = 50;
}

/// Why rendering failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// A spec field needed for a manifest is missing or unusable.
    #[error("{path}: {message}")]
    Invalid {
        /// Dotted spec path.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A name derived from the spec is not a valid array name.
    #[error("{path}: derived name is not valid on the array: {source}")]
    Name {
        /// The spec field the name derives from.
        path: String,
        /// The array's naming rule that failed.
        source: NameError,
    },
    /// A manifest could not be turned into YAML.
    #[error("cannot write {file} as YAML: {message}")]
    Yaml {
        /// The file (or object) concerned.
        file: String,
        /// The serializer's complaint.
        message: String,
    },
    /// A folder pxfa would write into is a link, a file or somebody else's
    /// ([`crate::files::check_own_dir`]); nothing was written.
    #[error("cannot write into {path}: it {problem}")]
    OutDir {
        /// The folder concerned.
        path: PathBuf,
        /// What is wrong with it.
        problem: crate::files::FileError,
    },
    /// A file or directory could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl RenderError {
    pub(crate) fn field(path: impl Into<String>, message: impl Into<String>) -> Self {
        RenderError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }

    /// Whether the input (the spec, or the output folder given) is at fault, not
    /// the machine: the CLI exits 2 for these.
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            RenderError::Invalid { .. } | RenderError::OutDir { .. }
        )
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        RenderError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A size as a Kubernetes quantity: `Gi` when whole, else `Mi`, else bytes.
pub(crate) fn quantity(size: Size) -> String {
    let b = size.as_u64();
    if b != 0 && b.is_multiple_of(GIB) {
        format!("{}Gi", b / GIB)
    } else if b != 0 && b.is_multiple_of(MIB) {
        format!("{}Mi", b / MIB)
    } else {
        b.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        assert_eq!(quantity(Size::gib(64)), "64Gi");
        assert_eq!(quantity(Size::tib(1)), "1024Gi");
        assert_eq!(quantity(Size::bytes(3 * MIB)), "3Mi");
        assert_eq!(quantity(Size::bytes(1536)), "1536");
    }
}
