//! Manifest lint rules: each fires on a one-field change of a clean set and stays
//! quiet on the clean set.

use std::collections::BTreeSet;

use px_topology::{Severity, lint_manifests, lint_path};
use serde_json::{Value, json};

fn good() -> Vec<Value> {
    let path = format!(
        "{}/../../fixtures/tenants/manifests/good.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_saphyr::from_multiple(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn find<'a>(docs: &'a mut [Value], kind: &str, name: &str) -> &'a mut Value {
    docs.iter_mut()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{kind}/{name} not in the fixture"))
}

fn set(doc: &mut Value, ptr: &str, v: Value) {
    *doc.pointer_mut(ptr).unwrap_or_else(|| panic!("{ptr}")) = v;
}

fn rules(docs: &[Value]) -> BTreeSet<&'static str> {
    lint_manifests(docs).into_iter().map(|f| f.rule).collect()
}

/// Applies `change` to the clean set and checks that exactly `rule` fires.
fn fires_alone(rule: &str, change: impl FnOnce(&mut Vec<Value>)) {
    let mut docs = good();
    change(&mut docs);
    let got = rules(&docs);
    assert_eq!(got, BTreeSet::from([rule]), "{:#?}", lint_manifests(&docs));
}

#[test]
fn clean_set_is_quiet() {
    let f = lint_manifests(&good());
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn pxfa001_old_portworx() {
    fires_alone("PXFA001", |d| {
        set(
            find(d, "StorageCluster", "px-tenant1"),
            "/spec/image",
            json!("portworx/oci-monitor:3.5.1"),
        )
    });
    fires_alone("PXFA001", |d| {
        find(d, "StorageCluster", "px-tenant1")["spec"]["version"] = json!("3.6.1");
    });
}

#[test]
fn pxfa002_upgrade_type() {
    fires_alone("PXFA002", |d| {
        set(
            find(d, "NodePool", "tenant1-workers"),
            "/spec/management/upgradeType",
            json!("Replace"),
        )
    });
}

#[test]
fn pxfa003_auto_repair() {
    fires_alone("PXFA003", |d| {
        set(
            find(d, "NodePool", "tenant1-workers"),
            "/spec/management/autoRepair",
            json!(true),
        )
    });
}

#[test]
fn pxfa004_root_volume_rwx_block() {
    fires_alone("PXFA004", |d| {
        set(
            find(d, "NodePool", "tenant1-workers"),
            "/spec/platform/kubevirt/rootVolume/persistent/volumeMode",
            json!("Filesystem"),
        )
    });
    fires_alone("PXFA004", |d| {
        set(
            find(d, "NodePool", "tenant1-workers"),
            "/spec/platform/kubevirt/rootVolume/persistent/accessModes",
            json!(["ReadWriteOnce"]),
        )
    });
}

#[test]
fn pxfa005_006_007_px_storev2_minimums() {
    fires_alone("PXFA005", |d| {
        set(
            find(d, "NodePool", "tenant1-workers"),
            "/spec/platform/kubevirt/compute/cores",
            json!(4),
        )
    });
    fires_alone("PXFA006", |d| {
        set(
            find(d, "NodePool", "tenant1-workers"),
            "/spec/platform/kubevirt/compute/memory",
            json!("6Gi"),
        )
    });
    fires_alone("PXFA007", |d| {
        set(
            find(d, "NodePool", "tenant1-workers"),
            "/spec/platform/kubevirt/rootVolume/persistent/size",
            json!("64Gi"),
        )
    });
}

#[test]
fn pxfa008_repl_above_nodes() {
    fires_alone("PXFA008", |d| {
        set(
            find(d, "NodePool", "tenant1-workers"),
            "/spec/replicas",
            json!(2),
        )
    });
}

#[test]
fn pxfa009_nodiscard() {
    // Known-bad virtualization version: error.
    let mut docs = good();
    set(
        find(&mut docs, "HyperConverged", "kubevirt-hyperconverged"),
        "/status/versions/0/version",
        json!("4.18.3"),
    );
    let f = lint_manifests(&docs);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!((f[0].rule, f[0].severity), ("PXFA009", Severity::Error));
    assert_eq!(f[0].object, "StorageClass/pxfa-vm-rootdisk");
    // Unknown virtualization version: warning.
    let mut docs = good();
    docs.retain(|d| d["kind"] != "HyperConverged");
    let f = lint_manifests(&docs);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!((f[0].rule, f[0].severity), ("PXFA009", Severity::Warning));
    // Management OCP 4.20 before 4.20.27.
    fires_alone("PXFA009", |d| {
        set(
            find(d, "ClusterVersion", "version"),
            "/status/desired/version",
            json!("4.20.3"),
        )
    });
    // The tenant's release does not count: the discard problems are on the
    // management nodes.
    let mut docs = good();
    set(
        find(&mut docs, "NodePool", "tenant1-workers"),
        "/spec/release/image",
        json!("quay.io/openshift-release-dev/ocp-release:4.20.3-multi"),
    );
    assert!(rules(&docs).is_empty(), "{:#?}", lint_manifests(&docs));
    // nodiscard present: quiet even with a bad version.
    let mut docs = good();
    set(
        find(&mut docs, "HyperConverged", "kubevirt-hyperconverged"),
        "/status/versions/0/version",
        json!("4.18.3"),
    );
    find(&mut docs, "StorageClass", "pxfa-vm-rootdisk")["parameters"]["nodiscard"] = json!("true");
    assert!(rules(&docs).is_empty());
    // A Portworx class that holds no root disks is not concerned.
    let mut docs = good();
    set(
        find(&mut docs, "HyperConverged", "kubevirt-hyperconverged"),
        "/status/versions/0/version",
        json!("4.18.3"),
    );
    find(&mut docs, "StorageClass", "pxfa-vm-rootdisk")["metadata"]["name"] = json!("px-other");
    set(
        find(&mut docs, "NodePool", "tenant1-workers"),
        "/spec/platform/kubevirt/rootVolume/persistent/storageClass",
        json!("px-repl3"),
    );
    find(&mut docs, "StorageClass", "px-repl3")["parameters"]["nodiscard"] = json!("true");
    assert!(rules(&docs).is_empty(), "{:#?}", lint_manifests(&docs));
}

#[test]
fn pxfa010_no_network() {
    fires_alone("PXFA010", |d| {
        let np = find(d, "NodePool", "tenant1-workers");
        set(
            np,
            "/spec/platform/kubevirt/attachDefaultNetwork",
            json!(false),
        );
        set(np, "/spec/platform/kubevirt/additionalNetworks", json!([]));
    });
    // attachDefaultNetwork false with a storage network is fine.
    let mut docs = good();
    set(
        find(&mut docs, "NodePool", "tenant1-workers"),
        "/spec/platform/kubevirt/attachDefaultNetwork",
        json!(false),
    );
    assert!(rules(&docs).is_empty());
}

#[test]
fn pxfa011_iscsi_ifaces() {
    fires_alone("PXFA011", |d| {
        let sc = find(d, "StorageCluster", "px-tenant1");
        sc["spec"]["env"]
            .as_array_mut()
            .unwrap()
            .retain(|e| e["name"] != "PURE_ISCSI_ALLOWED_IFACES");
    });
    // One NIC only: quiet.
    let mut docs = good();
    let sc = find(&mut docs, "StorageCluster", "px-tenant1");
    sc["spec"]["env"]
        .as_array_mut()
        .unwrap()
        .retain(|e| e["name"] != "PURE_ISCSI_ALLOWED_IFACES");
    set(
        find(&mut docs, "NodePool", "tenant1-workers"),
        "/spec/platform/kubevirt/additionalNetworks",
        json!([]),
    );
    assert!(rules(&docs).is_empty());
}

#[test]
fn pxfa012_storage_and_cloud_storage() {
    fires_alone("PXFA012", |d| {
        find(d, "StorageCluster", "px-tenant1")["spec"]["storage"] =
            json!({"devices": ["/dev/sdb"]});
    });
}

#[test]
fn pxfa013_max_storage_nodes() {
    fires_alone("PXFA013", |d| {
        find(d, "StorageCluster", "px-tenant1")["spec"]["cloudStorage"]["maxStorageNodesPerZone"] =
            json!(1);
    });
}

#[test]
fn pxfa014_pure_secret() {
    // Wrong name.
    fires_alone("PXFA014", |d| {
        set(
            find(d, "Secret", "px-pure-secret"),
            "/metadata/name",
            json!("pure-secret"),
        )
    });
    // Wrong key.
    fires_alone("PXFA014", |d| {
        find(d, "Secret", "px-pure-secret")["stringData"] = json!({"config.json": "{}"});
    });
    // Wrong namespace.
    fires_alone("PXFA014", |d| {
        set(
            find(d, "Secret", "px-pure-secret"),
            "/metadata/namespace",
            json!("kube-system"),
        )
    });
}

#[test]
fn pxfa015_duplicate_nncp_address() {
    fires_alone("PXFA015", |d| {
        set(
            find(d, "NodeNetworkConfigurationPolicy", "br-storage-worker-02"),
            "/spec/desiredState/interfaces/0/ipv4/address/0/ip",
            json!("10.40.0.101"),
        )
    });
}

#[test]
fn pxfa016_hypershift_preview() {
    fires_alone("PXFA016", |d| {
        set(
            find(d, "MultiClusterEngine", "multiclusterengine"),
            "/spec/overrides/components/0/name",
            json!("hypershift-preview"),
        )
    });
}

#[test]
fn pxfa017_rwx_on_kubevirt_csi() {
    // RWX Filesystem (the default volume mode) cannot work: an error.
    fires_alone("PXFA017", |d| {
        set(
            find(d, "PersistentVolumeClaim", "data"),
            "/spec/accessModes",
            json!(["ReadWriteMany"]),
        )
    });
    // RWX on a Portworx class is fine.
    let mut docs = good();
    let pvc = find(&mut docs, "PersistentVolumeClaim", "data");
    set(pvc, "/spec/accessModes", json!(["ReadWriteMany"]));
    set(pvc, "/spec/storageClassName", json!("px-repl3"));
    assert!(rules(&docs).is_empty());
}

#[test]
fn list_documents_are_flattened() {
    let mut docs = good();
    set(
        find(&mut docs, "NodePool", "tenant1-workers"),
        "/spec/management/autoRepair",
        json!(true),
    );
    let list = json!({"apiVersion": "v1", "kind": "List", "items": docs});
    assert_eq!(rules(&[list]), BTreeSet::from(["PXFA003"]));
}

#[test]
fn lint_path_reads_directories_and_multi_document_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut docs = good();
    set(
        find(&mut docs, "NodePool", "tenant1-workers"),
        "/spec/management/upgradeType",
        json!("Replace"),
    );
    let (np, rest): (Vec<Value>, Vec<Value>) =
        docs.into_iter().partition(|d| d["kind"] == "NodePool");
    std::fs::write(
        dir.path().join("nodepool.yaml"),
        serde_saphyr::to_string_multiple(&np).unwrap(),
    )
    .unwrap();
    let sub = dir.path().join("more");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(
        sub.join("rest.yml"),
        serde_saphyr::to_string_multiple(&rest).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.path().join("README.md"), "not yaml: [").unwrap();
    let f = lint_path(dir.path()).unwrap();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].rule, "PXFA002");
    assert!(f[0].source.as_deref().unwrap().ends_with("nodepool.yaml"));
    assert!(f[0].to_string().contains("PXFA002"));
}

#[test]
fn lint_path_reports_unreadable_input() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "a: [unclosed").unwrap();
    let e = lint_path(&bad).unwrap_err();
    assert!(e.path.ends_with("bad.yaml"));
    assert!(lint_path(dir.path().join("missing.yaml")).is_err());
}

#[test]
fn lint_paths_relates_objects_across_inputs() {
    // The secret and the StorageCluster in different files given separately: the
    // namespace rule still sees both.
    let dir = tempfile::tempdir().unwrap();
    let mut docs = good();
    set(
        find(&mut docs, "Secret", "px-pure-secret"),
        "/metadata/namespace",
        json!("kube-system"),
    );
    let (secret, rest): (Vec<Value>, Vec<Value>) =
        docs.into_iter().partition(|d| d["kind"] == "Secret");
    let a = dir.path().join("secret.yaml");
    let b = dir.path().join("rest.yaml");
    std::fs::write(&a, serde_saphyr::to_string_multiple(&secret).unwrap()).unwrap();
    std::fs::write(&b, serde_saphyr::to_string_multiple(&rest).unwrap()).unwrap();
    let f = px_topology::lint_paths([&a, &b]).unwrap();
    assert_eq!(
        f.iter().map(|f| f.rule).collect::<Vec<_>>(),
        vec!["PXFA014"],
        "{f:#?}"
    );
    assert!(lint_path(&a).unwrap().is_empty());
}

#[test]
fn hypershift_defaults_count_when_fields_are_unset() {
    // No cores: HyperShift gives 2.
    fires_alone("PXFA005", |d| {
        let np = find(d, "NodePool", "tenant1-workers");
        np["spec"]["platform"]["kubevirt"]["compute"]
            .as_object_mut()
            .unwrap()
            .remove("cores");
    });
    // No root size: 32Gi.
    fires_alone("PXFA007", |d| {
        let np = find(d, "NodePool", "tenant1-workers");
        np["spec"]["platform"]["kubevirt"]["rootVolume"]["persistent"]
            .as_object_mut()
            .unwrap()
            .remove("size");
    });
    // No access mode or volume mode: the StorageProfile decides; a warning.
    let mut docs = good();
    let p = &mut find(&mut docs, "NodePool", "tenant1-workers")["spec"]["platform"]["kubevirt"]["rootVolume"]
        ["persistent"];
    let p = p.as_object_mut().unwrap();
    p.remove("accessModes");
    p.remove("volumeMode");
    let f = lint_manifests(&docs);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!((f[0].rule, f[0].severity), ("PXFA004", Severity::Warning));
}

#[test]
fn px_storev2_minimums_only_warn_without_a_storage_cluster() {
    let mut docs = good();
    set(
        find(&mut docs, "NodePool", "tenant1-workers"),
        "/spec/platform/kubevirt/compute/cores",
        json!(4),
    );
    let f = lint_manifests(&docs);
    assert_eq!((f[0].rule, f[0].severity), ("PXFA005", Severity::Error));
    docs.retain(|d| d["kind"] != "StorageCluster");
    let f = lint_manifests(&docs);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!((f[0].rule, f[0].severity), ("PXFA005", Severity::Warning));
}

#[test]
fn pxfa008_ignores_management_side_classes() {
    // Two workers: only the tenant's px-repl3 is wrong; the root-disk class is served
    // by the management Portworx and the FADA class has no repl of the tenant's.
    let mut docs = good();
    set(
        find(&mut docs, "NodePool", "tenant1-workers"),
        "/spec/replicas",
        json!(2),
    );
    docs.push(json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "pxfa-fada-block"},
        "provisioner": "pxd.portworx.com",
        "parameters": {"backend": "pure_block", "repl": "3"}
    }));
    let f = lint_manifests(&docs);
    let objects: Vec<&str> = f.iter().map(|f| f.object.as_str()).collect();
    assert_eq!(objects, vec!["StorageClass/px-repl3"], "{f:#?}");
}

#[test]
fn pxfa009_covers_kubevirt_csi_infra_classes() {
    let mut docs = good();
    set(
        find(&mut docs, "HyperConverged", "kubevirt-hyperconverged"),
        "/status/versions/0/version",
        json!("4.18.3"),
    );
    // Root disks on a class of another name; the kubevirt-csi infra class stays
    // pxfa-vm-rootdisk and still needs nodiscard.
    set(
        find(&mut docs, "NodePool", "tenant1-workers"),
        "/spec/platform/kubevirt/rootVolume/persistent/storageClass",
        json!("px-repl3"),
    );
    find(&mut docs, "StorageClass", "px-repl3")["parameters"]["nodiscard"] = json!("true");
    find(&mut docs, "StorageClass", "pxfa-vm-rootdisk")["metadata"]["name"] = json!("px-infra");
    set(
        find(&mut docs, "StorageClass", "px-kubevirt-csi"),
        "/parameters/infraStorageClassName",
        json!("px-infra"),
    );
    let f = lint_manifests(&docs);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        (f[0].rule, f[0].object.as_str()),
        ("PXFA009", "StorageClass/px-infra")
    );
}

/// A node's reported state (`oc get nns -o yaml`) showing `bridge` as a linux bridge.
fn node_state(node: &str, bridge: &str) -> Value {
    json!({
        "apiVersion": "nmstate.io/v1beta1",
        "kind": "NodeNetworkState",
        "metadata": {"name": node},
        "status": {"currentState": {"interfaces": [
            {"name": "ens1f1", "type": "ethernet", "state": "up"},
            {"name": bridge, "type": "linux-bridge", "state": "up"},
        ]}},
    })
}

/// PXFA035: an OVS policy over a bridge the set shows as a linux bridge on that node
/// (the node's state, or another tenant's policy) is refused; another node's linux
/// bridge, or the node's state alone, is not a conversion.
#[test]
fn pxfa035_linux_bridge_converted_to_ovs() {
    let mut docs = good();
    docs.push(node_state("worker-02", "br-storage"));
    assert!(rules(&docs).is_empty(), "{:#?}", lint_manifests(&docs));
    set(
        find(
            &mut docs,
            "NodeNetworkConfigurationPolicy",
            "br-storage-worker-02",
        ),
        "/spec/desiredState/interfaces/0/type",
        json!("ovs-bridge"),
    );
    assert_eq!(rules(&docs), BTreeSet::from(["PXFA035"]));
    let f = lint_manifests(&docs);
    assert_eq!(f[0].severity, Severity::Error);
    assert_eq!(
        f[0].object,
        "NodeNetworkConfigurationPolicy/br-storage-worker-02"
    );
    assert!(
        f[0].message.contains("NodeNetworkState/worker-02")
            && f[0].message.contains("one node at a time"),
        "{}",
        f[0].message
    );
    // worker-01's linux bridge (its own policy) is another node: no conversion there.
    docs.retain(|d| d["kind"] != "NodeNetworkState");
    assert!(rules(&docs).is_empty(), "{:#?}", lint_manifests(&docs));
    // A second policy for worker-02 keeping the linux bridge (another tenant's render).
    let mut other = find(
        &mut good(),
        "NodeNetworkConfigurationPolicy",
        "br-storage-worker-02",
    )
    .clone();
    other["metadata"]["name"] = json!("other-tenant-worker-02");
    other["spec"]["desiredState"]["interfaces"][0]["ipv4"]["address"][0]["ip"] =
        json!("10.40.0.150");
    docs.push(other);
    assert_eq!(rules(&docs), BTreeSet::from(["PXFA035"]));
}

/// PXFA036 in manifests: a kubevirt-csi class on the virtio bus (kubevirt/csi-driver#368
/// serial truncation, kubevirt/kubevirt#14180 PCIe ports).
#[test]
fn pxfa036_kubevirt_csi_on_virtio() {
    fires_alone("PXFA036", |d| {
        set(
            find(d, "StorageClass", "px-kubevirt-csi"),
            "/parameters/bus",
            json!("virtio"),
        )
    });
    let mut docs = good();
    set(
        find(&mut docs, "StorageClass", "px-kubevirt-csi"),
        "/parameters/bus",
        json!("virtio"),
    );
    let f = lint_manifests(&docs);
    assert_eq!(f[0].object, "StorageClass/px-kubevirt-csi");
    assert!(f[0].message.contains("csi-driver#368"), "{}", f[0].message);
}
