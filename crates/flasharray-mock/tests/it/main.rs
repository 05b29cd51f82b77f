//! The integration tests of `flasharray-mock`, in one binary: the shared conformance
//! checks (in memory and through the simulator), the rules only the mock can show,
//! and the simulator's HTTP behaviour.
// A test scenario reads top to bottom; the 120-line rule is for library code.
#![allow(clippy::too_many_lines)]

mod conformance;
#[cfg(feature = "sim")]
mod http;
mod rules;
mod support;
