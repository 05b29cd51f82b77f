//! Writes whose answer is lost are verified by reading, never blindly replayed: the
//! REST client sends each write once, and `Settling` around it settles a lost answer.

use std::io;
use std::time::Duration;

use flasharray::models::VolumePost;
use flasharray::settle::WRITE_ROUNDS;
use flasharray::{ConnectionTarget, ErrorKind, FlashArray, Settling, VolumeName};
use serde_json::json;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::common::*;

const G: u64 = 1 << 30;

fn names() -> Vec<VolumeName> {
    vec!["px-new-0".parse().unwrap(), "px-new-1".parse().unwrap()]
}

fn body() -> VolumePost {
    VolumePost::default().with_provisioned(50 * G)
}

fn dropped(_: &Request) -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionReset, "connection dropped by test")
}

async fn posts(a: &Array) -> Vec<Option<String>> {
    a.api_requests()
        .await
        .into_iter()
        .filter(|r| r.method.as_str() == "POST")
        .map(|r| r.url.query().map(str::to_string))
        .collect()
}

/// 504 after the first volume was made: only the second is created again.
#[tokio::test]
async fn gateway_timeout_after_create_creates_only_what_is_missing() {
    let a = Array::start().await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/volumes")))
        .and(query_param("names", "px-new-0,px-new-1"))
        .respond_with(status(504, json!({"message": "Gateway Timeout"})))
        .expect(1)
        .mount(&a.server)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/volumes")))
        .and(query_param("names", "px-new-1"))
        .respond_with(ok(fixture("volumes/created_second.json")))
        .expect(1)
        .mount(&a.server)
        .await;
    // Re-read: one membership filter lists what exists, missing names and all (see
    // `flasharray::ext`); no `names=` read, which would fail on the missing one.
    Mock::given(method("GET"))
        .and(path(format!("{V}/volumes")))
        .and(query_param("filter", "name=('px-new-0','px-new-1')"))
        .respond_with(ok(fixture("volumes/existing_first.json")))
        .expect(1)
        .mount(&a.server)
        .await;
    let made = a
        .settling()
        .create_volumes(&names(), &body())
        .await
        .unwrap();
    let got: Vec<_> = made.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(got, ["px-new-0", "px-new-1"]);
    assert_eq!(
        posts(&a).await,
        [
            Some("names=px-new-0,px-new-1".to_string()),
            Some("names=px-new-1".to_string())
        ]
    );
}

/// The connection drops after the request was sent; both volumes exist: nothing is
/// sent again.
#[tokio::test]
async fn dropped_connection_after_create_is_resolved_by_reading() {
    let a = Array::start().await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/volumes")))
        .respond_with_err(dropped)
        .expect(1)
        .mount(&a.server)
        .await;
    get(&a, "volumes", fixture("volumes/existing_both.json")).await;
    let made = a
        .settling()
        .create_volumes(&names(), &body())
        .await
        .unwrap();
    assert_eq!(made.len(), 2);
}

#[tokio::test]
async fn timeout_after_create_is_resolved_by_reading() {
    let a = Array::start().await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/volumes")))
        .respond_with(Echo(
            ResponseTemplate::new(200)
                .set_body_json(fixture("volumes/created.json"))
                .set_delay(Duration::from_secs(3)),
        ))
        .expect(1)
        .mount(&a.server)
        .await;
    get(&a, "volumes", fixture("volumes/existing_both.json")).await;
    let c = Settling::new(
        a.builder()
            .request_timeout(Duration::from_millis(400))
            .build()
            .unwrap(),
    );
    assert_eq!(c.create_volumes(&names(), &body()).await.unwrap().len(), 2);
}

/// A same-named volume of another size: the client cannot tell, reports the original
/// error flagged `maybe_applied`, and sends nothing more.
#[tokio::test]
async fn a_conflicting_object_leaves_the_outcome_undecided() {
    let a = Array::start().await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/volumes")))
        .respond_with(status(502, json!({"message": "Bad Gateway"})))
        .expect(1)
        .mount(&a.server)
        .await;
    get(&a, "volumes", fixture("volumes/existing_other_size.json")).await;
    let one = vec!["px-new-0".parse().unwrap()];
    let err = a
        .settling()
        .create_volumes(&one, &body())
        .await
        .unwrap_err();
    assert!(err.maybe_applied(), "{err:?}");
    assert_eq!(err.as_api().unwrap().status, 502);
}

#[tokio::test]
async fn lost_eradication_of_a_gone_volume_is_done() {
    let a = Array::start().await;
    Mock::given(method("DELETE"))
        .and(path(format!("{V}/volumes")))
        .respond_with_err(dropped)
        .expect(1)
        .mount(&a.server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{V}/volumes")))
        .respond_with(status(400, fixture("errors/volume_not_found.json")))
        .mount(&a.server)
        .await;
    a.settling()
        .eradicate_volumes(&["old-scratch".parse().unwrap()])
        .await
        .unwrap();
}

#[tokio::test]
async fn lost_connection_create_is_found_on_the_array() {
    let a = Array::start().await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/connections")))
        .respond_with(status(504, json!({"message": "Gateway Timeout"})))
        .expect(1)
        .mount(&a.server)
        .await;
    get(&a, "connections", fixture("connections/list.json")).await;
    let target = ConnectionTarget::Host("hcp-mgmt-worker-01".parse().unwrap());
    let rows = a
        .settling()
        .create_connections(
            &target,
            &["px-tenant-a-node0-disk0".parse().unwrap()],
            Some(1),
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].lun, Some(1));
}

#[tokio::test]
async fn lost_patch_is_resent_only_when_not_applied() {
    let a = Array::start().await;
    Mock::given(method("PATCH"))
        .and(path(format!("{V}/volumes")))
        .respond_with(status(504, json!({"message": "Gateway Timeout"})))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&a.server)
        .await;
    let mut grown = fixture("volumes/existing_first.json");
    grown["items"][0]["provisioned"] = json!(100 * G);
    Mock::given(method("PATCH"))
        .and(path(format!("{V}/volumes")))
        .respond_with(ok(json!({"items": grown["items"].clone()})))
        .mount(&a.server)
        .await;
    // The re-read still shows the old size: the patch did not land.
    get(&a, "volumes", fixture("volumes/existing_first.json")).await;
    let patch = flasharray::models::VolumePatch::default().with_provisioned(100 * G);
    let v = a
        .settling()
        .patch_volumes(&["px-new-0".parse().unwrap()], &patch, false)
        .await
        .unwrap();
    assert_eq!(v[0].provisioned, 100 * G);
    assert_eq!(a.count("PATCH", &format!("{V}/volumes")).await, 2);
}

#[tokio::test]
async fn a_lost_token_creation_returns_the_token_the_array_holds() {
    let a = Array::start().await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/admins/api-tokens")))
        .respond_with_err(dropped)
        .expect(1)
        .mount(&a.server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{V}/admins/api-tokens")))
        .and(query_param("expose_api_token", "true"))
        .respond_with(ok(json!({
            "continuation_token": null, "more_items_remaining": false, "total_item_count": null,
            "items": fixture("admins/api_token_created.json")["items"].clone()
        })))
        .mount(&a.server)
        .await;
    let t = a
        .settling()
        .create_api_token("pxfa-tenant-a", Some(Duration::from_secs(86400)))
        .await
        .unwrap();
    assert_eq!(
        t.api_token.expose(),
        Some("2c9f4e1a-77b3-4d5e-9a10-0f6b8e2d4c31")
    );
}

#[tokio::test]
async fn writes_are_not_blindly_retried_on_other_errors() {
    let a = Array::start().await;
    Mock::given(method("POST"))
        .and(path(format!("{V}/volumes")))
        .respond_with(internal_error())
        .expect(1)
        .mount(&a.server)
        .await;
    let err = a
        .settling()
        .create_volumes(&names(), &body())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Other);
}

/// Every answer to the create is lost and the array never shows the volumes: the
/// create goes out [`WRITE_ROUNDS`] times in all through the one `Settling` layer;
/// the REST client alone sends it once and reports the lost answer.
#[tokio::test]
async fn a_lost_create_is_sent_at_most_write_rounds_times() {
    async fn sent(write: impl AsyncFnOnce(&Array) -> flasharray::Error) -> usize {
        let a = Array::start().await;
        Mock::given(method("POST"))
            .and(path(format!("{V}/volumes")))
            .respond_with(status(504, json!({"message": "Gateway Timeout"})))
            .mount(&a.server)
            .await;
        get(&a, "volumes", json!({"items": []})).await;
        let err = write(&a).await;
        assert!(err.maybe_applied(), "{err:?}");
        a.count("POST", &format!("{V}/volumes")).await
    }
    let rounds = usize::try_from(WRITE_ROUNDS).unwrap();
    let once = sent(async |a| {
        let rest = a.client();
        rest.create_volumes(&names(), &body()).await.unwrap_err()
    })
    .await;
    assert_eq!(once, 1, "the REST client alone never re-sends");
    let settled = sent(async |a| {
        let c = a.settling();
        c.create_volumes(&names(), &body()).await.unwrap_err()
    })
    .await;
    assert_eq!(settled, rounds);
}
