//! A tenant is its namespace and its name (issue #34): the TenantStorage
//! `pxfa/tenant-full` shares its name with another namespace's tenant on the array
//! (`team-b/tenant-full`, its pod and drives tagged so). The controller's plan is
//! blocked by the other's pod, and deleting the object with `onDelete: eradicate`
//! leaves every object of the other tenant exactly as it was.

use flasharray::models::{PodPost, Tag, VolumePost};
use flasharray::{FlashArray, PodName, TagResource, VolumeName};
use flasharray_mock::foreign::ForeignView;
use px_controller::{ConditionStatus, ConditionType as C, Outcome};
use serde_json::json;

use crate::fake::{NAME, NS, World, tenant_object};

/// The other namespace's tenant of the same name.
const OTHER_NS: &str = "team-b";

fn tags(resource: &str, role: &str) -> Vec<Tag> {
    [
        ("managed-by", "pxfa"),
        ("tenant", NAME),
        ("tenant-namespace", OTHER_NS),
        ("role", role),
    ]
    .iter()
    .map(|(k, v)| Tag::new(resource, "pxfa.io", *k, *v))
    .collect()
}

/// `team-b/tenant-full`: its pod (the name the controller's tenant derives) with
/// three drives, as pxfa tags them.
async fn seed_other_tenant(array: &dyn FlashArray) -> Vec<String> {
    let pod = PodName::new(NAME).unwrap();
    array
        .create_pods(std::slice::from_ref(&pod), &PodPost::default())
        .await
        .unwrap();
    array
        .set_tags(TagResource::Pod, &tags(NAME, "tenant-pod"))
        .await
        .unwrap();
    let names: Vec<String> = (0..3)
        .map(|i| format!("{NAME}::team-b-drive-{i}"))
        .collect();
    let volumes: Vec<VolumeName> = names.iter().map(|n| VolumeName::new(n).unwrap()).collect();
    let body = VolumePost::default().with_provisioned(1 << 40);
    array.create_volumes(&volumes, &body).await.unwrap();
    for n in &names {
        array
            .set_tags(TagResource::Volume, &tags(n, "px-data"))
            .await
            .unwrap();
    }
    names
}

#[tokio::test]
async fn deleting_with_eradicate_leaves_another_namespaces_same_named_tenant_whole() {
    let mut obj = tenant_object();
    obj["spec"]["onDelete"] = json!("eradicate");
    assert_eq!(obj["metadata"]["namespace"], NS);
    let w = World::start(obj).await;
    let theirs = seed_other_tenant(&w.array).await;
    // Everything that is not this controller tenant's, team-b's objects included.
    let me = format!("{NS}/{NAME}");
    let before = ForeignView::read(&w.array, &me).await.unwrap();
    assert!(
        before.contains(&format!("pod:{NAME}")),
        "team-b's pod is foreign"
    );

    // The plan is blocked by team-b's pod, named with its owner; nothing is written.
    w.array.reset_stats();
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Waiting("Conflict"));
    assert_eq!(w.array.stats().writes, 0, "{:?}", w.array.stats().per_op);
    let status = w.store.status(NAME);
    let ready = status.get(C::ArrayReady).unwrap();
    assert_eq!(ready.status, ConditionStatus::False);
    assert!(
        ready.message.contains("team-b/tenant-full"),
        "{}",
        ready.message
    );

    // Delete with eradicate: nothing of team-b's is selected, destroyed or eradicated.
    w.store.edit(NAME, |o| {
        o["metadata"]["deletionTimestamp"] = json!("2026-12-01T11:00:00Z")
    });
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Deleted);
    assert!(!w.exists());
    let after = ForeignView::read(&w.array, &me).await.unwrap();
    assert_eq!(after.changes_since(&before), Vec::<String>::new());
    assert_eq!(after.to_json(), before.to_json());
    let live = w
        .array
        .list_volumes(&flasharray::ListParams::names(theirs.clone()))
        .await
        .unwrap();
    assert_eq!(live.len(), theirs.len());
    assert!(live.iter().all(|v| !v.destroyed), "{live:?}");
}

/// Issue #34: array users carry no tags, and the default token user
/// (`pxfa-tenant-full`) derives from the name alone. With `team-b/tenant-full` on the
/// array (its own pod, and that user's token), the controller's tenant of the same
/// name never takes, replaces or deletes the token: its plan is a `Conflict` naming
/// team-b with no array write, and its delete leaves team-b's token as it was.
#[tokio::test]
async fn a_same_named_tenants_token_user_is_never_taken_or_deleted() {
    const USER: &str = "pxfa-tenant-full";
    let mut obj = crate::fake::cloud_drive_object();
    obj["spec"]["onDelete"] = json!("eradicate");
    let w = World::start(obj).await;
    let pod = PodName::new("team-b-pod").unwrap();
    w.array
        .create_pods(std::slice::from_ref(&pod), &PodPost::default())
        .await
        .unwrap();
    w.array
        .set_tags(TagResource::Pod, &tags("team-b-pod", "tenant-pod"))
        .await
        .unwrap();
    let theirs = w.array.create_api_token(USER, None).await.unwrap();
    let created_at = theirs.api_token.created_at;
    assert!(created_at.is_some());

    w.array.reset_stats();
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Waiting("Conflict"));
    assert_eq!(w.array.stats().writes, 0, "{:?}", w.array.stats().per_op);
    let ready = w.store.status(NAME).get(C::ArrayReady).unwrap().clone();
    assert!(
        ready
            .message
            .contains("default token user of tenant team-b/tenant-full"),
        "{}",
        ready.message
    );

    w.store.edit(NAME, |o| {
        o["metadata"]["deletionTimestamp"] = json!("2026-12-01T11:00:00Z")
    });
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Deleted);
    let tokens = w
        .array
        .list_api_tokens(&[USER.to_string()], false)
        .await
        .unwrap();
    assert_eq!(tokens.len(), 1, "{tokens:?}");
    assert_eq!(tokens[0].api_token.created_at, created_at);
    let pods = w
        .array
        .list_pods(&flasharray::ListParams::names(vec![
            "team-b-pod".to_string(),
        ]))
        .await
        .unwrap();
    assert!(pods.iter().all(|p| !p.destroyed), "{pods:?}");
}
