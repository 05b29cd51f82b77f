//! The spec parser: examples parse and validate, errors name their field path.

use px_topology::spec::{
    Attach, DiskBus, Protocol, SpecError, StorageMode, TenantStorage, Version, load_spec,
    parse_spec, parse_valid_spec,
};

fn example(name: &str) -> String {
    format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> String {
    format!(
        "{}/../../fixtures/tenants/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn direct_access() -> String {
    std::fs::read_to_string(example("tenant-direct-access.yaml")).unwrap()
}

fn parse_err(yaml: &str) -> SpecError {
    parse_spec(yaml).expect_err("spec should be refused")
}

fn errors(yaml: &str) -> Vec<SpecError> {
    parse_spec(yaml).expect("spec parses").validate()
}

fn has(errs: &[SpecError], path: &str, needle: &str) -> bool {
    errs.iter()
        .any(|e| e.path == path && e.message.contains(needle))
}

#[test]
fn every_example_parses_and_validates() {
    for f in [
        "tenant-direct-access.yaml",
        "tenant-cloud-drive.yaml",
        "tenant-kubevirt-csi.yaml",
    ] {
        let t = load_spec(example(f)).unwrap_or_else(|e| panic!("{f}:\n{e}"));
        assert_eq!(t.api_version, "pxfa.io/v1alpha1", "{f}");
    }
}

#[test]
fn direct_access_example_has_expected_values() {
    let t: TenantStorage = parse_valid_spec(&direct_access()).unwrap();
    assert_eq!(t.tenant_name(), "tenant-demo");
    assert_eq!(t.hcp_namespace(), "clusters-tenant-demo");
    assert_eq!(t.mode(), StorageMode::DirectAccess);
    assert_eq!(t.protocol(), Some(Protocol::Fc));
    assert_eq!(t.spec.storage.capacity, flasharray::Size::tib(4));
    assert_eq!(t.spec.storage.attach, Attach::Fada);
    assert_eq!(t.spec.storage.disk_bus, DiskBus::Scsi);
    assert_eq!(t.storage_nodes(), 3);
    assert_eq!(t.ocp_version(), Some(Version::new(4, 19, 10)));
    assert_eq!(t.virtualization_version(), Some(Version::new(4, 19, 2)));
    assert_eq!(t.spec.management.nodes.len(), 3);
    assert_eq!(
        t.spec.management.nodes[0].array_host().unwrap().as_str(),
        "worker-01"
    );
}

#[test]
fn defaults_are_filled_in() {
    let yaml = r#"
apiVersion: pxfa.io/v1alpha1
kind: TenantStorage
metadata: {name: t1}
spec:
  hostedCluster: {name: t1}
  storage: {mode: cloud-drive, protocol: nvme-tcp, capacity: 1Ti}
  array: {endpoint: 10.0.0.5}
  management:
    hostGroup: mgmt
    nodes: [{name: n1}]
"#;
    let t = parse_valid_spec(yaml).unwrap();
    let hc = &t.spec.hosted_cluster;
    assert_eq!(hc.namespace, "clusters");
    assert_eq!(hc.node_pool.as_deref(), Some("t1-workers"));
    assert_eq!((hc.replicas, hc.cores), (3, 8));
    assert_eq!(hc.memory, flasharray::Size::gib(32));
    assert_eq!(hc.root_volume_size, flasharray::Size::gib(128));
    assert_eq!(hc.root_storage_class, "pxfa-vm-rootdisk");
    let s = &t.spec.storage;
    assert_eq!(s.replication, 3);
    assert_eq!(s.drives_per_node, 1);
    assert_eq!(s.metadata_size, flasharray::Size::gib(64));
    assert_eq!(t.app_storage_class(), "px-repl3");
    assert_eq!(t.token_user(), "pxfa-t1");
    assert_eq!(t.spec.array.token_user.as_deref(), Some("pxfa-t1"));
    assert_eq!(t.portworx_cluster_name(), "px-t1");
    assert_eq!(t.spec.portworx.namespace, "portworx");
    assert_eq!(t.spec.portworx.version, Version::new(3, 6, 2));
    assert_eq!(t.max_pool_size(), flasharray::Size::tib(15));
    // The serialised form shows the effective values and parses back identically.
    let back: serde_json::Value = serde_json::to_value(&t).unwrap();
    assert_eq!(back["spec"]["hostedCluster"]["nodePool"], "t1-workers");
    let again = px_topology::spec::from_value(back).unwrap();
    assert_eq!(again, t);
}

#[test]
fn bad_size_names_its_path() {
    let y = direct_access().replace("capacity: 4Ti", "capacity: 4 TB");
    let e = parse_err(&y);
    assert_eq!(e.path, "spec.storage.capacity");
    assert!(e.message.contains("not a valid size"), "{e}");
    assert!(
        e.to_string().starts_with("spec.storage.capacity: \"4 TB\""),
        "{e}"
    );
}

#[test]
fn unknown_field_names_its_path_and_the_valid_ones() {
    let y = direct_access().replace("    mode: direct-access", "    modee: direct-access");
    let e = parse_err(&y);
    assert!(e.path.starts_with("spec.storage"), "{e}");
    assert!(e.message.contains("unknown field `modee`"), "{e}");
    assert!(e.message.contains("`mode`"), "{e}");
}

#[test]
fn unknown_mode_lists_valid_ones() {
    let y = direct_access().replace("mode: direct-access", "mode: nfs");
    let e = parse_err(&y);
    assert_eq!(e.path, "spec.storage.mode");
    for m in ["cloud-drive", "direct-access", "kubevirt-csi"] {
        assert!(e.message.contains(m), "{e}");
    }
}

#[test]
fn nested_list_errors_carry_the_index() {
    let y = direct_access().replace(
        "storageAddress: 10.40.0.102/20",
        "storageAddress: 10.40.0.102",
    );
    let e = parse_err(&y);
    assert_eq!(e.path, "spec.management.nodes[1].storageAddress", "{e}");
}

#[test]
fn unquoted_version_number_is_refused_with_advice() {
    let y = direct_access().replace(
        "virtualizationVersion: \"4.19.2\"",
        "virtualizationVersion: 4.20",
    );
    let e = parse_err(&y);
    assert_eq!(e.path, "spec.management.virtualizationVersion");
    assert!(e.message.contains("quote"), "{e}");
}

#[test]
fn broken_yaml_is_a_document_error() {
    let e = parse_err("apiVersion: [unclosed");
    assert_eq!(e.path, "document");
    let e = parse_err("- just\n- a list\n");
    assert_eq!(e.path, "document");
}

#[test]
fn invalid_pod_name_is_refused_at_parse() {
    let y = direct_access().replace("pod: tenant-demo", "pod: tenant_demo");
    let e = parse_err(&y);
    assert_eq!(e.path, "spec.storage.pod");
}

#[test]
fn validation_collects_every_problem() {
    let y = direct_access()
        .replace("apiVersion: pxfa.io/v1alpha1", "apiVersion: pxfa.io/v1")
        .replace("replication: 3", "replication: 4")
        .replace("vlan: 400", "vlan: 4095");
    let errs = errors(&y);
    assert!(has(&errs, "apiVersion", "pxfa.io/v1alpha1"), "{errs:?}");
    assert!(
        has(&errs, "spec.storage.replication", "1, 2 or 3"),
        "{errs:?}"
    );
    assert!(has(&errs, "spec.network.vlan", "4095"), "{errs:?}");
    let err = parse_valid_spec(&y).unwrap_err();
    assert_eq!(err.to_string().lines().count(), errs.len());
}

#[test]
fn invalid_fixtures_fail_with_the_documented_path() {
    // Each invalid fixture names, in its first line, the path its error must carry.
    let dir = format!("{}/../../fixtures/tenants", env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("invalid-") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let want = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| panic!("{name}: first line must be `# expect: <path>`"))
            .trim()
            .to_string();
        let paths: Vec<String> = match parse_spec(&text) {
            Err(e) => vec![e.path],
            Ok(t) => t.validate().into_iter().map(|e| e.path).collect(),
        };
        assert!(
            paths.contains(&want),
            "{name}: expected an error at {want}, got {paths:?}"
        );
        seen += 1;
    }
    assert!(seen >= 5, "only {seen} invalid fixtures");
    assert!(load_spec(fixture("valid-minimal.yaml")).is_ok());
}

/// Every key of a JSON value, depth first.
fn keys(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                out.insert(k.clone());
                keys(v, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

#[test]
fn docs_cover_every_field() {
    let t = load_spec(fixture("valid-full.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let docs =
        std::fs::read_to_string(format!("{}/../../docs/spec.md", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
    let mut all = std::collections::BTreeSet::new();
    // Labels and annotations hold free-form keys: only their own names count.
    let mut v = serde_json::to_value(&t).unwrap();
    v["metadata"]["labels"] = serde_json::json!({});
    v["metadata"]["annotations"] = serde_json::json!({});
    keys(&v, &mut all);
    let missing: Vec<_> = all
        .iter()
        .filter(|k| !docs.contains(&format!("{k}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/spec.md does not document {missing:?}"
    );
    // And the full fixture really sets every field: the parsed spec has no key that
    // the file does not write itself (no defaults filled in).
    let raw: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(fixture("valid-full.yaml")).unwrap())
            .unwrap();
    let mut written = std::collections::BTreeSet::new();
    keys(&raw, &mut written);
    let defaulted: Vec<_> = all.difference(&written).collect();
    assert!(
        defaulted.is_empty(),
        "valid-full.yaml leaves {defaulted:?} to defaults"
    );
}
