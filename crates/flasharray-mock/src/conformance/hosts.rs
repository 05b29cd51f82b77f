//! Host rules: initiator normalisation, ownership and editing.

use flasharray::models::*;
use flasharray::params::*;
use flasharray::{ErrorKind, FlashArray};

use super::shorthand::*;

/// Rule: host initiators are normalised and owned once.
pub async fn host_initiators_are_normalised_and_owned_once(a: &dyn FlashArray) {
    let body = HostPost::default()
        .with_wwns(vec!["21:00:f4:c7:aa:00:27:06".into()])
        .with_iqns(vec!["IQN.2010-01.com.example:node1".into()]);
    let made = a.create_hosts(&[h("h1")], &body).await.unwrap();
    assert_eq!(made[0].wwns, ["2100F4C7AA002706"]);
    assert_eq!(made[0].iqns, ["iqn.2010-01.com.example:node1"]);
    let dup = HostPost::default().with_wwns(vec!["2100f4c7aa002706".into()]);
    let e = a.create_hosts(&[h("h2")], &dup).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InUse);
    assert!(e.to_string().contains("already in use"), "{e}");
    assert!(a.list_hosts(&ListParams::names(["h2"])).await.is_err());
    let bad = HostPost::default().with_wwns(vec!["21:00".into()]);
    assert_eq!(
        kind(a.create_hosts(&[h("h3")], &bad)).await,
        ErrorKind::Invalid
    );
    let nvme_mix = HostPost::default()
        .with_nqns(vec!["nqn.2014-08.org.nvmexpress:uuid:1".into()])
        .with_iqns(vec!["iqn.2010-01.com.example:x".into()]);
    assert_eq!(
        kind(a.create_hosts(&[h("h4")], &nvme_mix)).await,
        ErrorKind::Invalid
    );
    let pers = HostPost::default().with_personality("windows95".into());
    assert_eq!(
        kind(a.create_hosts(&[h("h5")], &pers)).await,
        ErrorKind::Invalid
    );
    let esxi = HostPost::default().with_personality("esxi".into());
    assert_eq!(
        a.create_hosts(&[h("h5")], &esxi).await.unwrap()[0].personality,
        Some(HostPersonality::Esxi)
    );
}

/// Rule: host initiators add remove replace.
pub async fn host_initiators_add_remove_replace(a: &dyn FlashArray) {
    hosts(a, &["h1", "h2"]).await;
    let add = HostPatch::default().with_add_wwns(vec![
        "2100000000000001".into(),
        "21:00:00:00:00:00:00:02".into(),
    ]);
    let r = a.patch_hosts(&[h("h1")], &add).await.unwrap();
    assert_eq!(r[0].wwns, ["2100000000000001", "2100000000000002"]);
    let remove = HostPatch::default().with_remove_wwns(vec!["2100000000000001".into()]);
    assert_eq!(
        a.patch_hosts(&[h("h1")], &remove).await.unwrap()[0].wwns,
        ["2100000000000002"]
    );
    assert_eq!(
        kind(a.patch_hosts(&[h("h1")], &remove)).await,
        ErrorKind::Invalid
    );
    let steal = HostPatch::default().with_add_wwns(vec!["2100000000000002".into()]);
    assert_eq!(
        kind(a.patch_hosts(&[h("h2")], &steal)).await,
        ErrorKind::InUse
    );
    let replace = HostPatch::default()
        .with_wwns(vec![])
        .with_iqns(vec!["iqn.2020-01.io.pxfa:h1".into()]);
    let r = a.patch_hosts(&[h("h1")], &replace).await.unwrap();
    assert!(r[0].wwns.is_empty());
    assert_eq!(r[0].iqns, ["iqn.2020-01.io.pxfa:h1"]);
    // The freed WWN can now go to h2.
    a.patch_hosts(&[h("h2")], &steal).await.unwrap();
    let nvme = HostPatch::default().with_add_nqns(vec!["nqn.2014-08.org.nvmexpress:uuid:2".into()]);
    assert_eq!(
        kind(a.patch_hosts(&[h("h1")], &nvme)).await,
        ErrorKind::Invalid
    );
}

/// Rule: an NVMe host (one with an NQN) holds no IQN or WWN, whether created so
/// or patched so (FlashArray-Collection#627: current Purity//FA refuses it), and
/// a refused request changes nothing.
pub async fn an_nvme_host_holds_no_iqn_or_wwn(a: &dyn FlashArray) {
    let nqn = || vec!["nqn.2014-08.org.nvmexpress:uuid:1".to_string()];
    for mixed in [
        HostPost::default()
            .with_nqns(nqn())
            .with_iqns(vec!["iqn.2020-01.io.pxfa:n1".into()]),
        HostPost::default()
            .with_nqns(nqn())
            .with_wwns(vec!["2100000000000009".into()]),
    ] {
        let e = a.create_hosts(&[h("n1")], &mixed).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid, "{e}");
        assert_eq!(e.as_api().unwrap().status, 400);
    }
    assert!(a.list_hosts(&ListParams::names(["n1"])).await.is_err());
    let nvme = HostPost::default().with_nqns(nqn());
    a.create_hosts(&[h("n1")], &nvme).await.unwrap();
    for add in [
        HostPatch::default().with_add_iqns(vec!["iqn.2020-01.io.pxfa:n1".into()]),
        HostPatch::default().with_add_wwns(vec!["2100000000000009".into()]),
    ] {
        assert_eq!(
            kind(a.patch_hosts(&[h("n1")], &add)).await,
            ErrorKind::Invalid
        );
    }
    let listed = a.list_hosts(&ListParams::names(["n1"])).await.unwrap();
    assert_eq!(listed[0].nqns, nqn());
    assert!(listed[0].iqns.is_empty() && listed[0].wwns.is_empty());
    // Replacing the NQN by an IQN in one request is not mixing.
    let swap = HostPatch::default()
        .with_nqns(vec![])
        .with_iqns(vec!["iqn.2020-01.io.pxfa:n1".into()]);
    let r = a.patch_hosts(&[h("n1")], &swap).await.unwrap();
    assert!(r[0].nqns.is_empty());
}
