//! The usage report's JSON contract: `docs/usage.schema.json` is what schemars
//! generates from the types (regenerate with `PXFA_WRITE_SCHEMAS=1`), and a report
//! of the brownfield array validates against it with sizes as bytes.

use std::path::PathBuf;

use flasharray_mock::{MockArray, Seed};
use px_topology::{UsageReport, read_usage};

fn schema_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/usage.schema.json")
}

#[test]
fn committed_schema_matches_the_types() {
    let generated = serde_json::to_string_pretty(&UsageReport::json_schema()).unwrap() + "\n";
    if std::env::var_os("PXFA_WRITE_SCHEMAS").is_some() {
        std::fs::write(schema_path(), &generated).unwrap();
    }
    let committed = std::fs::read_to_string(schema_path()).expect("docs/usage.schema.json");
    assert_eq!(
        committed, generated,
        "docs/usage.schema.json is stale: run the test with PXFA_WRITE_SCHEMAS=1"
    );
}

#[tokio::test]
async fn a_brownfield_report_validates_against_the_schema() {
    let array = MockArray::builder().seed(Seed::brownfield()).build();
    let doc = serde_json::to_value(read_usage(&array).await.unwrap()).unwrap();
    assert_eq!(doc["apiVersion"], "pxfa.io/v1alpha1");
    assert_eq!(doc["kind"], "Usage");
    assert_eq!(doc["capacity"], serde_json::json!(100u64 << 40), "bytes");
    assert_eq!(doc["rows"][0]["holder"]["kind"], "tenant");
    assert_eq!(doc["rows"][0]["holder"]["namespace"], "team-blue");

    let schema = UsageReport::json_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let mut wrong = doc.clone();
    wrong["rows"][0]["holder"]["kind"] = "guess".into();
    assert!(!validator.is_valid(&wrong), "holders are a closed set");
}
