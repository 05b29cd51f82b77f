//! The claims of dynamically provisioned drives, read on a (fake) management
//! cluster: bound ones map to their PV, pending and missing ones are left out.

use px_cluster::ClaimBindings;
use px_topology::{DriveClaim, DriveLocator};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::*;

fn pvc(name: &str, phase: &str, volume: Option<&str>) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"volumeName": volume, "accessModes": ["ReadWriteMany"]},
        "status": {"phase": phase},
    })
}

#[tokio::test]
async fn bound_claims_are_read_from_the_management_cluster() {
    let fake = Fake::start().await;
    for (name, body) in [
        ("bound", pvc("bound", "Bound", Some("pvc-1111"))),
        ("waiting", pvc("waiting", "Pending", None)),
    ] {
        Mock::given(method("GET"))
            .and(path(format!(
                "/api/v1/namespaces/ns/persistentvolumeclaims/{name}"
            )))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .mount(&fake.server)
            .await;
    }
    Mock::given(method("GET"))
        .and(path("/api/v1/namespaces/ns/persistentvolumeclaims/missing"))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "reason": "NotFound", "code": 404, "message": "not found",
        })))
        .mount(&fake.server)
        .await;
    let claims: Vec<DriveClaim> = ["bound", "waiting", "missing"]
        .iter()
        .map(|n| DriveClaim {
            namespace: "ns".into(),
            name: n.to_string(),
        })
        .collect();
    let got = ClaimBindings::new(fake.client().await)
        .bound(&claims)
        .await
        .unwrap();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].claim, claims[0]);
    assert_eq!(got[0].volume_name, "pvc-1111");
}
