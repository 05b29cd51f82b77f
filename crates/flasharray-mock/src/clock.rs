//! The array's notion of time.
//!
//! Eradication countdowns, creation times and token expiry all read this clock, so
//! that tests can move time forward (`advance`) instead of sleeping for 24 hours.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// A clock in milliseconds since the Unix epoch. Clones share the same time.
#[derive(Debug, Clone)]
pub struct MockClock {
    inner: Arc<ClockInner>,
}

#[derive(Debug)]
enum ClockInner {
    /// Time stands still until advanced: deterministic tests.
    Manual { now_ms: AtomicU64 },
    /// Wall-clock time plus an offset that `advance` grows.
    System { offset_ms: AtomicI64 },
}

/// What a snapshot records of the clock: the manual time or the system offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ClockSnapshot {
    /// A manual clock at this time.
    Manual(u64),
    /// A system clock shifted by this many milliseconds.
    SystemOffset(i64),
}

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl MockClock {
    /// A clock that starts at `start_ms` and only moves when advanced.
    pub fn manual(start_ms: u64) -> Self {
        MockClock {
            inner: Arc::new(ClockInner::Manual {
                now_ms: AtomicU64::new(start_ms),
            }),
        }
    }

    /// The machine's clock; `advance` still works (it adds an offset).
    pub fn system() -> Self {
        MockClock {
            inner: Arc::new(ClockInner::System {
                offset_ms: AtomicI64::new(0),
            }),
        }
    }

    /// Moves time forward by `d`.
    pub fn advance(&self, d: Duration) {
        let ms = duration_ms(d);
        match &*self.inner {
            ClockInner::Manual { now_ms } => {
                now_ms.fetch_add(ms, Ordering::SeqCst);
            }
            ClockInner::System { offset_ms } => {
                offset_ms.fetch_add(i64::try_from(ms).unwrap_or(i64::MAX), Ordering::SeqCst);
            }
        }
    }

    /// Milliseconds since the Unix epoch, as the array sees it.
    pub fn now_ms(&self) -> u64 {
        match &*self.inner {
            ClockInner::Manual { now_ms } => now_ms.load(Ordering::SeqCst),
            ClockInner::System { offset_ms } => {
                let off = offset_ms.load(Ordering::SeqCst);
                wall_ms().saturating_add_signed(off)
            }
        }
    }

    pub(crate) fn snapshot(&self) -> ClockSnapshot {
        match &*self.inner {
            ClockInner::Manual { now_ms } => ClockSnapshot::Manual(now_ms.load(Ordering::SeqCst)),
            ClockInner::System { offset_ms } => {
                ClockSnapshot::SystemOffset(offset_ms.load(Ordering::SeqCst))
            }
        }
    }

    /// Puts the clock back where a snapshot found it. A manual clock restored from a
    /// system snapshot (or the reverse) takes the recorded time as well as it can.
    pub(crate) fn restore(&self, snap: ClockSnapshot) {
        match (&*self.inner, snap) {
            (ClockInner::Manual { now_ms }, ClockSnapshot::Manual(t)) => {
                now_ms.store(t, Ordering::SeqCst)
            }
            (ClockInner::Manual { now_ms }, ClockSnapshot::SystemOffset(off)) => {
                now_ms.store(wall_ms().saturating_add_signed(off), Ordering::SeqCst)
            }
            (ClockInner::System { offset_ms }, ClockSnapshot::SystemOffset(off)) => {
                offset_ms.store(off, Ordering::SeqCst)
            }
            (ClockInner::System { offset_ms }, ClockSnapshot::Manual(t)) => {
                let off = i64::try_from(t).unwrap_or(i64::MAX)
                    - i64::try_from(wall_ms()).unwrap_or(i64::MAX);
                offset_ms.store(off, Ordering::SeqCst)
            }
        }
    }
}

impl Default for MockClock {
    fn default() -> Self {
        MockClock::system()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_advanced() {
        let c = MockClock::manual(1_000);
        assert_eq!(c.now_ms(), 1_000);
        c.clone().advance(Duration::from_secs(2));
        assert_eq!(c.now_ms(), 3_000);
    }

    #[test]
    fn system_clock_offset_survives_snapshot() {
        let c = MockClock::system();
        c.advance(Duration::from_secs(3600));
        let snap = c.snapshot();
        let d = MockClock::system();
        d.restore(snap);
        assert!(d.now_ms() >= wall_ms() + 3_599_000);
    }
}
