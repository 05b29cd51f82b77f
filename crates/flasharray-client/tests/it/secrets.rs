//! Neither the API token nor a session token shows up in Debug output, errors or
//! logs, even at TRACE level.

use std::io;
use std::sync::{Arc, Mutex};

use flasharray::{FlashArray, ListParams};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::common::*;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The subscriber is global (no other test installs one): a thread-local one can miss
/// events whose callsite interest other test threads cached first. Logs of tests
/// running alongside land in the same buffer, which only widens the check.
#[tokio::test]
async fn tokens_never_leak() {
    let logs = Captured::default();
    let sink = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .finish();
    tracing::subscriber::set_global_default(subscriber)
        .expect("only this test installs a tracing subscriber");

    let a = Array::bare().await;
    a.versions(fixture("api_version.json")).await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/login")))
        .respond_with(Echo(
            ResponseTemplate::new(200).insert_header("x-auth-token", SESSION),
        ))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&a.server)
        .await;
    let second = "9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4";
    Mock::given(method("POST"))
        .and(path(format!("{V}/login")))
        .respond_with(Echo(
            ResponseTemplate::new(200).insert_header("x-auth-token", second),
        ))
        .mount(&a.server)
        .await;
    // The first session is rejected, the second sees 503 then 400.
    Mock::given(method("GET"))
        .and(path(format!("{V}/volumes")))
        .and(header("x-auth-token", SESSION))
        .respond_with(status(401, fixture("errors/session_invalid.json")))
        .mount(&a.server)
        .await;
    fail_first(&a, "volumes", 1, status(503, fixture("errors/busy.json"))).await;
    Mock::given(method("GET"))
        .and(path(format!("{V}/volumes")))
        .and(header("x-auth-token", second))
        .respond_with(status(400, fixture("errors/volume_not_found.json")))
        .mount(&a.server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/logout")))
        .respond_with(status(
            500,
            serde_json::json!({"errors": [{"context": null, "message": "logout failed"}]}),
        ))
        .mount(&a.server)
        .await;

    let c = a.builder().insecure(true).build().unwrap();
    let err = c
        .list_volumes(&ListParams::names(["nope"]))
        .await
        .unwrap_err();
    let close_err = c.close().await.unwrap_err();

    let mut seen = String::new();
    seen.push_str(&format!(
        "{c:?}\n{err}\n{err:?}\n{close_err}\n{close_err:?}\n"
    ));
    seen.push_str(&format!("{:?}\n", a.builder()));
    let logged = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    seen.push_str(&logged);

    // The test must have seen real material to be meaningful.
    assert!(logged.contains("retrying"), "{logged}");
    assert!(
        logged.contains("TLS certificate verification is disabled"),
        "{logged}"
    );
    assert!(logged.contains("logged in"), "{logged}");
    assert!(seen.contains("Volume does not exist."), "{seen}");
    assert!(seen.contains("REDACTED"), "{seen}");
    for secret in [API_TOKEN, SESSION, second] {
        assert!(!seen.contains(secret), "{secret} leaked:\n{seen}");
        // Nor a recognisable piece of it.
        assert!(
            !seen.contains(&secret[..13]),
            "part of {secret} leaked:\n{seen}"
        );
    }
}
