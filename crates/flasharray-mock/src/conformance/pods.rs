//! Pod rules: quotas, destroy, recover, eradicate, rename.

use flasharray::models::*;
use flasharray::params::*;
use flasharray::size::GIB;
use flasharray::{ErrorKind, FlashArray};

use super::shorthand::*;

/// Rule: pods quota destroy recover eradicate.
pub async fn pods_quota_destroy_recover_eradicate(a: &dyn FlashArray) {
    assert_eq!(
        kind(a.create_pods(&[p("q")], &PodPost::default().with_quota_limit(1000))).await,
        ErrorKind::Invalid
    );
    let pod = a
        .create_pods(&[p("t1")], &PodPost::default().with_quota_limit(10 * GIB))
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
    let grow = VolumePatch::default().with_provisioned(7 * GIB);
    assert_eq!(
        kind(a.patch_volumes(&vs(&["t1::a"]), &grow, false)).await,
        ErrorKind::Invalid
    );
    let grow_ok = VolumePatch::default().with_provisioned(6 * GIB);
    a.patch_volumes(&vs(&["t1::a"]), &grow_ok, false)
        .await
        .unwrap();
    let listed = a.list_pods(&ListParams::names(["t1"])).await.unwrap();
    assert_eq!(listed[0].space.total_provisioned, Some(10 * GIB));
    // Destroy refused while not empty, unless with contents.
    let destroy = PodPatch::destroy();
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
    let recover = PodPatch::recover();
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
    let q = |b| PodPatch::default().with_quota_limit(b);
    assert_eq!(
        kind(a.patch_pods(&[p("p1")], &q(2 * GIB), false)).await,
        ErrorKind::Invalid
    );
    a.patch_pods(&[p("p1")], &q(8 * GIB), false).await.unwrap();
    let rn = PodPatch::default().with_name("p2".into());
    a.patch_pods(&[p("p1")], &rn, false).await.unwrap();
    assert_eq!(vol(a, "p2::v").await.pod.name.as_deref(), Some("p2"));
}
