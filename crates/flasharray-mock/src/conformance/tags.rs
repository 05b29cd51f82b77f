//! Tag rules: upsert, filter, delete, tags in create bodies.

use flasharray::models::*;
use flasharray::params::*;
use flasharray::size::GIB;
use flasharray::{ErrorKind, FlashArray};

use super::shorthand::*;

/// Rule: tags upsert filter delete and follow their object.
pub async fn tags_upsert_filter_delete_and_follow_their_object(a: &dyn FlashArray) {
    a.create_volumes(&vs(&["v1", "v2"]), &size(GIB))
        .await
        .unwrap();
    hosts(a, &["h1"]).await;
    let set = [
        Tag::new("v1", "pxfa.io", "tenant", "a"),
        Tag::new("v1", "pxfa.io", "managed-by", "pxfa"),
        Tag::new("v2", "other", "k", "x"),
    ];
    a.set_tags(TagResource::Volume, &set).await.unwrap();
    a.set_tags(
        TagResource::Volume,
        &[Tag::new("V1", "pxfa.io", "tenant", "b")],
    )
    .await
    .unwrap();
    let ours = volume_tags(
        a,
        TagParams {
            namespaces: vec!["pxfa.io".into()],
            ..Default::default()
        },
    )
    .await;
    assert_eq!(ours.len(), 2);
    assert!(ours.iter().any(|t| t.key == "tenant" && t.value == "b"));
    assert!(
        ours.iter()
            .all(|t| t.resource.name.as_deref() == Some("v1") && t.resource.id.is_some())
    );
    assert_eq!(
        kind(a.set_tags(
            TagResource::Volume,
            &[Tag::new("ghost", "pxfa.io", "k", "v")]
        ))
        .await,
        ErrorKind::NotFound
    );
    a.set_tags(
        TagResource::Host,
        &[Tag::new("h1", "pxfa.io", "tenant", "a")],
    )
    .await
    .unwrap();
    assert_eq!(
        a.list_tags(TagResource::Host, &TagParams::default())
            .await
            .unwrap()
            .len(),
        1
    );
    a.delete_tags(TagResource::Volume, &["v1".into()], &["tenant".into()], &[])
        .await
        .unwrap();
    let left = volume_tags(
        a,
        TagParams {
            resource_names: vec!["v1".into()],
            ..Default::default()
        },
    )
    .await;
    assert_eq!(
        left.iter().map(|t| t.key.as_str()).collect::<Vec<_>>(),
        ["managed-by"]
    );
    tags_follow_their_volume(a).await;
    a.delete_hosts(&[h("h1")]).await.unwrap();
    assert!(
        a.list_tags(TagResource::Host, &TagParams::default())
            .await
            .unwrap()
            .is_empty()
    );
}

/// `v1` (one tag left on it, one more tag elsewhere, as the check above leaves
/// them): destroyed, its tags are still listed; recovered, still there; eradicated,
/// gone, and a new volume of the same name starts untagged.
async fn tags_follow_their_volume(a: &dyn FlashArray) {
    let destroy = VolumePatch::destroy();
    a.patch_volumes(&vs(&["v1"]), &destroy, false)
        .await
        .unwrap();
    let destroyed_only = TagParams {
        resource_destroyed: Some(true),
        ..Default::default()
    };
    assert_eq!(
        a.list_tags(TagResource::Volume, &destroyed_only)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        a.list_tags(TagResource::Volume, &TagParams::default())
            .await
            .unwrap()
            .len(),
        2
    );
    a.patch_volumes(&vs(&["v1"]), &VolumePatch::recover(), false)
        .await
        .unwrap();
    assert_eq!(
        a.list_tags(TagResource::Volume, &destroyed_only)
            .await
            .unwrap()
            .len(),
        0
    );
    a.patch_volumes(&vs(&["v1"]), &destroy, false)
        .await
        .unwrap();
    a.eradicate_volumes(&vs(&["v1"])).await.unwrap();
    a.create_volumes(&vs(&["v1"]), &size(GIB)).await.unwrap();
    let fresh = volume_tags(
        a,
        TagParams {
            resource_names: vec!["v1".into()],
            ..Default::default()
        },
    )
    .await;
    assert!(
        fresh.is_empty(),
        "a new object does not inherit old tags: {fresh:?}"
    );
}

/// Rule: tags in a create body are on every object of the call from its first
/// moment, with no separate tag call; a create without tags leaves objects untagged.
pub async fn creation_tags_arrive_with_every_object_of_the_call(a: &dyn FlashArray) {
    let want = ["pxfa.io/managed-by=pxfa", "pxfa.io/tenant=t1"];
    a.create_pods(&[p("t1")], &PodPost::default().with_tags(owner_tags()))
        .await
        .unwrap();
    a.create_volumes(
        &vs(&["t1::a", "t1::b"]),
        &VolumePost::default()
            .with_provisioned(GIB)
            .with_tags(owner_tags()),
    )
    .await
    .unwrap();
    a.create_hosts(
        &[h("h1")],
        &HostPost::default()
            .with_wwns(vec!["2100F4C7AA002701".into()])
            .with_tags(owner_tags()),
    )
    .await
    .unwrap();
    a.create_host_groups(
        &[g("g1"), g("g2")],
        &HostGroupPost::default().with_tags(owner_tags()),
    )
    .await
    .unwrap();
    for (kind, name) in [
        (TagResource::Pod, "t1"),
        (TagResource::Volume, "t1::a"),
        (TagResource::Volume, "t1::b"),
        (TagResource::Host, "h1"),
        (TagResource::HostGroup, "g1"),
        (TagResource::HostGroup, "g2"),
    ] {
        assert_eq!(tag_keys(a, kind, name).await, want, "{name}");
    }
    // A create without tags leaves the object untagged, as before.
    a.create_volumes(&vs(&["plain"]), &size(GIB)).await.unwrap();
    assert!(tag_keys(a, TagResource::Volume, "plain").await.is_empty());
}

/// The volume tags `params` select; panics if the listing fails.
async fn volume_tags(a: &dyn FlashArray, params: TagParams) -> Vec<Tag> {
    a.list_tags(TagResource::Volume, &params).await.unwrap()
}
