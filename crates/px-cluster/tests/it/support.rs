//! What the cluster tests share: an in-process fake Kubernetes API server (wiremock)
//! reached through a real kubeconfig file, test specs, and canned answers for a whole
//! rendered tenant. Also compiled into the `pxfa` binary's cluster test (by path), so
//! items one of the two binaries does not use are allowed to be dead there.

use std::time::Duration;

use px_cluster::{Client, WaitOptions, connect};
use px_topology::{
    Cluster, Form, Manifest, RenderOptions, TenantStorage, parse_valid_spec, render,
};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

// ------------------------------------------------------------------ fixtures

pub(crate) struct Fake {
    pub(crate) server: MockServer,
    _dir: tempfile::TempDir,
    pub(crate) kubeconfig: std::path::PathBuf,
}

impl Fake {
    pub(crate) async fn start() -> Fake {
        let server = MockServer::start().await;
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster: {{server: \"{}\"}}\n\
                 users:\n- name: admin\n  user: {{token: not-a-real-token}}\n\
                 contexts:\n- name: other\n  context: {{cluster: fake, user: admin, namespace: other}}\n\
                 - name: fake\n  context: {{cluster: fake, user: admin, namespace: default}}\n\
                 current-context: other\n",
                server.uri()
            ),
        )
        .unwrap();
        Fake {
            server,
            _dir: dir,
            kubeconfig,
        }
    }

    pub(crate) async fn client(&self) -> Client {
        connect(
            &self.kubeconfig,
            Some("fake"),
            px_cluster::KubeBounds::default(),
        )
        .await
        .expect("client")
    }

    pub(crate) async fn requests(&self, verb: &str, path_part: &str) -> Vec<Request> {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r.method.as_str() == verb && r.url.path().contains(path_part))
            .collect()
    }

    pub(crate) async fn core_discovery(&self) {
        Mock::given(method("GET"))
            .and(path("/api/v1"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "kind": "APIResourceList", "groupVersion": "v1",
                "resources": [
                    {"name": "persistentvolumeclaims", "singularName": "persistentvolumeclaim", "namespaced": true,
                     "kind": "PersistentVolumeClaim", "verbs": ["get", "list", "patch"]},
                    {"name": "secrets", "singularName": "secret", "namespaced": true, "kind": "Secret",
                     "verbs": ["get", "patch", "update"]},
                    {"name": "namespaces", "singularName": "namespace", "namespaced": false, "kind": "Namespace",
                     "verbs": ["get", "patch"]},
                ]})))
            .mount(&self.server)
            .await;
        Mock::given(method("GET"))
            .and(path("/apis/nmstate.io/v1"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "kind": "APIResourceList", "groupVersion": "nmstate.io/v1",
                "resources": [{"name": "nodenetworkconfigurationpolicies", "singularName": "nodenetworkconfigurationpolicy",
                    "namespaced": false, "kind": "NodeNetworkConfigurationPolicy", "verbs": ["get", "patch"]}]})))
            .mount(&self.server)
            .await;
    }
}

pub(crate) fn direct_access_spec() -> TenantStorage {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/tenants/valid-full.yaml"
    ))
    .unwrap();
    parse_valid_spec(&text).expect("valid fixture")
}

pub(crate) fn cloud_drive_spec() -> TenantStorage {
    parse_valid_spec(
        "apiVersion: pxfa.io/v1alpha1\nkind: TenantStorage\nmetadata: {name: tenant-cd}\nspec:\n  \
         hostedCluster: {name: tenant-cd, releaseImage: \"quay.io/openshift-release-dev/ocp-release:4.19.2-x86_64\"}\n  storage: {mode: cloud-drive, protocol: iscsi, capacity: 1Ti}\n  \
         array: {endpoint: fa1.example.net}\n  management: {hostGroup: hcp-mgmt}\n",
    )
    .expect("valid cloud-drive spec")
}

pub(crate) fn rendered(spec: &TenantStorage) -> Vec<Manifest> {
    let sizing = px_topology::size(spec, None).expect("sizing");
    render(spec, &sizing, &Default::default(), RenderOptions::default()).expect("render")
}

/// The drive claims of `manifests` (the management cluster's, labelled with their
/// worker index), each recording the VM `vm(index)` it is attached to.
pub(crate) fn claims_on_vms(manifests: &[Manifest], vm: impl Fn(u32) -> String) -> Vec<Value> {
    manifests
        .iter()
        .filter(|m| m.cluster == Cluster::Management && m.kind == "PersistentVolumeClaim")
        .filter_map(|m| {
            let index = m.body["metadata"]["labels"]["pxfa.io/node-index"].as_str()?;
            let mut c = m.body.clone();
            c["metadata"]["annotations"] =
                json!({"pxfa.io/attached-vm": vm(index.parse().unwrap())});
            Some(c)
        })
        .collect()
}

pub(crate) fn fast_wait(timeout_ms: u64) -> WaitOptions {
    WaitOptions {
        timeout: Duration::from_millis(timeout_ms),
        interval: Duration::from_millis(20),
    }
}

pub(crate) fn pvc(ns: &str, name: &str, phase: &str) -> Manifest {
    Manifest::resource(
        Cluster::Management,
        80,
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"name": name, "namespace": ns},
               "spec": {"accessModes": ["ReadWriteMany"], "volumeMode": "Block"},
               "status": {"phase": phase}}),
        &["test"],
    )
}

pub(crate) fn nncp(name: &str) -> Manifest {
    Manifest::resource(
        Cluster::Management,
        30,
        json!({"apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy",
               "metadata": {"name": name}, "spec": {"desiredState": {}}}),
        &["test"],
    )
}

pub(crate) fn kubevirt_csi_spec() -> TenantStorage {
    parse_valid_spec(
        "apiVersion: pxfa.io/v1alpha1\nkind: TenantStorage\nmetadata: {name: tenant-kv}\nspec:\n  \
         hostedCluster: {name: tenant-kv, releaseImage: \"quay.io/openshift-release-dev/ocp-release:4.19.2-x86_64\"}\n  \
         storage: {mode: kubevirt-csi, capacity: 1Ti}\n  management: {hostGroup: hcp-mgmt}\n",
    )
    .expect("valid kubevirt-csi spec")
}

pub(crate) fn vm_json(name: &str, created: &str, index: Option<u32>, volumes: Value) -> Value {
    let mut ann = serde_json::Map::new();
    if let Some(i) = index {
        ann.insert("pxfa.io/worker-index".into(), json!(i.to_string()));
    }
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
           "metadata": {"name": name, "namespace": "clusters-tenant-full", "creationTimestamp": created,
                        "annotations": ann},
           "spec": {"template": {"spec": {"domain": {"devices": {"disks": []}}, "volumes": volumes}}}})
}

/// The REST resource of every kind pxfa applies. A new kind in the renderer fails
/// here until it is added, and then until deploy/rbac grants it.
pub(crate) fn resource_of(api_version: &str, kind: &str) -> (String, &'static str) {
    let group = api_version
        .rsplit_once('/')
        .map(|(g, _)| g)
        .unwrap_or("")
        .to_string();
    let plural = match kind {
        "Namespace" => "namespaces",
        "ConfigMap" => "configmaps",
        "Secret" => "secrets",
        "PersistentVolumeClaim" => "persistentvolumeclaims",
        "StorageClass" => "storageclasses",
        "NodeNetworkConfigurationPolicy" => "nodenetworkconfigurationpolicies",
        "NetworkAttachmentDefinition" => "network-attachment-definitions",
        "MultiClusterEngine" => "multiclusterengines",
        "NodePool" => "nodepools",
        "HostedCluster" => "hostedclusters",
        "StorageCluster" => "storageclusters",
        "IPAddressPool" => "ipaddresspools",
        "L2Advertisement" => "l2advertisements",
        "MetalLB" => "metallbs",
        "NMState" => "nmstates",
        "MachineConfig" => "machineconfigs",
        "OperatorGroup" => "operatorgroups",
        "Subscription" => "subscriptions",
        other => panic!("no RBAC mapping for kind {other}; add it here and to deploy/rbac"),
    };
    (group, plural)
}

/// Discovery documents for every group/version the renderer uses, built from the
/// same kind table the RBAC test uses.
pub(crate) async fn mount_discovery(server: &MockServer, manifests: &[Manifest]) {
    let mut groups: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
    for m in manifests.iter().filter(|m| m.form == Form::Resource) {
        let api_version = m.body["apiVersion"].as_str().unwrap().to_string();
        let (_, plural) = resource_of(&api_version, &m.kind);
        let namespaced = m.namespace.is_some();
        let entry = json!({"name": plural, "singularName": "", "namespaced": namespaced,
                           "kind": m.kind, "verbs": ["get", "patch", "create"]});
        let list = groups.entry(api_version).or_default();
        if !list.contains(&entry) {
            list.push(entry);
        }
    }
    for (gv, resources) in groups {
        let url = if gv.contains('/') {
            format!("/apis/{gv}")
        } else {
            format!("/api/{gv}")
        };
        Mock::given(method("GET"))
            .and(path(url))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "kind": "APIResourceList", "groupVersion": gv, "resources": resources})))
            .mount(server)
            .await;
    }
}

/// A management cluster where every applied object is ready at once, with the four
/// worker VMs of the direct-access fixture.
pub(crate) async fn mount_ready_management(server: &MockServer, manifests: &[Manifest]) {
    mount_discovery(server, manifests).await;
    let ns = "clusters-tenant-full";
    // Applies echo the body; reads see every object ready.
    Mock::given(method("PATCH"))
        .and(header("content-type", "application/apply-patch+yaml"))
        .respond_with(|r: &Request| {
            ResponseTemplate::new(200).set_body_json(r.body_json::<Value>().unwrap())
        })
        .mount(server)
        .await;
    Mock::given(method("PATCH"))
        .and(header("content-type", "application/merge-patch+json"))
        .respond_with(|r: &Request| {
            ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": if r.url.path().contains("kubevirt") { "kubevirt.io/v1" } else { "v1" },
                "kind": if r.url.path().contains("kubevirt") { "VirtualMachine" } else { "PersistentVolumeClaim" },
                "metadata": {"name": r.url.path().rsplit('/').next().unwrap()}}))
        })
        .mount(server)
        .await;
    let vms: Vec<Value> = (0..4)
        .map(|i| {
            vm_json(
                &format!("tenant-full-workers-{i}"),
                &format!("2026-01-0{}T00:00:00Z", i + 1),
                None,
                json!([]),
            )
        })
        .collect();
    Mock::given(method("GET"))
        .and(path(format!("/apis/kubevirt.io/v1/namespaces/{ns}/virtualmachines")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineList", "metadata": {}, "items": vms})))
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .respond_with(|r: &Request| {
            let name = r.url.path().rsplit('/').next().unwrap().to_string();
            ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": "v1",
                "kind": if r.url.path().contains("/persistentvolumeclaims/") { "PersistentVolumeClaim" } else { "Object" },
                "metadata": {"name": name},
                "status": {"phase": "Bound", "conditions": [{"type": "Available", "status": "True"}]}}))
        })
        .mount(server)
        .await;
    Mock::given(method("PUT"))
        .respond_with(ResponseTemplate::new(202))
        .mount(server)
        .await;
}
