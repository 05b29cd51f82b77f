//! Connection rules: LUN allocation, connection rows, destroyed volumes.

use flasharray::models::*;
use flasharray::params::*;
use flasharray::size::GIB;
use flasharray::{ErrorKind, FlashArray};

use super::shorthand::*;

/// Rule: luns are allocated as the array does.
pub async fn luns_are_allocated_as_the_array_does(a: &dyn FlashArray) {
    a.create_volumes(&vs(&["p1", "p2", "p3", "s1", "s2", "x"]), &size(GIB))
        .await
        .unwrap();
    hosts(a, &["h1", "h2"]).await;
    groups(a, &["g1"]).await;
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
    hosts(a, &["h1", "h2"]).await;
    groups(a, &["empty", "g1"]).await;
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
    hosts(a, &["h1"]).await;
    a.patch_volumes(&vs(&["v1"]), &VolumePatch::destroy(), false)
        .await
        .unwrap();
    let e = a
        .create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["v1"]), None)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Destroyed);
}
