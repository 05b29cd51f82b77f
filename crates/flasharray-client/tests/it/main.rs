//! Integration tests of the REST client against wiremock and a loopback HTTPS array.
//! One binary with a module per area keeps link time down.
// A test scenario reads top to bottom; the 120-line rule is for library code.
#![allow(clippy::too_many_lines)]

mod common;
mod creation_tags;
mod endpoints;
mod errors;
mod oauth;
mod paging;
mod retries;
mod secrets;
mod session;
mod tls;
mod writes;
