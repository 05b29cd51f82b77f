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
