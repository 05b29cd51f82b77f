//! The plan's JSON contract: `docs/plan.schema.json` holds what schemars generates
//! from the types, and a real plan validates against it with sizes as numbers and
//! every key present. The file also describes `clusters` (px-cluster's preview, which
//! `pxfa plan --kubeconfig` adds); the pxfa crate checks it whole and writes it
//! (`PXFA_WRITE_SCHEMAS=1 cargo test -p pxfa --bin pxfa committed_plan_schema`).

use std::path::PathBuf;

use flasharray::Size;
use flasharray_mock::MockArray;
use px_topology::{Action, Kind, PlanDocument, PlanOptions};

use crate::support::tenant::{TENANT, desired, observe};

fn schema_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/plan.schema.json")
}

/// Every part the plan document's types generate is in the committed file as
/// generated: its keys, each property and each definition (the file adds `clusters`
/// and the preview's definitions beside them).
#[test]
fn committed_schema_matches_the_types() {
    let generated = PlanDocument::json_schema();
    let text = std::fs::read_to_string(schema_path()).expect("docs/plan.schema.json");
    let committed: serde_json::Value = serde_json::from_str(&text).unwrap();
    let stale = "docs/plan.schema.json is stale: run \
                 PXFA_WRITE_SCHEMAS=1 cargo test -p pxfa --bin pxfa committed_plan_schema";
    for (key, value) in generated.as_object().unwrap() {
        match key.as_str() {
            "properties" | "$defs" => {
                for (name, part) in value.as_object().unwrap() {
                    assert_eq!(&committed[key][name], part, "{key}.{name}: {stale}");
                }
            }
            _ => assert_eq!(&committed[key], value, "{key}: {stale}"),
        }
    }
}

#[tokio::test]
async fn a_plan_validates_against_the_schema_with_typed_details() {
    let array = MockArray::new();
    let want = desired(TENANT, 1, Size::gib(512));
    let staged = observe(&array, &want).await.plan(&PlanOptions::default());
    let p = staged.plan();
    let doc = p.to_json();

    assert_eq!(doc["apiVersion"], "pxfa.io/v1alpha1");
    assert_eq!(doc["kind"], "Plan");
    assert!(doc["conflicts"].is_array(), "always present");
    assert!(
        doc["refusals"].as_array().unwrap().is_empty(),
        "always present, even empty"
    );
    let volume = p
        .changes
        .iter()
        .position(|c| c.kind == Kind::Volume && c.action == Action::Create)
        .expect("a volume to create");
    assert_eq!(
        doc["changes"][volume]["details"]["size"],
        serde_json::json!(512u64 << 30),
        "sizes are bytes"
    );
    assert!(
        p.changes[volume].to_line().contains("512 GiB"),
        "text stays readable"
    );
    assert_eq!(
        doc["summary"]["create"].as_u64().unwrap() as usize,
        p.summary.create
    );
    for c in doc["changes"].as_array().unwrap() {
        assert!(c["details"].is_object(), "details always present: {c}");
    }

    let schema = PlanDocument::json_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let mut wrong = doc.clone();
    wrong["kind"] = "Other".into();
    assert!(!validator.is_valid(&wrong), "kind is a constant");
}
