//! Integration tests of the REST client against wiremock and a loopback HTTPS array.
//! One binary with a module per area keeps link time down.

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
