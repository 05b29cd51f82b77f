//! Continuation tokens, offset paging with sort, limits, streaming.

use flasharray::{FlashArray, ListParams};
use futures_util::TryStreamExt;
use wiremock::matchers::{method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockBuilder};

use crate::common::*;

fn volumes_get() -> MockBuilder {
    Mock::given(method("GET")).and(path(format!("{V}/volumes")))
}

async fn three_pages(a: &Array) {
    volumes_get()
        .and(query_param_is_missing("continuation_token"))
        .and(query_param("limit", "2"))
        .respond_with(ok(fixture("volumes/page1.json")))
        .mount(&a.server)
        .await;
    volumes_get()
        .and(query_param("continuation_token", "Y29udGludWF0aW9uOjI="))
        .and(query_param("limit", "2"))
        .respond_with(ok(fixture("volumes/page2.json")))
        .mount(&a.server)
        .await;
    volumes_get()
        .and(query_param("continuation_token", "Y29udGludWF0aW9uOjQ="))
        .and(query_param("limit", "2"))
        .respond_with(ok(fixture("volumes/page3.json")))
        .mount(&a.server)
        .await;
}

#[tokio::test]
async fn list_follows_continuation_tokens() {
    let a = Array::start().await;
    three_pages(&a).await;
    let c = a.client();
    let all = c
        .list_volumes(&ListParams::all().page_size(2))
        .await
        .unwrap();
    let names: Vec<_> = all.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "px-tenant-a-node0-disk0",
            "px-tenant-a-node1-disk0",
            "px-tenant-a-node2-disk0",
            "tenant-a::px-data01",
            "old-scratch"
        ]
    );
    assert_eq!(all[3].pod.name.as_deref(), Some("tenant-a"));
    assert!(all[4].destroyed);
    assert_eq!(all[4].time_remaining, Some(86400000));
    // Token values are percent-encoded like every other value.
    let reqs = a.api_requests().await;
    assert_eq!(reqs.len(), 3);
    assert_eq!(
        reqs[1].url.query(),
        Some("limit=2&continuation_token=Y29udGludWF0aW9uOjI%3D")
    );
}

#[tokio::test]
async fn stream_yields_the_same_items_page_by_page() {
    let a = Array::start().await;
    three_pages(&a).await;
    let c = a.client();
    let mut s = c.volume_stream(ListParams::all().page_size(2));
    let first = s.try_next().await.unwrap().unwrap();
    assert_eq!(first.name, "px-tenant-a-node0-disk0");
    // Lazy: only the first page has been fetched so far.
    assert_eq!(a.api_requests().await.len(), 1);
    let rest: Vec<_> = s.try_collect().await.unwrap();
    assert_eq!(rest.len(), 4);
    assert_eq!(a.api_requests().await.len(), 3);
}

#[tokio::test]
async fn limit_stops_early_and_shrinks_the_last_request() {
    let a = Array::start().await;
    three_pages(&a).await;
    volumes_get()
        .and(query_param("continuation_token", "Y29udGludWF0aW9uOjI="))
        .and(query_param("limit", "1"))
        .respond_with(ok(fixture("volumes/page2.json")))
        .mount(&a.server)
        .await;
    let c = a.client();
    let params = ListParams {
        limit: Some(3),
        ..ListParams::all().page_size(2)
    };
    let v = c.list_volumes(&params).await.unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(a.api_requests().await.len(), 2);
}

#[tokio::test]
async fn sorted_listing_pages_by_offset() {
    let a = Array::start().await;
    let mut p1 = fixture("volumes/page1.json");
    p1["continuation_token"] = serde_json::Value::Null;
    let mut p2 = fixture("volumes/page3.json");
    p2["more_items_remaining"] = false.into();
    volumes_get()
        .and(query_param("sort", "name-"))
        .and(query_param_is_missing("offset"))
        .respond_with(ok(p1))
        .mount(&a.server)
        .await;
    volumes_get()
        .and(query_param("sort", "name-"))
        .and(query_param("offset", "2"))
        .respond_with(ok(p2))
        .mount(&a.server)
        .await;
    let params = ListParams {
        sort: vec!["name-".into()],
        ..ListParams::all().page_size(2)
    };
    assert_eq!(a.client().list_volumes(&params).await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_repeated_token_is_an_error_not_a_loop() {
    let a = Array::start().await;
    volumes_get()
        .respond_with(ok(fixture("volumes/page1.json")))
        .mount(&a.server)
        .await;
    let err = a
        .client()
        .list_volumes(&ListParams::all().page_size(2))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("continuation token"), "{err}");
}

#[tokio::test]
async fn selection_parameters_are_sent_sdk_style() {
    let a = Array::start().await;
    volumes_get()
        .respond_with(ok(fixture("volumes/one.json")))
        .mount(&a.server)
        .await;
    let params = ListParams {
        names: vec!["tenant-a::px-data01".into(), "vg1/v2".into()],
        filter: Some("name='px-*'".into()),
        destroyed: Some(false),
        ..ListParams::default()
    };
    a.client().list_volumes(&params).await.unwrap();
    let reqs = a.api_requests().await;
    assert_eq!(
        reqs[0].url.query(),
        Some(
            "names=tenant-a%3A%3Apx-data01,vg1/v2&filter=name%3D%27px-%2A%27&destroyed=false&limit=1000"
        )
    );
}
