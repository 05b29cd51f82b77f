//! What every reconcile shares ([`Context`]: the clients, the array pool, probes,
//! metrics, the token journals) and what one ends with ([`Outcome`]).

use std::sync::Arc;
use std::time::Duration;

use px_cluster::WaitOptions;
use px_topology::token_journal::MemTokenJournal;

use crate::arrays::ArrayPool;
use crate::events::Events;
use crate::health::Health;
use crate::metrics::Metrics;
use crate::references::NamespaceReferences;

/// What a reconcile needs besides the object.
pub struct Context {
    /// The management cluster.
    pub client: kube::Client,
    /// Shared array clients.
    pub arrays: ArrayPool,
    /// How long readiness waits on the clusters may take per reconcile.
    pub wait: WaitOptions,
    /// How often a converged object is checked for drift.
    pub drift_interval: Duration,
    /// Events on the objects.
    pub events: Events,
    /// Counters for `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Probe state; reconciles run only while it says this replica leads.
    pub health: Arc<Health>,
    /// The token journals of this process, by `namespace/name`: what the converge
    /// engine journals into (synchronously, see `px_topology::token_journal`). The durable
    /// copy is the object's journal Secret (`crate::token_journal`), read back into this
    /// map at every reconcile, so a killed process or a new leader loses nothing.
    pub journals: std::sync::Mutex<std::collections::HashMap<String, Arc<MemTokenJournal>>>,
    /// The namespaces a TenantStorage may refer to besides its own
    /// (`crate::references`).
    pub references: NamespaceReferences,
}

/// What the reconcile ended with; the controller turns it into a requeue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Converged (or nothing to do): check for drift after the drift interval.
    Converged,
    /// Waiting for something the controller does not retry on its own: an invalid
    /// spec, a manual approval, an array conflict. A change of the object wakes it.
    Waiting(&'static str),
    /// The clusters are not finished yet (pending readiness): check again soon.
    InProgress,
    /// A write found the array changed since it was read (another tenant made a
    /// shared object first): read it again at once.
    ReadAgain,
    /// The object is gone (its finalizer removed).
    Deleted,
}

/// The context around an already-built pool, reporting Events as `instance`
/// (the pod name). Its [`Health`] uses `lease_duration` for a standby's staleness.
/// `references`: the namespaces a TenantStorage may refer to besides its own.
pub fn context(
    client: kube::Client,
    arrays: ArrayPool,
    wait: WaitOptions,
    drift_interval: Duration,
    instance: &str,
    lease_duration: Duration,
    references: NamespaceReferences,
) -> Arc<Context> {
    let metrics = arrays.metrics();
    Arc::new(Context {
        events: Events::new(client.clone(), instance, metrics.clone()),
        client,
        arrays,
        wait,
        drift_interval,
        metrics,
        health: Arc::new(Health::new(lease_duration)),
        journals: std::sync::Mutex::default(),
        references,
    })
}
