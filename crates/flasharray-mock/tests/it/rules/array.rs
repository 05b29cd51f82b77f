//! The array as a whole: space, settings, snapshots, seeds, shared clones.

use std::time::Duration;

use flasharray::models::*;
use flasharray::params::*;
use flasharray::size::GIB;
use flasharray::{ErrorKind, FlashArray};
use flasharray_mock::conformance::shorthand::*;
use flasharray_mock::{MockArray, MockClock};

use crate::support::{T0, mock};

#[tokio::test]
async fn space_counts_live_and_destroyed_until_eradicated() {
    let m = MockArray::builder()
        .clock(MockClock::manual(T0))
        .capacity(flasharray::Size::tib(5))
        .build();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["a", "b"]), &size(10 * GIB))
        .await
        .unwrap();
    let space = a.get_array_space().await.unwrap();
    assert_eq!(space.capacity, 5 * 1024 * GIB);
    assert_eq!(space.space.total_provisioned, Some(20 * GIB));
    a.patch_volumes(&vs(&["b"]), &VolumePatch::destroy(), false)
        .await
        .unwrap();
    assert_eq!(
        a.get_array_space().await.unwrap().space.total_provisioned,
        Some(20 * GIB)
    );
    a.eradicate_volumes(&vs(&["b"])).await.unwrap();
    assert_eq!(
        a.get_array_space().await.unwrap().space.total_provisioned,
        Some(10 * GIB)
    );
    let info = a.get_array().await.unwrap();
    assert_eq!(info.capacity, Some(5 * 1024 * GIB));
    assert_eq!(info.version.as_deref(), Some("6.7.4"));
    assert_eq!(info.eradication_config.eradication_delay, Some(DAY_MS));
}

#[tokio::test]
async fn snapshot_round_trips_through_json() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_pods(&[p("p1")], &PodPost::default())
        .await
        .unwrap();
    a.create_volumes(&vs(&["p1::v", "w"]), &size(GIB))
        .await
        .unwrap();
    a.create_hosts(
        &[h("h1")],
        &HostPost::default().with_wwns(vec!["2100000000000001".into()]),
    )
    .await
    .unwrap();
    groups(a, &["g1"]).await;
    a.add_host_group_members(&g("g1"), &[h("h1")])
        .await
        .unwrap();
    a.create_connections(&ConnectionTarget::HostGroup(g("g1")), &vs(&["w"]), None)
        .await
        .unwrap();
    a.set_tags(
        TagResource::Volume,
        &[Tag::new("w", "pxfa.io", "tenant", "t")],
    )
    .await
    .unwrap();
    let token = a.create_api_token("pureuser", None).await.unwrap();
    a.patch_volumes(&vs(&["p1::v"]), &VolumePatch::destroy(), false)
        .await
        .unwrap();
    m.clock().advance(Duration::from_secs(60));
    let json = serde_json::to_string(&m.snapshot()).unwrap();

    let other = MockArray::builder().clock(MockClock::manual(0)).build();
    other.restore(serde_json::from_str(&json).unwrap());
    let b: &dyn FlashArray = &other;
    assert_eq!(other.clock().now_ms(), T0 + 60_000);
    for params in [ListParams::all()] {
        assert_eq!(
            a.list_volumes(&params).await.unwrap(),
            b.list_volumes(&params).await.unwrap()
        );
        assert_eq!(
            a.list_hosts(&params).await.unwrap(),
            b.list_hosts(&params).await.unwrap()
        );
        assert_eq!(
            a.list_pods(&params).await.unwrap(),
            b.list_pods(&params).await.unwrap()
        );
        assert_eq!(
            a.list_host_groups(&params).await.unwrap(),
            b.list_host_groups(&params).await.unwrap()
        );
    }
    assert_eq!(
        a.list_connections(&ConnectionParams::default())
            .await
            .unwrap(),
        b.list_connections(&ConnectionParams::default())
            .await
            .unwrap()
    );
    assert_eq!(
        a.list_tags(TagResource::Volume, &TagParams::default())
            .await
            .unwrap(),
        b.list_tags(TagResource::Volume, &TagParams::default())
            .await
            .unwrap()
    );
    assert_eq!(a.get_array().await.unwrap(), b.get_array().await.unwrap());
    assert_eq!(
        other
            .api_token_owner(token.api_token.expose().unwrap())
            .as_deref(),
        Some("pureuser")
    );
    // The restored array keeps enforcing the rules and the countdown.
    assert_eq!(
        kind(b.create_volumes(&vs(&["W"]), &size(GIB))).await,
        ErrorKind::AlreadyExists
    );
    other.clock().advance(Duration::from_millis(DAY_MS));
    assert!(b.list_volumes(&ListParams::names(["p1::v"])).await.is_err());
}

#[tokio::test]
async fn seeded_arrays_list_fast() {
    let m = MockArray::builder().seed_volumes(100_000).build();
    let a: &dyn FlashArray = &m;
    let t = std::time::Instant::now();
    let all = a.list_volumes(&ListParams::all()).await.unwrap();
    let elapsed = t.elapsed();
    assert_eq!(all.len(), 100_000);
    assert_eq!(all[0].name, "seed-vol-00001");
    assert_eq!(all[0].provisioned, GIB);
    assert_eq!(
        all[99_999].name, "seed-vol-99999",
        "name order, not numeric"
    );
    assert!(
        elapsed < Duration::from_secs(5),
        "listing 100k took {elapsed:?}"
    );
    let one = a
        .list_volumes(&ListParams::names(["seed-vol-54321"]))
        .await
        .unwrap();
    assert_eq!(one.len(), 1);
    let t = std::time::Instant::now();
    for i in 0..200 {
        a.create_volumes(&vs(&[&format!("extra-{i}")]), &size(GIB))
            .await
            .unwrap();
    }
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "creates are O(n): {:?}",
        t.elapsed()
    );
}

#[tokio::test]
async fn clones_share_one_array_across_tasks() {
    let m = mock();
    let shared: std::sync::Arc<dyn FlashArray> = std::sync::Arc::new(m.clone());
    let mut tasks = Vec::new();
    for i in 0..16 {
        let a = shared.clone();
        tasks.push(tokio::spawn(async move {
            a.create_volumes(&[v(&format!("t-{i}"))], &size(GIB)).await
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let a: &dyn FlashArray = &m;
    assert_eq!(a.list_volumes(&ListParams::all()).await.unwrap().len(), 16);
    assert_eq!(m.stats().writes, 16);
}

#[tokio::test]
async fn generation_counts_only_writes_that_changed_the_array() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    let g0 = m.generation();
    a.list_volumes(&ListParams::all()).await.unwrap();
    a.get_array_space().await.unwrap();
    assert_eq!(m.generation(), g0, "reads change nothing");
    a.create_volumes(&[v("g1")], &size(GIB)).await.unwrap();
    assert_eq!(m.generation(), g0 + 1);
    // The same name again is refused by the array's rules: nothing changed.
    let e = a.create_volumes(&[v("g1")], &size(GIB)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
    assert_eq!(m.generation(), g0 + 1, "a refused write changes nothing");
}

/// An array built for an older REST version says so through the trait, so that
/// callers refuse what that version lacks (realms before 2.36) without the HTTP
/// layer, as `pxfa --array sim --rest-version` does; by default it has every
/// feature.
#[tokio::test]
async fn the_rest_version_is_the_builders() {
    let old = MockArray::builder().rest_version(35).build();
    assert_eq!(old.rest_minor_version().await.unwrap(), Some(35));
    assert_eq!(old.rest_version(), Some(35));
    let any = MockArray::new();
    assert_eq!(any.rest_minor_version().await.unwrap(), None);
    any.set_rest_version(2);
    assert_eq!(any.rest_minor_version().await.unwrap(), Some(2));
}
