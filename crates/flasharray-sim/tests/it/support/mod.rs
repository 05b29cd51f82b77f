//! What every test module shares: a simulator with an HTTP client that trusts exactly
//! its certificate.

pub(crate) mod https;
