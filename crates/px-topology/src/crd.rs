//! The `TenantStorage` CustomResourceDefinition (`pxfa.io/v1alpha1`, namespaced), so
//! that the same document admins give to `pxfa -f` can be stored in a cluster and
//! reconciled by a controller later.
//!
//! Why not kube's `CustomResource` derive: it generates its own `TenantStorage` struct
//! around the spec with kube's `ObjectMeta`, which would replace the hand-written type
//! whose strict parsing (unknown fields are errors with their path, tenant-derived
//! defaults resolved after parsing) the rest of the crate relies on. The CRD is instead
//! built from the `schemars` schema of [`TenantSpec`], so the schema can never drift from
//! the parser, and this crate stays free of kube and k8s-openapi (no Kubernetes version
//! feature to unify, nothing that needs kube's `client` feature).

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::spec::{API_VERSION, KIND, TenantSpec};

/// API group of the resource.
pub const GROUP: &str = "pxfa.io";
/// Served and stored version.
pub const VERSION: &str = "v1alpha1";
/// Plural resource name, as in `kubectl get tenantstorages`.
pub const PLURAL: &str = "tenantstorages";

/// The CRD as a Kubernetes object (`apiextensions.k8s.io/v1`), keys in
/// `apiVersion, kind, metadata, spec` order.
pub fn tenant_storage_crd() -> Value {
    debug_assert_eq!(API_VERSION, format!("{GROUP}/{VERSION}"));
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": format!("{PLURAL}.{GROUP}"),
            "labels": {"app.kubernetes.io/managed-by": "pxfa"},
        },
        "spec": {
            "group": GROUP,
            "names": {
                "kind": KIND,
                "listKind": format!("{KIND}List"),
                "plural": PLURAL,
                "singular": "tenantstorage",
                "shortNames": ["pxts"],
                "categories": ["pxfa"],
            },
            "scope": "Namespaced",
            "versions": [{
                "name": VERSION,
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": {
                    "description": "One hosted-cluster tenant's Portworx on FlashArray storage (see pxfa docs/spec.md).",
                    "type": "object",
                    "required": ["spec"],
                    "properties": {
                        "apiVersion": {"type": "string"},
                        "kind": {"type": "string"},
                        "metadata": {"type": "object"},
                        "spec": spec_schema(),
                        "status": status_schema(),
                    },
                }},
                // The controller writes status through its own subresource, so a
                // status write never races a spec edit (and `oc apply` never
                // overwrites status).
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Mode", "type": "string", "jsonPath": ".spec.storage.mode"},
                    {"name": "Workers", "type": "integer", "jsonPath": ".spec.hostedCluster.replicas"},
                    {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
                    {"name": "Reason", "type": "string", "priority": 1, "jsonPath": ".status.conditions[?(@.type==\"Ready\")].reason"},
                    {"name": "Capacity", "type": "string", "priority": 1, "jsonPath": ".spec.storage.capacity"},
                    {"name": "Cluster", "type": "string", "priority": 1, "jsonPath": ".spec.hostedCluster.name"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
            }],
        },
    })
}

/// Condition types the controller writes into `status.conditions`.
pub(crate) const CONDITION_TYPES: [&str; 7] = [
    "Valid",
    "ArrayReady",
    "ManagementApplied",
    "TenantApplied",
    "Ready",
    "Drifted",
    "Degraded",
];

/// Annotation that approves one apply of a `spec.apply: manual` object; the
/// controller removes it once that apply ran.
pub const APPROVE_ANNOTATION: &str = "pxfa.io/approve-apply";

/// The schema of `status`, as the controller writes it (see px-controller's
/// `status` module): observed generation, conditions, array object counts and the
/// last plan's summary.
pub(crate) fn status_schema() -> Value {
    let count = json!({"type": "integer", "format": "int64"});
    json!({
        "type": "object",
        "properties": {
            "observedGeneration": {"type": "integer", "format": "int64"},
            "conditions": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["type"],
                "items": {
                    "type": "object",
                    "required": ["type", "status"],
                    "properties": {
                        "type": {"type": "string", "enum": CONDITION_TYPES},
                        "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                        "reason": {"type": "string"},
                        "message": {"type": "string"},
                        "observedGeneration": {"type": "integer", "format": "int64"},
                        "lastTransitionTime": {"type": "string", "format": "date-time"},
                    },
                },
            },
            "arrayObjects": {
                "type": "object",
                "description": "Array objects of the tenant by kind, as last observed.",
                "additionalProperties": count,
            },
            "lastPlan": {
                "type": "object",
                "description": "Counts of the last plan, and the pending changes when approval is needed.",
                "properties": {
                    "create": count, "update": count, "delete": count, "noop": count,
                    "pending": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    })
}

/// The OpenAPI v3 schema of `spec`, made structural: subschemas inlined, no `$schema`
/// or `title`, `nullable` instead of `null` types, no unsigned-integer formats (the API
/// server knows only `int32`/`int64`).
pub(crate) fn spec_schema() -> Value {
    let generator = SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<TenantSpec>();
    let mut value = schema.to_value();
    structural(&mut value);
    value
}

/// Rewrites a schemars node into what a CRD accepts.
fn structural(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for key in [
                "$schema",
                "title",
                "definitions",
                "$defs",
                "components",
                "examples",
            ] {
                map.remove(key);
            }
            if let Some(Value::String(f)) = map.get("format")
                && f.starts_with("uint")
            {
                map.remove("format");
            }
            collapse_nullable(map);
            collapse_string_enum(map);
            drop_closed_objects(map);
            for child in map.values_mut() {
                structural(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(structural),
        _ => {}
    }
}

/// `deny_unknown_fields` comes out as `additionalProperties: false` beside
/// `properties`, which a structural schema forbids (the API server refuses the whole
/// CRD: "additionalProperties and properties are mutual exclusive"). The server prunes
/// unknown fields instead, and refuses them under strict field validation (`oc apply`'s
/// default); pxfa's parser refuses them with their path either way.
fn drop_closed_objects(map: &mut Map<String, Value>) {
    if map.contains_key("properties")
        && map.get("additionalProperties") == Some(&Value::Bool(false))
    {
        map.remove("additionalProperties");
    }
}

/// `Option<T>` comes out as `type: [T, "null"]`, or `anyOf: [T, {type: null}]` for
/// enums; structural schemas need one type plus `nullable: true`.
fn collapse_nullable(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get("type") {
        let named: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if named.len() < types.len() && named.len() == 1 {
            map.insert("type".into(), named[0].clone());
            map.insert("nullable".into(), Value::Bool(true));
        }
    }
    if let Some(Value::Array(enums)) = map.get("enum")
        && enums.iter().any(Value::is_null)
    {
        let kept: Vec<Value> = enums.iter().filter(|e| !e.is_null()).cloned().collect();
        map.insert("enum".into(), Value::Array(kept));
        map.insert("nullable".into(), Value::Bool(true));
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(alts)) = map.get(key) else {
            continue;
        };
        let is_null = |a: &Value| {
            a.get("type") == Some(&Value::String("null".into()))
                || a.get("enum") == Some(&Value::Array(vec![Value::Null]))
                || a.get("const") == Some(&Value::Null)
        };
        if alts.len() == 2 && alts.iter().any(is_null) {
            let Some(Value::Object(inner)) = alts.iter().find(|a| !is_null(a)).cloned() else {
                continue;
            };
            map.remove(key);
            for (k, val) in inner {
                map.entry(k).or_insert(val);
            }
            map.insert("nullable".into(), Value::Bool(true));
        }
    }
}

/// A unit-variant enum with documented variants comes out as `oneOf` one-value
/// string enums; a structural schema wants one `enum`. The variants' docs are kept in
/// the description.
fn collapse_string_enum(map: &mut Map<String, Value>) {
    let Some(Value::Array(alts)) = map.get("oneOf") else {
        return;
    };
    let mut values = Vec::new();
    let mut docs = Vec::new();
    for alt in alts {
        let one = alt
            .get("enum")
            .and_then(Value::as_array)
            .filter(|e| e.len() == 1)
            .and_then(|e| e[0].as_str())
            .or_else(|| alt.get("const").and_then(Value::as_str));
        match (alt.get("type").and_then(Value::as_str), one) {
            (Some("string"), Some(v)) => {
                if let Some(d) = alt.get("description").and_then(Value::as_str) {
                    docs.push(format!("{v}: {d}"));
                }
                values.push(Value::String(v.to_string()));
            }
            _ => return,
        }
    }
    map.remove("oneOf");
    map.insert("type".into(), Value::String("string".into()));
    if map.get("nullable") == Some(&Value::Bool(true)) {
        values.retain(|v| !v.is_null());
    }
    map.insert("enum".into(), Value::Array(values));
    if !docs.is_empty() {
        let head = map
            .get("description")
            .and_then(Value::as_str)
            .map(|d| format!("{d}\n"))
            .unwrap_or_default();
        map.insert("description".into(), Value::String(head + &docs.join("\n")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk<'a>(v: &'a Value, path: String, out: &mut Vec<(String, &'a Value)>) {
        out.push((path.clone(), v));
        match v {
            Value::Object(m) => m
                .iter()
                .for_each(|(k, c)| walk(c, format!("{path}.{k}"), out)),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, c)| walk(c, format!("{path}[{i}]"), out)),
            _ => {}
        }
    }

    #[test]
    fn crd_identity() {
        let crd = tenant_storage_crd();
        assert_eq!(crd["metadata"]["name"], "tenantstorages.pxfa.io");
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        assert_eq!(crd["spec"]["names"]["kind"], "TenantStorage");
        assert_eq!(crd["spec"]["versions"][0]["name"], "v1alpha1");
    }

    #[test]
    fn status_subresource_and_columns() {
        let crd = tenant_storage_crd();
        let v = &crd["spec"]["versions"][0];
        assert_eq!(v["subresources"]["status"], json!({}));
        let names: Vec<&str> = v["additionalPrinterColumns"]
            .as_array()
            .expect("columns")
            .iter()
            .filter(|c| c.get("priority").is_none())
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert_eq!(names, ["Mode", "Workers", "Ready", "Age"]);
        let status = &v["schema"]["openAPIV3Schema"]["properties"]["status"];
        let ok = json!({"observedGeneration": 3, "conditions": [
            {"type": "Ready", "status": "False", "reason": "ApprovalPending", "message": "2 changes"}],
            "arrayObjects": {"volume": 4}, "lastPlan": {"create": 2, "pending": ["+ volume a"]}});
        let v4 = jsonschema::draft4::new(status).expect("status schema compiles");
        assert!(v4.is_valid(&ok));
        let bad = json!({"conditions": [{"type": "Happy", "status": "True"}]});
        assert!(!v4.is_valid(&bad), "unknown condition types are refused");
    }

    #[test]
    fn controller_fields_are_optional_and_parse() {
        let mut spec = fixture_spec("valid-minimal.yaml");
        assert!(validator().is_valid(&spec), "without controller fields");
        spec["apply"] = json!("manual");
        spec["credentialsSecret"] = json!({"name": "fa1-creds"});
        spec["onDelete"] = json!("destroy");
        assert!(validator().is_valid(&spec));
        let parsed: crate::spec::TenantSpec = serde_json::from_value(spec).expect("parses");
        assert_eq!(parsed.apply, Some(crate::spec::ApplyPolicy::Manual));
        let creds = parsed.credentials_secret.expect("secret ref");
        assert_eq!(creds.pure_json_key, "pure.json");
        assert_eq!(creds.ca_key, "ca.crt");
        let mut wrong = fixture_spec("valid-minimal.yaml");
        wrong["apply"] = json!("sometimes");
        assert!(!validator().is_valid(&wrong));
    }

    #[test]
    fn schema_is_structural() {
        let crd = tenant_storage_crd();
        let mut nodes = Vec::new();
        walk(&crd, String::new(), &mut nodes);
        for (path, node) in nodes {
            let Value::Object(m) = node else { continue };
            for bad in ["$ref", "$schema", "oneOf", "definitions", "$defs"] {
                assert!(!m.contains_key(bad), "{bad} at {path}");
            }
            if m.contains_key("anyOf") {
                assert_eq!(
                    m.get("x-kubernetes-int-or-string"),
                    Some(&json!(true)),
                    "anyOf at {path}"
                );
            }
            // Under `properties`, keys are field names: a field may be called `type`.
            let field_names = path.ends_with(".properties");
            if let Some(t) = m.get("type").filter(|_| !field_names) {
                assert!(t.is_string(), "type at {path} is {t}");
                assert_ne!(t, "null", "null type at {path}");
            }
            if let Some(Value::String(f)) = m.get("format") {
                assert!(!f.starts_with("uint"), "format {f} at {path}");
            }
            assert!(
                field_names
                    || !(m.contains_key("properties") && m.contains_key("additionalProperties")),
                "properties and additionalProperties at {path} (the API server refuses that)"
            );
        }
    }

    #[test]
    fn schema_follows_the_parser() {
        let spec = spec_schema();
        let props = &spec["properties"];
        for field in [
            "hostedCluster",
            "storage",
            "array",
            "management",
            "network",
            "portworx",
        ] {
            assert!(props.get(field).is_some(), "missing spec.{field}");
        }
        // Structural: no `additionalProperties` beside `properties` (the API server
        // refuses such a CRD; it prunes unknown fields instead).
        assert!(
            spec.get("additionalProperties").is_none(),
            "additionalProperties beside properties"
        );
        let mode = &props["storage"]["properties"]["mode"];
        let modes: Vec<&str> = mode["enum"]
            .as_array()
            .expect("mode enum")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(modes, ["cloud-drive", "direct-access", "kubevirt-csi"]);
        let req = spec["required"].as_array().expect("required");
        assert!(req.contains(&json!("storage")));
        assert_eq!(props["network"]["nullable"], true);
        let capacity = &props["storage"]["properties"]["capacity"];
        assert_eq!(capacity["x-kubernetes-int-or-string"], true);
    }

    fn validator() -> jsonschema::Validator {
        jsonschema::draft4::new(&spec_schema()).expect("schema compiles")
    }

    fn fixture_spec(name: &str) -> Value {
        let path = format!(
            "{}/../../fixtures/tenants/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect(&path);
        let doc: Value = serde_saphyr::from_str(&text).expect("yaml");
        doc["spec"].clone()
    }

    #[test]
    fn valid_fixtures_pass_the_crd_schema() {
        let v = validator();
        for name in ["valid-full.yaml", "valid-minimal.yaml"] {
            let spec = fixture_spec(name);
            let errors: Vec<String> = v.iter_errors(&spec).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{name}: {errors:?}");
        }
    }

    #[test]
    fn parsed_and_serialised_spec_passes_the_crd_schema() {
        let path = format!(
            "{}/../../fixtures/tenants/valid-full.yaml",
            env!("CARGO_MANIFEST_DIR")
        );
        let spec = crate::spec::load_spec(&path).expect("valid fixture");
        let value = serde_json::to_value(&spec.spec).expect("serialises");
        let errors: Vec<String> = validator()
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn schema_refuses_unknown_modes() {
        let v = validator();
        let mut spec = fixture_spec("valid-minimal.yaml");
        spec["storage"]["mode"] = json!("nfs");
        assert!(!v.is_valid(&spec));
    }
}
