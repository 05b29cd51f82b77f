//! Tag rules beyond the shared checks.

use flasharray::FlashArray;
use flasharray::models::*;
use flasharray::params::*;
use flasharray::size::GIB;
use flasharray_mock::conformance::shorthand::*;

use crate::support::mock;

#[tokio::test]
async fn a_bad_creation_tag_refuses_the_whole_create() {
    let a = mock();
    let mut tags = owner_tags();
    tags.push(TagBody::new("pxfa.io", "", "empty key"));
    let e = a
        .create_volumes(
            &vs(&["a", "b"]),
            &VolumePost::default()
                .with_provisioned(GIB)
                .with_tags(tags.clone()),
        )
        .await
        .expect_err("an empty tag key is refused");
    assert!(e.to_string().contains("tag key"), "{e}");
    assert!(a.list_volumes(&ListParams::all()).await.unwrap().is_empty());
    let long = vec![TagBody::new("pxfa.io", "k", "v".repeat(257))];
    assert!(
        a.create_host_groups(&[g("g1")], &HostGroupPost::default().with_tags(long))
            .await
            .is_err()
    );
    assert!(
        a.list_host_groups(&ListParams::all())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        a.create_pods(&[p("t1")], &PodPost::default().with_tags(tags))
            .await
            .is_err()
    );
    assert!(a.list_pods(&ListParams::all()).await.unwrap().is_empty());
}
