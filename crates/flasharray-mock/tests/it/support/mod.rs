//! What every test module shares: a mock on a manual clock.

use flasharray_mock::{MockArray, MockClock};

/// The manual clock's start: 2026-01-01T00:00:00Z in milliseconds.
pub(crate) const T0: u64 = 1_767_225_600_000;

/// A fresh mock with default settings on a manual clock at [`T0`].
pub(crate) fn mock() -> MockArray {
    MockArray::builder().clock(MockClock::manual(T0)).build()
}
