//! Versions, login, sessions and their expiry, token masking, shutdown.

use std::time::Duration;

use flasharray::FlashArray;
use flasharray_mock::{MockArray, MockClock};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::https::{TOKEN, V, logged_in, names, start, start_with};

#[tokio::test]
async fn versions_login_sessions_and_request_ids() {
    let s = start().await;
    assert!(s.sim.url().starts_with("https://127.0.0.1:"));
    let v = s
        .send(Method::GET, "/api/api_version", None, None)
        .await
        .unwrap();
    assert_eq!(v.status, 200);
    let list: Vec<&str> = v.body["version"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(list.first(), Some(&"1.17"));
    assert_eq!(list.last(), Some(&"2.39"));
    assert!(list.contains(&"2.26"));

    // Wrong token: 401 with an errors body, no session header.
    let bad = s
        .http
        .post(format!("{}{V}/login", s.sim.url()))
        .header("api-token", "not-the-token")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 401);
    assert!(bad.headers().get("x-auth-token").is_none());
    let body: Value = bad.json().await.unwrap();
    assert_eq!(body["errors"][0]["message"], "Invalid API token.");

    let ok = s
        .http
        .post(format!("{}/api/2.21/login", s.sim.url()))
        .header("api-token", TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    assert_eq!(ok.headers()["content-type"], "application/json");
    let session = ok.headers()["x-auth-token"].to_str().unwrap().to_string();
    let body: Value = ok.json().await.unwrap();
    assert_eq!(body, json!({"items": [{"username": "pureuser"}]}));

    // No session, unknown session: 401.
    let r = s
        .send(Method::GET, &format!("{V}/volumes"), None, None)
        .await
        .unwrap();
    assert_eq!(r.status, 401);
    let r = s
        .send(Method::GET, &format!("{V}/volumes"), Some("forged"), None)
        .await
        .unwrap();
    assert_eq!(r.status, 401);
    assert_eq!(r.body["errors"][0]["message"], "Invalid session token.");

    // Any 2.N prefix reaches the same handlers; X-Request-ID is echoed or made.
    let r = s
        .http
        .get(format!("{}/api/2.2/arrays", s.sim.url()))
        .header("x-auth-token", &session)
        .header("X-Request-ID", "req-42")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-request-id"], "req-42");
    let r = s.get(&session, "/arrays").await;
    let made = r.header("x-request-id").unwrap();
    assert_eq!(made.len(), 36, "{made}");
    assert_eq!(r.body["items"][0]["name"], "pxfa-sim");
    assert_eq!(r.body["items"][0]["version"], "6.7.4");

    // Logout ends the session.
    let r = s.call(&session, Method::POST, "/logout", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(s.get(&session, "/volumes").await.status, 401);
    s.sim.shutdown().await;
}

#[tokio::test]
async fn sessions_expire_by_ttl_on_the_array_clock_and_by_fault() {
    let clock = MockClock::manual(1_700_000_000_000);
    let array = MockArray::builder().clock(clock.clone()).build();
    let s = start_with(array, |c| {
        c.session_ttl = Some(Duration::from_secs(600));
        c.expire_sessions_every = Some(3);
    })
    .await;
    let t = s.login().await;
    assert_eq!(s.get(&t, "/arrays").await.status, 200); // request 1
    clock.advance(Duration::from_secs(601));
    let r = s.get(&t, "/arrays").await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body["errors"][0]["message"], "Session expired.");
    let t = s.login().await;
    assert_eq!(s.get(&t, "/arrays").await.status, 200); // request 2
    let r = s.get(&t, "/arrays").await; // request 3: the fault ends the session
    assert_eq!(r.status, 401);
    assert_eq!(
        s.get(&t, "/arrays").await.status,
        401,
        "the session stays ended"
    );

    // The REST client logs in again by itself.
    let rest = s.rest();
    for _ in 0..7 {
        rest.get_array().await.unwrap();
    }
}

#[tokio::test]
async fn tokens_are_masked_unless_exposed_and_shutdown_refuses_new_connections() {
    let (s, t) = logged_in().await;
    let r = s
        .call(
            &t,
            Method::POST,
            "/admins/api-tokens?names=pureuser&timeout=3600000",
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let token = r.body["items"][0]["api_token"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(token, "****");
    let r = s.get(&t, "/admins/api-tokens?names=pureuser").await;
    assert!(
        r.body["items"][0]["api_token"]["token"].is_null(),
        "hidden unless exposed: {}",
        r.raw
    );
    assert!(!r.raw.contains(&token));
    let r = s
        .get(
            &t,
            "/admins/api-tokens?names=pureuser&expose_api_token=true",
        )
        .await;
    assert_eq!(r.body["items"][0]["api_token"]["token"], token.as_str());
    let r = s.get(&t, "/hardware").await;
    assert_eq!(r.status, 200);
    assert!(names(&r.body).contains(&"CT0".to_string()));

    let url = s.sim.url();
    s.sim.shutdown().await;
    assert!(
        s.http
            .get(format!("{url}/api/api_version"))
            .send()
            .await
            .is_err()
    );
}
