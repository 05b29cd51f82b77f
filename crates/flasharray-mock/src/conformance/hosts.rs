//! Host rules: initiator normalisation, ownership and editing.

use flasharray::models::*;
use flasharray::params::*;
use flasharray::{ErrorKind, FlashArray};

use super::shorthand::*;

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
