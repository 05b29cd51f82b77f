//! RFC 7386 JSON merge patch, as the fake API servers of the tests and the benchmark
//! apply it to stored objects.

use serde_json::{Value, json};

/// Applies `patch` to `target`: objects merge key by key, `null` removes a key,
/// anything else replaces.
pub(crate) fn merge(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(p) => {
            if !target.is_object() {
                *target = json!({});
            }
            let t = target.as_object_mut().unwrap();
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        other => *target = other.clone(),
    }
}
