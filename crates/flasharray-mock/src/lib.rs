//! An in-memory FlashArray with the real array's rules, fault injection, and an
//! HTTPS simulator of the REST 2.x API.
//!
//! [`MockArray`] implements [`flasharray::FlashArray`], so code written against the
//! trait runs unchanged against it. It behaves like an array, not a dictionary:
//! case-insensitive names, destroyed objects pending eradication on a controllable
//! [`MockClock`], initiators owned by one host, LUNs allocated as the array does,
//! pods that refuse destruction while not empty, space accounting, tags, API tokens.
//! [`Faults`] injects latency, 429/500/503 answers, lost answers, dropped writes and
//! SafeMode; [`CallStats`] counts round trips.
//!
//! Choices where the real array's behaviour is unconfirmed ([L] in the reference):
//! destroying a connected volume is refused by default ([`DestroyConnected`]);
//! sizes below 1 MiB are refused, not rounded up; a second API token for an admin is
//! refused; filter string comparisons ignore case.
#![deny(missing_docs)]

mod array;
mod clock;
mod connection;
mod faults;
pub mod filter;
mod host;
pub mod listing;
mod pod;
mod state;
mod stats;
mod tag;
mod token;
mod volume;

pub mod sim;

pub use array::{
    DEFAULT_ADMIN, DEFAULT_CAPACITY, DEFAULT_ERADICATION_DELAY, MockArray, MockArrayBuilder,
};
pub use clock::{ClockSnapshot, MockClock};
pub use connection::{MAX_LUN, SHARED_LUN_START};
pub use faults::Faults;
pub use filter::Filter;
pub use host::PERSONALITIES;
pub use state::{DestroyConnected, MockState};
pub use stats::CallStats;
pub use tag::DEFAULT_NAMESPACE;
