//! The array's rules as checks that any [`FlashArray`] must pass, so that the mock,
//! the simulator behind the REST client, and (read-only parts aside) a lab array can
//! be held to the same behaviour.
//!
//! Each check takes a fresh, empty array with the default settings (24 h
//! eradication delay, connected volumes not destroyable) and panics with a message
//! naming the broken rule, like a test assertion: these are test helpers, called
//! from `#[test]` functions (see `tests/rules.rs`) or iterated through [`all`].
//! Rules that need the mock's clock, faults or statistics stay in `tests/rules.rs`.

use flasharray::models::*;
use flasharray::params::*;
use flasharray::size::{GIB, MIB, PIB};
use flasharray::{ErrorKind, FlashArray, HostGroupName, HostName, PodName, VolumeName};
use futures_util::future::BoxFuture;

const DAY_MS: u64 = 86_400_000;

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

/// One conformance check: give it a fresh array, await it; it panics on a broken rule.
pub type Check = for<'a> fn(&'a dyn FlashArray) -> BoxFuture<'a, ()>;

macro_rules! registry {
    ($($name:ident),* $(,)?) => {
        /// Every check with its name, for runners that build a fresh array per check.
        pub fn all() -> Vec<(&'static str, Check)> {
            vec![$((stringify!($name), (|a| Box::pin($name(a))) as Check)),*]
        }
    };
}

registry!(
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

/// Rule: names are case insensitive unique and keep creation case.
pub async fn names_are_case_insensitive_unique_and_keep_creation_case(a: &dyn FlashArray) {
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
    a.create_host_groups(&[g("Grp")], &Default::default())
        .await
        .unwrap();
    assert_eq!(
        kind(a.create_host_groups(&[g("grp")], &Default::default())).await,
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

/// Rule: a destroyed volume still owns its name.
pub async fn a_destroyed_volume_still_owns_its_name(a: &dyn FlashArray) {
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

/// Rule: pod volumes need a live pod.
pub async fn pod_volumes_need_a_live_pod(a: &dyn FlashArray) {
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

/// Rule: volume sizes follow the array rules.
pub async fn volume_sizes_follow_the_array_rules(a: &dyn FlashArray) {
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

/// Rule: batch create is all or nothing.
pub async fn batch_create_is_all_or_nothing(a: &dyn FlashArray) {
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
}

/// Rule: serials and creation times.
pub async fn serials_and_creation_times(a: &dyn FlashArray) {
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
        assert!(v.created.is_some_and(|c| c > 0), "{v:?}");
        assert_eq!(v.id.as_deref().map(str::len), Some(36));
    }
    assert_ne!(vols[0].serial, vols[1].serial);
}

/// Rule: resize needs truncate to shrink.
pub async fn resize_needs_truncate_to_shrink(a: &dyn FlashArray) {
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

/// Rule: rename keeps the pod and refuses taken names.
pub async fn rename_keeps_the_pod_and_refuses_taken_names(a: &dyn FlashArray) {
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

/// Rule: volumes move between pods with connections and tags.
pub async fn volumes_move_between_pods_with_connections_and_tags(a: &dyn FlashArray) {
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

/// Rule: copies take the source size.
pub async fn copies_take_the_source_size(a: &dyn FlashArray) {
    a.create_volumes(&vs(&["src"]), &size(3 * GIB))
        .await
        .unwrap();
    let body = VolumePost {
        tags: Vec::new(),
        provisioned: None,
        source: Some(NameRef::new("src")),
    };
    let c = a.create_volumes(&vs(&["dst"]), &body).await.unwrap();
    assert_eq!(c[0].provisioned, 3 * GIB);
    let missing = VolumePost {
        tags: Vec::new(),
        provisioned: None,
        source: Some(NameRef::new("nope")),
    };
    assert_eq!(
        kind(a.create_volumes(&vs(&["d2"]), &missing)).await,
        ErrorKind::NotFound
    );
}

/// Rule: host initiators are normalised and owned once.
pub async fn host_initiators_are_normalised_and_owned_once(a: &dyn FlashArray) {
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

/// Rule: host initiators add remove replace.
pub async fn host_initiators_add_remove_replace(a: &dyn FlashArray) {
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

/// Rule: a host is in at most one group.
pub async fn a_host_is_in_at_most_one_group(a: &dyn FlashArray) {
    a.create_hosts(&[h("h1"), h("h2")], &HostPost::default())
        .await
        .unwrap();
    a.create_host_groups(&[g("g1"), g("g2")], &Default::default())
        .await
        .unwrap();
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

/// Rule: hosts and groups in use cannot be deleted.
pub async fn hosts_and_groups_in_use_cannot_be_deleted(a: &dyn FlashArray) {
    a.create_volumes(&vs(&["v1", "v2"]), &size(GIB))
        .await
        .unwrap();
    a.create_hosts(&[h("h1"), h("h2")], &HostPost::default())
        .await
        .unwrap();
    a.create_host_groups(&[g("g1")], &Default::default())
        .await
        .unwrap();
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

/// Rule: luns are allocated as the array does.
pub async fn luns_are_allocated_as_the_array_does(a: &dyn FlashArray) {
    a.create_volumes(&vs(&["p1", "p2", "p3", "s1", "s2", "x"]), &size(GIB))
        .await
        .unwrap();
    a.create_hosts(&[h("h1"), h("h2")], &HostPost::default())
        .await
        .unwrap();
    a.create_host_groups(&[g("g1")], &Default::default())
        .await
        .unwrap();
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

/// Rule: connection rows counts and removal.
pub async fn connection_rows_counts_and_removal(a: &dyn FlashArray) {
    a.create_volumes(&vs(&["v1", "v2"]), &size(GIB))
        .await
        .unwrap();
    a.create_hosts(&[h("h1"), h("h2")], &HostPost::default())
        .await
        .unwrap();
    a.create_host_groups(&[g("empty"), g("g1")], &Default::default())
        .await
        .unwrap();
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

/// Rule: destroyed volumes cannot be connected.
pub async fn destroyed_volumes_cannot_be_connected(a: &dyn FlashArray) {
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

/// Rule: pods quota destroy recover eradicate.
pub async fn pods_quota_destroy_recover_eradicate(a: &dyn FlashArray) {
    assert_eq!(
        kind(a.create_pods(
            &[p("q")],
            &PodPost {
                tags: Vec::new(),
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
                tags: Vec::new(),
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
    let array_name = a.get_array().await.unwrap().name;
    assert_eq!(pod.arrays[0].name.as_ref(), Some(&array_name));
    let arrays = a.list_pod_arrays(&[p("t1")]).await.unwrap();
    assert_eq!(arrays[0].member.name.as_ref(), Some(&array_name));
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
    assert!(d[0].destroyed);
    assert!(
        d[0].time_remaining
            .is_some_and(|t| t > DAY_MS - 60_000 && t <= DAY_MS),
        "{:?}",
        d[0].time_remaining
    );
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

/// Rule: pod quota cannot drop below usage and rename carries volumes.
pub async fn pod_quota_cannot_drop_below_usage_and_rename_carries_volumes(a: &dyn FlashArray) {
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

/// Rule: tags upsert filter delete and follow their object.
pub async fn tags_upsert_filter_delete_and_follow_their_object(a: &dyn FlashArray) {
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

/// Rule: list parameters behave like the array.
pub async fn list_parameters_behave_like_the_array(a: &dyn FlashArray) {
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

/// Rule: joining a group cannot create lun or volume clashes.
pub async fn joining_a_group_cannot_create_lun_or_volume_clashes(a: &dyn FlashArray) {
    a.create_volumes(&vs(&["priv", "shared"]), &size(GIB))
        .await
        .unwrap();
    a.create_hosts(&[h("h1")], &HostPost::default())
        .await
        .unwrap();
    a.create_host_groups(&[g("g1")], &Default::default())
        .await
        .unwrap();
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

/// Rule: filters and sorts work on every collection.
pub async fn filters_and_sorts_work_on_every_collection(a: &dyn FlashArray) {
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

fn owner_tags() -> Vec<TagBody> {
    vec![
        TagBody::new("pxfa.io", "managed-by", "pxfa"),
        TagBody::new("pxfa.io", "tenant", "t1"),
    ]
}

async fn tag_keys(a: &dyn FlashArray, kind: TagResource, name: &str) -> Vec<String> {
    a.list_tags(
        kind,
        &TagParams {
            resource_names: vec![name.into()],
            ..Default::default()
        },
    )
    .await
    .unwrap()
    .into_iter()
    .map(|t| format!("{}/{}={}", t.namespace.unwrap_or_default(), t.key, t.value))
    .collect()
}

/// Rule: tags in a create body are on every object of the call from its first
/// moment, with no separate tag call; a create without tags leaves objects untagged.
pub async fn creation_tags_arrive_with_every_object_of_the_call(a: &dyn FlashArray) {
    let want = ["pxfa.io/managed-by=pxfa", "pxfa.io/tenant=t1"];
    a.create_pods(
        &[p("t1")],
        &PodPost {
            tags: owner_tags(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    a.create_volumes(
        &vs(&["t1::a", "t1::b"]),
        &VolumePost {
            provisioned: Some(GIB),
            tags: owner_tags(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    a.create_hosts(
        &[h("h1")],
        &HostPost {
            wwns: vec!["2100F4C7AA002701".into()],
            tags: owner_tags(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    a.create_host_groups(&[g("g1"), g("g2")], &HostGroupPost { tags: owner_tags() })
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
