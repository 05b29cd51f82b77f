//! The TenantStorage controller: reconciles `pxfa.io/v1alpha1` TenantStorage objects
//! in the management cluster through the same px-topology engine and px-cluster
//! applies the CLI uses.
//!
//! Modules, each depending only on those above it: [`error`], [`status`] (typed
//! conditions), [`policy`] (`spec.apply`), [`arrays`] (one shared client per array),
//! [`finalizer`] (delete policy), [`reconcile`] (one object), [`controller`]
//! (kube-runtime wiring, concurrency, backoff). Nothing here prints or reads the
//! environment.

/// The crate README's examples, compiled as doc tests so that they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub mod arrays;
pub mod controller;
pub mod error;
pub mod finalizer;
pub mod policy;
pub mod reconcile;
pub mod status;

pub use arrays::{ArrayPool, Connector, Credentials, RestConnector};
pub use controller::{Backoff, Options, run};
pub use error::{Error, Reason};
pub use reconcile::{Context, Outcome, reconcile};
pub use status::{Condition, ConditionStatus, ConditionType, TenantStatus};
