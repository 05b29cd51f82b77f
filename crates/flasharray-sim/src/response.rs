//! Answers in the shapes real arrays (and the gateway in front of them) send.
//!
//! Semantic errors are 400 with `{"errors":[{"context","message"}]}`; 401 for
//! sessions; 429 carries `Retry-After` plus the `X-RateLimit-*-minute` headers that
//! older SDKs `int()` unconditionally, with the gateway body `{"message": ...}`; 500
//! "Server is busy" and 503 are retried by clients. 409 and 422 are never used: the
//! SDK raises instead of returning an `ErrorResponse` for them.

use axum::body::Body;
use flasharray::{ApiError, Error};
use hyper::header::{CONTENT_TYPE, HeaderName, HeaderValue, RETRY_AFTER};
use hyper::{Response, StatusCode};
use serde::Serialize;
use serde_json::{Value, json};

/// Requests per minute advertised in the rate-limit headers. Real arrays publish a
/// per-minute budget; its size is not documented, so this is a plausible stand-in.
const RATE_LIMIT_PER_MINUTE: &str = "1000";

/// A complete answer, before the request id is attached.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    /// The body as bytes (errors, empty answers) ...
    pub(crate) body: Vec<u8>,
    /// ... or as JSON not yet serialized (lists and item answers), so that
    /// `fields` can complete the items in place and the body is serialized once.
    pub(crate) json: Option<Box<Value>>,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
}

/// Why a request did not produce its normal answer.
#[derive(Debug)]
pub(crate) enum Fail {
    /// Answer with this error.
    Reply(Reply),
    /// Close the connection without answering (a lost or dropped write).
    Drop,
}

impl Reply {
    /// A JSON answer.
    pub(crate) fn json(status: StatusCode, value: &impl Serialize) -> Reply {
        let body = serde_json::to_vec(value).unwrap_or_else(|e| {
            // Serializing our own models cannot fail; if it ever does, say so in
            // the answer instead of panicking inside the server.
            format!(r#"{{"errors":[{{"context":null,"message":"serialization failed: {e}"}}]}}"#)
                .into_bytes()
        });
        Reply {
            status,
            body,
            json: None,
            headers: Vec::new(),
        }
    }

    /// A JSON answer kept as a value until it is sent.
    pub(crate) fn json_value(status: StatusCode, value: Value) -> Reply {
        Reply {
            status,
            body: Vec::new(),
            json: Some(Box::new(value)),
            headers: Vec::new(),
        }
    }

    /// `200 {"items": [...]}`, the answer of POST, PATCH and PUT.
    pub(crate) fn items<T: Serialize>(items: &[T]) -> Reply {
        Reply::json_value(StatusCode::OK, json!({ "items": items }))
    }

    /// The body as JSON, whichever form it is in (tests).
    #[cfg(test)]
    pub(crate) fn body_json(&self) -> Value {
        match &self.json {
            Some(v) => (**v).clone(),
            None => serde_json::from_slice(&self.body).unwrap_or(Value::Null),
        }
    }

    /// `200` with an empty body, the answer of DELETE (and logout).
    pub(crate) fn empty() -> Reply {
        Reply {
            status: StatusCode::OK,
            body: Vec::new(),
            json: None,
            headers: Vec::new(),
        }
    }

    fn header(mut self, name: HeaderName, value: &str) -> Reply {
        if let Ok(v) = HeaderValue::from_str(value) {
            self.headers.push((name, v));
        }
        self
    }

    /// Adds a header by name (used for `x-auth-token`).
    pub(crate) fn with_header(self, name: &'static str, value: &str) -> Reply {
        self.header(HeaderName::from_static(name), value)
    }

    /// The final HTTP response, echoing the request id.
    pub(crate) fn into_response(self, request_id: &str) -> Response<Body> {
        let mut builder = Response::builder()
            .status(self.status)
            .header(CONTENT_TYPE, "application/json");
        if let Ok(v) = HeaderValue::from_str(request_id) {
            builder = builder.header("x-request-id", v);
        }
        for (k, v) in self.headers {
            builder = builder.header(k, v);
        }
        let body = match self.json {
            Some(value) => serde_json::to_vec(&value).unwrap_or_default(),
            None => self.body,
        };
        builder
            .body(Body::from(body))
            .unwrap_or_else(|_| Response::new(Body::empty()))
    }
}

fn errors_body(errors: &[(Option<&str>, &str)]) -> Value {
    let list: Vec<Value> = errors
        .iter()
        .map(|(c, m)| json!({ "context": c, "message": m }))
        .collect();
    json!({ "errors": list })
}

/// `400` with one `{context, message}`.
pub(crate) fn bad_request(context: Option<&str>, message: impl AsRef<str>) -> Fail {
    Fail::Reply(Reply::json(
        StatusCode::BAD_REQUEST,
        &errors_body(&[(context, message.as_ref())]),
    ))
}

/// `408` when the request body did not arrive in time; the connection closes.
pub(crate) fn request_timeout() -> Fail {
    Fail::Reply(
        Reply::json(
            StatusCode::REQUEST_TIMEOUT,
            &errors_body(&[(None, "The request body did not arrive in time.")]),
        )
        .with_header("connection", "close"),
    )
}

/// `404` for paths the REST API does not have.
pub(crate) fn not_found(path: &str) -> Fail {
    Fail::Reply(Reply::json(
        StatusCode::NOT_FOUND,
        &errors_body(&[(Some(path), "Not found.")]),
    ))
}

/// `401`, after which clients log in again.
pub(crate) fn unauthorized(message: &str) -> Fail {
    Fail::Reply(Reply::json(
        StatusCode::UNAUTHORIZED,
        &errors_body(&[(None, message)]),
    ))
}

/// `429` as the array's gateway sends it.
pub(crate) fn rate_limited(retry_after_secs: u64, message: &str) -> Fail {
    Fail::Reply(
        Reply::json(
            StatusCode::TOO_MANY_REQUESTS,
            &json!({ "message": message }),
        )
        .header(RETRY_AFTER, &retry_after_secs.to_string())
        .header(
            HeaderName::from_static("x-ratelimit-limit-minute"),
            RATE_LIMIT_PER_MINUTE,
        )
        .header(HeaderName::from_static("x-ratelimit-remaining-minute"), "0"),
    )
}

/// `500 Server is busy`, which clients retry.
pub(crate) fn busy() -> Fail {
    Fail::Reply(Reply::json(
        StatusCode::INTERNAL_SERVER_ERROR,
        &errors_body(&[(None, "Server is busy")]),
    ))
}

/// `503`.
pub(crate) fn unavailable(message: &str) -> Fail {
    Fail::Reply(Reply::json(
        StatusCode::SERVICE_UNAVAILABLE,
        &errors_body(&[(None, message)]),
    ))
}

/// The array's own error, status and messages passed straight through.
pub(crate) fn api_error(e: &ApiError) -> Fail {
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if status == StatusCode::TOO_MANY_REQUESTS {
        // Round up: a client told "0" would hammer the array.
        let secs = e
            .retry_after
            .map(|d| d.as_secs() + u64::from(d.subsec_nanos() > 0))
            .unwrap_or(1);
        return rate_limited(secs, e.message());
    }
    let errors: Vec<(Option<&str>, &str)> = e
        .errors
        .iter()
        .map(|d| (d.context.as_deref(), d.message.as_str()))
        .collect();
    Fail::Reply(Reply::json(status, &errors_body(&errors)))
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        match &e {
            Error::Api(api) => api_error(api),
            // The array lost the connection (or the answer): so do we.
            Error::Transport(_) => Fail::Drop,
            Error::RetriesExhausted { last, .. } => match last.as_api() {
                Some(api) => api_error(api),
                None => Fail::Drop,
            },
            Error::Name(n) => bad_request(Some(&n.name), e.to_string()),
            _ => bad_request(None, e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn reply(f: Fail) -> Reply {
        match f {
            Fail::Reply(r) => r,
            Fail::Drop => panic!("dropped"),
        }
    }

    #[test]
    fn semantic_errors_pass_through() {
        let r = reply(Error::api(400, Some("nope"), "Volume does not exist.").into());
        assert_eq!(r.status, 400);
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(
            v,
            json!({"errors":[{"context":"nope","message":"Volume does not exist."}]})
        );
    }

    #[test]
    fn rate_limit_has_gateway_body_and_headers() {
        let mut e = ApiError::new(429, None, "API rate limit exceeded");
        e.retry_after = Some(Duration::from_millis(1500));
        let r = reply(api_error(&e));
        assert_eq!(r.status, 429);
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(v, json!({"message": "API rate limit exceeded"}));
        let h = |n: &str| {
            r.headers
                .iter()
                .find(|(k, _)| k.as_str() == n)
                .map(|(_, v)| v.to_str().unwrap().to_string())
        };
        assert_eq!(h("retry-after").as_deref(), Some("2"));
        assert_eq!(h("x-ratelimit-limit-minute").as_deref(), Some("1000"));
        assert_eq!(h("x-ratelimit-remaining-minute").as_deref(), Some("0"));
    }

    #[test]
    fn transport_errors_drop_the_connection() {
        let e = Error::from(flasharray::TransportError {
            operation: "POST /volumes".into(),
            request_id: None,
            message: "connection dropped".into(),
            maybe_applied: true,
            kind: flasharray::TransportErrorKind::Io,
        });
        assert!(matches!(Fail::from(e), Fail::Drop));
    }
}
