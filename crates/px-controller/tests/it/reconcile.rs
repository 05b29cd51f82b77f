//! Create, invalid spec, manual approval, delete with the finalizer, array down then
//! back, and one shared client per array.

use std::sync::atomic::Ordering;

use flasharray::{ConnectionParams, ConnectionTarget, FlashArray, HostGroupName, ListParams};
use px_controller::Outcome;
use px_controller::{ConditionStatus, ConditionType as C, Reason};
use px_topology::crd::APPROVE_ANNOTATION;
use serde_json::json;

use crate::fake::{NAME, TOKEN, World, tenant_object};

async fn live_volumes(w: &World) -> usize {
    w.array
        .list_volumes(&ListParams::all())
        .await
        .unwrap()
        .iter()
        .filter(|v| !v.destroyed)
        .count()
}

fn cond(w: &World, t: C) -> (ConditionStatus, String, String) {
    let s = w.store.status(NAME);
    let c = s.get(t).unwrap_or_else(|| panic!("no {t:?} in {s:?}"));
    (c.status, c.reason.clone(), c.message.clone())
}

#[tokio::test]
async fn create_converges_to_ready() {
    let w = World::start(tenant_object()).await;
    let outcome = w.reconcile().await.expect("reconciles");
    assert_eq!(outcome, Outcome::Converged, "{:?}", w.store.status(NAME));
    assert!(
        live_volumes(&w).await > 0,
        "the array holds the tenant's volumes"
    );
    for t in [
        C::Valid,
        C::ArrayReady,
        C::ManagementApplied,
        C::TenantApplied,
        C::Ready,
    ] {
        assert_eq!(
            cond(&w, t).0,
            ConditionStatus::True,
            "{t:?}: {:?}",
            cond(&w, t)
        );
    }
    assert_eq!(cond(&w, C::Degraded).0, ConditionStatus::False);
    let obj = w.store.get(NAME);
    assert_eq!(
        obj["metadata"]["finalizers"],
        json!(["pxfa.io/tenant-storage"])
    );
    let status = w.store.status(NAME);
    assert_eq!(status.observed_generation, Some(1));
    assert!(status.last_plan.as_ref().unwrap().create > 0);
    assert!(
        status.array_objects.get("volume").copied().unwrap_or(0) > 0,
        "{:?}",
        status.array_objects
    );
    // The tenant manifests went to the tenant cluster through the HostedCluster's kubeconfig.
    assert!(
        !w.fake
            .requests("GET", "tenant-full-admin-kubeconfig")
            .await
            .is_empty()
    );

    // A second reconcile changes nothing on the array and stays Ready.
    w.array.reset_stats();
    assert_eq!(w.reconcile().await.expect("again"), Outcome::Converged);
    assert_eq!(w.array.stats().writes, 0, "converged: no array write");
    assert_eq!(cond(&w, C::Drifted).0, ConditionStatus::False);
    assert_eq!(
        w.built.load(Ordering::SeqCst),
        1,
        "one shared client for the array"
    );
    // The token never appears in status.
    assert!(!w.store.get(NAME).to_string().contains(TOKEN));
}

#[tokio::test]
async fn invalid_spec_sets_valid_false_and_writes_nothing() {
    let mut obj = tenant_object();
    obj["spec"]["storage"]["capacity"] = json!("4 TB");
    let w = World::start(obj).await;
    let outcome = w
        .reconcile()
        .await
        .expect("an invalid spec is not an error to retry");
    assert_eq!(outcome, Outcome::Waiting("SpecInvalid"));
    let (status, reason, message) = cond(&w, C::Valid);
    assert_eq!(status, ConditionStatus::False);
    assert_eq!(reason, "SpecInvalid");
    assert!(message.contains("spec.storage.capacity"), "{message}");
    assert!(
        message.contains("TenantStorage pxfa/tenant-full"),
        "{message}"
    );
    assert_eq!(w.array.stats().calls, 0, "no array call at all");
    assert!(
        w.store.get(NAME)["metadata"]["finalizers"].is_null(),
        "no cluster write but status"
    );
    assert!(
        w.fake
            .requests("PATCH", "/namespaces/clusters-tenant-full")
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn manual_policy_waits_for_one_approval() {
    let mut obj = tenant_object();
    obj["spec"]["apply"] = json!("manual");
    let w = World::start(obj).await;
    assert_eq!(
        w.reconcile().await.unwrap(),
        Outcome::Waiting("ApprovalPending")
    );
    assert_eq!(w.array.stats().writes, 0, "manual: plan only");
    let (status, reason, message) = cond(&w, C::ArrayReady);
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::False, "ApprovalPending")
    );
    assert!(message.contains(APPROVE_ANNOTATION), "{message}");
    let pending = w.store.status(NAME).last_plan.unwrap().pending;
    assert!(!pending.is_empty(), "the pending changes are listed");

    w.store.edit(NAME, |o| {
        o["metadata"]["annotations"][APPROVE_ANNOTATION] = json!("true")
    });
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Converged);
    assert!(w.array.stats().writes > 0);
    assert!(live_volumes(&w).await > 0);
    assert!(
        w.store.get(NAME)["metadata"]["annotations"]
            .get(APPROVE_ANNOTATION)
            .is_none(),
        "the approval is consumed"
    );
    assert_eq!(cond(&w, C::Ready).0, ConditionStatus::True);

    // Drift under manual: reported, not repaired without a new approval.
    disconnect_one(&w).await;
    w.array.reset_stats();
    assert_eq!(
        w.reconcile().await.unwrap(),
        Outcome::Waiting("ApprovalPending")
    );
    assert_eq!(w.array.stats().writes, 0);
    assert_eq!(cond(&w, C::Drifted).0, ConditionStatus::True);
}

#[tokio::test]
async fn auto_repairs_drift() {
    let w = World::start(tenant_object()).await;
    w.reconcile().await.unwrap();
    let before = connections(&w).await;
    assert!(before > 0);
    disconnect_one(&w).await;
    assert!(connections(&w).await < before, "disconnected");
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Converged);
    assert_eq!(
        cond(&w, C::Drifted).0,
        ConditionStatus::True,
        "drift is reported"
    );
    assert_eq!(connections(&w).await, before, "and repaired");
}

#[tokio::test]
async fn delete_soft_destroys_and_removes_the_finalizer() {
    let w = World::start(tenant_object()).await;
    w.reconcile().await.unwrap();
    let live = live_volumes(&w).await;
    assert!(live > 0);
    w.store.edit(NAME, |o| {
        o["metadata"]["deletionTimestamp"] = json!("2026-12-01T11:00:00Z")
    });
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Deleted);
    assert!(!w.exists(), "the finalizer is gone, so is the object");
    let vols = w.array.list_volumes(&ListParams::all()).await.unwrap();
    assert_eq!(live_volumes(&w).await, 0, "destroyed");
    assert!(
        vols.iter().filter(|v| v.destroyed).count() >= live,
        "recoverable: destroyed, not eradicated"
    );
}

#[tokio::test]
async fn array_down_then_back() {
    let w = World::start(tenant_object()).await;
    w.array.faults().unavailable_next(1_000);
    let e = w.reconcile().await.expect_err("array down");
    assert_eq!(e.reason, Reason::ArrayUnreachable);
    let (status, reason, message) = cond(&w, C::Degraded);
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::True, "ArrayUnreachable")
    );
    assert!(message.contains("fa1-mgmt.example.net"), "{message}");
    assert_eq!(cond(&w, C::Ready).0, ConditionStatus::False);
    assert_eq!(live_volumes_unfaulted(&w).await, 0);
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Converged);
    assert_eq!(cond(&w, C::Degraded).0, ConditionStatus::False);
    assert_eq!(cond(&w, C::Ready).0, ConditionStatus::True);
}

async fn live_volumes_unfaulted(w: &World) -> usize {
    w.array.faults().clear();
    live_volumes(w).await
}

#[tokio::test]
async fn missing_credentials_secret_degrades_without_array_calls() {
    let mut obj = tenant_object();
    obj["spec"]["credentialsSecret"]["name"] = json!("nope");
    let w = World::start(obj).await;
    let e = w.reconcile().await.expect_err("no secret");
    assert_eq!(e.reason, Reason::CredentialsMissing);
    let (_, reason, message) = cond(&w, C::Degraded);
    assert_eq!(reason, "CredentialsMissing");
    assert!(message.contains("pxfa/nope"), "{message}");
    assert_eq!(w.array.stats().calls, 0);
}

/// Someone disconnects one of the tenant's volumes behind pxfa's back.
async fn disconnect_one(w: &World) {
    let vols = w.array.list_volumes(&ListParams::all()).await.unwrap();
    let victim = vols.iter().find(|v| !v.destroyed).unwrap().name.clone();
    w.array
        .delete_connections(
            &ConnectionTarget::HostGroup(HostGroupName::new("hcp-mgmt").unwrap()),
            &[flasharray::VolumeName::new(&victim).unwrap()],
        )
        .await
        .unwrap();
}

async fn connections(w: &World) -> usize {
    w.array
        .list_connections(&ConnectionParams::default())
        .await
        .unwrap()
        .len()
}

#[tokio::test]
async fn the_controller_loop_converges_a_listed_object() {
    let w = World::start(tenant_object()).await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(px_controller::run(
        w.ctx.clone(),
        px_controller::Options::default(),
        async {
            let _ = stopped.await;
        },
    ));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !w.store.status(NAME).is_true(C::Ready) {
        if std::time::Instant::now() > deadline {
            let seen: Vec<String> = w
                .fake
                .server
                .received_requests()
                .await
                .unwrap_or_default()
                .iter()
                .map(|r| format!("{} {}", r.method, r.url))
                .collect();
            panic!("not Ready: {:?}\nrequests: {seen:#?}", w.store.status(NAME));
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(live_volumes(&w).await > 0);
    stop.send(()).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(10), run)
        .await
        .expect("the controller stops on shutdown")
        .unwrap();
}

#[tokio::test]
async fn deleting_after_the_spec_turned_invalid_keeps_the_finalizer_and_the_data() {
    let w = World::start(tenant_object()).await;
    w.reconcile().await.unwrap();
    let live = live_volumes(&w).await;
    assert!(live > 0);
    // The spec breaks after the apply, then the object is deleted.
    w.store.edit(NAME, |o| {
        o["spec"]["storage"]["capacity"] = json!("4 TB");
        o["metadata"]["deletionTimestamp"] = json!("2026-12-01T11:00:00Z");
    });
    w.array.reset_stats();
    assert_eq!(
        w.reconcile().await.unwrap(),
        Outcome::Waiting("SpecInvalid")
    );
    assert!(w.exists(), "the finalizer stays");
    assert_eq!(
        w.store.get(NAME)["metadata"]["finalizers"],
        json!(["pxfa.io/tenant-storage"])
    );
    assert_eq!(w.array.stats().calls, 0, "nothing on the array is touched");
    assert_eq!(live_volumes(&w).await, live);
    let (status, reason, message) = cond(&w, C::Degraded);
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::True, "DeleteBlockedSpecInvalid")
    );
    assert!(message.contains("spec.storage.capacity"), "{message}");
    assert!(message.contains("pxfa.io/tenant-storage"), "{message}");
    assert_eq!(cond(&w, C::Valid).0, ConditionStatus::False);

    // Fixed: the delete goes on, soft-destroying (recoverable).
    w.store.edit(NAME, |o| {
        o["spec"]["storage"]["capacity"] = tenant_object()["spec"]["storage"]["capacity"].clone();
    });
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Deleted);
    assert!(!w.exists());
    assert_eq!(live_volumes(&w).await, 0);
    let vols = w.array.list_volumes(&ListParams::all()).await.unwrap();
    assert!(vols.iter().filter(|v| v.destroyed).count() >= live);
}

/// Two reconciles that read the array before either wrote (the first tenants on a
/// new array race to create what they share; here two controllers of the same
/// object, each with its own API server, race for every object): the loser's writes
/// find the objects made since its reading. That is `ReadAgain`, with
/// `ArrayReady=False ArrayChanged` and no error, and its next reconcile reads again
/// and converges without a second create. Before: `ArrayWriteFailed`, a Warning and
/// an error in the metrics for every first install.
#[tokio::test]
async fn a_write_that_finds_the_array_changed_since_its_reading_reads_again() {
    use flasharray_mock::Op;
    let a = World::start(tenant_object()).await;
    let b = World::start_on(tenant_object(), a.array.clone(), 2_000).await;
    a.array.faults().hold(Op::CreatePods);
    let (ra, rb) = (a.reconcile(), b.reconcile());
    let both_held = async {
        while a.array.stats().per_op.get(&Op::CreatePods).copied() < Some(2) {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        a.array.faults().release(Op::CreatePods);
    };
    let (ra, rb, ()) = tokio::join!(ra, rb, both_held);
    let outcomes = [ra.unwrap(), rb.unwrap()];
    // The pod went to one; the rounds after it that do not need it (host groups,
    // hosts) raced on, so either may have lost something.
    assert!(
        outcomes.contains(&Outcome::ReadAgain),
        "one lost the race: {outcomes:?}"
    );
    for (w, outcome) in [(&a, &outcomes[0]), (&b, &outcomes[1])] {
        let (degraded, _, _) = cond(w, C::Degraded);
        assert_eq!(degraded, ConditionStatus::False, "not an error");
        if *outcome != Outcome::ReadAgain {
            continue;
        }
        let (status, reason, message) = cond(w, C::ArrayReady);
        assert_eq!(status, ConditionStatus::False);
        assert_eq!(reason, "ArrayChanged");
        assert!(message.contains("reading it again"), "{message}");
    }

    // Each loser reads again and converges on what the other made; the pod is
    // created once.
    for (w, outcome) in [(&a, &outcomes[0]), (&b, &outcomes[1])] {
        if *outcome == Outcome::ReadAgain {
            assert_ne!(w.reconcile().await.unwrap(), Outcome::ReadAgain);
        }
        let (ready, reason, _) = cond(w, C::ArrayReady);
        assert_eq!(
            (ready, reason.as_str()),
            (ConditionStatus::True, "Converged")
        );
        assert_eq!(cond(w, C::Degraded).0, ConditionStatus::False);
    }
    let pods = a.array.list_pods(&ListParams::default()).await.unwrap();
    assert_eq!(pods.len(), 1, "{pods:?}");
}
