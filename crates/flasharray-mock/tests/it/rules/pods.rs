//! Pod rules that depend on the mock's destroy-connected policy.

use flasharray::models::*;
use flasharray::params::*;
use flasharray::size::GIB;
use flasharray::{ErrorKind, FlashArray};
use flasharray_mock::conformance::shorthand::*;

use crate::support::mock;

#[tokio::test]
async fn destroying_a_pod_with_connected_volumes_follows_the_policy() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    a.create_pods(&[p("p1")], &PodPost::default())
        .await
        .unwrap();
    a.create_volumes(&vs(&["p1::v"]), &size(GIB)).await.unwrap();
    hosts(a, &["h1"]).await;
    a.create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["p1::v"]), None)
        .await
        .unwrap();
    let destroy = PodPatch::destroy();
    let e = a.patch_pods(&[p("p1")], &destroy, true).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InUse);
    assert_eq!(e.as_api().unwrap().context(), Some("p1::v"));
    assert!(!a.list_pods(&ListParams::names(["p1"])).await.unwrap()[0].destroyed);
    assert!(!vol(a, "p1::v").await.destroyed);
}
