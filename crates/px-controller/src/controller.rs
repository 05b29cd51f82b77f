//! The kube-runtime wiring: watch every TenantStorage, reconcile with bounded
//! concurrency (one object is never reconciled twice at once), requeue converged
//! objects for the drift check and failed ones with exponential backoff.
//!
//! With a [`LeaseConfig`] the controller runs only while this replica holds the
//! Lease ([`crate::leader`]): it starts on acquiring, is aborted the moment the
//! Lease is lost or cannot be renewed within the deadline (an aborted reconcile is
//! like a crash: the next leader re-plans from what the array holds), and releases
//! the Lease on shutdown so a standby takes over at once.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use kube::api::DynamicObject;
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::watcher;
use kube::{Api, ResourceExt};
use tokio::sync::watch;

use crate::error::Error;
use crate::health::Role;
use crate::leader::{Attempt, Elector, LeaseConfig};
use crate::reconcile::{self, Context, Outcome, tenant_storage_resource};

/// Exponential backoff of failed reconciles, per object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// First retry delay.
    pub base: Duration,
    /// Longest delay.
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            base: Duration::from_secs(5),
            max: Duration::from_secs(300),
        }
    }
}

impl Backoff {
    /// The delay after `failures` consecutive failures (1 = the first).
    pub fn delay(&self, failures: u32) -> Duration {
        let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(20));
        self.base.saturating_mul(factor).min(self.max)
    }
}

/// Switches of the controller.
#[derive(Debug, Clone)]
pub struct Options {
    /// Most objects reconciled at once, across tenants.
    pub concurrency: u16,
    /// Retry delays after failures.
    pub backoff: Backoff,
    /// How soon an object whose clusters are still converging is looked at again.
    pub in_progress_interval: Duration,
    /// Restrict to one namespace (`None`: all namespaces).
    pub namespace: Option<String>,
    /// Leader election (`None`: this is the only replica and always reconciles).
    pub leader: Option<LeaseConfig>,
    /// Whether the leader takes the orphan counts every drift interval
    /// (`crate::orphans`; read-only; default on). Off for a caller that measures
    /// the drift checks' array calls alone.
    pub orphan_counts: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            concurrency: 8,
            backoff: Backoff::default(),
            in_progress_interval: Duration::from_secs(15),
            namespace: None,
            leader: None,
            orphan_counts: true,
        }
    }
}

/// The per-run state shared by every reconcile.
struct State {
    ctx: Arc<Context>,
    opts: Options,
    failures: Mutex<HashMap<String, u32>>,
    /// The objects' last convergence, by `namespace/name`.
    converged: Mutex<HashMap<String, Converged>>,
}

/// What an object looked like when it last converged. An event for the same
/// generation, annotations and finalizers before the drift interval is up is not a
/// change: it is the controller's own status write coming back through the watch
/// (or a relist). Reconciling it again would only repeat the reads, and with many
/// tenants those repeats starve the objects still waiting for their first pass.
#[derive(Debug, Clone, PartialEq)]
struct Converged {
    generation: Option<i64>,
    annotations: std::collections::BTreeMap<String, String>,
    finalizers: Vec<String>,
    at: Instant,
}

impl Converged {
    fn of(obj: &DynamicObject, at: Instant) -> Self {
        Converged {
            generation: obj.metadata.generation,
            annotations: obj.metadata.annotations.clone().unwrap_or_default(),
            finalizers: obj.metadata.finalizers.clone().unwrap_or_default(),
            at,
        }
    }

    /// How long `obj` may wait for its drift check, when nothing changed since this
    /// convergence and the check is not due (a second of slack so that the requeue
    /// that asks for the check is never mistaken for an echo).
    fn unchanged_wait(
        &self,
        obj: &DynamicObject,
        now: Instant,
        drift: Duration,
    ) -> Option<Duration> {
        if obj.metadata.deletion_timestamp.is_some() {
            return None;
        }
        let same = Converged::of(obj, self.at);
        if same != *self {
            return None;
        }
        let due = self.at + drift;
        (due > now + Duration::from_secs(1)).then(|| due - now)
    }
}

fn key(obj: &DynamicObject) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

/// How soon a reconcile whose reading was stale runs again: at once, but not in
/// the same instant as the writer it raced.
const READ_AGAIN: Duration = Duration::from_secs(1);

/// The requeue after a successful reconcile.
pub(crate) fn action_for(outcome: &Outcome, ctx: &Context, opts: &Options) -> Action {
    match outcome {
        Outcome::Converged
        | Outcome::Waiting("ApprovalPending" | "Conflict" | crate::finalizer::DRIVES_HELD) => {
            Action::requeue(ctx.drift_interval)
        }
        Outcome::InProgress => Action::requeue(opts.in_progress_interval),
        Outcome::ReadAgain => Action::requeue(READ_AGAIN),
        Outcome::Waiting(_) | Outcome::Deleted => Action::await_change(),
    }
}

fn outcome_label(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Converged => "converged",
        Outcome::Waiting(_) => "waiting",
        Outcome::InProgress => "in_progress",
        Outcome::ReadAgain => "read_again",
        Outcome::Deleted => "deleted",
    }
}

async fn reconcile_one(obj: Arc<DynamicObject>, state: Arc<State>) -> Result<Action, Error> {
    // Belt and braces: the controller is aborted when the Lease is lost, and a
    // reconcile that starts in between does nothing.
    if !state.ctx.health.is_leading() {
        return Ok(Action::await_change());
    }
    let started = Instant::now();
    let seen = state
        .converged
        .lock()
        .ok()
        .and_then(|c| c.get(&key(&obj)).cloned());
    if let Some(wait) = seen.and_then(|c| c.unchanged_wait(&obj, started, state.ctx.drift_interval))
    {
        tracing::debug!(object = %key(&obj), "unchanged since it converged; drift check later");
        return Ok(Action::requeue(wait));
    }
    let result = reconcile::reconcile(&obj, &state.ctx).await;
    let took = started.elapsed();
    let elapsed_ms = took.as_millis() as u64;
    match &result {
        Ok(outcome) => {
            if let Ok(mut f) = state.failures.lock() {
                f.remove(&key(&obj));
            }
            if let Ok(mut c) = state.converged.lock() {
                if matches!(outcome, Outcome::Converged) {
                    c.insert(key(&obj), Converged::of(&obj, Instant::now()));
                } else {
                    c.remove(&key(&obj));
                }
            }
            state.ctx.metrics.reconciled(outcome_label(outcome), took);
            tracing::info!(object = %key(&obj), ?outcome, elapsed_ms, "reconciled");
        }
        Err(e) => {
            state.ctx.metrics.reconciled("error", took);
            state.ctx.metrics.error(e.reason.as_str());
            tracing::warn!(object = %key(&obj), reason = e.reason.as_str(), error = %e.message, elapsed_ms, "reconcile failed")
        }
    }
    state.ctx.health.tick();
    result.map(|o| action_for(&o, &state.ctx, &state.opts))
}

fn error_policy(obj: Arc<DynamicObject>, _e: &Error, state: Arc<State>) -> Action {
    let n = state
        .failures
        .lock()
        .map(|mut f| {
            let n = f.entry(key(&obj)).or_insert(0);
            *n = n.saturating_add(1);
            *n
        })
        .unwrap_or(1);
    Action::requeue(state.opts.backoff.delay(n))
}

/// Runs the controller until `shutdown` completes: at once without election, else
/// whenever this replica leads.
pub async fn run(
    ctx: Arc<Context>,
    opts: Options,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let Some(lease) = opts.leader.clone() else {
        ctx.health.set_role(Role::Leader);
        ctx.metrics.set_leader(true);
        // No election loop to show progress: a ticker on the same runtime does.
        let health = ctx.health.clone();
        let _ticker = AbortOnDrop(tokio::spawn(async move {
            loop {
                health.tick();
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
        }));
        watch_and_reconcile(ctx, opts, shutdown).await;
        return;
    };
    let (stop_tx, stop) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let mut elector = Elector::new(ctx.client.clone(), lease);
    elect(&ctx, &opts, &mut elector, stop).await;
}

/// Whether the shutdown signal fired (or its sender is gone).
fn stopping(stop: &watch::Receiver<bool>) -> bool {
    *stop.borrow() || stop.has_changed().is_err()
}

/// Stand by until the Lease is acquired, lead until it is lost, and again, until
/// shutdown.
async fn elect(
    ctx: &Arc<Context>,
    opts: &Options,
    elector: &mut Elector,
    mut stop: watch::Receiver<bool>,
) {
    let retry = elector.config().retry_period;
    loop {
        if stopping(&stop) {
            return;
        }
        let attempt = tokio::time::timeout(
            elector.config().renew_deadline,
            elector.try_acquire_or_renew(),
        )
        .await
        .map_err(|_| "timed out".to_string())
        .and_then(|r| r.map_err(|e| e.to_string()));
        match attempt {
            Ok(Attempt::Leading) => {
                ctx.health.lease_read();
                if lead(ctx, opts, elector, &mut stop).await {
                    return;
                }
            }
            Ok(Attempt::Standby(holder)) => {
                ctx.health.lease_read();
                if ctx.health.role() != Role::Standby {
                    tracing::info!(leader = %holder, "standing by: another replica leads");
                    ctx.health.set_role(Role::Standby);
                }
            }
            Err(e) => {
                ctx.health.tick();
                tracing::warn!(error = e, "cannot read the leader Lease");
            }
        }
        tokio::select! {
            _ = stop.changed() => {}
            _ = tokio::time::sleep(retry) => {}
        }
    }
}

/// Leads: runs the controller and renews the Lease. Returns `true` on shutdown
/// (Lease released), `false` when leadership was lost (controller aborted).
async fn lead(
    ctx: &Arc<Context>,
    opts: &Options,
    elector: &mut Elector,
    stop: &mut watch::Receiver<bool>,
) -> bool {
    let cfg = elector.config().clone();
    tracing::info!(identity = %cfg.identity, lease = %cfg.name, "leading: reconciling starts");
    ctx.health.set_role(Role::Leader);
    ctx.metrics.set_leader(true);
    // Another replica may have led since this one last did: what this process still
    // remembers of token journals is older than the journal Secrets, and an old
    // intent could pass another leader's delivered token off as an interrupted one.
    ctx.journals
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clear();
    let (graceful_tx, graceful) = tokio::sync::oneshot::channel::<()>();
    let mut controller = AbortOnDrop(tokio::spawn(watch_and_reconcile(
        ctx.clone(),
        opts.clone(),
        async {
            let _ = graceful.await;
        },
    )));
    let mut renewed = Instant::now();
    let lost = |ctx: &Context, why: &str| {
        ctx.metrics.set_leader(false);
        ctx.health.set_role(Role::Standby);
        tracing::warn!(why, "leadership lost: reconciling stopped");
    };
    loop {
        tokio::select! {
            _ = stop.changed() => {
                let _ = graceful_tx.send(());
                // Finish in-flight reconciles, but never past the point where the
                // Lease could expire under them.
                if tokio::time::timeout(cfg.renew_deadline, &mut controller.0).await.is_err() {
                    controller.abort();
                }
                ctx.metrics.set_leader(false);
                ctx.health.set_role(Role::Standby);
                if let Err(e) = elector.release().await {
                    tracing::warn!(error = %e, "cannot release the leader Lease; it expires on its own");
                }
                tracing::info!("shut down: leader Lease released");
                return true;
            }
            _ = &mut controller.0 => {
                // The controller ended on its own (its watch stream failed for good):
                // give the Lease to a healthier replica.
                lost(ctx, "the controller stopped");
                let _ = elector.release().await;
                return false;
            }
            _ = tokio::time::sleep(cfg.retry_period) => {
                // A renewal may not outlast the deadline (the client retries 5xx
                // and slow connections on its own).
                let budget = cfg.renew_deadline.saturating_sub(renewed.elapsed());
                let attempt = tokio::time::timeout(budget, elector.try_acquire_or_renew())
                    .await
                    .map_err(|_| "timed out".to_string())
                    .and_then(|r| r.map_err(|e| e.to_string()));
                match attempt {
                    Ok(Attempt::Leading) => {
                        renewed = Instant::now();
                        ctx.health.lease_read();
                    }
                    Ok(Attempt::Standby(holder)) => {
                        controller.abort();
                        lost(ctx, &format!("the Lease is held by {holder}"));
                        return false;
                    }
                    Err(e) => {
                        tracing::warn!(error = e, "cannot renew the leader Lease");
                        if renewed.elapsed() >= cfg.renew_deadline {
                            controller.abort();
                            lost(ctx, "the Lease was not renewed within the deadline");
                            return false;
                        }
                    }
                }
            }
        }
    }
}

/// The controller task, aborted when leading ends in any way (also when the
/// election future itself is dropped): nothing reconciles without the Lease.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl AbortOnDrop {
    fn abort(&self) {
        self.0.abort();
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The kube-runtime controller itself, until `shutdown`.
async fn watch_and_reconcile(
    ctx: Arc<Context>,
    opts: Options,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let ar = tenant_storage_resource();
    let api: Api<DynamicObject> = match &opts.namespace {
        Some(ns) => Api::namespaced_with(ctx.client.clone(), ns, &ar),
        None => Api::all_with(ctx.client.clone(), &ar),
    };
    let config = ControllerConfig::default().concurrency(opts.concurrency.max(1));
    let health = ctx.health.clone();
    // Orphan counts only while this replica reconciles (aborted with it).
    let _orphans = opts
        .orphan_counts
        .then(|| AbortOnDrop(tokio::spawn(crate::orphans::run(ctx.clone()))));
    let state = Arc::new(State {
        ctx,
        opts,
        failures: Mutex::new(HashMap::new()),
        converged: Mutex::new(HashMap::new()),
    });
    let controller = Controller::new_with(api, watcher::Config::default(), ar);
    let store = controller.store();
    // kube-runtime's store readiness wakes only its latest waiter (the controller's
    // own runner), so look again every 100 ms instead of waiting once.
    let synced = tokio::spawn(async move {
        loop {
            match tokio::time::timeout(Duration::from_millis(100), store.wait_until_ready()).await {
                Ok(Ok(())) => {
                    health.set_synced();
                    return;
                }
                Ok(Err(_)) => return,
                Err(_) => {}
            }
        }
    });
    controller
        .with_config(config)
        .graceful_shutdown_on(shutdown)
        .run(reconcile_one, error_policy, state)
        .for_each(|r| async move {
            if let Err(e) = r {
                tracing::debug!(error = %e, "controller event");
            }
        })
        .await;
    synced.abort();
}

/// A client for the management cluster: the kubeconfig at `path` (and `context`),
/// else the in-cluster service account, else `$KUBECONFIG` (kube's inference).
pub async fn connect_management(
    path: Option<&std::path::Path>,
    context: Option<&str>,
) -> Result<kube::Client, px_cluster::Error> {
    match path {
        Some(p) => px_cluster::connect(p, context, px_cluster::KubeBounds::default()).await,
        None => {
            let config =
                kube::Config::infer()
                    .await
                    .map_err(|e| px_cluster::Error::Kubeconfig {
                        message:
                            "no kubeconfig given and no in-cluster or $KUBECONFIG configuration"
                                .to_string(),
                        source: Box::new(e),
                    })?;
            px_cluster::client_from_config(config, px_cluster::KubeBounds::default())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(generation: i64, approve: Option<&str>) -> DynamicObject {
        let mut o = DynamicObject::new("t1", &tenant_storage_resource()).within("clusters");
        o.metadata.generation = Some(generation);
        o.metadata.finalizers = Some(vec!["pxfa.io/array-objects".into()]);
        if let Some(a) = approve {
            o.metadata.annotations = Some([("pxfa.io/approve".to_string(), a.to_string())].into());
        }
        o
    }

    #[test]
    fn an_unchanged_object_waits_for_its_drift_check_and_a_change_does_not() {
        let drift = Duration::from_secs(300);
        let t0 = Instant::now();
        let seen = Converged::of(&object(3, None), t0);
        let later = t0 + Duration::from_secs(10);
        // The echo of our own status write: same generation, annotations, finalizers.
        assert_eq!(
            seen.unchanged_wait(&object(3, None), later, drift),
            Some(Duration::from_secs(290))
        );
        // A spec edit, an approval annotation, a lost finalizer, a delete: reconcile.
        assert_eq!(seen.unchanged_wait(&object(4, None), later, drift), None);
        assert_eq!(
            seen.unchanged_wait(&object(3, Some("1")), later, drift),
            None
        );
        let mut no_finalizer = object(3, None);
        no_finalizer.metadata.finalizers = None;
        assert_eq!(seen.unchanged_wait(&no_finalizer, later, drift), None);
        let mut deleting = object(3, None);
        deleting.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::now(),
            ));
        assert_eq!(seen.unchanged_wait(&deleting, later, drift), None);
        // The drift check itself is due: reconcile.
        assert_eq!(
            seen.unchanged_wait(
                &object(3, None),
                t0 + drift - Duration::from_millis(500),
                drift
            ),
            None
        );
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let b = Backoff {
            base: Duration::from_secs(2),
            max: Duration::from_secs(60),
        };
        assert_eq!(b.delay(1), Duration::from_secs(2));
        assert_eq!(b.delay(2), Duration::from_secs(4));
        assert_eq!(b.delay(4), Duration::from_secs(16));
        assert_eq!(b.delay(10), Duration::from_secs(60));
        assert_eq!(b.delay(u32::MAX), Duration::from_secs(60));
    }
}
