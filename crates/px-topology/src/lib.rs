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
//! Everything a caller uses is at the crate root: the tenant and its pipeline
//! ([`Tenant::observe`] → [`Observation`] → [`Planned`] → [`Applied`]), the way in for
//! every adapter (the CLI, the controller, `pxfa demo` and the example below), sizing,
//! rendering ([`render()`]) and lint. Seven modules stay public as namespaces: [`spec`],
//! [`site`], [`orphans`], [`runbook`], [`token_journal`], [`files`] and [`crd`].
//! `public-api.txt` lists every exported path, and a test holds the crate to it.
//!
//! # Plan and apply a tenant
//!
//! Against an in-memory array, the same way `pxfa apply` does against a real one,
//! through the pipeline's stages: observe what the array holds, plan the difference,
//! apply it (here without clusters: [`ArrayOnly`]); a second plan finds nothing to do.
//!
//! ```
//! use flasharray_mock::MockArray;
//! use px_topology::{ApplyOptions, ArrayOnly, PlanOptions, Site, Tenant, parse_valid_spec};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let yaml = include_str!("../../../examples/tenant-direct-access.yaml");
//! let tenant = Tenant::from_spec(parse_valid_spec(yaml)?, "tenant-direct-access.yaml".as_ref())?;
//! let array = MockArray::new();
//!
//! let first = tenant.observe(Site::array(&array)).await?.plan(&PlanOptions::default());
//! assert!(first.plan().is_applicable() && first.plan().has_changes());
//! println!("{}", first.plan().to_text(false));
//!
//! let applied = first.apply(&ArrayOnly, ApplyOptions::default(), &|_| {}).await?;
//! assert!(applied.report().is_success(), "{:?}", applied.report().failed);
//!
//! let again = tenant.observe(Site::array(&array)).await?.plan(&PlanOptions::default());
//! assert!(!again.plan().has_changes());
//! # Ok(()) }
//! ```
//!
//! # Render a tenant
//!
//! Every manifest of both clusters, from the spec alone. Secrets are templates
//! unless [`RenderOptions::include_secrets`] is set.
//!
//! ```
//! use px_topology::{ArrayFacts, Cluster, RenderOptions, Tenant, parse_valid_spec, render};
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

// Modules are private: what a user needs is re-exported flat below. The seven public
// modules are namespaces, each kept for the reason on its line.
mod converge;
// The TenantStorage CRD: `crd::GROUP`, `crd::PLURAL` read only with the module name.
pub mod crd;
mod desired;
mod driver;
mod duration;
// pxfa's labels on rendered objects: `labels::labelled_tenant` reads them back.
mod labels;
// The CLI's file rules (`files::read_input`, `files::FileLock`): generic names.
pub mod files;
mod lint;
mod manifests;
mod naming;
// `pxfa orphans`: `orphans::scan`, `orphans::Known`, `orphans::Target` name orphan things.
pub mod orphans;
mod pipeline;
mod plan;
mod preflight;
mod pure_json;
mod render;
// `pxfa runbook`: `runbook::build`, `runbook::Operation`, `runbook::STATUS_CHECKS`.
pub mod runbook;
// The site views, facts and checks: `site::Check`, `site::Summary`, `site::resolve`.
pub mod site;
mod sizing;
// The spec's data model: dozens of section types and enums, plus its limits tables.
pub mod spec;
mod tenant;
// The token journal: `token_journal::classify`, `token_journal::now_ms`, its entries.
pub mod token_journal;
mod usage;

pub use converge::{
    ApplyOptions, ApplyReport, Cancel, DestroyOptions, DestroyReport, FailedChange, Outcome,
    PartialChange, ProgressEvent, SkippedChange, WriteCounts,
};
pub use desired::{
    DEFAULT_TENANT_NAMESPACE, DesiredApiToken, DesiredConnection, DesiredDrive, DesiredHost,
    DesiredHostGroup, DesiredPod, DesiredRealm, DesiredRealmUser, DesiredState, DesiredVolume,
    DriveClaim, SCOPE_SHARED, Scope, TAG_CAPACITY, TAG_DISK, TAG_NAMESPACE, TAG_NODE, TAG_TENANT,
    TAG_TENANT_NAMESPACE, TenantId, ownership_tags,
};
pub use driver::{ArrayFacts, DriverError, StorageDriver, driver_for};
pub use duration::human_ms;
pub use labels::{
    LabelledTenant, TENANT_LABEL, TENANT_NAMESPACE_LABEL, labelled_tenant, tenant_selector,
    unclaimed_selector,
};
pub use lint::{
    Finding, LintError, RULES as LINT_RULES, Rule, Severity, lint_manifests, lint_path, lint_paths,
    lint_spec, nodiscard_needed, rule as lint_rule,
};
pub use manifests::{RenderOptions, render};
pub use pipeline::{
    Applied, ApplyError, ArrayOnly, ClusterSide, Delivery, DestroyPlanned, Observation,
    ObserveError, Planned, Site, Subject,
};
pub use plan::lifecycle::read_drives_in_use;
// `Summary` is the plan's counts per action; the alias keeps it apart from the
// site report's `site::Summary` (the JSON schema keeps the type's own name).
pub use plan::Summary as ActionCounts;
pub use plan::{
    Action, Binding, Blocker, BoundDrive, CLAIM_DETAIL, Change, Claim, DestroyError, DestroyPlan,
    DestroyScope, Detail, DriveLocator, HostOwner, JournalVerdict, Kind, LocateError, NodeHost,
    Observed, ObservedDrives, Orphans, Plan, PlanDocument, PlanOptions, RealmGateError, RealmState,
    TagIndex, TokenClaimants, TokenState, UnclaimedObject, find_unclaimed, is_fada_volume_for,
};
pub use preflight::{PreflightFinding, PreflightOptions, new_bytes, preflight};
pub use pure_json::{FlashArrayEntry, PureJson, PureJsonError};
pub use render::hosted_cluster::{GuestStorage, hcp_create_command};
pub use render::management::{mce_components_patch, mce_guard_program};
pub use render::shell::join as shell_join;
pub use render::tenant::{PORTWORX_OLM_PACKAGE, VALIDATION_PVC, pure_secret};
pub use render::{
    Cluster, Form, Manifest, RenderError, WriteOutcome, check_out_dir, to_yaml, write_dir,
};
pub use sizing::{
    ArrayHeadroom, ArraySpaceInfo, DrivesInUse, Growth, Sizing, keep_drives_in_use, size,
};
pub use spec::{SpecError, SpecErrors, TenantStorage, load_spec, parse_spec, parse_valid_spec};
pub use tenant::{NewTokenWouldBeLost, Tenant, TenantError};
pub use usage::{
    DriveUsage, UsageHolder, UsageReport, UsageRow, VolumeHolder, WorkerUsage, read_usage,
    read_volume_holders,
};
