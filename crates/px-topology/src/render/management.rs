//! Management-cluster objects every storage option shares: the storage network
//! (NNCP, NAD), MetalLB, the operator instances, the MultiClusterEngine and ingress
//! patches, the VM root-disk StorageClass and the NodePool.

use serde_json::{Value, json};

use super::manifest::{Cluster, Form, Manifest};
use super::{RenderError, quantity, step};
use crate::spec::{NetworkSpec, TenantStorage};

/// Portworx CSI provisioner name.
pub const PX_PROVISIONER: &str = "pxd.portworx.com";

/// The StorageClass the Portworx operator creates and owns when OpenShift
/// Virtualization is present (PX >= 3.4, operator >= 25.5). pxfa never emits an
/// object with this name: the operator would fight over it.
pub const OPERATOR_KUBEVIRT_CLASS: &str = "px-rwx-block-kubevirt";

/// One NodeNetworkConfigurationPolicy per management node: the VLAN sub-interface on
/// the uplink, and a linux bridge carrying the node's static storage address (the
/// address differs per node, hence one policy each).
pub fn node_network_policies(spec: &TenantStorage) -> Result<Vec<Manifest>, RenderError> {
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
        let body = json!({
            "apiVersion": "nmstate.io/v1",
            "kind": "NodeNetworkConfigurationPolicy",
            "metadata": {
                "name": crate::naming::nncp(&net.bridge, &node.name),
                "labels": shared_labels(),
            },
            "spec": {
                "nodeSelector": {"kubernetes.io/hostname": node.name},
                "desiredState": {"interfaces": interfaces},
            },
        });
        out.push(Manifest::resource(
            Cluster::Management,
            step::NNCP,
            body,
            &[
                "Storage network on one management node: linux bridge on the VLAN uplink, with the node's static address.",
                "Shared by every tenant on this management cluster; re-applying it is harmless.",
            ],
        ).note(format!(
            "Declares uplink {} ({}) at MTU {uplink_mtu} (spec.network.uplinkMtu, a statement about the site: \
             its switch port must carry it); nmstate rolls the whole policy back if the uplink cannot take it.",
            net.uplink,
            net.uplink_type.as_str()
        )));
    }
    Ok(out)
}

/// Whether the management nodes need the storage bridge (NNCPs, and the NMState
/// instance that acts on them): whenever `spec.network` is set, except for a
/// direct-access tenant over Fibre Channel whose workers stay off the network. There
/// the management Portworx reaches the array over FC and no VM uses the bridge, so a
/// bridge on every management node would only be one more thing to break.
pub fn management_bridge_needed(spec: &TenantStorage) -> bool {
    let fc_only = spec.mode() == crate::spec::StorageMode::DirectAccess
        && spec.protocol() == Some(crate::spec::Protocol::Fc)
        && !spec.workers_on_storage_network();
    spec.spec.network.is_some() && !fc_only
}

/// The NetworkAttachmentDefinition the worker VMs use for the storage network:
/// bridge CNI on the node bridge, whereabouts handing out `vmRange`.
/// `None` when the worker VMs stay off the storage network
/// ([`TenantStorage::workers_on_storage_network`]).
pub fn network_attachment(spec: &TenantStorage) -> Option<Manifest> {
    if !spec.workers_on_storage_network() {
        return None;
    }
    let net = spec.spec.network.as_ref()?;
    let config = nad_config(net);
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
         against `oc get ippools.whereabouts.cni.cncf.io -n openshift-multus -o yaml`.",
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

/// The CNI configuration string of the NAD, pretty-printed so it reads well as a
/// YAML block scalar.
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
pub fn metallb(spec: &TenantStorage) -> Vec<Manifest> {
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
pub const MCE_COMPONENTS: [&str; 2] = ["hypershift", "hypershift-local-hosting"];

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

/// The jq program of [`mce_guarded_command`]: appends `{name, enabled: true}` for each
/// of [`MCE_COMPONENTS`] the list does not name, creating `spec.overrides.components`
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
pub fn mce_guarded_command() -> String {
    let get = super::shell::join(&["oc", "get", "mce", "multiclusterengine", "-o", "json"]);
    let jq = super::shell::join(&["jq".to_string(), mce_guard_program()]);
    let replace = super::shell::join(&["oc", "replace", "-f", "-"]);
    format!("{get} | {jq} | {replace}")
}

/// The MultiClusterEngine patch enabling HyperShift (component `hypershift`; the
/// older `hypershift-preview` was folded into it in MCE 2.3). A patch, not an object:
/// applying a MultiClusterEngine would replace `spec.overrides.components`, an atomic
/// list, and with it every other component setting.
pub fn multicluster_engine() -> Manifest {
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
pub fn ingress_wildcard_patch() -> Manifest {
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

/// The NMState operator instance (`NMState/nmstate`): without it the operator does
/// not run its handler and NodeNetworkConfigurationPolicies stay pending. Rendered
/// when the spec has a storage network.
pub fn nmstate_instance(spec: &TenantStorage) -> Option<Manifest> {
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
pub fn metallb_instance(spec: &TenantStorage) -> Option<Manifest> {
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
pub fn root_disk_storage_class(spec: &TenantStorage) -> Option<Manifest> {
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

pub use crate::lint::{OCP_VERSION_ANNOTATION, VIRT_VERSION_ANNOTATION};

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
pub fn nodiscard_reason(spec: &TenantStorage) -> Option<String> {
    crate::lint::nodiscard_reason(spec.virtualization_version(), spec.management_ocp_version())
}

/// The node label that asks Portworx for one new driveset on a node that joins after
/// install (Portworx concepts/storage-nodes, reference/node-labels). pxfa never sets
/// it NodePool-wide; the NodePool header says when to set it by hand.
pub const PROVISION_STORAGE_NODE_LABEL: &str = "portworx.io/provision-storage-node";

/// The tenant's KubeVirt NodePool: InPlace upgrades (Portworx keeps state on the
/// VMs, which Replace would recreate), no auto-repair, RWX Block root disks.
/// `configs` names ConfigMaps (in the NodePool namespace) carrying MachineConfigs.
pub fn node_pool(spec: &TenantStorage, configs: &[String]) -> Result<Manifest, RenderError> {
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
    Ok(if spec.mode() == crate::spec::StorageMode::CloudDrive {
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
pub fn shared_labels() -> Value {
    json!({"app.kubernetes.io/managed-by": "pxfa"})
}

/// Labels pxfa puts on every tenant-owned Kubernetes object it renders, so that
/// `oc get all -l pxfa.io/tenant=<name>` finds them.
pub fn labels(spec: &TenantStorage) -> Value {
    json!({
        "app.kubernetes.io/managed-by": "pxfa",
        "pxfa.io/tenant": spec.tenant_name(),
    })
}
