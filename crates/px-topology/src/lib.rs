//! From one tenant description to every FlashArray object and manifest the tenant's
//! storage needs: spec, sizing, desired state, plan, converge, rendering and lint.
