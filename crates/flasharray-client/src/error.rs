//! One error type for every backend.
//!
//! Array answers keep their HTTP status, every `{context, message}` pair and the
//! request id, and are classified into an [`ErrorKind`] by a single table of message
//! patterns (`classify`; sources in `docs/error-table.md`), so that callers branch on
//! meaning, not on strings. No variant ever holds a token: request ids and object names
//! only.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What an error means, independent of how the array phrased it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The named object does not exist.
    NotFound,
    /// An object with that name (or that initiator, connection, ...) already exists.
    AlreadyExists,
    /// The object is in use: connections, members, non-empty pod.
    InUse,
    /// The object is destroyed (pending eradication) and cannot be used as asked.
    Destroyed,
    /// The operation needs a destroyed object and this one is live.
    NotDestroyed,
    /// The volume is not connected to that host or host group.
    NotConnected,
    /// SafeMode or eradication settings refused the eradication.
    EradicationRefused,
    /// 429: too many requests.
    RateLimited,
    /// 503 or 500 "Server is busy".
    Busy,
    /// 401: missing, bad or expired credentials.
    Unauthorized,
    /// 403.
    Forbidden,
    /// The request is invalid (names, sizes, parameters).
    Invalid,
    /// Anything else the array refused.
    Other,
}

impl ErrorKind {
    /// Whether waiting and sending the same request again can help.
    pub fn is_transient(self) -> bool {
        matches!(self, ErrorKind::RateLimited | ErrorKind::Busy)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ErrorKind::NotFound => "not found",
            ErrorKind::AlreadyExists => "already exists",
            ErrorKind::InUse => "in use",
            ErrorKind::Destroyed => "destroyed",
            ErrorKind::NotDestroyed => "not destroyed",
            ErrorKind::NotConnected => "not connected",
            ErrorKind::EradicationRefused => "eradication refused",
            ErrorKind::RateLimited => "rate limited",
            ErrorKind::Busy => "array busy",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::Forbidden => "forbidden",
            ErrorKind::Invalid => "invalid request",
            ErrorKind::Other => "error",
        };
        f.write_str(s)
    }
}

/// Message fragments seen on real arrays (and used verbatim by the mock), checked in
/// order; the first match wins. Matching ignores case. Sources and confidence are in
/// `docs/error-table.md`.
pub(crate) const MESSAGE_PATTERNS: &[(&str, ErrorKind)] = &[
    ("server is busy", ErrorKind::Busy),
    ("cannot eradicate", ErrorKind::EradicationRefused),
    ("safemode", ErrorKind::EradicationRefused),
    ("is not connected", ErrorKind::NotConnected),
    (
        "cannot be deleted due to existing connections",
        ErrorKind::InUse,
    ),
    ("has connections", ErrorKind::InUse),
    ("is not empty", ErrorKind::InUse),
    ("still has members", ErrorKind::InUse),
    ("already belongs to", ErrorKind::InUse),
    ("already in use", ErrorKind::InUse),
    ("has been destroyed", ErrorKind::Destroyed),
    ("is destroyed", ErrorKind::Destroyed),
    ("must be destroyed", ErrorKind::NotDestroyed),
    ("is not destroyed", ErrorKind::NotDestroyed),
    ("already exists", ErrorKind::AlreadyExists),
    ("does not exist", ErrorKind::NotFound),
    ("no such volume or snapshot", ErrorKind::NotFound),
    ("not found", ErrorKind::NotFound),
    ("rate limit", ErrorKind::RateLimited),
    ("invalid", ErrorKind::Invalid),
    ("not allowed", ErrorKind::Invalid),
    ("must be", ErrorKind::Invalid),
];

/// Classifies an array answer by status, then by message.
pub(crate) fn classify(status: u16, message: &str) -> ErrorKind {
    match status {
        401 => return ErrorKind::Unauthorized,
        403 => return ErrorKind::Forbidden,
        429 => return ErrorKind::RateLimited,
        503 => return ErrorKind::Busy,
        _ => {}
    }
    let lower = message.to_ascii_lowercase();
    for (pat, kind) in MESSAGE_PATTERNS {
        if lower.contains(pat) {
            return *kind;
        }
    }
    match status {
        404 => ErrorKind::NotFound,
        400 | 422 => ErrorKind::Invalid,
        _ => ErrorKind::Other,
    }
}

/// One `{context, message}` pair from an array error body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// Usually the object name the message is about; may be absent.
    #[serde(default)]
    pub context: Option<String>,
    /// The array's message.
    #[serde(default)]
    pub message: String,
}

/// An error answer from the array (or the mock acting as one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: u16,
    /// Classification of the first error.
    pub kind: ErrorKind,
    /// Every error the body listed (at least one).
    pub errors: Vec<ErrorDetail>,
    /// `X-Request-ID` of the request, if known.
    pub request_id: Option<String>,
    /// `METHOD /path` of the request, without query values that could be sensitive.
    pub operation: String,
    /// Seconds the array asked us to wait (`Retry-After` / `RateLimit-Reset`).
    pub retry_after: Option<Duration>,
}

impl ApiError {
    /// Builds an error as the array would send it, classifying the message.
    pub fn new(status: u16, context: Option<&str>, message: impl Into<String>) -> Self {
        let message = message.into();
        ApiError {
            status,
            kind: classify(status, &message),
            errors: vec![ErrorDetail {
                context: context.map(str::to_string),
                message,
            }],
            request_id: None,
            operation: String::new(),
            retry_after: None,
        }
    }

    /// The first message, for one-line reports.
    pub fn message(&self) -> &str {
        self.errors.first().map_or("", |e| e.message.as_str())
    }

    /// The first context, usually the object name.
    pub fn context(&self) -> Option<&str> {
        self.errors.first().and_then(|e| e.context.as_deref())
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.operation.is_empty() {
            write!(f, "{}: ", self.operation)?;
        }
        let mut first = true;
        for e in &self.errors {
            if !first {
                f.write_str("; ")?;
            }
            first = false;
            match &e.context {
                Some(c) if !c.is_empty() => write!(f, "{c}: {}", e.message)?,
                _ => f.write_str(&e.message)?,
            }
        }
        write!(f, " (HTTP {}", self.status)?;
        if let Some(id) = &self.request_id {
            write!(f, ", request id {id}")?;
        }
        f.write_str(")")
    }
}

/// What kind of failure below HTTP a [`TransportError`] is, so that callers match on
/// it instead of searching the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// The array's TLS certificate is not trusted (unknown issuer, bad or expired
    /// certificate, wrong name). Final: waiting cannot fix it.
    UntrustedCertificate,
    /// Another TLS failure (handshake alert, protocol version). Final.
    Tls,
    /// The array's name did not resolve. Final: the resolver already retried a
    /// temporary failure once.
    Dns,
    /// No connection could be made (refused, unreachable).
    Connect,
    /// The request or its answer took longer than the configured timeout.
    Timeout,
    /// The connection broke during the exchange (reset, closed, dropped).
    Io,
    /// The request could not be built (bad URL or header). Final.
    InvalidRequest,
}

impl TransportErrorKind {
    /// Whether sending the same request again can help at all. Permanent failures
    /// (an untrusted certificate, another TLS failure, a name that does not resolve
    /// after the resolver's own retry, a request that cannot be built) are final at
    /// once; a refused or broken connection and a timeout may pass (the array may be
    /// failing over). Whether a write may be resent is
    /// [`TransportError::maybe_applied`]'s question.
    pub fn may_retry(self) -> bool {
        matches!(
            self,
            TransportErrorKind::Connect | TransportErrorKind::Timeout | TransportErrorKind::Io
        )
    }
}

impl fmt::Display for TransportErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            TransportErrorKind::UntrustedCertificate => "TLS certificate not trusted",
            TransportErrorKind::Tls => "TLS failure",
            TransportErrorKind::Dns => "name resolution failed",
            TransportErrorKind::Connect => "cannot connect",
            TransportErrorKind::Timeout => "timed out",
            TransportErrorKind::Io => "connection broken",
            TransportErrorKind::InvalidRequest => "invalid request",
        };
        f.write_str(s)
    }
}

/// A failure below HTTP: connect, TLS, reset, timeout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportError {
    /// `METHOD /path` of the request.
    pub operation: String,
    /// `X-Request-ID` sent.
    pub request_id: Option<String>,
    /// What went wrong (never contains headers).
    pub message: String,
    /// True when the request may have reached the array (sent, then the connection
    /// broke or the answer timed out). A write with `maybe_applied` must be checked by
    /// reading before it is sent again.
    pub maybe_applied: bool,
    /// The classification of the failure.
    pub kind: TransportErrorKind,
}

impl TransportError {
    /// True when the request or its answer outlasted the configured timeout; a write may
    /// then have been applied (`maybe_applied`).
    pub fn is_timeout(&self) -> bool {
        self.kind == TransportErrorKind::Timeout
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.operation, self.message)?;
        if let Some(id) = &self.request_id {
            write!(f, " (request id {id})")?;
        }
        Ok(())
    }
}

/// Every error this crate (and the mock) reports. `Clone`, so that one failed login
/// can be handed to every call that waited for it.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The array answered with an error.
    #[error("{0}")]
    Api(Box<ApiError>),
    /// The request did not complete.
    #[error("{0}")]
    Transport(Box<TransportError>),
    /// A name broke the naming rules; nothing was sent.
    #[error(transparent)]
    Name(#[from] crate::name::NameError),
    /// A size broke the size rules; nothing was sent.
    #[error(transparent)]
    Size(#[from] crate::size::SizeError),
    /// A request was refused before sending (both sides with several names, empty
    /// selection on a destructive call, ...).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// No REST version both sides support, a pinned version the array lacks, or a
    /// call the session's version does not have (refused before sending).
    #[error("REST API version: {0}")]
    Version(String),
    /// The answer could not be decoded; `path` names the field.
    #[error("{operation}: cannot decode the array's answer at `{path}`: {message}")]
    Decode {
        /// `METHOD /path`.
        operation: String,
        /// JSON path of the failing field.
        path: String,
        /// Decoder message.
        message: String,
    },
    /// Client configuration (URL, CA file, TLS) is unusable.
    #[error("configuration: {0}")]
    Config(String),
    /// Retries were exhausted before the deadline; carries the last error.
    #[error("gave up after {attempts} attempts over {elapsed:?}: {last}")]
    RetriesExhausted {
        /// How many attempts were made.
        attempts: u32,
        /// Time spent.
        elapsed: Duration,
        /// The last error seen.
        last: Box<Error>,
    },
}

impl Error {
    /// Shorthand for an array-style 400 error.
    pub fn api(status: u16, context: Option<&str>, message: impl Into<String>) -> Self {
        Error::Api(Box::new(ApiError::new(status, context, message)))
    }

    /// The meaning of the error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Api(e) => e.kind,
            Error::Transport(_) => ErrorKind::Other,
            Error::Name(_) | Error::Size(_) | Error::InvalidRequest(_) => ErrorKind::Invalid,
            Error::Version(_) | Error::Config(_) | Error::Decode { .. } => ErrorKind::Other,
            Error::RetriesExhausted { last, .. } => last.kind(),
        }
    }

    /// The request id, where one was sent.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Error::Api(e) => e.request_id.as_deref(),
            Error::Transport(e) => e.request_id.as_deref(),
            Error::RetriesExhausted { last, .. } => last.request_id(),
            _ => None,
        }
    }

    /// True when the failed call may nevertheless have changed the array (a write
    /// whose answer was lost). Such a write must be verified by reading, never replayed
    /// blindly.
    pub fn maybe_applied(&self) -> bool {
        match self {
            Error::Transport(t) => t.maybe_applied,
            Error::Api(e) => matches!(e.status, 502 | 504),
            Error::RetriesExhausted { last, .. } => last.maybe_applied(),
            _ => false,
        }
    }

    /// True for errors the caller caused: bad names, sizes, parameters, or the
    /// array's 400 answers about them. The CLI maps these to exit code 2 only when
    /// nothing was sent.
    pub fn is_invalid_input(&self) -> bool {
        match self {
            Error::Name(_) | Error::Size(_) | Error::InvalidRequest(_) => true,
            // The array's REST versions cannot serve the call (none in common, a
            // pinned one missing, a feature newer than the session): refused before
            // anything is written, and only the array or the input can change that.
            Error::Version(_) => true,
            // A listing's filter the array could not read: the caller wrote it, and
            // a listing changes nothing.
            Error::Api(e) => e.status == 400 && e.context() == Some("filter"),
            _ => false,
        }
    }

    /// The transport failure, if this is one.
    pub fn as_transport(&self) -> Option<&TransportError> {
        match self {
            Error::Transport(t) => Some(t),
            Error::RetriesExhausted { last, .. } => last.as_transport(),
            _ => None,
        }
    }

    /// The array's answer, if this is one.
    pub fn as_api(&self) -> Option<&ApiError> {
        match self {
            Error::Api(e) => Some(e),
            Error::RetriesExhausted { last, .. } => last.as_api(),
            _ => None,
        }
    }
}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        Error::Api(Box::new(e))
    }
}

impl From<TransportError> for Error {
    fn from(e: TransportError) -> Self {
        Error::Transport(Box::new(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_classifies_known_messages() {
        let cases = [
            (400, "Volume does not exist.", ErrorKind::NotFound),
            (400, "Host does not exist.", ErrorKind::NotFound),
            (400, "Not found", ErrorKind::NotFound),
            (400, "No such volume or snapshot.", ErrorKind::NotFound),
            (400, "Volume already exists.", ErrorKind::AlreadyExists),
            (400, "Host already exists.", ErrorKind::AlreadyExists),
            (400, "Connection already exists.", ErrorKind::AlreadyExists),
            (
                400,
                "Host cannot be deleted due to existing connections.",
                ErrorKind::InUse,
            ),
            (
                400,
                "The specified WWN is already in use.",
                ErrorKind::InUse,
            ),
            (
                400,
                "Host already belongs to a host group.",
                ErrorKind::InUse,
            ),
            (400, "Pod is not empty.", ErrorKind::InUse),
            (400, "Volume has been destroyed.", ErrorKind::Destroyed),
            (
                400,
                "Volume must be destroyed before it can be eradicated.",
                ErrorKind::NotDestroyed,
            ),
            (
                400,
                "Volume is not connected to host h1.",
                ErrorKind::NotConnected,
            ),
            (
                400,
                "Cannot eradicate pod while SafeMode is enabled.",
                ErrorKind::EradicationRefused,
            ),
            (500, "Server is busy", ErrorKind::Busy),
            (500, "Internal error", ErrorKind::Other),
            (503, "anything", ErrorKind::Busy),
            (429, "API rate limit exceeded", ErrorKind::RateLimited),
            (401, "Invalid session", ErrorKind::Unauthorized),
            (403, "Forbidden", ErrorKind::Forbidden),
            (400, "Invalid value for provisioned.", ErrorKind::Invalid),
            (400, "Something new", ErrorKind::Invalid),
            (404, "gone", ErrorKind::NotFound),
        ];
        for (status, msg, want) in cases {
            assert_eq!(classify(status, msg), want, "{status} {msg}");
        }
    }

    #[test]
    fn display_names_operation_context_and_request_id() {
        let mut e = ApiError::new(400, Some("v1"), "Volume does not exist.");
        e.operation = "PATCH /api/2.26/volumes".into();
        e.request_id = Some("abc".into());
        let s = Error::from(e).to_string();
        assert_eq!(
            s,
            "PATCH /api/2.26/volumes: v1: Volume does not exist. (HTTP 400, request id abc)"
        );
    }

    #[test]
    fn ambiguity() {
        let t = TransportError {
            operation: "POST /volumes".into(),
            request_id: None,
            message: "connection reset".into(),
            maybe_applied: true,
            kind: TransportErrorKind::Io,
        };
        assert!(Error::from(t).maybe_applied());
        assert!(!Error::api(400, None, "x").maybe_applied());
        assert!(Error::api(504, None, "Gateway Timeout").maybe_applied());
    }
}
