//! Kubernetes objects the fake API servers of the tests and the benchmark serve.

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use serde_json::{Value, json};

/// A Secret `ns/name` as the API server returns it: `labels`, and `data` (base64 on
/// the wire).
pub(crate) fn secret(
    ns: &str,
    name: &str,
    labels: &[(&str, &str)],
    data: &[(&str, &str)],
) -> Value {
    let s = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns.into()),
            labels: (!labels.is_empty()).then(|| {
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            }),
            ..Default::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                .collect(),
        ),
        ..Default::default()
    };
    let mut v = serde_json::to_value(s).unwrap();
    v["apiVersion"] = json!("v1");
    v["kind"] = json!("Secret");
    v
}

/// The tenant's Portworx operator, installed at once: apply waits for its
/// Subscription's CSV to be Succeeded before the StorageCluster.
pub(crate) async fn mount_installed_operator(server: &wiremock::MockServer) {
    use wiremock::matchers::{method, path_regex};
    use wiremock::{Mock, ResponseTemplate};
    Mock::given(method("GET"))
        .and(path_regex(r"/subscriptions/[^/]+$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
            "metadata": {"name": "portworx-certified", "namespace": "portworx"},
            "status": {"installedCSV": "portworx-operator.v25.2.0"}})))
        .with_priority(1)
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(r"/clusterserviceversions/[^/]+$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
            "metadata": {"name": "portworx-operator.v25.2.0", "namespace": "portworx"},
            "status": {"phase": "Succeeded"}})))
        .with_priority(1)
        .mount(server)
        .await;
}

/// The cluster-wide lists the leader's orphan pass reads (claims, volumes, VMs,
/// pods, HostedClusters), answered empty: a cluster with none of them, so the pass finds nothing
/// and logs no error.
pub(crate) async fn mount_empty_orphan_lists(server: &wiremock::MockServer) {
    for (p, kind) in [
        ("/api/v1/persistentvolumeclaims", "PersistentVolumeClaim"),
        ("/api/v1/persistentvolumes", "PersistentVolume"),
        ("/apis/kubevirt.io/v1/virtualmachines", "VirtualMachine"),
        ("/api/v1/pods", "Pod"),
        (
            "/apis/hypershift.openshift.io/v1beta1/hostedclusters",
            "HostedCluster",
        ),
    ] {
        let list =
            json!({"apiVersion": "v1", "kind": format!("{kind}List"), "metadata": {}, "items": []});
        wiremock::Mock::given(wiremock::matchers::method("GET"))
            .and(wiremock::matchers::path(p))
            .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(list))
            .mount(server)
            .await;
    }
}
