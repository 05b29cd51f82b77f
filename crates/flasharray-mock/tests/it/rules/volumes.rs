//! Volume rules on the mock clock and its destroy-connected policy.

use std::time::Duration;

use flasharray::models::*;
use flasharray::params::*;
use flasharray::size::GIB;
use flasharray::{ErrorKind, FlashArray};
use flasharray_mock::conformance::shorthand::*;
use flasharray_mock::{DestroyConnected, MockArray, MockClock};

use crate::support::{T0, mock};

#[tokio::test]
async fn destroy_recover_eradicate_on_the_clock() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_volumes(&vs(&["d1", "d2"]), &size(GIB))
        .await
        .unwrap();
    let destroy = VolumePatch::destroy();
    let recover = VolumePatch::recover();
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
    let grow = VolumePatch::default().with_provisioned(2 * GIB);
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
    let destroy = VolumePatch::destroy();
    a.patch_volumes(&vs(&["s"]), &destroy, false).await.unwrap();
    a.patch_pods(&[p("sp")], &PodPatch::destroy(), false)
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
    let destroy = VolumePatch::destroy();
    // Default: refused, nothing changes.
    let m = mock();
    let a: &dyn FlashArray = &m;
    volume_c_connected_to_h1(a).await;
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
    volume_c_connected_to_h1(a).await;
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

/// Volume `c` connected to host `h1`.
async fn volume_c_connected_to_h1(a: &dyn FlashArray) {
    a.create_volumes(&vs(&["c"]), &size(GIB)).await.unwrap();
    hosts(a, &["h1"]).await;
    a.create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["c"]), None)
        .await
        .unwrap();
}
