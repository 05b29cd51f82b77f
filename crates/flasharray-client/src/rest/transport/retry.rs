//! When to send a request again, and how long to wait first.
//!
//! The rule, per answer:
//!
//! * 429, 503 and 500 "Server is busy": the array refused the request before doing
//!   anything, so any method is sent again, after the wait the array asked for
//!   (`Retry-After` in seconds or as an HTTP date, else `RateLimit-Reset`), else
//!   exponential backoff with jitter.
//! * No connection could be made: nothing reached the array; any method is retried.
//! * The connection broke after sending, the answer timed out, or a gateway answered
//!   502/504: a GET is retried; a write is **not** (it may have been applied). The
//!   operation layer re-reads the objects and sends only what is still missing.
//! * 401: the session was refused before the handler ran, so nothing was applied;
//!   the call gets a new (shared) session and is sent again, up to three times
//!   (see [`super::session`]). A refused login is final.
//! * Permanent transport failures are final at once: a TLS certificate the client
//!   does not trust or another TLS failure, a name that does not resolve (the
//!   resolver retries a temporary DNS failure once by itself), a request that cannot
//!   be built.
//! * Everything else is final.
//!
//! All retries of one call share one deadline, [`RetryConfig::max_elapsed`]; a wait
//! that would end after the deadline is not started.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

use crate::error::Error;

/// Retry limits for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryConfig {
    /// Retries after the first attempt (0 disables retrying).
    pub max_retries: u32,
    /// Deadline for the first attempt plus every retry and wait.
    pub max_elapsed: Duration,
    /// First backoff delay when the array did not say how long to wait.
    pub min_delay: Duration,
    /// Longest backoff delay (a `Retry-After` is honoured even when longer, but never
    /// beyond the deadline).
    pub max_delay: Duration,
}

impl Default for RetryConfig {
    /// Five retries like Pure's SDK, 1 s doubling to 30 s (the SDK's cap), within
    /// two minutes.
    fn default() -> Self {
        RetryConfig {
            max_retries: 5,
            max_elapsed: Duration::from_secs(120),
            min_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryConfig {
    /// No retries at all.
    pub fn none() -> Self {
        RetryConfig {
            max_retries: 0,
            ..Self::default()
        }
    }
}

/// Whether `err`, from a request with the given idempotence, may be sent again.
pub(crate) fn is_retryable(err: &Error, idempotent: bool) -> bool {
    match err {
        Error::Api(api) => {
            api.kind.is_transient() || (idempotent && matches!(api.status, 502 | 504))
        }
        Error::Transport(t) if !t.kind.may_retry() => false,
        Error::Transport(t) => idempotent || !t.maybe_applied,
        _ => false,
    }
}

/// The wait the array asked for: `Retry-After` (seconds or HTTP date), else
/// `RateLimit-Reset` (seconds).
pub(crate) fn requested_wait(headers: &HeaderMap) -> Option<Duration> {
    if let Some(v) = headers.get("retry-after").and_then(|v| v.to_str().ok()) {
        let v = v.trim();
        if let Ok(secs) = v.parse::<u64>() {
            return Some(Duration::from_secs(secs));
        }
        if let Ok(secs) = v.parse::<f64>()
            && secs.is_finite()
            && secs >= 0.0
        {
            return Some(Duration::from_secs_f64(secs));
        }
        if let Ok(when) = httpdate::parse_http_date(v) {
            return Some(
                when.duration_since(SystemTime::now())
                    .unwrap_or(Duration::ZERO),
            );
        }
    }
    headers
        .get("ratelimit-reset")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ApiError, TransportError, TransportErrorKind};
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn retry_after_seconds_date_and_reset() {
        assert_eq!(
            requested_wait(&headers(&[("retry-after", "3")])),
            Some(Duration::from_secs(3))
        );
        let later = SystemTime::now() + Duration::from_secs(30);
        let date = httpdate::fmt_http_date(later);
        let w = requested_wait(&headers(&[("retry-after", &date)])).unwrap();
        assert!(
            w > Duration::from_secs(25) && w <= Duration::from_secs(30),
            "{w:?}"
        );
        let past = httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(30));
        assert_eq!(
            requested_wait(&headers(&[("retry-after", &past)])),
            Some(Duration::ZERO)
        );
        assert_eq!(
            requested_wait(&headers(&[("ratelimit-reset", "7")])),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            requested_wait(&headers(&[
                ("retry-after", "soon"),
                ("ratelimit-reset", "2")
            ])),
            Some(Duration::from_secs(2))
        );
        assert_eq!(requested_wait(&HeaderMap::new()), None);
    }

    #[test]
    fn writes_are_not_replayed_when_they_may_have_landed() {
        let gateway = Error::from(ApiError::new(504, None, "Gateway Timeout"));
        assert!(is_retryable(&gateway, true));
        assert!(!is_retryable(&gateway, false));
        let busy = Error::from(ApiError::new(500, None, "Server is busy"));
        assert!(is_retryable(&busy, false));
        let other = Error::from(ApiError::new(500, None, "Internal error"));
        assert!(!is_retryable(&other, true));
        let t = |maybe_applied| {
            Error::from(TransportError {
                operation: "POST /api/2.26/volumes".into(),
                request_id: None,
                message: "x".into(),
                maybe_applied,
                kind: TransportErrorKind::Io,
            })
        };
        assert!(is_retryable(&t(false), false));
        assert!(!is_retryable(&t(true), false));
        assert!(is_retryable(&t(true), true));
        let untrusted = Error::from(TransportError {
            operation: "GET /api/2.26/arrays".into(),
            request_id: None,
            message: "anything".into(),
            maybe_applied: false,
            kind: TransportErrorKind::UntrustedCertificate,
        });
        assert!(!is_retryable(&untrusted, true));
        let kind = |kind| {
            Error::from(TransportError {
                operation: "GET /api/api_version".into(),
                request_id: None,
                message: "x".into(),
                maybe_applied: false,
                kind,
            })
        };
        for final_kind in [
            TransportErrorKind::Dns,
            TransportErrorKind::Tls,
            TransportErrorKind::InvalidRequest,
        ] {
            assert!(!is_retryable(&kind(final_kind), true), "{final_kind:?}");
        }
        for passing in [TransportErrorKind::Connect, TransportErrorKind::Timeout] {
            assert!(is_retryable(&kind(passing), true), "{passing:?}");
            assert!(is_retryable(&kind(passing), false), "{passing:?}");
        }
    }
}
