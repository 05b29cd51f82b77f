//! 429 / 503 / 500-busy waits, backoff, deadline; GET retried after gateway errors.

use std::time::{Duration, Instant};

use flasharray::{Error, ErrorKind, FlashArray, ListParams, RetryConfig};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::common::*;

#[tokio::test]
async fn rate_limit_waits_what_retry_after_says() {
    let a = Array::start().await;
    fail_first(&a, "arrays", 1, rate_limited("retry-after", "1")).await;
    get(&a, "arrays", fixture("arrays/list.json")).await;
    // Backoff alone would wait at least 3 s: the 1 s seen proves the header won.
    let c = a
        .builder()
        .retry(RetryConfig {
            max_retries: 2,
            max_elapsed: Duration::from_secs(20),
            min_delay: Duration::from_secs(3),
            max_delay: Duration::from_secs(5),
        })
        .build()
        .unwrap();
    let t = Instant::now();
    c.get_array().await.unwrap();
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(950) && took < Duration::from_millis(2500),
        "{took:?}"
    );
    assert_eq!(a.count("GET", &format!("{V}/arrays")).await, 2);
}

#[tokio::test]
async fn ratelimit_reset_is_used_without_retry_after() {
    let a = Array::start().await;
    fail_first(&a, "arrays", 1, rate_limited("ratelimit-reset", "0")).await;
    get(&a, "arrays", fixture("arrays/list.json")).await;
    let c = a
        .builder()
        .retry(RetryConfig {
            min_delay: Duration::from_secs(5),
            max_delay: Duration::from_secs(5),
            ..fast_retry()
        })
        .build()
        .unwrap();
    let t = Instant::now();
    c.get_array().await.unwrap();
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
}

#[tokio::test]
async fn unavailable_backs_off_then_succeeds() {
    let a = Array::start().await;
    fail_first(
        &a,
        "volumes",
        2,
        status(
            503,
            json!({"errors": [{"context": null, "message": "Service Unavailable"}]}),
        ),
    )
    .await;
    get(&a, "volumes", fixture("volumes/one.json")).await;
    let v = a.client().list_volumes(&ListParams::all()).await.unwrap();
    assert_eq!(v.len(), 1);
    assert_eq!(a.count("GET", &format!("{V}/volumes")).await, 3);
}

#[tokio::test]
async fn server_busy_500_is_retried_other_500_is_not() {
    let a = Array::start().await;
    fail_first(&a, "volumes", 1, status(500, fixture("errors/busy.json"))).await;
    get(&a, "volumes", fixture("volumes/one.json")).await;
    Mock::given(method("GET"))
        .and(path(format!("{V}/hosts")))
        .respond_with(internal_error())
        .expect(1)
        .mount(&a.server)
        .await;
    let c = a.client();
    assert_eq!(c.list_volumes(&ListParams::all()).await.unwrap().len(), 1);
    assert_eq!(a.count("GET", &format!("{V}/volumes")).await, 2);
    let err = c.list_hosts(&ListParams::all()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Other);
    assert_eq!(err.as_api().unwrap().status, 500);
}

#[tokio::test]
async fn busy_writes_are_resent_because_nothing_was_applied() {
    let a = Array::start().await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/host-groups")))
        .respond_with(status(503, fixture("errors/busy.json")))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&a.server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/host-groups")))
        .respond_with(ok(
            json!({"items": [fixture("host_groups/list.json")["items"][0]]}),
        ))
        .mount(&a.server)
        .await;
    let g = a
        .client()
        .create_host_groups(&["hcp-mgmt".parse().unwrap()], &Default::default())
        .await
        .unwrap();
    assert_eq!(g[0].name, "hcp-mgmt");
    assert_eq!(a.count("POST", &format!("{V}/host-groups")).await, 2);
}

#[tokio::test]
async fn retries_are_bounded_by_count() {
    let a = Array::start().await;
    Mock::given(method("GET"))
        .and(path(format!("{V}/pods")))
        .respond_with(status(503, fixture("errors/busy.json")))
        .mount(&a.server)
        .await;
    let c = a
        .builder()
        .retry(RetryConfig {
            max_retries: 2,
            ..fast_retry()
        })
        .build()
        .unwrap();
    let err = c.list_pods(&ListParams::all()).await.unwrap_err();
    match &err {
        Error::RetriesExhausted { attempts, last, .. } => {
            assert_eq!(*attempts, 3);
            assert_eq!(last.kind(), ErrorKind::Busy);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.kind(), ErrorKind::Busy);
    assert_eq!(a.count("GET", &format!("{V}/pods")).await, 3);
}

#[tokio::test]
async fn a_wait_beyond_the_deadline_is_not_started() {
    let a = Array::start().await;
    Mock::given(method("GET"))
        .and(path(format!("{V}/pods")))
        .respond_with(rate_limited("retry-after", "30"))
        .mount(&a.server)
        .await;
    let c = a
        .builder()
        .retry(RetryConfig {
            max_elapsed: Duration::from_secs(2),
            ..fast_retry()
        })
        .build()
        .unwrap();
    let t = Instant::now();
    let err = c.list_pods(&ListParams::all()).await.unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(2));
    let api = err.as_api().unwrap();
    assert_eq!(api.kind, ErrorKind::RateLimited);
    assert_eq!(api.retry_after, Some(Duration::from_secs(30)));
    assert_eq!(api.message(), "API rate limit exceeded");
}

#[tokio::test]
async fn reads_are_retried_after_gateway_errors_and_timeouts() {
    let a = Array::start().await;
    fail_first(
        &a,
        "hosts",
        1,
        status(504, json!({"message": "Gateway Timeout"})),
    )
    .await;
    fail_first(
        &a,
        "host-groups",
        1,
        Echo(ResponseTemplate::new(200).set_delay(Duration::from_secs(3))),
    )
    .await;
    get(&a, "hosts", fixture("hosts/list.json")).await;
    get(&a, "host-groups", fixture("host_groups/list.json")).await;
    let c = a
        .builder()
        .request_timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    assert_eq!(c.list_hosts(&ListParams::all()).await.unwrap().len(), 2);
    assert_eq!(
        c.list_host_groups(&ListParams::all()).await.unwrap().len(),
        1
    );
    assert_eq!(a.count("GET", &format!("{V}/hosts")).await, 2);
    assert_eq!(a.count("GET", &format!("{V}/host-groups")).await, 2);
}

#[tokio::test]
async fn connection_refused_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let c = flasharray::RestArray::builder(format!("http://{addr}"))
        .allow_http(true)
        .api_token(secrecy::SecretString::from(API_TOKEN))
        .retry(RetryConfig {
            max_retries: 1,
            ..fast_retry()
        })
        .build()
        .unwrap();
    let err = c.get_array().await.unwrap_err();
    let Error::RetriesExhausted { last, .. } = &err else {
        panic!("{err:?}")
    };
    let Error::Transport(t) = last.as_ref() else {
        panic!("{last:?}")
    };
    assert!(!t.maybe_applied);
    assert_eq!(t.operation, "GET /api/api_version");
    assert!(t.request_id.is_some());
}

/// A name that does not exist fails at once, typed, instead of going through the
/// retry backoff (the `.invalid` TLD never resolves; a sandbox without a DNS server
/// answers "temporary failure", which the resolver retries once after 250 ms).
#[tokio::test]
async fn dns_not_found_is_final() {
    let c = flasharray::RestArray::builder("https://no-such-array.invalid")
        .api_token(secrecy::SecretString::from(API_TOKEN))
        .retry(RetryConfig {
            max_retries: 5,
            max_elapsed: Duration::from_secs(60),
            min_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(2),
        })
        .build()
        .unwrap();
    let started = Instant::now();
    let err = c.get_array().await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}: {err}",
        started.elapsed()
    );
    assert!(matches!(err, Error::Transport(_)), "not retried: {err:?}");
    assert_eq!(
        err.as_transport().unwrap().kind,
        flasharray::TransportErrorKind::Dns
    );
    assert!(
        err.to_string()
            .contains("cannot resolve no-such-array.invalid"),
        "{err}"
    );
}
