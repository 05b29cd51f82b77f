//! pxfa agrees with itself: `pxfa lint` finds nothing in what `pxfa render` wrote,
//! for every example and variant; and the lint rules for the seed's traps.

use crate::support;

use px_topology::spec::{TenantStorage, VolumeMode};
use px_topology::{
    ArrayFacts, Finding, RenderOptions, lint_manifests, lint_paths, lint_spec, render, write_dir,
};
use serde_json::{Value, json};

/// Every example, plus variants that change what is rendered: old management
/// versions (nodiscard set), a direct-access tenant asked onto the storage network.
fn variants() -> Vec<(String, TenantStorage)> {
    let mut out: Vec<(String, TenantStorage)> = support::example_specs()
        .into_iter()
        .map(|(m, s)| (m.to_string(), s))
        .collect();
    for (name, spec) in support::example_specs() {
        let mut old = spec.clone();
        old.spec.management.virtualization_version = Some("4.18.3".parse().unwrap());
        old.spec.management.openshift_version = Some("4.20.3".parse().unwrap());
        out.push((format!("{name}+old-management"), old));
        let mut unknown = spec;
        unknown.spec.management.virtualization_version = None;
        unknown.spec.hosted_cluster.virtualization_version = None;
        unknown.spec.management.openshift_version = None;
        out.push((format!("{name}+unknown-versions"), unknown));
    }
    out
}

fn rules(findings: &[Finding]) -> Vec<&'static str> {
    findings.iter().map(|f| f.rule).collect()
}

#[test]
fn pxfa_lint_finds_nothing_in_pxfa_render_output() {
    for (name, spec) in variants() {
        let ms = render(
            &spec,
            &support::sizing(&spec),
            &ArrayFacts::default(),
            RenderOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let dir = tempfile::tempdir().unwrap();
        write_dir(&ms, dir.path()).unwrap();
        let findings = lint_paths([dir.path()]).unwrap();
        assert!(findings.is_empty(), "{name}: {findings:#?}");
    }
}

#[test]
fn the_examples_themselves_lint_clean() {
    for (name, spec) in support::example_specs() {
        let findings = lint_spec(&spec);
        // PXFA032 only: a cloud-drive tenant without a realm holds an array-wide token.
        let want: &[&str] = match name {
            "cloud-drive" | "cloud-drive-nvme" => &["PXFA032"],
            _ => &[],
        };
        assert_eq!(rules(&findings), want, "{name}: {findings:#?}");
    }
}

#[test]
fn nodiscard_lint_reads_the_management_files_before_the_recorded_versions() {
    let spec = support::example("direct-access");
    let ms = render(
        &spec,
        &support::sizing(&spec),
        &ArrayFacts::default(),
        RenderOptions::default(),
    )
    .unwrap();
    let class = ms
        .iter()
        .find(|m| m.name == "pxfa-vm-rootdisk")
        .unwrap()
        .body
        .clone();
    assert!(lint_manifests(std::slice::from_ref(&class)).is_empty());
    // The live management cluster is older than the spec said: lint believes it.
    let hco = json!({"apiVersion": "hco.kubevirt.io/v1beta1", "kind": "HyperConverged",
        "metadata": {"name": "kubevirt-hyperconverged", "namespace": "openshift-cnv"},
        "status": {"versions": [{"name": "operator", "version": "4.18.2"}]}});
    let cv = json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "status": {"desired": {"version": "4.19.10"}}});
    let f = lint_manifests(&[class.clone(), hco, cv.clone()]);
    assert_eq!(rules(&f), ["PXFA009"], "{f:#?}");
    assert_eq!(f[0].severity, px_topology::Severity::Error);
    let cv420 = json!({"kind": "ClusterVersion", "metadata": {"name": "version"},
        "status": {"history": [{"state": "Completed", "version": "4.20.9"}]}});
    assert_eq!(rules(&lint_manifests(&[class, cv420])), ["PXFA009"]);
}

#[test]
fn rwx_on_kubevirt_csi_errors_for_filesystem_and_warns_for_block() {
    use px_topology::Severity;
    let mut spec = support::example("kubevirt-csi");
    spec.spec.storage.access_modes = vec!["ReadWriteMany".to_string()];
    let f = lint_spec(&spec);
    assert_eq!(rules(&f), ["PXFA017"]);
    assert_eq!(f[0].severity, Severity::Error);
    spec.spec.storage.volume_mode = VolumeMode::Block;
    let f = lint_spec(&spec);
    assert_eq!(rules(&f), ["PXFA017"]);
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(
        f[0].message
            .contains("Portworx supports only ReadWriteOnce")
    );

    let class = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "guest"}, "provisioner": "csi.kubevirt.io",
        "parameters": {"infraStorageClassName": "pxfa-vm-rootdisk", "bus": "scsi"}});
    let pvc = |mode: &str| {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "p", "namespace": "a"},
        "spec": {"accessModes": ["ReadWriteMany"], "volumeMode": mode, "storageClassName": "guest"}})
    };
    let f = lint_manifests(&[class.clone(), pvc("Filesystem")]);
    assert_eq!(
        (rules(&f), f[0].severity),
        (vec!["PXFA017"], Severity::Error)
    );
    let f = lint_manifests(&[class, pvc("Block")]);
    assert_eq!(
        (rules(&f), f[0].severity),
        (vec!["PXFA017"], Severity::Warning)
    );
}

#[test]
fn a_direct_access_tenant_asked_onto_the_storage_network_is_warned() {
    let mut spec = support::example("direct-access");
    spec.spec.network.as_mut().unwrap().attach_workers = Some(true);
    // PXFA031 too: the example does not state that whereabouts' reconciler runs.
    assert_eq!(rules(&lint_spec(&spec)), ["PXFA021", "PXFA031"]);
    spec.spec.network.as_mut().unwrap().whereabouts_reconciler = true;
    assert_eq!(rules(&lint_spec(&spec)), ["PXFA021"]);
}

fn node_pool(network: &str) -> Value {
    json!({"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "NodePool",
        "metadata": {"name": "t-workers", "namespace": "clusters"},
        "spec": {"clusterName": "t", "replicas": 3,
            "management": {"upgradeType": "InPlace", "autoRepair": false},
            "platform": {"type": "KubeVirt", "kubevirt": {
                "compute": {"cores": 8, "memory": "32Gi"},
                "rootVolume": {"type": "Persistent", "persistent": {"size": "128Gi",
                    "accessModes": ["ReadWriteMany"], "volumeMode": "Block"}},
                "additionalNetworks": [{"name": network}]}}}})
}

#[test]
fn the_seed_traps_are_found() {
    // A NAD outside the control plane namespace: Multus refuses it.
    assert_eq!(
        rules(&lint_manifests(&[node_pool("clusters/storage-network")])),
        ["PXFA022"]
    );
    assert!(lint_manifests(&[node_pool("clusters-t/storage-network")]).is_empty());
    assert!(lint_manifests(&[node_pool("default/shared-net")]).is_empty());

    // A bridge port on a VLAN interface nobody defines.
    let nncp = |with_vlan: bool| {
        let mut ifaces = vec![json!({"name": "br-storage", "type": "linux-bridge",
            "bridge": {"port": [{"name": "ens1f1.400"}]}})];
        if with_vlan {
            ifaces.insert(
                0,
                json!({"name": "ens1f1.400", "type": "vlan",
                "vlan": {"base-iface": "ens1f1", "id": 400}}),
            );
        }
        json!({"apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy",
            "metadata": {"name": "p"}, "spec": {"desiredState": {"interfaces": ifaces}}})
    };
    let f = lint_manifests(&[nncp(false)]);
    assert_eq!(rules(&f), ["PXFA023"]);
    assert!(
        f[0].message.contains("base-iface: ens1f1, id: 400"),
        "{}",
        f[0].message
    );
    assert!(lint_manifests(&[nncp(true)]).is_empty());

    // A hand-made copy of the class the Portworx operator owns.
    let owned = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "px-rwx-block-kubevirt"}, "provisioner": "pxd.portworx.com",
        "parameters": {"repl": "3", "nodiscard": "true"}});
    assert_eq!(rules(&lint_manifests(&[owned])), ["PXFA024"]);

    // A MetalLB pool any namespace can take from.
    let pool = |alloc: Value| {
        json!({"apiVersion": "metallb.io/v1beta1", "kind": "IPAddressPool",
        "metadata": {"name": "p", "namespace": "metallb-system"},
        "spec": {"addresses": ["198.51.100.50-198.51.100.69"], "autoAssign": true,
                 "serviceAllocation": alloc}})
    };
    assert_eq!(rules(&lint_manifests(&[pool(json!({}))])), ["PXFA025"]);
    assert!(lint_manifests(&[pool(json!({"namespaces": ["clusters-t"]}))]).is_empty());
}
