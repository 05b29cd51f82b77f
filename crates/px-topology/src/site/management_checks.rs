//! The management cluster's prerequisites of the walkthrough and of pxfa's own plan,
//! one check each, from a [`ManagementView`].

use super::report::{Check, Credential, Layer};
use super::views::{CredentialView, ManagementView, Read, StorageClusterView};
use crate::render::machineconfig::MANAGEMENT_MACHINE_CONFIG;
use crate::spec::{HotplugGate, TenantStorage, Version};

/// The FA/FB driver's first GA release (portworx-enterprise/platform/
/// configure-portworx-components/enable-fa-fb-driver, 3.7; Early Access in 3.6).
const FA_FB_GA: Version = Version::new(3, 7, 0);

/// How to grant doctor a read it was refused, or point it at a cluster.
const READ_FIX: &str = "run doctor with a kubeconfig whose user may get and list this object \
                        (cluster-reader is enough)";

fn m(name: &str, read: impl Into<String>) -> super::report::CheckBuilder {
    Check::of(Layer::Management, name, read)
}

/// Every management check for `spec`, and the credentials found.
pub fn management_checks(
    spec: &TenantStorage,
    view: &ManagementView,
) -> (Vec<Check>, Vec<Credential>) {
    let mut out = vec![
        openshift(view),
        virtualization(view),
        hotplug_gate(spec, view),
        mce(view),
        load_balancer(spec, view),
    ];
    out.extend(network(spec, view));
    out.push(management_portworx(spec, view));
    if spec.mode().uses_management_hosts() {
        out.push(fa_fb_driver(view));
        if !migratable_here(spec, view) {
            out.push(hyperconverged_eviction(view));
        }
    }
    out.extend(super::placement_checks::worker_spread(spec, view));
    out.extend(super::snapshot_checks::infra_snapshot_class(spec, view));
    out.push(root_disk_class(spec, view));
    out.push(machine_config(view));
    out.extend(view.referenced.iter().map(|o| {
        let what = match &o.namespace {
            Some(ns) => format!("{} {ns}/{}", o.kind, o.name),
            None => format!("{} {}", o.kind, o.name),
        };
        let c = m(
            &format!("referenced-{}", o.kind.to_lowercase()),
            what.clone(),
        );
        match &o.read {
            Read::Found(()) => c.ok("present"),
            Read::Missing => c.fail(
                "missing",
                format!(
                    "create {what} ({}; `pxfa render --include-secrets` writes the Secrets it can)",
                    o.field
                ),
            ),
            Read::Unreadable(why) => c.unknown(why.clone(), READ_FIX),
        }
    }));
    let creds = credentials(spec, &view.credentials, Layer::Management);
    (out, creds)
}

fn openshift(view: &ManagementView) -> Check {
    let c = m(
        "openshift-version",
        "ClusterVersion version status.desired.version",
    );
    match &view.openshift_version {
        Read::Found(v) => c.ok(v.clone()),
        Read::Missing => c.fail(
            "no ClusterVersion: not an OpenShift cluster",
            "run doctor against the OpenShift management cluster",
        ),
        Read::Unreadable(why) => c.unknown(why.clone(), READ_FIX),
    }
}

fn virtualization(view: &ManagementView) -> Check {
    let c = m(
        "virtualization-version",
        "HyperConverged openshift-cnv/kubevirt-hyperconverged status.versions[operator]",
    );
    match &view.virtualization_version {
        Read::Found(v) => c.ok(v.clone()),
        Read::Missing => c.fail(
            "OpenShift Virtualization is not installed",
            "install OpenShift Virtualization and create its HyperConverged",
        ),
        Read::Unreadable(why) => c.unknown(why.clone(), READ_FIX),
    }
}

/// The gate decides how direct-access disks hotplug (the `addvolume` subresource, or
/// a template edit); the bundle follows the site's gate.
fn hotplug_gate(spec: &TenantStorage, view: &ManagementView) -> Check {
    let c = m(
        "hotplug-gate",
        "KubeVirt openshift-cnv/kubevirt-kubevirt-hyperconverged spec.configuration.developerConfiguration.featureGates",
    );
    let needed = spec.mode().drives_are_vm_disks();
    match &view.kubevirt_feature_gates {
        Read::Found(g) => match super::facts::gate(g) {
            Some(HotplugGate::HotplugVolumes) => c.ok(
                "HotplugVolumes (takes precedence): disks are added with the addvolume subresource",
            ),
            Some(HotplugGate::DeclarativeHotplugVolumes) => {
                c.ok("DeclarativeHotplugVolumes: disks are added by editing the VM template")
            }
            None if needed => c.fail(
                "neither HotplugVolumes nor DeclarativeHotplugVolumes is on",
                "enable a volume hotplug gate in the HyperConverged (direct-access hotplugs its drives)",
            ),
            None => c.ok("no hotplug gate (not needed: no hotplugged disks)"),
        },
        Read::Missing if needed => c.fail("no KubeVirt CR", "install OpenShift Virtualization"),
        Read::Missing => c.ok("no KubeVirt CR (not needed by this mode's disks)"),
        Read::Unreadable(why) => c.unknown(why.clone(), READ_FIX),
    }
}

/// HyperShift on MCE needs `hypershift` and `hypershift-local-hosting`.
fn mce(view: &ManagementView) -> Check {
    let c = m(
        "mce-hypershift",
        "MultiClusterEngine multiclusterengine spec.overrides.components",
    );
    let components = match &view.mce_components {
        Read::Found(v) => v,
        Read::Missing => {
            return c.fail(
                "no MultiClusterEngine",
                "install the multicluster engine operator and create its MultiClusterEngine",
            );
        }
        Read::Unreadable(why) => return c.unknown(why.clone(), READ_FIX),
    };
    let off: Vec<&str> = ["hypershift", "hypershift-local-hosting"]
        .into_iter()
        .filter(|n| !components.iter().any(|(c, on)| c == n && *on))
        .collect();
    if off.is_empty() {
        c.ok("hypershift and hypershift-local-hosting enabled")
    } else {
        c.warn(
            format!("not enabled: {}", off.join(", ")),
            "apply the bundle's MultiClusterEngine step (it enables them, guarded) or enable them in the MCE",
        )
    }
}

fn load_balancer(spec: &TenantStorage, view: &ManagementView) -> Check {
    let c = m(
        "load-balancer",
        "metallb.io MetalLB and IPAddressPool objects",
    );
    let mgmt = &spec.spec.management;
    let ns = spec.hcp_namespace();
    let metallb = match &view.metallb {
        Read::Found(v) => Some(v),
        Read::Missing => None,
        Read::Unreadable(why) => return c.unknown(why.clone(), READ_FIX),
    };
    let pool = metallb.and_then(|v| super::facts::pool_for(v, &ns));
    match (mgmt.metallb.is_some() && !mgmt.external_load_balancer, metallb, pool) {
        (true, Some(_), _) => c.ok("MetalLB operator installed: the bundle's pool serves the API Service"),
        (true, None, _) => c.fail(
            "the MetalLB operator is not installed",
            "install the MetalLB operator from OperatorHub (the bundle renders the instance and pool)",
        ),
        (false, _, Some(p)) => c.ok(format!("IPAddressPool {p} serves namespace {ns}")),
        (false, _, None) if mgmt.external_load_balancer => c.warn(
            format!("no MetalLB pool serves namespace {ns}"),
            "make sure the external load balancer (management.externalLoadBalancer) serves LoadBalancer services there",
        ),
        (false, _, None) => c.fail(
            format!("nothing serves LoadBalancer services in {ns}"),
            "set management.metallb.addresses, or management.externalLoadBalancer: true if another load balancer does",
        ),
    }
}

/// NMState, the uplink's MTU on every node, and whereabouts' reconciler.
fn network(spec: &TenantStorage, view: &ManagementView) -> Vec<Check> {
    let Some(net) = &spec.spec.network else {
        return Vec::new();
    };
    let nmstate = m("nmstate", "NMState nmstate");
    let mut out = vec![match &view.nmstate {
        Read::Found(()) => nmstate.ok("present"),
        Read::Missing => nmstate.warn(
            "no NMState instance",
            "install the Kubernetes NMState operator; the bundle's NMState step creates the instance",
        ),
        Read::Unreadable(why) => nmstate.unknown(why.clone(), READ_FIX),
    }];
    out.push(uplink_mtu(net, view));
    let facts = super::SiteFacts::from_management(view, &spec.hcp_namespace());
    let keeps = super::resolve::persistent_ips(
        net.persistent_ips,
        spec.workers_on_storage_network(),
        &facts,
    )
    .ok()
    .flatten()
        == Some(true);
    if spec.workers_on_storage_network() {
        out.push(address_persistence(net, &facts, view));
    }
    if spec.workers_on_storage_network() && !keeps {
        let c = m(
            "whereabouts-reconciler",
            "DaemonSet openshift-multus/whereabouts-reconciler",
        );
        out.push(match &view.whereabouts_reconciler {
            Read::Found(()) => c.ok("running; live migration still keeps a returned address (kubevirt/kubevirt#14320)"),
            Read::Missing => c.warn(
                "not running: addresses of deleted pods are never returned",
                "list a whereabouts network in networks.operator.openshift.io/cluster spec.additionalNetworks \
                 (cluster-network-operator then starts the reconciler)",
            ),
            Read::Unreadable(why) => c.unknown(why.clone(), READ_FIX),
        });
    }
    out
}

/// Whether the worker VMs' storage addresses can survive live migration here
/// (OVN-Kubernetes localnet with persistent IPs), against `network.persistentIps`
/// as `site::resolve` settles it (stated, or on by default where the site keeps them).
fn address_persistence(
    net: &crate::spec::NetworkSpec,
    facts: &super::SiteFacts,
    view: &ManagementView,
) -> Check {
    let c = m(
        "storage-address-persistence",
        "Network.operator.openshift.io cluster spec.defaultNetwork.type; HyperConverged \
         spec.featureGates.deployKubevirtIpamController (or Deployment \
         openshift-cnv/kubevirt-ipam-controller-manager); OpenShift Virtualization version; \
         NodeNetworkState interface type of the storage bridge",
    );
    if let Err(bad) = super::resolve::persistent_ips(net.persistent_ips, true, facts) {
        return c.fail(
            bad.fact,
            "turn on HyperConverged spec.featureGates.deployKubevirtIpamController on OpenShift \
             Virtualization 4.18+ with OVN-Kubernetes and move the bridge node by node \
             (docs/lifecycle.md), or set spec.network.persistentIps: false",
        );
    }
    match (facts.persistent_ips(), net.persistent_ips) {
        ((Some(true), _), Some(true)) => {
            c.ok("OVN-Kubernetes localnet with persistent IPs (IPAMClaims)")
        }
        ((Some(true), _), None) if facts.linux_bridge == Some(false) => c.ok(
            "OVN-Kubernetes localnet with persistent IPs (IPAMClaims), rendered by default here",
        ),
        ((Some(true), _), _) => c.warn(
            format!(
                "the site keeps VM addresses across live migration, but this tenant's storage network \
                 uses whereabouts{}, and every routine migration (node drains, upgrades) can hand a \
                 worker's address to another VM (kubevirt/kubevirt#14320)",
                if facts.linux_bridge == Some(true) {
                    format!(" on the linux bridge {}", net.bridge)
                } else {
                    String::new()
                }
            ),
            "move the storage network to persistent IPs node by node (docs/lifecycle.md, \
             \"Moving a storage network to persistent IPs\"), then set spec.network.persistentIps: true",
        ),
        ((Some(false), why), _) => c.ok(format!(
            "whereabouts ({why}); the NAD header states the live-migration caveat"
        )),
        ((None, _), _) => c.unknown(
            unread(&view.network_type)
                .or_else(|| unread(&view.ipam_controller))
                .or_else(|| unread(&view.virtualization_version))
                .unwrap_or("the network type or the IPAM controller not found")
                .to_string(),
            READ_FIX,
        ),
    }
}

/// Why a read failed, if it did.
fn unread<T>(r: &Read<T>) -> Option<&str> {
    match r {
        Read::Unreadable(why) => Some(why),
        _ => None,
    }
}

fn uplink_mtu(net: &crate::spec::NetworkSpec, view: &ManagementView) -> Check {
    let c = m(
        "uplink-mtu",
        format!(
            "NodeNetworkState status.currentState.interfaces[name={}].mtu",
            net.uplink
        ),
    );
    let nodes = match &view.uplinks {
        Read::Found(n) => n,
        Read::Missing => {
            return c.fail(
                "no NodeNetworkState",
                "install the Kubernetes NMState operator",
            );
        }
        Read::Unreadable(why) => return c.unknown(why.clone(), READ_FIX),
    };
    let missing: Vec<&str> = nodes
        .iter()
        .filter(|n| n.mtu.is_none())
        .map(|n| n.node.as_str())
        .collect();
    let low: Vec<String> = nodes
        .iter()
        .filter_map(|n| {
            n.mtu
                .filter(|&mtu| mtu < net.mtu)
                .map(|mtu| format!("{} ({mtu})", n.node))
        })
        .collect();
    if nodes.is_empty() || !missing.is_empty() {
        return c.fail(
            format!(
                "no interface {} on: {}",
                net.uplink,
                if nodes.is_empty() {
                    "any node".to_string()
                } else {
                    missing.join(", ")
                }
            ),
            "correct spec.network.uplink to the NIC or bond the nodes have",
        );
    }
    if !low.is_empty() {
        return c.fail(
            format!("MTU below spec.network.mtu {} on: {}", net.mtu, low.join(", ")),
            format!(
                "raise the uplink's MTU (and its switch port), or lower spec.network.mtu to {}; nmstate rolls back a VLAN above its parent's MTU",
                nodes.iter().filter_map(|n| n.mtu).min().unwrap_or(net.mtu)
            ),
        );
    }
    c.ok(format!("{} nodes at MTU >= {}", nodes.len(), net.mtu))
}

fn management_portworx(spec: &TenantStorage, view: &ManagementView) -> Check {
    let c = m(
        "management-portworx",
        "StorageCluster (every namespace) status.phase, status.version",
    );
    // cloud-drive tenants reach the array themselves; the others use the management
    // Portworx (FADA, or the root and infra disks).
    let needed = !spec.mode().guest_reaches_array();
    let list = match &view.portworx {
        Read::Found(l) => l,
        Read::Missing => &Vec::new(),
        Read::Unreadable(why) => return c.unknown(why.clone(), READ_FIX),
    };
    let Some(sc) = list.first() else {
        return if needed {
            c.fail(
                "no management StorageCluster",
                "install Portworx on the management cluster",
            )
        } else {
            c.warn(
                "no management StorageCluster",
                "the worker VMs' root disks need a StorageClass that can serve RWX Block",
            )
        };
    };
    let found = describe(sc);
    match sc.phase.as_deref() {
        Some("Online" | "Running") => c.ok(found),
        _ => c.fail(
            found,
            format!(
                "bring StorageCluster {}/{} online (`oc describe storagecluster -n {}`)",
                sc.namespace, sc.name, sc.namespace
            ),
        ),
    }
}

fn describe(sc: &StorageClusterView) -> String {
    format!(
        "StorageCluster {}/{}: {}, Portworx {}, FA/FB driver {}",
        sc.namespace,
        sc.name,
        sc.phase.as_deref().unwrap_or("no phase"),
        sc.version.as_deref().unwrap_or("unknown"),
        if sc.fa_fb_driver { "on" } else { "off" }
    )
}

/// Direct-access claims are live-migratable only with the GA FA/FB driver.
/// Whether the direct-access drives are ReadWriteMany, with the site's facts (the
/// management Portworx's release and FA/FB driver) where they were read.
fn migratable_here(spec: &TenantStorage, view: &ManagementView) -> bool {
    let facts = super::SiteFacts::from_management(view, &spec.hcp_namespace());
    match super::resolve::resolve(spec, &facts) {
        Ok(r) => crate::driver::live_migratable_drives(&r),
        Err(_) => crate::driver::live_migratable_drives(spec),
    }
}

/// The HyperConverged eviction settings Red Hat's procedure for non-migratable
/// hosted-cluster VMs asks for (the bundle's HyperConverged patch), against the
/// site's.
fn hyperconverged_eviction(view: &ManagementView) -> Check {
    use crate::render::management::hyperconverged_eviction_spec;
    let c = m(
        "hyperconverged-eviction",
        "HyperConverged openshift-cnv/kubevirt-hyperconverged spec.evictionStrategy, \
         spec.workloadUpdateStrategy.workloadUpdateMethods",
    );
    let want = hyperconverged_eviction_spec();
    let strategy = want["evictionStrategy"].as_str().unwrap_or_default();
    let methods: Vec<&str> = want["workloadUpdateStrategy"]["workloadUpdateMethods"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_str)
        .collect();
    let fix = "apply the bundle's HyperConverged patch (Red Hat: Hosted control planes, \
               \"Evicting KubeVirt virtual machines\")";
    match &view.eviction {
        Read::Found(e)
            if e.strategy.as_deref() == Some(strategy)
                && methods.iter().all(|w| e.update_methods.iter().any(|h| h == w)) =>
        {
            c.ok(format!(
                "evictionStrategy {strategy}, workloadUpdateMethods {}",
                e.update_methods.join(", ")
            ))
        }
        Read::Found(e) => c.warn(
            format!(
                "evictionStrategy {}, workloadUpdateMethods [{}]: the worker VMs cannot live-migrate \
                 (ReadWriteOnce drives), so a node may shut down under them undrained, during \
                 OpenShift Virtualization upgrades too",
                e.strategy.as_deref().unwrap_or("unset (LiveMigrate)"),
                e.update_methods.join(", ")
            ),
            fix,
        ),
        Read::Missing => c.fail("no HyperConverged: OpenShift Virtualization is not installed", fix),
        Read::Unreadable(why) => c.unknown(why.clone(), READ_FIX),
    }
}

fn fa_fb_driver(view: &ManagementView) -> Check {
    let c = m(
        "fa-fb-driver",
        "StorageCluster metadata.annotations[portworx.io/pure-csi-integration], status.version",
    );
    let sc = match &view.portworx {
        Read::Found(l) => l.first(),
        Read::Missing => None,
        Read::Unreadable(why) => return c.unknown(why.clone(), READ_FIX),
    };
    let Some(sc) = sc else {
        return c.fail(
            "no management StorageCluster",
            "install Portworx on the management cluster",
        );
    };
    let ga = sc
        .version
        .as_deref()
        .and_then(|v| v.parse::<Version>().ok())
        .and_then(|v| v.at_least(&FA_FB_GA));
    match (sc.fa_fb_driver, ga) {
        (true, Some(true)) => c.ok("FA/FB driver on a GA release: the worker VMs live-migrate (RWX raw block)"),
        (on, _) => c.warn(
            format!(
                "FA/FB driver {} on Portworx {}: the drive claims are ReadWriteOnce, the worker VMs do not live-migrate",
                if on { "Early Access" } else { "off" },
                sc.version.as_deref().unwrap_or("unknown")
            ),
            "stop one worker VM at a time to drain a node, or upgrade to Portworx 3.7 and enable the FA/FB driver (irreversible)",
        ),
    }
}

fn root_disk_class(spec: &TenantStorage, view: &ManagementView) -> Check {
    let name = &spec.spec.hosted_cluster.root_storage_class;
    let c = m("root-disk-class", format!("StorageClass {name}"));
    let rendered = crate::render::management::root_disk_storage_class(spec).is_some();
    match &view.storage_classes {
        Read::Found(l) if l.iter().any(|n| n == name) => c.ok("present"),
        Read::Found(_) | Read::Missing if rendered => {
            c.warn("not yet created", "apply the bundle's StorageClass step")
        }
        Read::Found(_) | Read::Missing => c.fail(
            "missing",
            format!("create StorageClass {name} (spec.hostedCluster.rootStorageClass)"),
        ),
        Read::Unreadable(why) => c.unknown(why.clone(), READ_FIX),
    }
}

fn machine_config(view: &ManagementView) -> Check {
    let c = m(
        "multipath-machineconfig",
        format!(
            "MachineConfigs: {MANAGEMENT_MACHINE_CONFIG}, or another writing /etc/multipath.conf"
        ),
    );
    match &view.machine_configs {
        Read::Found(l) if l.iter().any(|mc| mc.name == MANAGEMENT_MACHINE_CONFIG) => {
            match super::facts::existing_machine_config(l) {
                Some(other) => c.warn(
                    format!("present, and MachineConfig {other} writes the same paths"),
                    format!(
                        "delete one of them (`oc delete machineconfig {MANAGEMENT_MACHINE_CONFIG}` keeps the \
                         management Portworx install's; the workers reboot once more)"
                    ),
                ),
                None => c.ok("present"),
            }
        }
        Read::Found(l) => match super::facts::existing_machine_config(l) {
            Some(other) => c.ok(format!(
                "MachineConfig {other} already writes the FlashArray host files: the bundle \
                 renders none (management.existingMachineConfig)"
            )),
            None => c.warn(
                "missing: no multipath/udev settings for FlashArray on the management nodes",
                "apply the bundle's MachineConfig (`pxfa apply --apply-node-config`; the nodes reboot one at a time)",
            ),
        },
        Read::Missing => c.warn(
            "missing: no multipath/udev settings for FlashArray on the management nodes",
            "apply the bundle's MachineConfig (`pxfa apply --apply-node-config`; the nodes reboot one at a time)",
        ),
        Read::Unreadable(why) => c.unknown(why.clone(), READ_FIX),
    }
}

/// The credentials a layer holds, with a problem where one does not belong: only a
/// cloud-drive tenant holds an array credential, and never the token pxfa runs with
/// (an array administrator's).
pub(super) fn credentials(
    spec: &TenantStorage,
    read: &Read<Vec<CredentialView>>,
    layer: Layer,
) -> Vec<Credential> {
    let Read::Found(found) = read else {
        return Vec::new();
    };
    found
        .iter()
        .map(|c| {
            let in_tenant = c.cluster == "tenant" || c.namespace == spec.hcp_namespace();
            let problem = if c.is_admin_token == Some(true) && in_tenant {
                Some("an array administrator's token in a tenant's reach: rotate it and give the tenant its own user (`pxfa token rotate`)".to_string())
            } else if in_tenant && !spec.mode().needs_token() {
                Some(format!("a {} tenant needs no array credential: delete this Secret", spec.mode()))
            } else {
                None
            };
            Credential {
                layer,
                holder: format!("Secret {}/{}", c.namespace, c.name),
                kind: match c.is_admin_token {
                    Some(true) => "pure.json with the token pxfa runs with (array administrator)".into(),
                    Some(false) => "pure.json (another token than pxfa's)".into(),
                    None => "pure.json".into(),
                },
                problem,
            }
        })
        .collect()
}
