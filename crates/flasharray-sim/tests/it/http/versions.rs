//! pxfa's REST client across the simulator's REST versions (issue #25): at the
//! oldest version the client speaks (2.2), at 2.36 (realms) and at the newest
//! (2.39) the same calls leave the same end state, each through what its version
//! has (volumes in groups then tags below 2.32, `volumes/batch` with tags in the
//! items from 2.32, realms only from 2.36); below 2.2 the client refuses clearly.

use flasharray::models::{HostPost, RealmPost, VolumeBatchPost};
use flasharray::{
    ConnectionParams, ConnectionTarget, FlashArray, HostName, ListParams, RealmName, TagResource,
    VolumeName,
};
use flasharray_mock::MockArray;
use flasharray_mock::conformance::shorthand::{owner_tags, tag_keys};

use crate::support::https::{Sim, start_with};

async fn at(minor: u32) -> Sim {
    start_with(MockArray::builder().rest_version(minor).build(), |_| {}).await
}

/// The paths the client sent, in order, after the version lookup and login.
fn paths(s: &Sim) -> Vec<String> {
    s.sim
        .request_log()
        .into_iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .filter(|p| !p.ends_with("/api_version") && !p.ends_with("/login"))
        .collect()
}

#[tokio::test]
async fn below_the_oldest_supported_version_the_client_refuses_clearly() {
    let s = at(1).await;
    let e = s.rest().list_volumes(&ListParams::all()).await.unwrap_err();
    let text = e.to_string();
    assert!(text.contains("no REST version in common"), "{text}");
    assert!(text.contains("2.2..=2.58"), "{text}");
    assert!(
        paths(&s).is_empty(),
        "nothing but the version lookup was sent"
    );
}

#[tokio::test]
async fn volumes_with_tags_at_the_oldest_2_36_and_the_newest() {
    for (minor, batch) in [(2, false), (36, true), (39, true)] {
        let s = at(minor).await;
        let rest = s.rest();
        let items: Vec<VolumeBatchPost> = ["a", "b"]
            .iter()
            .zip([1u64 << 30, 2 << 30])
            .map(|(n, size)| {
                VolumeBatchPost::new(VolumeName::new(*n).unwrap(), size).with_tags(owner_tags())
            })
            .collect();
        let made = rest.create_volumes_batch(&items).await.unwrap();
        assert_eq!(made.len(), 2, "2.{minor}");
        assert_eq!(
            rest.api_version().await.map(|v| v.minor),
            Some(minor),
            "the client uses the array's newest version"
        );
        let a: &dyn FlashArray = &s.array;
        for (name, size) in [("a", 1u64 << 30), ("b", 2 << 30)] {
            let v = a.list_volumes(&ListParams::names([name])).await.unwrap();
            assert_eq!(v[0].provisioned, size, "2.{minor} {name}");
            assert_eq!(
                tag_keys(a, TagResource::Volume, name).await,
                ["pxfa.io/managed-by=pxfa", "pxfa.io/tenant=t1"],
                "2.{minor} {name}"
            );
        }
        // Hosts, groups and connections decode without the fields later versions
        // added (`destroyed` 2.36, `context` 2.38, `vlan` 2.16, `nsid` 2.27).
        let h = HostName::new("node-1").unwrap();
        let iqn = HostPost::default().with_iqns(vec!["iqn.2020-01.io.pxfa:node-1".into()]);
        rest.create_hosts(std::slice::from_ref(&h), &iqn)
            .await
            .unwrap();
        let target = ConnectionTarget::Host(h.clone());
        let vols = [VolumeName::new("a").unwrap()];
        rest.create_connections(&target, &vols, None).await.unwrap();
        let hosts = rest.list_hosts(&ListParams::all()).await.unwrap();
        assert_eq!(hosts[0].iqns, ["iqn.2020-01.io.pxfa:node-1"], "2.{minor}");
        let rows = rest
            .list_connections(&ConnectionParams::default())
            .await
            .unwrap();
        assert_eq!(rows.len(), 1, "2.{minor}");
        let sent = paths(&s);
        let used_batch = sent.iter().any(|p| p.ends_with("/volumes/batch"));
        assert_eq!(used_batch, batch, "2.{minor}: {sent:?}");
        assert!(
            sent.iter().all(|p| p.contains(&format!("/api/2.{minor}/"))),
            "2.{minor}: {sent:?}"
        );
    }
}

#[tokio::test]
async fn realms_only_from_2_36_and_refused_clearly_before() {
    let tenant = [RealmName::new("tenant-a").unwrap()];
    let s = at(35).await;
    let e = s
        .rest()
        .create_realms(&tenant, &RealmPost::default())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("need REST 2.36 or later"), "{e}");
    assert!(
        paths(&s).iter().all(|p| !p.contains("realms")),
        "nothing sent"
    );
    for minor in [36, 39] {
        let s = at(minor).await;
        let made = s
            .rest()
            .create_realms(&tenant, &RealmPost::default())
            .await
            .unwrap();
        assert_eq!(made[0].name, "tenant-a", "2.{minor}");
    }
}

/// Each kind's tags arrive with their own version (hosts and host groups 2.34, pods
/// 2.39): below it the array holds none, so a listing is empty without asking (the
/// path is 404 there), a delete has nothing to do, and a set is refused before
/// anything is sent, naming the version needed. At and after it they are served.
#[tokio::test]
async fn tags_of_each_kind_only_from_their_version() {
    let s = at(33).await;
    let rest = s.rest();
    for kind in [TagResource::Host, TagResource::HostGroup, TagResource::Pod] {
        let listed = rest
            .list_tags(kind, &flasharray::TagParams::default())
            .await
            .unwrap();
        assert!(listed.is_empty(), "{kind:?}");
        rest.delete_tags(kind, &["x".into()], &["pxfa.io/tenant".into()], &[])
            .await
            .unwrap();
    }
    let tag = flasharray::models::Tag::new("node-1", "pxfa.io", "tenant", "t1");
    let e = rest.set_tags(TagResource::Host, &[tag]).await.unwrap_err();
    assert!(e.to_string().contains("hosts tags need REST 2.34"), "{e}");
    assert!(
        e.is_invalid_input(),
        "refused before sending: exit 2 in pxfa"
    );
    let sent = paths(&s);
    assert!(sent.iter().all(|p| !p.contains("/tags")), "{sent:?}");
    // Volume tags are there from 2.2; host tags from 2.34, pod tags not yet.
    let s = at(34).await;
    let rest = s.rest();
    rest.list_tags(TagResource::Volume, &flasharray::TagParams::default())
        .await
        .unwrap();
    rest.list_tags(TagResource::Host, &flasharray::TagParams::default())
        .await
        .unwrap();
    rest.list_tags(TagResource::Pod, &flasharray::TagParams::default())
        .await
        .unwrap();
    assert_eq!(
        paths(&s),
        ["GET /api/2.34/volumes/tags", "GET /api/2.34/hosts/tags"]
    );
}

/// Tag listings take `namespaces` from REST 2.3 (and hand out continuation tokens
/// from then): at 2.2 the client lists every namespace and keeps the ones asked
/// for.
#[tokio::test]
async fn tag_namespaces_are_filtered_by_the_client_at_2_2() {
    for minor in [2, 3] {
        let s = at(minor).await;
        let a: &dyn FlashArray = &s.array;
        let items: Vec<VolumeBatchPost> = ["a", "b", "c"]
            .iter()
            .map(|n| VolumeBatchPost::new(VolumeName::new(*n).unwrap(), 1 << 30))
            .collect();
        a.create_volumes_batch(&items).await.unwrap();
        let mut tags = Vec::new();
        for n in ["a", "b", "c"] {
            tags.push(flasharray::models::Tag::new(n, "pxfa.io", "tenant", "t1"));
            tags.push(flasharray::models::Tag::new(n, "other.io", "owner", "x"));
        }
        a.set_tags(TagResource::Volume, &tags).await.unwrap();
        let params = flasharray::TagParams {
            namespaces: vec!["pxfa.io".into()],
            ..Default::default()
        };
        let listed = s
            .rest()
            .list_tags(TagResource::Volume, &params)
            .await
            .unwrap();
        assert_eq!(listed.len(), 3, "2.{minor}: {listed:?}");
        assert!(
            listed
                .iter()
                .all(|t| t.namespace.as_deref() == Some("pxfa.io")),
            "2.{minor}"
        );
        let asked = s
            .sim
            .request_log()
            .into_iter()
            .filter(|r| r.path.ends_with("/volumes/tags"))
            .count();
        assert_eq!(asked, 1, "2.{minor}");
    }
}
