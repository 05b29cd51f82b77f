//! A typed async client for the Pure Storage FlashArray REST API 2.x.
//!
//! The crate is built around one object-safe trait, [`FlashArray`], with two
//! implementations: the REST client and the in-memory mock array of the
//! `flasharray-mock` crate. Code written against [`DynFlashArray`] runs unchanged
//! against either.
//!
//! * [`name`], [`size`] and [`Wwn`]: validated names (1–63 characters,
//!   case-insensitive, `pod::vol`), sizes (`500GiB`, `2Ti`, `64G`; multiples of 512,
//!   1 MiB – 4 PiB) and Fibre Channel WWNs.
//! * [`models`]: the array's objects, with every field real arrays send.
//! * [`error`]: one error enum; array answers classified by one table of messages.
//! * [`params`]: selections for list calls.
//! * [`FlashArrayExt`]: conveniences every [`FlashArray`] gets (membership filters
//!   within the array's limits, [`MAX_NAMES_PER_CALL`], [`MAX_FILTER_BYTES`]).
//! * [`settle`]: [`Settling`], the one layer that settles writes whose answer was
//!   lost, over any array.
//! * `redact` (feature `rest`): array addresses shown without user-info or query
//!   values.
//! * `rest` (feature `rest`, on by default): the REST 2.x client, `RestArray`.
//!
//! Without the `rest` feature the crate is network-free: no HTTP or TLS stack is
//! compiled, so planning code and the mock can depend on the trait alone.
//!
//! # Connect and stream volumes
//!
//! Log in with an API token, verify TLS against the array's CA, and walk the
//! volumes page by page as a stream (memory stays flat on arrays with 100,000
//! volumes). The hidden lines start Pure's REST API as pxfa's simulator, so the
//! example runs as a test; against an array, the address and CA file are yours.
//!
//! ```
//! use flasharray::{FlashArray, ListParams, RestArray, SecretString, Size};
//! use futures_util::TryStreamExt;
//! # use flasharray::VolumeName;
//! # use flasharray::models::VolumePost;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let secret = "0b7d4c2e-8f1a-4d3b-9e6c-5a2f1b0c9d8e";
//! # let mock = flasharray_mock::MockArray::new();
//! # let names = ["px-data-01", "px-data-02", "esx-ds01"].map(|n| VolumeName::new(n).unwrap());
//! # mock.create_volumes(&names, &VolumePost::default().with_provisioned(1 << 40)).await?;
//! # let sim = flasharray_sim::Simulator::start(mock, flasharray_sim::SimConfig::new(secret.into())).await?;
//! # let (address, ca_pem) = (sim.url(), sim.cert_pem().as_bytes().to_vec());
//! // The token comes from a file or the environment, never from argv or source.
//! # let token = secret.to_string();
//! let array = RestArray::builder(address)
//!     .api_token(SecretString::from(token))
//!     .ca_pem(ca_pem) // or .ca_file("array-ca.pem")
//!     .build()?;
//!
//! let mut volumes = array.volume_stream(ListParams::all().filter("name='px-*'"));
//! let mut seen = 0;
//! while let Some(v) = volumes.try_next().await? {
//!     println!("{} {}", v.name, Size::bytes(v.provisioned));
//!     seen += 1;
//! }
//! assert_eq!(seen, 2);
//! array.close().await?;
//! # sim.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! The same code runs against `flasharray_mock::MockArray` in a test: take a
//! `&dyn FlashArray` instead of the concrete type.
#![deny(missing_docs)]

/// The crate README's examples, compiled as doc tests so that they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub mod array;
pub mod error;
mod ext;
pub mod forwarding;
pub mod models;
pub mod name;
pub mod params;
#[cfg(feature = "rest")]
pub mod redact;
#[cfg(feature = "rest")]
pub mod rest;
pub mod settle;
pub mod size;
mod wwn;

pub use array::{DynFlashArray, FlashArray};
pub use error::{ApiError, Error, ErrorKind, Result, TransportError, TransportErrorKind};
pub use ext::{FlashArrayExt, MAX_FILTER_BYTES, MAX_NAMES_PER_CALL, membership_filter};
pub use name::{HostGroupName, HostName, PodName, RealmName, VolumeName};
pub use params::{
    ConnectionParams, ConnectionTarget, ListParams, MemberParams, TagParams, TagResource,
};
#[cfg(feature = "rest")]
pub use rest::{RestArray, RestArrayBuilder, RetryConfig};
pub use settle::Settling;
pub use size::Size;
pub use wwn::{Wwn, WwnError};

/// The secret types the API takes (`RestArrayBuilder::api_token`, token models), so
/// that callers need not depend on a matching `secrecy` version themselves.
pub use secrecy::{ExposeSecret, SecretString};
