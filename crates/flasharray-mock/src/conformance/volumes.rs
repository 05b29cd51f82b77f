//! Volume rules: names, sizes, batches, serials, resizing, renaming, pods, copies.

use flasharray::models::*;
use flasharray::params::*;
use flasharray::size::{GIB, MIB, PIB};
use flasharray::{ErrorKind, FlashArray};

use super::shorthand::*;

/// Rule: a destroyed volume still owns its name.
pub async fn a_destroyed_volume_still_owns_its_name(a: &dyn FlashArray) {
    a.create_volumes(&vs(&["v1"]), &size(GIB)).await.unwrap();
    let destroy = VolumePatch::destroy();
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
    a.patch_pods(&[p("p1")], &PodPatch::destroy(), true)
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

/// Rule: `POST /volumes/batch` gives each volume its own size and tags, answers in
/// request order, and creates nothing when one item is refused (a taken or repeated
/// name, a bad size, a missing pod, a quota exceeded by the items together).
pub async fn volumes_batch_sizes_tags_and_all_or_nothing(a: &dyn FlashArray) {
    let item = |name: &str, bytes: u64, index: &str| {
        let mut i = VolumeBatchPost::new(v(name), bytes);
        i.tags = owner_tags();
        i.tags.push(TagBody::new("pxfa.io", "disk-index", index));
        i
    };
    a.create_pods(&[p("p1")], &PodPost::default().with_quota_limit(3 * GIB))
        .await
        .unwrap();
    let made = a
        .create_volumes_batch(&[item("p1::d2", 2 * GIB, "2"), item("p1::d1", GIB, "1")])
        .await
        .unwrap();
    assert_eq!(
        made.iter()
            .map(|v| (v.name.as_str(), v.provisioned))
            .collect::<Vec<_>>(),
        [("p1::d2", 2 * GIB), ("p1::d1", GIB)],
        "request order, each its own size"
    );
    for (name, index) in [("p1::d1", "1"), ("p1::d2", "2")] {
        let mut have = tag_keys(a, TagResource::Volume, name).await;
        have.sort();
        assert_eq!(
            have,
            [
                format!("pxfa.io/disk-index={index}"),
                "pxfa.io/managed-by=pxfa".to_string(),
                "pxfa.io/tenant=t1".to_string(),
            ],
            "{name} carries its own tags"
        );
    }
    let count = || async { a.list_volumes(&ListParams::all()).await.unwrap().len() };
    let refused = [
        (
            vec![item("x1", GIB, "1"), item("P1::D1", GIB, "1")],
            ErrorKind::AlreadyExists,
        ),
        (
            vec![item("x1", GIB, "1"), item("X1", GIB, "2")],
            ErrorKind::AlreadyExists,
        ),
        (
            vec![item("x1", GIB, "1"), item("x2", MIB + 1, "2")],
            ErrorKind::Invalid,
        ),
        (
            vec![item("x1", GIB, "1"), item("nopod::x2", GIB, "2")],
            ErrorKind::NotFound,
        ),
    ];
    for (items, want) in refused {
        let e = a.create_volumes_batch(&items).await.unwrap_err();
        assert_eq!(e.kind(), want, "{e}");
        assert_eq!(count().await, 2, "a refused batch created something: {e}");
    }
    // 512 MiB left in the pod: each item fits alone, not both together.
    let e = a
        .create_volumes_batch(&[item("p1::x1", GIB / 2, "1"), item("p1::x2", GIB / 2, "2")])
        .await
        .unwrap_err();
    assert!(e.to_string().contains("quota"), "{e}");
    assert_eq!(count().await, 2);
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
    let to = |b| VolumePatch::default().with_provisioned(b);
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
    let rn = |n: &str| VolumePatch::default().with_name(n.into());
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
    hosts(a, &["h1"]).await;
    a.create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["mv"]), None)
        .await
        .unwrap();
    a.set_tags(TagResource::Volume, &[Tag::new("mv", "pxfa.io", "k", "v")])
        .await
        .unwrap();
    let into = VolumePatch::default().with_pod(NameRef::new("p1"));
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
    let out = VolumePatch::default().with_pod(NameRef::new(""));
    let r = a
        .patch_volumes(&vs(&["p1::mv"]), &out, false)
        .await
        .unwrap();
    assert_eq!(r[0].name, "mv");
    assert!(r[0].pod.is_unset());
    let nowhere = VolumePatch::default().with_pod(NameRef::new("nope"));
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
    let body = VolumePost::default().with_source(NameRef::new("src"));
    let c = a.create_volumes(&vs(&["dst"]), &body).await.unwrap();
    assert_eq!(c[0].provisioned, 3 * GIB);
    let missing = VolumePost::default().with_source(NameRef::new("nope"));
    assert_eq!(
        kind(a.create_volumes(&vs(&["d2"]), &missing)).await,
        ErrorKind::NotFound
    );
}

/// Rule: one PATCH cannot both rename and destroy (or recover) a volume: the
/// array answers 400 "Invalid combination of parameters" and changes nothing
/// (apache/cloudstack#13049: CloudStack's FlashArray adapter sent `{name,
/// destroyed}` when deleting, and now sends two requests).
pub async fn rename_and_destroy_are_separate_requests(a: &dyn FlashArray) {
    a.create_volumes(&vs(&["v1"]), &size(GIB)).await.unwrap();
    for destroyed in [true, false] {
        let both = VolumePatch::default()
            .with_name("v1-gone".into())
            .with_destroyed(destroyed);
        let e = a
            .patch_volumes(&vs(&["v1"]), &both, false)
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid, "{e}");
        assert_eq!(e.as_api().unwrap().status, 400);
        assert!(
            e.to_string().contains("Invalid combination of parameters"),
            "{e}"
        );
    }
    let listed = a.list_volumes(&ListParams::names(["v1"])).await.unwrap();
    assert!(!listed[0].destroyed && listed[0].name == "v1");
    let rename = VolumePatch::default().with_name("v1-gone".into());
    a.patch_volumes(&vs(&["v1"]), &rename, false).await.unwrap();
    a.patch_volumes(&vs(&["v1-gone"]), &VolumePatch::destroy(), false)
        .await
        .unwrap();
}
