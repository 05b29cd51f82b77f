//! The cluster layer against an in-process fake Kubernetes API server (wiremock),
//! reached through a real kubeconfig file, and token rotation against MockArray.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use flasharray::FlashArray;
use flasharray_mock::MockArray;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use px_topology::manifests::{RenderOptions, render};
use px_topology::render::{Cluster, Form, Manifest};
use px_topology::{TenantStorage, parse_valid_spec};
use pxfa::cluster::readiness::WaitOptions;
use pxfa::cluster::token::{PURE_SECRET, TOKEN_USER_ANNOTATION};
use pxfa::cluster::vms::{AttachOptions, attach_workers, discover_guest_interface};
use pxfa::cluster::{
    ApplyOptions, RotateOptions, TokenProbe, apply_manifests, connect, rotate_token, worker_disks,
};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};
use wiremock::matchers::{
    body_json, header, method, path, path_regex, query_param, query_param_is_missing,
};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

// ------------------------------------------------------------------ fixtures

struct Fake {
    server: MockServer,
    _dir: tempfile::TempDir,
    kubeconfig: std::path::PathBuf,
}

impl Fake {
    async fn start() -> Fake {
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

    async fn client(&self) -> Client {
        connect(&self.kubeconfig, Some("fake"))
            .await
            .expect("client")
    }

    async fn requests(&self, verb: &str, path_part: &str) -> Vec<Request> {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r.method.as_str() == verb && r.url.path().contains(path_part))
            .collect()
    }

    async fn core_discovery(&self) {
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

fn direct_access_spec() -> TenantStorage {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/tenants/valid-full.yaml"
    ))
    .unwrap();
    parse_valid_spec(&text).expect("valid fixture")
}

fn cloud_drive_spec() -> TenantStorage {
    parse_valid_spec(
        "apiVersion: pxfa.io/v1alpha1\nkind: TenantStorage\nmetadata: {name: tenant-cd}\nspec:\n  \
         hostedCluster: {name: tenant-cd, releaseImage: \"quay.io/openshift-release-dev/ocp-release:4.19.2-x86_64\"}\n  storage: {mode: cloud-drive, protocol: iscsi, capacity: 1Ti}\n  \
         array: {endpoint: fa1.example.net}\n  management: {hostGroup: hcp-mgmt}\n",
    )
    .expect("valid cloud-drive spec")
}

fn rendered(spec: &TenantStorage) -> Vec<Manifest> {
    let sizing = px_topology::sizing::size(spec, None).expect("sizing");
    render(spec, &sizing, &Default::default(), RenderOptions::default()).expect("render")
}

fn fast_wait(timeout_ms: u64) -> WaitOptions {
    WaitOptions {
        timeout: Duration::from_millis(timeout_ms),
        interval: Duration::from_millis(20),
    }
}

fn pvc(ns: &str, name: &str, phase: &str) -> Manifest {
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

fn nncp(name: &str) -> Manifest {
    Manifest::resource(
        Cluster::Management,
        30,
        json!({"apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy",
               "metadata": {"name": name}, "spec": {"desiredState": {}}}),
        &["test"],
    )
}

// ----------------------------------------------------------- server-side apply

#[tokio::test]
async fn apply_is_server_side_with_field_manager_and_waits_for_readiness() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    let net = nncp("tenant-storage-net");
    let claim = pvc("clusters-t", "t-w00-data0", "Bound");
    Mock::given(method("PATCH"))
        .and(path(
            "/apis/nmstate.io/v1/nodenetworkconfigurationpolicies/tenant-storage-net",
        ))
        .and(query_param("fieldManager", "pxfa"))
        .and(query_param_is_missing("force"))
        .and(header("content-type", "application/apply-patch+yaml"))
        .and(body_json(&net.body))
        .respond_with(ResponseTemplate::new(200).set_body_json(&net.body))
        .expect(1)
        .mount(&fake.server)
        .await;
    // NNCP becomes Available on the second poll.
    let polls = Arc::new(AtomicUsize::new(0));
    let p = polls.clone();
    Mock::given(method("GET"))
        .and(path(
            "/apis/nmstate.io/v1/nodenetworkconfigurationpolicies/tenant-storage-net",
        ))
        .respond_with(move |_: &Request| {
            let status = if p.fetch_add(1, Ordering::SeqCst) == 0 {
                "False"
            } else {
                "True"
            };
            ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy",
                "metadata": {"name": "tenant-storage-net"},
                "status": {"conditions": [{"type": "Available", "status": status}]}}))
        })
        .mount(&fake.server)
        .await;
    Mock::given(method("PATCH"))
        .and(path(
            "/api/v1/namespaces/clusters-t/persistentvolumeclaims/t-w00-data0",
        ))
        .and(query_param("fieldManager", "pxfa"))
        .and(header("content-type", "application/apply-patch+yaml"))
        .and(body_json(&claim.body))
        .respond_with(ResponseTemplate::new(200).set_body_json(&claim.body))
        .expect(1)
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path(
            "/api/v1/namespaces/clusters-t/persistentvolumeclaims/t-w00-data0",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(&claim.body))
        .mount(&fake.server)
        .await;

    let client = fake.client().await;
    let opts = ApplyOptions {
        wait: fast_wait(2_000),
        ..Default::default()
    };
    // Given out of order: the apply sorts by step.
    let report = apply_manifests(&direct_access_spec(), &[claim, net], &client, None, &opts)
        .await
        .expect("apply");
    assert!(report.complete(), "{report:?}");
    assert_eq!(
        report.applied,
        [
            "NodeNetworkConfigurationPolicy tenant-storage-net",
            "PersistentVolumeClaim clusters-t/t-w00-data0"
        ]
    );
    assert!(
        polls.load(Ordering::SeqCst) >= 2,
        "NNCP readiness was polled"
    );
    // The PVC was applied only after the NNCP was Available.
    let all = fake.server.received_requests().await.unwrap();
    let pvc_patch = all
        .iter()
        .position(|r| {
            r.method.as_str() == "PATCH" && r.url.path().contains("persistentvolumeclaims")
        })
        .unwrap();
    let last_nncp_get = all
        .iter()
        .rposition(|r| {
            r.method.as_str() == "GET" && r.url.path().contains("nodenetworkconfigurationpolicies/")
        })
        .unwrap();
    assert!(last_nncp_get < pvc_patch);
}

#[tokio::test]
async fn force_conflicts_sets_force() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    let claim = pvc("clusters-t", "t-w00-data0", "Bound");
    Mock::given(method("PATCH"))
        .and(path(
            "/api/v1/namespaces/clusters-t/persistentvolumeclaims/t-w00-data0",
        ))
        .and(query_param("fieldManager", "pxfa"))
        .and(query_param("force", "true"))
        .respond_with(ResponseTemplate::new(200).set_body_json(&claim.body))
        .expect(1)
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path(
            "/api/v1/namespaces/clusters-t/persistentvolumeclaims/t-w00-data0",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(&claim.body))
        .mount(&fake.server)
        .await;
    let opts = ApplyOptions {
        force_conflicts: true,
        wait: fast_wait(1_000),
        ..Default::default()
    };
    let report = apply_manifests(
        &direct_access_spec(),
        &[claim],
        &fake.client().await,
        None,
        &opts,
    )
    .await
    .unwrap();
    assert!(report.complete(), "{report:?}");
}

#[tokio::test]
async fn conflict_is_reported_and_stops_before_the_next_step() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    Mock::given(method("PATCH"))
        .and(path("/apis/nmstate.io/v1/nodenetworkconfigurationpolicies/net"))
        .respond_with(ResponseTemplate::new(409).set_body_json(json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Conflict", "code": 409,
            "message": "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using nmstate.io/v1: .spec.desiredState",
            "details": {"name": "net", "kind": "nodenetworkconfigurationpolicies", "causes": [
                {"reason": "FieldManagerConflict", "message": "conflict with \"kubectl-edit\" using nmstate.io/v1",
                 "field": ".spec.desiredState"}]}})))
        .expect(1)
        .mount(&fake.server)
        .await;
    let opts = ApplyOptions {
        wait: fast_wait(500),
        ..Default::default()
    };
    let report = apply_manifests(
        &direct_access_spec(),
        &[nncp("net"), pvc("clusters-t", "c", "Bound")],
        &fake.client().await,
        None,
        &opts,
    )
    .await
    .unwrap();
    assert!(!report.complete());
    assert_eq!(report.conflicts.len(), 1);
    assert_eq!(
        report.conflicts[0].object,
        "NodeNetworkConfigurationPolicy net"
    );
    assert!(
        report.conflicts[0].fields[0].contains("kubectl-edit"),
        "{report:?}"
    );
    assert_eq!(report.stopped_at.as_deref(), Some("management step 30"));
    assert!(
        fake.requests("PATCH", "persistentvolumeclaims")
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn readiness_timeout_reports_what_is_pending() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    let claim = pvc("clusters-t", "slow", "Pending");
    Mock::given(method("PATCH"))
        .and(path(
            "/api/v1/namespaces/clusters-t/persistentvolumeclaims/slow",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(&claim.body))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path(
            "/api/v1/namespaces/clusters-t/persistentvolumeclaims/slow",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(&claim.body))
        .mount(&fake.server)
        .await;
    let started = std::time::Instant::now();
    let opts = ApplyOptions {
        wait: fast_wait(200),
        ..Default::default()
    };
    let report = apply_manifests(
        &direct_access_spec(),
        &[claim],
        &fake.client().await,
        None,
        &opts,
    )
    .await
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(report.pending.len(), 1, "{report:?}");
    assert_eq!(
        report.pending[0].object,
        "PersistentVolumeClaim clusters-t/slow"
    );
    assert_eq!(report.pending[0].state, "phase Pending");
    assert_eq!(report.stopped_at.as_deref(), Some("management step 80"));
}

#[tokio::test]
async fn placeholder_secrets_fragments_and_tenant_without_kubeconfig_are_skipped() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    let spec = cloud_drive_spec();
    let manifests = rendered(&spec);
    let tenant: Vec<Manifest> = manifests
        .into_iter()
        .filter(|m| m.cluster == Cluster::Tenant)
        .collect();
    assert!(tenant.iter().any(|m| m.secret));
    let report = apply_manifests(
        &spec,
        &tenant,
        &fake.client().await,
        None,
        &ApplyOptions::default(),
    )
    .await
    .unwrap();
    assert!(report.applied.is_empty());
    assert_eq!(report.skipped.len(), tenant.len());
    assert!(
        report
            .skipped
            .iter()
            .all(|s| s.reason.contains("--tenant-kubeconfig"))
    );

    // A secret pxfa has no token for, and a fragment, are never sent.
    let mut secret = pvc("clusters-t", "unused", "Bound").secret();
    secret.kind = "Secret".into();
    let mut fragment = pvc("clusters-t", "hc", "Bound");
    fragment.form = Form::Fragment {
        path: "spec.platform.kubevirt.storageDriver".into(),
    };
    let report = apply_manifests(
        &spec,
        &[secret, fragment],
        &fake.client().await,
        None,
        &ApplyOptions::default(),
    )
    .await
    .unwrap();
    assert!(report.complete());
    assert!(
        report.skipped[0].reason.contains("placeholder"),
        "{report:?}"
    );
    assert!(
        report.skipped[1]
            .reason
            .contains("spec.platform.kubevirt.storageDriver")
    );
    assert!(fake.server.received_requests().await.unwrap().is_empty());
}

// ------------------------------------------------------------- VMs and disks

fn vm_json(name: &str, created: &str, index: Option<u32>, volumes: Value) -> Value {
    let mut ann = serde_json::Map::new();
    if let Some(i) = index {
        ann.insert("pxfa.io/worker-index".into(), json!(i.to_string()));
    }
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
           "metadata": {"name": name, "namespace": "clusters-tenant-full", "creationTimestamp": created,
                        "annotations": ann},
           "spec": {"template": {"spec": {"domain": {"devices": {"disks": []}}, "volumes": volumes}}}})
}

#[tokio::test]
async fn hotplug_maps_vms_stably_and_attaches_disks_with_serials() {
    let fake = Fake::start().await;
    let spec = direct_access_spec();
    let manifests = rendered(&spec);
    let patches: Vec<&Manifest> = manifests
        .iter()
        .filter(|m| matches!(m.form, Form::JsonPatch { .. }) && m.kind == "VirtualMachine")
        .collect();
    let workers = worker_disks(&patches).unwrap();
    assert_eq!(workers.len(), 4);
    let w2_first = workers[2].disks[0].clone();
    let ns = "clusters-tenant-full";
    // VM "c" already carries worker 2 and one of its disks; the others are new, and
    // take the free indices oldest first.
    let vms = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineList", "metadata": {}, "items": [
        vm_json("tenant-full-workers-d", "2026-01-04T00:00:00Z", None, json!([])),
        vm_json("tenant-full-workers-c", "2026-01-01T00:00:00Z", Some(2),
                json!([{"name": w2_first.serial, "persistentVolumeClaim": {"claimName": w2_first.claim, "hotpluggable": true}}])),
        vm_json("tenant-full-workers-a", "2026-01-03T00:00:00Z", None, json!([])),
        vm_json("tenant-full-workers-b", "2026-01-02T00:00:00Z", None, json!([])),
        vm_json("other-pool-x", "2026-01-01T00:00:00Z", None, json!([])),
    ]});
    Mock::given(method("GET"))
        .and(path(format!(
            "/apis/kubevirt.io/v1/namespaces/{ns}/virtualmachines"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_json(vms))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(format!("^/api/v1/namespaces/{ns}/persistentvolumeclaims/.+$")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "x", "namespace": ns}})))
        .mount(&fake.server)
        .await;
    Mock::given(method("PATCH"))
        .respond_with(|r: &Request| {
            ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": if r.url.path().contains("kubevirt") { "kubevirt.io/v1" } else { "v1" },
                "kind": if r.url.path().contains("kubevirt") { "VirtualMachine" } else { "PersistentVolumeClaim" },
                "metadata": {"name": r.url.path().rsplit('/').next().unwrap()}}))
        })
        .mount(&fake.server)
        .await;
    Mock::given(method("PUT"))
        .and(path_regex(format!(
            "^/apis/subresources.kubevirt.io/v1/namespaces/{ns}/virtualmachines/[a-z-]+/addvolume$"
        )))
        .respond_with(ResponseTemplate::new(202))
        .mount(&fake.server)
        .await;

    let opts = AttachOptions {
        adopt_replaced_vms: false,
        wait: fast_wait(500),
    };
    let out = attach_workers(&fake.client().await, &spec, &workers, &opts)
        .await
        .expect("attach");
    assert!(out.pending.is_empty(), "{:?}", out.pending);
    let by_index: Vec<(u32, &str)> = out
        .assignments
        .iter()
        .map(|a| (a.index, a.vm.as_str()))
        .collect();
    assert_eq!(
        by_index,
        [
            (0, "tenant-full-workers-b"),
            (1, "tenant-full-workers-a"),
            (2, "tenant-full-workers-c"),
            (3, "tenant-full-workers-d")
        ]
    );
    assert_eq!(
        out.assignments[2].present,
        std::slice::from_ref(&w2_first.serial)
    );

    // Index annotations: only the three VMs that had none, with the bookkeeping manager.
    let vm_patches = fake.requests("PATCH", "/virtualmachines/").await;
    assert_eq!(vm_patches.len(), 3);
    for r in &vm_patches {
        assert_eq!(
            r.headers.get("content-type").unwrap(),
            "application/merge-patch+json"
        );
        assert!(
            r.url
                .query()
                .unwrap()
                .contains("fieldManager=pxfa-bookkeeping")
        );
    }
    let b: Value = vm_patches
        .iter()
        .find(|r| r.url.path().ends_with("tenant-full-workers-b"))
        .unwrap()
        .body_json()
        .unwrap();
    assert_eq!(
        b,
        json!({"metadata": {"annotations": {"pxfa.io/worker-index": "0"}}})
    );
    // Every claim records its VM.
    let claim_patches = fake.requests("PATCH", "/persistentvolumeclaims/").await;
    assert_eq!(claim_patches.len(), 12);

    // Hotplug bodies: fixed serials, the spec's bus, hotpluggable claims.
    let adds = fake.requests("PUT", "/addvolume").await;
    assert_eq!(adds.len(), 11, "12 disks, one already attached");
    let first: Value = adds
        .iter()
        .find(|r| r.url.path().contains("tenant-full-workers-b"))
        .unwrap()
        .body_json()
        .unwrap();
    let w0 = &workers[0].disks[0];
    assert_eq!(
        first,
        json!({"name": w0.serial, "disk": {"name": w0.serial, "serial": w0.serial, "disk": {"bus": w0.bus}},
               "volumeSource": {"persistentVolumeClaim": {"claimName": w0.claim, "hotpluggable": true}}})
    );
    let serials: std::collections::BTreeSet<String> = adds
        .iter()
        .map(|r| {
            r.body_json::<Value>().unwrap()["disk"]["serial"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        serials.into_iter().collect::<Vec<_>>(),
        ["pxdata0", "pxdata1", "pxmeta"]
    );
    assert!(workers[0].disks.iter().all(|d| d.claim.contains("-w00-")));
}

#[tokio::test]
async fn replaced_vm_waits_for_the_admin() {
    let fake = Fake::start().await;
    let spec = direct_access_spec();
    let manifests = rendered(&spec);
    let patches: Vec<&Manifest> = manifests
        .iter()
        .filter(|m| matches!(m.form, Form::JsonPatch { .. }))
        .collect();
    let workers: Vec<_> = worker_disks(&patches)
        .unwrap()
        .into_iter()
        .take(1)
        .collect();
    let ns = "clusters-tenant-full";
    Mock::given(method("GET"))
        .and(path(format!("/apis/kubevirt.io/v1/namespaces/{ns}/virtualmachines")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineList", "metadata": {},
            "items": [vm_json("tenant-full-workers-new", "2026-02-01T00:00:00Z", None, json!([]))]})))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(format!(
            "^/api/v1/namespaces/{ns}/persistentvolumeclaims/.+$"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "x", "namespace": ns,
                         "annotations": {"pxfa.io/attached-vm": "tenant-full-workers-old"}}})))
        .mount(&fake.server)
        .await;
    let client = fake.client().await;
    let mut opts = AttachOptions {
        adopt_replaced_vms: false,
        wait: fast_wait(200),
    };
    let out = attach_workers(&client, &spec, &workers, &opts)
        .await
        .unwrap();
    assert!(out.assignments.is_empty());
    assert_eq!(out.pending.len(), 1);
    assert!(
        out.pending[0].state.contains("--adopt-replaced-vms"),
        "{:?}",
        out.pending
    );
    assert!(fake.requests("PUT", "addvolume").await.is_empty());
    assert!(
        fake.requests("PATCH", "").await.is_empty(),
        "nothing recorded without the admin"
    );

    Mock::given(method("PATCH"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "x"}})))
        .mount(&fake.server)
        .await;
    Mock::given(method("PUT"))
        .respond_with(ResponseTemplate::new(202))
        .mount(&fake.server)
        .await;
    opts.adopt_replaced_vms = true;
    let out = attach_workers(&client, &spec, &workers, &opts)
        .await
        .unwrap();
    assert_eq!(out.assignments[0].vm, "tenant-full-workers-new");
    assert_eq!(
        fake.requests("PUT", "addvolume").await.len(),
        workers[0].disks.len()
    );
}

#[tokio::test]
async fn guest_interface_is_read_from_vmi_status() {
    let fake = Fake::start().await;
    let vmi = |name: &str, iface: &str| {
        json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
               "metadata": {"name": name, "namespace": "clusters-t"},
               "spec": {"networks": [{"name": "default", "pod": {}},
                                     {"name": "storage", "multus": {"networkName": "clusters-t/storage-network"}}]},
               "status": {"interfaces": [{"name": "default", "interfaceName": "enp1s0"},
                                         {"name": "storage", "interfaceName": iface}]}})
    };
    Mock::given(method("GET"))
        .and(path(
            "/apis/kubevirt.io/v1/namespaces/clusters-t/virtualmachineinstances",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceList", "metadata": {},
            "items": [vmi("np-a", "enp3s0"), vmi("np-b", "enp3s0"), vmi("elsewhere-c", "eth9")]})))
        .mount(&fake.server)
        .await;
    let found =
        discover_guest_interface(&fake.client().await, "clusters-t", "np", "storage-network")
            .await
            .unwrap();
    assert_eq!(found.as_deref(), Some("enp3s0"));
}

// ------------------------------------------------------------- token rotation

const PRIMARY: &str = "pxfa-tenant-cd";
const ALTERNATE: &str = "pxfa-tenant-cd-alt";

/// Called after each secret write, to inject faults at that moment.
type AfterPut = Box<dyn Fn(&MockArray) + Send + Sync>;

/// The tenant's px-pure-secret, kept in memory; every write is checked against the
/// array: the new token must already work and the one it replaces must still work.
#[derive(Clone)]
struct SecretStore {
    secret: Arc<Mutex<Value>>,
    mock: MockArray,
    violations: Arc<Mutex<Vec<String>>>,
    events: Arc<Mutex<Vec<String>>>,
    fail_next_put: Arc<AtomicBool>,
    after_put: Arc<Mutex<Option<AfterPut>>>,
}

fn pure_token(secret: &Value) -> String {
    let s: Secret = serde_json::from_value(secret.clone()).unwrap();
    let raw = &s.data.unwrap()["pure.json"];
    let pure: Value = serde_json::from_slice(&raw.0).unwrap();
    pure["FlashArrays"][0]["APIToken"]
        .as_str()
        .unwrap()
        .to_string()
}

impl SecretStore {
    fn token(&self) -> String {
        pure_token(&self.secret.lock().unwrap())
    }
}

impl Respond for SecretStore {
    fn respond(&self, r: &Request) -> ResponseTemplate {
        match r.method.as_str() {
            "GET" => ResponseTemplate::new(200).set_body_json(self.secret.lock().unwrap().clone()),
            "PUT" => {
                if self.fail_next_put.swap(false, Ordering::SeqCst) {
                    return ResponseTemplate::new(500).set_body_json(json!({
                        "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 500,
                        "reason": "InternalError", "message": "etcd timeout"}));
                }
                let mut new: Value = r.body_json().unwrap();
                let old_token = self.token();
                let new_token = pure_token(&new);
                let user = new["metadata"]["annotations"][TOKEN_USER_ANNOTATION]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                if self.mock.api_token_owner(&new_token).as_deref() != Some(user.as_str()) {
                    self.violations
                        .lock()
                        .unwrap()
                        .push(format!("wrote a token that does not log in as {user}"));
                }
                if self.mock.api_token_owner(&old_token).is_none() {
                    self.violations
                        .lock()
                        .unwrap()
                        .push("the replaced token was already deleted".into());
                }
                self.events
                    .lock()
                    .unwrap()
                    .push(format!("secret -> {user}"));
                let rv: u64 = new["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                new["metadata"]["resourceVersion"] = json!((rv + 1).to_string());
                *self.secret.lock().unwrap() = new.clone();
                if let Some(hook) = self.after_put.lock().unwrap().as_ref() {
                    hook(&self.mock);
                }
                ResponseTemplate::new(200).set_body_json(new)
            }
            _ => ResponseTemplate::new(405),
        }
    }
}

struct MockProbe {
    mock: MockArray,
    fail_next: AtomicBool,
    events: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl TokenProbe for MockProbe {
    async fn verify(&self, user: &str, token: &SecretString) -> anyhow::Result<()> {
        if self.fail_next.swap(false, Ordering::SeqCst) {
            anyhow::bail!("login refused (injected)");
        }
        let owner = self
            .mock
            .api_token_owner(token.expose_secret())
            .ok_or_else(|| anyhow::anyhow!("login refused"))?;
        anyhow::ensure!(owner == user, "logs in as {owner}");
        self.events
            .lock()
            .unwrap()
            .push(format!("verified {owner}"));
        Ok(())
    }
}

struct Rotation {
    fake: Fake,
    mock: MockArray,
    store: SecretStore,
    probe: MockProbe,
    original: String,
}

async fn rotation_setup() -> Rotation {
    let fake = Fake::start().await;
    let mock = MockArray::new();
    mock.add_admin(PRIMARY);
    mock.add_admin(ALTERNATE);
    let original = mock
        .create_api_token(PRIMARY, None)
        .await
        .unwrap()
        .api_token
        .expose()
        .unwrap()
        .to_string();
    let pure = json!({"FlashArrays": [{"MgmtEndPoint": "fa1.example.net", "APIToken": original}]});
    let secret = Secret {
        metadata: kube::core::ObjectMeta {
            name: Some(PURE_SECRET.into()),
            namespace: Some("portworx".into()),
            resource_version: Some("1".into()),
            ..Default::default()
        },
        data: Some(
            [(
                "pure.json".to_string(),
                ByteString(pure.to_string().into_bytes()),
            )]
            .into(),
        ),
        ..Default::default()
    };
    let events = Arc::new(Mutex::new(Vec::new()));
    let store = SecretStore {
        secret: Arc::new(Mutex::new(serde_json::to_value(secret).unwrap())),
        mock: mock.clone(),
        violations: Arc::default(),
        events: events.clone(),
        fail_next_put: Arc::default(),
        after_put: Arc::default(),
    };
    Mock::given(path(format!(
        "/api/v1/namespaces/portworx/secrets/{PURE_SECRET}"
    )))
    .respond_with(store.clone())
    .mount(&fake.server)
    .await;
    let probe = MockProbe {
        mock: mock.clone(),
        fail_next: AtomicBool::new(false),
        events,
    };
    Rotation {
        fake,
        mock,
        store,
        probe,
        original,
    }
}

fn rotate_opts() -> RotateOptions {
    RotateOptions {
        alternate_user: ALTERNATE.into(),
        lifetime: None,
        grace: Duration::ZERO,
    }
}

async fn tokens_of(mock: &MockArray, user: &str) -> usize {
    mock.list_api_tokens(&[user.to_string()], false)
        .await
        .unwrap()
        .iter()
        .filter(|t| t.api_token.created_at.is_some())
        .count()
}

/// The end state every successful run reaches: the token user holds the only token,
/// it is in the secret and works, the original is dead.
async fn assert_rotated(r: &Rotation) {
    let token = r.store.token();
    assert_ne!(token, r.original);
    assert_eq!(r.mock.api_token_owner(&token).as_deref(), Some(PRIMARY));
    assert_eq!(r.mock.api_token_owner(&r.original), None);
    assert_eq!(tokens_of(&r.mock, ALTERNATE).await, 0);
    assert_eq!(
        r.store.secret.lock().unwrap()["metadata"]["annotations"][TOKEN_USER_ANNOTATION],
        PRIMARY
    );
    assert!(
        r.store.violations.lock().unwrap().is_empty(),
        "{:?}",
        r.store.violations
    );
}

fn assert_tenant_works(r: &Rotation) {
    assert!(
        r.mock.api_token_owner(&r.store.token()).is_some(),
        "the tenant was left without a working token"
    );
}

#[tokio::test]
async fn token_rotation_writes_and_confirms_before_deleting() {
    let r = rotation_setup().await;
    let client = r.fake.client().await;
    let report = rotate_token(
        &r.mock,
        &r.probe,
        &client,
        &cloud_drive_spec(),
        &rotate_opts(),
    )
    .await
    .expect("rotate");
    assert_eq!(report.active_user, PRIMARY);
    assert_rotated(&r).await;
    assert_eq!(
        *r.store.events.lock().unwrap(),
        [
            format!("verified {ALTERNATE}"),
            format!("secret -> {ALTERNATE}"),
            format!("verified {PRIMARY}"),
            format!("secret -> {PRIMARY}")
        ]
    );
    let steps = report.steps.join("\n");
    let pos = |s: &str| {
        steps
            .find(s)
            .unwrap_or_else(|| panic!("{s} missing in {steps}"))
    };
    assert!(
        pos(&format!(
            "confirmed Secret portworx/{PURE_SECRET} holds the token of {ALTERNATE}"
        )) < pos(&format!("deleted the old token of {PRIMARY}"))
    );
    assert!(
        pos(&format!(
            "confirmed Secret portworx/{PURE_SECRET} holds the token of {PRIMARY}"
        )) < pos(&format!("deleted the old token of {ALTERNATE}"))
    );
    // Only the bookkeeping manager wrote, with the resourceVersion it had read.
    let puts = r.fake.requests("PUT", "/secrets/").await;
    assert_eq!(puts.len(), 2);
    assert!(
        puts[0]
            .url
            .query()
            .unwrap()
            .contains("fieldManager=pxfa-bookkeeping")
    );
    assert_eq!(
        puts[0].body_json::<Value>().unwrap()["metadata"]["resourceVersion"],
        "1"
    );
    // Again: still converges, nothing left over.
    rotate_token(
        &r.mock,
        &r.probe,
        &client,
        &cloud_drive_spec(),
        &rotate_opts(),
    )
    .await
    .expect("second rotation");
    assert_eq!(tokens_of(&r.mock, PRIMARY).await, 1);
    assert_eq!(tokens_of(&r.mock, ALTERNATE).await, 0);
}

#[tokio::test]
async fn token_rotation_failing_verification_is_completed_by_a_rerun() {
    let r = rotation_setup().await;
    let client = r.fake.client().await;
    r.probe.fail_next.store(true, Ordering::SeqCst);
    let err = rotate_token(
        &r.mock,
        &r.probe,
        &client,
        &cloud_drive_spec(),
        &rotate_opts(),
    )
    .await
    .unwrap_err();
    assert!(format!("{err:#}").contains("does not log in"), "{err:#}");
    assert_eq!(r.store.token(), r.original, "secret untouched");
    assert_tenant_works(&r);
    rotate_token(
        &r.mock,
        &r.probe,
        &client,
        &cloud_drive_spec(),
        &rotate_opts(),
    )
    .await
    .expect("re-run");
    assert_rotated(&r).await;
}

#[tokio::test]
async fn token_rotation_failing_secret_write_is_completed_by_a_rerun() {
    let r = rotation_setup().await;
    let client = r.fake.client().await;
    r.store.fail_next_put.store(true, Ordering::SeqCst);
    let err = rotate_token(
        &r.mock,
        &r.probe,
        &client,
        &cloud_drive_spec(),
        &rotate_opts(),
    )
    .await
    .unwrap_err();
    let text = format!("{err:#}");
    assert!(
        text.contains("cannot update Secret portworx/px-pure-secret"),
        "{text}"
    );
    assert!(!text.contains(&r.original), "no token in errors");
    assert_tenant_works(&r);
    rotate_token(
        &r.mock,
        &r.probe,
        &client,
        &cloud_drive_spec(),
        &rotate_opts(),
    )
    .await
    .expect("re-run");
    assert_rotated(&r).await;
}

#[tokio::test]
async fn token_rotation_interrupted_after_each_switch_is_completed_by_a_rerun() {
    for nth_put in [1usize, 2] {
        let r = rotation_setup().await;
        let client = r.fake.client().await;
        // Right after the nth secret write the array becomes unavailable, so the
        // deletion of the replaced token fails.
        let puts = Arc::new(AtomicUsize::new(0));
        let p = puts.clone();
        *r.store.after_put.lock().unwrap() = Some(Box::new(move |mock: &MockArray| {
            if p.fetch_add(1, Ordering::SeqCst) + 1 == nth_put {
                mock.faults().unavailable_next(1);
            }
        }));
        let err = rotate_token(
            &r.mock,
            &r.probe,
            &client,
            &cloud_drive_spec(),
            &rotate_opts(),
        )
        .await
        .unwrap_err();
        assert!(format!("{err:#}").contains("API token"), "{err:#}");
        assert_tenant_works(&r);
        rotate_token(
            &r.mock,
            &r.probe,
            &client,
            &cloud_drive_spec(),
            &rotate_opts(),
        )
        .await
        .unwrap_or_else(|e| panic!("re-run after switch {nth_put}: {e:#}"));
        assert_rotated(&r).await;
    }
}

// ------------------------------------------------------------------ the CRD

#[test]
fn crd_is_a_valid_custom_resource_definition() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crd: CustomResourceDefinition =
        serde_json::from_value(px_topology::crd::tenant_storage_crd()).expect("CRD shape");
    assert_eq!(crd.spec.group, "pxfa.io");
    assert_eq!(crd.spec.scope, "Namespaced");
    assert_eq!(crd.spec.names.kind, "TenantStorage");
    let v = &crd.spec.versions[0];
    assert_eq!(
        (v.name.as_str(), v.served, v.storage),
        ("v1alpha1", true, true)
    );
    let schema = v
        .schema
        .as_ref()
        .unwrap()
        .open_api_v3_schema
        .as_ref()
        .unwrap();
    assert!(schema.properties.as_ref().unwrap().contains_key("spec"));
}

// ------------------------------------------------------------------ RBAC

fn kubevirt_csi_spec() -> TenantStorage {
    parse_valid_spec(
        "apiVersion: pxfa.io/v1alpha1\nkind: TenantStorage\nmetadata: {name: tenant-kv}\nspec:\n  \
         hostedCluster: {name: tenant-kv, releaseImage: \"quay.io/openshift-release-dev/ocp-release:4.19.2-x86_64\"}\n  \
         storage: {mode: kubevirt-csi, capacity: 1Ti}\n  management: {hostGroup: hcp-mgmt}\n",
    )
    .expect("valid kubevirt-csi spec")
}

/// The REST resource of every kind pxfa applies. A new kind in the renderer fails
/// here until it is added, and then until deploy/rbac grants it.
fn resource_of(api_version: &str, kind: &str) -> (String, &'static str) {
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
        other => panic!("no RBAC mapping for kind {other}; add it here and to deploy/rbac"),
    };
    (group, plural)
}

fn rbac_rules(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!(
        "{}/../../deploy/rbac/{file}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).expect("RBAC YAML");
    docs.into_iter()
        .filter(|d| d["kind"] == "ClusterRole")
        .flat_map(|d| d["rules"].as_array().cloned().unwrap_or_default())
        .collect()
}

fn allows(rules: &[Value], group: &str, resource: &str, verb: &str) -> bool {
    let has = |r: &Value, key: &str, want: &str| {
        r[key]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == want || v == "*"))
    };
    rules.iter().any(|r| {
        r.get("resourceNames").is_none()
            && has(r, "apiGroups", group)
            && has(r, "resources", resource)
            && has(r, "verbs", verb)
    }) || (verb != "create"
        && rules.iter().any(|r| {
            r.get("resourceNames").is_some()
                && has(r, "apiGroups", group)
                && has(r, "resources", resource)
                && has(r, "verbs", verb)
        }))
}

#[test]
fn shipped_rbac_grants_everything_pxfa_does() {
    let management = rbac_rules("management.yaml");
    let tenant = rbac_rules("tenant.yaml");
    for spec in [
        direct_access_spec(),
        cloud_drive_spec(),
        kubevirt_csi_spec(),
    ] {
        for m in rendered(&spec) {
            if m.form != Form::Resource {
                continue;
            }
            let rules = match m.cluster {
                Cluster::Management => &management,
                Cluster::Tenant => &tenant,
            };
            let (group, plural) = resource_of(m.body["apiVersion"].as_str().unwrap(), &m.kind);
            for verb in ["get", "create", "patch"] {
                assert!(
                    allows(rules, &group, plural, verb),
                    "{}: {verb} {group}/{plural} not granted by deploy/rbac",
                    m.file_name
                );
            }
        }
    }
    for (rules, group, resource, verb) in [
        (&management, "kubevirt.io", "virtualmachines", "list"),
        (&management, "kubevirt.io", "virtualmachines", "patch"),
        (
            &management,
            "kubevirt.io",
            "virtualmachineinstances",
            "list",
        ),
        (
            &management,
            "subresources.kubevirt.io",
            "virtualmachines/addvolume",
            "update",
        ),
        (&management, "", "persistentvolumeclaims", "patch"),
        (&tenant, "", "secrets", "update"),
        (&tenant, "core.libopenstorage.org", "storagenodes", "list"),
    ] {
        assert!(
            allows(rules, group, resource, verb),
            "{verb} {group}/{resource}"
        );
    }
}

// ------------------------------------------------------------------ status

#[tokio::test]
async fn status_explains_each_cluster_layer() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    let spec = direct_access_spec();
    let manifests = rendered(&spec);
    let ns = "clusters-tenant-full";
    let claims: Vec<&Manifest> = manifests
        .iter()
        .filter(|m| m.kind == "PersistentVolumeClaim" && m.cluster == Cluster::Management)
        .collect();
    let bound = claims[0].name.clone();
    Mock::given(method("GET"))
        .and(path(format!(
            "/api/v1/namespaces/{ns}/persistentvolumeclaims/{bound}"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": bound, "namespace": ns}, "status": {"phase": "Bound"}})))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(format!("^/api/v1/namespaces/{ns}/persistentvolumeclaims/.+$")))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404,
            "message": "not found"})))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/apis/kubevirt.io/v1/namespaces/{ns}/virtualmachines")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineList", "metadata": {},
            "items": [vm_json("tenant-full-workers-a", "2026-01-01T00:00:00Z", Some(0), json!([]))]})))
        .mount(&fake.server)
        .await;
    let report = pxfa::cluster::cluster_status(&spec, &manifests, &fake.client().await, None)
        .await
        .expect("status");
    assert!(!report.healthy());
    let claims_layer = &report.layers[0];
    assert_eq!(claims_layer.name, "management claims");
    assert_eq!(claims_layer.items.len(), claims.len());
    assert!(claims_layer.items[0].ok, "{:?}", claims_layer.items[0]);
    let missing = &claims_layer.items[1];
    assert_eq!((missing.ok, missing.state.as_str()), (false, "not found"));
    assert!(missing.problem.as_deref().unwrap().contains("pxfa apply"));
    let disks = &report.layers[1];
    assert_eq!(disks.items.len(), 4);
    assert!(disks.items[0].object.contains("tenant-full-workers-a"));
    assert!(
        disks.items[0].state.starts_with("missing pxdata0"),
        "{:?}",
        disks.items[0]
    );
    assert_eq!(disks.items[1].state, "no VM");
    // Nothing but reads.
    assert!(
        fake.server
            .received_requests()
            .await
            .unwrap()
            .iter()
            .all(|r| r.method.as_str() == "GET")
    );
}

// ------------------------------------------------- the whole rendered tenant

/// Discovery documents for every group/version the renderer uses, built from the
/// same kind table the RBAC test uses.
async fn mount_discovery(server: &MockServer, manifests: &[Manifest]) {
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
async fn mount_ready_management(server: &MockServer, manifests: &[Manifest]) {
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

#[tokio::test]
async fn whole_direct_access_tenant_applies_in_order_and_attaches_every_worker() {
    let fake = Fake::start().await;
    let spec = direct_access_spec();
    let manifests = rendered(&spec);
    mount_ready_management(&fake.server, &manifests).await;
    let opts = ApplyOptions {
        wait: fast_wait(1_000),
        ..Default::default()
    };
    let report = apply_manifests(&spec, &manifests, &fake.client().await, None, &opts)
        .await
        .expect("apply");
    assert!(report.stopped_at.is_none(), "{report:#?}");
    assert!(
        report.conflicts.is_empty() && report.pending.is_empty(),
        "{report:#?}"
    );
    let management_objects = manifests
        .iter()
        .filter(|m| m.cluster == Cluster::Management && m.form == Form::Resource && !m.secret)
        .count();
    assert_eq!(report.applied.len(), management_objects);
    assert_eq!(report.workers.len(), 4);
    assert!(report.workers.iter().all(|w| w.attached.len() == 3));
    // Step order on the wire: every apply of a step comes after every apply of the
    // steps before it, and hotplug comes last.
    let all = fake.server.received_requests().await.unwrap();
    let order_of = |p: &str| {
        manifests
            .iter()
            .find(|m| m.form == Form::Resource && p.ends_with(&format!("/{}", m.name)))
            .map(|m| m.order)
    };
    let steps: Vec<u32> = all
        .iter()
        .filter(|r| {
            r.method.as_str() == "PATCH"
                && r.headers.get("content-type").unwrap() == "application/apply-patch+yaml"
        })
        .filter_map(|r| order_of(r.url.path()))
        .collect();
    assert!(steps.windows(2).all(|w| w[0] <= w[1]), "{steps:?}");
    let last_apply = all
        .iter()
        .rposition(|r| {
            r.method.as_str() == "PATCH"
                && r.headers.get("content-type").unwrap() == "application/apply-patch+yaml"
        })
        .unwrap();
    let first_hotplug = all.iter().position(|r| r.method.as_str() == "PUT").unwrap();
    assert!(last_apply < first_hotplug);
    // The tenant manifests were reported, not sent.
    assert!(
        report
            .skipped
            .iter()
            .any(|s| s.reason.contains("--tenant-kubeconfig"))
    );
}

#[tokio::test]
async fn a_refused_secret_never_shows_its_value() {
    let fake = Fake::start().await;
    fake.core_discovery().await;
    let spec = cloud_drive_spec();
    let token = SecretString::from("6f1e0c6a-9d3f-4d10-8bbf-2b8c3e1f0a11");
    let secret = px_topology::render::tenant::pure_secret(&spec, Some(&token));
    Mock::given(method("PATCH"))
        .and(path("/api/v1/namespaces/portworx/secrets/px-pure-secret"))
        .respond_with(ResponseTemplate::new(422).set_body_json(json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Invalid", "code": 422,
            "message": "Secret \"px-pure-secret\" is invalid: data[pure.json]: Invalid value: \"6f1e0c6a-9d3f-4d10-8bbf-2b8c3e1f0a11\""})))
        .mount(&fake.server)
        .await;
    let mut on_management = secret;
    on_management.cluster = Cluster::Management;
    let opts = ApplyOptions {
        apply_secrets: true,
        ..Default::default()
    };
    let err = apply_manifests(&spec, &[on_management], &fake.client().await, None, &opts)
        .await
        .unwrap_err();
    let text = format!("{err:#} {err:?}");
    assert!(text.contains("Secret portworx/px-pure-secret"), "{text}");
    assert!(text.contains("422"), "{text}");
    assert!(!text.contains("6f1e0c6a"), "{text}");
}

// ------------------------------------------------------------- the binary

fn pxfa_bin(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_pxfa"))
        .args(args)
        .env_remove("PUREFA_URL")
        .env_remove("PUREFA_API")
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .output()
        .expect("run pxfa")
}

fn fixture_path(name: &str) -> String {
    format!(
        "{}/../../fixtures/tenants/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn crd_command_prints_the_crd() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let out = pxfa_bin(&["crd"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let crd: CustomResourceDefinition = serde_saphyr::from_str(&text).expect("CRD YAML");
    assert_eq!(crd.metadata.name.as_deref(), Some("tenantstorages.pxfa.io"));
}

#[tokio::test]
async fn apply_with_kubeconfig_finishes_on_the_management_cluster() {
    let fake = Fake::start().await;
    let spec = direct_access_spec();
    mount_ready_management(&fake.server, &rendered(&spec)).await;
    let kubeconfig = fake.kubeconfig.to_str().unwrap().to_string();
    let spec_file = fixture_path("valid-full.yaml");
    let out = tokio::task::spawn_blocking(move || {
        pxfa_bin(&[
            "--array",
            "sim",
            "--yes",
            "apply",
            "-f",
            &spec_file,
            "--kubeconfig",
            &kubeconfig,
            "--context",
            "fake",
            "--wait-timeout",
            "5s",
        ])
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("worker 03 -> VM tenant-full-workers-3"),
        "{stdout}"
    );
    assert!(stdout.contains("clusters: done"), "{stdout}");
    assert!(!fake.requests("PUT", "/addvolume").await.is_empty());
}

#[tokio::test]
async fn status_without_kubeconfig_shows_the_array_layer_only() {
    let spec_file = fixture_path("valid-full.yaml");
    let out = tokio::task::spawn_blocking(move || {
        pxfa_bin(&["--array", "sim", "-o", "json", "status", "-f", &spec_file])
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("status JSON");
    let layers = v["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1, "no kubeconfig: the array layer only");
    assert!(layers[0]["name"].as_str().unwrap().starts_with("array"));
    // A fresh simulated array holds nothing of the tenant yet.
    assert!(
        layers[0]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["ok"] == false)
    );
}
