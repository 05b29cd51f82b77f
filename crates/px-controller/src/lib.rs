//! The TenantStorage controller: reconciles `pxfa.io/v1alpha1` TenantStorage objects
//! in the management cluster through the same px-topology engine and px-cluster
//! applies the CLI uses.
//!
//! Modules, each depending only on those above it: [`error`], [`status`] (typed
//! conditions), [`metrics`] (Prometheus counters), [`health`] (probe state),
//! [`logging`] (JSON log lines), [`policy`] (`spec.apply`), [`metered`] (array calls
//! counted), [`observations`] (the per-array listings every drift check reads),
//! [`arrays`] (one shared client and cache per array), [`events`] (Kubernetes
//! Events), [`orphans`] (orphan counts as gauges and Events, read-only),
//! [`hosted`] (the tenant cluster's kubeconfig), [`token_journal`] (the token
//! journal Secret), `report` (status and Events of one reconcile), [`context`] (what
//! reconciles share), [`finalizer`] (adding it, the delete policy, removing it),
//! [`reconcile`](mod@reconcile) (one object), [`leader`] (the Lease), [`controller`] (kube-runtime
//! wiring, concurrency, backoff, leader election), [`endpoints`] (`/healthz`,
//! `/readyz`, `/metrics`). Nothing here prints or reads the environment.

/// The crate README's examples, compiled as doc tests so that they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub mod arrays;
mod clusters;
pub mod context;
pub mod controller;
pub mod endpoints;
pub mod error;
pub mod events;
pub mod finalizer;
pub mod health;
pub mod hosted;
pub mod leader;
pub mod logging;
pub mod metered;
pub mod metrics;
pub mod observations;
pub mod orphans;
pub mod policy;
pub mod reconcile;
mod report;
pub mod status;
pub mod token_journal;

pub use arrays::{ArrayPool, Connector, Credentials, RestConnector};
pub use controller::{Backoff, Options, run};
pub use endpoints::Endpoints;
pub use error::{Error, Reason};
pub use health::{Health, Role};
pub use leader::LeaseConfig;
pub use logging::JsonLines;
pub use metrics::Metrics;
pub use reconcile::{Context, Outcome, reconcile};
pub use status::{Condition, ConditionStatus, ConditionType, TenantStatus};
