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

/// A bridge the linted set says exists: its name and node (None: every node the
/// policy selects, or unknown).
struct BridgeSeen<'a> {
    name: &'a str,
    node: Option<&'a str>,
    by: String,
}

/// The node an NNCP's `nodeSelector` pins (`kubernetes.io/hostname`), if any.
fn nncp_node(p: &Value) -> Option<&str> {
    str_at(p, "/spec/nodeSelector/kubernetes.io~1hostname")
}

/// Bridges of `bridge_type` in the set: NNCPs' desired interfaces and (for the state a
/// node reports, `oc get nns -o yaml`) NodeNetworkStates' current interfaces.
fn bridges<'a>(docs: &'a [Value], bridge_type: &str) -> Vec<BridgeSeen<'a>> {
    let mut out = Vec::new();
    let sources = [
        (
            "NodeNetworkConfigurationPolicy",
            "/spec/desiredState/interfaces",
        ),
        ("NodeNetworkState", "/status/currentState/interfaces"),
    ];
    for (k, ptr) in sources {
        for d in of_kind(docs, k) {
            let node = if k == "NodeNetworkState" {
                Some(super::manifest_doc::name(d))
            } else {
                nncp_node(d)
            };
            let ifaces = d.pointer(ptr).and_then(Value::as_array);
            for i in ifaces.into_iter().flatten() {
                if str_at(i, "/type") == Some(bridge_type)
                    && let Some(name) = str_at(i, "/name")
                {
                    out.push(BridgeSeen {
                        name,
                        node,
                        by: object(d),
                    });
                }
            }
        }
    }
    out
}

/// PXFA035: a policy makes a bridge OVS (pxfa's persistent-IP storage network) where
/// the set shows the same bridge as a linux bridge on that node: another tenant's
/// whereabouts policy, or the node's reported state. nmstate converting it drops
/// every iSCSI/NVMe session on it, every tenant's at once. `doctor` and `render
/// --site` refuse this from NodeNetworkState; this is the same refusal for an
/// unread site (a GitOps folder of every tenant's policies, or `oc get nns -o yaml`
/// linted alongside).
pub(super) fn bridge_conversions(docs: &[Value], out: &mut Vec<Finding>) {
    let linux = bridges(docs, "linux-bridge");
    for ovs in bridges(docs, "ovs-bridge") {
        let clash = linux.iter().find(|l| {
            l.name == ovs.name && (l.node.is_none() || ovs.node.is_none() || l.node == ovs.node)
        });
        let Some(l) = clash else { continue };
        out.push(Finding::new(
            "PXFA035",
            Severity::Error,
            &ovs.by,
            format!(
                "makes {} an OVS bridge{}, but {} has it as a linux bridge: nmstate converting a \
                 linux bridge drops every iSCSI/NVMe session on it, every tenant's on that storage \
                 network at once. Move the network one node at a time (drain, apply the node's OVS \
                 policy, wait for the enactment, uncordon; docs/lifecycle.md, \"Moving a storage \
                 network to persistent IPs\"), or keep network.persistentIps: false for every tenant \
                 on the bridge",
                ovs.name,
                ovs.node.map_or(String::new(), |n| format!(" on {n}")),
                l.by,
            ),
        ));
    }
}
