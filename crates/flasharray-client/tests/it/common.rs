//! A wiremock array: version list, login, request-id echo, and a catch-all that
//! fails the test on any route nobody expected.

use std::path::PathBuf;
use std::time::Duration;

use flasharray::{RestArray, RestArrayBuilder, RetryConfig, Settling};
use secrecy::SecretString;
use serde_json::Value;
use wiremock::matchers::{any, header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub(crate) const API_TOKEN: &str = "0d8ea1c2-6f3b-4a7e-9c55-7e1f2a3b4c5d";
pub(crate) const SESSION: &str = "b7f1c9e2-4a60-4d8b-8f3e-1c2d3e4f5a6b";
pub(crate) const V: &str = "/api/2.26";

pub(crate) fn fixture(rel: &str) -> Value {
    let p: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "..",
        "fixtures",
        "flasharray",
        rel,
    ]
    .iter()
    .collect();
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Answers like an array: the template plus the request's `X-Request-ID` echoed.
pub(crate) struct Echo(pub(crate) ResponseTemplate);

impl Respond for Echo {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let mut t = self.0.clone();
        if let Some(id) = req
            .headers
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
        {
            t = t.insert_header("x-request-id", id);
        }
        t
    }
}

pub(crate) fn ok(body: Value) -> Echo {
    Echo(ResponseTemplate::new(200).set_body_json(body))
}

pub(crate) fn status(code: u16, body: Value) -> Echo {
    Echo(ResponseTemplate::new(code).set_body_json(body))
}

/// Fast retries so tests stay quick.
pub(crate) fn fast_retry() -> RetryConfig {
    RetryConfig {
        max_retries: 4,
        max_elapsed: Duration::from_secs(10),
        min_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
    }
}

pub(crate) struct Array {
    pub server: MockServer,
}

impl Array {
    /// A server with the catch-all only.
    pub(crate) async fn bare() -> Self {
        let server = MockServer::start().await;
        Mock::given(any())
            .respond_with(|req: &Request| {
                ResponseTemplate::new(418).set_body_json(serde_json::json!({
                    "errors": [{"context": null, "message": format!("unexpected request {} {}", req.method, req.url.path())}]
                }))
            })
            .with_priority(u8::MAX)
            .named("catch-all: unexpected route")
            .expect(0)
            .mount(&server)
            .await;
        Array { server }
    }

    /// A server offering the fixture's version list and accepting [`API_TOKEN`].
    pub(crate) async fn start() -> Self {
        let a = Self::bare().await;
        a.versions(fixture("api_version.json")).await;
        a.login(SESSION).await;
        a
    }

    pub(crate) async fn versions(&self, body: Value) {
        Mock::given(method("GET"))
            .and(path("/api/api_version"))
            .respond_with(ok(body))
            .named("api_version")
            .mount(&self.server)
            .await;
    }

    pub(crate) async fn login(&self, session: &str) {
        Mock::given(method("POST"))
            .and(path(format!("{V}/login")))
            .and(header("api-token", API_TOKEN))
            .respond_with(Echo(
                ResponseTemplate::new(200)
                    .insert_header("x-auth-token", session)
                    .set_body_json(fixture("login.json")),
            ))
            .named("login")
            .mount(&self.server)
            .await;
    }

    pub(crate) fn builder(&self) -> RestArrayBuilder {
        RestArray::builder(self.server.uri())
            .allow_http(true)
            .api_token(SecretString::from(API_TOKEN))
            .retry(fast_retry())
            .request_timeout(Duration::from_secs(5))
    }

    pub(crate) fn client(&self) -> RestArray {
        self.builder().build().unwrap()
    }

    /// The client as pxfa writes through it: lost answers settled by [`Settling`].
    pub(crate) fn settling(&self) -> Settling<RestArray> {
        Settling::new(self.client())
    }

    /// Requests received, except version discovery and login.
    pub(crate) async fn api_requests(&self) -> Vec<Request> {
        self.server
            .received_requests()
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.url.path() != "/api/api_version" && !r.url.path().ends_with("/login"))
            .collect()
    }

    pub(crate) async fn count(&self, m: &str, p: &str) -> usize {
        self.server
            .received_requests()
            .await
            .unwrap()
            .iter()
            .filter(|r| r.method.as_str() == m && r.url.path() == p)
            .count()
    }
}

/// Mounts `GET {V}/{rel}` answering `body`.
pub(crate) async fn get(a: &Array, rel: &str, body: Value) {
    Mock::given(method("GET"))
        .and(path(format!("{V}/{rel}")))
        .and(header("x-auth-token", SESSION))
        .respond_with(ok(body))
        .mount(&a.server)
        .await;
}

/// Answers the first `n` `GET {V}/{rel}` with `answer`, ahead of other mocks.
pub(crate) async fn fail_first(a: &Array, rel: &str, n: u64, answer: Echo) {
    Mock::given(method("GET"))
        .and(path(format!("{V}/{rel}")))
        .respond_with(answer)
        .up_to_n_times(n)
        .with_priority(1)
        .mount(&a.server)
        .await;
}

/// The array's answer to a call that failed on its side: 500, "Internal error".
pub(crate) fn internal_error() -> Echo {
    status(
        500,
        serde_json::json!({"errors": [{"context": null, "message": "Internal error"}]}),
    )
}

/// A client of `url` over plain HTTP that never retries (for transport failures).
pub(crate) fn plain_client(url: impl Into<String>) -> RestArray {
    RestArray::builder(url.into())
        .allow_http(true)
        .api_token(SecretString::from(API_TOKEN))
        .retry(RetryConfig::none())
        .build()
        .unwrap()
}

/// A 429 whose `header` says when to come back.
pub(crate) fn rate_limited(header: &str, value: &str) -> Echo {
    Echo(
        ResponseTemplate::new(429)
            .insert_header(header, value)
            .set_body_json(fixture("errors/rate_limited.json")),
    )
}
