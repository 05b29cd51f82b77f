//! From one tenant description to every FlashArray object and manifest the tenant's
//! storage needs: spec, sizing, desired state, plan, converge, rendering and lint.

pub mod converge;
pub mod desired;
pub mod driver;
pub mod lint;
pub mod naming;
pub mod plan;
pub mod render;
pub mod sizing;
pub mod spec;
