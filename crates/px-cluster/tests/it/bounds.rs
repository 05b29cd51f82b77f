//! A hostile Kubernetes API server (issue #38): an endless list answer, a 429 asking
//! for an hour, an answer that takes two minutes, a 50 MB answer that is not JSON.
//! Each ends in bounded time with a bounded error naming the request, through the
//! client `px_cluster::connect` builds; nothing a command does has to remember it.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams};
use px_cluster::KubeBounds;
use px_cluster::bounds::{AnswerKind, LIST_PAGE};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::Fake;

async fn client(fake: &Fake, bounds: KubeBounds) -> kube::Client {
    px_cluster::connect(&fake.kubeconfig, Some("fake"), bounds)
        .await
        .unwrap()
}

/// A server that answers every request with a list that never ends (chunked), and
/// the kubeconfig that points at it.
async fn endless_list() -> (tempfile::TempDir, std::path::PathBuf) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = [0u8; 4096];
                let _ = tcp.read(&mut head).await;
                let start = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
                if tcp.write_all(start.as_bytes()).await.is_err() {
                    return;
                }
                let first = br#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":["#;
                let item = format!(
                    r#"{{"metadata":{{"name":"x"}},"data":{{"k":"{}"}}}},"#,
                    "v".repeat(65_000)
                );
                let chunk = |b: &[u8]| {
                    let mut c = format!("{:x}\r\n", b.len()).into_bytes();
                    c.extend_from_slice(b);
                    c.extend_from_slice(b"\r\n");
                    c
                };
                if tcp.write_all(&chunk(first)).await.is_err() {
                    return;
                }
                let item = chunk(item.as_bytes());
                while tcp.write_all(&item).await.is_ok() {}
            });
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster: {{server: \"http://{addr}\"}}\n\
             users:\n- name: admin\n  user: {{token: not-a-real-token}}\n\
             contexts:\n- name: fake\n  context: {{cluster: fake, user: admin, namespace: default}}\n\
             current-context: fake\n"
        ),
    )
    .unwrap();
    (dir, kubeconfig)
}

#[tokio::test]
async fn an_endless_list_answer_stops_at_the_page_cap() {
    let (_dir, kubeconfig) = endless_list().await;
    let client = px_cluster::connect(&kubeconfig, None, KubeBounds::default())
        .await
        .unwrap();
    let started = Instant::now();
    let err = Api::<ConfigMap>::namespaced(client, "clusters")
        .list(&ListParams::default().limit(LIST_PAGE))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("GET /api/v1/namespaces/clusters/configmaps")
            && err.contains(&format!(
                "larger than {} KiB",
                AnswerKind::ListPage.max_bytes() >> 10
            ))
            && err.contains("one page of a list"),
        "{err}"
    );
    assert!(err.len() < 400, "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_object_over_its_cap_names_the_object() {
    let fake = Fake::start().await;
    let big = "v".repeat(usize::try_from(AnswerKind::Object.max_bytes()).unwrap());
    Mock::given(method("GET"))
        .and(path("/api/v1/namespaces/clusters/configmaps/huge"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "huge"}, "data": {"k": big}}),
        ))
        .mount(&fake.server)
        .await;
    let err = Api::<ConfigMap>::namespaced(client(&fake, KubeBounds::default()).await, "clusters")
        .get("huge")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("/configmaps/huge") && err.contains("more than a Kubernetes object can be"),
        "{err}"
    );
}

#[tokio::test]
async fn a_retry_after_of_an_hour_is_not_waited_for() {
    let fake = Fake::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "3600"))
        .mount(&fake.server)
        .await;
    let started = Instant::now();
    let err = Api::<ConfigMap>::namespaced(client(&fake, KubeBounds::default()).await, "clusters")
        .get("x")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        err.contains("answered 429 to GET /api/v1/namespaces/clusters/configmaps/x")
            && err.contains("retry after 3600 s")
            && err.contains("the request timeout"),
        "{err}"
    );
}

#[tokio::test]
async fn a_short_retry_after_is_honoured_within_the_deadline_only() {
    let fake = Fake::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "1"))
        .up_to_n_times(1)
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
        ))
        .mount(&fake.server)
        .await;
    // Within the deadline: waited, then answered.
    let cm = Api::<ConfigMap>::namespaced(client(&fake, KubeBounds::default()).await, "clusters")
        .get("x")
        .await
        .unwrap();
    assert_eq!(cm.metadata.name.as_deref(), Some("x"));
    assert_eq!(fake.requests("GET", "/configmaps/x").await.len(), 2);

    // A wait that would pass the command's deadline is not begun.
    let fake = Fake::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "2"))
        .mount(&fake.server)
        .await;
    let bounds = KubeBounds::default().with_deadline(Duration::from_secs(1));
    let started = Instant::now();
    let err = Api::<ConfigMap>::namespaced(client(&fake, bounds).await, "clusters")
        .get("y")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(err.contains("the command's deadline"), "{err}");
}

#[tokio::test]
async fn a_slow_answer_ends_at_the_request_timeout() {
    let fake = Fake::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}))
                .set_delay(Duration::from_secs(120)),
        )
        .mount(&fake.server)
        .await;
    let started = Instant::now();
    let bounds = KubeBounds::new(Duration::from_secs(1));
    let err = Api::<ConfigMap>::namespaced(client(&fake, bounds).await, "clusters")
        .get("slow")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        err.contains("no complete answer to GET /api/v1/namespaces/clusters/configmaps/slow within 1 s (the request timeout)"),
        "{err}"
    );
    // And a command deadline shorter than the request timeout ends it sooner.
    let bounds = KubeBounds::default().with_deadline(Duration::from_secs(1));
    let started = Instant::now();
    let err = Api::<ConfigMap>::namespaced(client(&fake, bounds).await, "clusters")
        .get("slow")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(err.contains("the command's deadline"), "{err}");
}

#[tokio::test]
async fn an_unparsable_answer_is_shown_by_its_first_bytes_and_a_secret_not_at_all() {
    let fake = Fake::start().await;
    let junk = format!("<html>\u{1b}[2J{}", "A".repeat(50 << 20));
    for p in [
        "/api/v1/namespaces/clusters/configmaps/junk",
        "/api/v1/namespaces/clusters/secrets/junk",
    ] {
        Mock::given(method("GET"))
            .and(path(p))
            .respond_with(ResponseTemplate::new(200).set_body_string(junk.clone()))
            .mount(&fake.server)
            .await;
    }
    let c = client(&fake, KubeBounds::default()).await;
    // Over the object cap: refused by size before any parsing.
    let err = Api::<ConfigMap>::namespaced(c.clone(), "clusters")
        .get("junk")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.len() < 400 && err.contains("larger than"), "{err}");

    // Under the cap: named by its first bytes, escaped.
    let small = format!("<html>\u{1b}[2J{}", "A".repeat(1 << 20));
    Mock::given(method("GET"))
        .and(path("/api/v1/namespaces/clusters/configmaps/small"))
        .respond_with(ResponseTemplate::new(200).set_body_string(small.clone()))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/v1/namespaces/clusters/secrets/small"))
        .respond_with(
            ResponseTemplate::new(200).set_body_string(format!("{{\"data\": \"hunter2{small}")),
        )
        .mount(&fake.server)
        .await;
    let err = Api::<ConfigMap>::namespaced(c.clone(), "clusters")
        .get("small")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.len() < 400, "{} bytes: {}", err.len(), &err[..400]);
    assert!(
        err.contains("is not JSON")
            && err.contains(r#"it began "<html>\x1b[2JAAA"#)
            && !err.contains('\u{1b}'),
        "{err}"
    );
    let err = Api::<Secret>::namespaced(c, "clusters")
        .get("small")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.len() < 400, "{} bytes", err.len());
    assert!(
        !err.contains("hunter2") && err.contains("not shown (a Secret's answer)"),
        "{err}"
    );
}

#[tokio::test]
async fn an_unparsable_error_answer_becomes_a_short_status() {
    let fake = Fake::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(500)
                .set_body_string(format!("oops\u{1b}]0;x\u{7}{}", "B".repeat(60_000))),
        )
        .mount(&fake.server)
        .await;
    let err = Api::<ConfigMap>::namespaced(client(&fake, KubeBounds::default()).await, "clusters")
        .get("x")
        .await
        .unwrap_err();
    let kube::Error::Api(status) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(status.code, 500);
    assert!(status.message.len() < 400, "{}", status.message);
    assert!(
        status.message.contains(r#"it began "oops\x1b]0;x\x07BBB"#),
        "{}",
        status.message
    );
}

#[tokio::test]
async fn lists_are_read_in_pages() {
    let fake = Fake::start().await;
    let page = |items: Vec<&str>, next: &str| {
        json!({"apiVersion": "pxfa.io/v1alpha1", "kind": "TenantStorageList",
               "metadata": {"continue": next},
               "items": items.iter().map(|n| json!({"apiVersion": "pxfa.io/v1alpha1", "kind": "TenantStorage", "metadata": {"name": n}})).collect::<Vec<_>>()})
    };
    Mock::given(method("GET"))
        .and(path("/apis/pxfa.io/v1alpha1/tenantstorages"))
        .and(wiremock::matchers::query_param("continue", "p2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(vec!["b"], "")))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/apis/pxfa.io/v1alpha1/tenantstorages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(vec!["a"], "p2")))
        .mount(&fake.server)
        .await;
    let c = client(&fake, KubeBounds::default()).await;
    let names: Vec<String> = px_cluster::orphans::tenant_storages(&c)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .collect();
    assert_eq!(names, ["a", "b"]);
    let asked = fake.requests("GET", "/tenantstorages").await;
    assert_eq!(asked.len(), 2);
    for r in &asked {
        assert!(
            r.url
                .query()
                .unwrap_or_default()
                .contains(&format!("limit={LIST_PAGE}")),
            "{}",
            r.url
        );
    }
}
