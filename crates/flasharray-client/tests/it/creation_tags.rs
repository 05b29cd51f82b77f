//! Creation tags: in the create body from REST 2.39 on, a separate `PUT tags/batch`
//! before it; and a lost create is only settled when the re-read shows the tags.

use flasharray::models::{HostGroupPost, TagBody, VolumeBatchPost, VolumePost};
use flasharray::{ErrorKind, FlashArray, HostGroupName, Settling, VolumeName};
use serde_json::{Value, json};
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::common::*;

const G: u64 = 1 << 30;

fn owner_tags() -> Vec<TagBody> {
    vec![
        TagBody::new("pxfa.io", "managed-by", "pxfa"),
        TagBody::new("pxfa.io", "tenant", "t1"),
    ]
}

fn tags_json() -> Value {
    json!([
        {"namespace": "pxfa.io", "key": "managed-by", "value": "pxfa", "copyable": false},
        {"namespace": "pxfa.io", "key": "tenant", "value": "t1", "copyable": false},
    ])
}

fn names() -> Vec<VolumeName> {
    vec!["px-new-0".parse().unwrap(), "px-new-1".parse().unwrap()]
}

fn body() -> VolumePost {
    VolumePost::default()
        .with_provisioned(50 * G)
        .with_tags(owner_tags())
}

/// An array offering REST up to `2.{minor}` and accepting the test token there.
async fn array_at(minor: u32) -> Array {
    let a = Array::bare().await;
    a.versions(json!({"version": ["1.19", "2.0", "2.26", format!("2.{minor}")]}))
        .await;
    Mock::given(method("POST"))
        .and(path(format!("/api/2.{minor}/login")))
        .and(header("api-token", API_TOKEN))
        .respond_with(Echo(
            ResponseTemplate::new(200)
                .insert_header("x-auth-token", SESSION)
                .set_body_json(fixture("login.json")),
        ))
        .mount(&a.server)
        .await;
    a
}

fn body_of(r: &Request) -> Value {
    serde_json::from_slice(&r.body).expect("JSON body")
}

#[tokio::test]
async fn at_2_39_the_tags_travel_in_the_create_body() {
    let a = array_at(39).await;
    Mock::given(method("POST"))
        .and(path("/api/2.39/volumes"))
        .and(query_param("names", "px-new-0,px-new-1"))
        .and(body_json(
            json!({"provisioned": 50 * G, "tags": tags_json()}),
        ))
        .respond_with(ok(fixture("volumes/created.json")))
        .expect(1)
        .mount(&a.server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/2.39/host-groups"))
        .and(query_param("names", "hcp-mgmt"))
        .and(body_json(json!({"tags": tags_json()})))
        .respond_with(ok(
            json!({"items": [fixture("host_groups/list.json")["items"][0]]}),
        ))
        .expect(1)
        .mount(&a.server)
        .await;
    let c = a.builder().build().unwrap();
    c.create_volumes(&names(), &body()).await.unwrap();
    let g: HostGroupName = "hcp-mgmt".parse().unwrap();
    c.create_host_groups(
        std::slice::from_ref(&g),
        &HostGroupPost::default().with_tags(owner_tags()),
    )
    .await
    .unwrap();
    let calls = a.api_requests().await;
    assert_eq!(calls.len(), 2, "no separate tag call: {calls:?}");
    assert!(calls.iter().all(|r| !r.url.path().contains("/tags")));
}

// At 2.36 (host-group tags came with 2.34, creation tags with 2.39).
#[tokio::test]
async fn before_2_39_the_objects_are_tagged_in_a_second_call() {
    let a = array_at(36).await;
    Mock::given(method("POST"))
        .and(path("/api/2.36/volumes"))
        .and(query_param("names", "px-new-0,px-new-1"))
        .and(body_json(json!({"provisioned": 50 * G})))
        .respond_with(ok(fixture("volumes/created.json")))
        .expect(1)
        .mount(&a.server)
        .await;
    Mock::given(method("PUT"))
        .and(path("/api/2.36/volumes/tags/batch"))
        .and(query_param("resource_names", "px-new-0,px-new-1"))
        .respond_with(ok(json!({"items": []})))
        .expect(1)
        .mount(&a.server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/2.36/host-groups"))
        .and(query_param("names", "hcp-mgmt"))
        .respond_with(ok(
            json!({"items": [fixture("host_groups/list.json")["items"][0]]}),
        ))
        .expect(1)
        .mount(&a.server)
        .await;
    Mock::given(method("PUT"))
        .and(path("/api/2.36/host-groups/tags/batch"))
        .and(query_param("resource_names", "hcp-mgmt"))
        .respond_with(ok(json!({"items": []})))
        .expect(1)
        .mount(&a.server)
        .await;
    let c = a.builder().build().unwrap();
    c.create_volumes(&names(), &body()).await.unwrap();
    let g: HostGroupName = "hcp-mgmt".parse().unwrap();
    c.create_host_groups(
        std::slice::from_ref(&g),
        &HostGroupPost::default().with_tags(owner_tags()),
    )
    .await
    .unwrap();

    let calls = a.api_requests().await;
    let order: Vec<String> = calls
        .iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect();
    assert_eq!(
        order,
        [
            "POST /api/2.36/volumes",
            "PUT /api/2.36/volumes/tags/batch",
            "POST /api/2.36/host-groups",
            "PUT /api/2.36/host-groups/tags/batch",
        ]
    );
    // The old array never sees `tags` in a create body (it would refuse the field).
    assert!(body_of(&calls[0]).get("tags").is_none());
    assert!(
        calls[2].body.is_empty(),
        "a group create keeps its empty body"
    );
    // Every tag on every created object.
    let put = body_of(&calls[1]);
    let mut got: Vec<(String, String, String)> = put
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["resource"]["name"].as_str().unwrap().to_string(),
                t["namespace"].as_str().unwrap().to_string(),
                t["key"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("px-new-0".into(), "pxfa.io".into(), "managed-by".into()),
            ("px-new-0".into(), "pxfa.io".into(), "tenant".into()),
            ("px-new-1".into(), "pxfa.io".into(), "managed-by".into()),
            ("px-new-1".into(), "pxfa.io".into(), "tenant".into()),
        ]
    );
}

/// The lost create's re-read: volumes of the asked size that carry the asked tags.
async fn lost_create(tags_on_array: Value) -> (Array, flasharray::Result<()>) {
    let a = array_at(39).await;
    Mock::given(method("POST"))
        .and(path("/api/2.39/volumes"))
        .respond_with(status(504, json!({"message": "Gateway Timeout"})))
        .expect(1)
        .mount(&a.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/2.39/volumes"))
        .and(query_param("filter", "name=('px-new-0','px-new-1')"))
        .respond_with(ok(fixture("volumes/existing_both.json")))
        .mount(&a.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/2.39/volumes/tags"))
        .respond_with(ok(json!({"items": tags_on_array})))
        .expect(1)
        .mount(&a.server)
        .await;
    let c = Settling::new(a.builder().build().unwrap());
    let r = c.create_volumes(&names(), &body()).await.map(drop);
    (a, r)
}

fn tag_rows(names: &[&str]) -> Value {
    let rows: Vec<Value> = names
        .iter()
        .flat_map(|n| {
            [("managed-by", "pxfa"), ("tenant", "t1")].map(|(k, v)| {
                json!({"namespace": "pxfa.io", "key": k, "value": v, "copyable": false,
                       "resource": {"name": n}})
            })
        })
        .collect();
    Value::Array(rows)
}

#[tokio::test]
async fn a_lost_create_is_settled_when_the_objects_show_their_tags() {
    let (a, r) = lost_create(tag_rows(&["px-new-0", "px-new-1"])).await;
    r.expect("the re-read shows both volumes with their tags");
    assert_eq!(a.count("POST", "/api/2.39/volumes").await, 1, "no replay");
}

#[tokio::test]
async fn a_same_named_volume_without_the_tags_is_not_taken_for_ours() {
    let (a, r) = lost_create(tag_rows(&["px-new-0"])).await;
    let e = r.expect_err("px-new-1 has no tags: someone else's volume");
    assert!(e.maybe_applied(), "{e}");
    assert_ne!(e.kind(), ErrorKind::AlreadyExists);
    assert_eq!(a.count("POST", "/api/2.39/volumes").await, 1, "no replay");
}

/// Two volumes of different sizes, each with the owner tags and its own index.
fn batch_items() -> Vec<VolumeBatchPost> {
    [("px-new-0", 50 * G, "0"), ("px-new-1", 10 * G, "1")]
        .into_iter()
        .map(|(name, size, index)| {
            let mut item = VolumeBatchPost::new(name.parse().unwrap(), size);
            item.tags = owner_tags();
            item.tags.push(TagBody::new("pxfa.io", "disk-index", index));
            item
        })
        .collect()
}

fn index_tag(i: &str) -> Value {
    json!({"namespace": "pxfa.io", "key": "disk-index", "value": i, "copyable": false})
}

#[tokio::test]
async fn at_2_32_volumes_are_born_with_their_own_tags_in_one_batch() {
    let a = array_at(32).await;
    let mut tags0 = tags_json().as_array().unwrap().clone();
    tags0.push(index_tag("0"));
    let mut tags1 = tags_json().as_array().unwrap().clone();
    tags1.push(index_tag("1"));
    Mock::given(method("POST"))
        .and(path("/api/2.32/volumes/batch"))
        .and(body_json(json!([
            {"name": "px-new-0", "provisioned": 50 * G, "tags": tags0},
            {"name": "px-new-1", "provisioned": 10 * G, "tags": tags1},
        ])))
        .respond_with(ok(fixture("volumes/created.json")))
        .expect(1)
        .mount(&a.server)
        .await;
    let c = a.builder().build().unwrap();
    let made = c.create_volumes_batch(&batch_items()).await.unwrap();
    assert_eq!(made.len(), 2);
    let calls = a.api_requests().await;
    assert_eq!(calls.len(), 1, "one call, no tag round: {calls:?}");
}

#[tokio::test]
async fn before_2_32_a_batch_is_one_create_per_size_then_one_tag_call() {
    let a = array_at(31).await;
    for (name, size) in [("px-new-0", 50 * G), ("px-new-1", 10 * G)] {
        let mut v = fixture("volumes/created.json")["items"][0].clone();
        v["name"] = json!(name);
        v["provisioned"] = json!(size);
        Mock::given(method("POST"))
            .and(path("/api/2.31/volumes"))
            .and(query_param("names", name))
            .and(body_json(json!({"provisioned": size})))
            .respond_with(ok(json!({"items": [v]})))
            .expect(1)
            .mount(&a.server)
            .await;
    }
    Mock::given(method("PUT"))
        .and(path("/api/2.31/volumes/tags/batch"))
        .respond_with(ok(json!({"items": []})))
        .expect(1)
        .mount(&a.server)
        .await;
    let c = a.builder().build().unwrap();
    let made = c.create_volumes_batch(&batch_items()).await.unwrap();
    assert_eq!(
        made.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
        ["px-new-0", "px-new-1"],
        "request order"
    );
    let calls = a.api_requests().await;
    assert!(
        calls
            .iter()
            .all(|r| !r.url.path().ends_with("/batch") || r.url.path().ends_with("tags/batch"))
    );
    let put = calls.iter().find(|r| r.method.as_str() == "PUT").unwrap();
    let mut got: Vec<String> = body_of(put)
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            format!(
                "{}:{}={}",
                t["resource"]["name"].as_str().unwrap(),
                t["key"].as_str().unwrap(),
                t["value"].as_str().unwrap()
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            "px-new-0:disk-index=0",
            "px-new-0:managed-by=pxfa",
            "px-new-0:tenant=t1",
            "px-new-1:disk-index=1",
            "px-new-1:managed-by=pxfa",
            "px-new-1:tenant=t1",
        ]
    );
}

#[tokio::test]
async fn a_lost_batch_resends_only_the_volumes_the_array_does_not_show_complete() {
    let a = array_at(32).await;
    let items = batch_items();
    Mock::given(method("POST"))
        .and(path("/api/2.32/volumes/batch"))
        .and(body_json(serde_json::to_value(&items).unwrap()))
        .respond_with(status(504, json!({"message": "Gateway Timeout"})))
        .expect(1)
        .mount(&a.server)
        .await;
    let mut second = fixture("volumes/created.json")["items"][1].clone();
    second["provisioned"] = json!(10 * G);
    Mock::given(method("POST"))
        .and(path("/api/2.32/volumes/batch"))
        .and(body_json(serde_json::to_value(&items[1..]).unwrap()))
        .respond_with(ok(json!({"items": [second]})))
        .expect(1)
        .mount(&a.server)
        .await;
    // The re-read: px-new-0 exists, of its size, with all its tags; px-new-1 does not.
    let first = fixture("volumes/created.json")["items"][0].clone();
    Mock::given(method("GET"))
        .and(path("/api/2.32/volumes"))
        .respond_with(ok(json!({"items": [first]})))
        .mount(&a.server)
        .await;
    let mut tags = tag_rows(&["px-new-0"]).as_array().unwrap().clone();
    let mut index = index_tag("0");
    index["resource"] = json!({"name": "px-new-0"});
    tags.push(index);
    Mock::given(method("GET"))
        .and(path("/api/2.32/volumes/tags"))
        .respond_with(ok(json!({"items": tags})))
        .mount(&a.server)
        .await;
    let c = Settling::new(a.builder().build().unwrap());
    let made = c.create_volumes_batch(&items).await.unwrap();
    assert_eq!(
        made.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
        ["px-new-0", "px-new-1"]
    );
}

/// Before 2.39 the create and its tags are two calls, so the answer lost may leave
/// the volumes made and untagged: `Settling` takes them as done and puts their tags,
/// without creating them again.
#[tokio::test]
async fn before_2_39_a_lost_create_found_untagged_is_tagged_not_recreated() {
    let a = array_at(26).await;
    Mock::given(method("POST"))
        .and(path("/api/2.26/volumes"))
        .respond_with(status(504, json!({"message": "Gateway Timeout"})))
        .expect(1)
        .mount(&a.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/2.26/volumes"))
        .and(query_param("filter", "name=('px-new-0','px-new-1')"))
        .respond_with(ok(fixture("volumes/existing_both.json")))
        .mount(&a.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/2.26/volumes/tags"))
        .respond_with(ok(json!({"items": []})))
        .expect(1)
        .mount(&a.server)
        .await;
    Mock::given(method("PUT"))
        .and(path("/api/2.26/volumes/tags/batch"))
        .respond_with(ok(json!({"items": tag_rows(&["px-new-0", "px-new-1"])})))
        .expect(1)
        .mount(&a.server)
        .await;
    let c = Settling::new(a.builder().build().unwrap());
    let made = c.create_volumes(&names(), &body()).await.unwrap();
    assert_eq!(made.len(), 2);
    let put = a
        .api_requests()
        .await
        .into_iter()
        .find(|r| r.method.as_str() == "PUT")
        .unwrap();
    assert_eq!(
        body_of(&put).as_array().unwrap().len(),
        4,
        "both tags on both volumes"
    );
}
