//! The tenant's Portworx operator: apply waits until its Subscription's CSV is
//! Succeeded before the StorageCluster, and stops naming the Subscription when it is
//! not in time.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use px_cluster::{ApplyOptions, apply_manifests};
use px_topology::{Cluster, Manifest};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::support::*;

const NS: &str = "portworx";
const CSV: &str = "portworx-operator.v25.2.0";

/// The rendered tenant's operator step (OperatorGroup, Subscription) and the
/// StorageCluster after it.
fn operator_and_cluster() -> Vec<Manifest> {
    let spec = cloud_drive_spec();
    let picked: Vec<Manifest> = rendered(&spec)
        .into_iter()
        .filter(|m| {
            m.cluster == Cluster::Tenant
                && ["OperatorGroup", "Subscription", "StorageCluster"].contains(&m.kind.as_str())
        })
        .collect();
    assert_eq!(picked.len(), 3, "the tenant bundle renders all three");
    assert!(picked.iter().all(|m| m.namespace.as_deref() == Some(NS)));
    picked
}

/// A tenant cluster whose Subscription reports its CSV from the `sub_after`-th read
/// and whose CSV is Succeeded from the `csv_after`-th read (never when `None`).
async fn tenant_cluster(fake: &Fake, manifests: &[Manifest], csv_after: Option<usize>) {
    mount_discovery(&fake.server, manifests).await;
    Mock::given(method("PATCH"))
        .and(header("content-type", "application/apply-patch+yaml"))
        .respond_with(|r: &Request| {
            ResponseTemplate::new(200).set_body_json(r.body_json::<Value>().unwrap())
        })
        .mount(&fake.server)
        .await;
    let sub_reads = Arc::new(AtomicUsize::new(0));
    let s = sub_reads.clone();
    Mock::given(method("GET"))
        .and(path(format!(
            "/apis/operators.coreos.com/v1alpha1/namespaces/{NS}/subscriptions/portworx-certified"
        )))
        .respond_with(move |_: &Request| {
            let status = if s.fetch_add(1, Ordering::SeqCst) == 0 {
                json!({"state": "UpgradePending"})
            } else {
                json!({"state": "AtLatestKnown", "installedCSV": CSV})
            };
            ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
                "metadata": {"name": "portworx-certified", "namespace": NS}, "status": status}))
        })
        .mount(&fake.server)
        .await;
    let csv_reads = Arc::new(AtomicUsize::new(0));
    let c = csv_reads.clone();
    Mock::given(method("GET"))
        .and(path(format!(
            "/apis/operators.coreos.com/v1alpha1/namespaces/{NS}/clusterserviceversions/{CSV}"
        )))
        .respond_with(move |_: &Request| {
            let n = c.fetch_add(1, Ordering::SeqCst);
            let phase = if csv_after.is_some_and(|after| n >= after) {
                "Succeeded"
            } else {
                "Installing"
            };
            ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
                "metadata": {"name": CSV, "namespace": NS}, "status": {"phase": phase}}))
        })
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!(
            "/apis/core.libopenstorage.org/v1/namespaces/{NS}/storageclusters/px-tenant-cd"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "core.libopenstorage.org/v1", "kind": "StorageCluster",
            "metadata": {"name": "px-tenant-cd", "namespace": NS}, "status": {"phase": "Online"}})))
        .mount(&fake.server)
        .await;
}

fn position(all: &[Request], verb: &str, part: &str, last: bool) -> Option<usize> {
    let hit = |r: &Request| r.method.as_str() == verb && r.url.path().contains(part);
    if last {
        all.iter().rposition(hit)
    } else {
        all.iter().position(hit)
    }
}

#[tokio::test]
async fn storage_cluster_is_applied_only_after_the_operator_csv_succeeded() {
    let fake = Fake::start().await;
    let manifests = operator_and_cluster();
    tenant_cluster(&fake, &manifests, Some(1)).await;
    let client = fake.client().await;
    let opts = ApplyOptions {
        wait: fast_wait(2_000),
        ..Default::default()
    };
    let spec = cloud_drive_spec();
    let report = apply_manifests(&spec, &manifests, &client, Some(&client), &opts)
        .await
        .expect("apply");
    assert!(report.complete(), "{report:#?}");
    let all = fake.server.received_requests().await.unwrap();
    let csv_ok = position(&all, "GET", "/clusterserviceversions/", true).expect("CSV read");
    let sc_apply = position(&all, "PATCH", "/storageclusters/", false).expect("SC applied");
    assert!(csv_ok < sc_apply, "the StorageCluster waited for the CSV");
    // Read twice at least: no CSV on the first Subscription read, then Installing.
    assert!(
        all.iter()
            .filter(|r| r.url.path().contains("/clusterserviceversions/"))
            .count()
            >= 2
    );
}

#[tokio::test]
async fn an_operator_not_installed_in_time_stops_before_the_storage_cluster() {
    let fake = Fake::start().await;
    let manifests = operator_and_cluster();
    tenant_cluster(&fake, &manifests, None).await;
    let client = fake.client().await;
    let opts = ApplyOptions {
        wait: fast_wait(300),
        ..Default::default()
    };
    let spec = cloud_drive_spec();
    let report = apply_manifests(&spec, &manifests, &client, Some(&client), &opts)
        .await
        .expect("apply");
    let step = manifests
        .iter()
        .find(|m| m.kind == "Subscription")
        .map(|m| m.order)
        .unwrap();
    assert_eq!(report.stopped_at, Some(format!("tenant step {step}")));
    assert_eq!(report.pending.len(), 1, "{report:#?}");
    let p = &report.pending[0];
    assert_eq!(p.object, format!("Subscription {NS}/portworx-certified"));
    assert_eq!(p.state, format!("CSV {CSV}: phase Installing"));
    assert!(fake.requests("PATCH", "/storageclusters/").await.is_empty());
}
