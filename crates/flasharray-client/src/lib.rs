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
//! * `redact` (feature `rest`): array addresses shown without user-info or query
//!   values.
//! * `rest` (feature `rest`, on by default): the REST 2.x client, `RestArray`.
//!
//! Without the `rest` feature the crate is network-free: no HTTP or TLS stack is
//! compiled, so planning code and the mock can depend on the trait alone.
//!
//! # Connect and stream volumes
//!
//! ```no_run
//! use flasharray::{FlashArray, ListParams, RestArray, SecretString, Size};
//!
//! # async fn run() -> flasharray::Result<()> {
//! let token = std::fs::read_to_string("/run/secrets/purefa-token").unwrap_or_default();
//! let array = RestArray::builder("fa1-mgmt.example.net")
//!     .api_token(SecretString::from(token.trim().to_string()))
//!     .ca_file("array-ca.pem")
//!     .build()?;
//! for v in array.list_volumes(&ListParams::all().filter("name='px-*'")).await? {
//!     println!("{} {}", v.name, Size::bytes(v.provisioned));
//! }
//! array.close().await?;
//! # Ok(()) }
//! ```
//!
//! The same code runs against `flasharray_mock::MockArray` in a test: take a
//! `&dyn FlashArray` instead of the concrete type.
#![deny(missing_docs)]

pub mod array;
pub mod error;
pub mod ext;
pub mod models;
pub mod name;
pub mod params;
#[cfg(feature = "rest")]
pub mod redact;
#[cfg(feature = "rest")]
pub mod rest;
pub mod size;
pub mod wwn;

pub use array::{DynFlashArray, FlashArray};
pub use error::{ApiError, Error, ErrorKind, Result, TransportError, TransportErrorKind};
pub use ext::{FlashArrayExt, MAX_FILTER_BYTES, MAX_NAMES_PER_CALL, membership_filter};
pub use name::{HostGroupName, HostName, PodName, RealmName, VolumeName};
pub use params::{
    ConnectionParams, ConnectionTarget, ListParams, MemberParams, TagParams, TagResource,
};
#[cfg(feature = "rest")]
pub use rest::{RestArray, RestArrayBuilder, RetryConfig};
pub use size::Size;
pub use wwn::{Wwn, WwnError};

/// The secret types the API takes (`RestArrayBuilder::api_token`, token models), so
/// that callers need not depend on a matching `secrecy` version themselves.
pub use secrecy::{ExposeSecret, SecretString};
