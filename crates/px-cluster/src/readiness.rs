//! Waiting for the objects the next step depends on: the storage network (NNCP
//! `Available`), the disk claims (PVC `Bound`), the tenant's Portworx operator (its
//! Subscription's ClusterServiceVersion `Succeeded`) and the tenant's Portworx
//! (StorageCluster phase `Online`). Polling with a deadline rather than watches keeps
//! the fake API server in tests simple and costs one GET per object per interval.

use std::time::Duration;

use kube::api::DynamicObject;
use px_topology::Cluster;
use serde::Serialize;
use serde_json::Value;
use tokio::time::Instant;

use crate::discovery::{Resources, object_path, status_code};
use crate::error::chain_text;
use crate::kinds::{Kind, NNCP, PVC, STORAGE_CLUSTER, STORAGE_NODE};

/// OLM's Subscription, as the tenant bundle renders it for the Portworx operator.
const SUBSCRIPTION: &str = "Subscription";
/// OLM's ClusterServiceVersion: what a Subscription installed. `status.phase`
/// `Succeeded` is OLM's "the operator is installed and running" (OpenShift
/// "Installing from OperatorHub using the CLI": `oc get csv` shows Succeeded).
const CSV: Kind = Kind {
    group: "operators.coreos.com",
    version: "v1alpha1",
    kind: "ClusterServiceVersion",
    plural: "clusterserviceversions",
};

/// How long and how often to wait.
#[derive(Debug, Clone, Copy)]
pub struct WaitOptions {
    /// Give up after this long (per step).
    pub timeout: Duration,
    /// Pause between two reads of a pending object.
    pub interval: Duration,
}

impl Default for WaitOptions {
    fn default() -> Self {
        WaitOptions {
            timeout: Duration::from_secs(600),
            interval: Duration::from_secs(5),
        }
    }
}

/// An object that is not ready yet, and what it is doing instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pending {
    /// `Kind namespace/name`.
    pub object: String,
    /// Its current state, in the cluster's words (`phase Pending`, `Available=False:
    /// FailedToConfigure`, `not found`).
    pub state: String,
}

/// One object to wait for.
#[derive(Debug, Clone)]
pub(crate) struct WaitTarget {
    /// `apiVersion` of the object.
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) namespace: Option<String>,
    pub(crate) name: String,
}

/// Whether pxfa waits for objects of `kind` on `cluster`: only where a later step
/// builds on them. Management claims must be bound before their disks are hotplugged;
/// the tenant's validation claim may use a WaitForFirstConsumer class and nothing
/// follows it, so it is not waited for. The tenant's operator Subscription is waited
/// for because the StorageCluster of the next step needs the operator's CRD and
/// controller.
pub(crate) fn waits_for(cluster: Cluster, kind: &str) -> bool {
    if kind == NNCP.kind || kind == STORAGE_CLUSTER.kind {
        true
    } else if kind == SUBSCRIPTION {
        cluster == Cluster::Tenant
    } else if kind == PVC.kind {
        cluster == Cluster::Management
    } else {
        false
    }
}

/// `Ok` when ready; otherwise the state to report.
pub(crate) fn readiness(kind: &str, obj: &Value) -> Result<(), String> {
    if kind == NNCP.kind {
        condition(obj, "Available")
    } else if kind == PVC.kind {
        phase(obj, &["Bound"])
    } else if kind == STORAGE_CLUSTER.kind || kind == STORAGE_NODE.kind {
        phase(obj, &["Online"])
    } else {
        Ok(())
    }
}

fn phase(obj: &Value, ready: &[&str]) -> Result<(), String> {
    match obj.pointer("/status/phase").and_then(Value::as_str) {
        Some(p) if ready.contains(&p) => Ok(()),
        Some(p) => Err(format!("phase {p}")),
        None => Err("no status yet".to_string()),
    }
}

fn condition(obj: &Value, wanted: &str) -> Result<(), String> {
    let conds = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let Some(c) = conds
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(wanted))
    else {
        return Err(format!("no {wanted} condition yet"));
    };
    let status = c.get("status").and_then(Value::as_str).unwrap_or("Unknown");
    if status == "True" {
        return Ok(());
    }
    let reason = c.get("reason").and_then(Value::as_str).unwrap_or("");
    let message = c.get("message").and_then(Value::as_str).unwrap_or("");
    let mut s = format!("{wanted}={status}");
    if !reason.is_empty() {
        s.push_str(&format!(": {reason}"));
    }
    if !message.is_empty() {
        s.push_str(&format!(" ({message})"));
    }
    Err(s)
}

/// The state of one object now.
pub(crate) async fn check(resources: &Resources, t: &WaitTarget) -> Result<(), String> {
    let api = resources
        .api(&t.api_version, &t.kind, t.namespace.as_deref())
        .await
        .map_err(|e| chain_text(&e))?;
    match api.get(&t.name).await {
        Ok(obj) if t.kind == SUBSCRIPTION => {
            let csv = installed_csv(&to_value(&obj))?;
            csv_succeeded(resources, t.namespace.as_deref(), &csv).await
        }
        Ok(obj) => readiness(&t.kind, &to_value(&obj)),
        Err(e) if status_code(&e) == Some(404) => Err("not found".to_string()),
        Err(e) => Err(format!("cannot read it: {e}")),
    }
}

/// The CSV a Subscription installed (`status.installedCSV`), or what OLM is doing
/// instead (`status.state`, e.g. `UpgradePending` while the install plan runs).
fn installed_csv(sub: &Value) -> Result<String, String> {
    match sub.pointer("/status/installedCSV").and_then(Value::as_str) {
        Some(csv) if !csv.is_empty() => Ok(csv.to_string()),
        _ => Err(match sub.pointer("/status/state").and_then(Value::as_str) {
            Some(state) if !state.is_empty() => format!("no installed CSV yet (state {state})"),
            _ => "no installed CSV yet".to_string(),
        }),
    }
}

/// `Ok` when the CSV's phase is `Succeeded`. Read as a fixed kind, not by discovery:
/// OLM serves it wherever a Subscription exists.
async fn csv_succeeded(
    resources: &Resources,
    namespace: Option<&str>,
    csv: &str,
) -> Result<(), String> {
    let ar = CSV.resource();
    let api: kube::Api<DynamicObject> = match namespace {
        Some(ns) => kube::Api::namespaced_with(resources.client().clone(), ns, &ar),
        None => kube::Api::default_namespaced_with(resources.client().clone(), &ar),
    };
    match api.get(csv).await {
        Ok(obj) => phase(&to_value(&obj), &["Succeeded"]).map_err(|s| format!("CSV {csv}: {s}")),
        Err(e) if status_code(&e) == Some(404) => Err(format!("CSV {csv} not found yet")),
        Err(e) => Err(format!("cannot read CSV {csv}: {e}")),
    }
}

/// Polls every target until all are ready or the timeout passes; on timeout, the
/// ones still pending and why.
pub(crate) async fn wait_all(
    resources: &Resources,
    targets: &[WaitTarget],
    opts: WaitOptions,
) -> Result<(), Vec<Pending>> {
    let deadline = Instant::now() + opts.timeout;
    let mut remaining: Vec<WaitTarget> = targets.to_vec();
    loop {
        let mut pending = Vec::new();
        let mut still = Vec::new();
        for t in remaining {
            if let Err(state) = check(resources, &t).await {
                pending.push(Pending {
                    object: object_path(&t.kind, t.namespace.as_deref(), &t.name),
                    state,
                });
                still.push(t);
            }
        }
        if still.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(pending);
        }
        tracing::info!(
            "waiting for {} object(s): {}",
            pending.len(),
            pending
                .iter()
                .map(|p| format!("{} ({})", p.object, p.state))
                .collect::<Vec<_>>()
                .join(", ")
        );
        remaining = still;
        tokio::time::sleep(
            opts.interval
                .min(deadline.saturating_duration_since(Instant::now())),
        )
        .await;
    }
}

/// A dynamic object as JSON.
pub(crate) fn to_value(obj: &DynamicObject) -> Value {
    serde_json::to_value(obj).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subscription_waits_on_the_tenant_for_its_installed_csv() {
        assert!(waits_for(Cluster::Tenant, "Subscription"));
        assert!(!waits_for(Cluster::Management, "Subscription"));
        assert_eq!(
            installed_csv(&json!({"status": {"state": "UpgradePending"}})),
            Err("no installed CSV yet (state UpgradePending)".to_string())
        );
        assert_eq!(
            installed_csv(&json!({})),
            Err("no installed CSV yet".to_string())
        );
        assert_eq!(
            installed_csv(&json!({"status": {"installedCSV": "portworx-operator.v25.2.0"}})),
            Ok("portworx-operator.v25.2.0".to_string())
        );
    }

    #[test]
    fn nncp_needs_available_true() {
        let ok = json!({"status": {"conditions": [{"type": "Available", "status": "True"}]}});
        assert_eq!(readiness("NodeNetworkConfigurationPolicy", &ok), Ok(()));
        let bad = json!({"status": {"conditions": [
            {"type": "Available", "status": "False", "reason": "FailedToConfigure", "message": "ens1f1 missing"}]}});
        assert_eq!(
            readiness("NodeNetworkConfigurationPolicy", &bad),
            Err("Available=False: FailedToConfigure (ens1f1 missing)".to_string())
        );
    }

    #[test]
    fn pvc_and_storage_cluster_phases() {
        assert!(
            readiness(
                "PersistentVolumeClaim",
                &json!({"status": {"phase": "Bound"}})
            )
            .is_ok()
        );
        assert_eq!(
            readiness(
                "PersistentVolumeClaim",
                &json!({"status": {"phase": "Pending"}})
            ),
            Err("phase Pending".to_string())
        );
        assert_eq!(
            readiness("StorageCluster", &json!({})),
            Err("no status yet".to_string())
        );
        assert!(readiness("ConfigMap", &json!({})).is_ok());
    }
}
