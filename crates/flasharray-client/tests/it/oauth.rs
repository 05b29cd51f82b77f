//! API clients against the HTTPS simulator: one exchange shared by every call,
//! renewal before expiry and on a 401, and each refusal with its cause.

use std::sync::Arc;
use std::time::Duration;

use flasharray::models::VolumePost;
use flasharray::rest::RestArray;
use flasharray::rest::oauth::{ApiClientCredential, ApiClientIdentity};
use flasharray::{FlashArray, ListParams, VolumeName};
use flasharray_mock::MockArray;
use flasharray_sim::{RunningSim, SimConfig, Simulator};
use serde_json::{Value, json};

const TOKEN: &str = "5c0ffee0-0000-4000-8000-000000000027";
const KEY: &str = include_str!("../keys/client-pkcs8.pem");
const PUBLIC: &str = include_str!("../keys/client-public.pem");
const OTHER_KEY: &str = include_str!("../keys/other-pkcs8.pem");

/// A simulator and the id and key id of an API client registered on it.
struct Registered {
    sim: RunningSim,
    array: MockArray,
    client_id: String,
    key_id: String,
}

async fn admin_call(sim: &RunningSim, method: reqwest::Method, path: &str, body: Value) -> Value {
    let http = reqwest::Client::builder()
        .tls_certs_only(reqwest::Certificate::from_pem_bundle(sim.cert_pem().as_bytes()).unwrap())
        .build()
        .unwrap();
    let login = http
        .post(format!("{}/api/2.39/login", sim.url()))
        .header("api-token", TOKEN)
        .send()
        .await
        .unwrap();
    let session = login.headers()["x-auth-token"]
        .to_str()
        .unwrap()
        .to_string();
    let answer = http
        .request(method, format!("{}/api/2.39/{path}", sim.url()))
        .header("x-auth-token", session)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(answer.status().is_success(), "{path}: {}", answer.status());
    answer.json().await.unwrap()
}

/// Starts a simulator and registers the API client `pxfa` (enabled unless told).
async fn registered(max_role: &str, ttl_ms: u64, enabled: bool) -> Registered {
    flasharray::rest::install_crypto_provider();
    let array = MockArray::new();
    let sim = Simulator::start(array.clone(), SimConfig::new(TOKEN.into()))
        .await
        .unwrap();
    let created = admin_call(
        &sim,
        reqwest::Method::POST,
        "api-clients?names=pxfa",
        json!({"issuer": "pxfa-ci", "public_key": PUBLIC, "max_role": max_role,
               "access_token_ttl_in_ms": ttl_ms}),
    )
    .await;
    let item = &created["items"][0];
    assert_eq!(item["enabled"], false, "new clients start disabled");
    if enabled {
        admin_call(
            &sim,
            reqwest::Method::PATCH,
            "api-clients?names=pxfa",
            json!({"enabled": true}),
        )
        .await;
    }
    Registered {
        client_id: item["id"].as_str().unwrap().to_string(),
        key_id: item["key_id"].as_str().unwrap().to_string(),
        sim,
        array,
    }
}

impl Registered {
    fn identity(&self) -> ApiClientIdentity {
        ApiClientIdentity {
            client_id: self.client_id.clone(),
            key_id: self.key_id.clone(),
            issuer: "pxfa-ci".into(),
            username: "pureuser".into(),
        }
    }

    fn rest_with(&self, identity: ApiClientIdentity, key: &str) -> Arc<RestArray> {
        let cred = ApiClientCredential::from_pem(identity, key.as_bytes(), None).unwrap();
        Arc::new(
            RestArray::builder(self.sim.url())
                .api_client(cred)
                .ca_pem(self.sim.cert_pem().as_bytes().to_vec())
                .build()
                .unwrap(),
        )
    }

    fn rest(&self) -> Arc<RestArray> {
        self.rest_with(self.identity(), KEY)
    }

    fn count(&self, method: &str, path: &str) -> usize {
        self.sim
            .request_log()
            .iter()
            .filter(|r| r.method == method && r.path == path)
            .count()
    }

    fn refused(&self) -> usize {
        self.sim
            .request_log()
            .iter()
            .filter(|r| r.status == 401)
            .count()
    }
}

/// `n` concurrent listings; every one must succeed.
async fn many_calls(rest: &Arc<RestArray>, n: usize) {
    let calls = (0..n).map(|_| {
        let rest = rest.clone();
        tokio::spawn(async move { rest.list_volumes(&ListParams::all()).await })
    });
    for c in futures_util::future::join_all(calls).await {
        c.unwrap().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_exchange_serves_every_concurrent_call() {
    let r = registered("array_admin", 3_600_000, true).await;
    // The registration's own API-token logins.
    let admin_logins = r.count("POST", "/api/2.39/login");
    let rest = r.rest();
    many_calls(&rest, 32).await;
    let name = VolumeName::new("oauth-v1").unwrap();
    rest.create_volumes(&[name], &VolumePost::default().with_provisioned(1 << 30))
        .await
        .unwrap();
    assert_eq!(r.count("POST", "/oauth2/1.0/token"), 1);
    assert_eq!(
        r.count("POST", "/api/2.39/login"),
        admin_logins,
        "no API-token login"
    );
    assert_eq!(
        r.array
            .list_volumes(&ListParams::all())
            .await
            .unwrap()
            .len(),
        1
    );
    rest.close().await.unwrap();
    assert_eq!(
        r.count("POST", "/api/2.39/logout"),
        0,
        "an access token has no logout"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn renewed_once_shortly_before_it_expires() {
    // expires_in 2 s: renewed 0.2 s before, by one call, with no 401 on the way.
    let r = registered("array_admin", 2_000, true).await;
    let rest = r.rest();
    many_calls(&rest, 8).await;
    tokio::time::sleep(Duration::from_millis(1_850)).await;
    many_calls(&rest, 24).await;
    many_calls(&rest, 8).await;
    let refused: Vec<String> = r
        .sim
        .request_log()
        .iter()
        .filter(|q| q.status == 401)
        .map(|q| format!("{} {}", q.method, q.path))
        .collect();
    assert_eq!(r.count("POST", "/oauth2/1.0/token"), 2, "{refused:?}");
    assert_eq!(
        r.refused(),
        0,
        "renewed before the array refused it: {refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn renewed_once_when_the_array_refuses_it() {
    // The array's clock passes the token's TTL (60 s) while this host's does not.
    let r = registered("array_admin", 60_000, true).await;
    let rest = r.rest();
    many_calls(&rest, 4).await;
    r.array.clock().advance(Duration::from_secs(61));
    many_calls(&rest, 32).await;
    assert_eq!(
        r.count("POST", "/oauth2/1.0/token"),
        2,
        "one exchange for all the refused calls"
    );
    assert!(r.refused() >= 1);
}

async fn refusal(r: &Registered, rest: &RestArray) -> flasharray::Error {
    let e = rest.list_volumes(&ListParams::all()).await.unwrap_err();
    assert_eq!(
        r.count("GET", "/api/2.39/volumes"),
        0,
        "nothing was asked without a token"
    );
    e
}

#[tokio::test]
async fn wrong_key_unknown_client_and_disabled_client_are_named() {
    let r = registered("array_admin", 3_600_000, true).await;
    let e = refusal(&r, &r.rest_with(r.identity(), OTHER_KEY))
        .await
        .to_string();
    assert!(
        e.contains("Invalid signature") && e.contains(&r.key_id),
        "{e}"
    );
    assert!(e.contains(&format!("API client {}", r.client_id)), "{e}");
    assert!(!e.contains("BEGIN"), "{e}");

    let mut unknown = r.identity();
    unknown.client_id = "00000000-0000-4000-8000-00000000dead".into();
    let e = refusal(&r, &r.rest_with(unknown, KEY)).await.to_string();
    assert!(
        e.contains("does not exist") && e.contains("not its name"),
        "{e}"
    );

    let mut stranger = r.identity();
    stranger.username = "nobody".into();
    let e = refusal(&r, &r.rest_with(stranger, KEY)).await.to_string();
    assert!(
        e.contains("does not exist on the array") && e.contains("nobody"),
        "{e}"
    );

    let disabled = registered("array_admin", 3_600_000, false).await;
    let e = refusal(&disabled, &disabled.rest()).await;
    assert_eq!(e.kind(), flasharray::ErrorKind::Unauthorized);
    let e = e.to_string();
    assert!(e.contains("disabled") && e.contains("enables it"), "{e}");
}

#[tokio::test]
async fn clock_skew_is_named() {
    let r = registered("array_admin", 3_600_000, true).await;
    r.array.clock().advance(Duration::from_secs(3_600));
    let e = refusal(&r, &r.rest()).await.to_string();
    assert!(e.contains("expired"), "{e}");
    assert!(
        e.contains("clock skew") && e.contains("behind the array's"),
        "{e}"
    );
}

#[tokio::test]
async fn rights_are_the_lesser_of_client_and_user() {
    let r = registered("readonly", 3_600_000, true).await;
    let rest = r.rest();
    rest.list_volumes(&ListParams::all()).await.unwrap();
    let name = VolumeName::new("oauth-ro").unwrap();
    let e = rest
        .create_volumes(&[name], &VolumePost::default().with_provisioned(1 << 30))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), flasharray::ErrorKind::Forbidden, "{e}");
    assert!(
        r.array
            .list_volumes(&ListParams::all())
            .await
            .unwrap()
            .is_empty()
    );
    let shown = format!("{rest:?}");
    assert!(
        !shown.contains("PRIVATE") && !shown.contains("MII"),
        "{shown}"
    );
}
