//! Worker VMs: stable index mapping, disk hotplug with serials, replaced VMs, the
//! guest NIC read from VMI status.

use px_cluster::vms::{AttachOptions, attach_workers, discover_guest_interface};
use px_cluster::worker_disks;
use px_topology::{Form, Manifest};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::support::*;

/// The rendered patches of the worker VMs (their disks).
fn vm_patches(manifests: &[Manifest]) -> Vec<&Manifest> {
    manifests
        .iter()
        .filter(|m| matches!(m.form, Form::JsonPatch { .. }) && m.kind == "VirtualMachine")
        .collect()
}

#[tokio::test]
async fn hotplug_maps_vms_stably_and_attaches_disks_with_serials() {
    let fake = Fake::start().await;
    let spec = direct_access_spec();
    let manifests = rendered(&spec);
    let patches = vm_patches(&manifests);
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
    let patches = vm_patches(&manifests);
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

#[tokio::test]
async fn cloud_drive_over_iscsi_takes_the_guest_interface_the_vms_report() {
    use px_cluster::{GuestInterface, resolve_guest_interface};
    let fake = Fake::start().await;
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/tenant-cloud-drive.yaml"
    ))
    .unwrap();
    let mut spec = px_topology::parse_valid_spec(&text).expect("valid example");
    let ns = spec.hcp_namespace();
    let nad = spec.spec.network.as_ref().unwrap().nad_name.clone();
    let vmi = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
           "metadata": {"name": format!("{}-abcde", spec.node_pool()), "namespace": ns},
           "spec": {"networks": [{"name": "storage", "multus": {"networkName": format!("{ns}/{nad}")}}]},
           "status": {"interfaces": [{"name": "storage", "interfaceName": "enp7s0"}]}});
    Mock::given(method("GET"))
        .and(path(format!(
            "/apis/kubevirt.io/v1/namespaces/{ns}/virtualmachineinstances"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceList", "metadata": {},
            "items": [vmi]})))
        .mount(&fake.server)
        .await;
    let client = fake.client().await;
    let outcome = resolve_guest_interface(&client, &mut spec).await.unwrap();
    assert_eq!(
        outcome,
        GuestInterface::Replaced {
            specified: "enp2s0".into(),
            found: "enp7s0".into()
        }
    );
    assert_eq!(
        spec.spec.network.as_ref().unwrap().guest_interface,
        "enp7s0"
    );
    // The same answer again: nothing to replace.
    let outcome = resolve_guest_interface(&client, &mut spec).await.unwrap();
    assert_eq!(outcome, GuestInterface::AsSpecified);

    // Direct access names no guest NIC: the cluster is not asked.
    let mut da = direct_access_spec();
    let before = fake.server.received_requests().await.unwrap().len();
    let outcome = resolve_guest_interface(&client, &mut da).await.unwrap();
    assert_eq!(outcome, GuestInterface::NotNeeded);
    assert_eq!(fake.server.received_requests().await.unwrap().len(), before);
}
