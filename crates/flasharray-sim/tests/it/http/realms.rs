//! Realms over HTTPS with the typed client: the array admin builds a tenant's realm,
//! pod, policy and token-only user; a `RestArray` logged in with that user's token
//! sees only the realm and is refused (403) everywhere else.

use flasharray::models::*;
use flasharray::rest::RestArray;
use flasharray::{ErrorKind, FlashArray, ListParams, PodName, RealmName, VolumeName};

use crate::support::https::start;

#[tokio::test]
async fn a_realm_scoped_token_is_refused_outside_its_realm() {
    let s = start().await;
    let admin = s.rest();
    let gib = VolumePost::default().with_provisioned(1 << 30);
    admin
        .create_realms(
            &[RealmName::new("tenant-a").unwrap()],
            &RealmPost::default(),
        )
        .await
        .unwrap();
    admin
        .create_pods(
            &[
                PodName::new("tenant-a::px").unwrap(),
                PodName::new("mgmt").unwrap(),
            ],
            &PodPost::default(),
        )
        .await
        .unwrap();
    admin
        .create_volumes(
            &[
                VolumeName::new("tenant-a::px::d1").unwrap(),
                VolumeName::new("mgmt::cloud-drive-1").unwrap(),
            ],
            &gib,
        )
        .await
        .unwrap();
    let policy = admin
        .create_management_access_policies(
            &["tenant-a-px".into()],
            &ManagementAccessPolicyPost::default()
                .with_enabled(true)
                .with_aggregation_strategy("least-common-permissions".into())
                .with_rules(vec![ManagementAccessRule::in_realm("storage", "tenant-a")]),
        )
        .await
        .unwrap();
    assert_eq!(
        policy[0].rules[0].scope.resource_type.as_deref(),
        Some("realms")
    );
    admin
        .create_admins(
            &["tenant-a-px".into()],
            &AdminPost::default().with_management_access_policies(vec![
                ReferenceWithType::management_access_policy("tenant-a-px"),
            ]),
        )
        .await
        .unwrap();
    let token = admin.create_api_token("tenant-a-px", None).await.unwrap();
    let secret = token.api_token.expose().unwrap().to_string();

    let tenant = RestArray::builder(s.sim.url())
        .api_token(secret.into())
        .ca_pem(s.sim.cert_pem().as_bytes().to_vec())
        .build()
        .unwrap();
    let seen: Vec<String> = tenant
        .list_volumes(&ListParams::all())
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.name)
        .collect();
    assert_eq!(seen, ["tenant-a::px::d1"]);
    let realms = tenant.list_realms(&ListParams::all()).await.unwrap();
    assert_eq!(realms.len(), 1);
    tenant
        .create_volumes(&[VolumeName::new("tenant-a::px::d2").unwrap()], &gib)
        .await
        .unwrap();

    let destroy = VolumePatch::destroy();
    let e = tenant
        .patch_volumes(
            &[VolumeName::new("mgmt::cloud-drive-1").unwrap()],
            &destroy,
            false,
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Forbidden, "{e}");
    let e = tenant
        .create_realms(
            &[RealmName::new("tenant-b").unwrap()],
            &RealmPost::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Forbidden, "{e}");
    let e = tenant
        .list_pods(&ListParams::names(["mgmt"]))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Forbidden, "{e}");

    // The management cluster's drive is untouched; the array admin still sees all.
    let all = admin.list_volumes(&ListParams::all()).await.unwrap();
    assert_eq!(all.len(), 3);
    assert!(all.iter().all(|v| !v.destroyed));
    let admins = admin.list_admins(&[]).await.unwrap();
    assert!(admins.iter().any(|a| a.name == "tenant-a-px"));
}
