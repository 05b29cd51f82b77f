//! The simulator harness: start one over HTTPS, send raw requests, decode answers.

use flasharray::rest::RestArray;
use flasharray_mock::MockArray;
use flasharray_sim::{RunningSim, SimConfig, Simulator};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// The API token the simulator accepts at login.
pub(crate) const TOKEN: &str = "5e2a1c3d-0f4b-4e7a-9c1d-2b3a4c5d6e7f";
/// The REST prefix the tests speak (the simulator's top version).
pub(crate) const V: &str = "/api/2.39";

/// A running simulator, the mock behind it, and a client trusting its certificate.
pub(crate) struct Sim {
    pub(crate) array: MockArray,
    pub(crate) sim: RunningSim,
    pub(crate) http: reqwest::Client,
}

/// Starts a simulator on `array`, after `edit` adjusted the default configuration.
pub(crate) async fn start_with(array: MockArray, edit: impl FnOnce(&mut SimConfig)) -> Sim {
    let mut cfg = SimConfig::new(TOKEN.into());
    edit(&mut cfg);
    let sim = Simulator::start(array.clone(), cfg).await.unwrap();
    let cert = reqwest::Certificate::from_pem(sim.cert_pem().as_bytes()).unwrap();
    flasharray::rest::install_crypto_provider();
    // Trusting exactly the simulator's certificate also checks its SAN (127.0.0.1).
    let http = reqwest::Client::builder()
        .tls_certs_only([cert])
        .build()
        .unwrap();
    Sim { array, sim, http }
}

/// Starts a simulator on a fresh default mock.
pub(crate) async fn start() -> Sim {
    start_with(MockArray::new(), |_| {}).await
}

/// A simulator with default settings and a session on it.
pub(crate) async fn logged_in() -> (Sim, String) {
    let s = start().await;
    let t = s.login().await;
    (s, t)
}

/// One answer, decoded.
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) body: Value,
    pub(crate) raw: String,
}

impl Answer {
    /// A header's value, if present and text.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

impl Sim {
    /// Sends one request to `path` (from the root), with a session if given.
    pub(crate) async fn send(
        &self,
        method: Method,
        path: &str,
        session: Option<&str>,
        body: Option<Value>,
    ) -> Result<Answer, reqwest::Error> {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.sim.url()));
        if let Some(s) = session {
            req = req.header("x-auth-token", s);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let raw = resp.text().await?;
        let body = if raw.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&raw).unwrap_or(Value::Null)
        };
        Ok(Answer {
            status,
            headers,
            body,
            raw,
        })
    }

    /// Logs in with [`TOKEN`] and returns the session token.
    pub(crate) async fn login(&self) -> String {
        let resp = self
            .http
            .post(format!("{}{V}/login", self.sim.url()))
            .header("api-token", TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        resp.headers()["x-auth-token"].to_str().unwrap().to_string()
    }

    /// Sends one request under [`V`] with session `s`; panics on a transport error.
    pub(crate) async fn call(
        &self,
        s: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Answer {
        self.send(method, &format!("{V}{path}"), Some(s), body)
            .await
            .unwrap()
    }

    /// `GET` under [`V`] with session `s`.
    pub(crate) async fn get(&self, s: &str, path: &str) -> Answer {
        self.call(s, Method::GET, path, None).await
    }

    /// `POST` of `body` under [`V`] with session `s`.
    pub(crate) async fn post(&self, s: &str, path: &str, body: Value) -> Answer {
        self.call(s, Method::POST, path, Some(body)).await
    }

    /// [`Sim::post`] that must succeed (200).
    pub(crate) async fn post_ok(&self, s: &str, path: &str, body: Value) -> Answer {
        let r = self.post(s, path, body).await;
        assert_eq!(r.status, 200, "POST {path}: {}", r.raw);
        r
    }

    /// `PATCH` of `body` under [`V`] with session `s`.
    pub(crate) async fn patch(&self, s: &str, path: &str, body: Value) -> Answer {
        self.call(s, Method::PATCH, path, Some(body)).await
    }

    /// `DELETE` under [`V`] with session `s`.
    pub(crate) async fn delete(&self, s: &str, path: &str) -> Answer {
        self.call(s, Method::DELETE, path, None).await
    }

    /// The typed REST client, pointed at this simulator.
    pub(crate) fn rest(&self) -> RestArray {
        RestArray::builder(self.sim.url())
            .api_token(TOKEN.into())
            .ca_pem(self.sim.cert_pem().as_bytes().to_vec())
            .build()
            .unwrap()
    }
}

/// The `name` of every item of a list answer, in order.
pub(crate) fn names(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect()
}

/// The status and body of an array error answer with one error.
pub(crate) fn error(status: u16, context: &str, message: &str) -> (StatusCode, Value) {
    (
        StatusCode::from_u16(status).unwrap(),
        json!({"errors": [{"context": context, "message": message}]}),
    )
}
