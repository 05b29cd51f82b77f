//! Server-side apply: field manager, force, conflicts, readiness waits, what is skipped.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use px_cluster::{ApplyOptions, apply_manifests};
use px_topology::{Cluster, Form, Manifest};
use serde_json::json;
use wiremock::matchers::{body_json, header, method, path, query_param, query_param_is_missing};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::support::*;

#[tokio::test]
async fn apply_is_server_side_with_field_manager_and_waits_for_readiness() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    let net = nncp("tenant-storage-net");
    let claim = pvc("clusters-t", "t-w00-data0", "Bound");
    Mock::given(method("PATCH"))
        .and(path(
            "/apis/nmstate.io/v1/nodenetworkconfigurationpolicies/tenant-storage-net",
        ))
        .and(query_param("fieldManager", "pxfa"))
        .and(query_param_is_missing("force"))
        .and(header("content-type", "application/apply-patch+yaml"))
        .and(body_json(&net.body))
        .respond_with(ResponseTemplate::new(200).set_body_json(&net.body))
        .expect(1)
        .mount(&fake.server)
        .await;
    // NNCP becomes Available on the second poll.
    let polls = Arc::new(AtomicUsize::new(0));
    let p = polls.clone();
    Mock::given(method("GET"))
        .and(path(
            "/apis/nmstate.io/v1/nodenetworkconfigurationpolicies/tenant-storage-net",
        ))
        .respond_with(move |_: &Request| {
            let status = if p.fetch_add(1, Ordering::SeqCst) == 0 {
                "False"
            } else {
                "True"
            };
            ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy",
                "metadata": {"name": "tenant-storage-net"},
                "status": {"conditions": [{"type": "Available", "status": status}]}}))
        })
        .mount(&fake.server)
        .await;
    Mock::given(method("PATCH"))
        .and(path(
            "/api/v1/namespaces/clusters-t/persistentvolumeclaims/t-w00-data0",
        ))
        .and(query_param("fieldManager", "pxfa"))
        .and(header("content-type", "application/apply-patch+yaml"))
        .and(body_json(&claim.body))
        .respond_with(ResponseTemplate::new(200).set_body_json(&claim.body))
        .expect(1)
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path(
            "/api/v1/namespaces/clusters-t/persistentvolumeclaims/t-w00-data0",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(&claim.body))
        .mount(&fake.server)
        .await;

    let client = fake.client().await;
    let opts = ApplyOptions {
        wait: fast_wait(2_000),
        ..Default::default()
    };
    // Given out of order: the apply sorts by step.
    let report = apply_manifests(&direct_access_spec(), &[claim, net], &client, None, &opts)
        .await
        .expect("apply");
    assert!(report.complete(), "{report:?}");
    assert_eq!(
        report.applied,
        [
            "NodeNetworkConfigurationPolicy tenant-storage-net",
            "PersistentVolumeClaim clusters-t/t-w00-data0"
        ]
    );
    assert!(
        polls.load(Ordering::SeqCst) >= 2,
        "NNCP readiness was polled"
    );
    // The PVC was applied only after the NNCP was Available.
    let all = fake.server.received_requests().await.unwrap();
    let pvc_patch = all
        .iter()
        .position(|r| {
            r.method.as_str() == "PATCH" && r.url.path().contains("persistentvolumeclaims")
        })
        .unwrap();
    let last_nncp_get = all
        .iter()
        .rposition(|r| {
            r.method.as_str() == "GET" && r.url.path().contains("nodenetworkconfigurationpolicies/")
        })
        .unwrap();
    assert!(last_nncp_get < pvc_patch);
}

#[tokio::test]
async fn force_conflicts_sets_force() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    let claim = pvc("clusters-t", "t-w00-data0", "Bound");
    Mock::given(method("PATCH"))
        .and(path(
            "/api/v1/namespaces/clusters-t/persistentvolumeclaims/t-w00-data0",
        ))
        .and(query_param("fieldManager", "pxfa"))
        .and(query_param("force", "true"))
        .respond_with(ResponseTemplate::new(200).set_body_json(&claim.body))
        .expect(1)
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path(
            "/api/v1/namespaces/clusters-t/persistentvolumeclaims/t-w00-data0",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(&claim.body))
        .mount(&fake.server)
        .await;
    let opts = ApplyOptions {
        force_conflicts: true,
        wait: fast_wait(1_000),
        ..Default::default()
    };
    let report = apply_manifests(
        &direct_access_spec(),
        &[claim],
        &fake.client().await,
        None,
        &opts,
    )
    .await
    .unwrap();
    assert!(report.complete(), "{report:?}");
}

#[tokio::test]
async fn conflict_is_reported_and_stops_before_the_next_step() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    Mock::given(method("PATCH"))
        .and(path("/apis/nmstate.io/v1/nodenetworkconfigurationpolicies/net"))
        .respond_with(ResponseTemplate::new(409).set_body_json(json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Conflict", "code": 409,
            "message": "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using nmstate.io/v1: .spec.desiredState",
            "details": {"name": "net", "kind": "nodenetworkconfigurationpolicies", "causes": [
                {"reason": "FieldManagerConflict", "message": "conflict with \"kubectl-edit\" using nmstate.io/v1",
                 "field": ".spec.desiredState"}]}})))
        .expect(1)
        .mount(&fake.server)
        .await;
    let opts = ApplyOptions {
        wait: fast_wait(500),
        ..Default::default()
    };
    let report = apply_manifests(
        &direct_access_spec(),
        &[nncp("net"), pvc("clusters-t", "c", "Bound")],
        &fake.client().await,
        None,
        &opts,
    )
    .await
    .unwrap();
    assert!(!report.complete());
    assert_eq!(report.conflicts.len(), 1);
    assert_eq!(
        report.conflicts[0].object,
        "NodeNetworkConfigurationPolicy net"
    );
    assert!(
        report.conflicts[0].fields[0].contains("kubectl-edit"),
        "{report:?}"
    );
    assert_eq!(report.stopped_at.as_deref(), Some("management step 30"));
    assert!(
        fake.requests("PATCH", "persistentvolumeclaims")
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn readiness_timeout_reports_what_is_pending() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    let claim = pvc("clusters-t", "slow", "Pending");
    Mock::given(method("PATCH"))
        .and(path(
            "/api/v1/namespaces/clusters-t/persistentvolumeclaims/slow",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(&claim.body))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path(
            "/api/v1/namespaces/clusters-t/persistentvolumeclaims/slow",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(&claim.body))
        .mount(&fake.server)
        .await;
    let started = std::time::Instant::now();
    let opts = ApplyOptions {
        wait: fast_wait(200),
        ..Default::default()
    };
    let report = apply_manifests(
        &direct_access_spec(),
        &[claim],
        &fake.client().await,
        None,
        &opts,
    )
    .await
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(report.pending.len(), 1, "{report:?}");
    assert_eq!(
        report.pending[0].object,
        "PersistentVolumeClaim clusters-t/slow"
    );
    assert_eq!(report.pending[0].state, "phase Pending");
    assert_eq!(report.stopped_at.as_deref(), Some("management step 80"));
}

#[tokio::test]
async fn placeholder_secrets_fragments_and_tenant_without_kubeconfig_are_skipped() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    let spec = cloud_drive_spec();
    let manifests = rendered(&spec);
    let tenant: Vec<Manifest> = manifests
        .into_iter()
        .filter(|m| m.cluster == Cluster::Tenant)
        .collect();
    assert!(tenant.iter().any(|m| m.secret));
    let report = apply_manifests(
        &spec,
        &tenant,
        &fake.client().await,
        None,
        &ApplyOptions::default(),
    )
    .await
    .unwrap();
    assert!(report.applied.is_empty());
    assert_eq!(report.skipped.len(), tenant.len());
    assert!(
        report
            .skipped
            .iter()
            .all(|s| s.reason.contains("--tenant-kubeconfig"))
    );

    // A secret pxfa has no token for, and a fragment, are never sent.
    let mut secret = pvc("clusters-t", "unused", "Bound").secret();
    secret.kind = "Secret".into();
    let mut fragment = pvc("clusters-t", "hc", "Bound");
    fragment.form = Form::Fragment {
        path: "spec.platform.kubevirt.storageDriver".into(),
    };
    let report = apply_manifests(
        &spec,
        &[secret, fragment],
        &fake.client().await,
        None,
        &ApplyOptions::default(),
    )
    .await
    .unwrap();
    assert!(report.complete());
    assert!(
        report.skipped[0].reason.contains("placeholder"),
        "{report:?}"
    );
    assert!(
        report.skipped[1]
            .reason
            .contains("spec.platform.kubevirt.storageDriver")
    );
    assert!(fake.server.received_requests().await.unwrap().is_empty());
}

#[test]
fn the_rebooting_machine_config_and_the_pull_secret_template_stay_with_the_admin() {
    let spec = direct_access_spec();
    let all = rendered(&spec);
    let count = |ms: &[Manifest], kind: &str| ms.iter().filter(|m| m.kind == kind).count();
    let mc = all
        .iter()
        .filter(|m| m.cluster == Cluster::Management && m.kind == "MachineConfig")
        .count();
    assert!(mc > 0, "the bundle has a management MachineConfig");

    let (kept, skipped) = px_cluster::cluster_bundle(&spec, all.clone(), false);
    assert!(
        !kept
            .iter()
            .any(|m| m.cluster == Cluster::Management && m.kind == "MachineConfig"),
        "no rebooting MachineConfig without the admin's yes"
    );
    let pull = spec.pull_secret_name();
    assert!(!kept.iter().any(|m| m.kind == "Secret" && m.name == pull));
    assert!(
        skipped.iter().any(|s| s.contains("--apply-node-config")),
        "{skipped:?}"
    );
    assert!(skipped.iter().any(|s| s.contains(&pull)), "{skipped:?}");
    assert_eq!(kept.len() + skipped.len(), all.len());

    let (kept, _) = px_cluster::cluster_bundle(&spec, all.clone(), true);
    assert_eq!(count(&kept, "MachineConfig"), count(&all, "MachineConfig"));
}
