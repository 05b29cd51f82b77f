//! How the spec's [`Size`](flasharray::Size) fields look in the JSON schema the CRD is
//! built from. They live with the model (not in the `crd` module) so that the spec does
//! not depend on the CRD module that depends on it.

use schemars::{Schema, SchemaGenerator, json_schema};
use serde_json::Value;

/// A size: `500GiB`, `2Ti`, or bytes as a number (what a parsed spec serialises
/// to), like a Kubernetes quantity.
pub(super) fn size_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "x-kubernetes-int-or-string": true,
        "anyOf": [{"type": "integer"}, {"type": "string"}],
    })
}

pub(super) fn optional_size_schema(g: &mut SchemaGenerator) -> Schema {
    let mut s = size_schema(g);
    s.insert("nullable".into(), Value::Bool(true));
    s
}
