//! `/volumes` and `/pods`: lifecycle, exact errors, filters, percent-encoded names.

use reqwest::Method;
use serde_json::json;

use crate::support::https::{error, logged_in, names, start};

#[tokio::test]
async fn volumes_lifecycle_with_exact_errors() {
    let (s, t) = logged_in().await;
    let r = s
        .post_ok(
            &t,
            "/volumes?names=v1,V2,v3",
            json!({"provisioned": 1048576}),
        )
        .await;
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
        .post(&t, "/volumes?names=V1", json!({"provisioned": 1048576}))
        .await;
    assert_eq!(
        (r.status, r.body),
        error(400, "V1", "Volume already exists.")
    );
    let r = s.delete(&t, "/volumes?names=v1").await;
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
        .patch(&t, "/volumes?names=v1", json!({"provisioned": 2097152}))
        .await;
    assert_eq!(r.body["items"][0]["provisioned"], 2097152);
    let r = s
        .patch(&t, "/volumes?names=v1", json!({"provisioned": 1048576}))
        .await;
    assert_eq!(r.status, 400, "{}", r.raw);
    let r = s
        .patch(
            &t,
            "/volumes?names=v1&truncate=true",
            json!({"provisioned": 1048576}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = s
        .patch(&t, "/volumes?names=V2", json!({"name": "v2new"}))
        .await;
    assert_eq!(names(&r.body), ["v2new"]);
    let r = s
        .patch(&t, "/volumes?names=v3", json!({"destroyed": true}))
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
        .patch(&t, "/volumes?names=v3", json!({"destroyed": false}))
        .await;
    assert_eq!(r.body["items"][0]["destroyed"], false);
    s.patch(&t, "/volumes?names=v3", json!({"destroyed": true}))
        .await;
    let r = s.delete(&t, "/volumes?names=v3").await;
    assert_eq!(r.status, 200);
    assert!(r.raw.is_empty(), "DELETE answers with an empty body");
    assert_eq!(s.get(&t, "/volumes?names=v3").await.status, 400);

    // ids address volumes too.
    let id = s.get(&t, "/volumes?names=v1").await.body["items"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = s
        .patch(
            &t,
            &format!("/volumes?ids={id}"),
            json!({"destroyed": true}),
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
        .post(
            &t,
            "/volumes?names=x1",
            json!({"subtype": "protocol_endpoint"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["errors"][0]["context"], "subtype");
    let r = s.get(&t, "/no-such-thing").await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn filters_pods_and_percent_encoded_names() {
    let (s, t) = logged_in().await;
    let r = s
        .post_ok(&t, "/pods?names=p1", json!({"quota_limit": 1073741824}))
        .await;
    assert_eq!(r.body["items"][0]["quota_limit"], 1073741824);
    let r = s
        .post(
            &t,
            "/volumes?names=p1%3A%3Adata,px-a,px-b",
            json!({"provisioned": 1048576}),
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
        .patch(&t, "/pods?names=p1", json!({"destroyed": true}))
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

/// `POST /volumes/batch` in the SDK's shape (a list of `VolumeBatchPost`): each item
/// its own size and tags, answered in request order as full volumes; refused items
/// name their field or volume and create nothing; absent below REST 2.32.
#[tokio::test]
async fn volumes_batch_route() {
    let s = start().await;
    let t = s.login().await;
    let tag =
        |k: &str, v: &str| json!({"namespace": "pxfa.io", "key": k, "value": v, "copyable": false});
    let body = json!([
        {"name": "b2", "provisioned": 2147483648u64, "tags": [tag("disk-index", "2")]},
        {"name": "b1", "provisioned": 1073741824u64, "tags": [tag("disk-index", "1")]},
    ]);
    let r = s
        .call(&t, Method::POST, "/volumes/batch", Some(body.clone()))
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(names(&r.body), ["b2", "b1"]);
    assert_eq!(r.body["items"][0]["provisioned"], 2147483648u64);
    assert!(
        r.body["items"][0]["context"].is_object(),
        "completed like /volumes answers: {}",
        r.raw
    );
    let r = s.get(&t, "/volumes/tags?resource_names=b1").await;
    assert_eq!(r.body["items"][0]["key"], "disk-index");
    assert_eq!(r.body["items"][0]["value"], "1");

    // The same body again: b2 is taken, nothing is created.
    let r = s.call(&t, Method::POST, "/volumes/batch", Some(body)).await;
    assert_eq!(
        (r.status, r.body),
        error(400, "b2", "Volume already exists.")
    );
    let unknown = json!([{"name": "b3", "qos": {"iops_limit": 100}}]);
    let r = s
        .call(&t, Method::POST, "/volumes/batch", Some(unknown))
        .await;
    assert_eq!(r.status, 400, "{}", r.raw);
    assert_eq!(r.body["errors"][0]["context"], "qos");
    let r = s
        .call(
            &t,
            Method::POST,
            "/volumes/batch",
            Some(json!({"name": "b3"})),
        )
        .await;
    assert_eq!(r.status, 400, "an object is not a list: {}", r.raw);
    let r = s
        .call(
            &t,
            Method::POST,
            "/volumes/batch",
            Some(json!([{"name": "ok1"}, {"name": "bad name"}])),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.raw);
    assert_eq!(r.body["errors"][0]["context"], "bad name");
    assert_eq!(
        s.get(&t, "/volumes").await.body["items"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // REST 2.31 has no batch route.
    let r = s
        .send(
            Method::POST,
            "/api/2.31/volumes/batch",
            Some(&t),
            Some(json!([{"name": "b9"}])),
        )
        .await
        .unwrap();
    assert_eq!(r.status, 404, "{}", r.raw);
}
