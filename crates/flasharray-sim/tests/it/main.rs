//! The integration tests of `flasharray-sim`, in one binary: the simulator's HTTP
//! behaviour, the shared conformance checks and the brownfield seed over HTTPS.
// A test scenario reads top to bottom; the 120-line rule is for library code.
#![allow(clippy::too_many_lines)]

mod brownfield;
mod conformance;
mod http;
mod support;
