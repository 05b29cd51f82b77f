//! Continuation tokens, offsets and sorting.

use serde_json::json;

use crate::support::https::{logged_in, names};

#[tokio::test]
async fn paging_with_tokens_and_with_offset_and_sort() {
    let (s, t) = logged_in().await;
    s.post(
        &t,
        "/volumes?names=a1,a2,a3,a4,a5,a6,a7",
        json!({"provisioned": 1048576}),
    )
    .await;
    let mut seen = Vec::new();
    let mut path = "/volumes?limit=3&total_item_count=true".to_string();
    let mut pages = 0;
    loop {
        let r = s.get(&t, &path).await;
        assert_eq!(r.status, 200, "{}", r.raw);
        assert_eq!(r.body["total_item_count"], 7);
        seen.extend(names(&r.body));
        pages += 1;
        match r.body["continuation_token"].as_str() {
            Some(tok) => {
                assert_eq!(r.body["more_items_remaining"], true);
                path = format!("/volumes?limit=3&total_item_count=true&continuation_token={tok}");
            }
            None => {
                assert_eq!(r.body["more_items_remaining"], false);
                break;
            }
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, ["a1", "a2", "a3", "a4", "a5", "a6", "a7"]);

    // A token presented with another query is refused.
    let first = s.get(&t, "/volumes?limit=2").await;
    let tok = first.body["continuation_token"].as_str().unwrap();
    let r = s
        .get(
            &t,
            &format!("/volumes?limit=2&destroyed=false&continuation_token={tok}"),
        )
        .await;
    assert_eq!(r.status, 400);

    // With sort there is no token; clients page with offset. Both descending forms.
    for sort in ["name-", "-name"] {
        let r = s
            .get(&t, &format!("/volumes?sort={sort}&limit=3&offset=3"))
            .await;
        assert!(r.body["continuation_token"].is_null());
        assert_eq!(r.body["more_items_remaining"], true);
        assert_eq!(names(&r.body), ["a4", "a3", "a2"]);
    }
    let r = s.get(&t, "/volumes?total_only=true").await;
    assert_eq!(r.body["items"], json!([]));
    assert_eq!(r.body["total"][0]["provisioned"], 7 * 1048576);
}
