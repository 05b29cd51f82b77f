//! An in-memory FlashArray with the real array's rules and fault injection.
//!
//! [`MockArray`] implements [`flasharray::FlashArray`], so code written against the
//! trait runs unchanged against it. It behaves like an array, not a dictionary:
//! case-insensitive names, destroyed objects pending eradication on a controllable
//! [`MockClock`], initiators owned by one host, LUNs allocated as the array does,
//! pods that refuse destruction while not empty, space accounting, tags, API tokens.
//! [`Faults`] injects latency, calls of one operation held until released, 429/500/503
//! answers, lost answers, dropped writes and SafeMode; [`CallStats`] counts round
//! trips per [`Op`].
//!
//! The crate has no HTTP or TLS stack: the HTTPS simulator that serves a [`MockArray`]
//! is the `flasharray-sim` crate. Feature `testing` adds the conformance checks
//! (`conformance`) that hold any `FlashArray` to the rules below.
//!
//! Choices where the real array's behaviour is unconfirmed (tagged `[L]` in the reference),
//! so that code tested here does not depend on the lenient reading:
//!
//! * destroying a connected volume (or a pod holding one) is refused by default;
//!   [`DestroyConnected::Disconnect`] switches to disconnecting silently;
//! * sizes and quotas below 1 MiB are refused, not rounded up;
//! * a second API token for an admin is refused until the first is deleted;
//!   expired tokens stay listed but no longer log in;
//! * a pod can be destroyed while it holds only destroyed volumes, but not
//!   eradicated without `eradicate_contents` while it holds any; recovering a pod
//!   recovers the volumes its destruction took down;
//! * a host in a host group can be deleted when neither it nor the group has
//!   connections; a host cannot join a group whose shared LUNs or volumes clash
//!   with its private ones;
//! * tags cannot be set on destroyed objects, but their tags stay listed;
//! * filter string comparisons ignore ASCII case; `tags(...)` is not supported.
//!
//! ```
//! use std::time::Duration;
//!
//! use flasharray::models::{VolumePatch, VolumePost};
//! use flasharray::{ErrorKind, FlashArray, ListParams, VolumeName};
//! use flasharray_mock::{MockArray, MockClock};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> flasharray::Result<()> {
//! let mock = MockArray::builder().clock(MockClock::manual(0)).build();
//! let array: &dyn FlashArray = &mock;
//! let v = [VolumeName::new("px-data-01")?];
//! array.create_volumes(&v, &VolumePost::default().with_provisioned(1 << 30)).await?;
//!
//! // Names are case-insensitive: the same name in capitals is taken.
//! let again = array.create_volumes(&[VolumeName::new("PX-DATA-01")?], &VolumePost::default()).await;
//! assert_eq!(again.unwrap_err().kind(), ErrorKind::AlreadyExists);
//!
//! // Destroyed volumes wait 24 hours on the mock clock, then disappear.
//! let destroy = VolumePatch::destroy();
//! array.patch_volumes(&v, &destroy, false).await?;
//! mock.clock().advance(Duration::from_secs(24 * 3600));
//! assert!(array.list_volumes(&ListParams::all()).await?.is_empty());
//!
//! // Faults: the next call is rate limited.
//! mock.faults().rate_limit_next(1, Duration::from_secs(1));
//! let e = array.list_volumes(&ListParams::all()).await.unwrap_err();
//! assert_eq!(e.kind(), ErrorKind::RateLimited);
//! assert_eq!(mock.stats().calls, 5);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

/// The crate README's examples, compiled as doc tests so that they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

// Local admins and array-wide settings: the simulator's `/admins` and `PATCH /arrays`.
mod admins;
mod array;
mod array_settings;
mod builder;
mod clock;
#[cfg(feature = "testing")]
pub mod conformance;
mod connection;
pub mod fada;
mod faults;
mod filter;
pub mod foreign;
mod host;
pub mod listing;
mod op;
mod pod;
mod realm;
mod seed;
mod state;
pub mod state_file;
mod stats;
mod tag;
mod token;
mod volume;

pub use array::MockArray;
pub use array_settings::ArraySettings;
pub use builder::{DEFAULT_ADMIN, DEFAULT_CAPACITY, DEFAULT_ERADICATION_DELAY, MockArrayBuilder};
pub use clock::MockClock;
pub use connection::{MAX_LUN, SHARED_LUN_START};
pub use fada::SimFada;
pub use faults::Faults;
pub use filter::Filter;
pub use host::PERSONALITIES;
pub use op::Op;
pub use seed::{
    BROWNFIELD_HOSTS, BrownfieldSeed, LEGACY_TENANT, MGMT_ADMIN, MGMT_CLUSTER_PREFIX, OTHER_TENANT,
    OTHER_TENANT_NAMESPACE, Seed, blue_volume,
};
pub use state::{BUILTIN_ADMIN, DestroyConnected, MockState};
pub use stats::CallStats;
pub use tag::DEFAULT_NAMESPACE;
