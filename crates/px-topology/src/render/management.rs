//! Management-cluster objects every storage option shares: the storage network
//! (NNCP, NAD), MetalLB, the operator instances, the MultiClusterEngine and ingress
//! patches, the VM root-disk StorageClass and the NodePool.

use serde_json::{Value, json};

use super::manifest::{Cluster, Form, Manifest};
use super::{RenderError, quantity, step};
use crate::spec::{Ipv4Cidr, NetworkSpec, TenantStorage};

/// Portworx CSI provisioner name.
pub(crate) const PX_PROVISIONER: &str = "pxd.portworx.com";

/// The StorageClass the Portworx operator creates and owns when OpenShift
/// Virtualization is present (PX >= 3.4, operator >= 25.5). pxfa never emits an
/// object with this name: the operator would fight over it.
pub(crate) const OPERATOR_KUBEVIRT_CLASS: &str = "px-rwx-block-kubevirt";

/// One NodeNetworkConfigurationPolicy per management node: the uplink with its MTU,
/// and either a linux bridge on the VLAN sub-interface carrying the node's static
/// storage address, or (with `network.persistentIps`) an OVS bridge on the uplink
/// with the OVN bridge mapping of the tenant's localnet network and the node's
/// address on an OVS internal interface. The address differs per node, hence one
/// policy each.
pub(crate) fn node_network_policies(spec: &TenantStorage) -> Result<Vec<Manifest>, RenderError> {
    let Some(net) = spec
        .spec
        .network
        .as_ref()
        .filter(|_| management_bridge_needed(spec))
    else {
        return Ok(Vec::new());
    };
    let uplink_mtu = net.uplink_mtu.unwrap_or(net.mtu);
    let mut out = Vec::new();
    for (i, node) in spec.spec.management.nodes.iter().enumerate() {
        let addr = node.storage_address.ok_or_else(|| {
            RenderError::field(
                format!("spec.management.nodes[{i}].storageAddress"),
                format!(
                    "node {} needs its address on the storage network because spec.network is set",
                    node.name
                ),
            )
        })?;
        // The uplink first, with its MTU: a VLAN cannot exceed its parent's MTU, and
        // nmstate applies a policy atomically, rolling all of it back when one
        // interface fails (nmstate "VLAN" and "Linux bridge" examples; OpenShift
        // Kubernetes NMState docs). Only name, type, state and MTU: its addresses
        // and ports stay as they are.
        let uplink = json!({
            "name": net.uplink,
            "type": net.uplink_type.as_str(),
            "state": "up",
            "mtu": uplink_mtu,
        });
        let desired = if net.keeps_addresses() {
            ovs_bridge_state(spec, net, uplink, addr)
        } else {
            json!({"interfaces": linux_bridge_interfaces(net, uplink, addr)})
        };
        let body = json!({
            "apiVersion": "nmstate.io/v1",
            "kind": "NodeNetworkConfigurationPolicy",
            "metadata": {
                "name": crate::naming::nncp(&net.bridge, &node.name),
                "labels": shared_labels(),
            },
            "spec": {
                "nodeSelector": {"kubernetes.io/hostname": node.name},
                "desiredState": desired,
            },
        });
        let m = Manifest::resource(
            Cluster::Management,
            step::NNCP,
            body,
            if net.keeps_addresses() {
                &[
                    "Storage network on one management node: OVS bridge on the uplink, mapped to the tenant's",
                    "OVN-Kubernetes localnet network, with the node's static address on an OVS internal port.",
                    "Shared by every tenant on this management cluster; re-applying it is harmless.",
                ]
            } else {
                &[
                    "Storage network on one management node: linux bridge on the VLAN uplink, with the node's static address.",
                    "Shared by every tenant on this management cluster; re-applying it is harmless.",
                ]
            },
        )
        .note(format!(
            "Declares uplink {} ({}) at MTU {uplink_mtu} (spec.network.uplinkMtu, a statement about the site: \
             its switch port must carry it); nmstate rolls the whole policy back if the uplink cannot take it.",
            net.uplink,
            net.uplink_type.as_str()
        ));
        out.push(if net.keeps_addresses() {
            m.note(mapping_note(spec, net))
                .note(conversion_note(&net.bridge, &node.name))
        } else {
            m
        });
    }
    Ok(out)
}

/// What the NNCP's bridge mapping means for the other tenants on the bridge.
fn mapping_note(spec: &TenantStorage, net: &NetworkSpec) -> String {
    let ovs = "The bridge is OVS, not a linux bridge: every tenant on this storage network must set \
               network.persistentIps alike.";
    match site_physical_network(spec, net) {
        Some(physical) => format!(
            "One site-wide bridge mapping, {physical} -> {}: every tenant's localnet NAD names it \
             (physicalNetworkName, OpenShift 4.18+), so re-applying this policy for any tenant writes the \
             same entry. Mappings an older render made per tenant stay (state: present) until removed with \
             state: absent (docs/lifecycle.md, \"Moving a storage network to persistent IPs\"). {ovs}",
            net.bridge
        ),
        None => format!(
            "ovn.bridge-mappings entries are kept per entry (state: present): another tenant's mapping on {} \
             stays on the node when this policy is re-applied without it, and none is ever removed; state \
             management.openshiftVersion (4.18+) for one site-wide mapping. {ovs}",
            net.bridge
        ),
    }
}

/// The check an OVS policy needs where pxfa did not read the node: converting a linux
/// bridge drops the storage sessions on it (doctor and `render --site` refuse it from
/// NodeNetworkState; `pxfa lint` with the node's state alongside refuses it, PXFA035).
fn conversion_note(bridge: &str, node: &str) -> String {
    format!(
        "Before applying: {bridge} must not run as a linux bridge on {node} (oc get nns {node} -o \
         jsonpath='{{.status.currentState.interfaces[?(@.name==\"{bridge}\")].type}}' prints \
         linux-bridge): converting it drops every iSCSI/NVMe session on it. pxfa doctor and render --site \
         refuse that; otherwise lint this folder with the node's state (oc get nns -o yaml > /tmp/nns.yaml; \
         pxfa lint . /tmp/nns.yaml: PXFA035) or move the node as docs/lifecycle.md says (\"Moving a storage \
         network to persistent IPs\")."
    )
}

/// The linux-bridge layout: the uplink, its VLAN sub-interface (when tagged), and the
/// bridge with the node's address.
fn linux_bridge_interfaces(net: &NetworkSpec, uplink: Value, addr: Ipv4Cidr) -> Vec<Value> {
    let (port_iface, mut interfaces) = match net.vlan {
        Some(vlan) => {
            let sub = format!("{}.{vlan}", net.uplink);
            let vlan_iface = json!({
                "name": sub,
                "type": "vlan",
                "state": "up",
                "mtu": net.mtu,
                "vlan": {"base-iface": net.uplink, "id": vlan},
                "ipv4": {"enabled": false},
            });
            (sub, vec![uplink, vlan_iface])
        }
        None => (net.uplink.clone(), vec![uplink]),
    };
    interfaces.push(json!({
        "name": net.bridge,
        "type": "linux-bridge",
        "state": "up",
        "mtu": net.mtu,
        "ipv4": {
            "enabled": true,
            "dhcp": false,
            "address": [{"ip": addr.addr.to_string(), "prefix-length": addr.prefix}],
        },
        "bridge": {
            "options": {"stp": {"enabled": false}},
            "port": [{"name": port_iface}],
        },
    }));
    interfaces
}

/// The OVS layout for an OVN-Kubernetes localnet network, as OpenShift's "OVN-Kubernetes
/// additional network mapping" on a dedicated NIC has it: an OVS bridge with the uplink
/// as its port (`allow-extra-patch-ports`, so OVN's patch ports survive nmstate) and
/// `ovn.bridge-mappings` naming the localnet network; OVN tags the VMs' traffic with the
/// NAD's `vlanID`. The node keeps its own address on an OVS internal interface, an access
/// port on the storage VLAN (nmstate "OVS bridge with internal interface").
/// <https://docs.openshift.com/container-platform/4.18/networking/multiple_networks/secondary_networks/creating-secondary-nwt-ovnk.html>
fn ovs_bridge_state(
    spec: &TenantStorage,
    net: &NetworkSpec,
    uplink: Value,
    addr: Ipv4Cidr,
) -> Value {
    let host = ovs_host_interface(net);
    let mut host_port = json!({"name": host});
    if let Some(vlan) = net.vlan {
        host_port["vlan"] = json!({"mode": "access", "tag": vlan});
    }
    json!({
        "interfaces": [
            uplink,
            {
                "name": net.bridge,
                "type": "ovs-bridge",
                "state": "up",
                "bridge": {
                    "allow-extra-patch-ports": true,
                    "options": {"stp": false},
                    "port": [{"name": net.uplink}, host_port],
                },
            },
            {
                "name": host,
                "type": "ovs-interface",
                "state": "up",
                "mtu": net.mtu,
                "ipv4": {
                    "enabled": true,
                    "dhcp": false,
                    "address": [{"ip": addr.addr.to_string(), "prefix-length": addr.prefix}],
                },
            },
        ],
        "ovn": {"bridge-mappings": [{
            "localnet": bridge_mapping_name(spec, net),
            "bridge": net.bridge,
            "state": "present",
        }]},
    })
}

/// The OVS internal interface that carries the node's storage address: the bridge
/// name with `-ip`, kept within Linux's 15-character interface names.
fn ovs_host_interface(net: &NetworkSpec) -> String {
    let stem: String = net.bridge.chars().take(12).collect();
    format!("{stem}-ip")
}

/// The localnet network's name: the NAD config's `name` and the bridge mapping's
/// `localnet`. One per tenant: OVN-Kubernetes requires every NAD of one network name
/// to carry the same configuration, and each tenant has its own `vmRange`.
pub(crate) fn localnet_name(spec: &TenantStorage, net: &NetworkSpec) -> String {
    format!("{}-{}", spec.tenant_name(), net.nad_name)
}

/// The first OpenShift release whose OVN-Kubernetes localnet NADs take
/// `physicalNetworkName` (openshift-docs PR 87994, "Version(s): 4.18+"; the alias
/// is ovn-kubernetes PR 4320): many localnet networks, one bridge mapping.
const PHYSICAL_NETWORK_NAME_FROM: (u32, u32) = (4, 18);

/// The site-wide physical network name of a storage bridge, when the management
/// cluster's release takes `physicalNetworkName` (its OpenShift version, or its
/// OpenShift Virtualization version, which ships for the same OpenShift minor): every
/// tenant's localnet NAD on the bridge names it, and the shared NNCP maps it once, so
/// per-tenant mappings no longer pile up on the NNCP. `None` (version unknown or
/// older): the NNCP maps each tenant's own network name.
pub(crate) fn site_physical_network(spec: &TenantStorage, net: &NetworkSpec) -> Option<String> {
    let at_least = |v: crate::spec::Version| (v.major, v.minor) >= PHYSICAL_NETWORK_NAME_FROM;
    let known = (spec.management_ocp_version().map(at_least))
        .or(spec.virtualization_version().map(at_least));
    known
        .unwrap_or(false)
        .then(|| format!("pxfa-{}", net.bridge))
}

/// The name the NNCP's bridge mapping gives the storage bridge: the site-wide
/// physical network where the release allows, else the tenant's localnet name.
fn bridge_mapping_name(spec: &TenantStorage, net: &NetworkSpec) -> String {
    site_physical_network(spec, net).unwrap_or_else(|| localnet_name(spec, net))
}

/// Whether the management nodes need the storage bridge (NNCPs, and the NMState
/// instance that acts on them): whenever `spec.network` is set, except for a
/// direct-access tenant over Fibre Channel whose workers stay off the network. There
/// the management Portworx reaches the array over FC and no VM uses the bridge, so a
/// bridge on every management node would only be one more thing to break.
pub(crate) fn management_bridge_needed(spec: &TenantStorage) -> bool {
    let fc_only = spec.mode().uses_management_hosts()
        && spec.protocol() == Some(crate::spec::Protocol::Fc)
        && !spec.workers_on_storage_network();
    spec.spec.network.is_some() && !fc_only
}

/// The NetworkAttachmentDefinition the worker VMs use for the storage network:
/// bridge CNI on the node bridge with whereabouts handing out `vmRange`, or (with
/// `network.persistentIps`) an OVN-Kubernetes localnet network whose addresses
/// survive live migration. `None` when the worker VMs stay off the storage network
/// ([`TenantStorage::workers_on_storage_network`]).
pub(crate) fn network_attachment(spec: &TenantStorage) -> Option<Manifest> {
    if !spec.workers_on_storage_network() {
        return None;
    }
    let net = spec.spec.network.as_ref()?;
    let config = if net.keeps_addresses() {
        localnet_config(spec, net)
    } else {
        nad_config(net)
    };
    let body = json!({
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": {
            "name": net.nad_name,
            "namespace": spec.hcp_namespace(),
            "labels": labels(spec),
        },
        "spec": {"config": config},
    });
    if net.keeps_addresses() {
        return Some(localnet_attachment(body));
    }
    let m = Manifest::resource(
        Cluster::Management,
        step::NAD,
        body,
        &[
            "Storage network for the tenant's worker VMs (bridge CNI + whereabouts IPAM); needs the HostedCluster.",
            "Lives in the hosted control plane namespace, which HyperShift creates with the HostedCluster;",
            "the VMs retry until it exists.",
        ],
    )
    // kubevirt/kubevirt#14320: whereabouts allocates per pod, so a migrated VM's new
    // virt-launcher pod gets a new address while the guest keeps the old one, which
    // returns to the pool when the source pod goes.
    .note(
        "CAVEAT, live migration: whereabouts gives the migration target pod a NEW address while the guest \
         keeps its old one, which returns to the pool and can be handed to another VM (duplicate IP on the \
         storage VLAN; kubevirt/kubevirt#14320). After migrating a worker, check its storage address \
         against `oc get ippools.whereabouts.cni.cncf.io -n openshift-multus -o yaml`. Where the site runs \
         OVN-Kubernetes and OpenShift Virtualization 4.18+ with its IPAM controller, network.persistentIps \
         keeps the address instead (pxfa doctor: storage-address-persistence).",
    );
    Some(if net.whereabouts_reconciler {
        m.note(
            "network.whereaboutsReconciler: true states that the whereabouts IP reconciler runs \
             (openshift-multus/whereabouts-reconciler), so addresses of deleted pods return to the pool.",
        )
    } else {
        m.note(
            "The whereabouts IP reconciler is opt-in on OpenShift and the spec does not state it runs: list a \
             whereabouts network in networks.operator.openshift.io/cluster spec.additionalNetworks (the \
             cluster network operator then starts openshift-multus/whereabouts-reconciler), then set \
             network.whereaboutsReconciler: true (lint PXFA031).",
        )
    })
}

/// The localnet NAD's manifest, with its header.
fn localnet_attachment(body: Value) -> Manifest {
    Manifest::resource(
        Cluster::Management,
        step::NAD,
        body,
        &[
            "Storage network for the tenant's worker VMs: OVN-Kubernetes localnet on the storage bridge's mapping,",
            "with persistent IPs; needs the HostedCluster. Lives in the hosted control plane namespace, which",
            "HyperShift creates with the HostedCluster; the VMs retry until it exists.",
        ],
    )
    .note(
        "allowPersistentIPs: OpenShift Virtualization's IPAM controller keeps each worker VM's address in an \
         IPAMClaim named after the VM, so the address survives live migration and restarts and is released \
         only when the VM is deleted (k8snetworkplumbingwg/ipamclaims; kubevirt/ipam-extensions). Needs \
         OpenShift Virtualization 4.18+ and HyperConverged spec.featureGates.deployKubevirtIpamController \
         (network.persistentIps, checked by pxfa doctor).",
    )
    .note(
        "Addresses come from vmRange only: excludeSubnets covers the rest of the subnet (the gateway and the \
         management nodes' addresses among it).",
    )
}

/// The OVN-Kubernetes localnet CNI configuration (OpenShift "Configuration for an
/// OVN-Kubernetes additional network", topology `localnet`): the network `name` is
/// the bridge mapping's `localnet`, `subnets` the storage subnet with everything
/// outside `vmRange` excluded, `vlanID` the storage VLAN (OVN tags the VMs' traffic).
fn localnet_config(spec: &TenantStorage, net: &NetworkSpec) -> String {
    let mut cfg = serde_json::Map::new();
    cfg.insert("cniVersion".into(), json!("0.3.1"));
    cfg.insert("name".into(), json!(localnet_name(spec, net)));
    cfg.insert("type".into(), json!("ovn-k8s-cni-overlay"));
    cfg.insert("topology".into(), json!("localnet"));
    cfg.insert(
        "netAttachDefName".into(),
        json!(format!("{}/{}", spec.hcp_namespace(), net.nad_name)),
    );
    cfg.insert("subnets".into(), json!(net.subnet.to_string()));
    let excluded: Vec<String> = outside_range(net).iter().map(ToString::to_string).collect();
    if !excluded.is_empty() {
        cfg.insert("excludeSubnets".into(), json!(excluded.join(",")));
    }
    if let Some(vlan) = net.vlan {
        cfg.insert("vlanID".into(), json!(vlan));
    }
    if let Some(physical) = site_physical_network(spec, net) {
        cfg.insert("physicalNetworkName".into(), json!(physical));
    }
    cfg.insert("mtu".into(), json!(net.mtu));
    cfg.insert("allowPersistentIPs".into(), json!(true));
    // A Value built by json! always serialises.
    serde_json::to_string_pretty(&Value::Object(cfg)).unwrap_or_default()
}

/// The prefixes that cover the storage subnet outside `vmRange`, smallest set.
fn outside_range(net: &NetworkSpec) -> Vec<Ipv4Cidr> {
    let first = u32::from(net.subnet.network());
    let last = first | !net.subnet.mask();
    let start = u32::from(net.vm_range.start);
    let end = u32::from(net.vm_range.end);
    let mut out = Vec::new();
    if start > first {
        out.extend(cover(first, start - 1));
    }
    if end < last {
        out.extend(cover(end + 1, last));
    }
    out
}

/// The fewest prefixes whose union is `from..=to`.
fn cover(mut from: u32, to: u32) -> Vec<Ipv4Cidr> {
    let mut out = Vec::new();
    loop {
        // The largest block aligned at `from` that does not pass `to`.
        let mut size: u64 = if from == 0 {
            1 << 32
        } else {
            1 << from.trailing_zeros()
        };
        while u64::from(from) + size - 1 > u64::from(to) {
            size >>= 1;
        }
        let prefix = 32 - size.trailing_zeros() as u8;
        out.push(Ipv4Cidr {
            addr: std::net::Ipv4Addr::from(from),
            prefix,
        });
        let next = u64::from(from) + size;
        if next > u64::from(to) {
            return out;
        }
        from = next as u32;
    }
}

/// The bridge CNI configuration string of the NAD, pretty-printed so it reads well
/// as a YAML block scalar.
fn nad_config(net: &NetworkSpec) -> String {
    let mut ipam = serde_json::Map::new();
    ipam.insert("type".into(), json!("whereabouts"));
    ipam.insert("range".into(), json!(net.subnet.to_string()));
    ipam.insert("range_start".into(), json!(net.vm_range.start.to_string()));
    ipam.insert("range_end".into(), json!(net.vm_range.end.to_string()));
    if let Some(gw) = net.gateway {
        ipam.insert("gateway".into(), json!(gw.to_string()));
    }
    let cfg = json!({
        "cniVersion": "0.3.1",
        "name": net.nad_name,
        "type": "bridge",
        "bridge": net.bridge,
        "mtu": net.mtu,
        "ipam": Value::Object(ipam),
    });
    // A Value built by json! always serialises.
    serde_json::to_string_pretty(&cfg).unwrap_or_default()
}

/// The MetalLB pool pxfa renders: `management.metallb`, unless the spec says an
/// external load balancer serves the API server (`management.externalLoadBalancer`).
/// With neither, nothing serves the LoadBalancer service and it stays pending on
/// bare metal: lint PXFA028 is an error.
fn metallb_pool(spec: &TenantStorage) -> Option<&crate::spec::MetallbSpec> {
    let m = &spec.spec.management;
    m.metallb.as_ref().filter(|_| !m.external_load_balancer)
}

/// MetalLB pool and L2 advertisement for the hosted API server's LoadBalancer
/// service (MetalLB on OpenShift: IPAddressPool and L2Advertisement in
/// `metallb-system`; HyperShift's KubeVirt guide publishes the API server as a
/// LoadBalancer and needs one on bare metal). Rendered for every tenant with
/// `management.metallb`, unless `management.externalLoadBalancer`.
pub(crate) fn metallb(spec: &TenantStorage) -> Vec<Manifest> {
    let Some(mlb) = metallb_pool(spec) else {
        return Vec::new();
    };
    let pool = format!("{}-hcp-api", spec.tenant_name());
    let pool_body = json!({
        "apiVersion": "metallb.io/v1beta1",
        "kind": "IPAddressPool",
        "metadata": {"name": pool, "namespace": "metallb-system", "labels": labels(spec)},
        // serviceAllocation keeps the pool to this tenant's control plane namespace:
        // without it any LoadBalancer service on the cluster could take its addresses.
        "spec": {
            "addresses": mlb.addresses,
            "autoAssign": true,
            "serviceAllocation": {"namespaces": [spec.hcp_namespace()]},
        },
    });
    let adv_body = json!({
        "apiVersion": "metallb.io/v1beta1",
        "kind": "L2Advertisement",
        "metadata": {"name": format!("{pool}-l2"), "namespace": "metallb-system", "labels": labels(spec)},
        "spec": {"ipAddressPools": [pool]},
    });
    vec![
        Manifest::resource(
            Cluster::Management,
            step::METALLB,
            pool_body,
            &[
                "Addresses MetalLB may give the hosted API server's LoadBalancer service.",
                "Serves only this tenant's control plane namespace (serviceAllocation.namespaces).",
                "Needs the MetalLB operator and the MetalLB instance (step before).",
            ],
        ),
        Manifest::resource(
            Cluster::Management,
            step::METALLB,
            adv_body,
            &["Announces the pool above on the management nodes' L2 network."],
        ),
    ]
}

/// The MultiClusterEngine components HyperShift on KubeVirt needs.
pub(crate) const MCE_COMPONENTS: [&str; 2] = ["hypershift", "hypershift-local-hosting"];

/// The MultiClusterEngine change as an add-if-missing JSON patch: one `add` per
/// component that `live` (the cluster's MultiClusterEngine) does not list, so that
/// the atomic `spec.overrides.components` list keeps every entry it has, and an
/// entry the admin set (even `enabled: false`) is never overwritten. Empty when
/// nothing is missing. `None` for `live` gives the ops for an MCE whose list
/// exists but names neither component.
pub fn mce_components_patch(live: Option<&Value>) -> Vec<Value> {
    let components = live.and_then(|m| m.pointer("/spec/overrides/components"));
    let listed: Vec<&str> = components
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str))
        .collect();
    let missing: Vec<Value> = MCE_COMPONENTS
        .iter()
        .filter(|c| !listed.contains(c))
        .map(|c| json!({"name": c, "enabled": true}))
        .collect();
    if missing.is_empty() {
        return Vec::new();
    }
    let has_list = live.is_none() || components.is_some_and(Value::is_array);
    let has_overrides = live.is_none() || live.and_then(|m| m.pointer("/spec/overrides")).is_some();
    if has_list {
        missing
            .into_iter()
            .map(|v| json!({"op": "add", "path": "/spec/overrides/components/-", "value": v}))
            .collect()
    } else if has_overrides {
        vec![json!({"op": "add", "path": "/spec/overrides/components", "value": missing})]
    } else {
        vec![json!({"op": "add", "path": "/spec/overrides", "value": {"components": missing}})]
    }
}

/// The jq program of `mce_guarded_command`: appends `{name, enabled: true}` for each
/// of `MCE_COMPONENTS` the list does not name, creating `spec.overrides.components`
/// when absent. The same rule as [`mce_components_patch`].
pub fn mce_guard_program() -> String {
    let names: Vec<String> = MCE_COMPONENTS.iter().map(|c| format!("\"{c}\"")).collect();
    format!(
        ".spec.overrides.components |= ((. // []) as $l | $l + ([{}] | \
         map(select(. as $n | $l | any(.name == $n) | not)) | map({{name: ., enabled: true}})))",
        names.join(",")
    )
}

/// The shell line that makes the MCE change safely on a live cluster: read the
/// MultiClusterEngine, add only the missing components with jq, write it back with
/// `oc replace` (which carries the read `resourceVersion`, so a concurrent change is
/// refused instead of overwritten). Works whether `spec.overrides.components` exists
/// or not, and never duplicates an entry.
pub(crate) fn mce_guarded_command() -> String {
    let get = super::shell::join(&["oc", "get", "mce", "multiclusterengine", "-o", "json"]);
    let jq = super::shell::join(&["jq".to_string(), mce_guard_program()]);
    let replace = super::shell::join(&["oc", "replace", "-f", "-"]);
    format!("{get} | {jq} | {replace}")
}

/// The MultiClusterEngine patch enabling HyperShift (component `hypershift`; the
/// older `hypershift-preview` was folded into it in MCE 2.3). A patch, not an object:
/// applying a MultiClusterEngine would replace `spec.overrides.components`, an atomic
/// list, and with it every other component setting.
pub(crate) fn multicluster_engine() -> Manifest {
    Manifest {
        cluster: Cluster::Management,
        order: step::MCE,
        file_name: String::new(),
        kind: "MultiClusterEngine".to_string(),
        name: "multiclusterengine".to_string(),
        namespace: None,
        body: Value::Array(mce_components_patch(None)),
        secret: false,
        purpose: vec![
            "Enables HyperShift (components hypershift, hypershift-local-hosting) in the existing MultiClusterEngine.".to_string(),
            "GUARDED: the ops above fail when spec.overrides.components is absent and duplicate an entry already".to_string(),
            "listed, so apply the change with this command instead; it adds only the components the list lacks".to_string(),
            "(creating the list if needed), keeps every other entry, and oc replace refuses if the MCE changed meanwhile:".to_string(),
            format!("  {}", mce_guarded_command()),
            "Both are on by default and the MCE operator usually lists them: then the command changes nothing.".to_string(),
            "An entry with enabled: false was disabled on purpose and is kept; enable it deliberately.".to_string(),
        ],
        form: Form::JsonPatch {
            target: "the MultiClusterEngine multiclusterengine (only the ops for components it does not list)".to_string(),
        },
    }
}

/// The default IngressController's wildcard route policy, which
/// `baseDomainPassthrough` needs (the hosted cluster's `*.apps` routes are wildcard
/// routes on the management ingress). A JSON merge patch, as in Portworx's HCP
/// walkthrough and HyperShift's KubeVirt guide (`oc patch ingresscontroller -n
/// openshift-ingress-operator default --type=merge`): it sets only
/// `routeAdmission.wildcardPolicy`, so a `namespaceOwnership` the admin set stays (a
/// JSON-patch `add /spec/routeAdmission` would replace the whole map). The identity
/// fields repeat the object's own values, which a merge patch leaves unchanged.
pub(crate) fn ingress_wildcard_patch() -> Manifest {
    Manifest {
        cluster: Cluster::Management,
        order: step::MCE,
        file_name: String::new(),
        kind: "IngressController".to_string(),
        name: "default".to_string(),
        namespace: Some("openshift-ingress-operator".to_string()),
        body: json!({
            "apiVersion": "operator.openshift.io/v1",
            "kind": "IngressController",
            "metadata": {"name": "default", "namespace": "openshift-ingress-operator"},
            "spec": {"routeAdmission": {"wildcardPolicy": "WildcardsAllowed"}},
        }),
        secret: false,
        purpose: vec![
            "Lets the management ingress admit wildcard routes, which the hosted cluster's *.apps needs (baseDomainPassthrough).".to_string(),
            "Sets only spec.routeAdmission.wildcardPolicy; namespaceOwnership and the rest stay. Shared by tenants.".to_string(),
        ],
        form: Form::MergePatch {
            target: "the default IngressController in openshift-ingress-operator".to_string(),
        },
    }
}

/// Where OpenShift Virtualization's cluster-wide settings live.
pub(crate) const HCO_NAMESPACE: &str = "openshift-cnv";
/// The HyperConverged object's name.
pub(crate) const HCO_NAME: &str = "kubevirt-hyperconverged";

/// The HyperConverged eviction settings Red Hat's procedure for hosted-cluster VMs
/// that cannot live-migrate asks for ("Evicting KubeVirt virtual machines",
/// openshift-docs `modules/hcp-virt-evict-vms.adoc`): `evictionStrategy: External`,
/// so a node is drained only through CAPK, which takes down the NodePool's VM with
/// it, and `workloadUpdateMethods: [LiveMigrate, Evict]`, so an OpenShift
/// Virtualization upgrade restarts the VMs that cannot move instead of the node
/// going down under them. A merge patch: every other HyperConverged field stays.
/// Rendered for a tenant whose workers do not live-migrate (direct-access with
/// ReadWriteOnce drives); shared by every tenant of the management cluster.
pub(crate) fn hyperconverged_eviction_patch() -> Manifest {
    Manifest {
        cluster: Cluster::Management,
        order: step::MCE,
        file_name: String::new(),
        kind: "HyperConverged".to_string(),
        name: HCO_NAME.to_string(),
        namespace: Some(HCO_NAMESPACE.to_string()),
        body: json!({
            "apiVersion": "hco.kubevirt.io/v1beta1",
            "kind": "HyperConverged",
            "metadata": {"name": HCO_NAME, "namespace": HCO_NAMESPACE},
            "spec": hyperconverged_eviction_spec(),
        }),
        secret: false,
        purpose: vec![
            "The worker VMs of this tenant cannot live-migrate (ReadWriteOnce drives). Red Hat's procedure for such \
             hosted-cluster VMs (OpenShift docs, Hosted control planes, \"Evicting KubeVirt virtual machines\") sets \
             the cluster eviction strategy to External, so that a node drain goes through CAPK and the NodePool, \
             and lets OpenShift Virtualization upgrades evict (restart) the VMs that cannot move; without it \
             nodes may shut down undrained, during OpenShift Virtualization upgrades too."
                .to_string(),
            "Sets only spec.evictionStrategy and spec.workloadUpdateStrategy.workloadUpdateMethods; shared by \
             every tenant of the management cluster (pxfa doctor: hyperconverged-eviction)."
                .to_string(),
            "[L] Red Hat's procedure writes these fields under spec.virtualization; the HyperConverged v1beta1 \
             CRD serves them at spec. Check `oc explain hyperconverged.spec.evictionStrategy` first; if it is not \
             served, apply the same two fields under spec.virtualization."
                .to_string(),
        ],
        form: Form::MergePatch {
            target: format!("the HyperConverged {HCO_NAME} in {HCO_NAMESPACE}"),
        },
    }
}

/// The `spec` the eviction patch sets, which doctor compares with the site's.
pub(crate) fn hyperconverged_eviction_spec() -> Value {
    json!({
        "evictionStrategy": "External",
        "workloadUpdateStrategy": {"workloadUpdateMethods": ["LiveMigrate", "Evict"]},
    })
}

/// The NMState operator instance (`NMState/nmstate`): without it the operator does
/// not run its handler and NodeNetworkConfigurationPolicies stay pending. Rendered
/// when the spec has a storage network.
pub(crate) fn nmstate_instance(spec: &TenantStorage) -> Option<Manifest> {
    if !management_bridge_needed(spec) {
        return None;
    }
    let body = json!({
        "apiVersion": "nmstate.io/v1",
        "kind": "NMState",
        "metadata": {"name": "nmstate", "labels": shared_labels()},
    });
    Some(Manifest::resource(
        Cluster::Management,
        step::OPERATORS,
        body,
        &[
            "The NMState operator instance, so that the NodeNetworkConfigurationPolicies are applied.",
            "Needs the Kubernetes NMState operator installed; there is one per cluster, shared by tenants.",
        ],
    ))
}

/// The MetalLB operator instance (`MetalLB/metallb` in `metallb-system`), rendered
/// with the tenant's pool.
pub(crate) fn metallb_instance(spec: &TenantStorage) -> Option<Manifest> {
    metallb_pool(spec)?;
    let body = json!({
        "apiVersion": "metallb.io/v1beta1",
        "kind": "MetalLB",
        "metadata": {"name": "metallb", "namespace": "metallb-system", "labels": shared_labels()},
    });
    Some(Manifest::resource(
        Cluster::Management,
        step::OPERATORS,
        body,
        &[
            "The MetalLB operator instance (speakers and controller), which serves the address pools.",
            "Needs the MetalLB operator installed; there is one per cluster, shared by tenants.",
        ],
    ))
}

/// The management StorageClass for VM root disks: Portworx replicated, RWX Block
/// capable so that the VMs live-migrate. `None` when the spec names the class the
/// Portworx operator owns.
pub(crate) fn root_disk_storage_class(spec: &TenantStorage) -> Option<Manifest> {
    let name = &spec.spec.hosted_cluster.root_storage_class;
    if name == OPERATOR_KUBEVIRT_CLASS {
        return None;
    }
    let mut params = serde_json::Map::new();
    params.insert("repl".into(), json!("3"));
    let reason = nodiscard_reason(spec);
    if reason.is_some() {
        params.insert("nodiscard".into(), json!("true"));
    }
    let body = json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": name,
            "labels": shared_labels(),
            "annotations": Value::Object(version_annotations(spec)),
        },
        "provisioner": PX_PROVISIONER,
        "parameters": Value::Object(params),
        "volumeBindingMode": "Immediate",
        "allowVolumeExpansion": true,
    });
    let mut m = Manifest::resource(
        Cluster::Management,
        step::STORAGE_CLASS,
        body,
        &[
            "Root disks of the worker VMs: Portworx repl 3, used as ReadWriteMany Block so VMs live-migrate.",
            "Shared by tenants; the annotations record the management versions nodiscard was decided for.",
        ],
    );
    m = match reason {
        Some(why) => m.note(format!("nodiscard is set: {why}.")),
        None => {
            m.note("nodiscard is not set: the management versions are past both discard problems.")
        }
    };
    Some(m)
}

/// The management StorageClass pxfa renders for the hosted etcd volumes when
/// `hostedCluster.etcdStorageClass` names it.
pub(crate) const ETCD_STORAGE_CLASS: &str = "pxfa-etcd";

/// The low-latency class for the hosted etcd (`hostedCluster.etcdStorageClass:
/// pxfa-etcd`): Portworx `repl: "2"` and `priority_io: "high"`. etcd replicates
/// every write to its three members itself, so replication 3 under each member
/// (nine copies) only adds a replica to every synchronous write; Portworx's own
/// database guidance keeps two replicas for HA "with minimal write overhead" and
/// high I/O priority (Portworx PostgreSQL "Storage configuration and performance";
/// IO profiles page). That it measurably lowers etcd's fsync latency here is [L];
/// the class is rendered only when the spec names it.
pub(crate) fn etcd_storage_class(spec: &TenantStorage) -> Option<Manifest> {
    if spec.spec.hosted_cluster.etcd_storage_class.as_deref() != Some(ETCD_STORAGE_CLASS) {
        return None;
    }
    let body = json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": ETCD_STORAGE_CLASS, "labels": shared_labels()},
        "provisioner": PX_PROVISIONER,
        "parameters": {"repl": "2", "priority_io": "high"},
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": true,
    });
    Some(
        Manifest::resource(
            Cluster::Management,
            step::STORAGE_CLASS,
            body,
            &[
                "Hosted etcd volumes (hostedCluster.etcdStorageClass): Portworx repl 2, high I/O priority.",
                "etcd keeps three members itself, so each member's volume needs no third replica; fewer replicas",
                "per synchronous write keep its fsync latency down. Shared by tenants that name it.",
            ],
        )
        .note(
            "[L] repl 2 and priority_io high follow Portworx's database guidance (\"Storage configuration and \
             performance\": repl 2 for HA with minimal write overhead); the latency gain for etcd is not measured.",
        ),
    )
}

pub(crate) use crate::lint::{OCP_VERSION_ANNOTATION, VIRT_VERSION_ANNOTATION};

/// The management versions behind the `nodiscard` decision, where known ("unknown"
/// otherwise: an absent version is itself a reason to set it). `pxfa lint` reads
/// them back when no HyperConverged or ClusterVersion file is given.
fn version_annotations(spec: &TenantStorage) -> serde_json::Map<String, Value> {
    let show = |v: Option<crate::spec::Version>| v.map_or("unknown".to_string(), |v| v.to_string());
    let mut a = serde_json::Map::new();
    a.insert(
        VIRT_VERSION_ANNOTATION.into(),
        json!(show(spec.virtualization_version())),
    );
    a.insert(
        OCP_VERSION_ANNOTATION.into(),
        json!(show(spec.management_ocp_version())),
    );
    a
}

/// Why Portworx block StorageClasses on the management cluster need
/// `nodiscard: "true"`, if they do: decided from the management cluster's OpenShift
/// Virtualization and OpenShift versions, the nodes that run the VM disks (lint owns
/// the rule).
pub(crate) fn nodiscard_reason(spec: &TenantStorage) -> Option<String> {
    crate::lint::nodiscard_reason(spec.virtualization_version(), spec.management_ocp_version())
}

/// The node label that asks Portworx for one new driveset on a node that joins after
/// install (Portworx concepts/storage-nodes, reference/node-labels). pxfa never sets
/// it NodePool-wide; the NodePool header says when to set it by hand.
pub(crate) const PROVISION_STORAGE_NODE_LABEL: &str = "portworx.io/provision-storage-node";

/// The tenant's KubeVirt NodePool: InPlace upgrades (Portworx keeps state on the
/// VMs, which Replace would recreate), no auto-repair, RWX Block root disks.
/// `configs` names ConfigMaps (in the NodePool namespace) carrying MachineConfigs.
pub(crate) fn node_pool(spec: &TenantStorage, configs: &[String]) -> Result<Manifest, RenderError> {
    let hc = &spec.spec.hosted_cluster;
    let image = hc.release_image.as_deref().ok_or_else(|| {
        RenderError::field(
            "spec.hostedCluster.releaseImage",
            "the HostedCluster and its NodePool need the OpenShift release image; set releaseImage",
        )
    })?;
    let mut kubevirt = serde_json::Map::new();
    kubevirt.insert(
        "compute".into(),
        json!({"cores": hc.cores, "memory": quantity(hc.memory)}),
    );
    kubevirt.insert(
        "rootVolume".into(),
        json!({
            "type": "Persistent",
            "persistent": {
                "size": quantity(hc.root_volume_size),
                "storageClass": hc.root_storage_class,
                "accessModes": ["ReadWriteMany"],
                "volumeMode": "Block",
            },
        }),
    );
    kubevirt.insert("attachDefaultNetwork".into(), json!(true));
    if spec.workers_on_storage_network()
        && let Some(net) = &spec.spec.network
    {
        kubevirt.insert(
            "additionalNetworks".into(),
            json!([{"name": format!("{}/{}", spec.hcp_namespace(), net.nad_name)}]),
        );
    }
    let mut pool_spec = serde_json::Map::new();
    pool_spec.insert("clusterName".into(), json!(hc.name));
    pool_spec.insert("replicas".into(), json!(hc.replicas));
    pool_spec.insert("release".into(), json!({"image": image}));
    pool_spec.insert(
        "management".into(),
        json!({
            "upgradeType": "InPlace",
            "inPlace": {"maxUnavailable": 1},
            "autoRepair": false,
        }),
    );
    if !configs.is_empty() {
        let refs: Vec<Value> = configs.iter().map(|c| json!({"name": c})).collect();
        pool_spec.insert("config".into(), Value::Array(refs));
    }
    pool_spec.insert(
        "platform".into(),
        json!({"type": "KubeVirt", "kubevirt": Value::Object(kubevirt)}),
    );
    let body = json!({
        "apiVersion": "hypershift.openshift.io/v1beta1",
        "kind": "NodePool",
        "metadata": {
            "name": spec.node_pool(),
            "namespace": hc.namespace,
            "labels": labels(spec),
        },
        "spec": Value::Object(pool_spec),
    });
    let header: &[&str] = if spec.mode().runs_portworx() {
        &[
            "The tenant's worker VMs (KubeVirt NodePool); needs the HostedCluster.",
            "upgradeType InPlace (immutable) and autoRepair false are required by Portworx: replacing or",
            "auto-recreating a VM would destroy a Portworx node's state.",
        ]
    } else {
        &[
            "The tenant's worker VMs (KubeVirt NodePool); needs the HostedCluster.",
            "upgradeType InPlace (immutable) keeps the VMs across upgrades; autoRepair false leaves a broken",
            "VM for the admin to look at instead of recreating it (its disks are claims in the control plane",
            "namespace, kept either way).",
        ]
    };
    let pool = Manifest::resource(Cluster::Management, step::NODE_POOL, body, header);
    Ok(if spec.mode().portworx_creates_drives() {
        // No NodePool-wide `portworx.io/provision-storage-node`: Portworx documents the
        // label as a one-time request for a new driveset (portworx-enterprise/reference/
        // node-labels), so on every Node a replacement VM would create new drives
        // instead of taking over the orphaned driveset, FlashArray cloud drives'
        // documented failover. Label one new Node by hand when it must add storage.
        pool.note(format!(
            "No {PROVISION_STORAGE_NODE_LABEL} label here: label one added Node by hand \
             (oc label node <node> {PROVISION_STORAGE_NODE_LABEL}=true) only when it must bring new drives."
        ))
    } else {
        pool
    })
}

/// Labels for objects several tenants share (node network, root-disk class): no
/// tenant label, since whichever tenant applied it last would otherwise claim it.
pub(crate) fn shared_labels() -> Value {
    json!({"app.kubernetes.io/managed-by": "pxfa"})
}

/// Labels pxfa puts on every tenant-owned Kubernetes object it renders: the
/// tenant's identity (`crate::labels`), so that `oc get all -l` with
/// `crate::labels::tenant_selector` finds them and no other namespace's tenant of
/// the same name.
pub(crate) fn labels(spec: &TenantStorage) -> Value {
    json!(crate::labels::tenant_labels(&spec.tenant_id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cidrs(v: &[Ipv4Cidr]) -> Vec<String> {
        v.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn cover_is_the_fewest_aligned_prefixes() {
        let ip = |s: &str| u32::from(s.parse::<std::net::Ipv4Addr>().unwrap());
        assert_eq!(
            cidrs(&cover(ip("10.40.0.0"), ip("10.40.0.199"))),
            ["10.40.0.0/25", "10.40.0.128/26", "10.40.0.192/29"]
        );
        assert_eq!(
            cidrs(&cover(ip("10.40.0.7"), ip("10.40.0.7"))),
            ["10.40.0.7/32"]
        );
        assert_eq!(cidrs(&cover(0, u32::MAX)), ["0.0.0.0/0"]);
    }

    /// N10: on OpenShift 4.18+ every tenant's localnet NAD names one site-wide
    /// physical network and the shared NNCP maps only that; on an unknown or older
    /// release each tenant keeps its own mapping.
    #[test]
    fn one_site_wide_bridge_mapping_where_the_release_takes_physical_network_name() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/tenant-cloud-drive.yaml"
        ))
        .unwrap();
        let mapping = |t: &TenantStorage| -> (String, Option<String>) {
            let nncp = &node_network_policies(t).unwrap()[0];
            let body = &nncp.body;
            let m = body["spec"]["desiredState"]["ovn"]["bridge-mappings"][0]["localnet"]
                .as_str()
                .unwrap()
                .to_string();
            let nad = network_attachment(t).unwrap();
            let cfg: Value =
                serde_json::from_str(nad.body["spec"]["config"].as_str().unwrap()).unwrap();
            (m, cfg["physicalNetworkName"].as_str().map(str::to_string))
        };
        let mut a = crate::parse_valid_spec(&text).unwrap();
        assert!(a.spec.network.as_ref().unwrap().keeps_addresses());
        let bridge = a.spec.network.as_ref().unwrap().bridge.clone();
        let site = format!("pxfa-{bridge}");
        assert_eq!(mapping(&a), (site.clone(), Some(site.clone())));
        // Another tenant on the same bridge maps the same name.
        let mut b = a.clone();
        b.metadata.name = "other".into();
        assert_eq!(mapping(&b).0, site);

        a.spec.management.openshift_version = None;
        a.spec.management.virtualization_version = None;
        a.spec.hosted_cluster.virtualization_version = None;
        let net = a.spec.network.clone().unwrap();
        assert_eq!(mapping(&a), (localnet_name(&a, &net), None));
        a.spec.management.openshift_version = Some("4.17.3".parse().unwrap());
        assert_eq!(mapping(&a).1, None);
    }

    #[test]
    fn only_the_vm_range_is_left_to_hand_out() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/tenants/valid-full.yaml"
        ))
        .unwrap();
        let t = crate::parse_valid_spec(&text).unwrap();
        let net = t.spec.network.as_ref().unwrap();
        let out = outside_range(net);
        let inside = |ip: std::net::Ipv4Addr| out.iter().any(|c| c.contains(ip));
        assert!(!inside(net.vm_range.start) && !inside(net.vm_range.end));
        let before = std::net::Ipv4Addr::from(u32::from(net.vm_range.start) - 1);
        let after = std::net::Ipv4Addr::from(u32::from(net.vm_range.end) + 1);
        assert!(inside(net.subnet.network()) && inside(before) && inside(after));
        for n in &t.spec.management.nodes {
            assert!(inside(n.storage_address.unwrap().addr), "{}", n.name);
        }
        assert!(ovs_host_interface(net).len() <= 15);
    }
}
