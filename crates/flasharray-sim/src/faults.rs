//! HTTP-level faults (`--faults`), injected by the simulator in front of the array.
//!
//! These complement the [`flasharray_mock::MockArray`] faults: they act on HTTP requests (before
//! the array sees them), so they also cover things the trait cannot express, such as
//! expiring a session or dropping the TCP connection before a write reaches the array.
//! Every fault counts the requests it is eligible for from the moment the simulator
//! starts, so a run with the same requests is reproducible.

use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

/// What a fault does when it fires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpFaultKind {
    /// `429` with `Retry-After` and the gateway body `{"message": ...}`.
    RateLimit {
        /// Value of the `Retry-After` header (whole seconds).
        retry_after: Duration,
    },
    /// `500` with the message `Server is busy`, which clients retry.
    Busy,
    /// `503`.
    Unavailable,
    /// The session used by the request is ended and the request answered `401`, so
    /// that clients must log in again.
    ExpireSession,
    /// A write (POST, PATCH, PUT, DELETE) never reaches the array: the connection is
    /// closed without an answer. Clients cannot tell whether it was applied.
    DropWrite,
    /// A write is applied by the array, then the connection is closed without an
    /// answer (the answer was "lost").
    LoseAnswer,
}

impl HttpFaultKind {
    /// Whether only writes count towards (and are hit by) this fault.
    pub fn writes_only(&self) -> bool {
        matches!(self, HttpFaultKind::DropWrite | HttpFaultKind::LoseAnswer)
    }
}

/// When a fault fires, counted over the requests it is eligible for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultTrigger {
    /// On every n-th eligible request (n, 2n, 3n, ...).
    Every(u64),
    /// On the first n eligible requests.
    Next(u64),
    /// On the n-th eligible request only.
    Nth(u64),
}

impl FaultTrigger {
    fn fires(self, count: u64) -> bool {
        match self {
            FaultTrigger::Every(n) => count.is_multiple_of(n),
            FaultTrigger::Next(n) => count <= n,
            FaultTrigger::Nth(n) => count == n,
        }
    }
}

/// One HTTP fault: what happens, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpFault {
    /// What the fault does.
    pub kind: HttpFaultKind,
    /// When it fires.
    pub trigger: FaultTrigger,
}

impl fmt::Display for HttpFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            HttpFaultKind::RateLimit { retry_after } => {
                write!(f, "429:retry-after={}", retry_after.as_secs())?
            }
            HttpFaultKind::Busy => f.write_str("busy")?,
            HttpFaultKind::Unavailable => f.write_str("503")?,
            HttpFaultKind::ExpireSession => f.write_str("expire")?,
            HttpFaultKind::DropWrite => f.write_str("drop-write")?,
            HttpFaultKind::LoseAnswer => f.write_str("lose-answer")?,
        }
        match self.trigger {
            FaultTrigger::Every(n) => write!(f, ":every={n}"),
            FaultTrigger::Next(n) => write!(f, ":next={n}"),
            FaultTrigger::Nth(n) => write!(f, ":nth={n}"),
        }
    }
}

/// Parses a `--faults` specification: faults separated by `,`, each
/// `KIND[:OPTION=VALUE]...`.
///
/// Kinds: `429` (alias `rate-limit`), `busy` (alias `500`), `503` (alias
/// `unavailable`), `expire`, `drop-write`, `lose-answer`. Exactly one trigger per
/// fault: `every=N`, `next=N` or `nth=N` (N >= 1). `429` also takes
/// `retry-after=SECONDS` (default 1).
///
/// Example: `429:every=10:retry-after=1,busy:every=7,503:next=3,expire:every=50,drop-write:nth=5`.
pub fn parse_faults(spec: &str) -> Result<Vec<HttpFault>, String> {
    let mut out = Vec::new();
    for (index, item) in spec.split(',').map(str::trim).enumerate() {
        if item.is_empty() {
            continue;
        }
        out.push(parse_one(item).map_err(|e| format!("fault {} ({item:?}): {e}", index + 1))?);
    }
    Ok(out)
}

fn parse_one(item: &str) -> Result<HttpFault, String> {
    let mut parts = item.split(':');
    let kind_word = parts.next().unwrap_or_default().to_ascii_lowercase();
    let mut trigger = None;
    let mut retry_after = None;
    for opt in parts {
        let (key, value) = opt
            .split_once('=')
            .ok_or_else(|| format!("option {opt:?} is not KEY=VALUE"))?;
        let number = || -> Result<u64, String> {
            value
                .parse::<u64>()
                .map_err(|_| format!("{key}={value:?} is not a whole number"))
        };
        let set_trigger = |t: FaultTrigger, slot: &mut Option<FaultTrigger>| {
            if slot.is_some() {
                return Err("give only one of every=, next=, nth=".to_string());
            }
            *slot = Some(t);
            Ok(())
        };
        match key {
            "every" | "next" | "nth" => {
                let n = number()?;
                if n == 0 {
                    return Err(format!("{key} must be at least 1"));
                }
                let t = match key {
                    "every" => FaultTrigger::Every(n),
                    "next" => FaultTrigger::Next(n),
                    _ => FaultTrigger::Nth(n),
                };
                set_trigger(t, &mut trigger)?;
            }
            "retry-after" => retry_after = Some(Duration::from_secs(number()?)),
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    let kind = match kind_word.as_str() {
        "429" | "rate-limit" => HttpFaultKind::RateLimit {
            retry_after: retry_after.unwrap_or(Duration::from_secs(1)),
        },
        "busy" | "500" => HttpFaultKind::Busy,
        "503" | "unavailable" => HttpFaultKind::Unavailable,
        "expire" => HttpFaultKind::ExpireSession,
        "drop-write" => HttpFaultKind::DropWrite,
        "lose-answer" => HttpFaultKind::LoseAnswer,
        other => {
            return Err(format!(
                "unknown kind {other:?} (expected 429, busy, 503, expire, drop-write or lose-answer)"
            ));
        }
    };
    if retry_after.is_some() && !matches!(kind, HttpFaultKind::RateLimit { .. }) {
        return Err("retry-after only applies to 429".into());
    }
    let trigger = trigger.ok_or("missing trigger (every=N, next=N or nth=N)")?;
    Ok(HttpFault { kind, trigger })
}

/// The faults of one running simulator with their counters.
#[derive(Debug)]
pub(crate) struct FaultPlan {
    faults: Vec<HttpFault>,
    counts: Mutex<Vec<u64>>,
}

impl FaultPlan {
    pub(crate) fn new(faults: Vec<HttpFault>) -> Self {
        let counts = Mutex::new(vec![0; faults.len()]);
        FaultPlan { faults, counts }
    }

    /// Counts one request against every eligible fault and returns the first one
    /// (in configuration order) that fires.
    pub(crate) fn next(&self, is_write: bool) -> Option<HttpFaultKind> {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let mut fired = None;
        for (fault, count) in self.faults.iter().zip(counts.iter_mut()) {
            if fault.kind.writes_only() && !is_write {
                continue;
            }
            *count += 1;
            if fired.is_none() && fault.trigger.fires(*count) {
                fired = Some(fault.kind.clone());
            }
        }
        fired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let f = parse_faults(
            "429:every=10:retry-after=1,busy:every=7,503:next=3,expire:every=50,drop-write:nth=5",
        )
        .unwrap();
        assert_eq!(f.len(), 5);
        assert_eq!(
            f[0],
            HttpFault {
                kind: HttpFaultKind::RateLimit {
                    retry_after: Duration::from_secs(1)
                },
                trigger: FaultTrigger::Every(10)
            }
        );
        assert_eq!(f[2].trigger, FaultTrigger::Next(3));
        assert_eq!(f[4].kind, HttpFaultKind::DropWrite);
        let round_trip: Vec<String> = f.iter().map(ToString::to_string).collect();
        assert_eq!(
            round_trip.join(","),
            "429:retry-after=1:every=10,busy:every=7,503:next=3,expire:every=50,drop-write:nth=5"
        );
    }

    #[test]
    fn errors_name_the_fault_and_the_problem() {
        let e = parse_faults("busy:every=7,bogus:every=1").unwrap_err();
        assert!(e.starts_with("fault 2 (\"bogus:every=1\")"), "{e}");
        assert!(
            parse_faults("busy")
                .unwrap_err()
                .contains("missing trigger")
        );
        assert!(
            parse_faults("busy:every=0")
                .unwrap_err()
                .contains("at least 1")
        );
        assert!(
            parse_faults("busy:every=2:nth=3")
                .unwrap_err()
                .contains("only one")
        );
        assert!(
            parse_faults("503:next=x")
                .unwrap_err()
                .contains("whole number")
        );
        assert!(
            parse_faults("busy:every=1:retry-after=3")
                .unwrap_err()
                .contains("429")
        );
        assert_eq!(parse_faults("").unwrap(), vec![]);
    }

    #[test]
    fn triggers_count_eligible_requests_only() {
        let plan =
            FaultPlan::new(parse_faults("busy:every=3,drop-write:nth=2,503:next=1").unwrap());
        // request 1: busy count 1, 503 count 1 -> 503 fires (busy does not)
        assert_eq!(plan.next(false), Some(HttpFaultKind::Unavailable));
        // request 2 (write): busy 2, drop-write 1, 503 2
        assert_eq!(plan.next(true), None);
        // request 3 (read): busy 3 fires
        assert_eq!(plan.next(false), Some(HttpFaultKind::Busy));
        // request 4 (write): drop-write 2 fires
        assert_eq!(plan.next(true), Some(HttpFaultKind::DropWrite));
        assert_eq!(plan.next(true), None);
        assert_eq!(plan.next(true), Some(HttpFaultKind::Busy));
    }
}
