//! Reading a manifest document: its kind, name, namespace and fields, as the manifest
//! rules need them (missing fields read as empty, never as errors: lint reports, it
//! does not refuse).

use serde_json::Value;

/// The document's `kind`.
pub(super) fn kind(d: &Value) -> &str {
    d.get("kind").and_then(Value::as_str).unwrap_or("")
}

/// The document's `metadata.name`.
pub(super) fn name(d: &Value) -> &str {
    d.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The document's `metadata.namespace`.
pub(super) fn namespace(d: &Value) -> Option<&str> {
    d.pointer("/metadata/namespace").and_then(Value::as_str)
}

/// `Kind/namespace/name` (or `Kind/name`), how findings name an object.
pub(super) fn object(d: &Value) -> String {
    match namespace(d) {
        Some(ns) => format!("{}/{ns}/{}", kind(d), name(d)),
        None => format!("{}/{}", kind(d), name(d)),
    }
}

/// The string at a JSON pointer.
pub(super) fn str_at<'a>(d: &'a Value, ptr: &str) -> Option<&'a str> {
    d.pointer(ptr).and_then(Value::as_str)
}

/// The documents of one kind.
pub(super) fn of_kind<'a>(docs: &'a [Value], k: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    docs.iter().filter(move |d| kind(d) == k)
}

/// Reads a Kubernetes quantity (`32Gi`, `8G`, `512Mi`, plain bytes).
pub(super) fn quantity(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse::<flasharray::Size>().ok().map(|s| s.as_u64()),
        _ => None,
    }
}
