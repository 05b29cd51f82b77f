//! px-topology's integration tests as one binary (one link instead of ten), a module
//! per area; [`support`] holds what several of them share (the example specs).

mod converge;
mod destroy;
mod golden;
mod lint_manifests;
mod lint_spec;
mod render;
mod schema;
mod sizing;
mod spec_parse;
mod spec_validate;
mod support;
mod wire;
