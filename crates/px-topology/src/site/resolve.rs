//! The spec's statements about the site against what the site says.
//!
//! Fields such as `management.hotplugGate` or `network.uplinkMtu` are statements about
//! the site, documented as such in docs/spec.md. Where the site was read, what it says
//! is used: a field left at its default (which cannot be told from a field not
//! written) takes the site's value, and a field that says something else is a
//! contradiction, refused before anything is written. The one rule is [`resolve`];
//! `apply --kubeconfig`, `doctor` and `render --site` all go through it.

use std::fmt;

use super::facts::SiteFacts;
use crate::spec::{HotplugGate, TenantStorage, Version};

/// Where each fact is read, for the messages.
const FROM_CLUSTER_VERSION: &str = "ClusterVersion version status.desired.version";
const FROM_HCO: &str =
    "HyperConverged openshift-cnv/kubevirt-hyperconverged status.versions[operator]";
const FROM_GATES: &str = "KubeVirt openshift-cnv/kubevirt-kubevirt-hyperconverged \
                          spec.configuration.developerConfiguration.featureGates";
const FROM_STORAGE_CLUSTER: &str = "the management StorageCluster";
const FROM_NNS: &str = "NodeNetworkState status.currentState.interfaces[].mtu";
const FROM_WHEREABOUTS: &str = "DaemonSet openshift-multus/whereabouts-reconciler";
const FROM_METALLB: &str = "the metallb.io API";
const FROM_NNS_BRIDGE: &str = "NodeNetworkState status.currentState.interfaces[].type";
const FROM_PERSISTENT_IPS: &str = "Network.operator.openshift.io cluster spec.defaultNetwork.type, \
                                   HyperConverged spec.featureGates.deployKubevirtIpamController";

/// A spec field that says something the site does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contradiction {
    /// The field (`spec.management.faFbDriver`).
    pub field: &'static str,
    /// What the spec says.
    pub stated: String,
    /// What the site says, and where it was read.
    pub fact: String,
}

impl fmt::Display for Contradiction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: the spec says {}, the site says {}",
            self.field, self.stated, self.fact
        )
    }
}

/// Every contradiction of one spec; an error (exit 2: the input is wrong for this
/// site, nothing was written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Contradictions(pub Vec<Contradiction>);

impl fmt::Display for Contradictions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the spec contradicts the site ({} field(s)); correct the spec or the site:",
            self.0.len()
        )?;
        for c in &self.0 {
            write!(f, "\n  - {c}")?;
        }
        Ok(())
    }
}

/// `spec` with the site's facts in place of its unstated defaults, or every field
/// that contradicts them.
pub fn resolve(spec: &TenantStorage, facts: &SiteFacts) -> Result<TenantStorage, Contradictions> {
    let mut out = spec.clone();
    let mut bad = Vec::new();
    versions(&mut out, facts, &mut bad);
    hotplug(&mut out, facts, &mut bad);
    portworx(&mut out, facts, &mut bad);
    load_balancer(&mut out, facts, &mut bad);
    network(&mut out, facts, &mut bad);
    // Unstated: the site's MachineConfig; a statement stands (the site may name
    // its own differently than doctor can tell).
    if out.spec.management.existing_machine_config.is_none() {
        out.spec
            .management
            .existing_machine_config
            .clone_from(&facts.existing_machine_config);
    }
    if bad.is_empty() {
        Ok(out)
    } else {
        Err(Contradictions(bad))
    }
}

/// Why a tenant cannot be resolved against its site.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// Spec fields the site contradicts.
    #[error(transparent)]
    Contradictions(#[from] Contradictions),
    /// The resolved spec does not make a tenant (its rules, its sizing).
    #[error("{path}: with the site's facts: {message}")]
    Invalid {
        /// The spec file.
        path: std::path::PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The tenant of `spec_path` with the site's facts applied ([`resolve`]), validated
/// and sized again: what `apply --kubeconfig` and `render --site` work from.
pub fn resolve_tenant(
    t: &crate::Tenant,
    facts: &SiteFacts,
    spec_path: &std::path::Path,
) -> Result<crate::Tenant, ResolveError> {
    let spec = resolve(&t.spec, facts)?;
    let invalid = |message: String| ResolveError::Invalid {
        path: spec_path.to_path_buf(),
        message,
    };
    if let Some(e) = spec.validate().into_iter().next() {
        return Err(invalid(e.to_string()));
    }
    crate::Tenant::from_spec(spec, spec_path).map_err(|e| invalid(e.to_string()))
}

/// Different when both say a patch level and they differ, or major.minor differ.
fn differs(a: &Version, b: &Version) -> bool {
    a.compare(b).is_some_and(|o| o != std::cmp::Ordering::Equal)
}

fn versions(t: &mut TenantStorage, facts: &SiteFacts, bad: &mut Vec<Contradiction>) {
    if let Some(fact) = facts.openshift_version {
        match t.spec.management.openshift_version {
            Some(s) if differs(&s, &fact) => bad.push(Contradiction {
                field: "spec.management.openshiftVersion",
                stated: s.to_string(),
                fact: format!("{fact} ({FROM_CLUSTER_VERSION})"),
            }),
            _ => t.spec.management.openshift_version = Some(fact),
        }
    }
    if let Some(fact) = facts.virtualization_version {
        match t.virtualization_version() {
            Some(s) if differs(&s, &fact) => bad.push(Contradiction {
                field: "spec.management.virtualizationVersion",
                stated: s.to_string(),
                fact: format!("{fact} ({FROM_HCO})"),
            }),
            _ => t.spec.management.virtualization_version = Some(fact),
        }
    }
}

fn hotplug(t: &mut TenantStorage, facts: &SiteFacts, bad: &mut Vec<Contradiction>) {
    let Some(fact) = facts.hotplug_gate else {
        return;
    };
    let stated = t.spec.management.hotplug_gate;
    // The default (hotplug-volumes) is no statement; the other value is.
    if stated == HotplugGate::DeclarativeHotplugVolumes && fact != stated {
        bad.push(Contradiction {
            field: "spec.management.hotplugGate",
            stated: "declarative-hotplug-volumes".into(),
            fact: format!("HotplugVolumes is on and takes precedence ({FROM_GATES})"),
        });
    } else {
        t.spec.management.hotplug_gate = fact;
    }
}

/// The management Portworx: its FA/FB driver and its release. The release is
/// `management.portworxVersion`, which direct-access's live-migration and
/// provisioning rules read; the tenant's own `portworx.version` is the spec's to
/// choose and is never compared with the site.
fn portworx(t: &mut TenantStorage, facts: &SiteFacts, bad: &mut Vec<Contradiction>) {
    if let Some(fact) = facts.fa_fb_driver {
        if t.spec.management.fa_fb_driver && !fact {
            bad.push(Contradiction {
                field: "spec.management.faFbDriver",
                stated: "true".into(),
                fact: format!(
                    "no portworx.io/pure-csi-integration: \"true\" annotation on {FROM_STORAGE_CLUSTER}"
                ),
            });
        } else {
            t.spec.management.fa_fb_driver = fact;
        }
    }
    if let Some(fact) = facts.portworx_version {
        match t.spec.management.portworx_version {
            Some(s) if differs(&s, &fact) => bad.push(Contradiction {
                field: "spec.management.portworxVersion",
                stated: s.to_string(),
                fact: format!("{fact} ({FROM_STORAGE_CLUSTER})"),
            }),
            _ => t.spec.management.portworx_version = Some(fact),
        }
    }
}

fn load_balancer(t: &mut TenantStorage, facts: &SiteFacts, bad: &mut Vec<Contradiction>) {
    let Some(fact) = &facts.load_balancer else {
        return;
    };
    let m = &mut t.spec.management;
    if m.metallb.is_some() && !m.external_load_balancer && !fact.metallb_installed {
        bad.push(Contradiction {
            field: "spec.management.metallb",
            stated: "pxfa renders a MetalLB instance and pool".into(),
            fact: format!("the MetalLB operator is not installed ({FROM_METALLB} is not served)"),
        });
    }
    // An existing pool that serves the namespace is a load balancer the spec did not
    // state: use it rather than leave the API Service pending.
    if m.metallb.is_none() && !m.external_load_balancer && fact.pool_for_tenant.is_some() {
        m.external_load_balancer = true;
    }
}

fn network(t: &mut TenantStorage, facts: &SiteFacts, bad: &mut Vec<Contradiction>) {
    let workers = t.workers_on_storage_network();
    let Some(n) = t.spec.network.as_mut() else {
        return;
    };
    match persistent_ips(n.persistent_ips, workers, facts) {
        Ok(v) => n.persistent_ips = v,
        Err(c) => bad.push(c),
    }
    if let Some(fact) = facts.whereabouts_reconciler {
        if n.whereabouts_reconciler && !fact {
            bad.push(Contradiction {
                field: "spec.network.whereaboutsReconciler",
                stated: "true".into(),
                fact: format!("not running ({FROM_WHEREABOUTS} not found)"),
            });
        } else {
            n.whereabouts_reconciler = fact;
        }
    }
    let Some(fact) = facts.uplink_mtu else {
        return;
    };
    match n.uplink_mtu {
        Some(s) if s != fact => bad.push(Contradiction {
            field: "spec.network.uplinkMtu",
            stated: s.to_string(),
            fact: format!("{fact} on at least one node ({FROM_NNS})"),
        }),
        _ if fact < n.mtu => bad.push(Contradiction {
            field: "spec.network.mtu",
            stated: format!("{} (the VLAN and bridge MTU)", n.mtu),
            fact: format!(
                "the uplink {} runs at {fact} on at least one node ({FROM_NNS}); a VLAN cannot exceed its parent's MTU",
                n.uplink
            ),
        }),
        _ => n.uplink_mtu = Some(fact),
    }
}

/// `network.persistentIps` with the site's facts. Unstated, it is on where the worker
/// VMs join the network, the site keeps VM addresses across live migration and the
/// bridge does not run as a linux bridge on any node: a routine migration would
/// otherwise hand a worker's whereabouts address to another VM (kubevirt/kubevirt#14320).
/// A stated `true` is refused where the site cannot keep addresses, and where the
/// bridge is a linux bridge: turning it into OVS under live iSCSI/NVMe sessions drops
/// them (docs/lifecycle.md, "Moving a storage network to persistent IPs").
pub(crate) fn persistent_ips(
    stated: Option<bool>,
    workers_attached: bool,
    facts: &SiteFacts,
) -> Result<Option<bool>, Contradiction> {
    let (keeps, why) = facts.persistent_ips();
    match stated {
        Some(true) if keeps == Some(false) => Err(Contradiction {
            field: "spec.network.persistentIps",
            stated: "true (storage addresses that survive live migration)".into(),
            fact: format!("{why} ({FROM_PERSISTENT_IPS})"),
        }),
        Some(true) if facts.linux_bridge == Some(true) => Err(Contradiction {
            field: "spec.network.persistentIps",
            stated: "true (an OVS bridge for the OVN-Kubernetes localnet network)".into(),
            fact: format!(
                "the storage bridge runs as a linux bridge on at least one node ({FROM_NNS_BRIDGE}); \
                 converting it in place drops every storage session on it: move it node by node \
                 (docs/lifecycle.md, \"Moving a storage network to persistent IPs\")"
            ),
        }),
        None if workers_attached && keeps == Some(true) && facts.linux_bridge == Some(false) => {
            Ok(Some(true))
        }
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::facts::LoadBalancerFact;
    use crate::spec::StorageMode;

    fn spec() -> TenantStorage {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/tenants/valid-full.yaml"
        ))
        .unwrap();
        crate::parse_valid_spec(&text).unwrap()
    }

    #[test]
    fn unstated_defaults_take_the_site_and_statements_are_checked() {
        let mut t = spec();
        t.spec.management.fa_fb_driver = false;
        let facts = SiteFacts {
            hotplug_gate: Some(HotplugGate::DeclarativeHotplugVolumes),
            fa_fb_driver: Some(true),
            portworx_version: Some(t.spec.portworx.version),
            whereabouts_reconciler: Some(true),
            ..Default::default()
        };
        let r = resolve(&t, &facts).unwrap();
        assert_eq!(
            r.spec.management.hotplug_gate,
            HotplugGate::DeclarativeHotplugVolumes
        );
        assert!(r.spec.management.fa_fb_driver);
        assert!(r.spec.network.as_ref().unwrap().whereabouts_reconciler);
        // Nothing read: the spec as it is.
        assert_eq!(resolve(&t, &SiteFacts::default()).unwrap(), t);
    }

    #[test]
    fn contradictions_name_the_field_and_the_fact() {
        let mut t = spec();
        t.spec.management.fa_fb_driver = true;
        t.spec.management.hotplug_gate = HotplugGate::DeclarativeHotplugVolumes;
        let facts = SiteFacts {
            hotplug_gate: Some(HotplugGate::HotplugVolumes),
            fa_fb_driver: Some(false),
            portworx_version: Some(Version::new(9, 9, 0)),
            uplink_mtu: Some(1500),
            load_balancer: Some(LoadBalancerFact::default()),
            ..Default::default()
        };
        t.spec.management.portworx_version = Some(Version::new(3, 7, 0));
        let err = resolve(&t, &facts).unwrap_err();
        let fields: Vec<&str> = err.0.iter().map(|c| c.field).collect();
        assert!(fields.contains(&"spec.management.faFbDriver"), "{err}");
        assert!(fields.contains(&"spec.management.hotplugGate"), "{err}");
        assert!(fields.contains(&"spec.management.portworxVersion"), "{err}");
        assert!(!fields.contains(&"spec.portworx.version"), "{err}");
        assert!(fields.contains(&"spec.network.uplinkMtu"), "{err}");
        assert!(fields.contains(&"spec.management.metallb"), "{err}");
        // Without a stated uplink MTU, the network's own MTU is what contradicts.
        t.spec.network.as_mut().unwrap().uplink_mtu = None;
        let err = resolve(&t, &facts).unwrap_err();
        assert!(err.0.iter().any(|c| c.field == "spec.network.mtu"), "{err}");
        let text = err.to_string();
        assert!(text.contains("pure-csi-integration"), "{text}");
    }

    #[test]
    fn persistent_ips_are_refused_where_the_site_cannot_keep_them() {
        let mut t = spec();
        t.spec.network.as_mut().unwrap().persistent_ips = Some(true);
        // The versions come from the site below.
        t.spec.management.virtualization_version = None;
        t.spec.hosted_cluster.virtualization_version = None;
        let supported = SiteFacts {
            virtualization_version: Some(Version::new(4, 18, 3)),
            ovn_kubernetes: Some(true),
            ipam_controller: Some(true),
            linux_bridge: Some(false),
            ..Default::default()
        };
        assert_eq!(supported.persistent_ips().0, Some(true));
        assert!(resolve(&t, &supported).is_ok());
        for facts in [
            SiteFacts {
                ipam_controller: Some(false),
                ..supported.clone()
            },
            SiteFacts {
                ovn_kubernetes: Some(false),
                ..supported.clone()
            },
            SiteFacts {
                virtualization_version: Some(Version::new(4, 17, 9)),
                ..supported.clone()
            },
            // The bridge is a linux bridge: converting it would drop its sessions.
            SiteFacts {
                linux_bridge: Some(true),
                ..supported.clone()
            },
        ] {
            let err = resolve(&t, &facts).unwrap_err();
            assert_eq!(err.0[0].field, "spec.network.persistentIps", "{err}");
        }
        // A stated false stays false on a supporting site.
        t.spec.network.as_mut().unwrap().persistent_ips = Some(false);
        let r = resolve(&t, &supported).unwrap();
        assert!(!r.spec.network.unwrap().keeps_addresses());
        assert_eq!(SiteFacts::default().persistent_ips().0, None);
    }

    /// Unstated, persistent IPs are on where the workers join the network and the site
    /// keeps addresses on a bridge that is not a linux bridge; off otherwise.
    #[test]
    fn persistent_ips_default_from_the_site() {
        let supported = SiteFacts {
            ovn_kubernetes: Some(true),
            ipam_controller: Some(true),
            virtualization_version: Some(Version::new(4, 19, 2)),
            linux_bridge: Some(false),
            ..Default::default()
        };
        assert_eq!(persistent_ips(None, true, &supported), Ok(Some(true)));
        // Workers off the network (direct-access's default): nothing to keep.
        assert_eq!(persistent_ips(None, false, &supported), Ok(None));
        for facts in [
            SiteFacts {
                linux_bridge: Some(true),
                ..supported.clone()
            },
            SiteFacts {
                linux_bridge: None,
                ..supported.clone()
            },
            SiteFacts {
                ipam_controller: Some(false),
                ..supported.clone()
            },
            SiteFacts::default(),
        ] {
            assert_eq!(persistent_ips(None, true, &facts), Ok(None), "{facts:?}");
        }
        assert_eq!(
            persistent_ips(Some(false), true, &supported),
            Ok(Some(false))
        );
    }

    /// The site's management Portworx release is the management's, not the tenant's:
    /// a tenant on another minor resolves, and the live-migration rule follows the
    /// management release both ways.
    #[test]
    fn management_portworx_release_is_not_the_tenants() {
        let mut t = spec();
        assert_eq!(t.mode(), StorageMode::DirectAccess);
        t.spec.management.fa_fb_driver = true;
        t.spec.management.portworx_version = None;
        let at = |tenant: Version, management: Version| {
            let mut t = t.clone();
            t.spec.portworx.version = tenant;
            let facts = SiteFacts {
                portworx_version: Some(management),
                fa_fb_driver: Some(true),
                ..Default::default()
            };
            resolve(&t, &facts).expect("a tenant release of another minor is no contradiction")
        };
        let r = at(Version::new(3, 7, 0), Version::new(3, 6, 2));
        assert_eq!(r.spec.portworx.version, Version::new(3, 7, 0));
        assert_eq!(r.management_portworx_version(), Version::new(3, 6, 2));
        assert!(!crate::driver::live_migratable_drives(&r));
        let r = at(Version::new(3, 6, 2), Version::new(3, 7, 0));
        assert_eq!(r.spec.portworx.version, Version::new(3, 6, 2));
        assert!(crate::driver::live_migratable_drives(&r));
        // Nothing read and nothing stated: the tenant's release stands in.
        t.spec.portworx.version = Version::new(3, 7, 0);
        assert!(crate::driver::live_migratable_drives(&t));
        t.spec.management.portworx_version = Some(Version::new(3, 6, 2));
        assert!(!crate::driver::live_migratable_drives(&t));
    }
}
