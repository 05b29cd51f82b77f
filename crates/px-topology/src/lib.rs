//! From one tenant description to every FlashArray object and manifest the tenant's
//! storage needs: spec, sizing, desired state, plan, converge, rendering and lint.
//!
//! Modules depend only downwards: `spec`, `naming`, `desired` at the bottom; `render`
//! below `driver` below `manifests`; `plan` below `converge`. `docs/architecture.md`
//! has the full map.
//!
//! The crate does no I/O of its own beyond reading spec files: the array is any
//! [`flasharray::FlashArray`] (the REST client, or `flasharray_mock::MockArray` in
//! tests), and Kubernetes is the `px-cluster` crate's business.
//!
//! # Plan and apply a tenant
//!
//! Against an in-memory array, the same way `pxfa apply` does against a real one:
//! observe what the array holds, plan the difference, apply it; a second plan finds
//! nothing to do.
//!
//! ```
//! use flasharray_mock::MockArray;
//! use px_topology::converge::{ApplyOptions, apply};
//! use px_topology::plan::{PlanOptions, observe, plan};
//! use px_topology::{Tenant, parse_valid_spec};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let yaml = include_str!("../../../examples/tenant-direct-access.yaml");
//! let tenant = Tenant::from_spec(parse_valid_spec(yaml)?, "tenant-direct-access.yaml".as_ref())?;
//! let array = MockArray::new();
//!
//! let observed = observe(&array, &tenant.desired).await?;
//! let first = plan(&tenant.desired, &observed, &PlanOptions::default());
//! assert!(first.is_applicable() && first.has_changes());
//! println!("{}", first.to_text(false));
//!
//! let report = apply(&array, &tenant.desired, &first, &ApplyOptions::default(), &|_| {}).await;
//! assert!(report.is_success(), "{:?}", report.failed);
//!
//! let observed = observe(&array, &tenant.desired).await?;
//! assert!(!plan(&tenant.desired, &observed, &PlanOptions::default()).has_changes());
//! # Ok(()) }
//! ```
//!
//! # Render a tenant
//!
//! Every manifest of both clusters, from the spec alone. Secrets are templates
//! unless [`manifests::RenderOptions::include_secrets`] is set.
//!
//! ```
//! use px_topology::driver::ArrayFacts;
//! use px_topology::manifests::{RenderOptions, render};
//! use px_topology::render::Cluster;
//! use px_topology::{Tenant, parse_valid_spec};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let yaml = include_str!("../../../examples/tenant-cloud-drive.yaml");
//! let tenant = Tenant::from_spec(parse_valid_spec(yaml)?, "tenant-cloud-drive.yaml".as_ref())?;
//! let manifests = render(&tenant.spec, &tenant.sizing, &ArrayFacts::default(), RenderOptions::default())?;
//!
//! let cluster = manifests
//!     .iter()
//!     .find(|m| m.cluster == Cluster::Tenant && m.kind == "StorageCluster")
//!     .expect("a cloud-drive tenant runs Portworx");
//! assert_eq!(cluster.body["apiVersion"], "core.libopenstorage.org/v1");
//! // No live token leaves the library unless asked for: the px-pure-secret is a
//! // template that says what to paste.
//! let secret = manifests.iter().find(|m| m.secret && m.name == "px-pure-secret").unwrap();
//! assert!(secret.body.to_string().contains("paste the API token"));
//! # Ok(()) }
//! ```

/// The crate README's examples, compiled as doc tests so that they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub mod converge;
pub mod crd;
pub mod desired;
pub mod driver;
mod duration;
pub mod files;
pub mod lint;
pub mod manifests;
mod naming;
pub mod orphans;
pub mod pipeline;
pub mod plan;
pub mod preflight;
mod pure_json;
pub mod render;
pub mod runbook;
pub mod site;
pub mod sizing;
pub mod spec;
mod tenant;
pub mod token_journal;

pub use duration::human_ms;
pub use lint::{
    Finding, LintError, RULES as LINT_RULES, Rule, Severity, lint_manifests, lint_path, lint_paths,
    lint_spec, nodiscard_needed, rule as lint_rule,
};
pub use pipeline::{
    Applied, ApplyError, ArrayOnly, ClusterSide, Delivery, Observation, ObserveError, Planned, Site,
};
pub use pure_json::{FlashArrayEntry, PureJson, PureJsonError};
pub use sizing::{ArraySpaceInfo, Sizing};
pub use spec::{SpecError, SpecErrors, TenantStorage, load_spec, parse_spec, parse_valid_spec};
pub use tenant::{NewTokenWouldBeLost, Tenant, TenantError, refuse_losing_a_new_token};
