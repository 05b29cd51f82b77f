//! The site facts that decide what is right to render, as one serializable value:
//! read from the management cluster by `doctor` and `apply --kubeconfig`, or handed
//! to an offline `render --site` through a `doctor -o yaml` report.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::views::{ManagementView, Read};
use crate::spec::{HotplugGate, Version};

/// KubeVirt's feature gate names (kubevirt/user-guide `docs/storage/hotplug_volumes.md`).
const GATE_HOTPLUG: &str = "HotplugVolumes";
const GATE_DECLARATIVE: &str = "DeclarativeHotplugVolumes";

/// What the site says. Every field is optional: `None` is "not read" (no access, or
/// nothing there to say it), and then the spec's statement is used.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SiteFacts {
    /// The management cluster's OpenShift version (ClusterVersion `version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub openshift_version: Option<Version>,
    /// OpenShift Virtualization's version (HyperConverged `status.versions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub virtualization_version: Option<Version>,
    /// The hotplug gate that decides (`HotplugVolumes` takes precedence when both are
    /// on); `None` when neither is on or the gates were not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hotplug_gate: Option<HotplugGate>,
    /// The management Portworx's version (its StorageCluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub portworx_version: Option<Version>,
    /// The management StorageCluster runs the FA/FB driver
    /// (`portworx.io/pure-csi-integration: "true"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fa_fb_driver: Option<bool>,
    /// What serves LoadBalancer services.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_balancer: Option<LoadBalancerFact>,
    /// The lowest MTU of the storage uplink across the management nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplink_mtu: Option<u32>,
    /// whereabouts' IP reconciler runs (`openshift-multus/whereabouts-reconciler`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whereabouts_reconciler: Option<bool>,
    /// The default network is OVN-Kubernetes (Network.operator.openshift.io
    /// `cluster` `spec.defaultNetwork.type`), which serves `localnet` secondary
    /// networks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ovn_kubernetes: Option<bool>,
    /// OpenShift Virtualization's IPAM controller runs, which keeps a VM's address on
    /// a network with `allowPersistentIPs` across live migration (IPAMClaims).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipam_controller: Option<bool>,
    /// The spec's storage bridge runs as a linux bridge on at least one management
    /// node (NodeNetworkState): moving it to OVS would drop the storage sessions on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linux_bridge: Option<bool>,
    /// A MachineConfig other than pxfa's that already writes the FlashArray host files
    /// on the management workers (`/etc/multipath.conf`; the management Portworx
    /// install's): pxfa renders no second one. `None`: none found, or not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub existing_machine_config: Option<String>,
}

/// nmstate's interface type of a linux bridge.
pub(crate) const LINUX_BRIDGE: &str = "linux-bridge";

/// The first OpenShift Virtualization release whose VMs keep their address on an
/// OVN-Kubernetes `localnet` secondary network across live migration (persistent IPs
/// with IPAMClaims); layer2 networks had it first.
pub(crate) const PERSISTENT_IPS_SINCE: Version = Version::new(4, 18, 0);

/// MetalLB as read from the management cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoadBalancerFact {
    /// The MetalLB API is served (the operator is installed).
    pub metallb_installed: bool,
    /// A pool that hands addresses to the hosted control plane's namespace
    /// automatically, when one exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_for_tenant: Option<String>,
}

impl SiteFacts {
    /// The facts in what was read from the management cluster; `hcp_namespace` is
    /// where the hosted API server's LoadBalancer service lives.
    pub fn from_management(view: &ManagementView, hcp_namespace: &str) -> SiteFacts {
        let portworx = view.portworx.found().and_then(|list| list.first());
        SiteFacts {
            openshift_version: parse(&view.openshift_version),
            virtualization_version: parse(&view.virtualization_version),
            hotplug_gate: view.kubevirt_feature_gates.found().and_then(|g| gate(g)),
            portworx_version: portworx.and_then(|p| p.version.as_deref()?.parse().ok()),
            fa_fb_driver: portworx.map(|p| p.fa_fb_driver),
            load_balancer: match &view.metallb {
                Read::Found(m) => Some(LoadBalancerFact {
                    metallb_installed: true,
                    pool_for_tenant: pool_for(m, hcp_namespace),
                }),
                Read::Missing => Some(LoadBalancerFact::default()),
                Read::Unreadable(_) => None,
            },
            uplink_mtu: view
                .uplinks
                .found()
                .and_then(|u| u.iter().map(|n| n.mtu.unwrap_or(0)).min()),
            whereabouts_reconciler: match &view.whereabouts_reconciler {
                Read::Found(()) => Some(true),
                Read::Missing => Some(false),
                Read::Unreadable(_) => None,
            },
            ovn_kubernetes: view.network_type.found().map(|t| t == OVN_KUBERNETES),
            ipam_controller: match &view.ipam_controller {
                Read::Found(on) => Some(*on),
                Read::Missing => Some(false),
                Read::Unreadable(_) => None,
            },
            existing_machine_config: view
                .machine_configs
                .found()
                .and_then(|l| existing_machine_config(l)),
            linux_bridge: view.uplinks.found().map(|u| {
                u.iter()
                    .any(|n| n.bridge_type.as_deref() == Some(LINUX_BRIDGE))
            }),
        }
    }

    /// Whether a storage address survives live migration here (`network.persistentIps`
    /// is possible): OVN-Kubernetes, the IPAM controller, and OpenShift
    /// Virtualization at `PERSISTENT_IPS_SINCE` or later. `Some(false)` as soon as
    /// one of them is read and says no, `Some(true)` when all three were read and
    /// say yes, `None` otherwise; the reason names what says no.
    pub fn persistent_ips(&self) -> (Option<bool>, String) {
        let old = self
            .virtualization_version
            .filter(|v| v.at_least(&PERSISTENT_IPS_SINCE) == Some(false));
        if self.ovn_kubernetes == Some(false) {
            return (
                Some(false),
                "the default network is not OVNKubernetes".into(),
            );
        }
        if self.ipam_controller == Some(false) {
            return (
                Some(false),
                "OpenShift Virtualization's IPAM controller is off".into(),
            );
        }
        if let Some(v) = old {
            return (
                Some(false),
                format!("OpenShift Virtualization {v} is below {PERSISTENT_IPS_SINCE}"),
            );
        }
        let all_read = self.ovn_kubernetes.is_some()
            && self.ipam_controller.is_some()
            && self.virtualization_version.is_some();
        if all_read {
            (Some(true), "OVN-Kubernetes and the IPAM controller".into())
        } else {
            (None, "not read".into())
        }
    }
}

/// The first MachineConfig, other than pxfa's own, that writes a file pxfa's
/// management MachineConfig writes (the same path twice: the later config wins, and
/// each rollout reboots every worker).
pub(crate) fn existing_machine_config(l: &[super::views::MachineConfigView]) -> Option<String> {
    use crate::render::machineconfig::{MANAGEMENT_MACHINE_CONFIG, management_host_files};
    let ours = management_host_files();
    l.iter()
        .filter(|m| m.name != MANAGEMENT_MACHINE_CONFIG)
        .find(|m| m.files.iter().any(|f| ours.contains(&f.as_str())))
        .map(|m| m.name.clone())
}

/// `spec.defaultNetwork.type` of OVN-Kubernetes.
const OVN_KUBERNETES: &str = "OVNKubernetes";

/// The gate that decides: `HotplugVolumes` takes precedence over
/// `DeclarativeHotplugVolumes` (kubevirt/user-guide hotplug_volumes.md).
pub(crate) fn gate(gates: &[String]) -> Option<HotplugGate> {
    if gates.iter().any(|g| g == GATE_HOTPLUG) {
        Some(HotplugGate::HotplugVolumes)
    } else if gates.iter().any(|g| g == GATE_DECLARATIVE) {
        Some(HotplugGate::DeclarativeHotplugVolumes)
    } else {
        None
    }
}

/// The first auto-assigning pool whose service allocation takes `namespace`: it
/// lists the namespace, or lists none and has no namespace or service selectors
/// (a selector restricts the pool, and is not evaluated here, so such a pool is not
/// counted as serving the tenant).
pub(crate) fn pool_for(m: &super::views::MetallbView, namespace: &str) -> Option<String> {
    m.pools
        .iter()
        .find(|p| {
            p.auto_assign
                && (p.namespaces.iter().any(|n| n == namespace)
                    || (p.namespaces.is_empty() && !p.selectors))
        })
        .map(|p| p.name.clone())
}

fn parse(read: &Read<String>) -> Option<Version> {
    read.found().and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::views::{MetallbView, PoolView, StorageClusterView, UplinkView};

    #[test]
    fn facts_from_a_view() {
        let mut v = ManagementView::unread("test");
        v.kubevirt_feature_gates = Read::Found(vec![GATE_DECLARATIVE.into(), GATE_HOTPLUG.into()]);
        v.portworx = Read::Found(vec![StorageClusterView {
            version: Some("3.7.0".into()),
            fa_fb_driver: true,
            ..Default::default()
        }]);
        v.metallb = Read::Found(MetallbView {
            instance: true,
            pools: vec![
                PoolView {
                    name: "other".into(),
                    auto_assign: true,
                    namespaces: vec!["elsewhere".into()],
                    selectors: false,
                },
                PoolView {
                    name: "selected".into(),
                    auto_assign: true,
                    namespaces: vec![],
                    selectors: true,
                },
                PoolView {
                    name: "shared".into(),
                    auto_assign: true,
                    namespaces: vec![],
                    selectors: false,
                },
            ],
        });
        v.uplinks = Read::Found(vec![
            UplinkView {
                node: "a".into(),
                mtu: Some(9000),
                bridge_type: Some(LINUX_BRIDGE.into()),
            },
            UplinkView {
                node: "b".into(),
                mtu: Some(1500),
                bridge_type: None,
            },
        ]);
        v.whereabouts_reconciler = Read::Missing;
        let f = SiteFacts::from_management(&v, "clusters-t");
        assert_eq!(f.hotplug_gate, Some(HotplugGate::HotplugVolumes));
        assert_eq!(f.portworx_version, Some(Version::new(3, 7, 0)));
        assert_eq!(f.fa_fb_driver, Some(true));
        assert_eq!(
            f.load_balancer.unwrap().pool_for_tenant.as_deref(),
            Some("shared")
        );
        assert_eq!(f.uplink_mtu, Some(1500));
        assert_eq!(f.whereabouts_reconciler, Some(false));
        assert_eq!(f.linux_bridge, Some(true));
        assert_eq!(f.existing_machine_config, None, "machine configs not read");
        assert_eq!(f.openshift_version, None);
        assert_eq!(
            gate(&[GATE_DECLARATIVE.into()]),
            Some(HotplugGate::DeclarativeHotplugVolumes)
        );
        assert_eq!(gate(&[]), None);
    }

    #[test]
    fn an_existing_machine_config_is_one_writing_pxfas_paths() {
        use crate::site::views::MachineConfigView;
        let mc = |name: &str, files: &[&str]| MachineConfigView {
            name: name.into(),
            files: files.iter().map(|f| (*f).to_string()).collect(),
        };
        let mut v = ManagementView::unread("test");
        v.machine_configs = Read::Found(vec![
            mc("99-worker-pxfa-flasharray", &["/etc/multipath.conf"]),
            mc("00-worker", &["/etc/kubernetes/kubelet.conf"]),
            mc("99-worker-portworx-multipath", &["/etc/multipath.conf"]),
        ]);
        let f = SiteFacts::from_management(&v, "clusters-t");
        assert_eq!(
            f.existing_machine_config.as_deref(),
            Some("99-worker-portworx-multipath")
        );
        v.machine_configs = Read::Found(vec![mc(
            "99-worker-pxfa-flasharray",
            &["/etc/multipath.conf"],
        )]);
        assert_eq!(
            SiteFacts::from_management(&v, "x").existing_machine_config,
            None
        );
    }
}
