//! The kube-runtime wiring: watch every TenantStorage, reconcile with bounded
//! concurrency (one object is never reconciled twice at once), requeue converged
//! objects for the drift check and failed ones with exponential backoff.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use kube::api::DynamicObject;
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::watcher;
use kube::{Api, ResourceExt};

use crate::error::Error;
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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            concurrency: 8,
            backoff: Backoff::default(),
            in_progress_interval: Duration::from_secs(15),
            namespace: None,
        }
    }
}

/// The per-run state shared by every reconcile.
struct State {
    ctx: Arc<Context>,
    opts: Options,
    failures: Mutex<HashMap<String, u32>>,
}

fn key(obj: &DynamicObject) -> String {
    format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any())
}

/// The requeue after a successful reconcile.
pub fn action_for(outcome: &Outcome, ctx: &Context, opts: &Options) -> Action {
    match outcome {
        Outcome::Converged | Outcome::Waiting("ApprovalPending" | "Conflict") => {
            Action::requeue(ctx.drift_interval)
        }
        Outcome::InProgress => Action::requeue(opts.in_progress_interval),
        Outcome::Waiting(_) | Outcome::Deleted => Action::await_change(),
    }
}

async fn reconcile_one(obj: Arc<DynamicObject>, state: Arc<State>) -> Result<Action, Error> {
    let started = Instant::now();
    let result = reconcile::reconcile(&obj, &state.ctx).await;
    let elapsed_ms = started.elapsed().as_millis() as u64;
    match &result {
        Ok(outcome) => {
            if let Ok(mut f) = state.failures.lock() {
                f.remove(&key(&obj));
            }
            tracing::info!(object = %key(&obj), ?outcome, elapsed_ms, "reconciled");
        }
        Err(e) => {
            tracing::warn!(object = %key(&obj), reason = e.reason.as_str(), error = %e.message, elapsed_ms, "reconcile failed")
        }
    }
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

/// Runs the controller until `shutdown` completes.
pub async fn run(
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
    let state = Arc::new(State {
        ctx,
        opts,
        failures: Mutex::new(HashMap::new()),
    });
    Controller::new_with(api, watcher::Config::default(), ar)
        .with_config(config)
        .graceful_shutdown_on(shutdown)
        .run(reconcile_one, error_policy, state)
        .for_each(|r| async move {
            if let Err(e) = r {
                tracing::debug!(error = %e, "controller event");
            }
        })
        .await;
}

/// A client for the management cluster: the kubeconfig at `path` (and `context`),
/// else the in-cluster service account, else `$KUBECONFIG` (kube's inference).
pub async fn connect_management(
    path: Option<&std::path::Path>,
    context: Option<&str>,
) -> Result<kube::Client, px_cluster::Error> {
    match path {
        Some(p) => px_cluster::connect(p, context).await,
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
            px_cluster::client_from_config(config)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
