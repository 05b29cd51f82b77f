//! px-topology's integration tests as one binary (one link instead of ten), a module
//! per area; [`support`] holds what several of them share (the example specs).
// A test scenario reads top to bottom; the 120-line rule is for library code.
#![allow(clippy::too_many_lines)]

mod brownfield;
mod bundle;
mod cancel;
mod converge;
mod destroy;
mod drives;
mod golden;
mod imports;
mod injection_prop;
mod lifecycle;
mod lifecycle_prop;
mod lint_manifests;
mod lint_spec;
mod orphans;
mod pipeline;
mod plan_document;
mod preflight;
mod provisioning;
mod realm;
mod render;
mod resume;
mod retained_quota;
mod schema;
mod secret_keeping;
mod sizes;
mod sizing;
mod spec_grammar;
mod spec_parse;
mod spec_validate;
mod storage_modes;
mod support;
mod token_journal;
mod usage_document;
mod wire;
mod worlds;
