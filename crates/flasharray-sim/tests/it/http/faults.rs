//! HTTP faults: rate limits, busy, unavailable, dropped writes.

use std::time::Duration;

use flasharray_mock::MockArray;
use flasharray_sim::parse_faults;
use reqwest::Method;
use serde_json::json;

use crate::support::https::{V, start_with};

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
