//! What a request can smuggle in (issue #28): filters built to exhaust the stack or
//! the CPU, and REST versions the array does not serve. Each gets the array's error
//! answer, and the simulator keeps serving.

use flasharray::{Error, FlashArray, ListParams};
use flasharray_mock::{Filter, MockArray};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::https::{error, logged_in, start_with};

/// Percent-encodes every byte but ASCII letters and digits.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Filters that used to abort the simulator (stack overflow) or cost unbounded
/// work, each small enough to travel in a URL.
fn hostile() -> Vec<(&'static str, String, &'static str)> {
    vec![
        ("( x 5000", "(".repeat(5000), "levels deep"),
        ("not( x 3000", "not(".repeat(3000), "levels deep"),
        (
            "balanced ( x 3000",
            "(".repeat(3000) + "name='x'" + &")".repeat(3000),
            "levels deep",
        ),
        (
            "a flat chain one term too long",
            "a and ".repeat(Filter::MAX_TERMS) + "a",
            "terms",
        ),
    ]
}

#[tokio::test]
async fn hostile_filters_get_400_and_the_simulator_keeps_serving() {
    let (s, t) = logged_in().await;
    s.post_ok(&t, "/volumes?names=kept", json!({"provisioned": 1 << 20}))
        .await;
    for (what, filter, why) in hostile() {
        for endpoint in ["/volumes", "/hosts", "/pods", "/hardware"] {
            let r = s
                .get(&t, &format!("{endpoint}?filter={}", encode(&filter)))
                .await;
            assert_eq!(
                r.status,
                StatusCode::BAD_REQUEST,
                "{what} on {endpoint}: {:.300}",
                r.raw
            );
            let message = r.body["errors"][0]["message"].as_str().unwrap_or_default();
            assert_eq!(
                r.body["errors"][0]["context"], "filter",
                "{what}: {}",
                r.raw
            );
            assert!(message.starts_with("Invalid filter: "), "{what}: {message}");
            assert!(message.contains(why), "{what}: {message}");
        }
        // Alive, and nothing was lost.
        let r = s.get(&t, "/volumes?names=kept").await;
        assert_eq!(r.status, 200, "after {what}: {}", r.raw);
        assert_eq!(r.body["items"][0]["name"], "kept");
    }
    // Several `filter` parameters (LXD) are one filter: each within the limits
    // alone, together over them.
    let half = "name='kept' or ".repeat(Filter::MAX_TERMS / 2) + "pod";
    let r = s
        .get(&t, &format!("/volumes?filter={}", encode(&half)))
        .await;
    assert_eq!(r.status, 200, "{:.300}", r.raw);
    let r = s
        .get(
            &t,
            &format!("/volumes?filter={0}&filter={0}", encode(&half)),
        )
        .await;
    assert_eq!(r.status, 400, "{:.300}", r.raw);
    let message = r.body["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("terms"), "{message}");
    // The largest filters accepted still work.
    let deep = "(".repeat(Filter::MAX_DEPTH) + "name='kept'" + &")".repeat(Filter::MAX_DEPTH);
    let r = s
        .get(&t, &format!("/volumes?filter={}", encode(&deep)))
        .await;
    assert_eq!(r.status, 200, "{:.300}", r.raw);
    assert_eq!(r.body["items"][0]["name"], "kept");
}

/// `pxfa --array sim` calls the mock in process (exit 134 at depth 20,000).
#[tokio::test]
async fn the_embedded_mock_refuses_them_too() {
    let mock = MockArray::new();
    let mut filters: Vec<String> = hostile().into_iter().map(|(_, f, _)| f).collect();
    filters.push("not(".repeat(20_000));
    filters.push("a and ".repeat(10 * 1024 * 1024 / 6));
    for f in filters {
        let e = mock
            .list_volumes(&ListParams::all().filter(f.clone()))
            .await
            .unwrap_err();
        assert!(
            matches!(&e, Error::Api(a) if a.status == 400),
            "{:.40}: {e:?}",
            f
        );
        assert!(e.to_string().contains("Invalid filter"), "{e}");
    }
}

#[tokio::test]
async fn versions_not_advertised_are_not_found() {
    let (s, t) = logged_in().await;
    for version in [
        "2.99999999999999999999",
        "2.18446744073709551616",
        "2.4294967296",
        "2.40",
        "2.039",
        "2.+39",
        "2.-1",
        "2.",
        "3.0",
        "1.16",
        "1.99999999999999999999",
    ] {
        let path = format!("/api/{version}/volumes");
        let r = s.send(Method::GET, &path, Some(&t), None).await.unwrap();
        assert_eq!(
            (r.status, r.body.clone()),
            error(404, &path, "Not found."),
            "{path}"
        );
        // Not even a login is served there.
        let login = format!("/api/{version}/login");
        let r = s.send(Method::POST, &login, None, None).await.unwrap();
        assert_eq!(r.status, 404, "{login}: {}", r.raw);
    }
    let r = s
        .send(Method::GET, "/api/2.39/volumes", Some(&t), None)
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.raw);
}

#[tokio::test]
async fn only_the_configured_versions_are_served() {
    let s = start_with(MockArray::new(), |c| {
        c.versions = ["1.19", "2.0", "2.21"].map(String::from).to_vec();
    })
    .await;
    let r = s
        .send(Method::GET, "/api/api_version", None, None)
        .await
        .unwrap();
    assert_eq!(r.body, json!({"version": ["1.19", "2.0", "2.21"]}));
    // A login without an api-token header: 400 where the version is served, 404
    // where it is not.
    for (version, want) in [("2.21", 400), ("2.0", 400), ("2.39", 404), ("2.22", 404)] {
        let r = s
            .send(Method::POST, &format!("/api/{version}/login"), None, None)
            .await
            .unwrap();
        assert_eq!(r.status, want, "{version}: {}", r.raw);
    }
}
