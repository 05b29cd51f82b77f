//! Finishing a tenant on its clusters: server-side apply of the rendered manifests to
//! the management and tenant clusters, readiness waits, worker VM discovery and disk
//! hotplug, guest NIC discovery, the claim bindings that locate dynamically
//! provisioned drives, the cross-layer status view and tenant token rotation.
//!
//! Everything goes through a `kube::Client` built from a kubeconfig ([`connect()`]), so
//! tests point it at an in-process fake API server. Nothing here prints, reads
//! environment variables or exits: callers turn the reports into output, and the one
//! [`Error`] type into exit codes.

/// The crate README's examples, compiled as doc tests so that they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod apply;
mod bindings;
pub mod bounds;
pub mod connect;
mod discovery;
mod error;
mod kinds;
pub mod orphans;
mod preview;
mod readiness;
pub mod site;
pub mod status;
pub mod tenant_clusters;
pub mod token;
pub mod vms;

pub use apply::{ApplyOptions, ApplyReport, Conflict, Skipped, apply_manifests, cluster_bundle};
pub use bindings::{BindingWait, ClaimBindings};
pub use bounds::KubeBounds;
pub use connect::{client_from_config, connect};
pub use error::{BoxError, Error, Result};
/// The client every function here takes, re-exported so callers need no kube dependency
/// of their own.
pub use kube::Client;
pub use orphans::ClusterOrphans;
pub use preview::{ClusterPreview, PreviewAction, PreviewItem, preview_manifests};
pub use readiness::{Pending, WaitOptions};
pub use site::{read_management, read_site_facts, read_tenant};
pub use status::{StatusDocument, StatusReport, cluster_status};
pub use tenant_clusters::{
    ClusterClients, ClustersReport, Notice, TenantClusters, TenantClustersError,
    TenantClustersOptions,
};
pub use token::{RotateOptions, RotateReport, TokenProbe, rotate_token};
pub use vms::{Assignment, GuestInterface, WorkerDisks, resolve_guest_interface, worker_disks};

/// Field manager of every server-side apply pxfa makes.
pub const FIELD_MANAGER: &str = "pxfa";

/// Field manager of pxfa's bookkeeping writes (worker-index annotations, token
/// rotation). Kept apart from [`FIELD_MANAGER`] so that re-applying the rendered
/// manifests never removes them: server-side apply drops fields its manager set
/// before and no longer sends.
pub const BOOKKEEPING_MANAGER: &str = "pxfa-bookkeeping";

/// Annotation on a worker VM: the worker index whose disks it carries.
pub const WORKER_INDEX_ANNOTATION: &str = "pxfa.io/worker-index";

/// Annotation on a management PVC: the VM (name) its disk was attached to.
pub const ATTACHED_VM_ANNOTATION: &str = "pxfa.io/attached-vm";
