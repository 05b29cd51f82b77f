//! The brownfield seed: the documented objects, their space, SafeMode, and the foreign
//! view that tenant tests compare (`flasharray-sim`'s tests show the same view over
//! HTTPS).

use std::time::Duration;

use flasharray::models::{HostPatch, Tag, VolumePost};
use flasharray::size::{GIB, TIB};
use flasharray::{
    ConnectionParams, ErrorKind, FlashArray, HostName, ListParams, MemberParams, PodName,
    TagParams, TagResource, VolumeName,
};
use flasharray_mock::foreign::ForeignView;
use flasharray_mock::{BrownfieldSeed, MockArray, MockClock, Seed, blue_volume};

const DAY_MS: u64 = 24 * 3600 * 1000;

fn brownfield() -> MockArray {
    MockArray::builder()
        .clock(MockClock::manual(30 * DAY_MS))
        .seed(Seed::brownfield())
        .build()
}

#[tokio::test]
async fn empty_seed_is_the_default_and_holds_nothing() {
    let mock = MockArray::builder().seed(Seed::Empty).build();
    let a: &dyn FlashArray = &mock;
    assert!(a.list_volumes(&ListParams::all()).await.unwrap().is_empty());
    assert!(a.list_hosts(&ListParams::all()).await.unwrap().is_empty());
    assert!(a.list_pods(&ListParams::all()).await.unwrap().is_empty());
    assert!(!mock.faults().safemode());
    assert_eq!(a.get_array().await.unwrap().name, "pxfa-sim");
}

#[tokio::test]
async fn brownfield_seed_has_the_documented_objects() {
    let mock = brownfield();
    let a: &dyn FlashArray = &mock;
    let info = a.get_array().await.unwrap();
    assert_eq!(info.name, "fa-prod-01");
    assert_eq!(info.version.as_deref(), Some("6.7.4"));
    assert_eq!(info.capacity, Some(100 * TIB));

    let hosts = a.list_hosts(&ListParams::all()).await.unwrap();
    let wwns = |n: &str| {
        hosts
            .iter()
            .find(|h| h.name == n)
            .unwrap_or_else(|| panic!("host {n} missing"))
            .wwns
            .clone()
    };
    // A subset host: the node's second port is not registered.
    assert_eq!(wwns("px-mgmt-worker-01"), ["2100F4C7AA002706"]);
    assert_eq!(
        wwns("px-mgmt-worker-02"),
        ["2100F4C7AA002806", "2100F4C7AA002807"]
    );
    assert_eq!(wwns("worker-03"), ["2100F4C7AA002906", "2100F4C7AA002907"]);
    // The decoy: another server with a node's name.
    assert_eq!(wwns("worker-02"), ["2100F4C7AA00FF01"]);
    assert_eq!(hosts.len(), 6);

    let members = a
        .list_host_group_members(&MemberParams::default())
        .await
        .unwrap();
    let mut esx: Vec<_> = members
        .iter()
        .filter(|m| m.group.name.as_deref() == Some("esx-prod"))
        .filter_map(|m| m.member.name.clone())
        .collect();
    esx.sort();
    assert_eq!(esx, ["esx-01", "esx-02"]);

    let vols = a.list_volumes(&ListParams::all()).await.unwrap();
    // 6 management drives, 2 FADA PVCs, 6 tenant-blue, 4 analytics, 2 datastores, 1 destroyed.
    assert_eq!(vols.len(), 21);
    let scratch = vols.iter().find(|v| v.name == "old-scratch").unwrap();
    assert!(scratch.destroyed);
    assert_eq!(scratch.time_remaining, Some(6 * 3600 * 1000));

    let conns = a
        .list_connections(&ConnectionParams::default())
        .await
        .unwrap();
    let lun = |vol: &str, target: &str| {
        conns
            .iter()
            .find(|c| {
                c.volume.name.as_deref() == Some(vol)
                    && (c.host.name.as_deref() == Some(target)
                        || c.host_group.name.as_deref() == Some(target))
            })
            .and_then(|c| c.lun)
    };
    assert_eq!(lun("px_5c1e7a3b-1f0e9a21", "px-mgmt-worker-01"), Some(1));
    assert_eq!(lun("px_5c1e7a3b-2a7c4b13", "worker-03"), Some(2));
    assert_eq!(
        lun(
            "px_5c1e7a3b-pvc-0b6f3c1e-5d2a-4f7e-9a10-6c1d2e3f4a52",
            "px-mgmt-worker-02"
        ),
        Some(4)
    );
    assert_eq!(lun("esx-ds01", "esx-prod"), Some(254));
    assert_eq!(lun("esx-ds02", "esx-prod"), Some(253));
    assert!(lun(&blue_volume(0), "px-mgmt-worker-01").is_some());

    let pods = a.list_pods(&ListParams::all()).await.unwrap();
    let blue = pods.iter().find(|p| p.name == "tenant-blue").unwrap();
    assert_eq!(blue.quota_limit, Some(14 * TIB));
    let analytics = pods.iter().find(|p| p.name == "analytics").unwrap();
    assert_eq!(analytics.quota_limit, None);

    let pod_tags = a
        .list_tags(TagResource::Pod, &TagParams::default())
        .await
        .unwrap();
    let blue_tags: Vec<(&str, &str)> = pod_tags
        .iter()
        .filter(|t| t.resource.name.as_deref() == Some("tenant-blue"))
        .map(|t| (t.key.as_str(), t.value.as_str()))
        .collect();
    assert!(blue_tags.contains(&("tenant", "tenant-blue")));
    assert!(blue_tags.contains(&("tenant-namespace", "team-blue")));
    assert!(blue_tags.contains(&("managed-by", "pxfa")));
    // The earlier pxfa's tenant: its tags name no namespace.
    let gray_tags: Vec<(&str, &str)> = pod_tags
        .iter()
        .filter(|t| t.resource.name.as_deref() == Some("tenant-gray"))
        .map(|t| (t.key.as_str(), t.value.as_str()))
        .collect();
    assert!(gray_tags.contains(&("tenant", "tenant-gray")));
    assert!(gray_tags.iter().all(|(k, _)| *k != "tenant-namespace"));
    assert!(
        pod_tags
            .iter()
            .all(|t| t.resource.name.as_deref() != Some("analytics"))
    );
    let vol_tags = a
        .list_tags(TagResource::Volume, &TagParams::default())
        .await
        .unwrap();
    let tagged: std::collections::BTreeSet<_> = vol_tags
        .iter()
        .filter_map(|t| t.resource.name.clone())
        .collect();
    assert_eq!(tagged.len(), 6, "only tenant-blue's volumes carry tags");

    let tokens = a.list_api_tokens(&[], false).await.unwrap();
    assert!(tokens.iter().any(|t| t.name == "px-mgmt"));
    assert!(tokens.iter().all(|t| t.api_token.token.is_none()));
}

#[tokio::test]
async fn brownfield_space_reports_written_bytes() {
    let mock = brownfield();
    let a: &dyn FlashArray = &mock;
    let space = a.get_array_space().await.unwrap();
    let used = space.space.total_used.unwrap();
    // 60 + 6 + 4.5 TiB, 2100 + 600 + 24 + 20 GiB.
    assert_eq!(used, 70 * TIB + TIB / 2 + 2744 * GIB);
    assert_eq!(space.space.total_physical, Some(used));
    assert_eq!(space.space.data_reduction, Some(1.0));
    let free = space.capacity - used;
    assert!(free > 26 * TIB && free < 27 * TIB, "free {free}");

    let wh = a
        .list_volumes(&ListParams::names(["analytics::warehouse01"]))
        .await
        .unwrap();
    assert_eq!(wh[0].space.total_used, Some(15 * TIB));
    assert_eq!(wh[0].provisioned, 16 * TIB);

    // Tighter fills come from the seed's fields; new volumes have written nothing.
    let tight = MockArray::builder()
        .seed(Seed::Brownfield(BrownfieldSeed {
            capacity: flasharray::Size::tib(80),
            ..BrownfieldSeed::default()
        }))
        .build();
    let t: &dyn FlashArray = &tight;
    t.create_volumes(
        &[VolumeName::new("fresh").unwrap()],
        &VolumePost::default().with_provisioned(TIB),
    )
    .await
    .unwrap();
    let s = t.get_array_space().await.unwrap();
    assert_eq!(s.capacity, 80 * TIB);
    assert_eq!(s.space.total_used, Some(used));
}

#[tokio::test]
async fn brownfield_safemode_refuses_eradication() {
    let mock = brownfield();
    let a: &dyn FlashArray = &mock;
    let info = a.get_array().await.unwrap();
    assert_eq!(
        info.eradication_config.manual_eradication,
        Some(flasharray::models::ManualEradication::PartiallyDisabled)
    );
    let e = a
        .eradicate_volumes(&[VolumeName::new("old-scratch").unwrap()])
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::EradicationRefused, "{e}");
    // The clock still eradicates it once its time is up.
    mock.clock().advance(Duration::from_secs(6 * 3600));
    let left = a.list_volumes(&ListParams::all()).await.unwrap();
    assert!(left.iter().all(|v| v.name != "old-scratch"));
}

#[tokio::test]
async fn foreign_view_ignores_the_tenant_and_sees_every_foreign_change() {
    let mock = brownfield();
    let a: &dyn FlashArray = &mock;
    let before = ForeignView::read(a, "tenant-demo").await.unwrap();
    assert!(before.contains("host:worker-02"));
    assert!(before.contains(&format!("volume:{}", blue_volume(3))));
    assert!(before.contains("pod:tenant-blue"));

    // The tenant's own objects are not in the view.
    let pod = PodName::new("tenant-demo").unwrap();
    a.create_pods(std::slice::from_ref(&pod), &Default::default())
        .await
        .unwrap();
    a.set_tags(
        TagResource::Pod,
        &[Tag::new("tenant-demo", "pxfa.io", "tenant", "tenant-demo")],
    )
    .await
    .unwrap();
    let after = ForeignView::read(a, "tenant-demo").await.unwrap();
    assert!(after.changes_since(&before).is_empty());

    // tenant-blue's view sees tenant-demo's pod but not its own objects.
    let blue_view = ForeignView::read(a, "tenant-blue").await.unwrap();
    assert!(blue_view.contains("pod:tenant-demo"));
    assert!(!blue_view.contains("pod:tenant-blue"));

    // A foreign initiator change shows.
    a.patch_hosts(
        &[HostName::new("px-mgmt-worker-01").unwrap()],
        &HostPatch::default().with_add_wwns(vec!["2100F4C7AA002707".into()]),
    )
    .await
    .unwrap();
    let changed = ForeignView::read(a, "tenant-demo").await.unwrap();
    let diff = changed.changes_since(&before);
    assert_eq!(diff.len(), 1, "{diff:?}");
    assert!(diff[0].starts_with("~ host:px-mgmt-worker-01"), "{diff:?}");
}
