//! Drivers (desired array state per option), rendering rules and secret handling.

use crate::support;

use flasharray::{ConnectionTarget, PodName};
use px_topology::spec::{Attach, DiskBus, TenantStorage};
use px_topology::{
    ArrayFacts, Cluster, Form, Manifest, RenderOptions, SCOPE_SHARED, Scope, TAG_DISK, TAG_NODE,
    TAG_TENANT, driver_for, render, write_dir,
};
use secrecy::SecretString;

const TOKEN: &str = "c5e2ab14-9b2f-4e1d-8a3c-0f6d7e8b9a10";

fn example(mode: &str) -> TenantStorage {
    support::example_specs()
        .into_iter()
        .find(|(m, _)| *m == mode)
        .map(|(_, s)| s)
        .unwrap()
}

fn render_default(spec: &TenantStorage) -> Vec<Manifest> {
    render(
        spec,
        &support::sizing(spec),
        &ArrayFacts::default(),
        RenderOptions::default(),
    )
    .unwrap()
}

fn find<'a>(ms: &'a [Manifest], kind: &str) -> Vec<&'a Manifest> {
    ms.iter().filter(|m| m.kind == kind).collect()
}

#[test]
fn direct_access_desired_state() {
    let spec = support::as_import(example("direct-access"));
    let sizing = support::sizing(&spec);
    let state = driver_for(&spec).desired_state(&spec, &sizing).unwrap();
    assert_eq!(driver_for(&spec).mode(), "direct-access");
    let replicas = spec.spec.hosted_cluster.replicas as usize;
    let per_vm = sizing.drives_per_node as usize + 1;
    assert_eq!(state.volumes.len(), replicas * per_vm);

    // In the tenant's pod, with the sizing's quota, which covers the volumes.
    let pod = state.pod.as_ref().unwrap();
    assert_eq!(pod.name.as_str(), "tenant-demo");
    let total: u64 = state.volumes.iter().map(|v| v.size.as_u64()).sum();
    assert_eq!(total, sizing.total_provisioned.as_u64());
    assert_eq!(pod.quota, Some(sizing.pod_quota));
    assert!(sizing.pod_quota.as_u64() >= total);
    assert_eq!(pod.tags[TAG_TENANT], "tenant-demo");

    let v0 = &state.volumes[0];
    assert_eq!(v0.name.as_str(), "tenant-demo::tenant-demo-w00-data0");
    assert_eq!(v0.size, sizing.drive_size);
    assert_eq!(v0.tags[TAG_NODE], "0");
    assert_eq!(v0.tags[TAG_DISK], "0");
    assert_eq!(v0.tags["role"], "px-data");
    let meta = &state.volumes[per_vm - 1];
    assert_eq!(meta.name.as_str(), "tenant-demo::tenant-demo-w00-meta");
    assert_eq!(meta.size, sizing.metadata_size);
    assert_eq!(meta.tags["role"], "px-metadata");
    let last = state.volumes.last().unwrap();
    assert_eq!(last.tags[TAG_NODE], (replicas - 1).to_string());

    let mut names: Vec<String> = state.volumes.iter().map(|v| v.name.key()).collect();
    names.sort();
    names.dedup();
    assert_eq!(
        names.len(),
        state.volumes.len(),
        "volume names must be unique"
    );

    // attach: fada -> no hosts, no host group, no connections; no token.
    assert!(state.hosts.is_empty() && state.host_groups.is_empty());
    assert!(
        state
            .notes
            .iter()
            .any(|n| n.contains("pxfa plans no hosts"))
    );
    assert!(state.connections.is_empty());
    assert!(state.api_token.is_none());
}

#[test]
fn direct_access_host_group_attach_connects_every_volume() {
    let mut spec = support::as_import(example("direct-access"));
    spec.spec.storage.attach = Attach::HostGroup;
    assert!(spec.validate().is_empty(), "{:#?}", spec.validate());
    let state = driver_for(&spec)
        .desired_state(&spec, &support::sizing(&spec))
        .unwrap();
    // Management nodes to find by initiator, shared, with normalised WWNs, in the host group.
    assert_eq!(state.hosts.len(), spec.spec.management.nodes.len());
    for (h, n) in state.hosts.iter().zip(&spec.spec.management.nodes) {
        assert_eq!(h.node, n.name);
        assert_eq!(h.scope, Scope::Shared);
        assert_eq!(h.tags["scope"], SCOPE_SHARED);
        assert!(
            !h.tags.contains_key(TAG_TENANT),
            "shared objects carry no tenant"
        );
        assert_eq!(h.host_group.as_ref().unwrap().as_str(), "hcp-mgmt");
        assert!(h.iqns.is_empty() && h.nqns.is_empty());
        for w in &h.wwns {
            assert_eq!(w.len(), 16, "{w}");
            assert!(
                w.chars()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()),
                "{w}"
            );
        }
    }
    assert_eq!(state.hosts[0].wwns[0], "2100F4C7AA002706");
    assert_eq!(state.host_groups.len(), 1);
    assert_eq!(state.host_groups[0].scope, Scope::Shared);
    assert_eq!(state.connections.len(), state.volumes.len());
    for (c, v) in state.connections.iter().zip(&state.volumes) {
        assert_eq!(c.volume, v.name);
        assert!(matches!(&c.target, ConnectionTarget::HostGroup(g) if g.as_str() == "hcp-mgmt"));
    }
}

#[test]
fn direct_access_without_pod_uses_plain_names() {
    let mut spec = support::as_import(example("direct-access"));
    spec.spec.storage.pod = None;
    let state = driver_for(&spec)
        .desired_state(&spec, &support::sizing(&spec))
        .unwrap();
    assert!(state.pod.is_none());
    assert_eq!(state.volumes[0].name.as_str(), "tenant-demo-w00-data0");
    let ms = render_default(&spec);
    let pvc = find(&ms, "PersistentVolumeClaim")[0];
    assert_eq!(
        pvc.body["metadata"]["annotations"]["portworx.io/pure-volume-name"],
        "tenant-demo-w00-data0"
    );
    let fada = find(&ms, "StorageClass")
        .into_iter()
        .find(|m| m.name == "pxfa-fada-tenant-demo")
        .unwrap();
    assert!(fada.body["parameters"].get("pure_fa_pod_name").is_none());
}

#[test]
fn fada_class_is_per_tenant_with_retain() {
    let mut spec = example("direct-access");
    let class = |spec: &TenantStorage| {
        let ms = render_default(spec);
        let sc = find(&ms, "StorageClass")
            .into_iter()
            .find(|m| m.body["parameters"]["backend"] == "pure_block")
            .cloned()
            .unwrap();
        let claims: Vec<String> = find(&ms, "PersistentVolumeClaim")
            .iter()
            .filter(|c| c.cluster == Cluster::Management)
            .map(|c| {
                c.body["spec"]["storageClassName"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        (sc, claims)
    };
    let (sc, claims) = class(&spec);
    assert_eq!(sc.name, "pxfa-fada-tenant-demo");
    assert_eq!(sc.body["reclaimPolicy"], "Retain");
    assert_eq!(sc.body["parameters"]["pure_fa_pod_name"], "tenant-demo");
    assert!(!claims.is_empty() && claims.iter().all(|c| c == "pxfa-fada-tenant-demo"));

    // Another tenant gets another class; an explicit name is kept, still Retain.
    spec.metadata.name = "tenant-green".into();
    spec.spec.storage.pod = Some(PodName::new("tenant-green").unwrap());
    assert_eq!(class(&spec).0.name, "pxfa-fada-tenant-green");
    spec.spec.storage.fada_storage_class = Some("fada-green".into());
    let (sc, claims) = class(&spec);
    assert_eq!(sc.name, "fada-green");
    assert_eq!(sc.body["reclaimPolicy"], "Retain");
    assert!(claims.iter().all(|c| c == "fada-green"));
}

#[test]
fn cloud_drive_desired_state() {
    let spec = example("cloud-drive");
    let sizing = support::sizing(&spec);
    let state = driver_for(&spec).desired_state(&spec, &sizing).unwrap();
    let pod = state.pod.as_ref().unwrap();
    assert_eq!(pod.name, PodName::new("tenant-cd").unwrap());
    assert_eq!(pod.quota, Some(sizing.pod_quota));
    assert_eq!(state.api_token.as_ref().unwrap().admin, "pxfa-tenant-cd");
    // The pod records the token user: array users carry no tags (#34).
    assert_eq!(
        pod.tags.get("token-user").map(String::as_str),
        Some("pxfa-tenant-cd")
    );
    assert!(state.volumes.is_empty() && state.hosts.is_empty());
    assert!(state.host_groups.is_empty() && state.connections.is_empty());

    // Without storage.pod, the pod is named after the tenant.
    let mut nopod = spec.clone();
    nopod.spec.storage.pod = None;
    let st = driver_for(&nopod).desired_state(&nopod, &sizing).unwrap();
    assert_eq!(st.pod.unwrap().name.as_str(), "tenant-cd");
}

#[test]
fn kubevirt_csi_needs_nothing_on_the_array() {
    let spec = example("kubevirt-csi");
    let state = driver_for(&spec)
        .desired_state(&spec, &support::sizing(&spec))
        .unwrap();
    assert!(state.is_empty());
    assert_eq!(state.tenant.to_string(), "default/tenant-kv");
}

#[test]
fn direct_access_manifests() {
    let spec = example("direct-access");
    let sizing = support::sizing(&spec);
    let ms = render_default(&spec);
    let pvcs: Vec<_> = find(&ms, "PersistentVolumeClaim")
        .into_iter()
        .filter(|m| m.cluster == Cluster::Management)
        .collect();
    let replicas = spec.spec.hosted_cluster.replicas as usize;
    assert_eq!(pvcs.len(), replicas * (sizing.drives_per_node as usize + 1));
    let p0 = pvcs[0];
    assert_eq!(p0.name, "tenant-demo-w00-data0");
    assert_eq!(p0.namespace.as_deref(), Some("clusters-tenant-demo"));
    // Dynamic provisioning (3.6.2): the claim imports nothing.
    assert_eq!(p0.body["metadata"]["annotations"], serde_json::json!({}));
    // 3.6.2 without the FA/FB driver: no live-migratable claims.
    assert_eq!(p0.body["spec"]["accessModes"][0], "ReadWriteOnce");
    assert_eq!(p0.body["spec"]["volumeMode"], "Block");

    let patches: Vec<_> = ms
        .iter()
        .filter(|m| matches!(m.form, Form::JsonPatch { .. }) && m.kind == "VirtualMachine")
        .collect();
    assert_eq!(patches.len(), replicas);
    let ops = patches[0].body.as_array().unwrap();
    assert_eq!(ops.len(), 2 * (sizing.drives_per_node as usize + 1));
    assert_eq!(ops[0]["value"]["serial"], "pxdata0");
    assert_eq!(ops[0]["value"]["disk"]["bus"], "scsi");
    assert_eq!(
        ops[1]["value"]["persistentVolumeClaim"]["claimName"],
        "tenant-demo-w00-data0"
    );
    assert!(
        patches[0]
            .purpose
            .iter()
            .any(|l| l.contains("virtctl addvolume"))
    );

    let sc = find(&ms, "StorageCluster")[0];
    assert_eq!(sc.cluster, Cluster::Tenant);
    let st = &sc.body["spec"];
    assert!(
        st.get("cloudStorage").is_none(),
        "never both storage and cloudStorage"
    );
    assert_eq!(
        st["storage"]["devices"][0],
        "/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_pxdata0"
    );
    assert_eq!(
        st["storage"]["systemMetadataDevice"],
        "/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_pxmeta"
    );
    assert_eq!(st["env"][0]["name"], "PX_NESTED");
    assert_eq!(st["image"], "portworx/oci-monitor:3.6.2");
    assert_eq!(
        sc.body["metadata"]["annotations"]["portworx.io/misc-args"],
        "-T px-storev2"
    );
    assert!(
        !ms.iter().any(|m| m.name == "px-pure-secret"),
        "direct access tenants never talk to the array"
    );

    let mut virtio = spec.clone();
    virtio.spec.storage.disk_bus = DiskBus::Virtio;
    let ms = render_default(&virtio);
    let sc = find(&ms, "StorageCluster")[0];
    assert_eq!(
        sc.body["spec"]["storage"]["devices"][0],
        "/dev/disk/by-id/virtio-pxdata0"
    );
}

#[test]
fn known_volume_serials_are_written_next_to_the_claims() {
    let spec = support::as_import(example("direct-access"));
    let mut facts = ArrayFacts::default();
    facts.volume_serials.insert(
        "tenant-demo::tenant-demo-w01-meta".to_string(),
        "F4C7AA0027061A2B00011234".to_string(),
    );
    let ms = render(
        &spec,
        &support::sizing(&spec),
        &facts,
        RenderOptions::default(),
    )
    .unwrap();
    let with_serial: Vec<_> = find(&ms, "PersistentVolumeClaim")
        .into_iter()
        .filter(|m| {
            m.body["metadata"]["annotations"]
                .get("pxfa.io/array-serial")
                .is_some()
        })
        .collect();
    assert_eq!(with_serial.len(), 1);
    assert_eq!(with_serial[0].name, "tenant-demo-w01-meta");
    assert_eq!(
        with_serial[0].body["metadata"]["annotations"]["pxfa.io/array-serial"],
        "F4C7AA0027061A2B00011234"
    );
}

#[test]
fn cloud_drive_manifests() {
    let spec = example("cloud-drive");
    let sizing = support::sizing(&spec);
    let ms = render_default(&spec);
    let sc = find(&ms, "StorageCluster")[0];
    let cs = &sc.body["spec"]["cloudStorage"];
    assert!(sc.body["spec"].get("storage").is_none());
    assert!(cs.get("maxStorageNodesPerZone").is_none());
    let specs = cs["deviceSpecs"].as_array().unwrap();
    assert_eq!(specs.len(), sizing.drives_per_node as usize);
    assert_eq!(
        specs[0],
        format!("size={},pod=tenant-cd", sizing.drive_size.gib_ceil())
    );
    assert_eq!(
        cs["systemMetadataDeviceSpec"],
        format!("size={},pod=tenant-cd", sizing.metadata_size.gib_ceil())
    );
    assert_eq!(cs["initialStorageNodes"], spec.spec.hosted_cluster.replicas);
    let env = sc.body["spec"]["env"].as_array().unwrap();
    assert_eq!(env[0]["name"], "PURE_FLASHARRAY_SAN_TYPE");
    assert_eq!(env[0]["value"], "ISCSI");
    assert_eq!(env[1]["name"], "PURE_ISCSI_ALLOWED_IFACES");
    assert_eq!(env[1]["value"], "enp2s0");

    let np = find(&ms, "NodePool")[0];
    let cm = find(&ms, "ConfigMap")[0];
    assert_eq!(np.body["spec"]["config"][0]["name"], cm.name.as_str());
    assert_eq!(cm.namespace.as_deref(), Some("clusters"));
    assert_eq!(np.body["spec"]["management"]["upgradeType"], "InPlace");
    assert_eq!(np.body["spec"]["management"]["autoRepair"], false);
    assert_eq!(
        np.body["spec"]["platform"]["kubevirt"]["additionalNetworks"][0]["name"],
        "clusters-tenant-cd/storage-network"
    );
}

#[test]
fn kubevirt_csi_manifests() {
    let spec = example("kubevirt-csi");
    let ms = render_default(&spec);
    let hc = find(&ms, "HostedCluster")[0];
    assert_eq!(hc.form, Form::Resource);
    let sd = &hc.body["spec"]["platform"]["kubevirt"]["storageDriver"];
    assert_eq!(sd["type"], "Manual");
    assert_eq!(
        sd["manual"]["storageClassMapping"][0]["guestStorageClassName"],
        "px-kubevirt-csi"
    );
    assert_eq!(
        sd["manual"]["volumeSnapshotClassMapping"][0]["infraVolumeSnapshotClassName"],
        "px-csi-snapclass"
    );
    assert!(find(&ms, "StorageCluster").is_empty());
    let tenant: Vec<_> = ms.iter().filter(|m| m.cluster == Cluster::Tenant).collect();
    assert_eq!(tenant.len(), 1);
    assert_eq!(
        tenant[0].body["spec"]["storageClassName"],
        "px-kubevirt-csi"
    );
}

#[test]
fn portworx_tenants_get_storage_driver_none_and_a_complete_hosted_cluster() {
    for mode in ["cloud-drive", "cloud-drive-nvme", "direct-access"] {
        let spec = example(mode);
        let ms = render_default(&spec);
        let hc = find(&ms, "HostedCluster")[0];
        let s = &hc.body["spec"];
        assert_eq!(
            s["platform"]["kubevirt"]["storageDriver"],
            serde_json::json!({"type": "None"}),
            "{mode}"
        );
        assert_eq!(
            s["release"]["image"],
            spec.spec
                .hosted_cluster
                .release_image
                .clone()
                .unwrap()
                .as_str()
        );
        assert_eq!(s["pullSecret"]["name"], spec.pull_secret_name().as_str());
        let services: Vec<&str> = s["services"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["service"].as_str().unwrap())
            .collect();
        assert_eq!(
            services,
            ["APIServer", "OAuthServer", "Konnectivity", "Ignition"]
        );
        assert_eq!(
            s["services"][0]["servicePublishingStrategy"]["type"],
            "LoadBalancer"
        );
        // The namespace and the pull secret come first; the secret is a template.
        let ps = ms
            .iter()
            .find(|m| m.kind == "Secret" && m.name == spec.pull_secret_name())
            .unwrap();
        assert!(ps.secret && ps.order < hc.order);
        assert!(
            ps.body["stringData"][".dockerconfigjson"]
                .as_str()
                .unwrap()
                .starts_with("<paste")
        );
        assert!(find(&ms, "Namespace").iter().any(|n| n.name == "clusters"));
        assert!(
            hc.purpose
                .iter()
                .any(|l| l.contains("hcp create cluster kubevirt")),
            "{mode}"
        );
    }
    let da = render_default(&example("direct-access"));
    let hc = &find(&da, "HostedCluster")[0].body["spec"];
    assert_eq!(hc["sshKey"]["name"], "tenant-demo-ssh-key");
    // The example puts etcd on the low-latency class pxfa renders for it (#36).
    assert_eq!(
        hc["etcd"]["managed"]["storage"]["persistentVolume"]["storageClassName"],
        "pxfa-etcd"
    );
    let etcd = find(&da, "StorageClass")
        .into_iter()
        .find(|m| m.name == "pxfa-etcd")
        .expect("the etcd class is rendered when the spec names it");
    assert_eq!(etcd.body["parameters"]["repl"], "2");
    assert_eq!(etcd.body["parameters"]["priority_io"], "high");
    assert!(etcd.purpose.iter().any(|l| l.contains("[L]")));
    // Another class named: pxfa renders none.
    let mut t = example("direct-access");
    t.spec.hosted_cluster.etcd_storage_class = Some("pxfa-vm-rootdisk".into());
    let ms = render_default(&t);
    assert!(
        !find(&ms, "StorageClass")
            .iter()
            .any(|m| m.name == "pxfa-etcd")
    );
}

#[test]
fn the_pull_secret_is_filled_only_from_the_file_and_only_with_include_secrets() {
    let spec = example("cloud-drive");
    let secret = r#"{"auths":{"quay.io":{"auth":"c2VjcmV0LXB1bGw="}}}"#;
    let with = |include_secrets| {
        render(
            &spec,
            &support::sizing(&spec),
            &ArrayFacts::default(),
            RenderOptions {
                include_secrets,
                pull_secret: Some(SecretString::from(secret)),
            },
        )
        .unwrap()
    };
    let text = all_written_text(&with(false));
    assert!(!text.contains("c2VjcmV0LXB1bGw="));
    let ms = with(true);
    let ps = ms
        .iter()
        .find(|m| m.name == spec.pull_secret_name())
        .unwrap();
    assert_eq!(ps.body["stringData"][".dockerconfigjson"], secret);
    assert!(!format!("{ps:?}").contains("c2VjcmV0LXB1bGw="));
}

#[test]
fn metallb_pool_serves_only_the_tenant_namespace() {
    let spec = example("direct-access");
    let ms = render_default(&spec);
    let pool = find(&ms, "IPAddressPool")[0];
    assert_eq!(
        pool.body["spec"]["serviceAllocation"]["namespaces"],
        serde_json::json!([spec.hcp_namespace()])
    );
    assert_eq!(find(&ms, "MetalLB").len(), 1);
}

#[test]
fn only_cloud_drive_workers_join_the_storage_network_unless_asked() {
    let nad = |spec: &TenantStorage| {
        !find(&render_default(spec), "NetworkAttachmentDefinition").is_empty()
    };
    assert!(nad(&example("cloud-drive")));
    let mut da = example("direct-access");
    assert!(!nad(&da));
    let ms = render_default(&da);
    assert!(
        find(&ms, "NodePool")[0].body["spec"]["platform"]["kubevirt"]
            .get("additionalNetworks")
            .is_none()
    );
    // Fibre Channel, workers off the network: no bridge on the management nodes.
    assert_eq!(da.protocol(), Some(px_topology::spec::Protocol::Fc));
    assert!(find(&ms, "NodeNetworkConfigurationPolicy").is_empty());
    assert!(find(&ms, "NMState").is_empty());
    // iSCSI: the management bridge stays, it is the management nodes' storage network.
    let mut iscsi = da.clone();
    iscsi.spec.storage.protocol = Some(px_topology::spec::Protocol::Iscsi);
    for (i, n) in iscsi.spec.management.nodes.iter_mut().enumerate() {
        n.wwns.clear();
        n.iqns = vec![format!("iqn.2026-01.net.example:worker-{i}")];
    }
    let ms = render_default(&iscsi);
    assert!(!find(&ms, "NodeNetworkConfigurationPolicy").is_empty());
    assert!(!find(&ms, "NMState").is_empty());
    da.spec.network.as_mut().unwrap().attach_workers = Some(true);
    assert!(nad(&da));
    // FC with the workers asked onto the network: their NAD needs the bridge.
    assert!(!find(&render_default(&da), "NodeNetworkConfigurationPolicy").is_empty());
}

#[test]
fn nncp_declares_the_uplink_and_its_mtu_before_the_vlan() {
    let mut cd = example("cloud-drive");
    // The linux bridge on a VLAN (the example keeps addresses on OVS).
    cd.spec.network.as_mut().unwrap().persistent_ips = Some(false);
    let ms = render_default(&cd);
    let net = cd.spec.network.clone().unwrap();
    for p in find(&ms, "NodeNetworkConfigurationPolicy") {
        let ifaces = p.body["spec"]["desiredState"]["interfaces"]
            .as_array()
            .unwrap();
        assert_eq!(ifaces[0]["name"], net.uplink.as_str());
        assert_eq!(ifaces[0]["type"], "ethernet");
        assert_eq!(ifaces[0]["mtu"], net.mtu);
        assert!(
            ifaces[0].get("ipv4").is_none(),
            "the uplink's addresses stay"
        );
        for i in &ifaces[1..] {
            assert!(i["mtu"].as_u64().unwrap() <= ifaces[0]["mtu"].as_u64().unwrap());
        }
    }
    let n = cd.spec.network.as_mut().unwrap();
    n.uplink_mtu = Some(9216);
    n.uplink_type = px_topology::spec::UplinkType::Bond;
    let ms = render_default(&cd);
    let p = find(&ms, "NodeNetworkConfigurationPolicy")[0];
    let up = &p.body["spec"]["desiredState"]["interfaces"][0];
    assert_eq!(
        (up["type"].as_str(), up["mtu"].as_u64()),
        (Some("bond"), Some(9216))
    );
    // An uplink below the VLAN's MTU is refused with its path.
    cd.spec.network.as_mut().unwrap().uplink_mtu = Some(1500);
    cd.spec.network.as_mut().unwrap().mtu = 9000;
    let errs = cd.validate();
    assert!(
        errs.iter()
            .any(|e| e.to_string().contains("spec.network.uplinkMtu")),
        "{errs:?}"
    );
}

#[test]
fn mce_change_adds_only_missing_components() {
    use px_topology::mce_components_patch;
    use serde_json::json;
    let full = json!({"spec": {"overrides": {"components": [
        {"name": "hypershift", "enabled": false},
        {"name": "hypershift-local-hosting", "enabled": true},
        {"name": "console", "enabled": true}]}}});
    assert!(
        mce_components_patch(Some(&full)).is_empty(),
        "a disabled entry is the admin's"
    );
    let partial =
        json!({"spec": {"overrides": {"components": [{"name": "hypershift", "enabled": true}]}}});
    assert_eq!(
        mce_components_patch(Some(&partial)),
        vec![json!({"op": "add", "path": "/spec/overrides/components/-",
                    "value": {"name": "hypershift-local-hosting", "enabled": true}})]
    );
    let ops = mce_components_patch(Some(&json!({"spec": {}})));
    assert_eq!(ops.len(), 1);
    assert_eq!(ops[0]["path"], "/spec/overrides");
    assert_eq!(ops[0]["value"]["components"].as_array().unwrap().len(), 2);
}

#[test]
fn multicluster_engine_uses_hypershift_never_preview() {
    for (_, spec) in support::example_specs() {
        let ms = render_default(&spec);
        let mce = find(&ms, "MultiClusterEngine")[0];
        assert!(
            matches!(mce.form, Form::JsonPatch { .. }),
            "an MCE object would replace the list"
        );
        let text = serde_json::to_string(&mce.body).unwrap();
        assert!(!text.contains("hypershift-preview"));
        assert_eq!(mce.body[0]["value"]["name"], "hypershift");
    }
}

#[test]
fn operator_owned_root_class_is_not_emitted_and_nodiscard_follows_versions() {
    // The Portworx operator owns px-rwx-block-kubevirt: naming it reuses that class.
    let mut cd = example("cloud-drive");
    cd.spec.hosted_cluster.root_storage_class = "px-rwx-block-kubevirt".to_string();
    assert!(
        render_default(&cd)
            .iter()
            .all(|m| m.name != "px-rwx-block-kubevirt")
    );

    let mut da = example("direct-access");
    let root = |ms: &[Manifest]| {
        ms.iter()
            .find(|m| m.name == "pxfa-vm-rootdisk")
            .unwrap()
            .body["parameters"]
            .clone()
    };
    // Virt 4.19.2, OCP 4.19.10: no discard problem; the versions are recorded.
    assert!(root(&render_default(&da)).get("nodiscard").is_none());
    let ms = render_default(&da);
    let ann = &ms
        .iter()
        .find(|m| m.name == "pxfa-vm-rootdisk")
        .unwrap()
        .body["metadata"]["annotations"];
    assert_eq!(ann["pxfa.io/openshift-virtualization-version"], "4.19.2");
    assert_eq!(ann["pxfa.io/management-openshift-version"], "4.19.10");
    da.spec.management.virtualization_version = Some("4.18.3".parse().unwrap());
    assert_eq!(root(&render_default(&da))["nodiscard"], "true");
    // The management OpenShift decides, not the tenant's release.
    da.spec.management.virtualization_version = Some("4.19.2".parse().unwrap());
    da.spec.management.openshift_version = Some("4.20.3".parse().unwrap());
    assert_eq!(root(&render_default(&da))["nodiscard"], "true");
    da.spec.management.openshift_version = Some("4.20.27".parse().unwrap());
    da.spec.hosted_cluster.release_image =
        Some("quay.io/openshift-release-dev/ocp-release:4.20.3-multi".to_string());
    assert!(root(&render_default(&da)).get("nodiscard").is_none());
}

#[test]
fn files_are_numbered_without_gaps_and_sorted() {
    for (mode, spec) in support::example_specs() {
        let ms = render_default(&spec);
        for cluster in [Cluster::Management, Cluster::Tenant] {
            let orders: Vec<u32> = ms
                .iter()
                .filter(|m| m.cluster == cluster)
                .map(|m| m.order)
                .collect();
            let mut expected = 1;
            for o in &orders {
                assert!(*o == expected || *o == expected + 1, "{mode}: {orders:?}");
                expected = *o;
            }
        }
        let mut sorted = ms.clone();
        sorted.sort_by_key(|m| (m.cluster, m.order));
        assert_eq!(sorted, ms, "{mode}");
    }
}

// ---- secrets ------------------------------------------------------------------

/// The manifests of `spec` with the token in the facts, as apply renders them.
fn render_with_token(spec: &TenantStorage, opts: RenderOptions) -> Vec<Manifest> {
    render(spec, &support::sizing(spec), &facts_with_token(), opts).unwrap()
}
fn facts_with_token() -> ArrayFacts {
    ArrayFacts {
        api_token: Some(SecretString::from(TOKEN)),
        ..ArrayFacts::default()
    }
}

fn all_written_text(ms: &[Manifest]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let paths = write_dir(ms, tmp.path()).unwrap().written;
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn token_never_appears_without_include_secrets() {
    let spec = example("cloud-drive");
    let ms = render_with_token(&spec, RenderOptions::default());
    let text = all_written_text(&ms);
    assert!(!text.contains(TOKEN), "token leaked into rendered files");
    assert!(
        !format!("{ms:?}").contains(TOKEN),
        "token leaked into Debug"
    );
    let secret = ms.iter().find(|m| m.name == "px-pure-secret").unwrap();
    assert!(secret.secret);
    let pure = secret.body["stringData"]["pure.json"].as_str().unwrap();
    assert!(
        pure.contains("<paste the API token of array user pxfa-tenant-cd here>"),
        "{pure}"
    );
    assert!(pure.contains("fa1-mgmt.example.net"));
}

#[test]
fn token_is_written_only_when_asked_for() {
    let spec = example("cloud-drive");
    let ms = render_with_token(
        &spec,
        RenderOptions {
            include_secrets: true,
            ..RenderOptions::default()
        },
    );
    let secret = ms.iter().find(|m| m.name == "px-pure-secret").unwrap();
    let pure: serde_json::Value =
        serde_json::from_str(secret.body["stringData"]["pure.json"].as_str().unwrap()).unwrap();
    assert_eq!(pure["FlashArrays"][0]["APIToken"], TOKEN);
    // Only the secret file holds it, and Debug still hides it.
    assert!(!format!("{ms:?}").contains(TOKEN));
    for m in ms.iter().filter(|m| !m.secret) {
        assert!(
            !serde_json::to_string(&m.body).unwrap().contains(TOKEN),
            "{}",
            m.file_name
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    write_dir(&ms, tmp.path()).unwrap();
    let path = tmp.path().join("tenant").join(&secret.file_name);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(TOKEN));
    assert!(text.contains("# SECRET"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "secret file must be owner-only");
    }
    // include_secrets without a token still gives the placeholder.
    let ms = render(
        &spec,
        &support::sizing(&spec),
        &ArrayFacts::default(),
        RenderOptions {
            include_secrets: true,
            ..RenderOptions::default()
        },
    )
    .unwrap();
    let pure =
        ms.iter().find(|m| m.name == "px-pure-secret").unwrap().body["stringData"]["pure.json"]
            .as_str()
            .unwrap()
            .to_string();
    assert!(pure.contains("<paste the API token"));
}

#[test]
fn write_dir_removes_only_its_own_stale_files() {
    let mut spec = example("direct-access");
    spec.spec.hosted_cluster.replicas = 4;
    let tmp = tempfile::tempdir().unwrap();
    write_dir(&render_default(&spec), tmp.path()).unwrap();
    let mine = tmp.path().join("management/keep-me.yaml");
    std::fs::write(&mine, "# admin's own notes\n").unwrap();
    let before = std::fs::read_dir(tmp.path().join("management"))
        .unwrap()
        .count();

    spec.spec.hosted_cluster.replicas -= 1;
    let ms = render_default(&spec);
    write_dir(&ms, tmp.path()).unwrap();
    let names: Vec<String> = std::fs::read_dir(tmp.path().join("management"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.len() < before);
    assert!(mine.exists(), "a file pxfa did not write must survive");
    let last = spec.spec.hosted_cluster.replicas;
    assert!(
        !names.iter().any(|n| n.contains(&format!("w{last:02}"))),
        "stale worker files remain: {names:?}"
    );
    let readme = std::fs::read_to_string(tmp.path().join("README.txt")).unwrap();
    for m in &ms {
        assert!(
            readme.contains(&m.file_name),
            "README misses {}",
            m.file_name
        );
    }
}

#[test]
fn rendered_manifests_pass_pxfa_lint() {
    use px_topology::lint_manifests;
    for (mode, spec) in support::example_specs() {
        let ms = render_default(&spec);
        let docs: Vec<serde_json::Value> = ms
            .iter()
            .filter(|m| m.form == Form::Resource)
            .map(|m| m.body.clone())
            .collect();
        let findings = lint_manifests(&docs);
        assert!(findings.is_empty(), "{mode}: {findings:#?}");
    }
}

// ---- issue 23: a bundle that applies as is ----

#[test]
fn ssh_key_secret_is_rendered_as_a_template_when_the_hosted_cluster_names_one() {
    let da = example("direct-access");
    let ms = render_default(&da);
    let hc = find(&ms, "HostedCluster")[0];
    let name = hc.body["spec"]["sshKey"]["name"].as_str().unwrap();
    let secret = ms
        .iter()
        .find(|m| m.kind == "Secret" && m.name == name)
        .expect("the Secret spec.sshKey names is in the bundle");
    assert!(secret.secret, "handled as a secret");
    assert_eq!(secret.namespace.as_deref(), hc.namespace.as_deref());
    assert!(secret.order < hc.order, "applied before the HostedCluster");
    let key = secret.body["stringData"]["id_rsa.pub"].as_str().unwrap();
    assert!(key.starts_with("<paste"), "{key}");
    assert!(secret.purpose.iter().any(|l| l.contains("TEMPLATE")));
    // No sshKeySecret: neither sshKey nor a Secret.
    let cd = example("cloud-drive");
    let ms = render_default(&cd);
    assert!(
        find(&ms, "HostedCluster")[0].body["spec"]
            .get("sshKey")
            .is_none()
    );
    assert_eq!(
        find(&ms, "Secret").len(),
        2,
        "pull secret and px-pure-secret only"
    );
}

#[test]
fn node_pools_carry_no_storage_node_label_and_kubevirt_csi_cites_no_portworx() {
    for (mode, spec) in support::example_specs() {
        let ms = render_default(&spec);
        let pool = find(&ms, "NodePool")[0];
        assert!(pool.body["spec"].get("nodeLabels").is_none(), "{mode}");
        let portworx = pool.purpose.iter().any(|l| l.contains("Portworx"));
        assert_eq!(
            portworx,
            mode != "kubevirt-csi",
            "{mode}: {:?}",
            pool.purpose
        );
    }
}

#[test]
fn ingress_change_is_a_merge_patch_that_keeps_namespace_ownership() {
    for (_, spec) in support::example_specs() {
        let ms = render_default(&spec);
        let ing = find(&ms, "IngressController")[0];
        assert!(matches!(ing.form, Form::MergePatch { .. }));
        assert!(ing.file_name.ends_with("-patch.yaml"));
        // RFC 7386 on a live object that sets namespaceOwnership keeps it.
        let mut live =
            serde_json::json!({"spec": {"routeAdmission": {"namespaceOwnership": "Strict"}}});
        merge(&mut live, &ing.body["spec"]);
        assert_eq!(
            live["spec"]["routeAdmission"],
            serde_json::json!({"namespaceOwnership": "Strict", "wildcardPolicy": "WildcardsAllowed"})
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let ms = render_default(&example("cloud-drive"));
    write_dir(&ms, dir.path()).unwrap();
    let ing = ms.iter().find(|m| m.kind == "IngressController").unwrap();
    let text = std::fs::read_to_string(dir.path().join("management").join(&ing.file_name)).unwrap();
    assert!(text.contains("--type=merge"), "{text}");
    assert!(!text.contains("--type=json"), "{text}");
}

/// RFC 7386 merge of `patch` into `target["spec"]`.
fn merge(target: &mut serde_json::Value, patch: &serde_json::Value) {
    fn go(t: &mut serde_json::Value, p: &serde_json::Value) {
        match (t.as_object_mut(), p.as_object()) {
            (Some(tm), Some(pm)) => {
                for (k, v) in pm {
                    if v.is_null() {
                        tm.remove(k);
                    } else {
                        go(tm.entry(k.clone()).or_insert(serde_json::Value::Null), v);
                    }
                }
            }
            _ => *t = p.clone(),
        }
    }
    go(&mut target["spec"], patch);
}

#[test]
fn mce_guarded_command_adds_only_missing_components_even_without_a_list() {
    use px_topology::{mce_components_patch, mce_guard_program};
    use serde_json::json;
    let ms = render_default(&example("cloud-drive"));
    let mce = find(&ms, "MultiClusterEngine")[0];
    assert!(
        mce.purpose
            .iter()
            .any(|l| l.contains("oc get mce multiclusterengine -o json | jq")
                && l.ends_with("| oc replace -f -")),
        "{:?}",
        mce.purpose
    );
    let Ok(jq) = which_jq() else {
        eprintln!("jq not installed: the guard program is not run");
        return;
    };
    let cases = [
        json!({"spec": {}}),
        json!({"spec": {"overrides": {}}}),
        json!({"spec": {"overrides": {"components": [{"name": "console", "enabled": true}]}}}),
        json!({"spec": {"overrides": {"components": [
            {"name": "hypershift", "enabled": false},
            {"name": "hypershift-local-hosting", "enabled": true}]}}}),
    ];
    for live in cases {
        let out = std::process::Command::new(&jq)
            .args(["-c", &mce_guard_program()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin
                    .take()
                    .unwrap()
                    .write_all(live.to_string().as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        assert!(out.status.success(), "{live}");
        let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let names: Vec<&str> = got["spec"]["overrides"]["components"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        for c in ["hypershift", "hypershift-local-hosting"] {
            assert_eq!(
                names.iter().filter(|n| **n == c).count(),
                1,
                "{live} -> {got}"
            );
        }
        if mce_components_patch(Some(&live)).is_empty() {
            assert_eq!(got, live, "nothing missing: nothing changes");
        }
    }
}

fn which_jq() -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("jq"))
        .find(|p| p.is_file())
        .ok_or(())
}

#[test]
fn every_load_balancer_published_tenant_gets_metallb_unless_an_external_one_is_stated() {
    use px_topology::lint_spec;
    for (mode, spec) in support::example_specs() {
        let ms = render_default(&spec);
        let hc = find(&ms, "HostedCluster")[0];
        assert_eq!(
            hc.body["spec"]["services"][0]["servicePublishingStrategy"]["type"],
            "LoadBalancer"
        );
        assert_eq!(find(&ms, "IPAddressPool").len(), 1, "{mode}");
        assert_eq!(find(&ms, "L2Advertisement").len(), 1, "{mode}");
        assert_eq!(find(&ms, "MetalLB").len(), 1, "{mode}");
        let pool = find(&ms, "IPAddressPool")[0];
        assert_eq!(
            pool.body["spec"]["serviceAllocation"]["namespaces"][0],
            spec.hcp_namespace().as_str()
        );
        // An external load balancer: no MetalLB objects, and the spec lints clean.
        let mut ext = spec.clone();
        ext.spec.management.metallb = None;
        ext.spec.management.external_load_balancer = true;
        assert!(ext.validate().is_empty(), "{mode}");
        let ms = render_default(&ext);
        assert!(find(&ms, "IPAddressPool").is_empty() && find(&ms, "MetalLB").is_empty());
        assert!(
            lint_spec(&ext).iter().all(|f| f.rule != "PXFA028"),
            "{mode}"
        );
        // Neither: lint errors.
        ext.spec.management.external_load_balancer = false;
        let f = lint_spec(&ext);
        assert!(f.iter().any(|f| f.rule == "PXFA028"), "{mode}: {f:?}");
        // Both: refused.
        let mut both = spec.clone();
        both.spec.management.external_load_balancer = true;
        assert!(
            both.validate().iter().any(|e| e
                .to_string()
                .contains("spec.management.externalLoadBalancer")),
            "{mode}"
        );
    }
}

#[test]
fn disk_patch_headers_say_what_the_stated_hotplug_gate_does() {
    use px_topology::spec::HotplugGate;
    use px_topology::{lint_manifests, lint_spec};
    let da = example("direct-access");
    assert_eq!(da.spec.management.hotplug_gate, HotplugGate::HotplugVolumes);
    let patches = |spec: &TenantStorage| -> Vec<Manifest> {
        render_default(spec)
            .into_iter()
            .filter(|m| m.kind == "VirtualMachine")
            .collect()
    };
    for p in patches(&da) {
        let text = p.purpose.join("\n");
        assert!(!text.contains("Same as"), "{text}");
        assert!(text.contains("does NOT hotplug"), "{text}");
        let lines = p
            .purpose
            .iter()
            .filter(|l| l.contains("virtctl addvolume"))
            .count();
        assert_eq!(lines, p.body.as_array().unwrap().len() / 2, "one per disk");
        assert!(
            p.purpose
                .iter()
                .filter(|l| l.contains("virtctl addvolume"))
                .all(|l| l.ends_with("--persist"))
        );
    }
    let mut decl = da.clone();
    decl.spec.management.hotplug_gate = HotplugGate::DeclarativeHotplugVolumes;
    for p in patches(&decl) {
        let text = p.purpose.join("\n");
        assert!(
            text.contains("hotplugs the disks\nlive") || text.contains("live"),
            "{text}"
        );
        assert!(!text.contains("virtctl"), "{text}");
    }
    // Declarative on 4.19 is unlikely: PXFA029; on 4.21 it is not.
    assert!(lint_spec(&decl).iter().any(|f| f.rule == "PXFA029"));
    decl.spec.management.virtualization_version = Some("4.21.0".parse().unwrap());
    assert!(lint_spec(&decl).iter().all(|f| f.rule != "PXFA029"));
    let mut old_gate = da.clone();
    old_gate.spec.management.virtualization_version = Some("5.0.1".parse().unwrap());
    assert!(lint_spec(&old_gate).iter().any(|f| f.rule == "PXFA029"));

    // Serials: pxfa's are short; a 37-character one in a patch or a VM is PXFA030.
    for p in patches(&da) {
        for op in p.body.as_array().unwrap() {
            if let Some(s) = op["value"].get("serial") {
                assert!(s.as_str().unwrap().len() <= 36);
            }
        }
    }
    let long = "x".repeat(37);
    let patch = serde_json::json!([{"op": "add", "path": "/spec/template/spec/domain/devices/disks/-",
        "value": {"name": "d", "serial": long, "disk": {"bus": "scsi"}}}]);
    assert!(lint_manifests(&[patch]).iter().any(|f| f.rule == "PXFA030"));
    let vm = serde_json::json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
        "metadata": {"name": "vm", "namespace": "ns"},
        "spec": {"template": {"spec": {"domain": {"devices": {"disks": [
            {"name": "d", "serial": "x".repeat(36)}]}}}}}});
    assert!(lint_manifests(&[vm]).iter().all(|f| f.rule != "PXFA030"));
}

#[test]
fn direct_access_claims_are_live_migratable_only_with_the_ga_fa_fb_driver() {
    let base = example("direct-access");
    let mode_of = |spec: &TenantStorage| -> (String, String) {
        let ms = render_default(spec);
        let pvc = ms
            .iter()
            .find(|m| m.kind == "PersistentVolumeClaim" && m.cluster == Cluster::Management)
            .unwrap();
        let pool = find(&ms, "NodePool")[0];
        (
            pvc.body["spec"]["accessModes"][0]
                .as_str()
                .unwrap()
                .to_string(),
            pool.purpose.join(" "),
        )
    };
    // 3.6.2, no driver: RWO, and the NodePool says the VMs do not live-migrate.
    let (m, text) = mode_of(&base);
    assert_eq!(m, "ReadWriteOnce");
    assert!(
        text.contains("do NOT live-migrate") && text.contains("faFbDriver false"),
        "{text}"
    );
    // 3.6.2 with the driver: Early Access, still RWO, said plainly.
    let mut ea = base.clone();
    ea.spec.management.fa_fb_driver = true;
    let (m, text) = mode_of(&ea);
    assert_eq!(m, "ReadWriteOnce");
    assert!(text.contains("Early Access"), "{text}");
    // 3.7 with the driver: RWX, live-migratable.
    let mut ga = ea.clone();
    ga.spec.portworx.version = "3.7.0".parse().unwrap();
    let (m, text) = mode_of(&ga);
    assert_eq!(m, "ReadWriteMany");
    assert!(
        text.contains("live-migrate") && !text.contains("NOT"),
        "{text}"
    );
    // 3.7 without the driver: RWO.
    let mut no = ga.clone();
    no.spec.management.fa_fb_driver = false;
    assert_eq!(mode_of(&no).0, "ReadWriteOnce");
}

#[test]
fn storage_nad_states_the_migration_caveat_and_the_reconciler() {
    use px_topology::lint_spec;
    let mut cd = example("cloud-drive");
    // The example keeps addresses on a localnet network; this is the bridge's NAD.
    let net = cd.spec.network.as_mut().unwrap();
    net.persistent_ips = Some(false);
    net.whereabouts_reconciler = true;
    let nad_text = |spec: &TenantStorage| {
        find(&render_default(spec), "NetworkAttachmentDefinition")[0]
            .purpose
            .join(" ")
    };
    let text = nad_text(&cd);
    assert!(
        text.contains("kubevirt/kubevirt#14320") && text.contains("NEW address"),
        "{text}"
    );
    assert!(
        text.contains("whereaboutsReconciler: true states"),
        "{text}"
    );
    assert!(lint_spec(&cd).iter().all(|f| f.rule != "PXFA031"));
    cd.spec.network.as_mut().unwrap().whereabouts_reconciler = false;
    assert!(nad_text(&cd).contains("opt-in on OpenShift"));
    assert!(lint_spec(&cd).iter().any(|f| f.rule == "PXFA031"));
    // No worker on the network: nothing to warn about.
    let da = example("direct-access");
    assert!(lint_spec(&da).iter().all(|f| f.rule != "PXFA031"));
}

#[test]
fn portworx_tenants_get_their_operator_and_an_optional_default_class() {
    for (mode, spec) in support::example_specs() {
        let ms = render_default(&spec);
        let tenant: Vec<&Manifest> = ms.iter().filter(|m| m.cluster == Cluster::Tenant).collect();
        let og = tenant.iter().find(|m| m.kind == "OperatorGroup");
        let sub = tenant.iter().find(|m| m.kind == "Subscription");
        if !spec.mode().runs_portworx() {
            assert!(og.is_none() && sub.is_none(), "{mode}");
            continue;
        }
        let (og, sub) = (og.unwrap(), sub.unwrap());
        let ns = spec.spec.portworx.namespace.as_str();
        assert_eq!(og.namespace.as_deref(), Some(ns));
        assert_eq!(sub.namespace.as_deref(), Some(ns));
        assert_eq!(sub.body["spec"]["name"], "portworx-certified");
        assert_eq!(sub.body["spec"]["source"], "certified-operators");
        let order = |k: &str| tenant.iter().find(|m| m.kind == k).unwrap().order;
        assert!(
            order("Namespace") < sub.order && sub.order < order("StorageCluster"),
            "{mode}"
        );
        if let Some(secret) = tenant.iter().find(|m| m.kind == "Secret") {
            assert!(
                secret.order < sub.order,
                "{mode}: px-pure-secret keeps its step"
            );
        }
        // The class is not the default unless asked.
        let class = tenant.iter().find(|m| m.kind == "StorageClass").unwrap();
        assert!(
            class.body["metadata"].get("annotations").is_none(),
            "{mode}"
        );
        let mut def = spec.clone();
        def.spec.storage.default_storage_class = true;
        assert!(def.validate().is_empty(), "{mode}");
        let ms = render_default(&def);
        let class = ms
            .iter()
            .find(|m| m.cluster == Cluster::Tenant && m.kind == "StorageClass")
            .unwrap();
        assert_eq!(
            class.body["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"],
            "true"
        );
    }
    let mut kv = example("kubevirt-csi");
    kv.spec.storage.default_storage_class = true;
    assert!(
        kv.validate()
            .iter()
            .any(|e| e.to_string().contains("spec.storage.defaultStorageClass"))
    );
}

/// [L] PX_NESTED has no Portworx source: on by default (as pxfa always rendered it),
/// `portworx.nested: false` leaves it out; the header says which, marked [L].
#[test]
fn px_nested_is_configurable_and_marked_unconfirmed() {
    let mut da = example("direct-access");
    let env_of = |spec: &TenantStorage| {
        let ms = render_default(spec);
        let sc = find(&ms, "StorageCluster")[0];
        (sc.body["spec"]["env"].clone(), sc.purpose.join(" "))
    };
    let (env, header) = env_of(&da);
    assert!(
        env.as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "PX_NESTED" && e["value"] == "true"),
        "{env}"
    );
    assert!(header.contains("[L] env PX_NESTED=true"), "{header}");
    da.spec.portworx.nested = false;
    let (env, header) = env_of(&da);
    assert!(
        !env.as_array()
            .into_iter()
            .flatten()
            .any(|e| e["name"] == "PX_NESTED"),
        "{env}"
    );
    assert!(header.contains("portworx.nested: false"), "{header}");
}
