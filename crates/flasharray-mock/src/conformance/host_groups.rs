//! Host group rules: membership, deletion while in use, clashes on joining.

use flasharray::models::*;
use flasharray::params::*;
use flasharray::size::GIB;
use flasharray::{ErrorKind, FlashArray};

use super::shorthand::*;

/// Rule: a host is in at most one group.
pub async fn a_host_is_in_at_most_one_group(a: &dyn FlashArray) {
    hosts(a, &["h1", "h2"]).await;
    groups(a, &["g1", "g2"]).await;
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
    let join = HostPatch::default().with_host_group(NameRef::new("g2"));
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
    let leave = HostPatch::default().with_host_group(NameRef::new(""));
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
    hosts(a, &["h1", "h2"]).await;
    groups(a, &["g1"]).await;
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

/// Rule: joining a group cannot create lun or volume clashes.
pub async fn joining_a_group_cannot_create_lun_or_volume_clashes(a: &dyn FlashArray) {
    a.create_volumes(&vs(&["priv", "shared"]), &size(GIB))
        .await
        .unwrap();
    hosts(a, &["h1"]).await;
    groups(a, &["g1"]).await;
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
    let join = HostPatch::default().with_host_group(NameRef::new("g1"));
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
