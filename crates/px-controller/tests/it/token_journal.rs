//! The controller's token journal Secret: a cloud-drive tenant's API token survives a
//! controller killed at any array write or journal write, and a leader change
//! between the token's creation and its delivery. Each case kills the first
//! reconcile at one point, then lets another replica (a new process: its own
//! in-memory journal) reconcile to Ready, and checks that the tenant's px-pure-secret
//! holds the one token the array user has, and that no journal Secret is left.

use std::sync::Arc;
use std::time::Duration;

use flasharray::FlashArray;
use k8s_openapi::api::core::v1::Secret;
use kube::api::DynamicObject;
use px_controller::{Context, Outcome, reconcile};
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::fake::{NAME, NS, Stall, World, cloud_drive_object};
use crate::objects::secret;

const USER: &str = "pxfa-tenant-full";
const JOURNAL_NAME: &str = "pxfa-token-journal-tenant-full";
const JOURNAL: &str = "pxfa/pxfa-token-journal-tenant-full";

/// Where the first reconcile is killed.
#[derive(Clone, Copy, Debug)]
enum Kill {
    /// Right after the array took its `n`th write.
    ArrayWrite(u64),
    /// At a journal Secret write.
    Journal(Stall),
}

fn object(w: &World) -> DynamicObject {
    serde_json::from_value(w.store.get(NAME)).unwrap()
}

/// Runs one reconcile in a task and aborts it once `stalled` says the kill point is
/// reached (or it ended on its own).
async fn reconcile_until(w: &World, ctx: Arc<Context>, stalled: impl Fn(&World) -> bool) {
    let obj = object(w);
    let task = tokio::spawn(async move { reconcile(&obj, &ctx).await });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !task.is_finished() && !stalled(w) {
        assert!(tokio::time::Instant::now() < deadline, "never stalled");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    task.abort();
    let _ = task.await;
}

/// Reconciles with `ctx` until Ready (a few tries: a retry after a failure is the
/// controller's backoff).
async fn converge(w: &World, ctx: &Arc<Context>, label: &str) {
    let mut last = None;
    for _ in 0..4 {
        match reconcile(&object(w), ctx).await {
            Ok(Outcome::Converged) => return,
            other => last = Some(other),
        }
    }
    panic!("{label}: not Ready: {last:?}: {:?}", w.store.status(NAME));
}

/// The token in the last px-pure-secret applied to the tenant cluster.
pub(crate) async fn delivered(w: &World) -> Option<String> {
    let applied = w
        .fake
        .requests("PATCH", "/namespaces/portworx/secrets/px-pure-secret")
        .await;
    token_in(applied.last()?)
}

/// The token in one px-pure-secret apply.
fn token_in(applied: &wiremock::Request) -> Option<String> {
    let body: Value = applied.body_json().ok()?;
    let pure = match body["stringData"]["pure.json"].as_str() {
        Some(s) => s.to_string(),
        None => data_field(&body, "pure.json")?,
    };
    let v: Value = serde_json::from_str(&pure).ok()?;
    v["FlashArrays"][0]["APIToken"].as_str().map(str::to_string)
}

/// A key of a Secret's `data` (base64 on the wire), as text.
fn data_field(secret: &Value, key: &str) -> Option<String> {
    let s: Secret = serde_json::from_value(secret.clone()).ok()?;
    String::from_utf8(s.data?.remove(key)?.0).ok()
}

/// The journal entry's state, for messages (never the Secret itself: it holds a token).
fn journal_state(w: &World) -> Option<String> {
    data_field(&w.journal.get(JOURNAL)?, "state")
}

async fn tokens(w: &World) -> Vec<Option<u64>> {
    w.array
        .list_api_tokens(&[USER.to_string()], false)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.api_token.created_at)
        .collect()
}

/// After the rerun: Ready, the tenant holds a working token, the array user has
/// exactly that one, and the journal Secret is gone.
pub(crate) async fn assert_delivered_and_clean(w: &World, label: &str) -> String {
    let held = delivered(w)
        .await
        .unwrap_or_else(|| panic!("{label}: no px-pure-secret applied to the tenant"));
    assert_eq!(
        w.array.api_token_owner(&held).as_deref(),
        Some(USER),
        "{label}: the delivered token does not log in as {USER}"
    );
    assert_eq!(tokens(w).await.len(), 1, "{label}: one token");
    assert!(
        w.journal.is_empty(),
        "{label}: journal left, state {:?}",
        journal_state(w)
    );
    held
}

async fn killed_then_taken_over(kill: Kill) {
    let label = format!("{kill:?}");
    let w = World::start(cloud_drive_object()).await;
    match kill {
        Kill::ArrayWrite(n) => {
            w.array.faults().stall_after_write(n);
            reconcile_until(&w, w.ctx.clone(), |w| w.array.faults().stalled()).await;
            assert!(w.array.faults().stalled(), "{label}: write {n} never came");
            w.array.faults().clear();
        }
        Kill::Journal(stall) => {
            w.journal.stall(stall);
            reconcile_until(&w, w.ctx.clone(), |w| w.journal.stalled()).await;
            assert!(w.journal.stalled(), "{label}: the journal write never came");
            w.journal.clear_stall();
        }
    }
    let first = delivered(&w).await;
    // A new leader, with nothing of the killed one's memory.
    let next = w.replica("replica-2", Duration::from_secs(15)).await;
    converge(&w, &next, &label).await;
    let held = assert_delivered_and_clean(&w, &label).await;
    if let Some(first) = first {
        assert_eq!(first, held, "{label}: a delivered token was replaced");
    }
    // Converged: a further reconcile writes nothing and delivers nothing new.
    w.array.reset_stats();
    let before = w
        .fake
        .requests("PATCH", "/secrets/px-pure-secret")
        .await
        .len();
    assert_eq!(
        reconcile(&object(&w), &next).await.unwrap(),
        Outcome::Converged
    );
    assert_eq!(w.array.stats().writes, 0, "{label}");
    assert_eq!(
        w.fake
            .requests("PATCH", "/secrets/px-pure-secret")
            .await
            .len(),
        before,
        "{label}: the kept px-pure-secret is not re-applied"
    );
}

#[tokio::test]
async fn the_token_survives_a_kill_at_every_array_write() {
    // How many array writes a clean reconcile makes.
    let w = World::start(cloud_drive_object()).await;
    w.array.reset_stats();
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Converged);
    let writes = w.array.stats().writes;
    assert!(writes >= 2, "the pod and the token: {writes}");
    assert_delivered_and_clean(&w, "clean run").await;
    for n in 1..=writes {
        killed_then_taken_over(Kill::ArrayWrite(n)).await;
    }
}

#[tokio::test]
async fn the_token_survives_a_kill_at_every_journal_write() {
    // 1: the intent, 2: the token, 3: the delete after delivery.
    for n in 1..=3 {
        killed_then_taken_over(Kill::Journal(Stall::AfterEffect(n))).await;
        killed_then_taken_over(Kill::Journal(Stall::BeforeEffect(n))).await;
    }
}

/// The journal Secret holds the token while the tenant cluster refuses it; a new
/// leader delivers that same token with no array write, then deletes the Secret.
#[tokio::test]
async fn a_new_leader_delivers_the_journaled_token() {
    let w = World::start(cloud_drive_object()).await;
    Mock::given(method("PATCH"))
        .and(path("/api/v1/namespaces/portworx/secrets/px-pure-secret"))
        .respond_with(ResponseTemplate::new(500).set_body_json(serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "reason": "InternalError", "code": 500})))
        .with_priority(1)
        .up_to_n_times(1)
        .mount(&w.fake.server)
        .await;
    assert!(
        w.reconcile().await.is_err(),
        "the tenant refused the secret"
    );
    let created = tokens(&w).await;
    assert_eq!(created.len(), 1);
    // The Secret holds the token, labelled for the object, beside it.
    let secret = w.journal.get(JOURNAL).expect("the journal Secret");
    assert_eq!(secret["metadata"]["namespace"], NS);
    assert_eq!(secret["metadata"]["labels"]["pxfa.io/tenant-storage"], NAME);
    let field = |k: &str| data_field(&secret, k).unwrap();
    assert_eq!(field("state"), "created");
    assert_eq!(field("user"), USER);
    let journaled = field("token");
    assert_eq!(w.array.api_token_owner(&journaled).as_deref(), Some(USER));
    // The token is in no status, condition or Event.
    assert!(!w.store.get(NAME).to_string().contains(&journaled));
    for e in w.fake.requests("POST", "/events").await {
        assert!(!String::from_utf8_lossy(&e.body).contains(&journaled));
    }

    let next = w.replica("replica-2", Duration::from_secs(15)).await;
    w.array.reset_stats();
    converge(&w, &next, "new leader").await;
    assert_eq!(w.array.stats().writes, 0, "delivered from the journal");
    assert_eq!(tokens(&w).await, created, "the same token");
    assert_eq!(
        assert_delivered_and_clean(&w, "new leader").await,
        journaled
    );
}

/// The journal Secret refuses the token: it is not delivered before it is durable;
/// the next reconcile of the same process writes it from memory and delivers it.
#[tokio::test]
async fn a_token_the_journal_refused_is_not_delivered_until_it_is_kept() {
    let w = World::start(cloud_drive_object()).await;
    w.journal.stall(Stall::Refuse(2));
    let err = w
        .reconcile()
        .await
        .expect_err("the journal refused the token");
    assert!(
        err.message.contains("held in memory") && err.message.contains(JOURNAL),
        "{}",
        err.message
    );
    assert_eq!(delivered(&w).await, None, "not delivered before it is kept");
    let created = tokens(&w).await;
    assert_eq!(created.len(), 1);
    w.array.reset_stats();
    converge(&w, &w.ctx, "same process").await;
    assert_eq!(w.array.stats().writes, 0, "delivered from memory");
    assert_eq!(tokens(&w).await, created, "the same token");
    assert_delivered_and_clean(&w, "same process").await;
}

/// The tenant holds the px-pure-secret but is not ready yet (its Portworx is still
/// initializing): the journal lets go of the token at once, so the next reconcile
/// plans no token change (nothing to approve under `apply: manual`) and keeps the
/// tenant's secret as it is.
#[tokio::test]
async fn the_journal_lets_go_once_the_tenant_holds_the_secret() {
    let mut obj = cloud_drive_object();
    obj["spec"]["apply"] = serde_json::json!("manual");
    obj["metadata"]["annotations"][px_topology::crd::APPROVE_ANNOTATION] =
        serde_json::json!("true");
    let w = World::start(obj).await;
    *w.portworx_phase.lock().unwrap() = "Initializing";
    assert_eq!(w.reconcile().await.unwrap(), Outcome::InProgress);
    let held = delivered(&w).await.expect("the tenant holds the secret");
    assert_eq!(w.array.api_token_owner(&held).as_deref(), Some(USER));
    assert!(w.journal.is_empty(), "state {:?}", journal_state(&w));
    // Still not ready: no approval is asked for, no token change, no new secret.
    let applies = w
        .fake
        .requests("PATCH", "/secrets/px-pure-secret")
        .await
        .len();
    assert_eq!(w.reconcile().await.unwrap(), Outcome::InProgress);
    let plan = w.store.status(NAME).last_plan.unwrap();
    assert!(plan.pending.is_empty(), "{:?}", plan.pending);
    assert_eq!(
        w.fake
            .requests("PATCH", "/secrets/px-pure-secret")
            .await
            .len(),
        applies
    );
    assert_eq!(tokens(&w).await.len(), 1);
}

/// Deleting the object while the journal holds the token undelivered: the token is
/// pxfa's and nobody has it, so it goes with the tenant (no credential left behind
/// on the array user, which pxfa did not make and keeps); the journal goes too.
#[tokio::test]
async fn deleting_the_tenant_removes_its_undelivered_token_and_journal() {
    let w = World::start(cloud_drive_object()).await;
    Mock::given(method("PATCH"))
        .and(path("/api/v1/namespaces/portworx/secrets/px-pure-secret"))
        .respond_with(ResponseTemplate::new(500))
        .with_priority(1)
        .mount(&w.fake.server)
        .await;
    assert!(w.reconcile().await.is_err());
    assert!(w.journal.get(JOURNAL).is_some());
    w.store.edit(NAME, |o| {
        o["metadata"]["deletionTimestamp"] = serde_json::json!("2026-12-01T12:00:00Z");
    });
    assert_eq!(tokens(&w).await.len(), 1);
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Deleted);
    assert!(w.journal.is_empty(), "state {:?}", journal_state(&w));
    assert!(!w.exists());
    assert!(
        tokens(&w).await.is_empty(),
        "the undelivered token is deleted"
    );
    let admins = w.array.list_api_tokens(&[], false).await.unwrap();
    assert!(admins.iter().all(|t| !t.name.eq_ignore_ascii_case(USER)));
}

/// A delivered token stays when the tenant is deleted (the array user is not
/// pxfa's; `pxfa destroy --delete-token` is the explicit way): the destroy takes
/// only what the journal proves nobody has.
#[tokio::test]
async fn deleting_a_tenant_keeps_a_delivered_token() {
    let w = World::start(cloud_drive_object()).await;
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Converged);
    let held = assert_delivered_and_clean(&w, "delivered").await;
    w.store.edit(NAME, |o| {
        o["metadata"]["deletionTimestamp"] = serde_json::json!("2026-12-01T12:00:00Z");
    });
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Deleted);
    assert_eq!(tokens(&w).await.len(), 1);
    assert_eq!(w.array.api_token_owner(&held).as_deref(), Some(USER));
}

/// The token POST took effect, its answer was lost, and the array does not show
/// the value again: the reconcile fails, the journal keeps the intent (even though
/// the tenant is otherwise done), and the next reconcile replaces the token.
#[tokio::test]
async fn a_token_whose_answer_was_lost_keeps_its_intent_and_is_replaced() {
    let w = World::start(cloud_drive_object()).await;
    // Write 1 is the pod, write 2 the token.
    w.array.faults().fail_write_after_effect(2);
    w.array.faults().withhold_token_values(true);
    let err = w.reconcile().await.expect_err("nobody has the token");
    assert!(err.message.contains("lost"), "{}", err.message);
    w.array.faults().clear();
    assert_eq!(tokens(&w).await.len(), 1, "created on the array");
    assert_eq!(delivered(&w).await, None);
    assert_eq!(journal_state(&w).as_deref(), Some("creating"));
    converge(&w, &w.ctx, "next reconcile").await;
    assert_delivered_and_clean(&w, "next reconcile").await;
}

/// Another replica writes the journal Secret between this reconcile's intent and
/// its token: the write is refused (resourceVersion), nothing is delivered, and the
/// next reconcile reads the Secret again and converges.
#[tokio::test]
async fn a_journal_changed_by_another_writer_stops_the_delivery() {
    let w = World::start(cloud_drive_object()).await;
    w.journal.touch_after_write(1);
    let err = w.reconcile().await.expect_err("the journal changed");
    assert_eq!(
        err.reason,
        px_controller::Reason::Conflict,
        "{}",
        err.message
    );
    assert!(err.message.contains("changed since"), "{}", err.message);
    assert_eq!(delivered(&w).await, None, "nothing delivered");
    converge(&w, &w.ctx, "after the conflict").await;
    assert_delivered_and_clean(&w, "after the conflict").await;
}

/// A journal Secret of another array user (the spec's tokenUser changed while a
/// token of the old one was undelivered) stops the reconcile before any array
/// write, naming that user; nothing of it is overwritten.
#[tokio::test]
async fn an_entry_of_another_user_is_not_overwritten() {
    let w = World::start(cloud_drive_object()).await;
    w.journal.put(
        JOURNAL,
        secret(
            NS,
            JOURNAL_NAME,
            &[("app.kubernetes.io/managed-by", "pxfa-controller")],
            &[
                ("user", "pxfa-old-user"),
                ("state", "creating"),
                ("intentAtMs", "1"),
            ],
        ),
    );
    w.array.reset_stats();
    let err = w.reconcile().await.expect_err("another user's entry");
    assert_eq!(err.reason, px_controller::Reason::Conflict);
    assert!(err.message.contains("pxfa-old-user"), "{}", err.message);
    assert_eq!(w.array.stats().writes, 0);
    assert_eq!(
        w.journal.get(JOURNAL).map(|s| data_field(&s, "user")),
        Some(Some("pxfa-old-user".to_string()))
    );
}

/// A Secret of the journal's name that is not the controller's (no
/// managed-by label) is neither read nor overwritten.
#[tokio::test]
async fn a_secret_that_is_not_the_controllers_is_left_alone() {
    let w = World::start(cloud_drive_object()).await;
    w.journal.put(
        JOURNAL,
        secret(NS, JOURNAL_NAME, &[], &[("unrelated", "data")]),
    );
    w.array.reset_stats();
    let err = w.reconcile().await.expect_err("not ours");
    assert_eq!(err.reason, px_controller::Reason::Conflict);
    assert!(
        err.message.contains("not the controller's"),
        "{}",
        err.message
    );
    assert_eq!(w.array.stats().writes, 0);
    assert_eq!(
        w.journal.get(JOURNAL).map(|s| data_field(&s, "unrelated")),
        Some(Some("data".to_string()))
    );
}

/// Under `apply: manual`, delivering a journaled token (no array write) needs no
/// second approval and is not drift.
#[tokio::test]
async fn a_pending_delivery_needs_no_second_approval() {
    let mut obj = cloud_drive_object();
    obj["spec"]["apply"] = serde_json::json!("manual");
    obj["metadata"]["annotations"][px_topology::crd::APPROVE_ANNOTATION] =
        serde_json::json!("true");
    let w = World::start(obj).await;
    Mock::given(method("PATCH"))
        .and(path("/api/v1/namespaces/portworx/secrets/px-pure-secret"))
        .respond_with(ResponseTemplate::new(500))
        .with_priority(1)
        .up_to_n_times(1)
        .mount(&w.fake.server)
        .await;
    assert!(
        w.reconcile().await.is_err(),
        "the tenant refused the secret"
    );
    assert!(
        w.store.get(NAME)["metadata"]["annotations"][px_topology::crd::APPROVE_ANNOTATION]
            .is_null(),
        "the approval was used"
    );
    w.array.reset_stats();
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Converged);
    assert_eq!(w.array.stats().writes, 0);
    assert_delivered_and_clean(&w, "manual").await;
    let s = w.store.status(NAME);
    assert!(!s.is_true(px_controller::ConditionType::Drifted), "{s:?}");
}

/// A replica that leads again forgets what it remembered of the journal: replica-a
/// recorded an intent in memory and lost the Lease before creating the token;
/// replica-b created and delivered a token since. Leading again, replica-a must not
/// take replica-b's token for its own interrupted one and replace it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_returning_leader_does_not_replace_the_token_another_delivered() {
    use px_controller::ConditionType as C;
    use px_topology::token_journal::{MemTokenJournal, TokenJournal, now_ms};

    let w = World::start(cloud_drive_object()).await;
    let a = w.replica("replica-a", Duration::from_secs(2)).await;
    let stale = Arc::new(MemTokenJournal::new());
    stale.record_intent(USER, now_ms()).unwrap();
    a.journals
        .lock()
        .unwrap()
        .insert(format!("TenantStorage {NS}/{NAME}"), stale);
    let b = w.replica("replica-b", Duration::from_secs(2)).await;
    converge(&w, &b, "replica-b").await;
    let held = assert_delivered_and_clean(&w, "replica-b").await;
    let created = tokens(&w).await;

    w.array.reset_stats();
    let (stop, run) = crate::election::start(&a, "replica-a");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while a.metrics.reconciles(None) == 0 || !w.store.status(NAME).is_true(C::Ready) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "replica-a never reconciled"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(tokens(&w).await, created, "replica-b's token is kept");
    assert_eq!(w.array.stats().writes, 0);
    assert_eq!(delivered(&w).await.as_deref(), Some(held.as_str()));
}

/// A new cloud-drive tenant whose HostedCluster does not exist yet (nobody but the
/// controller creates it): nothing could keep a token made now, so the first
/// reconcile holds the token's creation back (`ArrayReady=False, TokenHeld`, the
/// reason in the message) and applies everything else, the array objects and the
/// HostedCluster among them. Once HyperShift gave it an admin kubeconfig (the fake
/// does at once), the next reconcile creates the token and delivers it: one token,
/// one value delivered, no journal left.
#[tokio::test]
async fn a_new_tenant_without_its_hosted_cluster_gets_one_token_once_the_cluster_exists() {
    use flasharray_mock::Op;
    use px_controller::ConditionType as C;
    let w = World::start(cloud_drive_object()).await;
    w.hosted.remove();

    let first = w
        .reconcile()
        .await
        .expect("the first reconcile writes what it can");
    assert_eq!(first, Outcome::InProgress);
    let s = w.store.status(NAME);
    let array = s.get(C::ArrayReady).expect("ArrayReady");
    assert_eq!(array.reason, "TokenHeld", "{s:?}");
    assert!(
        array
            .message
            .contains("HostedCluster clusters/tenant-full does not exist"),
        "{s:?}"
    );
    assert!(!s.is_true(C::Degraded), "waiting is not a failure: {s:?}");
    assert_eq!(
        w.array.stats().op(Op::CreateApiToken),
        0,
        "no token without a place"
    );
    assert!(tokens(&w).await.is_empty());
    assert!(w.journal.is_empty(), "no intent journaled for a held token");
    assert!(delivered(&w).await.is_none());
    assert!(
        w.array.stats().writes > 0,
        "the array objects other than the token were written"
    );
    assert_eq!(
        w.fake
            .requests("PATCH", "/hostedclusters/tenant-full")
            .await
            .len(),
        1,
        "the HostedCluster was applied"
    );

    converge(&w, &w.ctx, "once the HostedCluster exists").await;
    assert_eq!(
        w.array.stats().op(Op::CreateApiToken),
        1,
        "one token created"
    );
    let token = assert_delivered_and_clean(&w, "once the HostedCluster exists").await;
    let applied = w
        .fake
        .requests("PATCH", "/namespaces/portworx/secrets/px-pure-secret")
        .await;
    let values: Vec<Option<String>> = applied.iter().map(token_in).collect();
    assert!(
        !values.is_empty() && values.iter().all(|v| v.as_deref() == Some(token.as_str())),
        "every delivery carries the one token"
    );
}
