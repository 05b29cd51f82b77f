//! Two replicas, one Lease: only the leader reconciles; killing it hands over within
//! the lease time without a second apply; a leader that cannot renew stops; a
//! shutdown releases the Lease.

use std::sync::Arc;
use std::time::{Duration, Instant};

use px_controller::Context;
use px_controller::{ConditionType as C, LeaseConfig, Options, Role};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::fake::{NAME, World, tenant_object};

const LEASE: &str = "pxfa-controller";
const LEASE_DURATION: Duration = Duration::from_secs(2);
const RETRY: Duration = Duration::from_millis(200);

pub(crate) fn options(identity: &str) -> Options {
    Options {
        leader: Some(LeaseConfig {
            lease_duration: LEASE_DURATION,
            renew_deadline: Duration::from_millis(1_200),
            retry_period: RETRY,
            ..LeaseConfig::new("pxfa-system", LEASE, identity)
        }),
        ..Options::default()
    }
}

/// A replica's controller, stopped gracefully by the sender or killed by `abort`.
pub(crate) fn start(ctx: &Arc<Context>, identity: &str) -> (oneshot::Sender<()>, JoinHandle<()>) {
    let (stop, stopped) = oneshot::channel::<()>();
    let run = tokio::spawn(px_controller::run(ctx.clone(), options(identity), async {
        let _ = stopped.await;
    }));
    (stop, run)
}

async fn until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !f() {
        assert!(started.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    started.elapsed()
}

const ARRAY: &str = "fa1-mgmt.example.net";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_leader_reconciles_and_a_standby_takes_over_without_double_apply() {
    let w = World::start(tenant_object()).await;
    let a = w.replica("replica-a", LEASE_DURATION).await;
    let b = w.replica("replica-b", LEASE_DURATION).await;
    let (_stop_a, run_a) = start(&a, "replica-a");
    until(
        "replica-a to converge the tenant",
        Duration::from_secs(20),
        || w.store.status(NAME).is_true(C::Ready),
    )
    .await;
    assert_eq!(w.leases.holder(LEASE).as_deref(), Some("replica-a"));
    let writes = w.array.stats().writes;
    assert!(writes > 0, "replica-a applied the tenant");

    let (stop_b, run_b) = start(&b, "replica-b");
    until("replica-b to stand by", Duration::from_secs(5), || {
        b.health.role() == Role::Standby
    })
    .await;
    // Several renew periods with both running: only replica-a holds the Lease.
    tokio::time::sleep(LEASE_DURATION + RETRY * 2).await;
    assert_eq!(w.leases.holder(LEASE).as_deref(), Some("replica-a"));
    assert_eq!(
        b.metrics.reconciles(None),
        0,
        "the standby never reconciles"
    );
    assert_eq!(b.metrics.array_calls(ARRAY, None), 0, "nor calls the array");
    assert!(a.metrics.reconciles(None) > 0);
    assert_eq!(b.health.ready(), Ok("standby"), "a fresh standby is ready");

    // Kill replica-a: no release, its Lease just stops being renewed.
    run_a.abort();
    let _ = run_a.await;
    let reconciles_a = a.metrics.reconciles(None);
    let took = until(
        "replica-b to take over and reconcile",
        LEASE_DURATION * 3,
        || b.health.is_leading() && b.metrics.reconciles(None) > 0,
    )
    .await;
    assert!(
        took <= LEASE_DURATION + RETRY * 4,
        "takeover within the lease time: {took:?}"
    );
    assert_eq!(w.leases.holder(LEASE).as_deref(), Some("replica-b"));
    assert_eq!(w.leases.transitions(LEASE), 1);
    assert!(
        b.metrics.array_calls(ARRAY, Some("ok")) > 0,
        "replica-b observed"
    );
    assert_eq!(
        w.array.stats().writes,
        writes,
        "no double apply: the new leader found nothing to change"
    );
    assert_eq!(
        a.metrics.reconciles(None),
        reconciles_a,
        "the killed leader is gone"
    );
    assert!(w.store.status(NAME).is_true(C::Ready));

    stop_b.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), run_b)
        .await
        .expect("replica-b stops on shutdown")
        .unwrap();
    assert_eq!(w.leases.holder(LEASE), None, "released on shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_cannot_renew_stops_reconciling_before_the_lease_expires() {
    let w = World::start(tenant_object()).await;
    let a = w.replica("replica-a", LEASE_DURATION).await;
    let (stop_a, run_a) = start(&a, "replica-a");
    until("replica-a to lead", Duration::from_secs(10), || {
        a.health.is_leading()
    })
    .await;
    w.leases
        .down
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let took = until("replica-a to give up", LEASE_DURATION * 2, || {
        !a.health.is_leading()
    })
    .await;
    assert!(
        took < LEASE_DURATION,
        "stops before another replica may take over: {took:?}"
    );
    assert!(
        a.metrics
            .render()
            .lines()
            .any(|l| l == "pxfa_controller_leader 0")
    );
    until("replica-a to turn unready", LEASE_DURATION * 2, || {
        a.health.ready().is_err()
    })
    .await;
    // The API server is back: the same replica renews its own Lease and leads again.
    w.leases
        .down
        .store(false, std::sync::atomic::Ordering::SeqCst);
    until("replica-a to lead again", Duration::from_secs(5), || {
        a.health.is_leading()
    })
    .await;
    stop_a.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), run_a)
        .await
        .expect("stops")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_starting_together_elect_one() {
    let w = World::start(tenant_object()).await;
    let a = w.replica("replica-a", LEASE_DURATION).await;
    let b = w.replica("replica-b", LEASE_DURATION).await;
    let (stop_a, run_a) = start(&a, "replica-a");
    let (stop_b, run_b) = start(&b, "replica-b");
    until("one leader", Duration::from_secs(10), || {
        a.health.is_leading() || b.health.is_leading()
    })
    .await;
    tokio::time::sleep(RETRY * 5).await;
    assert!(
        a.health.is_leading() != b.health.is_leading(),
        "exactly one leads"
    );
    let leader = if a.health.is_leading() {
        "replica-a"
    } else {
        "replica-b"
    };
    assert_eq!(w.leases.holder(LEASE).as_deref(), Some(leader));
    stop_a.send(()).unwrap();
    stop_b.send(()).unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(10), run_a).await;
    let _ = tokio::time::timeout(Duration::from_secs(10), run_b).await;
}
