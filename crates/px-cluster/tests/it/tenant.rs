//! A whole rendered tenant applied in order, and a refused secret.

use px_cluster::{ApplyOptions, apply_manifests};
use px_topology::{Cluster, Form};
use secrecy::SecretString;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::*;

#[tokio::test]
async fn whole_direct_access_tenant_applies_in_order_and_attaches_every_worker() {
    let fake = Fake::start().await;
    let spec = direct_access_spec();
    let manifests = rendered(&spec);
    mount_ready_management(&fake.server, &manifests).await;
    let opts = ApplyOptions {
        wait: fast_wait(1_000),
        ..Default::default()
    };
    let report = apply_manifests(&spec, &manifests, &fake.client().await, None, &opts)
        .await
        .expect("apply");
    assert!(report.stopped_at.is_none(), "{report:#?}");
    assert!(
        report.conflicts.is_empty() && report.pending.is_empty(),
        "{report:#?}"
    );
    let management_objects = manifests
        .iter()
        .filter(|m| m.cluster == Cluster::Management && m.form == Form::Resource && !m.secret)
        .count();
    assert_eq!(report.applied.len(), management_objects);
    assert_eq!(report.workers.len(), 4);
    assert!(report.workers.iter().all(|w| w.attached.len() == 3));
    // Step order on the wire: every apply of a step comes after every apply of the
    // steps before it, and hotplug comes last.
    let all = fake.server.received_requests().await.unwrap();
    let order_of = |p: &str| {
        manifests
            .iter()
            .find(|m| m.form == Form::Resource && p.ends_with(&format!("/{}", m.name)))
            .map(|m| m.order)
    };
    let steps: Vec<u32> = all
        .iter()
        .filter(|r| {
            r.method.as_str() == "PATCH"
                && r.headers.get("content-type").unwrap() == "application/apply-patch+yaml"
        })
        .filter_map(|r| order_of(r.url.path()))
        .collect();
    assert!(steps.windows(2).all(|w| w[0] <= w[1]), "{steps:?}");
    let last_apply = all
        .iter()
        .rposition(|r| {
            r.method.as_str() == "PATCH"
                && r.headers.get("content-type").unwrap() == "application/apply-patch+yaml"
        })
        .unwrap();
    let first_hotplug = all.iter().position(|r| r.method.as_str() == "PUT").unwrap();
    assert!(last_apply < first_hotplug);
    // The tenant manifests were reported, not sent.
    assert!(
        report
            .skipped
            .iter()
            .any(|s| s.reason.contains("--tenant-kubeconfig"))
    );
}

#[tokio::test]
async fn a_refused_secret_never_shows_its_value() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    let spec = cloud_drive_spec();
    let token = SecretString::from("6f1e0c6a-9d3f-4d10-8bbf-2b8c3e1f0a11");
    let secret = px_topology::pure_secret(&spec, Some(&token));
    Mock::given(method("PATCH"))
        .and(path("/api/v1/namespaces/portworx/secrets/px-pure-secret"))
        .respond_with(ResponseTemplate::new(422).set_body_json(json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Invalid", "code": 422,
            "message": "Secret \"px-pure-secret\" is invalid: data[pure.json]: Invalid value: \"6f1e0c6a-9d3f-4d10-8bbf-2b8c3e1f0a11\""})))
        .mount(&fake.server)
        .await;
    let mut on_management = secret;
    on_management.cluster = Cluster::Management;
    let opts = ApplyOptions {
        apply_secrets: true,
        ..Default::default()
    };
    let err = apply_manifests(&spec, &[on_management], &fake.client().await, None, &opts)
        .await
        .unwrap_err();
    let text = format!("{err:#} {err:?}");
    assert!(text.contains("Secret portworx/px-pure-secret"), "{text}");
    assert!(text.contains("422"), "{text}");
    assert!(!text.contains("6f1e0c6a"), "{text}");
}
