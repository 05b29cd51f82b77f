//! Every answer of a Kubernetes API server read within bounds, in one place: each
//! client [`crate::connect()`] builds sends its requests through `Bounded`, so no
//! command or reconcile has to remember a limit.
//!
//! | rule | why |
//! |---|---|
//! | an answer is read up to its kind's cap ([`AnswerKind::max_bytes`]), one byte more stops it | a huge list answer aborted `doctor` on a failed allocation |
//! | one exchange (head and body) ends within the request timeout, and every one before the command's deadline | a 120 s answer or a `Retry-After: 3600` kept `doctor` and `orphans` running |
//! | 429 (and 503/504 to a GET) is retried up to [`MAX_RETRIES`] times, waiting what the server asks only when that wait fits the request timeout and the deadline | a server may ask for an hour |
//! | an answer that is not JSON is reported by its first bytes, escaped, and a Secret's not at all | a 50 MB unparsable answer was copied whole to stderr |
//! | a list is read in pages of [`LIST_PAGE`] items (`list_all`), at most [`MAX_LIST_ITEMS`] in all | one answer holding every object of a kind |
//!
//! The caps follow `px_topology::files::InputKind`: a kind of input, its largest
//! size in bytes, and an error that names the object and the cap.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body::{Body as HttpBody, Frame, SizeHint};
use http_body_util::BodyExt;
use kube::api::{Api, ListParams, ObjectList, PartialObjectMeta};
use kube::client::Body;
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use crate::error::BoxError;

/// Items asked for per page of a list (`limit`).
pub const LIST_PAGE: u32 = 250;

/// The most items pxfa reads of one list, over all its pages.
pub const MAX_LIST_ITEMS: usize = 20_000;

/// Retries of one request after 429, or 503/504 to a GET.
pub const MAX_RETRIES: u32 = 4;

/// How many bytes of an unparsable answer an error shows.
const SHOWN_BYTES: usize = 64;

/// The limits of one client's requests: how long one exchange may take, and when the
/// command that uses the client must be done with the cluster.
#[derive(Debug, Clone, Copy)]
pub struct KubeBounds {
    request_timeout: Duration,
    deadline: Option<Instant>,
}

impl Default for KubeBounds {
    fn default() -> Self {
        KubeBounds::new(Self::DEFAULT_REQUEST_TIMEOUT)
    }
}

impl KubeBounds {
    /// One exchange's time when the caller names none.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

    /// Each exchange (answer head and body) within `request_timeout`; no deadline.
    pub fn new(request_timeout: Duration) -> Self {
        KubeBounds {
            request_timeout,
            deadline: None,
        }
    }

    /// Also every request over within `within` from now (a command's deadline).
    #[must_use]
    pub fn with_deadline(self, within: Duration) -> Self {
        KubeBounds {
            deadline: Instant::now().checked_add(within),
            ..self
        }
    }

    /// One exchange's time limit.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// How long the next exchange may take, and which limit that is.
    fn budget(&self, target: &Target) -> Result<(Duration, Limit), AnswerError> {
        let Some(deadline) = self.deadline else {
            return Ok((self.request_timeout, Limit::Request));
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(AnswerError::DeadlinePassed {
                target: target.to_string(),
            });
        }
        Ok(if left < self.request_timeout {
            (left, Limit::Deadline)
        } else {
            (self.request_timeout, Limit::Request)
        })
    }

    /// Whether a retry after `wait` fits; the error says which limit it would pass.
    fn allows_wait(&self, wait: Duration) -> Result<(), Limit> {
        if wait > self.request_timeout {
            return Err(Limit::Request);
        }
        match self.deadline {
            Some(d) if Instant::now() + wait >= d => Err(Limit::Deadline),
            _ => Ok(()),
        }
    }
}

/// What an answer is, for its size cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerKind {
    /// One object (a GET by name, an apply's answer).
    Object,
    /// One page of a list ([`LIST_PAGE`] items).
    ListPage,
    /// A discovery document (`/api`, `/apis/GROUP/VERSION`, `/version`).
    Discovery,
    /// One event (line) of a watch.
    WatchEvent,
    /// An error answer (4xx, 5xx).
    Failure,
}

impl AnswerKind {
    /// The largest answer of this kind pxfa reads, in bytes. The API server refuses
    /// objects over 1.5 MiB (etcd's request limit), so an object is far smaller.
    pub const fn max_bytes(self) -> u64 {
        match self {
            AnswerKind::Object | AnswerKind::WatchEvent => 4 << 20,
            AnswerKind::ListPage => 32 << 20,
            AnswerKind::Discovery => 16 << 20,
            AnswerKind::Failure => 64 << 10,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            AnswerKind::Object => "a Kubernetes object",
            AnswerKind::ListPage => "one page of a list",
            AnswerKind::Discovery => "a discovery document",
            AnswerKind::WatchEvent => "one watch event",
            AnswerKind::Failure => "an error answer",
        }
    }
}

/// Which limit ended a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The time one exchange may take.
    Request,
    /// The command's deadline.
    Deadline,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::Request => "the request timeout",
            Limit::Deadline => "the command's deadline",
        })
    }
}

/// Why an answer was not used. Names the request (method and path, never the
/// query or an answer's content beyond its escaped first bytes, and never a
/// Secret's).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    /// Larger than its kind may be.
    #[error(
        "the answer to {target} is larger than {} KiB, more than {} can be; pxfa stopped reading it",
        .kind.max_bytes() >> 10,
        .kind.describe()
    )]
    TooLarge {
        /// Method and path.
        target: String,
        /// What the answer is.
        kind: AnswerKind,
    },
    /// A list with more items than pxfa reads.
    #[error("the list {target} has more than {MAX_LIST_ITEMS} items; pxfa reads at most that many")]
    TooManyItems {
        /// The list's kind, as the server named it.
        target: String,
    },
    /// Not JSON.
    #[error("the answer to {target} (HTTP {status}) is not JSON ({reason}); {shown}")]
    NotJson {
        /// Method and path.
        target: String,
        /// HTTP status.
        status: u16,
        /// The parser's reason (position only).
        reason: String,
        /// Its first bytes, escaped, or why they are not shown.
        shown: String,
    },
    /// No complete answer in time.
    #[error("no complete answer to {target} within {} s ({limit})", .after.as_secs_f64().ceil())]
    TimedOut {
        /// Method and path.
        target: String,
        /// How long pxfa waited.
        after: Duration,
        /// Which limit that was.
        limit: Limit,
    },
    /// The server asked to come back later than pxfa may wait, or kept refusing.
    #[error("the Kubernetes API answered {status} to {target} {wait}")]
    Busy {
        /// Method and path.
        target: String,
        /// HTTP status.
        status: u16,
        /// What it asked, and why pxfa did not wait.
        wait: String,
    },
    /// The command's deadline passed before the request was sent.
    #[error("the command's deadline passed before {target} was sent")]
    DeadlinePassed {
        /// Method and path.
        target: String,
    },
}

/// The request an answer belongs to.
#[derive(Debug)]
pub(crate) struct Target {
    method: Method,
    path: String,
    kind: AnswerKind,
    secret: bool,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

impl Target {
    fn of<B>(req: &Request<B>) -> Target {
        let uri = req.uri();
        let watch = uri.query().is_some_and(|q| {
            q.split('&')
                .any(|p| matches!(p, "watch=true" | "watch=1" | "watch=True"))
        });
        let segments: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
        let resource: &[&str] = match segments.as_slice() {
            ["api", _, rest @ ..] | ["apis", _, _, rest @ ..] => rest,
            _ => &[],
        };
        let resource = match resource {
            ["namespaces", _, rest @ ..] if !rest.is_empty() => rest,
            other => other,
        };
        let kind = if watch {
            AnswerKind::WatchEvent
        } else if resource.is_empty() {
            AnswerKind::Discovery
        } else if req.method() == Method::GET && resource.len() == 1 {
            AnswerKind::ListPage
        } else {
            AnswerKind::Object
        };
        Target {
            method: req.method().clone(),
            path: uri.path().to_string(),
            kind,
            secret: resource.first() == Some(&"secrets"),
        }
    }

    /// The first bytes of an answer that did not parse, escaped, or why not shown.
    fn shown(&self, bytes: &[u8]) -> String {
        if self.secret {
            return "its content is not shown (a Secret's answer)".into();
        }
        let head = &bytes[..bytes.len().min(SHOWN_BYTES)];
        let more = if bytes.len() > SHOWN_BYTES {
            format!(" ... ({} bytes in all)", bytes.len())
        } else {
            String::new()
        };
        format!("it began \"{}\"{more}", head.escape_ascii())
    }
}

/// The service every pxfa Kubernetes client sends through: `inner` is kube's own
/// client (authentication, TLS, base URL), built without kube's retry layer, which
/// waits whatever `Retry-After` says.
#[derive(Clone)]
pub(crate) struct Bounded {
    pub(crate) inner: kube::Client,
    pub(crate) bounds: KubeBounds,
}

type Exchange = Pin<Box<dyn Future<Output = Result<Response<Answer>, BoxError>> + Send>>;

impl tower_service::Service<Request<Body>> for Bounded {
    type Response = Response<Answer>;
    type Error = BoxError;
    type Future = Exchange;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        Box::pin(exchange(self.inner.clone(), self.bounds, req))
    }
}

/// One request with its retries, within the bounds.
async fn exchange(
    inner: kube::Client,
    bounds: KubeBounds,
    mut req: Request<Body>,
) -> Result<Response<Answer>, BoxError> {
    let target = Arc::new(Target::of(&req));
    let mut retries = 0;
    loop {
        let again = (retries < MAX_RETRIES).then(|| copy(&req)).flatten();
        let (budget, limit) = bounds.budget(&target)?;
        let answer = tokio::time::timeout(budget, attempt(&inner, req, &target))
            .await
            .map_err(|_| AnswerError::TimedOut {
                target: target.to_string(),
                after: budget,
                limit,
            })??;
        let (status, asked) = match answer {
            Attempt::Done(res) => return Ok(res),
            Attempt::Busy { status, asked } => (status, asked),
        };
        let busy = |wait: String| AnswerError::Busy {
            target: target.to_string(),
            status: status.as_u16(),
            wait,
        };
        let Some(next) = again else {
            return Err(busy(format!("{} times; pxfa gave up", retries + 1)).into());
        };
        let wait = asked.unwrap_or_else(|| backoff(retries));
        if let Err(limit) = bounds.allows_wait(wait) {
            let asked = asked.map_or_else(
                || "a retry".to_string(),
                |w| format!("to retry after {} s", w.as_secs()),
            );
            return Err(busy(format!(
                "and asked {asked}, later than {limit} allows; pxfa did not wait"
            ))
            .into());
        }
        tracing::debug!(request = %target, status = status.as_u16(), wait_ms = wait.as_millis(), "retrying");
        tokio::time::sleep(wait).await;
        req = next;
        retries += 1;
    }
}

/// 0.5 s, 1 s, 2 s, ... between retries the server gave no time for.
fn backoff(retries: u32) -> Duration {
    Duration::from_millis(500u64 << retries.min(6))
}

/// The same request again, when its body can be copied.
fn copy(req: &Request<Body>) -> Option<Request<Body>> {
    let mut next = Request::new(req.body().try_clone()?);
    *next.method_mut() = req.method().clone();
    *next.uri_mut() = req.uri().clone();
    *next.version_mut() = req.version();
    *next.headers_mut() = req.headers().clone();
    Some(next)
}

enum Attempt {
    Done(Response<Answer>),
    Busy {
        status: StatusCode,
        asked: Option<Duration>,
    },
}

/// One exchange: the answer's head, then its body within its cap.
async fn attempt(
    inner: &kube::Client,
    req: Request<Body>,
    target: &Arc<Target>,
) -> Result<Attempt, BoxError> {
    let retryable = |s: StatusCode| {
        s == StatusCode::TOO_MANY_REQUESTS
            || (target.method == Method::GET
                && matches!(
                    s,
                    StatusCode::SERVICE_UNAVAILABLE | StatusCode::GATEWAY_TIMEOUT
                ))
    };
    let res = inner.send(req).await?;
    let status = res.status();
    if retryable(status) {
        let asked = res
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        return Ok(Attempt::Busy { status, asked });
    }
    let (parts, body) = res.into_parts();
    if target.kind == AnswerKind::WatchEvent && status.is_success() {
        let body = Answer::Lines {
            inner: body,
            line: 0,
            target: target.clone(),
        };
        return Ok(Attempt::Done(Response::from_parts(parts, body)));
    }
    let failed = status.is_client_error() || status.is_server_error();
    let kind = if failed {
        AnswerKind::Failure
    } else {
        target.kind
    };
    let bytes = read_capped(body, kind, target).await?;
    let bytes = checked_json(bytes, status, target)?;
    Ok(Attempt::Done(Response::from_parts(
        parts,
        Answer::Whole(Some(bytes)),
    )))
}

/// The body, up to `kind`'s cap.
async fn read_capped(mut body: Body, kind: AnswerKind, target: &Target) -> Result<Bytes, BoxError> {
    let max = usize::try_from(kind.max_bytes()).unwrap_or(usize::MAX);
    let mut read = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            if read.len() + data.len() > max {
                return Err(AnswerError::TooLarge {
                    target: target.to_string(),
                    kind,
                }
                .into());
            }
            read.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(read))
}

/// The answer if it is JSON. An error answer that is not a Kubernetes `Status`
/// becomes one whose message is this module's (kube would make its whole text the
/// message); a successful answer that is not JSON is an error.
fn checked_json(bytes: Bytes, status: StatusCode, target: &Target) -> Result<Bytes, AnswerError> {
    let failed = status.is_client_error() || status.is_server_error();
    let parsed = if failed {
        serde_json::from_slice::<kube::core::Status>(&bytes).map(drop)
    } else if bytes.is_empty() {
        Ok(())
    } else {
        serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).map(drop)
    };
    let Err(e) = parsed else {
        return Ok(bytes);
    };
    let error = AnswerError::NotJson {
        target: target.to_string(),
        status: status.as_u16(),
        reason: e.to_string(),
        shown: target.shown(&bytes),
    };
    if !failed {
        return Err(error);
    }
    let reason = status
        .canonical_reason()
        .unwrap_or("Failure")
        .replace(' ', "");
    let status_doc = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "status": "Failure",
        "message": error.to_string(), "reason": reason, "code": status.as_u16(),
    });
    Ok(Bytes::from(status_doc.to_string()))
}

/// An answer's body as kube reads it: whole (checked), or a watch's stream with each
/// event line capped.
pub(crate) enum Answer {
    Whole(Option<Bytes>),
    Lines {
        inner: Body,
        /// Bytes since the last newline.
        line: usize,
        target: Arc<Target>,
    },
}

impl HttpBody for Answer {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.get_mut() {
            Answer::Whole(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Answer::Lines {
                inner,
                line,
                target,
            } => {
                let frame = match Pin::new(inner).poll_frame(cx) {
                    Poll::Ready(Some(Ok(frame))) => frame,
                    Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e.into()))),
                    Poll::Ready(None) => return Poll::Ready(None),
                    Poll::Pending => return Poll::Pending,
                };
                if let Some(data) = frame.data_ref() {
                    *line = match data.iter().rposition(|&b| b == b'\n') {
                        Some(at) => data.len() - at - 1,
                        None => *line + data.len(),
                    };
                    let max =
                        usize::try_from(AnswerKind::WatchEvent.max_bytes()).unwrap_or(usize::MAX);
                    if *line > max {
                        return Poll::Ready(Some(Err(AnswerError::TooLarge {
                            target: target.to_string(),
                            kind: AnswerKind::WatchEvent,
                        }
                        .into())));
                    }
                }
                Poll::Ready(Some(Ok(frame)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Answer::Whole(bytes) => bytes.is_none(),
            Answer::Lines { inner, .. } => inner.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Answer::Whole(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Answer::Whole(None) => SizeHint::with_exact(0),
            Answer::Lines { inner, .. } => inner.size_hint(),
        }
    }
}

/// Every item `params` selects, read in pages of [`LIST_PAGE`] (`limit` and
/// `continue`), at most [`MAX_LIST_ITEMS`]. Use this instead of `Api::list`, which
/// asks for every item in one answer.
pub(crate) async fn list_all<K>(api: &Api<K>, params: &ListParams) -> kube::Result<ObjectList<K>>
where
    K: Clone + DeserializeOwned + fmt::Debug,
{
    pages(params, |p| async move { api.list(&p).await }).await
}

/// [`list_all`], reading only each item's metadata (`PartialObjectMetadataList`):
/// for kinds whose bodies the caller must not fetch, such as Secrets.
pub(crate) async fn list_all_metadata<K>(
    api: &Api<K>,
    params: &ListParams,
) -> kube::Result<ObjectList<PartialObjectMeta<K>>>
where
    K: kube::Resource + Clone + DeserializeOwned + fmt::Debug,
{
    pages(params, |p| async move { api.list_metadata(&p).await }).await
}

/// The paging of [`list_all`] over any list call.
async fn pages<T, F, Fut>(params: &ListParams, fetch: F) -> kube::Result<ObjectList<T>>
where
    T: Clone,
    F: Fn(ListParams) -> Fut,
    Fut: std::future::Future<Output = kube::Result<ObjectList<T>>>,
{
    let mut page = params.clone().limit(LIST_PAGE);
    page.continue_token = None;
    let mut list = fetch(page.clone()).await?;
    while let Some(token) = list.metadata.continue_.take().filter(|t| !t.is_empty()) {
        if list.items.len() > MAX_LIST_ITEMS {
            break;
        }
        page.continue_token = Some(token);
        let next = fetch(page.clone()).await?;
        list.items.extend(next.items);
        list.metadata = next.metadata;
    }
    if list.items.len() > MAX_LIST_ITEMS {
        // The kind the server named its list (`PersistentVolumeList`), escaped.
        return Err(kube::Error::Service(Box::new(AnswerError::TooManyItems {
            target: list.types.kind.escape_default().to_string(),
        })));
    }
    Ok(list)
}
