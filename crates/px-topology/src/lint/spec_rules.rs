//! Rules over a parsed `TenantStorage` spec.
//!
//! Structural problems (wrong types, unknown fields, impossible combinations) are the
//! parser's and validator's job; these rules flag specs that are well-formed but
//! known to break or hurt Portworx in a hosted cluster.

use flasharray::Size;

use super::finding::{Finding, Severity};
use super::nodiscard::nodiscard_reason;
use crate::spec::{DEFAULT_PORTWORX_VERSION, DiskBus, HotplugGate, TenantStorage, VolumeMode};

/// PX-StoreV2 minimum vCPU cores.
pub(crate) const PX_STOREV2_MIN_CORES: u32 = 8;
/// PX-StoreV2 minimum memory.
pub(crate) const PX_STOREV2_MIN_MEMORY: Size = Size::gib(8);
/// Root disk PX-StoreV2 needs when `/var` and `/opt` live on it.
pub(crate) const PX_STOREV2_MIN_ROOT: Size = Size::gib(128);

/// Every spec rule that fires on `spec`.
pub fn lint_spec(spec: &TenantStorage) -> Vec<Finding> {
    let mut out = Vec::new();
    portworx_version(spec, &mut out);
    provisioning(spec, &mut out);
    out.extend(px_storev2_nodes(spec));
    replication(spec, &mut out);
    nodiscard(spec, &mut out);
    rwx_with_kubevirt_csi(spec, &mut out);
    workers_on_array_network(spec, &mut out);
    release_image(spec, &mut out);
    load_balancer(spec, &mut out);
    hotplug_gate(spec, &mut out);
    whereabouts_reconciler(spec, &mut out);
    whereabouts_under_migration(spec, &mut out);
    array_wide_tenant_token(spec, &mut out);
    hotplug_limit(spec, &mut out);
    out
}

/// Hotplugged virtio disks per VM before KubeVirt runs out of PCIe ports
/// (kubevirt/kubevirt#14180: the fifth fails "No more available PCI slots"). [L]
pub(crate) const VIRTIO_HOTPLUG_LIMIT: u32 = 4;
/// OpenShift Virtualization's tested maximum of hot-pluggable disks per VM
/// ("Supported limits", 4.12 to 4.21). [L]
pub(crate) const SCSI_HOTPLUG_LIMIT: u32 = 255;

/// PXFA036: a direct-access worker takes more disks by hotplug (its data drives,
/// `drivesPerNode`, and its metadata drive) than the site's limit
/// (`management.hotplugDiskLimit`) or, unstated, the documented limit of the bus.
fn hotplug_limit(spec: &TenantStorage, out: &mut Vec<Finding>) {
    if !spec.mode().drives_are_vm_disks() {
        return;
    }
    // drivesPerNode, a lower bound: the sizing adds drives where the pool ceiling
    // needs them (`pxfa size` shows them). Not the sizing itself: it reads this
    // module's PX-StoreV2 minimums.
    let data = spec.spec.storage.drives_per_node;
    let disks = data + 1;
    let bus = spec.spec.storage.disk_bus;
    let (limit, why) = match (spec.spec.management.hotplug_disk_limit, bus) {
        (Some(l), _) => (l, "management.hotplugDiskLimit".to_string()),
        (None, DiskBus::Virtio) => (
            VIRTIO_HOTPLUG_LIMIT,
            "each hotplugged virtio disk takes a PCIe port and the fifth fails \"No more available PCI \
             slots\" (kubevirt/kubevirt#14180) [L]"
                .to_string(),
        ),
        (None, DiskBus::Scsi) => (
            SCSI_HOTPLUG_LIMIT,
            "OpenShift Virtualization's tested maximum of hot-pluggable disks per VM (\"Supported limits\") [L]"
                .to_string(),
        ),
    };
    if disks <= limit {
        return;
    }
    out.push(Finding::new(
        "PXFA036",
        Severity::Warning,
        "spec.storage.drivesPerNode",
        format!(
            "each worker VM takes {disks} disks by hotplug ({data} data and 1 metadata) on the {} bus, past \
             {limit}: {why}. Use fewer, larger drives (drivesPerNode, portworx.maxPoolSize){}; or, where \
             the site takes more, state it in management.hotplugDiskLimit",
            bus.as_str(),
            if bus == DiskBus::Virtio {
                ", or storage.diskBus: scsi (virtio-scsi takes no PCIe port per disk)"
            } else {
                ""
            },
        ),
    ));
}

/// PXFA032: a cloud-drive tenant without a realm gets an API token whose user has an
/// array-wide role, kept in the tenant cluster (`px-pure-secret`): whoever reads it
/// there can change every volume on the array, the management cluster's VM disks
/// and other tenants' data included. A realm (REST 2.36+) scopes the tenant's
/// token-only user to its own pod (docs/credentials.md, docs/realms.md).
fn array_wide_tenant_token(spec: &TenantStorage, out: &mut Vec<Finding>) {
    if !spec.mode().needs_token() || spec.realm().is_some() {
        return;
    }
    out.push(Finding::new(
        "PXFA032",
        Severity::Warning,
        crate::spec::realm::REALM_FIELD,
        "a cloud-drive tenant without a realm: its API token (px-pure-secret in the tenant \
         cluster) has array-wide rights, so whoever reads it there can change every volume on \
         the array, the management cluster's VM disks and other tenants' data included; set \
         spec.array.realm (REST 2.36+) to scope the tenant's user to its own pod \
         (docs/credentials.md)",
    ));
}

/// PXFA031: the worker VMs join the storage network, whose NAD hands out addresses
/// with whereabouts, and the spec does not state that whereabouts' IP reconciler runs
/// (opt-in on OpenShift, cluster-network-operator PR 2160): addresses of deleted
/// virt-launcher pods are then never returned. Live migration has its own caveat
/// (kubevirt/kubevirt#14320), which the NAD's header states either way.
fn whereabouts_reconciler(spec: &TenantStorage, out: &mut Vec<Finding>) {
    if !spec.workers_on_storage_network()
        || spec
            .spec
            .network
            .as_ref()
            .is_some_and(|n| n.whereabouts_reconciler || n.keeps_addresses())
    {
        return;
    }
    out.push(Finding::new(
        "PXFA031",
        Severity::Warning,
        "spec.network.whereaboutsReconciler",
        "the worker VMs get storage addresses from whereabouts, whose IP reconciler is opt-in on \
         OpenShift: list a whereabouts network in networks.operator.openshift.io/cluster \
         spec.additionalNetworks (the cluster network operator then runs \
         openshift-multus/whereabouts-reconciler) and set network.whereaboutsReconciler: true. Even \
         then a live-migrated VM keeps an address whereabouts has given back (kubevirt/kubevirt#14320): \
         see the NetworkAttachmentDefinition's header",
    ));
}

/// PXFA033: a cloud-drive tenant's worker VMs take their storage addresses from
/// whereabouts. Live migration is routine for them (every management drain and
/// upgrade; HyperShift's VMs use `evictionStrategy: External`), and each one gives
/// the target pod a new address while the guest keeps its lease: the old address
/// goes back to the pool for another VM on the VLAN, a duplicate IP on the storage
/// network (kubevirt/kubevirt#14320).
fn whereabouts_under_migration(spec: &TenantStorage, out: &mut Vec<Finding>) {
    if !spec.mode().guest_reaches_array() || !spec.workers_on_whereabouts() {
        return;
    }
    out.push(Finding::new(
        "PXFA033",
        Severity::Warning,
        "spec.network.persistentIps",
        "the cloud-drive worker VMs take storage addresses from whereabouts, and live migration \
         (routine: every management node drain and upgrade) gives the target pod a new address \
         while the guest keeps its old one, which whereabouts hands to another VM on the VLAN: a \
         duplicate IP on the iSCSI/NVMe network (kubevirt/kubevirt#14320). On OVN-Kubernetes with \
         OpenShift Virtualization 4.18+ and its IPAM controller set network.persistentIps: true \
         (pxfa doctor and render --site turn it on by default there); elsewhere use a bridge \
         network with addresses from an external DHCP server with one reservation per VM MAC \
         (docs/lifecycle.md, \"Live migration\")",
    ));
}

/// PXFA029: `management.hotplugGate` states a gate the stated OpenShift
/// Virtualization version makes unlikely. `DeclarativeHotplugVolumes` alone is the
/// newer default (OpenShift Virtualization 4.21 deprecates ephemeral hotplug, 5.0
/// removes it: openshift-docs PRs 103507, 115204; HCO PR 4381); below 4.21, or with
/// the version unknown, `HotplugVolumes` is likely on too and takes precedence, so
/// the template patch would wait for a restart. From 5.0, `HotplugVolumes` is gone.
fn hotplug_gate(spec: &TenantStorage, out: &mut Vec<Finding>) {
    if !spec.mode().drives_are_vm_disks() {
        return;
    }
    let v = spec.virtualization_version();
    let at_least = |major: u32, minor: u32| -> Option<bool> {
        v.map(|v| (v.major, v.minor) >= (major, minor))
    };
    let check = "check the KubeVirt CR's featureGates (oc get kubevirt -n openshift-cnv -o \
                 jsonpath='{.items[0].spec.configuration.developerConfiguration.featureGates}')";
    let msg = match spec.spec.management.hotplug_gate {
        HotplugGate::DeclarativeHotplugVolumes if at_least(4, 21) != Some(true) => format!(
            "declarative-hotplug-volumes with OpenShift Virtualization {}: HotplugVolumes is likely \
             on as well and takes precedence, so the disk patches would wait for a VM restart; {check}",
            v.map_or("unknown".to_string(), |v| v.to_string())
        ),
        HotplugGate::HotplugVolumes if at_least(5, 0) == Some(true) => format!(
            "hotplug-volumes with OpenShift Virtualization {}: 5.0 removes that gate (ephemeral \
             hotplug); state declarative-hotplug-volumes; {check}",
            v.map_or("unknown".to_string(), |v| v.to_string())
        ),
        _ => return,
    };
    out.push(Finding::new(
        "PXFA029",
        Severity::Warning,
        "spec.management.hotplugGate",
        msg,
    ));
}

/// PXFA028: pxfa publishes the hosted API server as a LoadBalancer service (as
/// HyperShift's KubeVirt guide does); on bare metal it stays pending unless MetalLB
/// or another load balancer serves the control plane namespace.
fn load_balancer(spec: &TenantStorage, out: &mut Vec<Finding>) {
    let m = &spec.spec.management;
    if m.metallb.is_none() && !m.external_load_balancer {
        out.push(Finding::new(
            "PXFA028",
            Severity::Error,
            "spec.management.metallb",
            format!(
                "the hosted API server is a LoadBalancer service in {} and nothing serves it: set \
                 management.metallb.addresses (pxfa renders the MetalLB pool), or \
                 management.externalLoadBalancer: true if another load balancer does",
                spec.hcp_namespace()
            ),
        ));
    }
}

/// PXFA027: without `releaseImage` pxfa cannot render the HostedCluster and its
/// NodePool, so `render`, `apply --out` and the controller refuse the spec.
fn release_image(spec: &TenantStorage, out: &mut Vec<Finding>) {
    if spec.spec.hosted_cluster.release_image.is_none() {
        out.push(Finding::new(
            "PXFA027",
            Severity::Error,
            "spec.hostedCluster.releaseImage",
            "no OpenShift release image: `pxfa render`, `apply --out` and the controller cannot \
             write the HostedCluster and its NodePool without it; set it, e.g. \
             quay.io/openshift-release-dev/ocp-release:4.19.10-multi",
        ));
    }
}

fn portworx_version(spec: &TenantStorage, out: &mut Vec<Finding>) {
    if !spec.mode().runs_portworx() {
        return;
    }
    let v = spec.spec.portworx.version;
    if v.at_least(&DEFAULT_PORTWORX_VERSION) != Some(true) {
        out.push(Finding::new(
            "PXFA001",
            Severity::Error,
            "spec.portworx.version",
            format!(
                "Portworx {v} is not supported for hosted control plane clusters; set 3.6.2 or \
                 later (the management cluster needs 3.6.2+ too)"
            ),
        ));
    }
}

/// PXFA020: import where the provisioning table says the release does not document
/// it (error), or documents it with an unconfirmed annotation (warning).
fn provisioning(spec: &TenantStorage, out: &mut Vec<Finding>) {
    if !spec.mode().drives_are_vm_disks() {
        return;
    }
    match spec.provisioning() {
        Err(r) => out.push(Finding::new(
            "PXFA020",
            Severity::Error,
            "spec.storage.provisioning",
            format!("{} (docs: {})", r.message, r.source),
        )),
        Ok(r) => {
            if let Some(w) = r.warning {
                out.push(Finding::new(
                    "PXFA020",
                    Severity::Warning,
                    "spec.storage.provisioning",
                    w,
                ));
            }
        }
    }
}

/// PX-StoreV2 node checks (cores, memory, root disk); shared with sizing.
pub(crate) fn px_storev2_nodes(spec: &TenantStorage) -> Vec<Finding> {
    let mut out = Vec::new();
    if !spec.mode().runs_portworx() {
        return out;
    }
    let hc = &spec.spec.hosted_cluster;
    if hc.cores < PX_STOREV2_MIN_CORES {
        out.push(Finding::new(
            "PXFA005",
            Severity::Error,
            "spec.hostedCluster.cores",
            format!(
                "{} cores per worker VM is below the PX-StoreV2 minimum of 8 (16 recommended); \
                 raise cores to at least 8",
                hc.cores
            ),
        ));
    }
    if hc.memory < PX_STOREV2_MIN_MEMORY {
        out.push(Finding::new(
            "PXFA006",
            Severity::Error,
            "spec.hostedCluster.memory",
            format!(
                "{} per worker VM is below the PX-StoreV2 minimum of 8 GiB (16 GiB recommended, \
                 and OpenShift itself needs more); raise memory",
                hc.memory
            ),
        ));
    }
    if hc.root_volume_size < PX_STOREV2_MIN_ROOT {
        out.push(Finding::new(
            "PXFA007",
            Severity::Warning,
            "spec.hostedCluster.rootVolumeSize",
            format!(
                "{} root disk is below the 128 GiB PX-StoreV2 needs when /var and /opt share \
                 the root disk; raise rootVolumeSize to 128Gi",
                hc.root_volume_size
            ),
        ));
    }
    out
}

fn replication(spec: &TenantStorage, out: &mut Vec<Finding>) {
    if !spec.mode().runs_portworx() {
        return;
    }
    let repl = u32::from(spec.spec.storage.replication);
    let nodes = spec.storage_nodes();
    if repl > nodes {
        out.push(Finding::new(
            "PXFA008",
            Severity::Error,
            "spec.storage.replication",
            format!(
                "replication {repl} needs {repl} storage nodes but the tenant has {nodes}; \
                 volumes could not be provisioned. Lower replication or add workers"
            ),
        ));
    }
}

fn nodiscard(spec: &TenantStorage, out: &mut Vec<Finding>) {
    let virt = spec.virtualization_version();
    let ocp = spec.management_ocp_version();
    let Some(reason) = nodiscard_reason(virt, ocp) else {
        return;
    };
    let class = &spec.spec.hosted_cluster.root_storage_class;
    let unknown = virt.is_none() || ocp.is_none();
    let (severity, object, advice) = if unknown {
        (
            Severity::Warning,
            if virt.is_none() {
                "spec.management.virtualizationVersion"
            } else {
                "spec.management.openshiftVersion"
            },
            "state the management cluster's versions so that discard (space reclamation) is only \
             disabled when needed",
        )
    } else {
        (
            Severity::Info,
            "spec.hostedCluster.rootStorageClass",
            "upgrade to drop it",
        )
    };
    out.push(Finding::new(
        "PXFA009",
        severity,
        object,
        format!(
            "pxfa renders StorageClass {class} with nodiscard: \"true\" because {reason}; {advice}"
        ),
    ));
}

fn rwx_with_kubevirt_csi(spec: &TenantStorage, out: &mut Vec<Finding>) {
    if !spec.mode().guest_claims_are_management_claims() || !spec.wants_rwx() {
        return;
    }
    out.push(match spec.spec.storage.volume_mode {
        VolumeMode::Filesystem => Finding::new(
            "PXFA017",
            Severity::Error,
            "spec.storage.accessModes",
            "ReadWriteMany Filesystem is impossible through kubevirt-csi (each guest PVC is a disk \
             hot-plugged into VMs, and no file system is shared between them); use cloud-drive or \
             direct-access for RWX file systems, or ask for ReadWriteOnce",
        ),
        VolumeMode::Block => Finding::new(
            "PXFA017",
            Severity::Warning,
            "spec.storage.accessModes",
            "ReadWriteMany Block works through kubevirt-csi from an RWX Block infra class \
             (HyperShift), but Portworx supports only ReadWriteOnce for hosted clusters on this \
             option; use cloud-drive or direct-access for supported RWX",
        ),
    });
}

fn workers_on_array_network(spec: &TenantStorage, out: &mut Vec<Finding>) {
    if spec.mode().guest_reaches_array() || !spec.workers_on_storage_network() {
        return;
    }
    out.push(Finding::new(
        "PXFA021",
        Severity::Warning,
        "spec.network.attachWorkers",
        format!(
            "a {} tenant never talks to the array, yet its worker VMs get a NIC on the array's \
             storage network: that gives a tenant's workloads a path to the array's data ports. \
             Remove attachWorkers unless the tenant needs the network for something else",
            spec.mode()
        ),
    ));
}

/// The bridge a spec's policies make on the management nodes, and whether OVS.
fn management_bridge(t: &TenantStorage) -> Option<(&str, bool)> {
    t.spec
        .network
        .as_ref()
        .filter(|_| crate::render::management::management_bridge_needed(t))
        .map(|n| (n.bridge.as_str(), n.keeps_addresses()))
}

/// PXFA035 across the specs of one `pxfa lint` call: a tenant whose storage network
/// keeps addresses (`network.persistentIps`, an OVS bridge on the management nodes)
/// shares a bridge name and management nodes with a tenant whose policies make that
/// bridge a linux bridge. Whichever is applied second converts the bridge under the
/// other's live iSCSI/NVMe sessions. `doctor` and `render --site` refuse this from the
/// nodes' state; this is the refusal for specs linted without the site. Each spec
/// comes with the file it was read from.
pub(crate) fn lint_spec_set(specs: &[(TenantStorage, String)]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (ovs, source) in specs {
        let Some((name, true)) = management_bridge(ovs) else {
            continue;
        };
        let nodes: std::collections::BTreeSet<&str> = ovs
            .spec
            .management
            .nodes
            .iter()
            .map(|n| n.name.as_str())
            .collect();
        let linux = specs.iter().find(|(t, _)| {
            management_bridge(t) == Some((name, false))
                && t.spec
                    .management
                    .nodes
                    .iter()
                    .any(|n| nodes.contains(n.name.as_str()))
        });
        let Some((other, other_source)) = linux else {
            continue;
        };
        let mut f = Finding::new(
            "PXFA035",
            Severity::Error,
            "spec.network.persistentIps",
            format!(
                "tenant {} makes {name} an OVS bridge on the management nodes, but tenant {} ({}) \
                 keeps {name} a linux bridge on the same nodes: applying one tenant's policies over \
                 the other's converts the bridge and drops every iSCSI/NVMe session on it. Set \
                 network.persistentIps alike for every tenant on the bridge; to move them all, go \
                 one node at a time (docs/lifecycle.md, \"Moving a storage network to persistent IPs\")",
                ovs.tenant_name(),
                other.tenant_name(),
                other_source,
            ),
        );
        f.source = Some(source.clone());
        out.push(f);
    }
    out
}
