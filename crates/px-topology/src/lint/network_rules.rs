//! Manifest rules about the storage network: node addresses and VLAN ports in
//! NodeNetworkConfigurationPolicies, the namespaces of worker NADs, MetalLB pools.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::finding::{Finding, Severity};
use super::manifest_doc::{namespace, object, of_kind, str_at};

pub(super) fn nncp_addresses(docs: &[Value], out: &mut Vec<Finding>) {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for p in of_kind(docs, "NodeNetworkConfigurationPolicy") {
        let ifaces = p
            .pointer("/spec/desiredState/interfaces")
            .and_then(Value::as_array);
        let mut own = BTreeSet::new();
        for i in ifaces.into_iter().flatten() {
            for fam in ["ipv4", "ipv6"] {
                let addrs = i
                    .pointer(&format!("/{fam}/address"))
                    .and_then(Value::as_array);
                for a in addrs.into_iter().flatten() {
                    if let Some(ip) = a.get("ip").and_then(Value::as_str) {
                        own.insert(ip.to_ascii_lowercase());
                    }
                }
            }
        }
        for ip in own {
            let obj = object(p);
            if let Some(prev) = seen.get(&ip) {
                out.push(Finding::new(
                    "PXFA015",
                    Severity::Error,
                    &obj,
                    format!(
                        "address {ip} is also set by {prev}; two nodes with one storage \
                         address break iSCSI/NVMe sessions. Give each node its own address"
                    ),
                ));
            } else {
                seen.insert(ip, obj);
            }
        }
    }
}

/// Namespaces whose NADs OpenShift's Multus lets any pod use.
const GLOBAL_NAD_NAMESPACES: [&str; 4] = [
    "default",
    "openshift-multus",
    "openshift-sriov-network-operator",
    "openshift-cnv",
];

pub(super) fn nad_namespaces(docs: &[Value], out: &mut Vec<Finding>) {
    for np in of_kind(docs, "NodePool") {
        let (Some(ns), Some(cluster)) = (namespace(np), str_at(np, "/spec/clusterName")) else {
            continue;
        };
        let hcp = format!("{ns}-{cluster}");
        let nets = np
            .pointer("/spec/platform/kubevirt/additionalNetworks")
            .and_then(Value::as_array);
        for net in nets.into_iter().flatten() {
            let Some((nad_ns, nad)) = net
                .get("name")
                .and_then(Value::as_str)
                .and_then(|n| n.split_once('/'))
            else {
                continue;
            };
            if nad_ns != hcp && !GLOBAL_NAD_NAMESPACES.contains(&nad_ns) {
                out.push(Finding::new(
                    "PXFA022",
                    Severity::Error,
                    object(np),
                    format!(
                        "additionalNetworks names {nad_ns}/{nad}, but the worker VMs run in \
                         {hcp} and Multus namespace isolation refuses a NAD from another \
                         namespace; the VMs would not start. Put the NAD in {hcp} and name it \
                         {hcp}/{nad}"
                    ),
                ));
            }
        }
    }
}

pub(super) fn nncp_vlan_ports(docs: &[Value], out: &mut Vec<Finding>) {
    for p in of_kind(docs, "NodeNetworkConfigurationPolicy") {
        let ifaces: Vec<&Value> = p
            .pointer("/spec/desiredState/interfaces")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect();
        let defined: BTreeSet<&str> = ifaces
            .iter()
            .filter_map(|i| i.get("name").and_then(Value::as_str))
            .collect();
        for i in &ifaces {
            let ports = i.pointer("/bridge/port").and_then(Value::as_array);
            for port in ports.into_iter().flatten() {
                let Some(pn) = port.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let vlan_like = pn
                    .rsplit_once('.')
                    .is_some_and(|(base, id)| !base.is_empty() && id.parse::<u16>().is_ok());
                if vlan_like && !defined.contains(pn) {
                    let (base, id) = pn.rsplit_once('.').unwrap_or((pn, ""));
                    out.push(Finding::new(
                        "PXFA023",
                        Severity::Warning,
                        object(p),
                        format!(
                            "bridge {} has port {pn}, a VLAN interface this policy does not \
                             define; unless the node already has it, the policy fails. Add \
                             {{name: {pn}, type: vlan, vlan: {{base-iface: {base}, id: {id}}}}} \
                             to desiredState.interfaces",
                            i.get("name").and_then(Value::as_str).unwrap_or("?")
                        ),
                    ));
                }
            }
        }
    }
}

pub(super) fn metallb_pools(docs: &[Value], out: &mut Vec<Finding>) {
    for pool in of_kind(docs, "IPAddressPool") {
        let auto = pool
            .pointer("/spec/autoAssign")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let alloc = pool.pointer("/spec/serviceAllocation");
        let restricted = alloc.is_some_and(|a| {
            ["namespaces", "namespaceSelectors", "serviceSelectors"]
                .iter()
                .any(|k| {
                    a.get(*k)
                        .and_then(Value::as_array)
                        .is_some_and(|v| !v.is_empty())
                })
        });
        if auto && !restricted {
            out.push(Finding::new(
                "PXFA025",
                Severity::Warning,
                object(pool),
                "autoAssign is on and serviceAllocation restricts nothing, so any LoadBalancer \
                 service on the management cluster can take this pool's addresses. Set \
                 serviceAllocation.namespaces to the tenant's control plane namespace",
            ));
        }
    }
}
