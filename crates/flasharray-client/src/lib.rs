//! A typed async client for the Pure Storage FlashArray REST API 2.x.
//!
//! The crate is built around one object-safe trait, [`FlashArray`], with two
//! implementations: the REST client and the in-memory mock array of the
//! `flasharray-mock` crate. Code written against `Arc<dyn FlashArray>` runs unchanged
//! against either.
//!
//! * [`name`] and [`size`]: validated names (1–63 characters, case-insensitive,
//!   `pod::vol`) and sizes (`500GiB`, `2Ti`, `64G`; multiples of 512, 1 MiB – 4 PiB).
//! * [`models`]: the array's objects, with every field real arrays send.
//! * [`error`]: one error enum; array answers classified by one table of messages.
//! * [`params`]: selections for list calls.
//! * [`rest`]: the REST 2.x client, [`RestArray`].
#![deny(missing_docs)]

pub mod array;
pub mod error;
pub mod models;
pub mod name;
pub mod params;
pub mod rest;
pub mod size;

pub use array::FlashArray;
pub use error::{ApiError, Error, ErrorKind, Result, TransportError};
pub use name::{HostGroupName, HostName, PodName, VolumeName};
pub use params::{
    ConnectionParams, ConnectionTarget, ListParams, MemberParams, TagParams, TagResource,
};
pub use rest::{RestArray, RestArrayBuilder, RetryConfig};
pub use size::Size;

/// The tag namespace pxfa writes its ownership tags in.
pub const PXFA_TAG_NAMESPACE: &str = "pxfa.io";
