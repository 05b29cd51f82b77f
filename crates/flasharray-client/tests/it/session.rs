//! Version choice, login, re-login after 401, logout.

use std::sync::Arc;
use std::time::Duration;

use flasharray::{Error, ErrorKind, FlashArray};
use serde_json::json;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::common::*;

#[tokio::test]
async fn picks_highest_common_version_despite_gaps_1x_and_dev() {
    let a = Array::start().await;
    get(&a, "arrays", fixture("arrays/list.json")).await;
    let c = a.client();
    // Building sends nothing.
    assert!(a.server.received_requests().await.unwrap().is_empty());
    let info = c.get_array().await.unwrap();
    assert_eq!(info.name, "fa-x70-1");
    assert_eq!(info.version.as_deref(), Some("6.7.4"));
    assert_eq!(c.api_version().await.unwrap().to_string(), "2.26");
    let reqs = a.server.received_requests().await.unwrap();
    let paths: Vec<_> = reqs
        .iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect();
    assert_eq!(
        paths,
        [
            "GET /api/api_version",
            "POST /api/2.26/login",
            "GET /api/2.26/arrays"
        ]
    );
    // The version list needs no credentials; login carries the API token only.
    assert!(reqs[0].headers.get("api-token").is_none());
    assert!(reqs[0].headers.get("x-auth-token").is_none());
    assert!(reqs[1].headers.get("x-auth-token").is_none());
    assert_eq!(reqs[1].headers.get("content-length").unwrap(), "0");
    assert_eq!(reqs[2].headers.get("x-auth-token").unwrap(), SESSION);
    assert!(reqs[2].headers.get("api-token").is_none());
}

#[tokio::test]
async fn pinned_version_is_used() {
    let a = Array::bare().await;
    a.versions(fixture("api_version.json")).await;
    Mock::given(method("POST"))
        .and(path("/api/2.21/login"))
        .respond_with(Echo(
            ResponseTemplate::new(200).insert_header("x-auth-token", SESSION),
        ))
        .expect(1)
        .mount(&a.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/2.21/arrays/space"))
        .respond_with(ok(fixture("arrays/space.json")))
        .expect(1)
        .mount(&a.server)
        .await;
    let c = a.builder().api_version("2.21").build().unwrap();
    let space = c.get_array_space().await.unwrap();
    assert_eq!(space.capacity, 54975581388800);
}

#[tokio::test]
async fn pinned_version_missing_on_array_fails_before_login() {
    let a = Array::bare().await;
    a.versions(fixture("api_version.json")).await;
    // 2.12 is a gap in the fixture's list.
    let c = a.builder().api_version("2.12").build().unwrap();
    let err = c.get_array().await.unwrap_err();
    assert!(matches!(err, Error::Version(_)), "{err:?}");
    assert!(err.to_string().contains("2.12"), "{err}");
    assert_eq!(a.server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn no_common_version() {
    let a = Array::bare().await;
    a.versions(json!({"version": ["1.17", "1.19", "2.0", "2.1"]}))
        .await;
    let err = a.client().get_array().await.unwrap_err();
    assert!(matches!(err, Error::Version(_)), "{err:?}");
}

#[tokio::test]
async fn version_list_without_key_is_a_decode_error() {
    let a = Array::bare().await;
    a.versions(json!({"versions": ["2.26"]})).await;
    let err = a.client().get_array().await.unwrap_err();
    match err {
        Error::Decode {
            path, operation, ..
        } => {
            assert_eq!(operation, "GET /api/api_version");
            assert_eq!(path, ".");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn concurrent_first_calls_share_one_login() {
    let a = Array::bare().await;
    Mock::given(method("GET"))
        .and(path("/api/api_version"))
        .respond_with(ok(fixture("api_version.json")))
        .expect(1)
        .mount(&a.server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/login")))
        .respond_with(Echo(
            ResponseTemplate::new(200)
                .insert_header("x-auth-token", SESSION)
                .set_delay(std::time::Duration::from_millis(100)),
        ))
        .expect(1)
        .mount(&a.server)
        .await;
    get(&a, "arrays", fixture("arrays/list.json")).await;
    let c = Arc::new(a.client());
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let c = c.clone();
            tokio::spawn(async move { c.get_array().await })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    assert_eq!(a.count("GET", &format!("{V}/arrays")).await, 8);
}

/// The array forgets session 1; the client logs in once more and repeats the call.
#[tokio::test]
async fn expired_session_relogs_in_once_and_retries_once() {
    let a = Array::bare().await;
    a.versions(fixture("api_version.json")).await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/login")))
        .respond_with(Echo(
            ResponseTemplate::new(200).insert_header("x-auth-token", "session-1"),
        ))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&a.server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/login")))
        .respond_with(Echo(
            ResponseTemplate::new(200).insert_header("x-auth-token", "session-2"),
        ))
        .mount(&a.server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{V}/arrays")))
        .and(header("x-auth-token", "session-1"))
        .respond_with(status(401, fixture("errors/session_invalid.json")))
        .mount(&a.server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{V}/arrays")))
        .and(header("x-auth-token", "session-2"))
        .respond_with(ok(fixture("arrays/list.json")))
        .mount(&a.server)
        .await;
    let c = a.client();
    c.get_array().await.unwrap();
    assert_eq!(a.count("POST", &format!("{V}/login")).await, 2);
    assert_eq!(a.count("GET", "/api/api_version").await, 1);
    // The renewed session is kept.
    c.get_array().await.unwrap();
    assert_eq!(a.count("POST", &format!("{V}/login")).await, 2);
}

/// Every session dies on first use: three logins, then the dead-streak error,
/// instead of logging in for ever.
#[tokio::test]
async fn every_session_dies_immediately() {
    let a = Array::start().await;
    Mock::given(method("GET"))
        .and(path(format!("{V}/arrays")))
        .respond_with(status(401, fixture("errors/session_invalid.json")))
        .mount(&a.server)
        .await;
    let started = std::time::Instant::now();
    let c = a.client();
    let err = c.get_array().await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(err.kind(), ErrorKind::Unauthorized);
    assert!(err.to_string().contains("ends every session"), "{err}");
    assert_eq!(a.count("POST", &format!("{V}/login")).await, 3);
    assert_eq!(a.count("GET", &format!("{V}/arrays")).await, 3);
    // The next call fails at once, without another login.
    let again = c.get_array().await.unwrap_err();
    assert!(again.to_string().contains("ends every session"), "{again}");
    assert_eq!(a.count("POST", &format!("{V}/login")).await, 3);
}

/// 50 calls refused on the same session share exactly one new login, and the old
/// session is never logged out.
#[tokio::test]
async fn fifty_refused_calls_share_one_relogin_and_never_log_out() {
    let a = Array::bare().await;
    a.versions(fixture("api_version.json")).await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/login")))
        .respond_with(Echo(
            ResponseTemplate::new(200).insert_header("x-auth-token", "session-1"),
        ))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&a.server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/login")))
        .respond_with(Echo(
            ResponseTemplate::new(200)
                .insert_header("x-auth-token", "session-2")
                .set_delay(Duration::from_millis(50)),
        ))
        .mount(&a.server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{V}/arrays")))
        .and(header("x-auth-token", "session-1"))
        .respond_with(status(401, fixture("errors/session_invalid.json")))
        .mount(&a.server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{V}/arrays")))
        .and(header("x-auth-token", "session-2"))
        .respond_with(ok(fixture("arrays/list.json")))
        .mount(&a.server)
        .await;
    let c = Arc::new(a.client());
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let c = c.clone();
            tokio::spawn(async move { c.get_array().await })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    // One shared login to session 1, one shared re-login to session 2.
    assert_eq!(a.count("POST", &format!("{V}/login")).await, 2);
    assert_eq!(a.count("GET", &format!("{V}/arrays")).await, 100);
    assert_eq!(a.count("POST", &format!("{V}/logout")).await, 0);
}

/// A refused API token fails every waiting call at once, after one login.
#[tokio::test]
async fn refused_token_fails_fast() {
    let a = Array::bare().await;
    a.versions(fixture("api_version.json")).await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/login")))
        .respond_with(Echo(
            ResponseTemplate::new(401)
                .set_body_json(
                    json!({"errors": [{"context": null, "message": "Invalid API token."}]}),
                )
                .set_delay(Duration::from_millis(100)),
        ))
        .mount(&a.server)
        .await;
    let c = Arc::new(a.client());
    let started = std::time::Instant::now();
    let tasks: Vec<_> = (0..9)
        .map(|_| {
            let c = c.clone();
            tokio::spawn(async move { c.get_array().await })
        })
        .collect();
    for t in tasks {
        let err = t.await.unwrap().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unauthorized, "{err}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(a.count("POST", &format!("{V}/login")).await, 1);
}

#[tokio::test]
async fn bad_api_token_is_unauthorized() {
    let a = Array::bare().await;
    a.versions(fixture("api_version.json")).await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/login")))
        .respond_with(status(
            401,
            json!({"errors": [{"context": null, "message": "Invalid API token."}]}),
        ))
        .expect(1)
        .mount(&a.server)
        .await;
    let err = a.client().get_array().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unauthorized);
    assert_eq!(err.as_api().unwrap().operation, "POST /api/2.26/login");
}

#[tokio::test]
async fn login_without_session_header_is_reported() {
    let a = Array::bare().await;
    a.versions(fixture("api_version.json")).await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/login")))
        .respond_with(ok(fixture("login.json")))
        .mount(&a.server)
        .await;
    let err = a.client().get_array().await.unwrap_err();
    assert!(
        matches!(&err, Error::Decode { path, .. } if path.contains("x-auth-token")),
        "{err:?}"
    );
}

#[tokio::test]
async fn close_logs_out_and_next_call_logs_in_again() {
    let a = Array::start().await;
    get(&a, "arrays", fixture("arrays/list.json")).await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/logout")))
        .and(header("x-auth-token", SESSION))
        .respond_with(Echo(ResponseTemplate::new(200)))
        .expect(1)
        .mount(&a.server)
        .await;
    let c = a.client();
    // Closing a client that never logged in sends nothing.
    c.close().await.unwrap();
    c.get_array().await.unwrap();
    c.close().await.unwrap();
    c.get_array().await.unwrap();
    assert_eq!(a.count("POST", &format!("{V}/login")).await, 2);
}
