//! The transport: how a request reaches the array, apart from what it asks.
//!
//! The crate-private `Transport` sends one HTTP exchange, retries it by the
//! rules of [`retry`], keeps the login [`session`] and follows [`paging`]. The
//! per-resource modules of [`crate::rest`] only build paths, queries and bodies.
//!
//! Every request gets a fresh `X-Request-ID` (uuid v4). Errors carry the id the array
//! echoed (or, without an echo, the one sent) and the operation as `METHOD /path`
//! without query values. Headers are never logged and never copied into errors.

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub(crate) mod paging;
pub(crate) mod resolve;
pub(crate) mod retry;
pub(crate) mod session;
pub(crate) mod token_exchange;

use backon::{ExponentialBuilder, Retryable};
use bytes::Bytes;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap};
use reqwest::{Method, StatusCode};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use url::Url;

use crate::error::{
    ApiError, Error, ErrorDetail, Result, TransportError, TransportErrorKind, classify,
};
use crate::rest::query::Query;
use retry::{RetryConfig, is_retryable, requested_wait};
use session::{ApiVersion, SessionState};

/// The connection to one array: HTTP client, address, credentials, retry limits and
/// the session. Shared by every call of a [`crate::rest::RestArray`].
pub(crate) struct Transport {
    http: reqwest::Client,
    pub(crate) base: Url,
    credential: Credential,
    pub(crate) pinned: Option<ApiVersion>,
    pub(crate) retry: RetryConfig,
    /// Items a listing asks for per request when its call sets no page size
    /// ([`crate::rest::RestArrayBuilder::page_size`]).
    pub(crate) page_size: u32,
    state: std::sync::Mutex<SessionState>,
}

/// Which credential a request carries.
#[derive(Clone, Copy)]
pub(crate) enum Auth<'a> {
    /// None (`/api/api_version`).
    None,
    /// The admin API token (`/login`).
    ApiToken(&'a SecretString),
    /// The session token.
    Session(&'a SecretString),
    /// An API client's access token (`Authorization: Bearer`).
    Bearer(&'a SecretString),
}

/// How the client proves who it is.
#[derive(Clone)]
pub(crate) enum Credential {
    /// An admin's API token, exchanged for a session at `/login`.
    ApiToken(SecretString),
    /// An API client, whose ID tokens are exchanged for access tokens.
    ApiClient(crate::rest::oauth::ApiClientCredential),
}

/// A request body and its media type.
#[derive(Clone, Copy)]
pub(crate) enum Body<'a> {
    /// `application/json`.
    Json(&'a [u8]),
    /// `application/x-www-form-urlencoded` (the OAuth2 token endpoint).
    Form(&'a [u8]),
}

/// Any answer, before a non-2xx one becomes an error. Not `Debug`, as [`Reply`].
pub(crate) struct RawReply {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    pub(crate) operation: String,
    pub(crate) request_id: String,
}

impl RawReply {
    /// A 2xx answer as a [`Reply`]; any other as [`Error::Api`].
    pub(crate) fn into_result(self) -> Result<Reply> {
        if self.status.is_success() {
            return Ok(Reply {
                headers: self.headers,
                body: self.body,
                operation: self.operation,
            });
        }
        Err(self.into_error())
    }

    /// The answer as [`Error::Api`], whatever its status.
    pub(crate) fn into_error(self) -> Error {
        api_error(
            self.status,
            &self.headers,
            &self.body,
            self.operation,
            self.request_id,
        )
    }
}

/// A successful answer. Not `Debug`: the headers of a login answer hold the session.
pub(crate) struct Reply {
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    pub(crate) operation: String,
}

/// An API call relative to `/api/2.N/`.
pub(crate) struct Call<'a> {
    pub(crate) method: Method,
    pub(crate) path: &'a str,
    pub(crate) query: &'a Query,
    pub(crate) body: Option<&'a [u8]>,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    errors: Option<Vec<ErrorDetail>>,
    #[serde(default)]
    message: Option<String>,
    /// The OAuth2 token endpoint's error (RFC 6749 §5.2).
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    error_description: Option<String>,
}

#[derive(Deserialize)]
struct Items<T> {
    items: Vec<T>,
}

impl Reply {
    /// Decodes the body; a failure names the JSON path of the field.
    pub(crate) fn decode<T: DeserializeOwned>(&self) -> Result<T> {
        decode_bytes(&self.body, &self.operation)
    }

    /// Decodes `{"items": [...]}`.
    pub(crate) fn items<T: DeserializeOwned>(&self) -> Result<Vec<T>> {
        self.decode::<Items<T>>().map(|i| i.items)
    }
}

pub(crate) fn decode_bytes<T: DeserializeOwned>(body: &[u8], operation: &str) -> Result<T> {
    let de = &mut serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(de).map_err(|e| Error::Decode {
        operation: operation.to_string(),
        path: e.path().to_string(),
        message: redact_quoted(&e.inner().to_string()),
    })
}

/// serde_json quotes offending string values in its messages; a value may be a
/// secret (a token field of the wrong shape), so quoted text is elided.
fn redact_quoted(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut inside = false;
    for c in msg.chars() {
        if c == '"' {
            if !inside {
                out.push_str("\"…");
            } else {
                out.push('"');
            }
            inside = !inside;
        } else if !inside {
            out.push(c);
        }
    }
    out
}

impl Transport {
    pub(crate) fn new(
        http: reqwest::Client,
        base: Url,
        credential: Credential,
        pinned: Option<ApiVersion>,
        retry: RetryConfig,
    ) -> Self {
        Transport {
            http,
            base,
            credential,
            pinned,
            retry,
            page_size: paging::DEFAULT_PAGE_SIZE,
            state: std::sync::Mutex::new(SessionState::default()),
        }
    }

    /// Sends one request and reads the whole answer. Non-2xx answers become
    /// [`Error::Api`]. `write_sent` marks whether a broken exchange may have changed
    /// the array (false for version discovery and login).
    pub(crate) async fn send(
        &self,
        method: Method,
        abs_path: &str,
        query: &Query,
        body: Option<&[u8]>,
        auth: Auth<'_>,
        write_sent: bool,
    ) -> Result<Reply> {
        self.send_raw(
            method,
            abs_path,
            query,
            body.map(Body::Json),
            auth,
            write_sent,
        )
        .await?
        .into_result()
    }

    /// Like [`Transport::send`], with any media type, and any status as an answer.
    pub(crate) async fn send_raw(
        &self,
        method: Method,
        abs_path: &str,
        query: &Query,
        body: Option<Body<'_>>,
        auth: Auth<'_>,
        write_sent: bool,
    ) -> Result<RawReply> {
        let operation = format!("{method} {abs_path}");
        let request_id = uuid::Uuid::new_v4().to_string();
        let mut url = self.base.clone();
        url.set_path(abs_path);
        if !query.is_empty() {
            url.set_query(Some(&query.encoded()));
        }
        let mut req = self
            .http
            .request(method.clone(), url)
            .header("X-Request-ID", &request_id);
        if method != Method::DELETE {
            req = req.header(ACCEPT, "application/json");
        }
        match auth {
            Auth::None => {}
            Auth::ApiToken(t) => req = req.header("api-token", sensitive(t)?),
            Auth::Session(t) => req = req.header("x-auth-token", sensitive(t)?),
            Auth::Bearer(t) => req = req.header(AUTHORIZATION, bearer(t)?),
        }
        match body {
            Some(Body::Json(b)) => {
                req = req
                    .header(CONTENT_TYPE, "application/json")
                    .body(b.to_vec());
            }
            Some(Body::Form(b)) => {
                req = req
                    .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                    .body(b.to_vec());
            }
            None if method == Method::POST => {
                req = req.header(reqwest::header::CONTENT_LENGTH, "0");
            }
            None => {}
        }

        let started = Instant::now();
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                let err = transport_error(&e, &operation, &request_id, write_sent);
                tracing::debug!(%operation, request_id, error = %err, "request failed");
                return Err(err);
            }
        };
        let status = resp.status();
        let headers = resp.headers().clone();
        let echoed = headers
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .unwrap_or(request_id);
        let body = match resp.bytes().await {
            Ok(b) => b,
            Err(e) => {
                // Status and headers arrived: the request reached the array.
                let mut err = transport_error(&e, &operation, &echoed, write_sent);
                if let Error::Transport(t) = &mut err {
                    t.maybe_applied = write_sent;
                }
                return Err(err);
            }
        };
        tracing::debug!(
            %operation,
            request_id = %echoed,
            status = status.as_u16(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "array answered"
        );
        Ok(RawReply {
            status,
            headers,
            body,
            operation,
            request_id: echoed,
        })
    }

    /// An authenticated write (or any method) relative to `/api/2.N/`.
    pub(crate) async fn write(
        &self,
        method: Method,
        path: &str,
        query: Query,
        body: Option<Vec<u8>>,
    ) -> Result<Reply> {
        self.call(Call {
            method,
            path,
            query: &query,
            body: body.as_deref(),
        })
        .await
    }

    /// An authenticated GET relative to `/api/2.N/`, without paging.
    pub(crate) async fn get(&self, path: &str, query: Query) -> Result<Reply> {
        self.write(Method::GET, path, query, None).await
    }

    /// The one item of a singleton collection (`/arrays`, `/arrays/space`).
    pub(crate) async fn single<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        let reply = self.get(path, Query::new()).await?;
        reply
            .items::<T>()?
            .into_iter()
            .next()
            .ok_or_else(|| Error::Decode {
                operation: reply.operation.clone(),
                path: "items".into(),
                message: "the array answered with no item".into(),
            })
    }

    /// Runs `attempt` until it succeeds, fails for good, runs out of retries or
    /// reaches the deadline (see [`retry`]).
    pub(crate) async fn with_retries<T, F, Fut>(
        &self,
        idempotent: bool,
        what: &str,
        mut attempt: F,
    ) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let cfg = self.retry;
        let started = Instant::now();
        let attempts = AtomicU32::new(0);
        let backoff = ExponentialBuilder::default()
            .with_min_delay(cfg.min_delay)
            .with_max_delay(cfg.max_delay)
            .with_max_times(cfg.max_retries as usize)
            .with_jitter();
        let result = (|| {
            attempts.fetch_add(1, Ordering::Relaxed);
            attempt()
        })
        .retry(backoff)
        .sleep(tokio::time::sleep)
        .when(|e| is_retryable(e, idempotent))
        .adjust(|e, computed| {
            let computed = computed?;
            let wait = e.as_api().and_then(|a| a.retry_after).unwrap_or(computed);
            if started.elapsed() + wait > cfg.max_elapsed {
                return None;
            }
            Some(wait)
        })
        .notify(|e, wait| {
            tracing::warn!(
                operation = what,
                request_id = e.request_id().unwrap_or("-"),
                wait_ms = wait.as_millis() as u64,
                error = %e,
                "retrying"
            );
        })
        .await;
        match result {
            Err(e) if attempts.load(Ordering::Relaxed) > 1 && is_retryable(&e, idempotent) => {
                Err(Error::RetriesExhausted {
                    attempts: attempts.load(Ordering::Relaxed),
                    elapsed: started.elapsed(),
                    last: Box::new(e),
                })
            }
            other => other,
        }
    }

    /// An authenticated API call with retries, and a new session (shared with every
    /// other call refused on the same one) after a 401, as long as the array keeps
    /// serving calls.
    pub(crate) async fn call(&self, call: Call<'_>) -> Result<Reply> {
        let idempotent = call.method == Method::GET;
        let what = format!("{} {}", call.method, call.path);
        self.with_retries(idempotent, &what, || self.attempt(&call))
            .await
    }

    async fn attempt(&self, call: &Call<'_>) -> Result<Reply> {
        // Only a write can have changed the array when its answer is lost.
        let write = call.method != Method::GET;
        let mut failed = None;
        // Refusals in a row on sessions that served nothing, and in all.
        let mut stalled = 0;
        let mut refusals = 0;
        loop {
            let session = self.session_after(failed).await?;
            let path = format!("/api/{}/{}", session.version, call.path);
            session.start();
            let result = self
                .send(
                    call.method.clone(),
                    &path,
                    call.query,
                    call.body,
                    session.auth(),
                    write,
                )
                .await;
            let refused = matches!(&result, Err(e) if is_unauthorized(e));
            session.finish(refused);
            let Err(e) = &result else {
                return result;
            };
            if !refused {
                return result;
            }
            tracing::debug!(
                generation = session.generation,
                reason = e.as_api().map_or("", |a| a.message()),
                "session refused"
            );
            // An array that ends sessions every few requests refuses many of the calls
            // sharing a session; a call keeps going while its sessions serve other
            // calls, and gives up after MAX_STALLED_REFUSALS refusals on sessions that
            // served nothing (or MAX_REFUSALS_PER_CALL in all).
            stalled = if session.served_any() { 0 } else { stalled + 1 };
            refusals += 1;
            if stalled > MAX_STALLED_REFUSALS || refusals > MAX_REFUSALS_PER_CALL {
                return result;
            }
            // A 401 is decided before the handler runs, so a write answered 401
            // was not applied and may be sent again with a new session.
            failed = Some(session.generation);
        }
    }
}

/// 401s in a row, on sessions that served no call, before a call fails.
const MAX_STALLED_REFUSALS: u32 = 3;
/// 401s one call accepts in all, however busy the others are.
const MAX_REFUSALS_PER_CALL: u32 = 64;

fn is_unauthorized(e: &Error) -> bool {
    matches!(e, Error::Api(a) if a.status == 401)
}

/// `Authorization: Bearer <token>`, marked sensitive.
fn bearer(t: &SecretString) -> Result<reqwest::header::HeaderValue> {
    let mut v = reqwest::header::HeaderValue::from_str(&format!("Bearer {}", t.expose_secret()))
        .map_err(|_| {
            Error::Config("an access token holds characters not allowed in a header".into())
        })?;
    v.set_sensitive(true);
    Ok(v)
}

fn sensitive(t: &SecretString) -> Result<reqwest::header::HeaderValue> {
    let mut v = reqwest::header::HeaderValue::from_str(t.expose_secret())
        .map_err(|_| Error::Config("a token holds characters not allowed in a header".into()))?;
    v.set_sensitive(true);
    Ok(v)
}

/// The start of the message of a transport error caused by the array's TLS
/// certificate; the decision itself is [`TransportErrorKind::UntrustedCertificate`].
const UNTRUSTED_CERTIFICATE: &str = "TLS certificate not trusted: ";

/// Classifies a failed exchange by the error types in its cause chain: the
/// resolver's [`resolve::DnsError`], rustls errors (a rejected certificate is
/// [`TransportErrorKind::UntrustedCertificate`]), I/O errors, then reqwest's own
/// flags. A resolver other than ours shows up only as hyper-util's "dns error" text.
fn transport_kind(e: &reqwest::Error) -> TransportErrorKind {
    let mut next: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    let mut io_kind = None;
    while let Some(s) = next {
        if let Some(kind) = tls_kind(s) {
            return kind;
        }
        if s.downcast_ref::<resolve::DnsError>().is_some() {
            return TransportErrorKind::Dns;
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            io_kind.get_or_insert(io.kind());
            // `io::Error::source` skips the wrapped error itself (and I/O errors nest:
            // hyper-util wraps the TLS stream's), so descend into it explicitly.
            if let Some(inner) = io.get_ref() {
                next = Some(inner);
                continue;
            }
        }
        if s.to_string().starts_with("dns error") {
            return TransportErrorKind::Dns;
        }
        next = s.source();
    }
    if e.is_timeout() || io_kind == Some(std::io::ErrorKind::TimedOut) {
        TransportErrorKind::Timeout
    } else if e.is_connect() {
        TransportErrorKind::Connect
    } else if e.is_builder() {
        TransportErrorKind::InvalidRequest
    } else {
        TransportErrorKind::Io
    }
}

fn tls_kind(e: &(dyn std::error::Error + 'static)) -> Option<TransportErrorKind> {
    let tls = e.downcast_ref::<rustls::Error>()?;
    Some(match tls {
        rustls::Error::InvalidCertificate(_) => TransportErrorKind::UntrustedCertificate,
        _ => TransportErrorKind::Tls,
    })
}

fn transport_error(
    e: &reqwest::Error,
    operation: &str,
    request_id: &str,
    write_sent: bool,
) -> Error {
    // Describe the cause chain without the URL (it holds object names in the query).
    let mut message = String::new();
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(e);
    if e.is_timeout() {
        message.push_str("timed out");
    } else if e.is_connect() {
        message.push_str("cannot connect");
    } else {
        message.push_str("request failed");
    }
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    let kind = transport_kind(e);
    if kind == TransportErrorKind::UntrustedCertificate {
        // A certificate the client does not trust will not become trusted by waiting;
        // the retry rule reads the kind, the text tells the admin.
        message.insert_str(0, UNTRUSTED_CERTIFICATE);
    }
    TransportError {
        operation: operation.to_string(),
        request_id: Some(request_id.to_string()),
        message,
        maybe_applied: write_sent && !e.is_connect() && !e.is_builder(),
        kind,
    }
    .into()
}

fn api_error(
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    operation: String,
    request_id: String,
) -> Error {
    let errors = match serde_json::from_slice::<ErrorBody>(body) {
        Ok(ErrorBody {
            errors: Some(errors),
            ..
        }) if !errors.is_empty() => errors,
        Ok(ErrorBody {
            message: Some(message),
            ..
        }) => vec![ErrorDetail {
            context: None,
            message,
        }],
        Ok(ErrorBody {
            error: Some(error),
            error_description,
            ..
        }) => vec![ErrorDetail {
            context: None,
            message: error_description.unwrap_or(error),
        }],
        _ => vec![ErrorDetail {
            context: None,
            message: format!(
                "{} (the answer is not a JSON error document)",
                status.canonical_reason().unwrap_or("error")
            ),
        }],
    };
    let kind = classify(status.as_u16(), &errors[0].message);
    ApiError {
        status: status.as_u16(),
        kind,
        errors,
        request_id: Some(request_id),
        operation,
        retry_after: requested_wait(headers).map(|d| d.min(Duration::from_secs(3600))),
    }
    .into()
}

#[cfg(test)]
mod decode_props;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn error_bodies() {
        let h = HeaderMap::new();
        let e = api_error(
            StatusCode::BAD_REQUEST,
            &h,
            br#"{"errors":[{"context":"v1","message":"Volume does not exist."}]}"#,
            "GET /api/2.26/volumes".into(),
            "rid".into(),
        );
        let a = e.as_api().unwrap();
        assert_eq!(a.kind, ErrorKind::NotFound);
        assert_eq!(a.context(), Some("v1"));
        let e = api_error(
            StatusCode::TOO_MANY_REQUESTS,
            &h,
            br#"{"message":"API rate limit exceeded"}"#,
            "GET /api/2.26/volumes".into(),
            "rid".into(),
        );
        assert_eq!(e.as_api().unwrap().message(), "API rate limit exceeded");
        let e = api_error(
            StatusCode::BAD_GATEWAY,
            &h,
            b"<html>bad gateway</html>",
            "GET /api/2.26/volumes".into(),
            "rid".into(),
        );
        assert!(e.as_api().unwrap().message().contains("Bad Gateway"));
    }

    #[test]
    fn decode_errors_name_the_path_and_hide_values() {
        #[derive(Deserialize, Debug)]
        #[allow(dead_code)]
        struct T {
            a: Vec<u64>,
        }
        let err = decode_bytes::<T>(br#"{"a":[1,"secret-value"]}"#, "GET /x").unwrap_err();
        let s = err.to_string();
        assert!(s.contains("a[1]"), "{s}");
        assert!(!s.contains("secret-value"), "{s}");
    }
}
