//! The TenantStorage controller: reconciles `pxfa.io/v1alpha1` TenantStorage objects
//! in the management cluster through the same px-topology engine and px-cluster
//! applies the CLI uses.
//!
//! Modules, each depending only on those above it: `error`, `status` (typed
//! conditions), `metrics` (Prometheus counters), `health` (probe state),
//! `logging` (JSON log lines), `policy` (`spec.apply`), `metered` (array calls
//! counted), `observations` (the per-array listings every drift check reads),
//! `arrays` (one shared client and cache per array), `events` (Kubernetes
//! Events), `orphans` (orphan counts as gauges and Events, read-only),
//! `hosted` (the tenant cluster's kubeconfig), `references` (the namespaces a
//! TenantStorage may refer to), `token_journal` (the token
//! journal Secret), `report` (status and Events of one reconcile), `context` (what
//! reconciles share), `finalizer` (adding it, the delete policy, removing it),
//! `reconcile` (one object), `leader` (the Lease), `controller` (kube-runtime
//! wiring, concurrency, backoff, leader election), `endpoints` (`/healthz`,
//! `/readyz`, `/metrics`). Nothing here prints or reads the environment.

/// The crate README's examples, compiled as doc tests so that they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod arrays;
mod clusters;
mod context;
mod controller;
mod endpoints;
mod error;
mod events;
mod finalizer;
mod health;
mod hosted;
mod leader;
mod logging;
mod metered;
mod metrics;
mod observations;
mod orphans;
mod policy;
mod reconcile;
mod references;
mod report;
mod status;
mod token_journal;

pub use arrays::{
    ArrayPool, Connector, Credentials, LISTING_PAGE_SIZE, RestConnector, credentials_from_secret,
};
pub use controller::{Backoff, Options, connect_management, run};
pub use endpoints::Endpoints;
pub use error::{Error, Reason};
pub use health::{Health, Role};
pub use leader::LeaseConfig;
pub use logging::JsonLines;
pub use metrics::Metrics;
pub use observations::ObservationCache;
pub use orphans::{OrphanCounts, pass as orphan_pass};
pub use reconcile::{Context, Outcome, context, load_tenant, reconcile, tenant_storage_resource};
pub use references::NamespaceReferences;
pub use status::{Condition, ConditionStatus, ConditionType, TenantStatus};
