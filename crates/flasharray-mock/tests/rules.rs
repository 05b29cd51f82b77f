//! The array's rules, exercised through `&dyn FlashArray`: the shared checks of
//! `flasharray_mock::conformance` on a fresh mock each, then the rules that need the
//! mock's clock, faults, statistics or settings.

use std::time::Duration;

use flasharray::models::*;
use flasharray::params::*;
use flasharray::size::GIB;
use flasharray::{ErrorKind, FlashArray, HostGroupName, HostName, PodName, VolumeName};
use flasharray_mock::{DestroyConnected, MockArray, MockClock};

const T0: u64 = 1_767_225_600_000;
const DAY_MS: u64 = 86_400_000;

fn mock() -> MockArray {
    MockArray::builder().clock(MockClock::manual(T0)).build()
}

fn v(s: &str) -> VolumeName {
    VolumeName::new(s).unwrap()
}
fn vs(s: &[&str]) -> Vec<VolumeName> {
    s.iter().map(|x| v(x)).collect()
}
fn h(s: &str) -> HostName {
    HostName::new(s).unwrap()
}
fn g(s: &str) -> HostGroupName {
    HostGroupName::new(s).unwrap()
}
fn p(s: &str) -> PodName {
    PodName::new(s).unwrap()
}
fn size(b: u64) -> VolumePost {
    VolumePost {
        tags: Vec::new(),
        provisioned: Some(b),
        source: None,
    }
}

async fn vol(a: &dyn FlashArray, name: &str) -> Volume {
    a.list_volumes(&ListParams::names([name]))
        .await
        .unwrap()
        .pop()
        .unwrap()
}

async fn kind<T: std::fmt::Debug>(
    f: impl std::future::Future<Output = flasharray::Result<T>>,
) -> ErrorKind {
    f.await.expect_err("the array should refuse this").kind()
}

// ------------------------------------------------------- shared conformance

macro_rules! conformance {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $name() {
            flasharray_mock::conformance::$name(&mock()).await
        }
    )*};
}

conformance!(
    names_are_case_insensitive_unique_and_keep_creation_case,
    a_destroyed_volume_still_owns_its_name,
    pod_volumes_need_a_live_pod,
    volume_sizes_follow_the_array_rules,
    batch_create_is_all_or_nothing,
    serials_and_creation_times,
    resize_needs_truncate_to_shrink,
    rename_keeps_the_pod_and_refuses_taken_names,
    volumes_move_between_pods_with_connections_and_tags,
    copies_take_the_source_size,
    host_initiators_are_normalised_and_owned_once,
    host_initiators_add_remove_replace,
    a_host_is_in_at_most_one_group,
    hosts_and_groups_in_use_cannot_be_deleted,
    luns_are_allocated_as_the_array_does,
    connection_rows_counts_and_removal,
    destroyed_volumes_cannot_be_connected,
    pods_quota_destroy_recover_eradicate,
    pod_quota_cannot_drop_below_usage_and_rename_carries_volumes,
    tags_upsert_filter_delete_and_follow_their_object,
    list_parameters_behave_like_the_array,
    joining_a_group_cannot_create_lun_or_volume_clashes,
    filters_and_sorts_work_on_every_collection,
    creation_tags_arrive_with_every_object_of_the_call,
);

/// The registry other runners (e.g. the simulator's HTTP tests) iterate works.
#[tokio::test]
async fn the_conformance_registry_runs_every_check() {
    let checks = flasharray_mock::conformance::all();
    assert!(checks.len() >= 20);
    for (name, check) in checks {
        let m = mock();
        check(&m).await;
        assert!(m.stats().calls > 0, "{name} made no calls");
    }
}

// ------------------------------------------------- clock-driven volume rules

#[tokio::test]
async fn destroy_recover_eradicate_on_the_clock() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["d1", "d2"]), &size(GIB))
        .await
        .unwrap();
    let destroy = VolumePatch {
        destroyed: Some(true),
        ..Default::default()
    };
    let recover = VolumePatch {
        destroyed: Some(false),
        ..Default::default()
    };
    assert_eq!(
        kind(a.eradicate_volumes(&vs(&["d1"]))).await,
        ErrorKind::NotDestroyed
    );
    let d = a
        .patch_volumes(&vs(&["d1", "d2"]), &destroy, false)
        .await
        .unwrap();
    assert!(
        d.iter()
            .all(|v| v.destroyed && v.time_remaining == Some(DAY_MS))
    );
    m.clock().advance(Duration::from_secs(3600));
    assert_eq!(vol(a, "d1").await.time_remaining, Some(DAY_MS - 3_600_000));
    // A destroyed volume accepts nothing but recovery.
    let grow = VolumePatch {
        provisioned: Some(2 * GIB),
        ..Default::default()
    };
    assert_eq!(
        kind(a.patch_volumes(&vs(&["d1"]), &grow, false)).await,
        ErrorKind::Destroyed
    );
    let r = a
        .patch_volumes(&vs(&["d1"]), &recover, false)
        .await
        .unwrap();
    assert!(!r[0].destroyed && r[0].time_remaining.is_none());
    a.eradicate_volumes(&vs(&["d2"])).await.unwrap();
    assert_eq!(
        kind(a.list_volumes(&ListParams::names(["d2"]))).await,
        ErrorKind::NotFound
    );
    // Time running out eradicates on the next call.
    a.patch_volumes(&vs(&["d1"]), &destroy, false)
        .await
        .unwrap();
    m.clock().advance(Duration::from_millis(DAY_MS - 1));
    assert_eq!(vol(a, "d1").await.time_remaining, Some(1));
    m.clock().advance(Duration::from_millis(1));
    assert!(a.list_volumes(&ListParams::all()).await.unwrap().is_empty());
    a.create_volumes(&vs(&["d1"]), &size(GIB)).await.unwrap();
}

#[tokio::test]
async fn safemode_refuses_eradication_but_not_the_delay() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["s"]), &size(GIB)).await.unwrap();
    a.create_pods(&[p("sp")], &PodPost::default())
        .await
        .unwrap();
    let destroy = VolumePatch {
        destroyed: Some(true),
        ..Default::default()
    };
    a.patch_volumes(&vs(&["s"]), &destroy, false).await.unwrap();
    a.patch_pods(
        &[p("sp")],
        &PodPatch {
            destroyed: Some(true),
            ..Default::default()
        },
        false,
    )
    .await
    .unwrap();
    m.faults().set_safemode(true);
    let e = a.eradicate_volumes(&vs(&["s"])).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::EradicationRefused);
    assert!(e.to_string().contains("Cannot eradicate"), "{e}");
    let e = a.eradicate_pods(&[p("sp")], true).await.unwrap_err();
    assert!(e.to_string().contains("Cannot eradicate pod"), "{e}");
    assert_eq!(vol(a, "s").await.name, "s");
    m.clock().advance(Duration::from_millis(DAY_MS));
    assert!(a.list_volumes(&ListParams::all()).await.unwrap().is_empty());
    assert!(a.list_pods(&ListParams::all()).await.unwrap().is_empty());
}

#[tokio::test]
async fn destroying_a_connected_volume_is_a_policy() {
    let destroy = VolumePatch {
        destroyed: Some(true),
        ..Default::default()
    };
    // Default: refused, nothing changes.
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["c"]), &size(GIB)).await.unwrap();
    a.create_hosts(&[h("h1")], &HostPost::default())
        .await
        .unwrap();
    a.create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["c"]), None)
        .await
        .unwrap();
    assert_eq!(
        kind(a.patch_volumes(&vs(&["c"]), &destroy, false)).await,
        ErrorKind::InUse
    );
    assert!(!vol(a, "c").await.destroyed);
    // Disconnect: the connections go with the destroy.
    let m = MockArray::builder()
        .clock(MockClock::manual(T0))
        .destroy_connected(DestroyConnected::Disconnect)
        .build();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["c"]), &size(GIB)).await.unwrap();
    a.create_hosts(&[h("h1")], &HostPost::default())
        .await
        .unwrap();
    a.create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["c"]), None)
        .await
        .unwrap();
    let d = a.patch_volumes(&vs(&["c"]), &destroy, false).await.unwrap();
    assert!(d[0].destroyed);
    assert_eq!(d[0].connection_count, Some(0));
    assert!(
        a.list_connections(&ConnectionParams::default())
            .await
            .unwrap()
            .is_empty()
    );
    a.delete_hosts(&[h("h1")]).await.unwrap();
}

// -------------------------------------------------------------- settings

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
    a.patch_volumes(
        &vs(&["b"]),
        &VolumePatch {
            destroyed: Some(true),
            ..Default::default()
        },
        false,
    )
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

// -------------------------------------------------------------------- tokens

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

// -------------------------------------------------------------------- faults

#[tokio::test]
async fn pre_call_faults_and_stats() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    m.faults().rate_limit_next(1, Duration::from_secs(2));
    let e = a.create_volumes(&vs(&["f"]), &size(GIB)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RateLimited);
    assert_eq!(e.as_api().unwrap().status, 429);
    assert_eq!(
        e.as_api().unwrap().retry_after,
        Some(Duration::from_secs(2))
    );
    m.faults().busy_next(1);
    let e = a.list_volumes(&ListParams::all()).await.unwrap_err();
    assert_eq!(
        (e.as_api().unwrap().status, e.kind()),
        (500, ErrorKind::Busy)
    );
    m.faults().unavailable_next(1);
    let e = a.list_volumes(&ListParams::all()).await.unwrap_err();
    assert_eq!(
        (e.as_api().unwrap().status, e.kind()),
        (503, ErrorKind::Busy)
    );
    // Nothing was created by the refused write.
    assert!(a.list_volumes(&ListParams::all()).await.unwrap().is_empty());
    let s = m.stats();
    assert_eq!((s.calls, s.reads, s.writes), (4, 3, 1));
    assert_eq!(s.op("list_volumes"), 3);
    m.reset_stats();
    assert_eq!(m.stats().calls, 0);
}

#[tokio::test]
async fn lost_answers_and_dropped_writes() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    m.faults().fail_write_after_effect(1);
    let e = a
        .create_volumes(&vs(&["applied"]), &size(GIB))
        .await
        .unwrap_err();
    assert!(e.maybe_applied(), "{e}");
    assert_eq!(vol(a, "applied").await.name, "applied");
    m.faults().drop_write(2);
    a.create_volumes(&vs(&["first"]), &size(GIB)).await.unwrap();
    let e = a
        .create_volumes(&vs(&["dropped"]), &size(GIB))
        .await
        .unwrap_err();
    assert!(e.maybe_applied());
    assert!(
        a.list_volumes(&ListParams::names(["dropped"]))
            .await
            .is_err()
    );
    a.create_volumes(&vs(&["dropped"]), &size(GIB))
        .await
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn latency_applies_to_every_call() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    m.faults().set_latency(Duration::from_millis(40));
    let t = tokio::time::Instant::now();
    a.list_volumes(&ListParams::all()).await.unwrap();
    a.create_volumes(&vs(&["l"]), &size(GIB)).await.unwrap();
    assert_eq!(t.elapsed(), Duration::from_millis(80));
    m.faults().clear();
    let t = tokio::time::Instant::now();
    a.list_volumes(&ListParams::all()).await.unwrap();
    assert_eq!(t.elapsed(), Duration::ZERO);
}

#[tokio::test]
async fn errors_name_the_operation() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    let e = a.eradicate_volumes(&vs(&["ghost"])).await.unwrap_err();
    let api = e.as_api().unwrap();
    assert_eq!(api.operation, "DELETE /volumes");
    assert_eq!(api.message(), "Volume does not exist.");
}

// ------------------------------------------------------------ snapshot, seed

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
        &HostPost {
            wwns: vec!["2100000000000001".into()],
            ..Default::default()
        },
    )
    .await
    .unwrap();
    a.create_host_groups(&[g("g1")], &Default::default())
        .await
        .unwrap();
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
    a.patch_volumes(
        &vs(&["p1::v"]),
        &VolumePatch {
            destroyed: Some(true),
            ..Default::default()
        },
        false,
    )
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
async fn destroying_a_pod_with_connected_volumes_follows_the_policy() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_pods(&[p("p1")], &PodPost::default())
        .await
        .unwrap();
    a.create_volumes(&vs(&["p1::v"]), &size(GIB)).await.unwrap();
    a.create_hosts(&[h("h1")], &HostPost::default())
        .await
        .unwrap();
    a.create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["p1::v"]), None)
        .await
        .unwrap();
    let destroy = PodPatch {
        destroyed: Some(true),
        ..Default::default()
    };
    let e = a.patch_pods(&[p("p1")], &destroy, true).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InUse);
    assert_eq!(e.as_api().unwrap().context(), Some("p1::v"));
    assert!(!a.list_pods(&ListParams::names(["p1"])).await.unwrap()[0].destroyed);
    assert!(!vol(a, "p1::v").await.destroyed);
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

// ------------------------------------------------------------ creation tags

fn owner() -> Vec<TagBody> {
    vec![
        TagBody::new("pxfa.io", "managed-by", "pxfa"),
        TagBody::new("pxfa.io", "tenant", "t1"),
    ]
}

#[tokio::test]
async fn a_bad_creation_tag_refuses_the_whole_create() {
    let a = mock();
    let mut tags = owner();
    tags.push(TagBody::new("pxfa.io", "", "empty key"));
    let e = a
        .create_volumes(
            &vs(&["a", "b"]),
            &VolumePost {
                provisioned: Some(GIB),
                tags: tags.clone(),
                ..Default::default()
            },
        )
        .await
        .expect_err("an empty tag key is refused");
    assert!(e.to_string().contains("tag key"), "{e}");
    assert!(a.list_volumes(&ListParams::all()).await.unwrap().is_empty());
    let long = vec![TagBody::new("pxfa.io", "k", "v".repeat(257))];
    assert!(
        a.create_host_groups(&[g("g1")], &HostGroupPost { tags: long })
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
        a.create_pods(
            &[p("t1")],
            &PodPost {
                tags,
                ..Default::default()
            }
        )
        .await
        .is_err()
    );
    assert!(a.list_pods(&ListParams::all()).await.unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_stalled_array_applies_the_write_then_never_answers() {
    let a = mock();
    a.faults().stall_after_write(1);
    let hung = tokio::time::timeout(
        Duration::from_secs(5),
        a.create_volumes(&vs(&["a"]), &size(GIB)),
    )
    .await;
    assert!(hung.is_err(), "the write never answers");
    assert!(a.faults().stalled());
    let read =
        tokio::time::timeout(Duration::from_secs(5), a.list_volumes(&ListParams::all())).await;
    assert!(read.is_err(), "later calls hang too");
    a.faults().clear();
    let vols = a.list_volumes(&ListParams::all()).await.unwrap();
    assert_eq!(vols.len(), 1, "the stalled write took effect");
}
