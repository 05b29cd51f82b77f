//! Finishing the job on the clusters: server-side apply of the rendered manifests to
//! the management and tenant clusters, readiness waits, worker VM discovery and disk
//! hotplug, the cross-layer status view and tenant token rotation.
//!
//! Everything goes through a `kube::Client` built from a kubeconfig ([`connect`]), so
//! tests point it at an in-process fake API server. Nothing here prints: commands turn
//! the reports into output.

pub mod apply;
pub mod connect;
pub mod discovery;
pub mod readiness;
pub mod status;
pub mod token;
pub mod vms;

pub use apply::{ApplyOptions, ApplyReport, Conflict, apply_manifests};
pub use connect::{client_from_config, connect};
pub use readiness::{Pending, WaitOptions};
pub use status::{StatusReport, cluster_status};
pub use token::{RotateOptions, RotateReport, TokenProbe, rotate_token};
pub use vms::{Assignment, WorkerDisks, worker_disks};

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
