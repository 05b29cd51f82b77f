//! Array connections between two simulators, local admin changes (`PATCH /admins`)
//! and the REST 1.x token subset, over real HTTPS.

use flasharray_mock::MockArray;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::https::{Sim, names, start, start_with};

fn address(s: &Sim) -> String {
    s.sim.url().trim_start_matches("https://").to_string()
}

async fn key(s: &Sim, session: &str) -> String {
    let r = s
        .get(session, "/array-connections/connection-key?encrypted=false")
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    r.body["items"][0]["connection_key"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn two_simulators_connect_and_disconnect() {
    let a = start_with(MockArray::builder().name("array-a").build(), |_| {}).await;
    let b = start_with(MockArray::builder().name("array-b").build(), |_| {}).await;
    let (sa, sb) = (a.login().await, b.login().await);
    let b_key = key(&b, &sb).await;
    assert_ne!(b_key, key(&a, &sa).await, "each array has its own key");

    // A wrong key is refused by the remote and nothing is recorded anywhere.
    let body = |k: &str| {
        json!({
            "type": "async-replication", "management_address": address(&b),
            "replication_transport": "async-replication", "connection_key": k,
        })
    };
    let r = a
        .call(&sa, Method::POST, "/array-connections", Some(body("nope")))
        .await;
    assert_eq!(r.status, 400, "{}", r.raw);
    assert_eq!(r.body["errors"][0]["message"], "Invalid connection key.");
    assert_eq!(
        names(&b.get(&sb, "/array-connections").await.body),
        Vec::<String>::new()
    );

    // The collection's body, as purefa_connect sends it.
    let r = a
        .call(&sa, Method::POST, "/array-connections", Some(body(&b_key)))
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let item = &r.body["items"][0];
    assert_eq!(item["name"], "array-b");
    assert_eq!(item["management_address"], Value::from(address(&b)));
    assert_eq!(item["status"], "connected");
    assert_eq!(item["type"], "async-replication");
    assert_eq!(item["replication_transport"], "ip");
    assert_eq!(item["context"]["name"], "array-a");

    // Both sides list it; the remote side has no management address.
    let on_b = b.get(&sb, "/array-connections").await;
    assert_eq!(names(&on_b.body), ["array-a"]);
    assert_eq!(on_b.body["items"][0]["management_address"], Value::Null);
    assert_eq!(on_b.body["items"][0]["status"], "connected");
    let again = a
        .call(&sa, Method::POST, "/array-connections", Some(body(&b_key)))
        .await;
    assert_eq!(again.status, 400);
    assert_eq!(
        again.body["errors"][0]["message"],
        "Array connection already exists."
    );

    // Type change; then only the side that formed it can disconnect.
    let p = a
        .call(
            &sa,
            Method::PATCH,
            "/array-connections?names=array-b",
            Some(json!({"type": "sync-replication"})),
        )
        .await;
    assert_eq!(p.body["items"][0]["type"], "sync-replication", "{}", p.raw);
    let refused = b
        .call(
            &sb,
            Method::DELETE,
            "/array-connections?names=array-a",
            None,
        )
        .await;
    assert_eq!(refused.status, 400);
    let d = a
        .call(
            &sa,
            Method::DELETE,
            "/array-connections?names=array-b",
            None,
        )
        .await;
    assert_eq!(d.status, 200, "{}", d.raw);
    assert!(names(&a.get(&sa, "/array-connections").await.body).is_empty());
    assert!(names(&b.get(&sb, "/array-connections").await.body).is_empty());
    let gone = a.get(&sa, "/array-connections?names=array-b").await;
    assert_eq!(gone.status, 400);
}

#[tokio::test]
async fn an_unreachable_remote_is_an_error_and_nothing_is_recorded() {
    let a = start().await;
    let sa = a.login().await;
    let r = a
        .call(
            &sa,
            Method::POST,
            "/array-connections",
            Some(json!({"management_address": "127.0.0.1:1", "connection_key": "k"})),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.raw);
    assert!(
        r.body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("Unable to connect to the remote array"),
        "{}",
        r.raw
    );
    assert!(names(&a.get(&sa, "/array-connections").await.body).is_empty());
}

#[tokio::test]
async fn patch_admins_changes_password_role_and_key() {
    let s = start().await;
    let t = s.login().await;
    let post = s
        .call(
            &t,
            Method::POST,
            "/admins?names=ops",
            Some(json!({"role": {"name": "storage_admin"}, "password": "pw-one"})),
        )
        .await;
    assert_eq!(post.status, 200, "{}", post.raw);
    assert!(!post.raw.contains("pw-one"), "the password is never echoed");

    let patch = |body: Value| s.call(&t, Method::PATCH, "/admins?names=ops", Some(body));
    let wrong = patch(json!({"password": "pw-two", "old_password": "nope"})).await;
    assert_eq!(wrong.status, 400);
    assert_eq!(wrong.body["errors"][0]["context"], "old_password");
    let ok = patch(json!({"password": "pw-two", "old_password": "pw-one"})).await;
    assert_eq!(ok.status, 200, "{}", ok.raw);
    let role = patch(json!({"role": {"name": "readonly"}, "public_key": "ssh-ed25519 AAAA"})).await;
    assert_eq!(
        role.body["items"][0]["role"]["name"], "readonly",
        "{}",
        role.raw
    );
    let listed = s.get(&t, "/admins?names=ops").await;
    assert_eq!(listed.body["items"][0]["public_key"], "ssh-ed25519 AAAA");
    assert_eq!(listed.body["items"][0]["role"]["name"], "readonly");
    assert_eq!(patch(json!({"locked": true})).await.status, 400);
    assert_eq!(patch(json!({"locked": false})).await.status, 200);
    assert_eq!(patch(json!({"role": {"name": "root"}})).await.status, 400);
    let builtin = s
        .call(
            &t,
            Method::PATCH,
            "/admins?names=pureuser",
            Some(json!({"role": {"name": "readonly"}})),
        )
        .await;
    assert_eq!(builtin.status, 400);
    let missing = s
        .call(
            &t,
            Method::PATCH,
            "/admins?names=ghost",
            Some(json!({"locked": false})),
        )
        .await;
    assert_eq!(missing.status, 400);

    // The new password logs in over REST 1.x; the old one does not.
    let login = |pw: &str| {
        s.send(
            Method::POST,
            "/api/1.19/auth/apitoken",
            None,
            Some(json!({"username": "ops", "password": pw})),
        )
    };
    assert_eq!(login("pw-one").await.unwrap().status, 400);
    assert_eq!(login("pw-two").await.unwrap().status, 200);
}

#[tokio::test]
async fn rest1_token_calls_as_purefa_token_makes_them() {
    let s = start().await;
    let t = s.login().await;
    let post = s
        .call(
            &t,
            Method::POST,
            "/admins?names=tok",
            Some(json!({"password": "secret-pw"})),
        )
        .await;
    assert_eq!(post.status, 200);

    // Password login without an API token: a session credential, not a token.
    let cred = s
        .send(
            Method::POST,
            "/api/1.19/auth/apitoken",
            None,
            Some(json!({"username": "tok", "password": "secret-pw"})),
        )
        .await
        .unwrap();
    assert_eq!(cred.status, 200, "{}", cred.raw);
    let credential = cred.body["api_token"].as_str().unwrap().to_string();
    let session = s
        .send(
            Method::POST,
            "/api/1.19/auth/session",
            None,
            Some(json!({"api_token": credential})),
        )
        .await
        .unwrap();
    assert_eq!(session.body["username"], "tok");
    let cookie = session
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let v1 = |method: Method, path: &str| {
        s.http
            .request(method, format!("{}/api/1.19/{path}", s.sim.url()))
            .header("cookie", cookie.clone())
            .send()
    };
    let no_cookie = s
        .send(Method::GET, "/api/1.19/array", None, None)
        .await
        .unwrap();
    assert_eq!(no_cookie.status, 401);
    let array: Value = v1(Method::GET, "array")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(array["array_name"].is_string());
    let before: Value = v1(Method::GET, "admin/tok/apitoken")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(before["api_token"], Value::Null, "{before}");

    let made: Value = v1(Method::POST, "admin/tok/apitoken")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = made["api_token"].as_str().unwrap().to_string();
    assert!(made["created"].as_str().unwrap().ends_with('Z'));
    // The same token under REST 2.x: it logs in there as `tok`, who sees its value;
    // pureuser, another admin, sees it masked (issue #38 M1).
    let listed = s
        .get(&t, "/admins/api-tokens?names=tok&expose_api_token=true")
        .await;
    assert_eq!(listed.body["items"][0]["api_token"]["token"], "****");
    let login = s
        .http
        .post(format!("{}/api/2.39/login", s.sim.url()))
        .header("api-token", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 200);
    let as_tok = login.headers()["x-auth-token"]
        .to_str()
        .unwrap()
        .to_string();
    let own = s
        .get(&as_tok, "/admins/api-tokens?expose_api_token=true")
        .await;
    let shown: Vec<(&str, &str)> = own.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["name"].as_str().unwrap(),
                i["api_token"]["token"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert!(shown.contains(&("tok", token.as_str())), "{shown:?}");
    assert!(shown.contains(&("pureuser", "****")), "{shown:?}");
    let twice = v1(Method::POST, "admin/tok/apitoken").await.unwrap();
    assert_eq!(twice.status(), 400);
    // With a token, the password login hands out that token.
    let again = s
        .send(
            Method::POST,
            "/api/1.19/auth/apitoken",
            None,
            Some(json!({"username": "tok", "password": "secret-pw"})),
        )
        .await
        .unwrap();
    assert_eq!(again.body["api_token"], Value::from(token));
    let deleted: Value = v1(Method::DELETE, "admin/tok/apitoken")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(deleted, json!({"name": "tok", "api_token": null}));
    let none: Value = v1(Method::GET, "admin/tok/apitoken")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(none["api_token"], Value::Null);
    assert_eq!(v1(Method::GET, "volume").await.unwrap().status(), 404);
    // 1.x versions that are not advertised are not served.
    let old = s
        .send(Method::GET, "/api/1.5/array", None, None)
        .await
        .unwrap();
    assert_eq!(old.status, 404);
    let bad = s
        .send(
            Method::POST,
            "/api/1.19/auth/apitoken",
            None,
            Some(json!({"username": "tok", "password": "wrong"})),
        )
        .await
        .unwrap();
    assert_eq!(bad.status, 400);
    assert!(!bad.raw.contains("wrong"));
}

async fn password_login(s: &Sim) -> crate::support::https::Answer {
    s.send(
        Method::POST,
        "/api/1.19/auth/apitoken",
        None,
        Some(json!({"username": "pureuser", "password": "factory-pw"})),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn pureuser_logs_in_with_a_password_only_when_one_is_configured() {
    let none = start().await;
    assert_eq!(password_login(&none).await.status, 400);
    let set = start_with(MockArray::new(), |c| {
        c.admin_password = Some("factory-pw".into());
    })
    .await;
    let ok = password_login(&set).await;
    assert_eq!(ok.status, 200, "{}", ok.raw);
    assert!(ok.body["api_token"].is_string());
}
