//! An in-memory FlashArray with the real array's rules, fault injection, and an
//! HTTPS simulator of the REST 2.x API.

pub mod sim;
