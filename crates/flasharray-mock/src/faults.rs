//! Runtime fault injection: the failures a real array and network produce, on demand.
//!
//! Counts are "from now on": `busy_next(2)` fails the next two calls, whatever they
//! are. Pre-call faults (rate limit, busy, unavailable) are consumed before a call does
//! anything, in that order, one count per call. Write faults count only the writes
//! that get past the pre-call faults, i.e. the writes the array actually receives.

use std::sync::Mutex;
use std::time::Duration;

use flasharray::{ApiError, Error, TransportError};

use crate::op::Op;

/// Fault switches of one mock array. Every method takes `&self`.
#[derive(Debug, Default)]
pub struct Faults {
    state: Mutex<FaultState>,
}

#[derive(Debug, Default, Clone)]
struct FaultState {
    latency: Duration,
    rate_limited: u32,
    retry_after: Duration,
    busy: u32,
    unavailable: u32,
    /// Writes received since the faults were last armed; write faults fire on an
    /// absolute position in this count.
    writes_seen: u64,
    fail_after_effect_at: Vec<u64>,
    drop_at: Vec<u64>,
    /// Absolute write position after which the array stops answering.
    stall_at: Option<u64>,
    /// Set once that write took effect: every call from then on hangs.
    stalled: bool,
    safemode: bool,
    /// Listings never carry token values, even with `expose_api_token`.
    withhold_tokens: bool,
    /// Operations whose calls wait before they run, until released.
    held: Vec<Op>,
}

/// What the fault switches say about one call, decided before it runs.
#[derive(Debug)]
pub(crate) struct CallFaults {
    /// Sleep this long before answering (outside any lock).
    pub latency: Duration,
    /// Answer with this error without doing anything.
    pub refuse: Option<Error>,
    /// For writes that run: what happens to the answer.
    pub write: WriteFault,
    /// Whether and when the call hangs forever.
    pub stall: Stall,
}

/// A call that never returns, as seen by a client whose process is killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stall {
    /// Answers normally.
    No,
    /// Takes effect, then never answers.
    AfterEffect,
    /// Never reaches the array and never answers.
    Before,
}

/// What happens to a write the array receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteFault {
    /// Applied and answered.
    None,
    /// Applied, but the answer is lost.
    AnswerLost,
    /// Never applied: the connection broke first.
    Dropped,
}

impl Faults {
    /// Adds `d` to every call (the call sleeps with `tokio::time::sleep`).
    pub fn set_latency(&self, d: Duration) {
        self.lock().latency = d;
    }

    /// The next `n` calls answer 429 with `retry_after`.
    pub fn rate_limit_next(&self, n: u32, retry_after: Duration) {
        let mut s = self.lock();
        s.rate_limited = n;
        s.retry_after = retry_after;
    }

    /// The next `n` calls answer 500 "Server is busy".
    pub fn busy_next(&self, n: u32) {
        self.lock().busy = n;
    }

    /// The next `n` calls answer 503.
    pub fn unavailable_next(&self, n: u32) {
        self.lock().unavailable = n;
    }

    /// The `nth` write from now (1 = the next one) is applied, then its answer is lost:
    /// the caller gets `Error::Transport { maybe_applied: true }`.
    pub fn fail_write_after_effect(&self, nth: u64) {
        let mut s = self.lock();
        let at = s.writes_seen + nth.max(1);
        s.fail_after_effect_at.push(at);
    }

    /// The `nth` write from now (1 = the next one) is not applied and the caller gets
    /// `Error::Transport { maybe_applied: true }`, as when the connection drops while
    /// the request is in flight.
    pub fn drop_write(&self, nth: u64) {
        let mut s = self.lock();
        let at = s.writes_seen + nth.max(1);
        s.drop_at.push(at);
    }

    /// The `nth` write from now (1 = the next one) takes effect and then neither it nor
    /// any later call (read or write) ever answers: they hang until the caller drops
    /// them. This is how a test "kills" a client right after a given write: run the
    /// client under a timeout, then [`Faults::clear`] and start a fresh one.
    pub fn stall_after_write(&self, nth: u64) {
        let mut s = self.lock();
        s.stall_at = Some(s.writes_seen + nth.max(1));
    }

    /// Whether a [`Faults::stall_after_write`] fired (its write took effect).
    pub fn stalled(&self) -> bool {
        self.lock().stalled
    }

    /// Every call of `op` from now on waits, once its call is counted and before it
    /// does anything, until [`Faults::release`]: a call kept in flight while the test
    /// does something else (a latency the test ends). Its caller sees a slow array.
    pub fn hold(&self, op: Op) {
        let mut s = self.lock();
        if !s.held.contains(&op) {
            s.held.push(op);
        }
    }

    /// Lets the held calls of `op` run, and later ones run at once.
    pub fn release(&self, op: Op) {
        self.lock().held.retain(|&o| o != op);
    }

    /// Whether calls of `op` are held.
    pub(crate) fn holds(&self, op: Op) -> bool {
        self.lock().held.contains(&op)
    }

    /// SafeMode: every eradication is refused ("Cannot eradicate ... SafeMode").
    pub fn set_safemode(&self, on: bool) {
        self.lock().safemode = on;
    }

    /// Whether SafeMode refuses eradication.
    pub fn safemode(&self) -> bool {
        self.lock().safemode
    }

    /// Token listings carry no token value even when asked to expose it: an array
    /// that exposes only the calling admin's own token (Purity's documented
    /// `expose_api_token` is "the API token of the current user" \[L\]), so a lost
    /// creation answer cannot be recovered by reading.
    pub fn withhold_token_values(&self, on: bool) {
        self.lock().withhold_tokens = on;
    }

    /// Whether token listings withhold the values.
    pub fn withholds_token_values(&self) -> bool {
        self.lock().withhold_tokens
    }

    /// Removes every fault (latency, pending counts, SafeMode, held calls).
    pub fn clear(&self) {
        *self.lock() = FaultState::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FaultState> {
        // A panic elsewhere while holding this lock cannot leave the counters in a
        // state worse than "some count consumed", so poisoning is ignored.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Decides the faults of one call of `op`.
    pub(crate) fn on_call(&self, op: Op) -> CallFaults {
        let is_write = op.is_write();
        let mut s = self.lock();
        if s.stalled {
            return CallFaults {
                latency: Duration::ZERO,
                refuse: None,
                write: WriteFault::None,
                stall: Stall::Before,
            };
        }
        let latency = s.latency;
        let mut refuse = None;
        if s.rate_limited > 0 {
            s.rate_limited -= 1;
            let mut e = ApiError::new(429, None, "API rate limit exceeded");
            e.retry_after = Some(s.retry_after);
            e.operation = op.request().to_string();
            refuse = Some(Error::from(e));
        } else if s.busy > 0 {
            s.busy -= 1;
            let mut e = ApiError::new(500, None, "Server is busy");
            e.operation = op.request().to_string();
            refuse = Some(Error::from(e));
        } else if s.unavailable > 0 {
            s.unavailable -= 1;
            let mut e = ApiError::new(503, None, "Service Unavailable");
            e.operation = op.request().to_string();
            refuse = Some(Error::from(e));
        }
        let mut write = WriteFault::None;
        let mut stall = Stall::No;
        if refuse.is_none() && is_write {
            s.writes_seen += 1;
            let n = s.writes_seen;
            // Several faults armed for the same write fire once; dropping wins, as
            // a write that never arrived cannot also lose its answer.
            let lost = s.fail_after_effect_at.contains(&n);
            let dropped = s.drop_at.contains(&n);
            s.fail_after_effect_at.retain(|&at| at > n);
            s.drop_at.retain(|&at| at > n);
            if dropped {
                write = WriteFault::Dropped;
            } else if lost {
                write = WriteFault::AnswerLost;
            }
            if s.stall_at == Some(n) && !dropped {
                s.stalled = true;
                stall = Stall::AfterEffect;
            }
        }
        CallFaults {
            latency,
            refuse,
            write,
            stall,
        }
    }
}

/// The transport error a lost answer or dropped connection produces.
pub(crate) fn lost_answer(op: Op, dropped: bool) -> Error {
    Error::from(TransportError {
        operation: op.request().to_string(),
        request_id: None,
        message: if dropped {
            "connection dropped while the request was in flight (injected fault)".into()
        } else {
            "connection reset before the answer arrived (injected fault)".into()
        },
        maybe_applied: true,
        kind: flasharray::TransportErrorKind::Io,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flasharray::ErrorKind;

    #[test]
    fn pre_call_faults_consume_one_count_per_call_in_order() {
        let f = Faults::default();
        f.rate_limit_next(1, Duration::from_millis(250));
        f.busy_next(1);
        f.unavailable_next(1);
        let e = f.on_call(Op::ListVolumes).refuse.unwrap();
        assert_eq!(e.kind(), ErrorKind::RateLimited);
        assert_eq!(
            e.as_api().unwrap().retry_after,
            Some(Duration::from_millis(250))
        );
        let e = f.on_call(Op::ListVolumes).refuse.unwrap();
        assert_eq!(e.as_api().unwrap().status, 500);
        assert_eq!(e.kind(), ErrorKind::Busy);
        let e = f.on_call(Op::ListVolumes).refuse.unwrap();
        assert_eq!(e.as_api().unwrap().status, 503);
        assert!(f.on_call(Op::ListVolumes).refuse.is_none());
    }

    #[test]
    fn write_faults_count_writes_only() {
        let f = Faults::default();
        f.drop_write(2);
        f.fail_write_after_effect(3);
        assert_eq!(f.on_call(Op::CreateVolumes).write, WriteFault::None);
        assert_eq!(f.on_call(Op::ListVolumes).write, WriteFault::None);
        assert_eq!(f.on_call(Op::CreateVolumes).write, WriteFault::Dropped);
        assert_eq!(f.on_call(Op::CreateVolumes).write, WriteFault::AnswerLost);
        assert_eq!(f.on_call(Op::CreateVolumes).write, WriteFault::None);
    }

    #[test]
    fn refused_writes_do_not_advance_write_faults() {
        let f = Faults::default();
        f.busy_next(1);
        f.drop_write(1);
        assert!(f.on_call(Op::CreateVolumes).refuse.is_some());
        assert_eq!(f.on_call(Op::CreateVolumes).write, WriteFault::Dropped);
    }

    #[test]
    fn a_stall_fires_after_its_write_and_holds_every_later_call() {
        let f = Faults::default();
        f.stall_after_write(2);
        assert_eq!(f.on_call(Op::CreateVolumes).stall, Stall::No);
        assert_eq!(f.on_call(Op::ListVolumes).stall, Stall::No);
        assert!(!f.stalled());
        assert_eq!(f.on_call(Op::CreateHosts).stall, Stall::AfterEffect);
        assert!(f.stalled());
        assert_eq!(f.on_call(Op::ListVolumes).stall, Stall::Before);
        assert_eq!(f.on_call(Op::CreatePods).stall, Stall::Before);
        f.clear();
        assert!(!f.stalled());
        assert_eq!(f.on_call(Op::CreatePods).stall, Stall::No);
    }

    #[test]
    fn a_held_operation_is_held_until_released() {
        let f = Faults::default();
        f.hold(Op::CreateApiToken);
        f.hold(Op::CreateApiToken);
        assert!(f.holds(Op::CreateApiToken));
        assert!(!f.holds(Op::ListApiTokens));
        f.release(Op::CreateApiToken);
        assert!(!f.holds(Op::CreateApiToken));
        f.hold(Op::CreateApiToken);
        f.clear();
        assert!(!f.holds(Op::CreateApiToken));
    }

    #[test]
    fn clear_removes_everything() {
        let f = Faults::default();
        f.busy_next(5);
        f.set_safemode(true);
        f.clear();
        assert!(!f.safemode());
        assert!(f.on_call(Op::GetArray).refuse.is_none());
    }
}
