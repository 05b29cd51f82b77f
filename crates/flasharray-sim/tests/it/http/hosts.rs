//! `/hosts`, `/host-groups` and `/connections`, with LUNs.

use reqwest::Method;
use serde_json::json;

use crate::support::https::{error, logged_in};

#[tokio::test]
async fn hosts_groups_connections_and_luns() {
    let (s, t) = logged_in().await;
    let r = s
        .post_ok(
            &t,
            "/hosts?names=h1",
            json!({"wwns": ["21:00:f4:c7:aa:00:27:06"]}),
        )
        .await;
    assert_eq!(r.body["items"][0]["wwns"], json!(["2100F4C7AA002706"]));
    assert_eq!(r.body["items"][0]["host_group"], json!({"name": null}));
    s.post_ok(
        &t,
        "/hosts?names=h2",
        json!({"iqns": ["iqn.2020-01.io.pxfa:h2"]}),
    )
    .await;
    // An initiator belongs to one host.
    let r = s
        .post(&t, "/hosts?names=h3", json!({"wwns": ["2100F4C7AA002706"]}))
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

    s.post(
        &t,
        "/volumes?names=pv1,pv2,sv1",
        json!({"provisioned": 1048576}),
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
    let r = s.delete(&t, "/hosts?names=h1").await;
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
        .delete(&t, "/connections?host_names=h1&volume_names=pv1,pv2")
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = s
        .delete(&t, "/connections?host_names=h1&volume_names=pv1")
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
        .delete(
            &t,
            "/hosts/tags?resource_names=h2&keys=tenant&namespaces=pxfa.io",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = s.get(&t, "/hosts/tags").await;
    assert_eq!(r.body["items"].as_array().unwrap().len(), 1);
}
