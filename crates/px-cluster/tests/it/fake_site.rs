//! A fake management site for doctor: the objects `px_cluster::site` reads, mounted
//! on the fake API server, each prerequisite switchable. Shared by path with the
//! `pxfa` binary's doctor test.

use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// What a fake management site has.
#[derive(Clone)]
pub(crate) struct SiteSpec {
    pub(crate) virtualization: &'static str,
    pub(crate) gates: Vec<&'static str>,
    pub(crate) metallb: bool,
    pub(crate) uplink_mtu: u64,
    pub(crate) whereabouts: bool,
    pub(crate) portworx: &'static str,
    pub(crate) fa_fb: bool,
    pub(crate) secrets: bool,
    /// `spec.defaultNetwork.type` of the Network operator config.
    pub(crate) network_type: &'static str,
    /// HyperConverged `spec.featureGates.deployKubevirtIpamController`.
    pub(crate) ipam_gate: bool,
    /// The NodeNetworkStates show `br-storage` as a linux bridge.
    pub(crate) linux_bridge: bool,
    /// Where the HyperConverged carries Red Hat's eviction settings for
    /// non-migratable VMs (`spec` or `virtualization`); `None`: not set.
    pub(crate) eviction_at: Option<&'static str>,
}

/// A site where everything the direct-access fixture needs is there.
pub(crate) fn complete() -> SiteSpec {
    SiteSpec {
        virtualization: "4.20.4",
        gates: vec!["HotplugVolumes"],
        metallb: true,
        uplink_mtu: 9000,
        whereabouts: true,
        portworx: "3.7.0",
        fa_fb: true,
        secrets: true,
        network_type: "OVNKubernetes",
        ipam_gate: false,
        linux_bridge: false,
        eviction_at: None,
    }
}

/// The complete site with OpenShift Virtualization's IPAM controller on: storage
/// addresses can survive live migration.
pub(crate) fn persistent_ips() -> SiteSpec {
    SiteSpec {
        ipam_gate: true,
        ..complete()
    }
}

/// The HyperConverged spec: the IPAM gate, and the eviction settings where asked.
fn hco_spec(s: &SiteSpec) -> Value {
    let mut spec = json!({"featureGates": {"deployKubevirtIpamController": s.ipam_gate}});
    let eviction = json!({"evictionStrategy": "External",
        "workloadUpdateStrategy": {"workloadUpdateMethods": ["LiveMigrate", "Evict"]}});
    match s.eviction_at {
        Some("spec") => {
            for (k, v) in eviction.as_object().unwrap() {
                spec[k] = v.clone();
            }
        }
        Some(other) => spec[other] = eviction,
        None => {}
    }
    spec
}

/// One node's interfaces: the uplink, and `br-storage` as a linux bridge when asked.
fn interfaces(s: &SiteSpec) -> Value {
    let mut out = vec![json!({"name": "ens1f1", "type": "ethernet", "mtu": s.uplink_mtu})];
    if s.linux_bridge {
        out.push(json!({"name": "br-storage", "type": "linux-bridge", "mtu": s.uplink_mtu}));
    }
    Value::Array(out)
}

async fn get_json(server: &MockServer, p: &str, body: Value) {
    Mock::given(method("GET"))
        .and(path(p.to_string()))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(server)
        .await;
}

fn list_of(kind: &str, items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": format!("{kind}List"), "metadata": {}, "items": items})
}

fn object(api_version: &str, kind: &str, name: &str, rest: Value) -> Value {
    let mut o = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}});
    if let (Some(o), Some(r)) = (o.as_object_mut(), rest.as_object()) {
        for (k, v) in r {
            if k == "metadata" {
                o["metadata"]
                    .as_object_mut()
                    .unwrap()
                    .extend(v.as_object().unwrap().clone());
            } else {
                o.insert(k.clone(), v.clone());
            }
        }
    }
    o
}

/// Mounts the site; anything not mounted answers 404 (wiremock's default).
pub(crate) async fn mount(server: &MockServer, s: &SiteSpec) {
    get_json(
        server,
        "/apis/config.openshift.io/v1/clusterversions/version",
        object(
            "config.openshift.io/v1",
            "ClusterVersion",
            "version",
            json!({"status": {"desired": {"version": "4.20.30"}}}),
        ),
    )
    .await;
    get_json(server, "/apis/hco.kubevirt.io/v1beta1/namespaces/openshift-cnv/hyperconvergeds/kubevirt-hyperconverged",
        object("hco.kubevirt.io/v1beta1", "HyperConverged", "kubevirt-hyperconverged",
            json!({"spec": hco_spec(s),
                   "status": {"versions": [{"name": "operator", "version": s.virtualization}]}}))).await;
    get_json(
        server,
        "/apis/operator.openshift.io/v1/networks/cluster",
        object(
            "operator.openshift.io/v1",
            "Network",
            "cluster",
            json!({"spec": {"defaultNetwork": {"type": s.network_type}}}),
        ),
    )
    .await;
    get_json(server, "/apis/kubevirt.io/v1/namespaces/openshift-cnv/kubevirts/kubevirt-kubevirt-hyperconverged",
        object("kubevirt.io/v1", "KubeVirt", "kubevirt-kubevirt-hyperconverged",
            json!({"spec": {"configuration": {"developerConfiguration": {"featureGates": s.gates}}}}))).await;
    get_json(server, "/apis/multicluster.openshift.io/v1/multiclusterengines/multiclusterengine",
        object("multicluster.openshift.io/v1", "MultiClusterEngine", "multiclusterengine",
            json!({"spec": {"overrides": {"components": [
                {"name": "hypershift", "enabled": true}, {"name": "hypershift-local-hosting", "enabled": true}]}}}))).await;
    if s.metallb {
        get_json(
            server,
            "/apis/metallb.io/v1beta1/metallbs",
            list_of(
                "MetalLB",
                vec![object(
                    "metallb.io/v1beta1",
                    "MetalLB",
                    "metallb",
                    json!({"metadata": {"namespace": "metallb-system"}}),
                )],
            ),
        )
        .await;
        get_json(
            server,
            "/apis/metallb.io/v1beta1/ipaddresspools",
            list_of("IPAddressPool", vec![]),
        )
        .await;
    }
    get_json(
        server,
        "/apis/nmstate.io/v1/nmstates/nmstate",
        object("nmstate.io/v1", "NMState", "nmstate", json!({})),
    )
    .await;
    let nns: Vec<Value> = ["worker-01.example.net", "worker-02.example.net"]
        .iter()
        .map(|n| {
            object(
                "nmstate.io/v1beta1",
                "NodeNetworkState",
                n,
                json!({"status": {"currentState": {"interfaces": interfaces(s)}}}),
            )
        })
        .collect();
    get_json(
        server,
        "/apis/nmstate.io/v1beta1/nodenetworkstates",
        list_of("NodeNetworkState", nns),
    )
    .await;
    // No worker VM running yet (doctor's worker-spread reads the VMIs).
    Mock::given(method("GET"))
        .and(path_regex(
            r"^/apis/kubevirt\.io/v1/namespaces/[^/]+/virtualmachineinstances$",
        ))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(list_of("VirtualMachineInstance", vec![])),
        )
        .mount(server)
        .await;
    if s.whereabouts {
        get_json(
            server,
            "/apis/apps/v1/namespaces/openshift-multus/daemonsets/whereabouts-reconciler",
            object("apps/v1", "DaemonSet", "whereabouts-reconciler", json!({})),
        )
        .await;
    }
    let mut ann = serde_json::Map::new();
    if s.fa_fb {
        ann.insert("portworx.io/pure-csi-integration".into(), json!("true"));
    }
    get_json(
        server,
        "/apis/core.libopenstorage.org/v1/storageclusters",
        list_of(
            "StorageCluster",
            vec![object(
                "core.libopenstorage.org/v1",
                "StorageCluster",
                "px-mgmt",
                json!({"metadata": {"namespace": "portworx", "annotations": ann},
                   "status": {"phase": "Running", "version": s.portworx}}),
            )],
        ),
    )
    .await;
    get_json(
        server,
        "/apis/storage.k8s.io/v1/storageclasses",
        list_of(
            "StorageClass",
            vec![object(
                "storage.k8s.io/v1",
                "StorageClass",
                "pxfa-vm-rootdisk",
                json!({}),
            )],
        ),
    )
    .await;
    get_json(
        server,
        "/apis/machineconfiguration.openshift.io/v1/machineconfigs",
        list_of(
            "MachineConfig",
            vec![object(
                "machineconfiguration.openshift.io/v1",
                "MachineConfig",
                "99-worker-pxfa-flasharray",
                json!({}),
            )],
        ),
    )
    .await;
    get_json(
        server,
        "/api/v1/namespaces/clusters",
        object("v1", "Namespace", "clusters", json!({})),
    )
    .await;
    if s.secrets {
        for name in ["tenant-full-pull-secret", "tenant-full-ssh-key"] {
            get_json(
                server,
                &format!("/api/v1/namespaces/clusters/secrets/{name}"),
                object("v1", "Secret", name, json!({})),
            )
            .await;
        }
    }
}
