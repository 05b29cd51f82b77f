//! The simulator over real HTTPS: raw requests with reqwest (exact statuses, bodies
//! and headers), and the typed `RestArray` client end to end.

use std::time::Duration;

use flasharray::models::{HostPost, VolumePatch, VolumePost};
use flasharray::rest::RestArray;
use flasharray::{
    ConnectionParams, ConnectionTarget, ErrorKind, FlashArray, HostGroupName, HostName, ListParams,
    PodName, VolumeName,
};
use flasharray_mock::sim::{RunningSim, SimConfig, Simulator, parse_faults};
use flasharray_mock::{MockArray, MockClock};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const TOKEN: &str = "5e2a1c3d-0f4b-4e7a-9c1d-2b3a4c5d6e7f";
const V: &str = "/api/2.39";

struct Sim {
    array: MockArray,
    sim: RunningSim,
    http: reqwest::Client,
}

async fn start_with(array: MockArray, edit: impl FnOnce(&mut SimConfig)) -> Sim {
    let mut cfg = SimConfig::new(TOKEN.into());
    edit(&mut cfg);
    let sim = Simulator::start(array.clone(), cfg).await.unwrap();
    let cert = reqwest::Certificate::from_pem(sim.cert_pem().as_bytes()).unwrap();
    // Trusting exactly the simulator's certificate also checks its SAN (127.0.0.1).
    let http = reqwest::Client::builder()
        .tls_certs_only([cert])
        .build()
        .unwrap();
    Sim { array, sim, http }
}

async fn start() -> Sim {
    start_with(MockArray::new(), |_| {}).await
}

/// One answer, decoded.
struct Answer {
    status: StatusCode,
    headers: reqwest::header::HeaderMap,
    body: Value,
    raw: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

impl Sim {
    async fn send(
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

    async fn login(&self) -> String {
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

    async fn call(&self, s: &str, method: Method, path: &str, body: Option<Value>) -> Answer {
        self.send(method, &format!("{V}{path}"), Some(s), body)
            .await
            .unwrap()
    }

    async fn get(&self, s: &str, path: &str) -> Answer {
        self.call(s, Method::GET, path, None).await
    }

    fn rest(&self) -> RestArray {
        RestArray::builder(self.sim.url())
            .api_token(TOKEN.into())
            .ca_pem(self.sim.cert_pem().as_bytes().to_vec())
            .build()
            .unwrap()
    }
}

fn names(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect()
}

fn error(status: u16, context: &str, message: &str) -> (StatusCode, Value) {
    (
        StatusCode::from_u16(status).unwrap(),
        json!({"errors": [{"context": context, "message": message}]}),
    )
}

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
async fn volumes_lifecycle_with_exact_errors() {
    let s = start().await;
    let t = s.login().await;
    let r = s
        .call(
            &t,
            Method::POST,
            "/volumes?names=v1,V2,v3",
            Some(json!({"provisioned": 1048576})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(names(&r.body), ["v1", "V2", "v3"]);
    assert_eq!(
        r.body.as_object().unwrap().len(),
        1,
        "POST answers only items"
    );

    // List: all five keys, total, every field present with nulls.
    let r = s.get(&t, "/volumes").await;
    let env = r.body.as_object().unwrap();
    for key in [
        "continuation_token",
        "more_items_remaining",
        "total_item_count",
        "items",
        "total",
    ] {
        assert!(env.contains_key(key), "missing {key}: {}", r.raw);
    }
    assert_eq!(r.body["more_items_remaining"], false);
    assert_eq!(r.body["total"][0]["provisioned"], 3 * 1048576);
    let v1 = &r.body["items"][0];
    assert_eq!(v1["pod"], json!({"id": null, "name": null}));
    assert!(v1["time_remaining"].is_null());
    assert_eq!(
        v1["qos"],
        json!({"bandwidth_limit": null, "iops_limit": null})
    );

    // Names are case-insensitive on input and keep their case on output.
    let r = s.get(&t, "/volumes?names=v2").await;
    assert_eq!(names(&r.body), ["V2"]);

    // Errors: the array's status and message, the name as context.
    let r = s.get(&t, "/volumes?names=nope").await;
    assert_eq!(
        (r.status, r.body),
        error(400, "nope", "Volume does not exist.")
    );
    let r = s
        .call(
            &t,
            Method::POST,
            "/volumes?names=V1",
            Some(json!({"provisioned": 1048576})),
        )
        .await;
    assert_eq!(
        (r.status, r.body),
        error(400, "V1", "Volume already exists.")
    );
    let r = s.call(&t, Method::DELETE, "/volumes?names=v1", None).await;
    assert_eq!(
        (r.status, r.body),
        error(
            400,
            "v1",
            "Volume must be destroyed before it can be eradicated."
        )
    );
    let r = s
        .call(&t, Method::POST, "/volumes?names=bad%20name", None)
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["errors"][0]["context"], "bad name");

    // Resize (shrinking needs truncate), rename, destroy, recover, eradicate.
    let r = s
        .call(
            &t,
            Method::PATCH,
            "/volumes?names=v1",
            Some(json!({"provisioned": 2097152})),
        )
        .await;
    assert_eq!(r.body["items"][0]["provisioned"], 2097152);
    let r = s
        .call(
            &t,
            Method::PATCH,
            "/volumes?names=v1",
            Some(json!({"provisioned": 1048576})),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.raw);
    let r = s
        .call(
            &t,
            Method::PATCH,
            "/volumes?names=v1&truncate=true",
            Some(json!({"provisioned": 1048576})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = s
        .call(
            &t,
            Method::PATCH,
            "/volumes?names=V2",
            Some(json!({"name": "v2new"})),
        )
        .await;
    assert_eq!(names(&r.body), ["v2new"]);
    let r = s
        .call(
            &t,
            Method::PATCH,
            "/volumes?names=v3",
            Some(json!({"destroyed": true})),
        )
        .await;
    assert_eq!(r.body["items"][0]["destroyed"], true);
    assert_eq!(r.body["items"][0]["time_remaining"], 86_400_000);
    let r = s.get(&t, "/volumes?destroyed=true").await;
    assert_eq!(names(&r.body), ["v3"]);
    let r = s.get(&t, "/volumes?destroyed=false").await;
    assert_eq!(names(&r.body), ["v1", "v2new"]);
    // A destroyed volume keeps its name.
    let r = s.call(&t, Method::POST, "/volumes?names=v3", None).await;
    assert_eq!(
        (r.status, r.body),
        error(400, "v3", "Volume already exists.")
    );
    let r = s
        .call(
            &t,
            Method::PATCH,
            "/volumes?names=v3",
            Some(json!({"destroyed": false})),
        )
        .await;
    assert_eq!(r.body["items"][0]["destroyed"], false);
    s.call(
        &t,
        Method::PATCH,
        "/volumes?names=v3",
        Some(json!({"destroyed": true})),
    )
    .await;
    let r = s.call(&t, Method::DELETE, "/volumes?names=v3", None).await;
    assert_eq!(r.status, 200);
    assert!(r.raw.is_empty(), "DELETE answers with an empty body");
    assert_eq!(s.get(&t, "/volumes?names=v3").await.status, 400);

    // ids address volumes too.
    let id = s.get(&t, "/volumes?names=v1").await.body["items"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = s
        .call(
            &t,
            Method::PATCH,
            &format!("/volumes?ids={id}"),
            Some(json!({"destroyed": true})),
        )
        .await;
    assert_eq!(names(&r.body), ["v1"]);

    // Unsupported parameters and fields are refused, not ignored.
    let r = s.get(&t, "/volumes?bogus=1").await;
    assert_eq!(
        (r.status, r.body),
        error(
            400,
            "bogus",
            "Invalid query parameter \"bogus\" for this endpoint."
        )
    );
    let r = s
        .call(
            &t,
            Method::POST,
            "/volumes?names=x1",
            Some(json!({"subtype": "protocol_endpoint"})),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["errors"][0]["context"], "subtype");
    let r = s.get(&t, "/no-such-thing").await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn filters_pods_and_percent_encoded_names() {
    let s = start().await;
    let t = s.login().await;
    let r = s
        .call(
            &t,
            Method::POST,
            "/pods?names=p1",
            Some(json!({"quota_limit": 1073741824})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(r.body["items"][0]["quota_limit"], 1073741824);
    let r = s
        .call(
            &t,
            Method::POST,
            "/volumes?names=p1%3A%3Adata,px-a,px-b",
            Some(json!({"provisioned": 1048576})),
        )
        .await;
    assert_eq!(names(&r.body), ["p1::data", "px-a", "px-b"]);
    assert_eq!(r.body["items"][0]["pod"]["name"], "p1");

    // Two filter parameters are ANDed.
    let r = s
        .get(
            &t,
            "/volumes?filter=name%3D%27px-%2A%27&filter=name%21%3D%27px-b%27",
        )
        .await;
    assert_eq!(names(&r.body), ["px-a"], "{}", r.raw);

    // A pod that still holds volumes cannot be destroyed.
    let r = s
        .call(
            &t,
            Method::PATCH,
            "/pods?names=p1",
            Some(json!({"destroyed": true})),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("Pod is not empty"),
        "{}",
        r.raw
    );
    let r = s.get(&t, "/pods").await;
    assert!(r.body.get("total").is_some());
    let r = s.get(&t, "/pods/arrays?group_names=p1").await;
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(r.body["items"][0]["group"]["name"], "p1");
    assert_eq!(r.body["items"][0]["member"]["name"], "pxfa-sim");
}

#[tokio::test]
async fn hosts_groups_connections_and_luns() {
    let s = start().await;
    let t = s.login().await;
    let r = s
        .call(
            &t,
            Method::POST,
            "/hosts?names=h1",
            Some(json!({"wwns": ["21:00:f4:c7:aa:00:27:06"]})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(r.body["items"][0]["wwns"], json!(["2100F4C7AA002706"]));
    assert_eq!(r.body["items"][0]["host_group"], json!({"name": null}));
    let r = s
        .call(
            &t,
            Method::POST,
            "/hosts?names=h2",
            Some(json!({"iqns": ["iqn.2020-01.io.pxfa:h2"]})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    // An initiator belongs to one host.
    let r = s
        .call(
            &t,
            Method::POST,
            "/hosts?names=h3",
            Some(json!({"wwns": ["2100F4C7AA002706"]})),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("already in use")
    );
    let r = s.call(&t, Method::POST, "/hosts?names=H1", None).await;
    assert_eq!((r.status, r.body), error(400, "H1", "Host already exists."));

    s.call(&t, Method::POST, "/host-groups?names=hg1", None)
        .await;
    let r = s
        .call(
            &t,
            Method::POST,
            "/host-groups/hosts?group_names=hg1&member_names=h1",
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(r.body["items"][0]["group"]["name"], "hg1");
    // The other spelling of the same membership collection.
    let r = s
        .call(
            &t,
            Method::POST,
            "/hosts/host-groups?group_names=hg1&member_names=h2",
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = s.get(&t, "/hosts/host-groups?group_names=hg1").await;
    assert_eq!(r.body["items"].as_array().unwrap().len(), 2);

    s.call(
        &t,
        Method::POST,
        "/volumes?names=pv1,pv2,sv1",
        Some(json!({"provisioned": 1048576})),
    )
    .await;
    let r = s
        .call(
            &t,
            Method::POST,
            "/connections?host_names=h1&volume_names=pv1,pv2",
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let luns: Vec<u64> = r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["lun"].as_u64().unwrap())
        .collect();
    assert_eq!(luns, [1, 2]);
    let r = s
        .call(
            &t,
            Method::POST,
            "/connections?host_group_names=hg1&volume_names=sv1",
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = s.get(&t, "/connections?volume_names=sv1").await;
    let rows = r.body["items"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "one row per member host: {}", r.raw);
    assert!(
        rows.iter()
            .all(|c| c["lun"] == 254 && c["host_group"]["name"] == "hg1")
    );
    let r = s
        .call(
            &t,
            Method::POST,
            "/connections?host_names=h1&volume_names=pv1",
            None,
        )
        .await;
    assert_eq!(
        (r.status, r.body),
        error(400, "pv1", "Connection already exists.")
    );
    let r = s
        .call(
            &t,
            Method::POST,
            "/connections?host_names=h1&host_group_names=hg1&volume_names=pv1",
            None,
        )
        .await;
    assert_eq!(r.status, 400);

    // Hosts with connections cannot be deleted.
    let r = s.call(&t, Method::DELETE, "/hosts?names=h1", None).await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("cannot be deleted due to existing connections"),
        "{}",
        r.raw
    );
    let r = s
        .call(
            &t,
            Method::DELETE,
            "/connections?host_names=h1&volume_names=pv1,pv2",
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = s
        .call(
            &t,
            Method::DELETE,
            "/connections?host_names=h1&volume_names=pv1",
            None,
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("is not connected")
    );

    // Tags, per collection, batch with resource_names.
    let r = s
        .call(
            &t,
            Method::PUT,
            "/hosts/tags/batch?resource_names=h1,h2",
            Some(json!([{"namespace": "pxfa.io", "key": "tenant", "value": "t1"}])),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(r.body["items"].as_array().unwrap().len(), 2);
    let r = s
        .get(&t, "/hosts/tags?resource_names=h2&namespaces=pxfa.io")
        .await;
    assert_eq!(r.body["items"][0]["value"], "t1");
    assert_eq!(r.body["items"][0]["resource"]["name"], "h2");
    let r = s
        .call(
            &t,
            Method::DELETE,
            "/hosts/tags?resource_names=h2&keys=tenant&namespaces=pxfa.io",
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = s.get(&t, "/hosts/tags").await;
    assert_eq!(r.body["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn paging_with_tokens_and_with_offset_and_sort() {
    let s = start().await;
    let t = s.login().await;
    s.call(
        &t,
        Method::POST,
        "/volumes?names=a1,a2,a3,a4,a5,a6,a7",
        Some(json!({"provisioned": 1048576})),
    )
    .await;
    let mut seen = Vec::new();
    let mut path = "/volumes?limit=3&total_item_count=true".to_string();
    let mut pages = 0;
    loop {
        let r = s.get(&t, &path).await;
        assert_eq!(r.status, 200, "{}", r.raw);
        assert_eq!(r.body["total_item_count"], 7);
        seen.extend(names(&r.body));
        pages += 1;
        match r.body["continuation_token"].as_str() {
            Some(tok) => {
                assert_eq!(r.body["more_items_remaining"], true);
                path = format!("/volumes?limit=3&total_item_count=true&continuation_token={tok}");
            }
            None => {
                assert_eq!(r.body["more_items_remaining"], false);
                break;
            }
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, ["a1", "a2", "a3", "a4", "a5", "a6", "a7"]);

    // A token presented with another query is refused.
    let first = s.get(&t, "/volumes?limit=2").await;
    let tok = first.body["continuation_token"].as_str().unwrap();
    let r = s
        .get(
            &t,
            &format!("/volumes?limit=2&destroyed=false&continuation_token={tok}"),
        )
        .await;
    assert_eq!(r.status, 400);

    // With sort there is no token; clients page with offset. Both descending forms.
    for sort in ["name-", "-name"] {
        let r = s
            .get(&t, &format!("/volumes?sort={sort}&limit=3&offset=3"))
            .await;
        assert!(r.body["continuation_token"].is_null());
        assert_eq!(r.body["more_items_remaining"], true);
        assert_eq!(names(&r.body), ["a4", "a3", "a2"]);
    }
    let r = s.get(&t, "/volumes?total_only=true").await;
    assert_eq!(r.body["items"], json!([]));
    assert_eq!(r.body["total"][0]["provisioned"], 7 * 1048576);
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
async fn rate_limits_busy_and_unavailable() {
    let s = start_with(MockArray::new(), |c| {
        c.faults = parse_faults("429:nth=2:retry-after=3,busy:nth=3,503:nth=4").unwrap();
    })
    .await;
    let t = s.login().await;
    assert_eq!(s.get(&t, "/volumes").await.status, 200);
    let r = s.get(&t, "/volumes").await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), Some("3"));
    assert_eq!(r.header("x-ratelimit-limit-minute"), Some("1000"));
    assert_eq!(r.header("x-ratelimit-remaining-minute"), Some("0"));
    assert!(r.header("x-request-id").is_some());
    assert_eq!(r.body, json!({"message": "API rate limit exceeded"}));
    let r = s.get(&t, "/volumes").await;
    assert_eq!(
        (r.status.as_u16(), &r.body),
        (
            500,
            &json!({"errors": [{"context": null, "message": "Server is busy"}]})
        )
    );
    assert_eq!(s.get(&t, "/volumes").await.status, 503);
    assert_eq!(s.get(&t, "/volumes").await.status, 200);

    // The mock's own faults pass through with their status and Retry-After.
    s.array
        .faults()
        .rate_limit_next(1, Duration::from_millis(1500));
    let r = s.get(&t, "/volumes").await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), Some("2"));
    s.array.faults().busy_next(1);
    assert_eq!(s.get(&t, "/hosts").await.status, 500);
    s.array.faults().unavailable_next(1);
    assert_eq!(s.get(&t, "/hosts").await.status, 503);
}

#[tokio::test]
async fn dropped_writes_close_the_connection() {
    let s = start_with(MockArray::new(), |c| {
        c.faults = parse_faults("drop-write:nth=1,lose-answer:nth=3").unwrap();
    })
    .await;
    let t = s.login().await;
    let path = format!("{V}/volumes?names=d1");
    // Write 1: dropped before the array sees it.
    assert!(s.send(Method::POST, &path, Some(&t), None).await.is_err());
    assert_eq!(
        s.get(&t, "/volumes?names=d1").await.status,
        400,
        "not applied"
    );
    // Write 2 goes through; write 3 is applied but its answer is lost.
    assert_eq!(
        s.call(&t, Method::POST, "/volumes?names=d1", None)
            .await
            .status,
        200
    );
    let r = s
        .send(
            Method::PATCH,
            &format!("{V}/volumes?names=d1"),
            Some(&t),
            Some(json!({"destroyed": true})),
        )
        .await;
    assert!(r.is_err());
    assert_eq!(
        s.get(&t, "/volumes?names=d1").await.body["items"][0]["destroyed"],
        true
    );

    // The mock's own dropped write: no answer, nothing applied.
    s.array.faults().drop_write(1);
    assert!(
        s.send(
            Method::POST,
            &format!("{V}/volumes?names=d2"),
            Some(&t),
            None
        )
        .await
        .is_err()
    );
    assert_eq!(s.get(&t, "/volumes?names=d2").await.status, 400);
}

#[tokio::test]
async fn rest_client_end_to_end() {
    let s = start().await;
    let rest = s.rest();
    let vols: Vec<VolumeName> = (0..25)
        .map(|i| VolumeName::new(format!("r{i:02}")).unwrap())
        .collect();
    let created = rest
        .create_volumes(
            &vols,
            &VolumePost {
                tags: Vec::new(),
                provisioned: Some(10 << 20),
                source: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(created.len(), 25);
    // Paging through the simulator with continuation tokens.
    let all = rest
        .list_volumes(&ListParams::all().page_size(4))
        .await
        .unwrap();
    assert_eq!(all.len(), 25);
    assert_eq!(all[24].name, "r24");
    let err = rest
        .list_volumes(&ListParams::names(["missing"]))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert_eq!(err.as_api().unwrap().context(), Some("missing"));

    let h = HostName::new("node-1").unwrap();
    rest.create_hosts(
        std::slice::from_ref(&h),
        &HostPost {
            iqns: vec!["iqn.2020-01.io.pxfa:node-1".into()],
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let g = HostGroupName::new("grp").unwrap();
    rest.create_host_groups(std::slice::from_ref(&g), &Default::default())
        .await
        .unwrap();
    rest.add_host_group_members(&g, std::slice::from_ref(&h))
        .await
        .unwrap();
    let conns = rest
        .create_connections(&ConnectionTarget::HostGroup(g.clone()), &vols[..2], None)
        .await
        .unwrap();
    assert!(!conns.is_empty());
    let rows = rest
        .list_connections(&ConnectionParams {
            host_names: vec!["node-1".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    let mut luns: Vec<u32> = rows.iter().filter_map(|c| c.lun).collect();
    luns.sort();
    assert_eq!(luns, [253, 254]);
    let err = rest
        .delete_hosts(std::slice::from_ref(&h))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InUse);

    rest.patch_volumes(
        &vols[20..],
        &VolumePatch {
            destroyed: Some(true),
            ..Default::default()
        },
        false,
    )
    .await
    .unwrap();
    let destroyed = rest
        .list_volumes(&ListParams::all().destroyed(true))
        .await
        .unwrap();
    assert_eq!(destroyed.len(), 5);
    rest.eradicate_volumes(&vols[20..]).await.unwrap();

    let pod = PodName::new("tenant").unwrap();
    rest.create_pods(std::slice::from_ref(&pod), &Default::default())
        .await
        .unwrap();
    assert_eq!(
        rest.list_pod_arrays(std::slice::from_ref(&pod))
            .await
            .unwrap()
            .len(),
        1
    );

    // Busy and rate-limited answers are retried by the client.
    s.array.faults().busy_next(1);
    s.array
        .faults()
        .rate_limit_next(1, Duration::from_millis(10));
    assert_eq!(rest.get_array_space().await.unwrap().name, "pxfa-sim");

    // A token issued by the array logs in too.
    let issued = rest.create_api_token("pureuser", None).await.unwrap();
    let other = RestArray::builder(s.sim.url())
        .api_token(issued.api_token.expose().unwrap().to_string().into())
        .ca_pem(s.sim.cert_pem().as_bytes().to_vec())
        .build()
        .unwrap();
    other.get_array().await.unwrap();
    rest.close().await.unwrap();
    s.sim.shutdown().await;
}

#[tokio::test]
async fn tokens_are_masked_unless_exposed_and_shutdown_refuses_new_connections() {
    let s = start().await;
    let t = s.login().await;
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
