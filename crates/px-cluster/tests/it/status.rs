//! The cross-layer status view.

use px_topology::{Cluster, Manifest};
use serde_json::json;
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, ResponseTemplate};

use crate::support::*;

#[tokio::test]
async fn status_explains_each_cluster_layer() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    let spec = direct_access_spec();
    let manifests = rendered(&spec);
    let ns = "clusters-tenant-full";
    let claims: Vec<&Manifest> = manifests
        .iter()
        .filter(|m| m.kind == "PersistentVolumeClaim" && m.cluster == Cluster::Management)
        .collect();
    let bound = claims[0].name.clone();
    Mock::given(method("GET"))
        .and(path(format!(
            "/api/v1/namespaces/{ns}/persistentvolumeclaims/{bound}"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": bound, "namespace": ns}, "status": {"phase": "Bound"}})))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(format!("^/api/v1/namespaces/{ns}/persistentvolumeclaims/.+$")))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404,
            "message": "not found"})))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/apis/kubevirt.io/v1/namespaces/{ns}/virtualmachines")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineList", "metadata": {},
            "items": [vm_json("tenant-full-workers-a", "2026-01-01T00:00:00Z", Some(0), json!([]))]})))
        .mount(&fake.server)
        .await;
    let report = px_cluster::cluster_status(&spec, &manifests, &fake.client().await, None)
        .await
        .expect("status");
    assert!(!report.healthy());
    let claims_layer = &report.layers[0];
    assert_eq!(claims_layer.name, "management claims");
    assert_eq!(claims_layer.items.len(), claims.len());
    assert!(claims_layer.items[0].ok, "{:?}", claims_layer.items[0]);
    let missing = &claims_layer.items[1];
    assert_eq!((missing.ok, missing.state.as_str()), (false, "not found"));
    assert!(missing.problem.as_deref().unwrap().contains("pxfa apply"));
    let disks = &report.layers[1];
    assert_eq!(disks.items.len(), 4);
    assert!(disks.items[0].object.contains("tenant-full-workers-a"));
    assert!(
        disks.items[0].state.starts_with("missing pxdata0"),
        "{:?}",
        disks.items[0]
    );
    assert_eq!(disks.items[1].state, "no VM");
    // Nothing but reads.
    assert!(
        fake.server
            .received_requests()
            .await
            .unwrap()
            .iter()
            .all(|r| r.method.as_str() == "GET")
    );
}

/// `docs/status.schema.json` is what schemars generates from the types (regenerate
/// with `PXFA_WRITE_SCHEMAS=1`); the document always carries every key.
#[test]
fn status_document_contract() {
    use px_cluster::StatusDocument;
    use px_cluster::status::{Item, Layer};
    let file =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/status.schema.json");
    let generated = serde_json::to_string_pretty(&StatusDocument::json_schema()).unwrap() + "\n";
    if std::env::var_os("PXFA_WRITE_SCHEMAS").is_some() {
        std::fs::write(&file, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&file).expect("docs/status.schema.json");
    assert_eq!(
        committed, generated,
        "docs/status.schema.json is stale: run the test with PXFA_WRITE_SCHEMAS=1"
    );

    let report = px_cluster::StatusReport {
        layers: vec![Layer {
            name: "array".into(),
            items: vec![Item {
                object: "volume v1".into(),
                state: "present".into(),
                ok: true,
                problem: None,
            }],
        }],
    };
    let doc = serde_json::to_value(StatusDocument::new("t1", &report)).unwrap();
    assert_eq!(doc["apiVersion"], "pxfa.io/v1alpha1");
    assert_eq!(doc["kind"], "Status");
    assert_eq!(doc["healthy"], true);
    assert!(doc["layers"][0]["items"][0]["problem"].is_null());
    assert!(
        doc["layers"][0]["items"][0]
            .as_object()
            .unwrap()
            .contains_key("problem"),
        "problem is always present"
    );
}
