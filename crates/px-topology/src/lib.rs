//! From one tenant description to every FlashArray object and manifest the tenant's
//! storage needs: spec, sizing, desired state, plan, converge, rendering and lint.
//!
//! Modules depend only downwards: `spec`, `naming`, `desired` at the bottom; `render`
//! below `driver` below `manifests`; `plan` below `converge`. `docs/architecture.md`
//! has the full map.

pub mod converge;
pub mod crd;
pub mod desired;
pub mod driver;
pub mod duration;
pub mod lint;
pub mod manifests;
pub mod naming;
pub mod plan;
pub mod preflight;
pub mod pure_json;
pub mod render;
pub mod sizing;
pub mod spec;
pub mod tenant;
pub mod vault;

pub use lint::{
    Finding, Severity, lint_manifests, lint_path, lint_paths, lint_spec, nodiscard_needed,
};
pub use pure_json::{FlashArrayEntry, PureJson, PureJsonError};
pub use sizing::{ArraySpaceInfo, Sizing};
pub use spec::{SpecError, SpecErrors, TenantStorage, load_spec, parse_spec, parse_valid_spec};
pub use tenant::{NewTokenWouldBeLost, Tenant, TenantError, refuse_losing_a_new_token};
