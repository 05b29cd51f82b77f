//! End-to-end tests of the `pxfa` binary against the HTTPS simulator (`pxfa sim
//! serve`, started as a child process on a free port) and the embedded simulated
//! array (`--array sim`).
//!
//! Every test runs the real binary with a cleared `PUREFA_*` environment, so the
//! machine running the tests cannot leak into them, and checks that the API token
//! never shows up in stdout or stderr.
// A test scenario reads top to bottom; the 120-line rule is for library code.
#![allow(clippy::too_many_lines)]

mod harness;

mod api_client;
mod completion;
mod controller;
mod destroy_preview;
mod doctor_brownfield;
mod dynamic;
mod embedded;
mod errors;
mod exit_codes;
mod hostile;
mod identity;
mod input_safety;
mod invalid_specs;
mod lifecycle;
mod logout;
mod man;
mod orphans;
mod output;
mod preflight;
mod profiles;
mod realm;
mod resources;
mod rest_versions;
mod runbook;
mod safety;
mod secrets;
mod session_expiry;
mod sim_login;
mod sizes;
mod tenant;
mod token_lifetime;
mod usage;
