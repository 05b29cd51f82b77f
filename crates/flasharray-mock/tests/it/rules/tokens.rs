//! API token rules that need the mock's admins and clock.

use std::time::Duration;

use flasharray::{ErrorKind, FlashArray};
use flasharray_mock::conformance::shorthand::*;
use flasharray_mock::{MockArray, MockClock};

use crate::support::T0;

#[tokio::test]
async fn api_tokens_one_per_admin_hidden_unless_exposed() {
    let m = MockArray::builder()
        .clock(MockClock::manual(T0))
        .admin("pxfa")
        .build();
    let a: &dyn FlashArray = &m;
    let t = a
        .create_api_token("pxfa", Some(Duration::from_secs(3600)))
        .await
        .unwrap();
    let secret = t.api_token.expose().unwrap().to_string();
    assert_eq!(uuid::Uuid::parse_str(&secret).map(|_| ()), Ok(()));
    assert_eq!(t.api_token.created_at, Some(T0));
    assert_eq!(t.api_token.expires_at, Some(T0 + 3_600_000));
    let e = a.create_api_token("PXFA", None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
    assert!(!e.to_string().contains(&secret));
    let hidden = a.list_api_tokens(&["pxfa".into()], false).await.unwrap();
    assert!(hidden[0].api_token.token.is_none());
    let shown = a.list_api_tokens(&[], true).await.unwrap();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].api_token.expose(), Some(secret.as_str()));
    assert_eq!(m.api_token_owner(&secret).as_deref(), Some("pxfa"));
    assert!(!format!("{m:?}").contains(&secret));
    assert!(!format!("{:?}", m.snapshot()).contains(&secret));
    m.clock().advance(Duration::from_secs(3600));
    assert_eq!(m.api_token_owner(&secret), None, "expired");
    assert_eq!(
        kind(a.create_api_token("nobody", None)).await,
        ErrorKind::NotFound
    );
    assert_eq!(
        kind(a.delete_api_token("nobody")).await,
        ErrorKind::NotFound
    );
    a.delete_api_token("pxfa").await.unwrap();
    assert_eq!(kind(a.delete_api_token("pxfa")).await, ErrorKind::NotFound);
    assert!(a.list_api_tokens(&[], true).await.unwrap().is_empty());
    m.add_admin("late");
    a.create_api_token("late", None).await.unwrap();
    // The built-in admin exists next to the builder's.
    a.create_api_token("pureuser", None).await.unwrap();
}

/// `timeout=0` makes a token that never expires: Pure's Ansible collection sends it
/// for every `purefa_user` token made without a lifetime (issue #25).
#[tokio::test]
async fn a_zero_timeout_is_a_token_that_never_expires() {
    let m = MockArray::builder()
        .clock(MockClock::manual(T0))
        .admin("ops")
        .build();
    let a: &dyn FlashArray = &m;
    let t = a
        .create_api_token("ops", Some(Duration::ZERO))
        .await
        .unwrap();
    assert_eq!(t.api_token.expires_at, None);
    let secret = t.api_token.expose().unwrap().to_string();
    m.clock().advance(Duration::from_secs(400 * 86_400));
    assert_eq!(m.api_token_owner(&secret).as_deref(), Some("ops"));
}
