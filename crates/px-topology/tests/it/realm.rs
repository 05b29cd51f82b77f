//! `spec.array.realm` end to end: the realm, the tenant's pod inside it, the access
//! policy and the realm user with its token, applied through the trait on
//! `MockArray` and through the REST client against the simulator; the tenant's
//! token acting inside the realm and refused outside it on the brownfield array;
//! conflicts, destroy, and the REST version gate.

use flasharray::models::{
    AdminPost, ManagementAccessPolicyPost, ManagementAccessRule, NameRef, PodPost, RealmPost,
    ReferenceWithType, VolumePatch, VolumePost,
};
use flasharray::rest::RestArray;
use flasharray::{ErrorKind, FlashArray, ListParams, PodName, RealmName, Size, VolumeName};
use flasharray_mock::foreign::ForeignView;
use flasharray_mock::{MGMT_CLUSTER_PREFIX, MockArray, OTHER_TENANT, Seed};
use flasharray_sim::{SimConfig, Simulator};
use px_topology::spec::{TenantStorage, parse_valid_spec};
use px_topology::{
    Action, ApplyOptions, ApplyReport, DesiredState, DestroyOptions, Kind, Plan, PlanOptions,
    RealmGateError,
};
use secrecy::ExposeSecret;

use crate::support;
use crate::support::tenant::{
    Planned, apply, destroy, planned, preview_destroy, quiet, realm_gate,
};

const TOKEN: &str = "9b1d2c3e-4f5a-4b6c-8d7e-0f1a2b3c4d5e";
const REALM: &str = "tenant-cdr-realm";
const POD: &str = "tenant-cdr-realm::tenant-cdr";
const USER: &str = "pxfa-tenant-cdr";

fn spec() -> TenantStorage {
    support::example("cloud-drive-realm")
}

fn desired(t: &TenantStorage) -> DesiredState {
    support::desired_of(t)
}

fn mock(seed: Seed) -> MockArray {
    support::seeded_mock(seed)
}

async fn plan_on(a: &dyn FlashArray, d: &DesiredState, opts: PlanOptions) -> Plan {
    planned_on(a, d, opts).await.plan().clone()
}

/// Observes (the realm gate first: realms must be supported) and plans.
async fn planned_on<'a>(a: &'a dyn FlashArray, d: &DesiredState, opts: PlanOptions) -> Planned<'a> {
    planned(a, d, opts).await
}

/// Plans and applies; then a second plan has no changes and its apply writes nothing.
async fn apply_twice(m: &MockArray, a: &dyn FlashArray, d: &DesiredState) -> (Plan, ApplyReport) {
    let staged = planned_on(a, d, PlanOptions::default()).await;
    let p = staged.plan().clone();
    assert!(p.is_applicable(), "{}", p.to_text(false));
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    let again_planned = planned_on(a, d, PlanOptions::default()).await;
    let again = again_planned.plan().clone();
    assert!(
        again.is_applicable() && !again.has_changes(),
        "{}",
        again.to_text(true)
    );
    m.reset_stats();
    let r2 = apply(again_planned, &ApplyOptions::default(), &quiet).await;
    assert!(r2.is_success(), "{r2:?}");
    assert_eq!(m.stats().writes, 0, "re-apply writes nothing");
    assert_eq!(r2.writes.total(), 0);
    (p, r)
}

/// The array holds the realm, the pod inside it, the policy and the realm user.
async fn assert_realm_made(a: &dyn FlashArray) {
    let realms = a.list_realms(&ListParams::all()).await.unwrap();
    assert!(realms.iter().any(|r| r.name == REALM && !r.destroyed));
    let pods = a.list_pods(&ListParams::names([POD])).await.unwrap();
    assert_eq!(pods.len(), 1);
    let policies = a
        .list_management_access_policies(&[USER.into()])
        .await
        .unwrap();
    let rule = &policies[0].rules[0];
    assert_eq!(rule.role.name.as_deref(), Some("storage"));
    assert_eq!(rule.scope.name.as_deref(), Some(REALM));
    assert_eq!(rule.scope.resource_type.as_deref(), Some("realms"));
    assert_eq!(
        policies[0]
            .aggregation_strategy
            .as_ref()
            .map(|a| a.as_str()),
        Some("least-common-permissions")
    );
    let admins = a.list_admins(&[USER.into()]).await.unwrap();
    let names: Vec<Option<&str>> = admins[0]
        .management_access_policies
        .iter()
        .map(|p| p.name.as_deref())
        .collect();
    assert_eq!(names, [Some(USER)]);
}

#[tokio::test]
async fn realm_tenant_applies_in_order_and_reapplies_with_zero_writes() {
    for seed in [Seed::Empty, Seed::brownfield()] {
        let m = mock(seed);
        let d = desired(&spec());
        let before = ForeignView::read(&m, &d.tenant.to_string()).await.unwrap();
        let (p, r) = apply_twice(&m, &m, &d).await;
        let order: Vec<(Kind, &str)> = p.actionable().map(|c| (c.kind, c.name.as_str())).collect();
        assert_eq!(
            order,
            [
                (Kind::Realm, REALM),
                (Kind::Pod, POD),
                (Kind::AccessPolicy, USER),
                (Kind::RealmUser, USER),
                (Kind::ApiToken, USER),
            ],
            "{}",
            p.to_text(true)
        );
        // realm -> {pod, policy} -> user -> token: four dependent rounds.
        assert_eq!(r.rounds, 4, "{r:?}");
        assert!(r.facts.api_token.is_some(), "the new token comes back");
        assert_realm_made(&m).await;
        let after = ForeignView::read(&m, &d.tenant.to_string()).await.unwrap();
        assert_eq!(after.changes_since(&before), Vec::<String>::new());
    }
}

/// The tenant's token: may create and grow volumes in its pod; may not see, change
/// or destroy the management cluster's cloud drives or another tenant's pod.
async fn token_is_confined(tenant: &dyn FlashArray) {
    let inside = VolumeName::new(format!("{POD}::pxd-probe")).unwrap();
    let body = VolumePost::default().with_provisioned(Size::gib(10).as_u64());
    tenant
        .create_volumes(std::slice::from_ref(&inside), &body)
        .await
        .expect("a volume inside the realm");
    let seen = tenant.list_volumes(&ListParams::all()).await.unwrap();
    assert!(
        seen.iter()
            .all(|v| v.name.starts_with(&format!("{REALM}::"))),
        "sees only its realm: {:?}",
        seen.iter().map(|v| &v.name).collect::<Vec<_>>()
    );
    let mgmt_drive = VolumeName::new(format!("px_{MGMT_CLUSTER_PREFIX}-1f0e9a21")).unwrap();
    let destroy = VolumePatch::destroy();
    let e = tenant
        .patch_volumes(std::slice::from_ref(&mgmt_drive), &destroy, false)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Forbidden, "{e}");
    let blue = VolumeName::new(format!("{OTHER_TENANT}::pxd-intruder")).unwrap();
    let e = tenant
        .create_volumes(std::slice::from_ref(&blue), &body)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Forbidden, "{e}");
    let blue_pod = PodName::new(OTHER_TENANT).unwrap();
    let e = tenant
        .patch_pods(
            std::slice::from_ref(&blue_pod),
            &flasharray::models::PodPatch::destroy(),
            true,
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Forbidden, "{e}");
    // Nor can it give itself a new realm or more rights.
    let e = tenant
        .create_realms(&[RealmName::new("escape").unwrap()], &RealmPost::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Forbidden, "{e}");
}

#[tokio::test]
async fn realm_token_acts_inside_and_is_refused_outside_through_the_trait() {
    let m = mock(Seed::brownfield());
    let d = desired(&spec());
    apply_twice(&m, &m, &d).await;
    token_is_confined(&m.scoped(USER)).await;
    // The management drive and tenant-blue's pod are untouched.
    let mgmt = format!("px_{MGMT_CLUSTER_PREFIX}-1f0e9a21");
    let v = m.list_volumes(&ListParams::names([mgmt])).await.unwrap();
    assert!(!v[0].destroyed);
    let blue = m
        .list_pods(&ListParams::names([OTHER_TENANT]))
        .await
        .unwrap();
    assert!(!blue[0].destroyed);
}

#[tokio::test]
async fn realm_token_is_confined_through_the_simulator() {
    let m = mock(Seed::brownfield());
    let sim = Simulator::start(m.clone(), SimConfig::new(TOKEN.into()))
        .await
        .unwrap();
    let client = |token: &str| {
        RestArray::builder(sim.url())
            .api_token(token.to_string().into())
            .ca_pem(sim.cert_pem().as_bytes().to_vec())
            .build()
            .unwrap()
    };
    let admin = client(TOKEN);
    let d = desired(&spec());
    let (_, report) = apply_twice(&m, &admin, &d).await;
    assert_realm_made(&admin).await;
    let token = report.facts.api_token.expect("the realm user's token");
    token_is_confined(&client(token.expose_secret())).await;
}

#[tokio::test]
async fn array_wide_admin_of_that_name_is_a_conflict() {
    let m = mock(Seed::Empty);
    m.add_admin(USER);
    let d = desired(&spec());
    let p = plan_on(&m, &d, PlanOptions::default()).await;
    assert!(p.is_blocked());
    assert!(
        p.conflicts
            .iter()
            .any(|c| c.kind == Kind::RealmUser && c.reason.contains("not be confined")),
        "{:?}",
        p.conflicts
    );
    // Adoption never takes over an admin's rights.
    let adopt = PlanOptions {
        adopt: true,
        ..PlanOptions::default()
    };
    assert!(plan_on(&m, &d, adopt).await.is_blocked());
}

/// A rule giving `role` on the whole array (not a realm).
fn array_wide_rule(role: &str, array_name: String) -> ManagementAccessRule {
    let mut scope = ReferenceWithType::default();
    scope.name = Some(array_name);
    scope.resource_type = Some("arrays".into());
    let mut rule = ManagementAccessRule::in_realm(role, "");
    rule.scope = scope;
    rule.role = NameRef::new(role);
    rule
}

/// A policy pxfa did not make, giving `role` in `realm`.
async fn foreign_policy(m: &MockArray, name: &str, realm: &str) {
    m.create_management_access_policies(
        &[name.into()],
        &ManagementAccessPolicyPost::default()
            .with_enabled(true)
            .with_rules(vec![ManagementAccessRule::in_realm("viewer", realm)]),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_realm_pxfa_did_not_make_is_adopted_only_when_told() {
    let m = mock(Seed::Empty);
    let realm = RealmName::new(REALM).unwrap();
    m.create_realms(std::slice::from_ref(&realm), &RealmPost::default())
        .await
        .unwrap();
    // Someone else's users reach into it: not pxfa's to fill.
    foreign_policy(&m, "auditors", REALM).await;
    let d = desired(&spec());
    let p = plan_on(&m, &d, PlanOptions::default()).await;
    let c = p.conflicts.iter().find(|c| c.kind == Kind::Realm).unwrap();
    assert!(c.reason.contains("auditors"), "{}", c.reason);
    let adopt = PlanOptions {
        adopt: true,
        ..PlanOptions::default()
    };
    let staged = planned_on(&m, &d, adopt).await;
    let p = staged.plan().clone();
    assert!(p.is_applicable(), "{}", p.to_text(true));
    assert!(
        p.actionable().all(|c| c.kind != Kind::Realm),
        "{}",
        p.to_text(true)
    );
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    // From now on the tenant's pod marks the realm as this tenant's.
    let p = plan_on(&m, &d, PlanOptions::default()).await;
    assert!(!p.has_changes() && p.is_applicable(), "{}", p.to_text(true));
    // Destroy keeps it: the auditors still reach into it.
    let r = destroy(&m, &d, &DestroyOptions::default(), &quiet)
        .await
        .unwrap();
    assert!(
        r.kept
            .iter()
            .any(|k| k.kind == Kind::Realm && k.reason.contains("auditors"))
    );
    let realms = m.list_realms(&ListParams::all()).await.unwrap();
    assert!(realms.iter().any(|r| r.name == REALM && !r.destroyed));
}

#[tokio::test]
async fn an_empty_realm_left_by_an_interrupted_apply_is_taken() {
    let m = mock(Seed::Empty);
    let realm = RealmName::new(REALM).unwrap();
    m.create_realms(std::slice::from_ref(&realm), &RealmPost::default())
        .await
        .unwrap();
    let d = desired(&spec());
    let p = plan_on(&m, &d, PlanOptions::default()).await;
    assert!(p.is_applicable(), "{}", p.to_text(true));
    let realm_change = p.changes.iter().find(|c| c.kind == Kind::Realm).unwrap();
    assert_eq!(realm_change.action, Action::NoOp);
    assert!(
        realm_change.reason.contains("interrupted apply"),
        "{}",
        realm_change.reason
    );
    // A pod in it that is not this tenant's makes it someone else's.
    let other = PodName::new(format!("{REALM}::other")).unwrap();
    m.create_pods(std::slice::from_ref(&other), &PodPost::default())
        .await
        .unwrap();
    let p = plan_on(&m, &d, PlanOptions::default()).await;
    assert!(
        p.conflicts.iter().any(|c| c.kind == Kind::Realm),
        "{}",
        p.to_text(true)
    );
}

#[tokio::test]
async fn destroy_removes_the_user_policy_pod_and_realm_softly() {
    let m = mock(Seed::brownfield());
    let d = desired(&spec());
    apply_twice(&m, &m, &d).await;
    let r = destroy(&m, &d, &DestroyOptions::default(), &quiet)
        .await
        .unwrap();
    assert!(r.is_success(), "{r:?}");
    let gone: Vec<(Kind, &str)> = r.done.iter().map(|c| (c.kind, c.name.as_str())).collect();
    for want in [
        (Kind::RealmUser, USER),
        (Kind::AccessPolicy, USER),
        (Kind::Pod, POD),
        (Kind::Realm, REALM),
    ] {
        assert!(gone.contains(&want), "{want:?} not in {gone:?}");
    }
    assert!(
        m.list_admins(&[])
            .await
            .unwrap()
            .iter()
            .all(|a| a.name != USER)
    );
    let realms = m.list_realms(&ListParams::all()).await.unwrap();
    let realm = realms.iter().find(|r| r.name == REALM).expect("soft: kept");
    assert!(realm.destroyed, "destroyed, recoverable");
    // The tenant-blue pod and the management drives are untouched.
    let blue = m
        .list_pods(&ListParams::names([OTHER_TENANT]))
        .await
        .unwrap();
    assert!(!blue[0].destroyed);
}

#[tokio::test]
async fn destroy_keeps_a_realm_holding_foreign_pods() {
    let m = mock(Seed::Empty);
    let d = desired(&spec());
    apply_twice(&m, &m, &d).await;
    let foreign = PodName::new(format!("{REALM}::someone-else")).unwrap();
    m.create_pods(std::slice::from_ref(&foreign), &PodPost::default())
        .await
        .unwrap();
    let preview = preview_destroy(&m, &d, &DestroyOptions::default())
        .await
        .unwrap();
    assert!(
        preview.changes.iter().all(|c| c.kind != Kind::Realm),
        "{:?}",
        preview.changes
    );
    let kept = preview.kept.iter().find(|k| k.kind == Kind::Realm).unwrap();
    assert!(kept.reason.contains("someone-else"), "{}", kept.reason);
    let r = destroy(&m, &d, &DestroyOptions::default(), &quiet)
        .await
        .unwrap();
    assert!(r.is_success(), "{r:?}");
    let realms = m.list_realms(&ListParams::all()).await.unwrap();
    assert!(realms.iter().any(|r| r.name == REALM && !r.destroyed));
    let pods = m
        .list_pods(&ListParams::names([foreign.as_str()]))
        .await
        .unwrap();
    assert!(!pods[0].destroyed, "the foreign pod is untouched");
}

#[tokio::test]
async fn an_admin_with_other_rights_survives_destroy() {
    let m = mock(Seed::Empty);
    let d = desired(&spec());
    apply_twice(&m, &m, &d).await;
    // Someone gives the user array-wide rights by hand: no longer recognisably ours.
    m.delete_admins(&[USER.into()]).await.unwrap();
    let array_name = m.get_array().await.unwrap().name;
    m.create_management_access_policies(
        &["ops-wide".into()],
        &ManagementAccessPolicyPost::default()
            .with_enabled(true)
            .with_rules(vec![array_wide_rule("storage", array_name)]),
    )
    .await
    .unwrap();
    m.create_admins(
        &[USER.into()],
        &AdminPost::default().with_management_access_policies(vec![
            ReferenceWithType::management_access_policy(USER),
            ReferenceWithType::management_access_policy("ops-wide"),
        ]),
    )
    .await
    .unwrap();
    let p = plan_on(&m, &d, PlanOptions::default()).await;
    assert!(
        p.conflicts.iter().any(|c| c.kind == Kind::RealmUser),
        "{}",
        p.to_text(true)
    );
    let r = destroy(&m, &d, &DestroyOptions::default(), &quiet)
        .await
        .unwrap();
    assert!(
        r.kept.iter().any(|k| k.kind == Kind::RealmUser),
        "{:?}",
        r.kept
    );
    assert!(
        m.list_admins(&[USER.into()])
            .await
            .is_ok_and(|a| a.len() == 1)
    );
}

#[tokio::test]
async fn an_array_without_realms_is_refused_before_anything_is_read() {
    let m = mock(Seed::Empty);
    let mut cfg = SimConfig::new(TOKEN.into());
    cfg.versions = ["1.19", "2.0", "2.2", "2.21", "2.35"]
        .map(String::from)
        .to_vec();
    let sim = Simulator::start(m.clone(), cfg).await.unwrap();
    let rest = RestArray::builder(sim.url())
        .api_token(TOKEN.into())
        .ca_pem(sim.cert_pem().as_bytes().to_vec())
        .build()
        .unwrap();
    let d = desired(&spec());
    let e = realm_gate(&rest, &d).await.unwrap_err();
    assert!(
        matches!(e, RealmGateError::Unsupported { found: 35, .. }),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("spec.array.realm") && msg.contains("2.36"),
        "{msg}"
    );
    assert!(
        sim.request_log().iter().all(|r| !r.path.contains("realms")),
        "{:#?}",
        sim.request_log()
    );
    // Without a realm the same array still cannot tag the tenant's pod (pods/tags is
    // REST 2.39, py-pure-client's FA_2_39); the in-memory array has everything.
    let plain = desired(&support::example_specs()[0].1);
    let e = realm_gate(&rest, &plain).await.unwrap_err();
    assert!(
        matches!(
            e,
            RealmGateError::TagsUnsupported {
                kind: "pods",
                need: 39,
                found: 35
            }
        ),
        "{e:?}"
    );
    realm_gate(&m, &d).await.unwrap();
}

fn realm_spec(edit: impl Fn(String) -> String) -> String {
    edit(std::fs::read_to_string(support::example_path("cloud-drive-realm")).unwrap())
}

fn errors_of(yaml: &str) -> Vec<(String, String)> {
    match parse_valid_spec(yaml) {
        Ok(_) => Vec::new(),
        Err(e) => e.0.into_iter().map(|e| (e.path, e.message)).collect(),
    }
}

#[test]
fn realm_fields_are_validated_with_their_paths() {
    assert_eq!(errors_of(&realm_spec(|s| s)), Vec::new());
    let bad_name = realm_spec(|s| s.replace("realm: tenant-cdr-realm", "realm: bad::realm"));
    let e = errors_of(&bad_name);
    assert!(e.iter().any(|(p, _)| p == "spec.array.realm"), "{e:?}");
    let same_as_pod = realm_spec(|s| s.replace("realm: tenant-cdr-realm", "realm: tenant-cdr"));
    let e = errors_of(&same_as_pod);
    assert!(
        e.iter()
            .any(|(p, m)| p == "spec.array.realm" && m.contains("differ from every pod")),
        "{e:?}"
    );
    let role = realm_spec(|s| {
        s.replace(
            "realm: tenant-cdr-realm",
            "realm: tenant-cdr-realm\n    realmRole: viewer",
        )
    });
    let e = errors_of(&role);
    assert!(e.iter().any(|(p, _)| p == "spec.array.realmRole"), "{e:?}");
    let role_alone = realm_spec(|s| s.replace("realm: tenant-cdr-realm", "realmRole: admin"));
    let e = errors_of(&role_alone);
    assert!(
        e.iter()
            .any(|(p, m)| p == "spec.array.realmRole" && m.contains("only applies")),
        "{e:?}"
    );
}

#[test]
fn kubevirt_csi_has_no_realm() {
    let text = std::fs::read_to_string(support::example_path("kubevirt-csi")).unwrap();
    let text = text.replacen("spec:\n", "spec:\n  array:\n    realm: r1\n", 1);
    let e = errors_of(&text);
    assert!(e.iter().any(|(p, _)| p == "spec.array.realm"), "{e:?}");
}

#[test]
fn direct_access_volumes_live_in_the_realms_pod() {
    let mut t = support::example_specs()
        .into_iter()
        .find(|(m, _)| *m == "direct-access")
        .map(|(_, s)| support::as_import(s))
        .unwrap();
    t.spec.storage.attach = px_topology::spec::Attach::HostGroup;
    t.spec.array.realm = Some(RealmName::new("da-realm").unwrap());
    assert!(t.validate().is_empty(), "{:#?}", t.validate());
    let d = desired(&t);
    let realm = d.realm.as_ref().expect("a realm");
    assert_eq!(realm.name.as_str(), "da-realm");
    assert!(realm.user.is_none(), "direct-access has no realm user");
    let pod = d.pod.as_ref().expect("the realm's pod");
    assert_eq!(pod.name.as_str(), "da-realm::tenant-demo");
    assert!(!d.volumes.is_empty());
    assert!(
        d.volumes
            .iter()
            .all(|v| v.name.pod() == Some(pod.name.as_str()) && v.name.realm() == Some("da-realm")),
        "{:?}",
        d.volumes
    );
}

fn rendered(t: &TenantStorage) -> Vec<px_topology::Manifest> {
    px_topology::render(
        t,
        &support::sizing(t),
        &px_topology::ArrayFacts::default(),
        px_topology::RenderOptions::default(),
    )
    .unwrap()
}

fn device_specs(ms: &[px_topology::Manifest]) -> Vec<String> {
    let sc = ms.iter().find(|m| m.kind == "StorageCluster").unwrap();
    let cs = &sc.body["spec"]["cloudStorage"];
    let mut out: Vec<String> = cs["deviceSpecs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    out.push(cs["systemMetadataDeviceSpec"].as_str().unwrap().to_string());
    out
}

#[test]
fn the_pod_form_in_manifests_is_configurable() {
    let mut t = spec();
    assert!(
        device_specs(&rendered(&t))
            .iter()
            .all(|d| d.ends_with(",pod=tenant-cdr")),
        "auto: short for cloud-drive"
    );
    t.spec.array.realm_pod_form = Some(px_topology::spec::RealmPodForm::Qualified);
    assert!(t.validate().is_empty(), "{:#?}", t.validate());
    assert!(
        device_specs(&rendered(&t))
            .iter()
            .all(|d| d.ends_with(&format!(",pod={POD}"))),
        "qualified"
    );
    let mut plain = support::example_specs().remove(0).1;
    plain.spec.array.realm_pod_form = Some(px_topology::spec::RealmPodForm::Short);
    assert!(
        plain
            .validate()
            .iter()
            .any(|e| e.path == "spec.array.realmPodForm"),
        "only with a realm"
    );
}

#[tokio::test]
async fn lost_answers_and_dropped_writes_of_the_realm_tenant_are_settled() {
    let d = desired(&spec());
    for n in 1..=5 {
        for lose in [true, false] {
            let label = if lose { "answer lost" } else { "write dropped" };
            let m = mock(Seed::Empty);
            // Settled by the one layer a caller puts around the array.
            let settling = flasharray::Settling::new(&m);
            let staged = planned_on(&settling, &d, PlanOptions::default()).await;
            if lose {
                m.faults().fail_write_after_effect(n);
            } else {
                m.faults().drop_write(n);
            }
            let first = apply(staged, &ApplyOptions::default(), &quiet).await;
            m.faults().clear();
            if lose {
                // The re-read settles it within the same apply.
                assert!(first.is_success(), "{label} at write {n}: {first:?}");
            }
            let p2_planned = planned_on(&m, &d, PlanOptions::default()).await;
            let p2 = p2_planned.plan().clone();
            assert!(
                p2.is_applicable(),
                "{label} at write {n}: {}",
                p2.to_text(true)
            );
            let second = apply(p2_planned, &ApplyOptions::default(), &quiet).await;
            assert!(second.is_success(), "{label} at write {n}: {second:?}");
            let p3 = plan_on(&m, &d, PlanOptions::default()).await;
            assert!(
                !p3.has_changes(),
                "{label} at write {n}: {}",
                p3.to_text(true)
            );
            assert_realm_made(&m).await;
        }
    }
}
