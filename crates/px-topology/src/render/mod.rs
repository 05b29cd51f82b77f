//! Manifests for both clusters, from the spec, the sizing and what apply learned
//! from the array, written as numbered files with a header saying where and why
//! to apply each one.
//!
//! Output is deterministic: no timestamps, no random names, keys in
//! `apiVersion, kind, metadata, spec` order, files sorted by cluster and step. The
//! same inputs give the same bytes, so the files can be reviewed and diffed in git.

pub mod machineconfig;
pub mod management;
mod manifest;
pub mod tenant;
mod write;

use std::path::PathBuf;

use flasharray::Size;
use flasharray::size::{GIB, MIB};

pub use manifest::{Cluster, Form, Manifest};
pub use write::{README, readme, to_yaml, write_dir};

use crate::driver::{ArrayFacts, DriverError, driver_for};
use crate::sizing::Sizing;
use crate::spec::TenantStorage;

/// Apply steps. Files are numbered by their rank among the steps actually present,
/// so the numbers in a directory are always 01, 02, ... without gaps.
pub mod step {
    /// MultiClusterEngine overrides (HyperShift on).
    pub const MCE: u32 = 10;
    /// MetalLB pool and advertisement.
    pub const METALLB: u32 = 20;
    /// Storage network on the management nodes.
    pub const NNCP: u32 = 30;
    /// Management StorageClasses (VM root disks, FADA).
    pub const STORAGE_CLASS: u32 = 40;
    /// HostedCluster fragments (before the HostedCluster is created).
    pub const HOSTED_CLUSTER: u32 = 50;
    /// MachineConfig ConfigMaps referenced by the NodePool.
    pub const MACHINE_CONFIG: u32 = 60;
    /// The storage NAD, in the HCP namespace (after the HostedCluster exists).
    pub const NAD: u32 = 70;
    /// Management PVCs for tenant disks, in the HCP namespace.
    pub const CLAIMS: u32 = 80;
    /// The NodePool (creates the VMs).
    pub const NODE_POOL: u32 = 90;
    /// Disk hotplug patches (after the VMs exist).
    pub const VM_DISKS: u32 = 100;
    /// Tenant: Portworx namespace.
    pub const T_NAMESPACE: u32 = 10;
    /// Tenant: px-pure-secret.
    pub const T_SECRET: u32 = 20;
    /// Tenant: StorageCluster.
    pub const T_STORAGE_CLUSTER: u32 = 30;
    /// Tenant: application StorageClass.
    pub const T_STORAGE_CLASS: u32 = 40;
    /// Tenant: validation PVC.
    pub const T_VALIDATE: u32 = 50;
}

/// Why rendering failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A spec field needed for a manifest is missing or unusable.
    #[error("{path}: {message}")]
    Invalid {
        /// Dotted spec path.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The driver could not describe the tenant.
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// A manifest could not be turned into YAML.
    #[error("cannot write {file} as YAML: {message}")]
    Yaml {
        /// The file (or object) concerned.
        file: String,
        /// The serializer's complaint.
        message: String,
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

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        RenderError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Rendering switches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Write live credentials (the tenant's API token) into secret manifests. Off:
    /// secret manifests carry a clearly marked placeholder instead.
    pub include_secrets: bool,
}

/// A size as a Kubernetes quantity: `Gi` when whole, else `Mi`, else bytes.
pub fn quantity(size: Size) -> String {
    let b = size.as_u64();
    if b != 0 && b.is_multiple_of(GIB) {
        format!("{}Gi", b / GIB)
    } else if b != 0 && b.is_multiple_of(MIB) {
        format!("{}Mi", b / MIB)
    } else {
        b.to_string()
    }
}

/// Every manifest the tenant needs, for both clusters, sorted by cluster and step
/// and numbered: the shared management objects plus the driver's.
pub fn render(
    spec: &TenantStorage,
    sizing: &Sizing,
    facts: &ArrayFacts,
    opts: RenderOptions,
) -> Result<Vec<Manifest>, RenderError> {
    // The token goes no further than here unless the admin asked for it.
    let redacted;
    let facts = if opts.include_secrets || facts.api_token.is_none() {
        facts
    } else {
        redacted = ArrayFacts {
            volume_serials: facts.volume_serials.clone(),
            api_token: None,
        };
        &redacted
    };

    let mut out = vec![management::multicluster_engine()];
    out.extend(management::metallb(spec));
    out.extend(management::node_network_policies(spec)?);
    out.extend(management::root_disk_storage_class(spec));
    out.extend(management::network_attachment(spec));
    out.extend(driver_for(spec).manifests(spec, sizing, facts)?);
    Ok(number(out))
}

/// Sorts by cluster and step, renumbers the steps 1.. per cluster and names files.
fn number(mut manifests: Vec<Manifest>) -> Vec<Manifest> {
    // Stable sort: within a step, the order the builders chose (worker by worker,
    // disk by disk) is kept.
    manifests.sort_by_key(|m| (m.cluster, m.order));
    let mut current: Option<(Cluster, u32)> = None;
    let mut n = 0;
    for m in &mut manifests {
        match current {
            Some((c, o)) if c == m.cluster && o == m.order => {}
            Some((c, _)) if c == m.cluster => {
                n += 1;
                current = Some((m.cluster, m.order));
            }
            _ => {
                n = 1;
                current = Some((m.cluster, m.order));
            }
        }
        m.order = n;
        m.file_name = format!("{n:02}-{}.yaml", m.file_stem());
    }
    manifests
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quantities() {
        assert_eq!(quantity(Size::gib(64)), "64Gi");
        assert_eq!(quantity(Size::tib(1)), "1024Gi");
        assert_eq!(quantity(Size::bytes(3 * MIB)), "3Mi");
        assert_eq!(quantity(Size::bytes(1536)), "1536");
    }

    #[test]
    fn numbering_is_contiguous_per_cluster() {
        let mk = |c, o, name: &str| {
            Manifest::resource(
                c,
                o,
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}),
                &[],
            )
        };
        let out = number(vec![
            mk(Cluster::Tenant, 50, "t2"),
            mk(Cluster::Management, 90, "m3"),
            mk(Cluster::Management, 10, "m1"),
            mk(Cluster::Tenant, 10, "t1"),
            mk(Cluster::Management, 90, "m4"),
        ]);
        let got: Vec<_> = out
            .iter()
            .map(|m| (m.cluster, m.order, m.file_name.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (Cluster::Management, 1, "01-configmap-m1.yaml"),
                (Cluster::Management, 2, "02-configmap-m3.yaml"),
                (Cluster::Management, 2, "02-configmap-m4.yaml"),
                (Cluster::Tenant, 1, "01-configmap-t1.yaml"),
                (Cluster::Tenant, 2, "02-configmap-t2.yaml"),
            ]
        );
    }
}
