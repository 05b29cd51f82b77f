//! A typed async client for the Pure Storage FlashArray REST API 2.x.
//!
//! The crate is built around one object-safe trait, [`FlashArray`], with two
//! implementations: the REST client and the in-memory mock array of the
//! `flasharray-mock` crate. Code written against [`DynFlashArray`] runs unchanged
//! against either.
//!
//! * [`name`], [`size`] and [`wwn`]: validated names (1–63 characters,
//!   case-insensitive, `pod::vol`), sizes (`500GiB`, `2Ti`, `64G`; multiples of 512,
//!   1 MiB – 4 PiB) and Fibre Channel WWNs.
//! * [`models`]: the array's objects, with every field real arrays send.
//! * [`error`]: one error enum; array answers classified by one table of messages.
//! * [`params`]: selections for list calls.
//! * [`ext`]: conveniences every [`FlashArray`] gets ([`FlashArrayExt`]).
//! * `rest` (feature `rest`, on by default): the REST 2.x client, `RestArray`.
//!
//! Without the `rest` feature the crate is network-free: no HTTP or TLS stack is
//! compiled, so planning code and the mock can depend on the trait alone.
#![deny(missing_docs)]

pub mod array;
pub mod error;
pub mod ext;
pub mod models;
pub mod name;
pub mod params;
#[cfg(feature = "rest")]
pub mod rest;
pub mod size;
pub mod wwn;

pub use array::{DynFlashArray, FlashArray};
pub use error::{ApiError, Error, ErrorKind, Result, TransportError, TransportErrorKind};
pub use ext::{FlashArrayExt, MAX_FILTER_BYTES, MAX_NAMES_PER_CALL, membership_filter};
pub use name::{HostGroupName, HostName, PodName, VolumeName};
pub use params::{
    ConnectionParams, ConnectionTarget, ListParams, MemberParams, TagParams, TagResource,
};
#[cfg(feature = "rest")]
pub use rest::{RestArray, RestArrayBuilder, RetryConfig};
pub use size::Size;
pub use wwn::{Wwn, WwnError};
