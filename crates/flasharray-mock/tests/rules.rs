//! The array's rules, exercised through `&dyn FlashArray` so that the same checks
//! describe what any backend must do.

use std::time::Duration;

use flasharray::models::*;
use flasharray::params::*;
use flasharray::size::{GIB, MIB, PIB};
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

// ------------------------------------------------------------------- names

#[tokio::test]
async fn names_are_case_insensitive_unique_and_keep_creation_case() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["Data01"]), &size(GIB))
        .await
        .unwrap();
    assert_eq!(
        kind(a.create_volumes(&vs(&["DATA01"]), &size(GIB))).await,
        ErrorKind::AlreadyExists
    );
    assert_eq!(vol(a, "data01").await.name, "Data01");
    a.create_hosts(&[h("Node1")], &HostPost::default())
        .await
        .unwrap();
    assert_eq!(
        kind(a.create_hosts(&[h("NODE1")], &HostPost::default())).await,
        ErrorKind::AlreadyExists
    );
    a.create_host_groups(&[g("Grp")]).await.unwrap();
    assert_eq!(
        kind(a.create_host_groups(&[g("grp")])).await,
        ErrorKind::AlreadyExists
    );
    a.create_pods(&[p("Pod1")], &PodPost::default())
        .await
        .unwrap();
    assert_eq!(
        kind(a.create_pods(&[p("POD1")], &PodPost::default())).await,
        ErrorKind::AlreadyExists
    );
}

#[tokio::test]
async fn a_destroyed_volume_still_owns_its_name() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["v1"]), &size(GIB)).await.unwrap();
    let destroy = VolumePatch {
        destroyed: Some(true),
        ..Default::default()
    };
    a.patch_volumes(&vs(&["v1"]), &destroy, false)
        .await
        .unwrap();
    let e = a
        .create_volumes(&vs(&["V1"]), &size(GIB))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
    assert_eq!(e.as_api().unwrap().status, 400);
    assert_eq!(e.as_api().unwrap().context(), Some("V1"));
}

#[tokio::test]
async fn pod_volumes_need_a_live_pod() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    let e = a
        .create_volumes(&vs(&["p1::v1"]), &size(GIB))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(e.as_api().unwrap().context(), Some("p1"));
    a.create_pods(&[p("P1")], &PodPost::default())
        .await
        .unwrap();
    let created = a
        .create_volumes(&vs(&["p1::v1"]), &size(GIB))
        .await
        .unwrap();
    assert_eq!(
        created[0].name, "P1::v1",
        "pod part shown with the pod's case"
    );
    assert_eq!(created[0].pod.name.as_deref(), Some("P1"));
    a.patch_pods(
        &[p("p1")],
        &PodPatch {
            destroyed: Some(true),
            ..Default::default()
        },
        true,
    )
    .await
    .unwrap();
    assert_eq!(
        kind(a.create_volumes(&vs(&["p1::v2"]), &size(GIB))).await,
        ErrorKind::Destroyed
    );
}

// ------------------------------------------------------------------- volumes

#[tokio::test]
async fn volume_sizes_follow_the_array_rules() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    let d = a
        .create_volumes(&vs(&["dflt"]), &VolumePost::default())
        .await
        .unwrap();
    assert_eq!(d[0].provisioned, MIB, "default size is 1 MiB");
    for bad in [MIB + 1, MIB - 512, 4 * PIB + 512, 0] {
        let e = a
            .create_volumes(&vs(&["bad"]), &size(bad))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid, "{bad}: {e}");
        assert!(e.to_string().contains("provisioned"), "{e}");
    }
    a.create_volumes(&vs(&["max"]), &size(4 * PIB))
        .await
        .unwrap();
    assert!(a.list_volumes(&ListParams::names(["bad"])).await.is_err());
}

#[tokio::test]
async fn batch_create_is_all_or_nothing() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["b"]), &size(GIB)).await.unwrap();
    let e = a
        .create_volumes(&vs(&["a", "B", "c"]), &size(GIB))
        .await
        .unwrap_err();
    assert_eq!(e.as_api().unwrap().context(), Some("B"));
    assert_eq!(a.list_volumes(&ListParams::all()).await.unwrap().len(), 1);
    let e = a
        .create_volumes(&vs(&["x", "nopod::y"]), &size(GIB))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(a.list_volumes(&ListParams::all()).await.unwrap().len(), 1);
    let made = a
        .create_volumes(&vs(&["a", "c", "d"]), &size(GIB))
        .await
        .unwrap();
    assert_eq!(
        made.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
        ["a", "c", "d"]
    );
    assert_eq!(m.stats().op("create_volumes"), 4);
}

#[tokio::test]
async fn serials_and_creation_times() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    let info = a.get_array().await.unwrap();
    let prefix: String = info
        .id
        .unwrap()
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(16)
        .collect::<String>()
        .to_ascii_uppercase();
    let vols = a
        .create_volumes(&vs(&["s1", "s2"]), &size(GIB))
        .await
        .unwrap();
    for v in &vols {
        let s = v.serial.as_deref().unwrap();
        assert_eq!(s.len(), 24);
        assert!(
            s.chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()),
            "{s}"
        );
        assert!(s.starts_with(&prefix), "{s} vs {prefix}");
        assert_eq!(v.created, Some(T0));
        assert_eq!(v.id.as_deref().map(str::len), Some(36));
    }
    assert_ne!(vols[0].serial, vols[1].serial);
}

#[tokio::test]
async fn resize_needs_truncate_to_shrink() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["r"]), &size(10 * GIB))
        .await
        .unwrap();
    let to = |b| VolumePatch {
        provisioned: Some(b),
        ..Default::default()
    };
    let grown = a
        .patch_volumes(&vs(&["r"]), &to(20 * GIB), false)
        .await
        .unwrap();
    assert_eq!(grown[0].provisioned, 20 * GIB);
    assert_eq!(grown[0].space.total_provisioned, Some(20 * GIB));
    let e = a
        .patch_volumes(&vs(&["r"]), &to(5 * GIB), false)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("truncate"), "{e}");
    assert_eq!(vol(a, "r").await.provisioned, 20 * GIB);
    a.patch_volumes(&vs(&["r"]), &to(5 * GIB), true)
        .await
        .unwrap();
    assert_eq!(vol(a, "r").await.provisioned, 5 * GIB);
    assert_eq!(
        kind(a.patch_volumes(&vs(&["r"]), &to(5 * GIB + 1), false)).await,
        ErrorKind::Invalid
    );
}

#[tokio::test]
async fn rename_keeps_the_pod_and_refuses_taken_names() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_pods(&[p("p1"), p("p2")], &PodPost::default())
        .await
        .unwrap();
    a.create_volumes(&vs(&["p1::a", "p1::b", "plain"]), &size(GIB))
        .await
        .unwrap();
    let rn = |n: &str| VolumePatch {
        name: Some(n.into()),
        ..Default::default()
    };
    let r = a
        .patch_volumes(&vs(&["p1::a"]), &rn("a2"), false)
        .await
        .unwrap();
    assert_eq!(r[0].name, "p1::a2");
    let r = a
        .patch_volumes(&vs(&["p1::a2"]), &rn("p1::a3"), false)
        .await
        .unwrap();
    assert_eq!(r[0].name, "p1::a3");
    assert_eq!(
        kind(a.patch_volumes(&vs(&["p1::a3"]), &rn("B"), false)).await,
        ErrorKind::AlreadyExists
    );
    assert_eq!(
        kind(a.patch_volumes(&vs(&["p1::a3"]), &rn("p2::a3"), false)).await,
        ErrorKind::Invalid
    );
    assert_eq!(
        kind(a.patch_volumes(&vs(&["plain"]), &rn("bad name"), false)).await,
        ErrorKind::Invalid
    );
    let r = a
        .patch_volumes(&vs(&["plain"]), &rn("PLAIN"), false)
        .await
        .unwrap();
    assert_eq!(r[0].name, "PLAIN", "case-only rename");
    assert_eq!(
        kind(a.patch_volumes(&vs(&["plain", "p1::b"]), &rn("x"), false)).await,
        ErrorKind::Invalid
    );
    assert!(a.list_volumes(&ListParams::names(["p1::a"])).await.is_err());
}

#[tokio::test]
async fn volumes_move_between_pods_with_connections_and_tags() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_pods(&[p("p1")], &PodPost::default())
        .await
        .unwrap();
    a.create_volumes(&vs(&["mv"]), &size(GIB)).await.unwrap();
    a.create_hosts(&[h("h1")], &HostPost::default())
        .await
        .unwrap();
    a.create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["mv"]), None)
        .await
        .unwrap();
    a.set_tags(TagResource::Volume, &[Tag::new("mv", "pxfa.io", "k", "v")])
        .await
        .unwrap();
    let into = VolumePatch {
        pod: Some(NameRef::new("p1")),
        ..Default::default()
    };
    let r = a.patch_volumes(&vs(&["mv"]), &into, false).await.unwrap();
    assert_eq!(r[0].name, "p1::mv");
    assert_eq!(r[0].pod.name.as_deref(), Some("p1"));
    assert_eq!(r[0].connection_count, Some(1));
    let tags = a
        .list_tags(TagResource::Volume, &TagParams::default())
        .await
        .unwrap();
    assert_eq!(tags[0].resource.name.as_deref(), Some("p1::mv"));
    let conns = a
        .list_connections(&ConnectionParams::default())
        .await
        .unwrap();
    assert_eq!(conns[0].volume.name.as_deref(), Some("p1::mv"));
    let out = VolumePatch {
        pod: Some(NameRef::new("")),
        ..Default::default()
    };
    let r = a
        .patch_volumes(&vs(&["p1::mv"]), &out, false)
        .await
        .unwrap();
    assert_eq!(r[0].name, "mv");
    assert!(r[0].pod.is_unset());
    let nowhere = VolumePatch {
        pod: Some(NameRef::new("nope")),
        ..Default::default()
    };
    assert_eq!(
        kind(a.patch_volumes(&vs(&["mv"]), &nowhere, false)).await,
        ErrorKind::NotFound
    );
}

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

#[tokio::test]
async fn copies_take_the_source_size() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["src"]), &size(3 * GIB))
        .await
        .unwrap();
    let body = VolumePost {
        provisioned: None,
        source: Some(NameRef::new("src")),
    };
    let c = a.create_volumes(&vs(&["dst"]), &body).await.unwrap();
    assert_eq!(c[0].provisioned, 3 * GIB);
    let missing = VolumePost {
        provisioned: None,
        source: Some(NameRef::new("nope")),
    };
    assert_eq!(
        kind(a.create_volumes(&vs(&["d2"]), &missing)).await,
        ErrorKind::NotFound
    );
}

// --------------------------------------------------------------------- hosts

#[tokio::test]
async fn host_initiators_are_normalised_and_owned_once() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    let body = HostPost {
        wwns: vec!["21:00:f4:c7:aa:00:27:06".into()],
        iqns: vec!["IQN.2010-01.com.example:node1".into()],
        ..Default::default()
    };
    let made = a.create_hosts(&[h("h1")], &body).await.unwrap();
    assert_eq!(made[0].wwns, ["2100F4C7AA002706"]);
    assert_eq!(made[0].iqns, ["iqn.2010-01.com.example:node1"]);
    let dup = HostPost {
        wwns: vec!["2100f4c7aa002706".into()],
        ..Default::default()
    };
    let e = a.create_hosts(&[h("h2")], &dup).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InUse);
    assert!(e.to_string().contains("already in use"), "{e}");
    assert!(a.list_hosts(&ListParams::names(["h2"])).await.is_err());
    let bad = HostPost {
        wwns: vec!["21:00".into()],
        ..Default::default()
    };
    assert_eq!(
        kind(a.create_hosts(&[h("h3")], &bad)).await,
        ErrorKind::Invalid
    );
    let nvme_mix = HostPost {
        nqns: vec!["nqn.2014-08.org.nvmexpress:uuid:1".into()],
        iqns: vec!["iqn.2010-01.com.example:x".into()],
        ..Default::default()
    };
    assert_eq!(
        kind(a.create_hosts(&[h("h4")], &nvme_mix)).await,
        ErrorKind::Invalid
    );
    let pers = HostPost {
        personality: Some("windows95".into()),
        ..Default::default()
    };
    assert_eq!(
        kind(a.create_hosts(&[h("h5")], &pers)).await,
        ErrorKind::Invalid
    );
    let esxi = HostPost {
        personality: Some("esxi".into()),
        ..Default::default()
    };
    assert_eq!(
        a.create_hosts(&[h("h5")], &esxi).await.unwrap()[0]
            .personality
            .as_deref(),
        Some("esxi")
    );
}

#[tokio::test]
async fn host_initiators_add_remove_replace() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_hosts(&[h("h1"), h("h2")], &HostPost::default())
        .await
        .unwrap();
    let add = HostPatch {
        add_wwns: vec!["2100000000000001".into(), "21:00:00:00:00:00:00:02".into()],
        ..Default::default()
    };
    let r = a.patch_hosts(&[h("h1")], &add).await.unwrap();
    assert_eq!(r[0].wwns, ["2100000000000001", "2100000000000002"]);
    let remove = HostPatch {
        remove_wwns: vec!["2100000000000001".into()],
        ..Default::default()
    };
    assert_eq!(
        a.patch_hosts(&[h("h1")], &remove).await.unwrap()[0].wwns,
        ["2100000000000002"]
    );
    assert_eq!(
        kind(a.patch_hosts(&[h("h1")], &remove)).await,
        ErrorKind::Invalid
    );
    let steal = HostPatch {
        add_wwns: vec!["2100000000000002".into()],
        ..Default::default()
    };
    assert_eq!(
        kind(a.patch_hosts(&[h("h2")], &steal)).await,
        ErrorKind::InUse
    );
    let replace = HostPatch {
        wwns: Some(vec![]),
        iqns: Some(vec!["iqn.2020-01.io.pxfa:h1".into()]),
        ..Default::default()
    };
    let r = a.patch_hosts(&[h("h1")], &replace).await.unwrap();
    assert!(r[0].wwns.is_empty());
    assert_eq!(r[0].iqns, ["iqn.2020-01.io.pxfa:h1"]);
    // The freed WWN can now go to h2.
    a.patch_hosts(&[h("h2")], &steal).await.unwrap();
    let nvme = HostPatch {
        add_nqns: vec!["nqn.2014-08.org.nvmexpress:uuid:2".into()],
        ..Default::default()
    };
    assert_eq!(
        kind(a.patch_hosts(&[h("h1")], &nvme)).await,
        ErrorKind::Invalid
    );
}

#[tokio::test]
async fn a_host_is_in_at_most_one_group() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_hosts(&[h("h1"), h("h2")], &HostPost::default())
        .await
        .unwrap();
    a.create_host_groups(&[g("g1"), g("g2")]).await.unwrap();
    let rows = a
        .add_host_group_members(&g("g1"), &[h("h1"), h("h2")])
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].group.name.as_deref(), Some("g1"));
    let e = a
        .add_host_group_members(&g("g2"), &[h("h1")])
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InUse);
    assert!(e.to_string().contains("already belongs to"), "{e}");
    let join = HostPatch {
        host_group: Some(NameRef::new("g2")),
        ..Default::default()
    };
    assert_eq!(
        kind(a.patch_hosts(&[h("h1")], &join)).await,
        ErrorKind::InUse
    );
    let groups = a
        .list_host_groups(&ListParams::names(["g1"]))
        .await
        .unwrap();
    assert_eq!(groups[0].host_count, Some(2));
    let members = a
        .list_host_group_members(&MemberParams {
            group_names: vec!["g1".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(members.len(), 2);
    a.remove_host_group_members(&g("g1"), &[h("h1")])
        .await
        .unwrap();
    assert_eq!(
        kind(a.remove_host_group_members(&g("g1"), &[h("h1")])).await,
        ErrorKind::Invalid
    );
    let hosts = a.patch_hosts(&[h("h1")], &join).await.unwrap();
    assert_eq!(hosts[0].host_group.name.as_deref(), Some("g2"));
    let leave = HostPatch {
        host_group: Some(NameRef::new("")),
        ..Default::default()
    };
    assert!(
        a.patch_hosts(&[h("h1")], &leave).await.unwrap()[0]
            .host_group
            .name
            .is_none()
    );
}

#[tokio::test]
async fn hosts_and_groups_in_use_cannot_be_deleted() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["v1", "v2"]), &size(GIB))
        .await
        .unwrap();
    a.create_hosts(&[h("h1"), h("h2")], &HostPost::default())
        .await
        .unwrap();
    a.create_host_groups(&[g("g1")]).await.unwrap();
    a.add_host_group_members(&g("g1"), &[h("h2")])
        .await
        .unwrap();
    a.create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["v1"]), None)
        .await
        .unwrap();
    a.create_connections(&ConnectionTarget::HostGroup(g("g1")), &vs(&["v2"]), None)
        .await
        .unwrap();
    let e = a.delete_hosts(&[h("h1")]).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InUse);
    assert!(
        e.to_string()
            .contains("cannot be deleted due to existing connections"),
        "{e}"
    );
    assert_eq!(kind(a.delete_hosts(&[h("h2")])).await, ErrorKind::InUse);
    let e = a.delete_host_groups(&[g("g1")]).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InUse, "{e}");
    a.remove_host_group_members(&g("g1"), &[h("h2")])
        .await
        .unwrap();
    assert_eq!(
        kind(a.delete_host_groups(&[g("g1")])).await,
        ErrorKind::InUse,
        "connections"
    );
    a.delete_connections(&ConnectionTarget::HostGroup(g("g1")), &vs(&["v2"]))
        .await
        .unwrap();
    a.delete_host_groups(&[g("g1")]).await.unwrap();
    a.delete_hosts(&[h("h2")]).await.unwrap();
    a.delete_connections(&ConnectionTarget::Host(h("h1")), &vs(&["v1"]))
        .await
        .unwrap();
    a.delete_hosts(&[h("h1")]).await.unwrap();
    assert!(a.list_hosts(&ListParams::all()).await.unwrap().is_empty());
}

// --------------------------------------------------------------- connections

#[tokio::test]
async fn luns_are_allocated_as_the_array_does() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["p1", "p2", "p3", "s1", "s2", "x"]), &size(GIB))
        .await
        .unwrap();
    a.create_hosts(&[h("h1"), h("h2")], &HostPost::default())
        .await
        .unwrap();
    a.create_host_groups(&[g("g1")]).await.unwrap();
    a.add_host_group_members(&g("g1"), &[h("h1"), h("h2")])
        .await
        .unwrap();
    let host = ConnectionTarget::Host(h("h1"));
    let group = ConnectionTarget::HostGroup(g("g1"));
    let c = a
        .create_connections(&host, &vs(&["p1", "p2"]), None)
        .await
        .unwrap();
    assert_eq!(
        c.iter().map(|c| c.lun).collect::<Vec<_>>(),
        [Some(1), Some(2)]
    );
    let c = a
        .create_connections(&group, &vs(&["s1", "s2"]), None)
        .await
        .unwrap();
    // One row per member host, shared LUNs from 254 down.
    assert_eq!(c.len(), 4);
    let mut luns: Vec<_> = c
        .iter()
        .map(|c| (c.volume.name.clone().unwrap(), c.lun.unwrap()))
        .collect();
    luns.dedup();
    assert_eq!(luns, [("s1".into(), 254), ("s2".into(), 253)]);
    // Explicit LUN honoured, or refused when any host of the target has it.
    let e = a
        .create_connections(&host, &vs(&["p3"]), Some(253))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InUse, "{e}");
    let c = a
        .create_connections(&host, &vs(&["p3"]), Some(10))
        .await
        .unwrap();
    assert_eq!(c[0].lun, Some(10));
    assert_eq!(
        kind(a.create_connections(&host, &vs(&["x"]), Some(4096))).await,
        ErrorKind::Invalid
    );
    assert_eq!(
        kind(a.create_connections(&host, &vs(&["x", "p1"]), Some(5))).await,
        ErrorKind::Invalid
    );
    let e = a
        .create_connections(&host, &vs(&["p1"]), None)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
    assert!(e.to_string().contains("Connection already exists."), "{e}");
    // A volume the host sees through its group cannot also be private.
    assert_eq!(
        kind(a.create_connections(&host, &vs(&["s1"]), None)).await,
        ErrorKind::Invalid
    );
    // Next private LUN skips the ones taken (1, 2, 10 and the shared 253/254).
    let c = a
        .create_connections(&host, &vs(&["x"]), None)
        .await
        .unwrap();
    assert_eq!(c[0].lun, Some(3));
}

#[tokio::test]
async fn connection_rows_counts_and_removal() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["v1", "v2"]), &size(GIB))
        .await
        .unwrap();
    a.create_hosts(&[h("h1"), h("h2")], &HostPost::default())
        .await
        .unwrap();
    a.create_host_groups(&[g("empty"), g("g1")]).await.unwrap();
    a.add_host_group_members(&g("g1"), &[h("h1"), h("h2")])
        .await
        .unwrap();
    a.create_connections(&ConnectionTarget::HostGroup(g("empty")), &vs(&["v1"]), None)
        .await
        .unwrap();
    a.create_connections(&ConnectionTarget::HostGroup(g("g1")), &vs(&["v1"]), None)
        .await
        .unwrap();
    let rows = a
        .list_connections(&ConnectionParams {
            volume_names: vec!["v1".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(rows.len(), 3);
    let empty: Vec<_> = rows
        .iter()
        .filter(|r| r.host_group.name.as_deref() == Some("empty"))
        .collect();
    assert_eq!(empty.len(), 1);
    assert!(empty[0].host.name.is_none());
    assert_eq!(vol(a, "v1").await.connection_count, Some(2));
    let by_host = a
        .list_connections(&ConnectionParams {
            host_names: vec!["H2".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(by_host.len(), 1);
    assert_eq!(by_host[0].host_group.name.as_deref(), Some("g1"));
    let hosts = a.list_hosts(&ListParams::names(["h1"])).await.unwrap();
    assert_eq!(hosts[0].connection_count, Some(1));
    assert_eq!(hosts[0].space.total_provisioned, Some(GIB));
    let groups = a
        .list_host_groups(&ListParams::names(["g1"]))
        .await
        .unwrap();
    assert_eq!(groups[0].connection_count, Some(1));
    let e = a
        .delete_connections(&ConnectionTarget::Host(h("h1")), &vs(&["v1"]))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotConnected);
    assert!(e.to_string().contains("is not connected"), "{e}");
    // All or nothing: v2 is not connected, so v1 stays connected.
    assert_eq!(
        kind(a.delete_connections(&ConnectionTarget::HostGroup(g("g1")), &vs(&["v1", "v2"]))).await,
        ErrorKind::NotConnected
    );
    assert_eq!(vol(a, "v1").await.connection_count, Some(2));
    assert_eq!(
        kind(a.list_connections(&ConnectionParams {
            host_names: vec!["ghost".into()],
            ..Default::default()
        }))
        .await,
        ErrorKind::NotFound
    );
}

#[tokio::test]
async fn destroyed_volumes_cannot_be_connected() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["v1"]), &size(GIB)).await.unwrap();
    a.create_hosts(&[h("h1")], &HostPost::default())
        .await
        .unwrap();
    a.patch_volumes(
        &vs(&["v1"]),
        &VolumePatch {
            destroyed: Some(true),
            ..Default::default()
        },
        false,
    )
    .await
    .unwrap();
    let e = a
        .create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["v1"]), None)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Destroyed);
}

// ---------------------------------------------------------------------- pods

#[tokio::test]
async fn pods_quota_destroy_recover_eradicate() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    assert_eq!(
        kind(a.create_pods(
            &[p("q")],
            &PodPost {
                quota_limit: Some(1000)
            }
        ))
        .await,
        ErrorKind::Invalid
    );
    let pod = a
        .create_pods(
            &[p("t1")],
            &PodPost {
                quota_limit: Some(10 * GIB),
            },
        )
        .await
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(pod.quota_limit, Some(10 * GIB));
    assert_eq!(pod.array_count, Some(1));
    assert_eq!(pod.mediator.as_deref(), Some("purestorage"));
    assert_eq!(pod.arrays[0].status.as_deref(), Some("online"));
    assert_eq!(pod.arrays[0].name.as_deref(), Some("pxfa-sim"));
    let arrays = a.list_pod_arrays(&[p("t1")]).await.unwrap();
    assert_eq!(arrays[0].member.name.as_deref(), Some("pxfa-sim"));
    assert_eq!(arrays[0].group.name.as_deref(), Some("t1"));
    // Quota enforced on create and resize.
    a.create_volumes(&vs(&["t1::a", "t1::b"]), &size(4 * GIB))
        .await
        .unwrap();
    assert_eq!(
        kind(a.create_volumes(&vs(&["t1::c"]), &size(4 * GIB))).await,
        ErrorKind::Invalid
    );
    let grow = VolumePatch {
        provisioned: Some(7 * GIB),
        ..Default::default()
    };
    assert_eq!(
        kind(a.patch_volumes(&vs(&["t1::a"]), &grow, false)).await,
        ErrorKind::Invalid
    );
    let grow_ok = VolumePatch {
        provisioned: Some(6 * GIB),
        ..Default::default()
    };
    a.patch_volumes(&vs(&["t1::a"]), &grow_ok, false)
        .await
        .unwrap();
    let listed = a.list_pods(&ListParams::names(["t1"])).await.unwrap();
    assert_eq!(listed[0].space.total_provisioned, Some(10 * GIB));
    // Destroy refused while not empty, unless with contents.
    let destroy = PodPatch {
        destroyed: Some(true),
        ..Default::default()
    };
    assert_eq!(
        kind(a.patch_pods(&[p("t1")], &destroy, false)).await,
        ErrorKind::InUse
    );
    let d = a.patch_pods(&[p("t1")], &destroy, true).await.unwrap();
    assert!(d[0].destroyed && d[0].time_remaining == Some(DAY_MS));
    assert!(vol(a, "t1::a").await.destroyed);
    // Recover brings back what the pod took down.
    let recover = PodPatch {
        destroyed: Some(false),
        ..Default::default()
    };
    a.patch_pods(&[p("t1")], &recover, false).await.unwrap();
    assert!(!vol(a, "t1::b").await.destroyed);
    // Eradicate only when destroyed, and contents only when asked.
    assert_eq!(
        kind(a.eradicate_pods(&[p("t1")], true)).await,
        ErrorKind::NotDestroyed
    );
    a.patch_pods(&[p("t1")], &destroy, true).await.unwrap();
    assert_eq!(
        kind(a.eradicate_pods(&[p("t1")], false)).await,
        ErrorKind::InUse
    );
    a.eradicate_pods(&[p("t1")], true).await.unwrap();
    assert!(a.list_pods(&ListParams::all()).await.unwrap().is_empty());
    assert!(a.list_volumes(&ListParams::all()).await.unwrap().is_empty());
    a.create_pods(&[p("t1")], &PodPost::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn pod_quota_cannot_drop_below_usage_and_rename_carries_volumes() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_pods(&[p("p1")], &PodPost::default())
        .await
        .unwrap();
    a.create_volumes(&vs(&["p1::v"]), &size(4 * GIB))
        .await
        .unwrap();
    let q = |b| PodPatch {
        quota_limit: Some(b),
        ..Default::default()
    };
    assert_eq!(
        kind(a.patch_pods(&[p("p1")], &q(2 * GIB), false)).await,
        ErrorKind::Invalid
    );
    a.patch_pods(&[p("p1")], &q(8 * GIB), false).await.unwrap();
    let rn = PodPatch {
        name: Some("p2".into()),
        ..Default::default()
    };
    a.patch_pods(&[p("p1")], &rn, false).await.unwrap();
    assert_eq!(vol(a, "p2::v").await.pod.name.as_deref(), Some("p2"));
}

// ---------------------------------------------------------------------- tags

#[tokio::test]
async fn tags_upsert_filter_delete_and_follow_their_object() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["v1", "v2"]), &size(GIB))
        .await
        .unwrap();
    a.create_hosts(&[h("h1")], &HostPost::default())
        .await
        .unwrap();
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
    let ours = a
        .list_tags(
            TagResource::Volume,
            &TagParams {
                namespaces: vec!["pxfa.io".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
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
    let left = a
        .list_tags(
            TagResource::Volume,
            &TagParams {
                resource_names: vec!["v1".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        left.iter().map(|t| t.key.as_str()).collect::<Vec<_>>(),
        ["managed-by"]
    );
    // Destroyed: still listed; recovered: still there; eradicated: gone.
    let destroy = VolumePatch {
        destroyed: Some(true),
        ..Default::default()
    };
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
    a.patch_volumes(
        &vs(&["v1"]),
        &VolumePatch {
            destroyed: Some(false),
            ..Default::default()
        },
        false,
    )
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
    let fresh = a
        .list_tags(
            TagResource::Volume,
            &TagParams {
                resource_names: vec!["v1".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(
        fresh.is_empty(),
        "a new object does not inherit old tags: {fresh:?}"
    );
    a.delete_hosts(&[h("h1")]).await.unwrap();
    assert!(
        a.list_tags(TagResource::Host, &TagParams::default())
            .await
            .unwrap()
            .is_empty()
    );
}

// --------------------------------------------------------------------- space

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

// ----------------------------------------------------------------- listing

#[tokio::test]
async fn list_parameters_behave_like_the_array() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["px-a"]), &size(GIB)).await.unwrap();
    a.create_volumes(&vs(&["px-b"]), &size(3 * GIB))
        .await
        .unwrap();
    a.create_volumes(&vs(&["other"]), &size(2 * GIB))
        .await
        .unwrap();
    a.patch_volumes(
        &vs(&["other"]),
        &VolumePatch {
            destroyed: Some(true),
            ..Default::default()
        },
        false,
    )
    .await
    .unwrap();
    let names = |v: Vec<Volume>| v.into_iter().map(|v| v.name).collect::<Vec<_>>();
    let e = a
        .list_volumes(&ListParams::names(["px-a", "nope"]))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(e.as_api().unwrap().context(), Some("nope"));
    assert_eq!(
        names(
            a.list_volumes(&ListParams::all().destroyed(false))
                .await
                .unwrap()
        ),
        ["px-a", "px-b"]
    );
    assert_eq!(
        names(
            a.list_volumes(&ListParams::all().destroyed(true))
                .await
                .unwrap()
        ),
        ["other"]
    );
    assert_eq!(
        kind(a.list_volumes(&ListParams::names(["other"]).destroyed(false))).await,
        ErrorKind::Destroyed
    );
    let by_filter = a
        .list_volumes(&ListParams::all().filter("name='px-*' and provisioned>1073741824"))
        .await
        .unwrap();
    assert_eq!(names(by_filter), ["px-b"]);
    let sorted = ListParams {
        sort: vec!["provisioned-".into()],
        ..Default::default()
    };
    assert_eq!(
        names(a.list_volumes(&sorted).await.unwrap()),
        ["px-b", "other", "px-a"]
    );
    let sorted = ListParams {
        sort: vec!["-name".into()],
        limit: Some(2),
        ..Default::default()
    };
    assert_eq!(
        names(a.list_volumes(&sorted).await.unwrap()),
        ["px-b", "px-a"]
    );
    let id = vol(a, "px-a").await.id.unwrap();
    let by_id = ListParams {
        ids: vec![id],
        ..Default::default()
    };
    assert_eq!(names(a.list_volumes(&by_id).await.unwrap()), ["px-a"]);
    assert_eq!(
        kind(a.list_volumes(&ListParams::all().filter("name='unterminated"))).await,
        ErrorKind::Invalid
    );
    let hosts_by_ids = ListParams {
        ids: vec!["x".into()],
        ..Default::default()
    };
    assert_eq!(kind(a.list_hosts(&hosts_by_ids)).await, ErrorKind::Invalid);
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
    a.create_host_groups(&[g("g1")]).await.unwrap();
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
async fn joining_a_group_cannot_create_lun_or_volume_clashes() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["priv", "shared"]), &size(GIB))
        .await
        .unwrap();
    a.create_hosts(&[h("h1")], &HostPost::default())
        .await
        .unwrap();
    a.create_host_groups(&[g("g1")]).await.unwrap();
    a.create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["priv"]), Some(254))
        .await
        .unwrap();
    a.create_connections(
        &ConnectionTarget::HostGroup(g("g1")),
        &vs(&["shared"]),
        None,
    )
    .await
    .unwrap();
    // The group's first shared LUN is 254, which h1 already uses privately.
    let e = a
        .add_host_group_members(&g("g1"), &[h("h1")])
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InUse, "{e}");
    assert!(e.to_string().contains("LUN 254"), "{e}");
    let groups = a
        .list_host_groups(&ListParams::names(["g1"]))
        .await
        .unwrap();
    assert_eq!(groups[0].host_count, Some(0));
    // Seen twice: the same volume privately and through the group.
    a.delete_connections(&ConnectionTarget::Host(h("h1")), &vs(&["priv"]))
        .await
        .unwrap();
    a.create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["shared"]), None)
        .await
        .unwrap();
    let join = HostPatch {
        host_group: Some(NameRef::new("g1")),
        ..Default::default()
    };
    assert_eq!(
        kind(a.patch_hosts(&[h("h1")], &join)).await,
        ErrorKind::Invalid
    );
    a.delete_connections(&ConnectionTarget::Host(h("h1")), &vs(&["shared"]))
        .await
        .unwrap();
    a.patch_hosts(&[h("h1")], &join).await.unwrap();
    let rows = a
        .list_connections(&ConnectionParams {
            host_names: vec!["h1".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].lun, Some(254));
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

#[tokio::test]
async fn filters_and_sorts_work_on_every_collection() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    let fc = HostPost {
        wwns: vec!["2100000000000001".into()],
        ..Default::default()
    };
    a.create_hosts(&[h("fc-1")], &fc).await.unwrap();
    a.create_hosts(
        &[h("iscsi-1")],
        &HostPost {
            iqns: vec!["iqn.2020-01.io.pxfa:n1".into()],
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let hosts = a
        .list_hosts(&ListParams::all().filter("wwns='21000000*'"))
        .await
        .unwrap();
    assert_eq!(
        hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
        ["fc-1"]
    );
    let hosts = a
        .list_hosts(&ListParams {
            sort: vec!["name-".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
        ["iscsi-1", "fc-1"]
    );
    a.create_pods(&[p("pa"), p("pb")], &PodPost::default())
        .await
        .unwrap();
    a.patch_pods(
        &[p("pb")],
        &PodPatch {
            quota_limit: Some(GIB),
            ..Default::default()
        },
        false,
    )
    .await
    .unwrap();
    let pods = a
        .list_pods(&ListParams::all().filter("quota_limit"))
        .await
        .unwrap();
    assert_eq!(
        pods.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["pb"]
    );
    let pods = a
        .list_pods(&ListParams::all().filter("arrays[any].status='online' and not(name='pb')"))
        .await
        .unwrap();
    assert_eq!(
        pods.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["pa"]
    );
    a.create_volumes(&vs(&["c1", "c2"]), &size(GIB))
        .await
        .unwrap();
    a.create_connections(&ConnectionTarget::Host(h("fc-1")), &vs(&["c1", "c2"]), None)
        .await
        .unwrap();
    let conns = a
        .list_connections(&ConnectionParams {
            filter: Some("lun>1".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(conns.len(), 1);
    assert_eq!(conns[0].volume.name.as_deref(), Some("c2"));
}
