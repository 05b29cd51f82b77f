//! `pxfa crd` on the real API server: accepted as a structural schema (the start
//! script loads it and waits until it is Established), the examples accepted as
//! TenantStorage objects, and the invalid spec fixtures refused by the server at the
//! field paths pxfa's own parser names, wherever the schema can say what is wrong.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{Patch, PatchParams, ValidationDirective};
use serde_json::Value;

use crate::harness::{self, dynamic_api, namespace, workspace};

fn conditions(crd: &CustomResourceDefinition) -> Vec<(String, String)> {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.type_, c.status))
        .collect()
}

#[tokio::test]
async fn the_crd_is_structural_and_established() {
    let Some((server, _turn)) = harness::shared().await else {
        return;
    };
    let client = server.admin().await;
    let api: Api<CustomResourceDefinition> = Api::all(client);
    let crd = api.get("tenantstorages.pxfa.io").await.unwrap();
    let conditions = conditions(&crd);
    assert!(
        conditions.contains(&("Established".into(), "True".into())),
        "{conditions:?}"
    );
    assert!(
        conditions.contains(&("NamesAccepted".into(), "True".into())),
        "{conditions:?}"
    );
    assert!(
        !conditions
            .iter()
            .any(|(t, s)| t == "NonStructuralSchema" && s == "True"),
        "{conditions:?}"
    );
}

/// Server-side apply of a TenantStorage into `ns`, strict about unknown fields (as
/// `oc apply --server-side` is); `dry_run` stores nothing.
async fn apply_tenant(
    client: &kube::Client,
    ns: &str,
    mut obj: Value,
    dry_run: bool,
) -> Result<(), kube::Error> {
    obj["metadata"]["namespace"] = Value::String(ns.into());
    let name = obj["metadata"]["name"].as_str().unwrap().to_string();
    let api = dynamic_api(client, "pxfa.io/v1alpha1", "TenantStorage", Some(ns)).await;
    let mut params = PatchParams::apply("pxfa-test");
    params.dry_run = dry_run;
    params.field_validation = Some(ValidationDirective::Strict);
    api.patch(&name, &params, &Patch::Apply(&obj))
        .await
        .map(|_| ())
}

#[tokio::test]
async fn the_examples_are_accepted_as_tenant_storage_objects() {
    let Some((server, _turn)) = harness::shared().await else {
        return;
    };
    let client = server.admin().await;
    let ns = namespace(&client, "crd-examples").await;
    let mut files: Vec<_> = std::fs::read_dir(workspace().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.extend(
        ["valid-full.yaml", "valid-minimal.yaml"]
            .map(|f| workspace().join("fixtures/tenants").join(f)),
    );
    assert!(files.len() >= 7, "{files:?}");
    for file in files {
        let obj: Value = serde_saphyr::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        if let Err(e) = apply_tenant(&client, &ns, obj, false).await {
            panic!("{}: refused: {e}", file.display());
        }
    }
}

/// The field paths the server names in a refusal (`spec.storage.capacity`): its
/// causes, or, where it gives none (server-side apply answers a wrong type with a 500
/// whose message names the path, `.spec.storage.accessModes: expected list`), the
/// paths in its message.
fn refused_fields(e: &kube::Error) -> Vec<String> {
    let kube::Error::Api(status) = e else {
        panic!("not a refusal: {e}")
    };
    assert!(matches!(status.code, 400 | 409 | 422 | 500), "{status:?}");
    let mut fields: Vec<String> = status
        .details
        .as_ref()
        .map(|d| {
            d.causes
                .iter()
                .map(|c| c.field.trim_start_matches('.').to_string())
                .collect()
        })
        .unwrap_or_default();
    fields.retain(|f| !f.is_empty());
    if fields.is_empty() {
        fields = paths_in(&status.message);
    }
    fields
}

/// Every path under `spec`, `status` or `metadata` in a message, up to the next
/// `:`, space, comma or quote.
fn paths_in(message: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for root in ["spec", "status", "metadata"] {
        for (i, _) in message.match_indices(root) {
            let before = message[..i].chars().last();
            let after = message[i + root.len()..].chars().next();
            if before.is_some_and(char::is_alphanumeric) || !matches!(after, Some('.' | '[' | ':'))
            {
                continue;
            }
            let end = message[i..]
                .find([':', ' ', ',', '"'])
                .map_or(message.len(), |e| i + e);
            paths.push(message[i..end].to_string());
        }
    }
    paths
}

/// The server refuses a wrong `apiVersion` or `kind` as a whole ("invalid object
/// type"), which is the field pxfa names.
fn wrong_type(pxfa: &[String], e: &kube::Error) -> bool {
    let kube::Error::Api(status) = e else {
        return false;
    };
    status.message.starts_with("invalid object type")
        && pxfa.iter().any(|p| p == "apiVersion" || p == "kind")
}

/// Fixtures the server refuses without naming pxfa's path, and why.
const KNOWN_DIFFERENCES: [(&str, &str); 1] = [(
    "invalid-metadata-unknown.yaml",
    "metadata.uid is the object's identity to the server: 409 uid mismatch, no path",
)];

/// `a` and `b` name the same field or one lies inside the other.
fn related(a: &str, b: &str) -> bool {
    let inside = |x: &str, y: &str| {
        x == y || x.starts_with(&format!("{y}.")) || x.starts_with(&format!("{y}["))
    };
    inside(a, b) || inside(b, a)
}

#[tokio::test]
async fn invalid_specs_are_refused_at_the_same_field_paths() {
    let Some((server, _turn)) = harness::shared().await else {
        return;
    };
    let client = server.admin().await;
    let ns = namespace(&client, "crd-invalid").await;
    let dir = workspace().join("fixtures/tenants");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("invalid-")
        })
        .collect();
    files.sort();
    let (mut same, mut only_pxfa, mut differ) = (0, Vec::new(), Vec::new());
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let pxfa: Vec<String> = match px_topology::parse_valid_spec(&text) {
            Ok(_) => panic!("{name}: pxfa accepts it"),
            Err(errors) => errors.0.into_iter().map(|e| e.path).collect(),
        };
        // A document that is not YAML never reaches a server.
        let Ok(obj) = serde_saphyr::from_str::<Value>(&text) else {
            continue;
        };
        // Nor does an object without a name: the client cannot address it.
        if obj["metadata"]["name"].as_str().is_none_or(str::is_empty) {
            continue;
        }
        match apply_tenant(&client, &ns, obj, true).await {
            Ok(()) => only_pxfa.push(name),
            Err(e) => {
                let server_fields = refused_fields(&e);
                let agree = server_fields
                    .iter()
                    .any(|s| pxfa.iter().any(|p| related(s, p)));
                if agree || wrong_type(&pxfa, &e) {
                    same += 1;
                } else if !KNOWN_DIFFERENCES.iter().any(|(f, _)| *f == name) {
                    differ.push(format!(
                        "{name}: pxfa {pxfa:?}, server {server_fields:?} ({e})"
                    ));
                }
            }
        }
    }
    assert!(
        differ.is_empty(),
        "refused by the server at other paths than pxfa's ({same} agree):\n{}",
        differ.join("\n")
    );
    assert!(same >= 20, "only {same} fixtures refused by the server");
    assert!(!only_pxfa.is_empty(), "every check is in the schema?");
}
