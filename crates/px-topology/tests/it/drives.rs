//! Dynamic provisioning on Portworx 3.6.2 (option b, `attach: fada`): the
//! management Portworx (here `flasharray_mock::SimFada`) creates the drive volumes
//! when the claims bind; pxfa finds them through a `DriveLocator`, tags them, and
//! later plans, `status` and `destroy` find them by their tags alone. Through the
//! trait on `MockArray` and over HTTPS against the simulator, on an empty and on the
//! brownfield array: every foreign object stays as it was.

use async_trait::async_trait;
use flasharray::rest::RestArray;
use flasharray::{FlashArray, ListParams, PodName, Size};
use flasharray_mock::fada::SimClaim;
use flasharray_mock::foreign::ForeignView;
use flasharray_mock::{MockArray, Seed, SimFada};
use flasharray_sim::{SimConfig, Simulator};
use px_topology::spec::TenantStorage;
use px_topology::{
    Action, ApplyOptions, Binding, DesiredState, DestroyOptions, DriveClaim, DriveLocator, Kind,
    LocateError, Observation, Plan, PlanOptions, Site,
};

use crate::support;
use crate::support::tenant::{Planned, apply, destroy, observe, quiet};

const TOKEN: &str = "5e2a1c3d-0f4b-4e7a-9c1d-2b3a4c5d6e7f";

/// The example direct-access tenant: Portworx 3.6.2, `attach: fada`, dynamic.
fn example() -> TenantStorage {
    support::example("direct-access")
}

fn desired(t: &TenantStorage) -> DesiredState {
    support::desired_of(t)
}

fn mock(seed: Seed) -> MockArray {
    support::seeded_mock(seed)
}

fn pod(d: &DesiredState) -> Option<PodName> {
    d.drives.first().and_then(|x| x.pod.clone())
}

/// `SimFada` as px-topology's locator (the mock cannot name px-topology's trait).
struct Fada<'a> {
    array: &'a dyn FlashArray,
    pod: Option<PodName>,
}

#[async_trait]
impl DriveLocator for Fada<'_> {
    async fn bound(&self, claims: &[DriveClaim]) -> Result<Vec<Binding>, LocateError> {
        let keys: Vec<(String, String)> = claims
            .iter()
            .map(|c| (c.namespace.clone(), c.name.clone()))
            .collect();
        let b = SimFada::new()
            .bound(self.array, self.pod.as_ref(), &keys)
            .await?;
        Ok(b.into_iter()
            .map(|b| Binding {
                claim: DriveClaim {
                    namespace: b.namespace,
                    name: b.name,
                },
                volume_name: b.pv,
            })
            .collect())
    }
}

/// The management Portworx binds every claim of `d`.
async fn bind_claims(a: &dyn FlashArray, d: &DesiredState) -> usize {
    let claims: Vec<SimClaim> = d
        .drives
        .iter()
        .map(|x| SimClaim {
            namespace: x.claim.namespace.clone(),
            name: x.claim.name.clone(),
            size: x.size,
        })
        .collect();
    SimFada::new()
        .provision(a, pod(d).as_ref(), &claims)
        .await
        .unwrap()
        .created
        .len()
}

/// Observes `d` through the pipeline, with the simulated management Portworx as
/// the site's claims when `locate` (their drives found through them).
async fn located<'a>(
    a: &'a dyn FlashArray,
    d: &DesiredState,
    locate: bool,
) -> Observation<'a, DesiredState> {
    let site = Site {
        // The locator lives as long as the test's array; a test leaks one per call.
        claims: locate.then(|| {
            &*Box::leak(Box::new(Fada {
                array: a,
                pod: pod(d),
            })) as &dyn DriveLocator
        }),
        ..Site::array(a)
    };
    let obs = d.observe(site).await.expect("observe");
    assert!(
        obs.claims_unreadable().is_none(),
        "locate: {:?}",
        obs.claims_unreadable()
    );
    obs
}

async fn planned_on<'a>(a: &'a dyn FlashArray, d: &DesiredState, locate: bool) -> Planned<'a> {
    located(a, d, locate).await.plan(&PlanOptions::default())
}

async fn plan_on(a: &dyn FlashArray, d: &DesiredState, locate: bool) -> Plan {
    planned_on(a, d, locate).await.plan().clone()
}

async fn apply_plan(staged: Planned<'_>) {
    let p = staged.plan();
    assert!(p.is_applicable(), "{}", p.to_text(true));
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
}

fn count(p: &Plan, kind: Kind, action: Action) -> usize {
    p.changes
        .iter()
        .filter(|c| c.kind == kind && c.action == action)
        .count()
}

/// The whole dynamic flow: pod, claims bind, tag, re-apply writes nothing, drives
/// found by tags without a locator, destroy soft-destroys only the tenant's.
async fn dynamic_flow(m: &MockArray, a: &dyn FlashArray) {
    let d = desired(&example());
    assert_eq!(d.drives.len(), 6, "3 workers × (1 data + 1 metadata)");
    assert!(d.volumes.is_empty(), "pxfa creates no drive volume");
    let before = ForeignView::read(a, &d.tenant.to_string()).await.unwrap();

    // Before the claims bind: only the pod; the drives are pending, not changes.
    let first_staged = planned_on(a, &d, true).await;
    let first = first_staged.plan().clone();
    assert_eq!(first.summary.pending, 6, "{}", first.to_text(true));
    let kinds: Vec<Kind> = first.actionable().map(|c| c.kind).collect();
    assert_eq!(kinds, [Kind::Pod], "{}", first.to_text(true));
    assert!(first.to_text(false).contains("? pending volume for claim"));
    apply_plan(first_staged).await;

    // The management Portworx creates the volumes; pxfa finds and tags them.
    assert_eq!(bind_claims(a, &d).await, 6);
    let tag_staged = planned_on(a, &d, true).await;
    let tag = tag_staged.plan().clone();
    assert_eq!(
        count(&tag, Kind::Tag, Action::Create),
        6,
        "{}",
        tag.to_text(true)
    );
    assert_eq!(tag.summary.pending, 0);
    assert!(
        tag.actionable().all(|c| c.kind == Kind::Tag),
        "{}",
        tag.to_text(true)
    );
    apply_plan(tag_staged).await;
    assert_eq!(bind_claims(a, &d).await, 0, "provisioning is idempotent");

    // Later plans find them by tags, with or without the cluster; nothing to write.
    for locate in [false, true] {
        let again_staged = planned_on(a, &d, locate).await;
        let again = again_staged.plan().clone();
        assert!(!again.has_changes(), "{}", again.to_text(true));
        assert!(again.is_applicable());
        assert_eq!(count(&again, Kind::Volume, Action::NoOp), 6);
        assert_eq!((again.summary.pending, again.summary.retain), (0, 0));
        m.reset_stats();
        apply_plan(again_staged).await;
        assert_eq!(m.stats().writes, 0, "re-apply writes nothing");
    }
    let after = ForeignView::read(a, &d.tenant.to_string()).await.unwrap();
    assert_eq!(after.changes_since(&before), Vec::<String>::new());

    // Destroy leaves the live drives (and the pod holding them) to the management
    // Portworx, which created them: it writes nothing and says why.
    m.reset_stats();
    let held = destroy(a, &d, &DestroyOptions::default(), &quiet)
        .await
        .unwrap();
    assert!(held.is_success(), "{held:?}");
    assert!(held.done.is_empty(), "{held:?}");
    assert_eq!(m.stats().writes, 0, "nothing destroyed on the array");
    let kept_drives = (held.kept.iter())
        .filter(|k| {
            k.kind == Kind::Volume
                && k.reason
                    .contains("released through the management Portworx")
        })
        .count();
    assert_eq!(kept_drives, 6, "{:?}", held.kept);
    assert!(
        held.kept
            .iter()
            .any(|k| k.kind == Kind::Pod && k.name == "tenant-demo"),
        "{:?}",
        held.kept
    );

    // Portworx releases them (reclaim policy Delete, claims deleted): its CSI
    // DeleteVolume destroys each volume on the array. Then the pod goes.
    let names: Vec<String> = (a
        .list_volumes(&ListParams::all())
        .await
        .unwrap()
        .into_iter())
    .filter(|v| v.name.starts_with("tenant-demo::"))
    .map(|v| v.name)
    .collect();
    let names: Vec<flasharray::VolumeName> = names
        .iter()
        .map(|n| flasharray::VolumeName::new(n.as_str()).unwrap())
        .collect();
    a.patch_volumes(&names, &flasharray::models::VolumePatch::destroy(), false)
        .await
        .unwrap();
    let r = destroy(a, &d, &DestroyOptions::default(), &quiet)
        .await
        .unwrap();
    assert!(r.is_success(), "{r:?}");
    let gone: Vec<(Kind, &str)> = r.done.iter().map(|c| (c.kind, c.name.as_str())).collect();
    assert_eq!(gone, [(Kind::Pod, "tenant-demo")], "{gone:?}");
    let vols = a.list_volumes(&ListParams::all()).await.unwrap();
    let mine: Vec<_> = vols
        .iter()
        .filter(|v| v.name.starts_with("tenant-demo::"))
        .collect();
    assert_eq!(mine.len(), 6);
    assert!(
        mine.iter().all(|v| v.destroyed),
        "soft-destroyed, recoverable"
    );
    let end = ForeignView::read(a, &d.tenant.to_string()).await.unwrap();
    assert_eq!(end.changes_since(&before), Vec::<String>::new());
}

/// With the management Portworx gone, `--destroy-dynamic-drives` destroys the
/// drives on the array as before, and the pod with them.
#[tokio::test]
async fn destroy_dynamic_drives_takes_them_on_the_array() {
    let m = mock(Seed::brownfield());
    let d = desired(&example());
    apply_plan(planned_on(&m, &d, true).await).await;
    assert_eq!(bind_claims(&m, &d).await, 6);
    apply_plan(planned_on(&m, &d, true).await).await;
    let opts = DestroyOptions {
        destroy_dynamic_drives: true,
        ..DestroyOptions::default()
    };
    let r = destroy(&m, &d, &opts, &quiet).await.unwrap();
    assert!(r.is_success(), "{r:?}");
    let gone: Vec<Kind> = r.done.iter().map(|c| c.kind).collect();
    assert_eq!(
        gone.iter().filter(|k| **k == Kind::Volume).count(),
        6,
        "{gone:?}"
    );
    assert!(gone.contains(&Kind::Pod), "{gone:?}");
}

#[tokio::test]
async fn dynamic_drives_are_found_through_bindings_tagged_and_destroyed_on_the_mock() {
    for seed in [Seed::Empty, Seed::brownfield()] {
        let m = mock(seed);
        dynamic_flow(&m, &m).await;
    }
}

#[tokio::test]
async fn dynamic_drives_over_https_on_the_brownfield_array() {
    let m = mock(Seed::brownfield());
    let sim = Simulator::start(m.clone(), SimConfig::new(TOKEN.into()))
        .await
        .unwrap();
    let rest = RestArray::builder(sim.url())
        .api_token(TOKEN.into())
        .ca_pem(sim.cert_pem().as_bytes().to_vec())
        .build()
        .unwrap();
    dynamic_flow(&m, &rest).await;
    rest.close().await.unwrap();
    sim.shutdown().await;
}

#[tokio::test]
async fn without_a_cluster_untagged_drives_stay_pending_and_nothing_is_tagged() {
    let m = mock(Seed::brownfield());
    let d = desired(&example());
    apply_plan(planned_on(&m, &d, false).await).await;
    bind_claims(&m, &d).await;
    // Bound, but no locator was asked: pending, with how to finish.
    let p = plan_on(&m, &d, false).await;
    assert_eq!(p.summary.pending, 6);
    assert!(!p.has_changes());
    let c = p
        .changes
        .iter()
        .find(|c| c.action == Action::Pending)
        .unwrap();
    assert!(c.reason.contains("--kubeconfig"), "{}", c.reason);
    assert!(
        c.reason.contains("binds") && c.name.contains("clusters-tenant-demo/tenant-demo-w00"),
        "{c:?}"
    );
}

#[tokio::test]
async fn a_claim_that_matches_two_volumes_or_another_tenants_is_a_conflict() {
    let m = mock(Seed::brownfield());
    let d = desired(&example());
    apply_plan(planned_on(&m, &d, false).await).await;
    bind_claims(&m, &d).await;
    // A second volume named after worker 0's PV, under another prefix.
    let c0 = &d.drives[0].claim;
    let pv = SimFada::pv_name(&c0.namespace, &c0.name);
    let twin = flasharray::VolumeName::new(format!("tenant-demo::other_{pv}")).unwrap();
    m.create_volumes(
        &[twin],
        &flasharray::models::VolumePost::default().with_provisioned(Size::gib(1).as_u64()),
    )
    .await
    .unwrap();
    let p = plan_on(&m, &d, true).await;
    assert!(!p.is_applicable());
    let blocker = p
        .conflicts
        .iter()
        .find(|b| b.reason.contains("matches 2 array volumes"))
        .unwrap_or_else(|| panic!("{:?}", p.conflicts));
    assert!(blocker.resolution.contains("exactly one"), "{blocker:?}");
    // The other drives are planned as usual (the conflict blocks the apply).
    assert_eq!(count(&p, Kind::Tag, Action::Create), 5);

    // Worker 1's volume carries another tenant's tags: never retagged.
    let c1 = &d.drives[2].claim;
    let v1 = SimFada::new().volume_name(pod(&d).as_ref(), &c1.namespace, &c1.name);
    let blue = [
        flasharray::models::Tag::new(&v1, "pxfa.io", "managed-by", "pxfa"),
        flasharray::models::Tag::new(&v1, "pxfa.io", "tenant", "tenant-blue"),
    ];
    m.set_tags(flasharray::TagResource::Volume, &blue)
        .await
        .unwrap();
    let p = plan_on(&m, &d, true).await;
    let other = p
        .conflicts
        .iter()
        .find(|b| b.name == v1)
        .unwrap_or_else(|| panic!("{:?}", p.conflicts));
    assert!(other.reason.contains("tenant-blue"), "{other:?}");
    assert!(
        !p.changes.iter().any(|c| c.name == v1),
        "{}",
        p.to_text(true)
    );
}

#[tokio::test]
async fn scale_in_of_a_dynamic_tenant_holds_its_drives_unless_told_to_destroy_them() {
    let m = mock(Seed::Empty);
    let mut four = example();
    four.spec.hosted_cluster.replicas = 4;
    let d = desired(&four);
    apply_plan(planned_on(&m, &d, true).await).await;
    bind_claims(&m, &d).await;
    apply_plan(planned_on(&m, &d, true).await).await;
    // 4 -> 3 workers: worker 3's drives are retained, not destroyed.
    let d3 = desired(&example());
    let p = plan_on(&m, &d3, false).await;
    assert_eq!(p.summary.retain, 2, "{}", p.to_text(true));
    assert!(!p.has_changes(), "{}", p.to_text(true));
    assert!(p.next_steps.iter().any(|s| s.contains("worker 3")));
    // The release flag alone holds them: the management Portworx created them and
    // releases them (#36 N6), as the plan says, with the reclaim-policy steps.
    let held = observe(&m, &d3)
        .await
        .plan(&PlanOptions {
            release_removed_workers: true,
            ..PlanOptions::default()
        })
        .plan()
        .clone();
    assert_eq!(held.summary.retain, 2, "{}", held.to_text(true));
    assert!(!held.has_changes(), "{}", held.to_text(true));
    let text = held.to_text(true);
    assert!(text.contains("held, not destroyed on the array"), "{text}");
    assert!(text.contains("--destroy-dynamic-drives"), "{text}");
    assert!(
        (held.next_steps.iter()).any(|s| s.contains("persistentVolumeReclaimPolicy")),
        "{:#?}",
        held.next_steps
    );
    // With --destroy-dynamic-drives too it releases them (soft destroy), and only them.
    let opts = PlanOptions {
        release_removed_workers: true,
        destroy_dynamic_drives: true,
        ..PlanOptions::default()
    };
    let obs = observe(&m, &d3).await;
    let release_staged = obs.plan(&opts);
    let release = release_staged.plan().clone();
    assert_eq!(count(&release, Kind::Volume, Action::Delete), 2);
    assert_eq!(count(&release, Kind::Volume, Action::NoOp), 6);
    apply_plan(release_staged).await;
    // 3 -> 4 again: the released drives are recovered, found by their tags.
    let back = plan_on(&m, &d, false).await;
    assert_eq!(
        count(&back, Kind::Volume, Action::Recover),
        2,
        "{}",
        back.to_text(true)
    );
}

#[tokio::test]
async fn pending_drives_count_against_the_free_space_preflight() {
    use px_topology::{ArraySpaceInfo, PreflightOptions, new_bytes, preflight};

    let m = mock(Seed::Empty);
    let d = desired(&example());
    let p = plan_on(&m, &d, false).await;
    let obs = observe(&m, &d).await.observed().clone();
    // pxfa creates only the pod; the management Portworx creates every drive as soon
    // as the claims this apply writes bind, on the same array.
    let drives: u64 = d.drives.iter().map(|x| x.size.as_u64()).sum();
    assert!(drives > 0 && p.summary.pending == d.drives.len());
    assert_eq!(new_bytes(&p, &obs), drives);
    let tight = ArraySpaceInfo {
        name: "fa-test".into(),
        capacity: Size::bytes(drives - 1),
        used: Size::bytes(0),
        provisioned: None,
    };
    let found = preflight(&p, &obs, Some(&tight), PreflightOptions::default());
    assert!(found.iter().any(|f| f.check == "space"), "{found:?}");
    let allowed = preflight(
        &p,
        &obs,
        Some(&tight),
        PreflightOptions {
            allow_overcommit: true,
        },
    );
    assert!(allowed.iter().all(|f| f.check != "space"), "{allowed:?}");
}

/// `plan_drive_adoption`: only the first tagging of bound, untagged drives, nothing
/// else of the plan (a spec change stays out), and nothing once they are tagged; a
/// destroy after it with `destroy_dynamic_drives` (the controller's) takes them with the pod.
#[tokio::test]
async fn adoption_before_a_destroy_tags_only_the_bound_drives() {
    let m = mock(Seed::brownfield());
    let d = desired(&example());
    let before = ForeignView::read(&m, &d.tenant.to_string()).await.unwrap();
    apply_plan(planned_on(&m, &d, true).await).await;
    assert_eq!(bind_claims(&m, &d).await, 6);

    // A spec change the adoption must not carry: a larger pod quota.
    let mut grown = d.clone();
    if let Some(p) = grown.pod.as_mut() {
        p.quota = p.quota.map(|q| q.checked_mul(2).unwrap());
    }
    let full = planned_on(&m, &grown, true).await.plan().clone();
    assert!(
        full.actionable().any(|c| c.kind == Kind::Pod),
        "{}",
        full.to_text(true)
    );
    let adoption_staged = located(&m, &grown, true).await.plan_drive_adoption();
    let adoption = adoption_staged.plan().clone();
    assert!(adoption.is_applicable(), "{}", adoption.to_text(true));
    let kinds: Vec<(Kind, Action)> = adoption.actionable().map(|c| (c.kind, c.action)).collect();
    assert_eq!(
        kinds,
        vec![(Kind::Tag, Action::Create); 6],
        "{}",
        adoption.to_text(true)
    );
    apply_plan(adoption_staged).await;
    let again = located(&m, &d, true).await.plan_drive_adoption();
    assert!(!again.plan().has_changes());

    // As the controller's finalizer destroys (it does not release through Portworx).
    let opts = DestroyOptions {
        destroy_dynamic_drives: true,
        ..DestroyOptions::default()
    };
    let r = destroy(&m, &d, &opts, &quiet).await.unwrap();
    assert!(r.failed.is_empty(), "{r:?}");
    let live = m
        .list_volumes(&ListParams::all())
        .await
        .unwrap()
        .into_iter()
        .filter(|v| !v.destroyed && v.name.starts_with(&format!("{}::", pod(&d).unwrap())))
        .count();
    assert_eq!(live, 0, "the drives went with the pod");
    assert_eq!(
        ForeignView::read(&m, &d.tenant.to_string()).await.unwrap(),
        before
    );
}
