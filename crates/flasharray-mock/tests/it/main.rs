//! The integration tests of `flasharray-mock`, in one binary: the shared conformance
//! checks in memory and the rules only the mock can show (the simulator's HTTP
//! behaviour is tested in `flasharray-sim`).
// A test scenario reads top to bottom; the 120-line rule is for library code.
#![allow(clippy::too_many_lines)]

mod conformance;
mod rules;
mod support;
