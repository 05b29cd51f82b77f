//! Every manifest pxfa renders for the example specs must be accepted by the
//! upstream CRD schema of its kind (with unknown fields refused, so typos fail), and
//! core kinds without a CRD must pass structural checks.
//!
//! Schemas come from `PXFA_SCHEMAS_DIR`, default `<workspace>/../shared/schemas`.
//! A missing directory (a fresh clone has no `../shared`) skips these tests with a loud
//! notice; `PXFA_REQUIRE_SCHEMAS=1` (set by `.ci/run`) makes it a failure instead.

use crate::support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use px_topology::{Form, Manifest};
use serde_json::Value;

/// One CRD's served versions: `apiVersion` -> compiled validator, plus the raw
/// schema for sub-tree (fragment) validation.
struct Crd {
    versions: BTreeMap<String, (jsonschema::Validator, Value)>,
}

#[allow(
    clippy::print_stderr,
    reason = "a skipped schema check must be loud in the test output"
)]
fn schemas_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("PXFA_SCHEMAS_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/schemas"),
    };
    if dir.is_dir() {
        return Some(dir);
    }
    let required = std::env::var("PXFA_REQUIRE_SCHEMAS").is_ok_and(|v| v == "1");
    eprintln!();
    eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
    eprintln!("!!! CRD SCHEMA DIRECTORY NOT FOUND: {}", dir.display());
    eprintln!("!!! SKIPPED: rendered manifests are NOT being validated against upstream CRDs.");
    eprintln!("!!! Set PXFA_SCHEMAS_DIR to the directory of CRD YAML files to run this check;");
    eprintln!("!!! CI sets PXFA_REQUIRE_SCHEMAS=1, which turns this skip into a failure.");
    eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
    assert!(
        !required,
        "CRD schema directory {} is missing and PXFA_REQUIRE_SCHEMAS=1",
        dir.display()
    );
    None
}

/// Adds `additionalProperties: false` to every object node that lists `properties`
/// and does not preserve unknown fields: the API server would silently prune an
/// unknown field, so a typo would otherwise pass unnoticed. Combinator branches
/// (`allOf`/`anyOf`/`oneOf`/`not`) are left alone: they often list a subset of the
/// properties and would then refuse valid objects.
fn close_objects(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    let preserve = map
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for v in props.values_mut() {
            close_objects(v);
        }
        if !preserve && !map.contains_key("additionalProperties") {
            map.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
    if let Some(items) = map.get_mut("items") {
        close_objects(items);
    }
    if let Some(ap @ Value::Object(_)) = map.get_mut("additionalProperties") {
        close_objects(ap);
    }
}

/// The API server accepts `apiVersion`, `kind` and `metadata` on every object even
/// when a CRD schema lists only `spec` (the NAD CRD does); declare them so that
/// closing the root does not refuse them.
fn add_object_meta(schema: &mut Value) {
    let Some(Value::Object(props)) = schema.get_mut("properties") else {
        return;
    };
    for (k, t) in [
        ("apiVersion", "string"),
        ("kind", "string"),
        ("metadata", "object"),
    ] {
        props
            .entry(k)
            .or_insert_with(|| serde_json::json!({"type": t}));
    }
}

fn load_crds(dir: &std::path::Path) -> BTreeMap<String, Crd> {
    let mut out = BTreeMap::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no CRD files in {}", dir.display());
    for f in files {
        load_crd_file(&f, &mut out);
    }
    out
}

/// The CRDs of one file, added to `out`.
fn load_crd_file(f: &std::path::Path, out: &mut BTreeMap<String, Crd>) {
    {
        let text = std::fs::read_to_string(f).unwrap();
        let docs: Vec<Value> =
            serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for crd in docs {
            if crd.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
                continue;
            }
            let kind = crd["spec"]["names"]["kind"].as_str().unwrap().to_string();
            let group = crd["spec"]["group"].as_str().unwrap();
            let mut versions = BTreeMap::new();
            for v in crd["spec"]["versions"].as_array().unwrap() {
                if v["served"] != Value::Bool(true) {
                    continue;
                }
                let mut schema = v["schema"]["openAPIV3Schema"].clone();
                add_object_meta(&mut schema);
                close_objects(&mut schema);
                let validator = jsonschema::draft4::new(&schema)
                    .unwrap_or_else(|e| panic!("{}: schema does not compile: {e}", f.display()));
                let api = format!("{group}/{}", v["name"].as_str().unwrap());
                versions.insert(api, (validator, schema));
            }
            out.insert(kind, Crd { versions });
        }
    }
}

fn errors_of(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// The schema node at a dotted path of object properties.
fn sub_schema<'a>(schema: &'a Value, path: &str) -> &'a Value {
    let mut cur = schema;
    for part in path.split('.') {
        cur = cur
            .get("properties")
            .and_then(|p| p.get(part))
            .unwrap_or_else(|| panic!("schema has no property {part} on the way to {path}"));
    }
    cur
}

fn value_at<'a>(v: &'a Value, path: &str) -> &'a Value {
    let mut cur = v;
    for part in path.split('.') {
        cur = cur
            .get(part)
            .unwrap_or_else(|| panic!("fragment has no {part} on the way to {path}"));
    }
    cur
}

fn check_against_crd(m: &Manifest, crd: &Crd) -> Vec<String> {
    let where_ = format!("{}/{}", m.cluster.dir_name(), m.file_name);
    match &m.form {
        Form::Resource => {
            let api = m.body["apiVersion"].as_str().unwrap_or_default();
            let Some((validator, _)) = crd.versions.get(api) else {
                return vec![format!(
                    "{where_}: apiVersion {api} is not served by the {} CRD",
                    m.kind
                )];
            };
            errors_of(validator, &m.body)
                .into_iter()
                .map(|e| format!("{where_}: {e}"))
                .collect()
        }
        Form::Fragment { path } => {
            let api = m.body["apiVersion"].as_str().unwrap_or_default();
            let Some((_, schema)) = crd.versions.get(api) else {
                return vec![format!("{where_}: apiVersion {api} is not served")];
            };
            let sub = sub_schema(schema, path);
            let validator = jsonschema::draft4::new(sub).unwrap();
            errors_of(&validator, value_at(&m.body, path))
                .into_iter()
                .map(|e| format!("{where_} at {path}: {e}"))
                .collect()
        }
        Form::JsonPatch { .. } | Form::MergePatch { .. } => {
            vec![format!("{where_}: a patch cannot be checked against a CRD")]
        }
    }
}

fn strings_map(v: &Value, what: &str) {
    let map = v
        .as_object()
        .unwrap_or_else(|| panic!("{what} is not a map"));
    for (k, val) in map {
        assert!(val.is_string(), "{what}.{k} must be a string, got {val}");
    }
}

/// Structural checks for the core kinds, which have no CRD.
fn check_core(m: &Manifest) {
    let b = &m.body;
    let where_ = format!("{}/{}", m.cluster.dir_name(), m.file_name);
    assert!(!m.name.is_empty(), "{where_}: no metadata.name");
    let keys: Vec<&String> = b.as_object().unwrap().keys().collect();
    assert_eq!(
        keys[0], "apiVersion",
        "{where_}: keys out of order: {keys:?}"
    );
    assert_eq!(keys[1], "kind", "{where_}: keys out of order: {keys:?}");
    assert_eq!(keys[2], "metadata", "{where_}: keys out of order: {keys:?}");
    match m.kind.as_str() {
        "StorageClass" => {
            assert_eq!(b["apiVersion"], "storage.k8s.io/v1", "{where_}");
            assert!(b["provisioner"].is_string(), "{where_}: provisioner");
            strings_map(&b["parameters"], &format!("{where_} parameters"));
            let mode = b["volumeBindingMode"].as_str().unwrap();
            assert!(
                ["Immediate", "WaitForFirstConsumer"].contains(&mode),
                "{where_}"
            );
            assert!(
                m.namespace.is_none(),
                "{where_}: StorageClass is cluster-scoped"
            );
        }
        "PersistentVolumeClaim" => {
            assert_eq!(b["apiVersion"], "v1", "{where_}");
            assert!(m.namespace.is_some(), "{where_}: PVC needs a namespace");
            let modes = b["spec"]["accessModes"].as_array().unwrap();
            assert!(!modes.is_empty(), "{where_}");
            for am in modes {
                assert!(
                    [
                        "ReadWriteOnce",
                        "ReadWriteMany",
                        "ReadOnlyMany",
                        "ReadWriteOncePod"
                    ]
                    .contains(&am.as_str().unwrap()),
                    "{where_}: access mode {am}"
                );
            }
            if let Some(vm) = b["spec"].get("volumeMode") {
                assert!(
                    ["Block", "Filesystem"].contains(&vm.as_str().unwrap()),
                    "{where_}"
                );
            }
            let q = b["spec"]["resources"]["requests"]["storage"]
                .as_str()
                .unwrap();
            assert!(
                q.ends_with("Gi") || q.ends_with("Mi"),
                "{where_}: quantity {q}"
            );
            assert!(b["spec"]["storageClassName"].is_string(), "{where_}");
            if let Some(ann) = b["metadata"].get("annotations") {
                strings_map(ann, &format!("{where_} annotations"));
            }
        }
        "Namespace" => {
            assert_eq!(b["apiVersion"], "v1", "{where_}");
            assert!(m.namespace.is_none(), "{where_}");
        }
        "Secret" => {
            assert_eq!(b["apiVersion"], "v1", "{where_}");
            strings_map(&b["stringData"], &format!("{where_} stringData"));
            assert!(m.secret, "{where_}: a Secret must be marked secret");
            if b["type"] == "kubernetes.io/dockerconfigjson" {
                assert!(
                    b["stringData"][".dockerconfigjson"].is_string(),
                    "{where_}: a dockerconfigjson Secret holds .dockerconfigjson"
                );
                return;
            }
            assert_eq!(b["type"], "Opaque", "{where_}");
            if m.name == "px-pure-secret" {
                let pure: Value =
                    serde_json::from_str(b["stringData"]["pure.json"].as_str().unwrap()).unwrap();
                let fa = &pure["FlashArrays"][0];
                assert!(
                    fa["MgmtEndPoint"].is_string() && fa["APIToken"].is_string(),
                    "{where_}"
                );
            }
        }
        "ConfigMap" => {
            assert_eq!(b["apiVersion"], "v1", "{where_}");
            strings_map(&b["data"], &format!("{where_} data"));
            let mc: Value = serde_saphyr::from_str(b["data"]["config"].as_str().unwrap()).unwrap();
            assert_eq!(mc["kind"], "MachineConfig", "{where_}");
            assert_eq!(
                mc["spec"]["config"]["ignition"]["version"], "3.2.0",
                "{where_}"
            );
        }
        "MachineConfig" => {
            assert_eq!(
                b["apiVersion"], "machineconfiguration.openshift.io/v1",
                "{where_}"
            );
            assert_eq!(
                b["metadata"]["labels"]["machineconfiguration.openshift.io/role"], "worker",
                "{where_}"
            );
            assert_eq!(
                b["spec"]["config"]["ignition"]["version"], "3.2.0",
                "{where_}"
            );
            for f in b["spec"]["config"]["storage"]["files"].as_array().unwrap() {
                assert!(f["path"].as_str().unwrap().starts_with("/etc/"), "{where_}");
                assert!(
                    f["contents"]["source"]
                        .as_str()
                        .unwrap()
                        .starts_with("data:text/plain;charset=utf-8;base64,"),
                    "{where_}"
                );
            }
        }
        "OperatorGroup" => {
            assert_eq!(b["apiVersion"], "operators.coreos.com/v1", "{where_}");
            assert_eq!(
                b["spec"]["targetNamespaces"],
                serde_json::json!([m.namespace.clone().unwrap()]),
                "{where_}: the operator watches its own namespace"
            );
        }
        "Subscription" => {
            assert_eq!(b["apiVersion"], "operators.coreos.com/v1alpha1", "{where_}");
            let s = &b["spec"];
            for k in ["name", "source", "sourceNamespace", "installPlanApproval"] {
                assert!(s[k].is_string(), "{where_}: spec.{k}");
            }
            assert!(
                ["Automatic", "Manual"].contains(&s["installPlanApproval"].as_str().unwrap()),
                "{where_}"
            );
        }
        other => panic!("{where_}: kind {other} has neither a CRD nor structural checks"),
    }
}

fn check_patch(m: &Manifest) {
    let where_ = format!("{}/{}", m.cluster.dir_name(), m.file_name);
    let ops = m
        .body
        .as_array()
        .unwrap_or_else(|| panic!("{where_}: a JSON patch is a list"));
    assert!(!ops.is_empty(), "{where_}: empty patch");
    // Each patched kind may only touch the sub-tree pxfa owns in it.
    let prefix = match m.kind.as_str() {
        "VirtualMachine" => "/spec/template/spec/",
        "MultiClusterEngine" => "/spec/overrides",
        other => panic!("{where_}: unexpected patch of {other}"),
    };
    for op in ops {
        assert_eq!(op["op"], "add", "{where_}");
        let path = op["path"].as_str().unwrap();
        assert!(path.starts_with(prefix), "{where_}: {path}");
        assert!(op.get("value").is_some(), "{where_}");
    }
}

/// A merge patch: the object's identity plus the fields pxfa sets, and nothing else.
/// The IngressController's `spec.routeAdmission.wildcardPolicy` (a merge keeps
/// `namespaceOwnership`); the HyperConverged's eviction settings, each validated
/// against the HyperConverged CRD (`more/` of the schema directory).
fn check_merge_patch(m: &Manifest, dir: &std::path::Path) -> Vec<String> {
    let where_ = format!("{}/{}", m.cluster.dir_name(), m.file_name);
    let b = &m.body;
    match m.kind.as_str() {
        "IngressController" => {
            assert_eq!(b["apiVersion"], "operator.openshift.io/v1", "{where_}");
            assert_eq!(b["metadata"]["name"], "default", "{where_}");
            assert_eq!(
                b["metadata"]["namespace"], "openshift-ingress-operator",
                "{where_}"
            );
            assert_eq!(
                b["spec"],
                serde_json::json!({"routeAdmission": {"wildcardPolicy": "WildcardsAllowed"}}),
                "{where_}: only routeAdmission.wildcardPolicy"
            );
            Vec::new()
        }
        "HyperConverged" => {
            assert_eq!(b["metadata"]["name"], "kubevirt-hyperconverged", "{where_}");
            assert_eq!(b["metadata"]["namespace"], "openshift-cnv", "{where_}");
            let spec = b["spec"].as_object().expect("a spec");
            let keys: Vec<&str> = spec.keys().map(String::as_str).collect();
            assert_eq!(
                keys,
                ["evictionStrategy", "workloadUpdateStrategy"],
                "{where_}: only the eviction settings"
            );
            let mut crds = BTreeMap::new();
            load_crd_file(
                &dir.join("more/hyperconverged.hco.kubevirt.io.yaml"),
                &mut crds,
            );
            let api = b["apiVersion"].as_str().unwrap_or_default();
            let Some((_, schema)) = crds["HyperConverged"].versions.get(api) else {
                return vec![format!("{where_}: apiVersion {api} is not served")];
            };
            let mut out = Vec::new();
            for (k, v) in spec {
                let sub = sub_schema(schema, &format!("spec.{k}"));
                let validator = jsonschema::draft4::new(sub).unwrap();
                out.extend(
                    errors_of(&validator, v)
                        .into_iter()
                        .map(|e| format!("{where_} at spec.{k}: {e}")),
                );
            }
            out
        }
        other => panic!("{where_}: unexpected merge patch of {other}"),
    }
}

#[test]
fn every_rendered_manifest_validates() {
    let Some(dir) = schemas_dir() else { return };
    let crds = load_crds(&dir);
    let mut failures = Vec::new();
    let mut checked_crd = 0;
    // Every example (cloud-drive's on an OVN-Kubernetes localnet network with
    // persistent IPs), and cloud-drive on a linux bridge with whereabouts (the linux
    // bridge NNCPs and the bridge CNI NAD).
    let mut specs = support::example_specs();
    let mut bridge = specs
        .iter()
        .find(|(m, _)| *m == "cloud-drive")
        .map(|(_, s)| s.clone())
        .expect("the cloud-drive example");
    bridge.spec.network.as_mut().unwrap().persistent_ips = Some(false);
    specs.push(("cloud-drive (whereabouts)", bridge));
    for (mode, spec) in specs {
        let manifests = support::rendered(&spec);
        assert!(!manifests.is_empty());
        for m in &manifests {
            match (&m.form, crds.get(&m.kind)) {
                (Form::JsonPatch { .. }, _) => check_patch(m),
                (Form::MergePatch { .. }, _) => failures.extend(
                    check_merge_patch(m, &dir)
                        .into_iter()
                        .map(|e| format!("[{mode}] {e}")),
                ),
                (_, Some(crd)) => {
                    checked_crd += 1;
                    failures.extend(
                        check_against_crd(m, crd)
                            .into_iter()
                            .map(|e| format!("[{mode}] {e}")),
                    );
                }
                (Form::Resource, None) => check_core(m),
                (Form::Fragment { .. }, None) => {
                    failures.push(format!("[{mode}] fragment of {} has no CRD", m.kind))
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "schema violations:\n{}",
        failures.join("\n")
    );
    assert!(
        checked_crd >= 10,
        "only {checked_crd} manifests were checked against CRDs"
    );
}

#[test]
fn the_harness_catches_typos_and_wrong_types() {
    let Some(dir) = schemas_dir() else { return };
    let crds = load_crds(&dir);
    let (_, spec) = support::example_specs()
        .into_iter()
        .find(|(m, _)| *m == "direct-access")
        .unwrap();
    let manifests = support::rendered(&spec);
    let sc = manifests
        .iter()
        .find(|m| m.kind == "StorageCluster")
        .unwrap();
    let crd = &crds["StorageCluster"];
    assert!(check_against_crd(sc, crd).is_empty());

    let mut typo = sc.clone();
    typo.body["spec"]["storag"] = typo.body["spec"]["storage"].clone();
    assert!(
        !check_against_crd(&typo, crd).is_empty(),
        "unknown field accepted"
    );

    let mut wrong = sc.clone();
    wrong.body["spec"]["storage"]["devices"] = Value::String("/dev/sdb".into());
    assert!(
        !check_against_crd(&wrong, crd).is_empty(),
        "string devices accepted"
    );

    let np = manifests.iter().find(|m| m.kind == "NodePool").unwrap();
    let mut bad = np.clone();
    bad.body["spec"]["management"]["upgradeType"] = Value::String("Sideways".into());
    assert!(
        !check_against_crd(&bad, &crds["NodePool"]).is_empty(),
        "bad enum accepted"
    );
}
