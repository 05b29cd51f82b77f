//! Error bodies, classes, operations and request ids.

use std::collections::HashSet;

use flasharray::{Error, ErrorKind, FlashArray, HostName, ListParams, VolumeName};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::common::*;

async fn answer(a: &Array, m: &str, rel: &str, code: u16, body: Value) {
    Mock::given(method(m))
        .and(path(format!("{V}/{rel}")))
        .respond_with(status(code, body))
        .mount(&a.server)
        .await;
}

#[tokio::test]
async fn each_error_class() {
    let a = Array::start().await;
    answer(
        &a,
        "GET",
        "volumes",
        400,
        fixture("errors/volume_not_found.json"),
    )
    .await;
    answer(
        &a,
        "POST",
        "volumes",
        400,
        fixture("errors/volume_exists.json"),
    )
    .await;
    answer(
        &a,
        "DELETE",
        "hosts",
        400,
        fixture("errors/host_has_connections.json"),
    )
    .await;
    answer(&a, "DELETE", "pods", 400, fixture("errors/safemode.json")).await;
    answer(&a, "GET", "hosts", 403, fixture("errors/forbidden.json")).await;
    answer(
        &a,
        "PATCH",
        "volumes",
        400,
        json!({"errors": [{"context": "px-new-0", "message": "Volume has been destroyed."}]}),
    )
    .await;
    let c = a
        .builder()
        .retry(flasharray::RetryConfig::none())
        .build()
        .unwrap();

    let e = c
        .list_volumes(&ListParams::names(["nope"]))
        .await
        .unwrap_err();
    let api = e.as_api().unwrap();
    assert_eq!(api.kind, ErrorKind::NotFound);
    assert_eq!(api.status, 400);
    assert_eq!(api.context(), Some("nope"));
    // The operation names the path, never the query.
    assert_eq!(api.operation, "GET /api/2.26/volumes");
    assert!(
        e.to_string().starts_with(
            "GET /api/2.26/volumes: nope: Volume does not exist. (HTTP 400, request id "
        ),
        "{e}"
    );

    let v: VolumeName = "px-new-0".parse().unwrap();
    let e = c
        .create_volumes(std::slice::from_ref(&v), &Default::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
    assert!(!e.maybe_applied());

    let h: HostName = "hcp-mgmt-worker-01".parse().unwrap();
    assert_eq!(
        c.delete_hosts(&[h]).await.unwrap_err().kind(),
        ErrorKind::InUse
    );
    assert_eq!(
        c.eradicate_pods(&["tenant-a".parse().unwrap()], true)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::EradicationRefused
    );
    let e = c.list_hosts(&ListParams::all()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Forbidden);
    assert_eq!(e.as_api().unwrap().message(), "Forbidden");
    let patch = flasharray::models::VolumePatch::default().with_provisioned(1 << 30);
    assert_eq!(
        c.patch_volumes(&[v], &patch, false)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::Destroyed
    );
}

#[tokio::test]
async fn non_json_error_body() {
    let a = Array::start().await;
    Mock::given(method("GET"))
        .and(path(format!("{V}/pods")))
        .respond_with(ResponseTemplate::new(500).set_body_string("<html>oops</html>"))
        .mount(&a.server)
        .await;
    let e = a.client().list_pods(&ListParams::all()).await.unwrap_err();
    let api = e.as_api().unwrap();
    assert_eq!(api.kind, ErrorKind::Other);
    assert!(api.message().contains("not a JSON error document"), "{e}");
}

#[tokio::test]
async fn decode_failure_names_the_field() {
    let a = Array::start().await;
    let mut page = fixture("volumes/one.json");
    page["items"][0]["provisioned"] = json!("lots");
    get(&a, "volumes", page).await;
    let e = a
        .client()
        .list_volumes(&ListParams::all())
        .await
        .unwrap_err();
    match &e {
        Error::Decode {
            path,
            operation,
            message,
        } => {
            assert_eq!(path, "items[0].provisioned");
            assert_eq!(operation, "GET /api/2.26/volumes");
            assert!(!message.contains("lots"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn every_request_carries_a_fresh_request_id_echoed_into_errors() {
    let a = Array::start().await;
    fail_first(&a, "volumes", 1, status(503, fixture("errors/busy.json"))).await;
    answer(
        &a,
        "GET",
        "volumes",
        400,
        fixture("errors/volume_not_found.json"),
    )
    .await;
    let e = a
        .client()
        .list_volumes(&ListParams::names(["nope"]))
        .await
        .unwrap_err();
    let reqs = a.server.received_requests().await.unwrap();
    let ids: Vec<String> = reqs
        .iter()
        .map(|r| {
            r.headers
                .get("x-request-id")
                .unwrap()
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    // version, login, 503, 400: four distinct v4 uuids.
    assert_eq!(ids.len(), 4);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 4);
    for id in &ids {
        let u = uuid::Uuid::parse_str(id).unwrap();
        assert_eq!(u.get_version_num(), 4);
    }
    assert_eq!(e.request_id(), Some(ids[3].as_str()));
}

#[tokio::test]
async fn without_an_echo_the_sent_id_is_reported() {
    let a = Array::start().await;
    Mock::given(method("GET"))
        .and(path(format!("{V}/pods")))
        .respond_with(
            ResponseTemplate::new(400).set_body_json(fixture("errors/volume_not_found.json")),
        )
        .mount(&a.server)
        .await;
    let e = a.client().list_pods(&ListParams::all()).await.unwrap_err();
    let reqs = a.api_requests().await;
    let sent = reqs[0]
        .headers
        .get("x-request-id")
        .unwrap()
        .to_str()
        .unwrap();
    assert_eq!(e.request_id(), Some(sent));
}

#[tokio::test]
async fn refused_before_sending() {
    let a = Array::bare().await;
    let c = a.client();
    let e = c
        .create_volumes(&[], &Default::default())
        .await
        .unwrap_err();
    assert!(e.is_invalid_input());
    let target = flasharray::ConnectionTarget::Host("h1".parse().unwrap());
    let vols: Vec<VolumeName> = vec!["a".parse().unwrap(), "b".parse().unwrap()];
    let e = c
        .create_connections(&target, &vols, Some(5))
        .await
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    assert!(a.server.received_requests().await.unwrap().is_empty());
}

/// Transport failures carry a kind callers can match on, without reading the text.
#[tokio::test]
async fn transport_failures_are_classified() {
    use flasharray::{RestArray, RetryConfig, TransportErrorKind};
    use secrecy::SecretString;

    let kind_of = |e: &Error| e.as_transport().map(|t| t.kind);
    // Nothing listens on a port that was just freed.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let refused = plain_client(format!("http://127.0.0.1:{port}"))
        .get_array()
        .await
        .unwrap_err();
    assert_eq!(
        kind_of(&refused),
        Some(TransportErrorKind::Connect),
        "{refused:?}"
    );
    assert!(!refused.maybe_applied());

    // `.invalid` never resolves (RFC 6761).
    let unresolved = plain_client("http://array1.pxfa.invalid")
        .get_array()
        .await
        .unwrap_err();
    assert_eq!(
        kind_of(&unresolved),
        Some(TransportErrorKind::Dns),
        "{unresolved:?}"
    );

    // An array that accepts the connection and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    let _held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            open.push(s);
        }
    });
    let timed_out = RestArray::builder(format!("http://{addr}"))
        .allow_http(true)
        .api_token(SecretString::from(API_TOKEN))
        .request_timeout(std::time::Duration::from_millis(200))
        .retry(RetryConfig::none())
        .build()
        .unwrap()
        .get_array()
        .await
        .unwrap_err();
    assert_eq!(
        kind_of(&timed_out),
        Some(TransportErrorKind::Timeout),
        "{timed_out:?}"
    );
    assert!(timed_out.as_transport().unwrap().is_timeout());
}
