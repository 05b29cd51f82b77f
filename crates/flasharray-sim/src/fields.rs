//! Completes answers to the models of [`TOP_REST_VERSION`](super::TOP_REST_VERSION).
//!
//! The client crate's models carry the fields pxfa uses; Pure's SDK and Ansible
//! collection read more (`context` since 2.38, `protocol_endpoint`, `is_local`, ...).
//! Real arrays send every field of the version asked for, `null` where they have no
//! value, so every item of a list or write answer is completed here with the
//! fields it lacks. `context` is the array itself, as on an array outside a fleet.
//! Space fields the simulator does not account (`system`, `replication`) are 0, as
//! on an array with nothing of that kind.

use serde_json::{Map, Value, json};

/// The fields a model of `resource` has at the top version that our models lack,
/// with the value a stand-alone array sends for them.
fn missing_fields(resource: &str, array: &Value) -> Option<Value> {
    let context = || array.clone();
    Some(match resource {
        "volumes" | "volumes/batch" => json!({
            "context": context(), "space": {"system": 0, "replication": 0},
            "protocol_endpoint": {"container_version": null},
        }),
        "hosts" => json!({
            "context": context(), "is_local": true, "destroyed": false,
            "space": {"system": 0, "replication": 0},
            // No fabric in the simulator: no paths, so no connectivity to report.
            "port_connectivity": {"details": "", "status": "none"},
            "preferred_arrays": [], "time_remaining": null, "vlan": "any",
        }),
        "host-groups" => json!({
            "context": context(), "is_local": true, "destroyed": false,
            "space": {"system": 0, "replication": 0},
            "time_remaining": null,
        }),
        "pods" => {
            // A stand-alone pod's only member is the array itself.
            let mut member = context();
            if let Some(m) = member.as_object_mut() {
                m.insert("resource_type".into(), "arrays".into());
            }
            json!({
                "context": context(), "members": [], "space": {"system": 0, "replication": 0},
                "arrays": [{"member": member}],
            })
        }
        "arrays" => json!({
            "context": context(), "as_of": null, "ntp_symmetric_key": null, "time_zone": "UTC",
            "encryption": {
                "data_at_rest": {"enabled": true, "algorithm": "AES-256-CTR"},
                "module_version": "FA-1.3",
            },
        }),
        "host-groups/hosts" | "hosts/host-groups" | "pods/arrays" | "connections"
        | "volumes/tags" | "hosts/tags" | "host-groups/tags" | "pods/tags" => {
            json!({"context": context()})
        }
        _ => return None,
    })
}

/// Adds the missing fields to every item of a JSON `{"items": [...]}` body.
/// Bodies of other shapes (errors) are left unchanged.
pub(crate) fn complete(resource: &str, array: &Value, value: &mut Value) {
    let Some(Value::Object(extra)) = missing_fields(resource, array) else {
        return;
    };
    let Some(items) = value.get_mut("items").and_then(Value::as_array_mut) else {
        return;
    };
    for item in items.iter_mut().filter_map(Value::as_object_mut) {
        fill(item, &extra);
    }
}

fn fill(item: &mut Map<String, Value>, extra: &Map<String, Value>) {
    for (k, v) in extra {
        match (item.get_mut(k), v) {
            (Some(Value::Object(have)), Value::Object(more)) => fill(have, more),
            // A one-element list in the template completes every element.
            (Some(Value::Array(have)), Value::Array(more)) => {
                if let [Value::Object(more)] = more.as_slice() {
                    for element in have.iter_mut().filter_map(Value::as_object_mut) {
                        fill(element, more);
                    }
                }
            }
            // Our models send `null` for what they do not track; where the array
            // always has a value (the SDK raises on reading a null), the template's
            // value stands in.
            (Some(have @ Value::Null), _) => *have = v.clone(),
            (Some(_), _) => {}
            (None, _) => {
                item.insert(k.clone(), v.clone());
            }
        }
    }
    // Since 2.26 the delay is given for both SafeMode states; the simulator has
    // one delay, which holds whichever state the array is in.
    if let Some(Value::Object(config)) = item.get_mut("eradication_config")
        && let Some(delay) = config.get("eradication_delay").cloned()
    {
        for key in ["disabled_delay", "enabled_delay"] {
            if config.get(key).is_none_or(Value::is_null) {
                config.insert(key.to_string(), delay.clone());
            }
        }
    }
}

/// Whether answers on `resource` are completed (so the caller fetches the array's
/// reference only when it is needed).
pub(crate) fn completes(resource: &str) -> bool {
    missing_fields(resource, &Value::Null).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_gain_context_and_keep_their_own_fields() {
        let array = json!({"id": "a1", "name": "sim"});
        let mut out = json!({"items":[{"name":"v1","subtype":"regular"}],"total_item_count":1});
        complete("volumes", &array, &mut out);
        assert_eq!(out["items"][0]["context"], array);
        assert_eq!(out["items"][0]["subtype"], "regular");
        assert_eq!(
            out["items"][0]["protocol_endpoint"]["container_version"],
            Value::Null
        );
        assert_eq!(out["total_item_count"], 1);
    }

    #[test]
    fn errors_and_unknown_resources_pass_unchanged() {
        let array = json!({"id": "a1", "name": "sim"});
        let err = json!({"errors":[{"context":null,"message":"x"}]});
        let mut out = err.clone();
        complete("volumes", &array, &mut out);
        assert_eq!(out, err);
        let body = json!({"items":[{"name":"x"}]});
        let mut out = body.clone();
        complete("arrays/space", &array, &mut out);
        assert_eq!(out, body);
        assert!(completes("hosts") && !completes("hardware"));
    }
}
