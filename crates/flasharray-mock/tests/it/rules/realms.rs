//! Realms through the trait: the rules of realms, policies and admins, and a
//! realm-scoped admin (`MockArray::scoped`) confined to its realm.

use flasharray::models::*;
use flasharray::{
    ErrorKind, FlashArray, HostName, ListParams, PodName, RealmName, TagResource, VolumeName,
};
use flasharray_mock::{MockArray, MockClock};

fn realm(n: &str) -> RealmName {
    RealmName::new(n).unwrap()
}
fn pod(n: &str) -> PodName {
    PodName::new(n).unwrap()
}
fn vol(n: &str) -> VolumeName {
    VolumeName::new(n).unwrap()
}
fn gib() -> VolumePost {
    VolumePost::default().with_provisioned(1 << 30)
}

/// Two tenants' realms with a pod and a volume each, one plain pod outside any realm,
/// and the admin `px-a` holding `storage` in realm `ta` only.
async fn two_tenants() -> MockArray {
    let m = MockArray::builder().clock(MockClock::manual(0)).build();
    m.create_realms(&[realm("ta"), realm("tb")], &RealmPost::default())
        .await
        .unwrap();
    m.create_pods(
        &[pod("ta::p"), pod("tb::p"), pod("mgmt")],
        &PodPost::default(),
    )
    .await
    .unwrap();
    m.create_volumes(
        &[vol("ta::p::d1"), vol("tb::p::d1"), vol("mgmt::cd1")],
        &gib(),
    )
    .await
    .unwrap();
    m.create_management_access_policies(
        &["px-a-storage".into()],
        &ManagementAccessPolicyPost::default()
            .with_enabled(true)
            .with_aggregation_strategy("least-common-permissions".into())
            .with_rules(vec![ManagementAccessRule::in_realm("storage", "ta")]),
    )
    .await
    .unwrap();
    m.create_admins(
        &["px-a".into()],
        &AdminPost::default().with_management_access_policies(vec![
            ReferenceWithType::management_access_policy("px-a-storage"),
        ]),
    )
    .await
    .unwrap();
    m
}

#[tokio::test]
async fn pods_need_their_realm_and_realms_hold_their_pods() {
    let m = MockArray::builder().clock(MockClock::manual(0)).build();
    let e = m
        .create_pods(&[pod("nope::p")], &PodPost::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    m.create_realms(&[realm("r1")], &RealmPost::default())
        .await
        .unwrap();
    let again = m
        .create_realms(&[realm("R1")], &RealmPost::default())
        .await
        .unwrap_err();
    assert_eq!(again.kind(), ErrorKind::AlreadyExists);
    m.create_pods(&[pod("r1::p")], &PodPost::default())
        .await
        .unwrap();
    m.create_volumes(&[vol("r1::p::v")], &gib()).await.unwrap();
    let listed = m.list_realms(&ListParams::all()).await.unwrap();
    assert_eq!(listed[0].space.total_provisioned, Some(1 << 30));

    let destroy = RealmPatch::default().with_destroyed(true);
    let busy = m
        .patch_realms(&[realm("r1")], &destroy, false)
        .await
        .unwrap_err();
    assert!(busy.to_string().contains("not empty"), "{busy}");
    let live = m.eradicate_realms(&[realm("r1")], true).await.unwrap_err();
    assert_eq!(live.kind(), ErrorKind::NotDestroyed, "{live}");

    let r = m
        .patch_realms(&[realm("r1")], &destroy, true)
        .await
        .unwrap();
    assert!(r[0].destroyed && r[0].time_remaining.is_some());
    let pods = m.list_pods(&ListParams::names(["r1::p"])).await.unwrap();
    assert!(
        pods[0].destroyed,
        "destroy_contents destroys the realm's pods"
    );
    let not_empty = m.eradicate_realms(&[realm("r1")], false).await.unwrap_err();
    assert!(not_empty.to_string().contains("not empty"), "{not_empty}");
    m.eradicate_realms(&[realm("r1")], true).await.unwrap();
    assert!(m.list_realms(&ListParams::all()).await.unwrap().is_empty());
    assert!(m.list_pods(&ListParams::all()).await.unwrap().is_empty());
    assert!(m.list_volumes(&ListParams::all()).await.unwrap().is_empty());
}

#[tokio::test]
async fn policies_name_real_roles_and_scopes_and_stay_while_used() {
    let m = two_tenants().await;
    let bad_role = m
        .create_management_access_policies(
            &["x".into()],
            &ManagementAccessPolicyPost::default()
                .with_rules(vec![ManagementAccessRule::in_realm("superuser", "ta")]),
        )
        .await
        .unwrap_err();
    assert!(bad_role.to_string().contains("superuser"), "{bad_role}");
    let no_realm = m
        .create_management_access_policies(
            &["y".into()],
            &ManagementAccessPolicyPost::default()
                .with_rules(vec![ManagementAccessRule::in_realm("storage", "nope")]),
        )
        .await
        .unwrap_err();
    assert_eq!(no_realm.kind(), ErrorKind::NotFound);
    let used = m
        .delete_management_access_policies(&["px-a-storage".into()])
        .await
        .unwrap_err();
    assert!(used.to_string().contains("px-a"), "{used}");
    let admins = m.list_admins(&["px-a".into()]).await.unwrap();
    assert_eq!(
        admins[0].management_access_policies[0].name.as_deref(),
        Some("px-a-storage")
    );
    m.delete_admins(&["px-a".into()]).await.unwrap();
    m.delete_management_access_policies(&["px-a-storage".into()])
        .await
        .unwrap();
}

#[tokio::test]
async fn a_realm_scoped_admin_sees_and_changes_only_its_realm() {
    let m = two_tenants().await;
    let a = m.scoped("px-a");

    // It sees only its realm's objects.
    let names = |v: Vec<Volume>| v.into_iter().map(|v| v.name).collect::<Vec<_>>();
    assert_eq!(
        names(a.list_volumes(&ListParams::all()).await.unwrap()),
        ["ta::p::d1"]
    );
    let pods: Vec<String> = a
        .list_pods(&ListParams::all())
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(pods, ["ta::p"]);
    let realms = a.list_realms(&ListParams::all()).await.unwrap();
    assert_eq!(realms.len(), 1);
    assert_eq!(realms[0].name, "ta");
    assert!(a.list_hosts(&ListParams::all()).await.unwrap().is_empty());

    // Inside its realm it works like any storage admin.
    a.create_volumes(&[vol("ta::p::d2")], &gib()).await.unwrap();
    let destroy = VolumePatch::destroy();
    a.patch_volumes(&[vol("ta::p::d2")], &destroy, false)
        .await
        .unwrap();
    a.eradicate_volumes(&[vol("ta::p::d2")]).await.unwrap();
    a.set_tags(
        TagResource::Volume,
        &[Tag::new("ta::p::d1", "pxfa.io", "tenant", "ta")],
    )
    .await
    .unwrap();

    // Outside it, every read and write naming something is refused, and nothing changes.
    let refused = [
        a.list_volumes(&ListParams::names(["mgmt::cd1"]))
            .await
            .err(),
        a.create_volumes(&[vol("tb::p::x")], &gib()).await.err(),
        a.create_volumes(&[vol("loose")], &gib()).await.err(),
        a.patch_volumes(&[vol("mgmt::cd1")], &destroy, false)
            .await
            .err(),
        a.patch_volumes(&[vol("tb::p::d1")], &destroy, false)
            .await
            .err(),
        a.patch_pods(&[pod("mgmt")], &PodPatch::destroy(), true)
            .await
            .err(),
        a.create_pods(&[pod("tb::q")], &PodPost::default())
            .await
            .err(),
        a.set_tags(
            TagResource::Volume,
            &[Tag::new("mgmt::cd1", "pxfa.io", "owner", "me")],
        )
        .await
        .err(),
        a.create_hosts(&[HostName::new("h").unwrap()], &HostPost::default())
            .await
            .err(),
        a.create_realms(&[realm("tc")], &RealmPost::default())
            .await
            .err(),
        a.patch_realms(
            &[realm("tb")],
            &RealmPatch::default().with_destroyed(true),
            true,
        )
        .await
        .err(),
        a.create_admins(
            &["evil".into()],
            &AdminPost::default().with_management_access_policies(vec![
                ReferenceWithType::management_access_policy("px-a-storage"),
            ]),
        )
        .await
        .err(),
        a.create_api_token("pureuser", None).await.err(),
        a.list_api_tokens(&["pureuser".into()], true).await.err(),
    ];
    for (i, e) in refused.into_iter().enumerate() {
        let e = e.unwrap_or_else(|| panic!("call {i} outside the realm was allowed"));
        assert_eq!(e.kind(), ErrorKind::Forbidden, "call {i}: {e}");
    }
    let all = m.list_volumes(&ListParams::all()).await.unwrap();
    assert_eq!(all.len(), 3);
    assert!(all.iter().all(|v| !v.destroyed));
    assert_eq!(m.list_realms(&ListParams::all()).await.unwrap().len(), 2);

    // Its own token it may make; with it, it is still only itself.
    let t = a.create_api_token("px-a", None).await.unwrap();
    assert!(t.api_token.expose().is_some());
    assert_eq!(
        m.api_token_owner(t.api_token.expose().unwrap()).as_deref(),
        Some("px-a")
    );
}

#[tokio::test]
async fn a_viewer_only_reads_and_a_deleted_admin_is_refused() {
    let m = two_tenants().await;
    m.create_management_access_policies(
        &["tb-view".into()],
        &ManagementAccessPolicyPost::default()
            .with_rules(vec![ManagementAccessRule::in_realm("viewer", "tb")]),
    )
    .await
    .unwrap();
    m.create_admins(
        &["watcher".into()],
        &AdminPost::default().with_management_access_policies(vec![
            ReferenceWithType::management_access_policy("tb-view"),
        ]),
    )
    .await
    .unwrap();
    let w = m.scoped("watcher");
    assert_eq!(w.list_volumes(&ListParams::all()).await.unwrap().len(), 1);
    let e = w
        .create_volumes(&[vol("tb::p::x")], &gib())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Forbidden);
    m.delete_admins(&["watcher".into()]).await.unwrap();
    let gone = w.list_volumes(&ListParams::all()).await.unwrap_err();
    assert_eq!(gone.kind(), ErrorKind::Unauthorized);
}
