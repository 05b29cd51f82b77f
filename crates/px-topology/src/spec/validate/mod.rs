//! Semantic checks that types alone cannot express. Every check reports its field
//! path and keeps going, so the admin sees every problem in one run.

use std::collections::HashMap;
use std::net::Ipv4Addr;

use flasharray::Size;
use flasharray::models::normalize_wwn;

use super::identifiers::*;
use super::limits::{self, *};
use super::model::*;
use super::net::{Ipv4Cidr, Ipv4Range};
use super::{MAX_TENANT_NAME, SpecError, TenantStorage};

struct Errors(Vec<SpecError>);

impl Errors {
    fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(SpecError::new(path, message));
    }
}

/// Every semantic problem of `t`, each with its field path.
pub(super) fn validate(t: &TenantStorage) -> Vec<SpecError> {
    let mut e = Errors(Vec::new());
    if t.api_version != API_VERSION {
        e.push(
            "apiVersion",
            format!("must be {API_VERSION:?}, found {:?}", t.api_version),
        );
    }
    if t.kind != KIND {
        e.push("kind", format!("must be {KIND:?}, found {:?}", t.kind));
    }
    if let Some(p) = dns_label_problem(&t.metadata.name, MAX_TENANT_NAME) {
        e.push(
            "metadata.name",
            format!("{p}; the tenant name starts every derived array and cluster object name"),
        );
    }
    strings(t, &mut e);
    hosted_cluster(t, &mut e);
    storage(t, &mut e);
    array(t, &mut e);
    management(t, &mut e);
    load_balancer(t, &mut e);
    default_class(t, &mut e);
    if let Some(n) = &t.spec.network {
        network(t, n, &mut e);
    }
    portworx(t, &mut e);
    derived(t, &mut e);
    e.0.extend(super::provisioning::validate(t));
    e.0.extend(super::realm::validate(t));
    e.0
}

/// Pushes an error when `v` lies outside `min..=max`, naming the bound's source.
fn size_in(e: &mut Errors, path: &str, v: Size, min: Size, max: Size, why: &str) {
    if v < min {
        e.push(path, format!("{v} is below the minimum of {min} ({why})"));
    } else if v > max {
        e.push(path, format!("{v} is above the maximum of {max} ({why})"));
    }
}

/// A field's path, rule and value (`None`: absent, not checked).
type StringField = (String, Grammar, Option<String>);

fn field(path: &str, rule: Grammar, value: Option<&String>) -> StringField {
    (path.to_string(), rule, value.cloned())
}

/// Every free string field of the spec with the rule it follows, as `(path, rule,
/// value)`; absent optional fields are left out, name-derived defaults are checked
/// as they will be used. `docs/spec.md` ("String grammar") lists the same table.
pub(super) fn string_fields(t: &TenantStorage) -> Vec<(String, Grammar, String)> {
    let mut out = single_fields(t);
    out.extend(repeated_fields(t));
    out.into_iter()
        .filter_map(|(path, rule, v)| v.map(|v| (path, rule, v)))
        .collect()
}

/// The fields that occur once.
fn single_fields(t: &TenantStorage) -> Vec<StringField> {
    use Grammar::*;
    let s = &t.spec;
    let (hc, st, a) = (&s.hosted_cluster, &s.storage, &s.array);
    let token_user = (a.token_user.is_some() || t.mode().needs_token()).then(|| t.token_user());
    let label = DnsLabel(63);
    vec![
        field("metadata.namespace", label, t.metadata.namespace.as_ref()),
        field("spec.hostedCluster.name", label, Some(&hc.name)),
        field("spec.hostedCluster.namespace", label, Some(&hc.namespace)),
        field("spec.hostedCluster.nodePool", label, Some(&t.node_pool())),
        field(
            "spec.hostedCluster.releaseImage",
            ImageReference,
            hc.release_image.as_ref(),
        ),
        field(
            "spec.hostedCluster.rootStorageClass",
            DnsSubdomain,
            Some(&hc.root_storage_class),
        ),
        field(
            "spec.hostedCluster.pullSecret",
            DnsSubdomain,
            Some(&t.pull_secret_name()),
        ),
        field(
            "spec.hostedCluster.sshKeySecret",
            DnsSubdomain,
            hc.ssh_key_secret.as_ref(),
        ),
        field(
            "spec.hostedCluster.etcdStorageClass",
            DnsSubdomain,
            hc.etcd_storage_class.as_ref(),
        ),
        field(
            "spec.storage.fadaStorageClass",
            DnsSubdomain,
            st.fada_storage_class.as_ref(),
        ),
        field(
            "spec.storage.appStorageClass",
            DnsSubdomain,
            Some(&t.app_storage_class()),
        ),
        field(
            "spec.storage.guestStorageClass",
            DnsSubdomain,
            Some(&st.guest_storage_class),
        ),
        field(
            "spec.storage.infraSnapshotClass",
            DnsSubdomain,
            Some(&st.infra_snapshot_class),
        ),
        field(
            "spec.storage.guestSnapshotClass",
            DnsSubdomain,
            Some(&st.guest_snapshot_class),
        ),
        field("spec.array.tokenUser", ArrayUser, token_user.as_ref()),
        field(
            "spec.portworx.namespace",
            label,
            Some(&s.portworx.namespace),
        ),
        field(
            "spec.portworx.clusterName",
            label,
            Some(&t.portworx_cluster_name()),
        ),
    ]
}

/// The fields of optional objects, lists and maps.
fn repeated_fields(t: &TenantStorage) -> Vec<StringField> {
    use Grammar::*;
    let s = &t.spec;
    let mut out = Vec::new();
    if let Some(c) = &s.credentials_secret {
        out.push(field(
            "spec.credentialsSecret.name",
            DnsSubdomain,
            Some(&c.name),
        ));
        out.push(field(
            "spec.credentialsSecret.pureJsonKey",
            SecretKey,
            Some(&c.pure_json_key),
        ));
        out.push(field(
            "spec.credentialsSecret.caKey",
            SecretKey,
            Some(&c.ca_key),
        ));
    }
    for (i, n) in s.management.nodes.iter().enumerate() {
        let path = format!("spec.management.nodes[{i}].name");
        out.push(field(&path, DnsSubdomain, Some(&n.name)));
    }
    if let Some(n) = &s.network {
        out.push(field("spec.network.bridge", InterfaceName, Some(&n.bridge)));
        out.push(field("spec.network.uplink", InterfaceName, Some(&n.uplink)));
        out.push(field(
            "spec.network.guestInterface",
            InterfaceName,
            Some(&n.guest_interface),
        ));
        out.push(field(
            "spec.network.nadName",
            DnsLabel(63),
            Some(&n.nad_name),
        ));
    }
    let m = &t.metadata;
    for (name, map, value_rule) in [
        ("labels", &m.labels, LabelValue),
        ("annotations", &m.annotations, AnnotationValue),
    ] {
        for (k, v) in map {
            let map_path = format!("metadata.{name}");
            // A key is named in the path only once it is known to be a plain key.
            let at = match QualifiedKey.problem(k) {
                None => format!("{map_path}.{k}"),
                Some(_) => map_path.clone(),
            };
            out.push(field(&map_path, QualifiedKey, Some(k)));
            out.push(field(&at, value_rule, Some(v)));
        }
    }
    out
}

/// Checks every field of [`string_fields`] against its rule.
fn strings(t: &TenantStorage, e: &mut Errors) {
    for (path, rule, value) in string_fields(t) {
        if let Some(p) = rule.problem(&value) {
            e.push(path, p);
        }
    }
}

fn hosted_cluster(t: &TenantStorage, e: &mut Errors) {
    let hc = &t.spec.hosted_cluster;
    let hcp = t.hcp_namespace();
    if dns_label_problem(&hc.name, 63).is_none()
        && dns_label_problem(&hc.namespace, 63).is_none()
        && hcp.len() > 63
    {
        e.push(
            "spec.hostedCluster.name",
            format!(
                "the hosted control plane namespace {hcp:?} (<namespace>-<name>) is longer than \
                 63 characters; shorten the namespace or the name"
            ),
        );
    }
    if let (Some(old), Some(new)) = (
        hc.virtualization_version,
        t.spec.management.virtualization_version,
    ) && old != new
    {
        e.push(
            "spec.hostedCluster.virtualizationVersion",
            format!(
                "{old} disagrees with spec.management.virtualizationVersion {new}; the version is \
                 the management cluster's: keep only spec.management.virtualizationVersion"
            ),
        );
    }
    let min_replicas = if t.mode().runs_portworx() {
        MIN_PORTWORX_REPLICAS
    } else {
        1
    };
    if hc.replicas < min_replicas {
        e.push(
            "spec.hostedCluster.replicas",
            format!(
                "{} worker(s) is too few: {} needs at least {min_replicas}{}",
                hc.replicas,
                t.mode(),
                if t.mode().runs_portworx() {
                    " (Portworx needs 3 storage nodes for quorum)"
                } else {
                    ""
                }
            ),
        );
    }
    if hc.replicas > MAX_REPLICAS {
        e.push(
            "spec.hostedCluster.replicas",
            format!(
                "{} worker VMs is more than the {MAX_REPLICAS} VMs OpenShift Virtualization \
                 supports in one cluster",
                hc.replicas
            ),
        );
    }
    if !(1..=MAX_CORES).contains(&hc.cores) {
        e.push(
            "spec.hostedCluster.cores",
            format!(
                "{} is out of range 1..={MAX_CORES} (OpenShift Virtualization's vCPUs per VM)",
                hc.cores
            ),
        );
    }
    size_in(
        e,
        "spec.hostedCluster.memory",
        hc.memory,
        MIN_MEMORY,
        MAX_MEMORY,
        "memory per VM OpenShift Virtualization supports",
    );
    size_in(
        e,
        "spec.hostedCluster.rootVolumeSize",
        hc.root_volume_size,
        MIN_ARRAY_VOLUME,
        MAX_VM_DISK,
        "a VM disk: 1 MiB to OpenShift Virtualization's 100 TB",
    );
}

fn storage(t: &TenantStorage, e: &mut Errors) {
    let s = &t.spec.storage;
    let mode = s.mode;
    // Pod names may carry a realm (`realm::pod`) on the array, but the spec names the
    // pod alone: the realm is `spec.array.realm`.
    if let Some(p) = s.pod.as_ref().filter(|p| p.realm().is_some()) {
        e.push(
            "spec.storage.pod",
            format!("{p} is not a plain pod name: '::' is not allowed here"),
        );
    }
    match (mode.runs_portworx(), s.protocol) {
        (true, None) => e.push(
            "spec.storage.protocol",
            format!("{mode} needs a protocol: one of {}", list(mode.protocols())),
        ),
        (true, Some(p)) if !mode.protocols().contains(&p) => e.push(
            "spec.storage.protocol",
            format!(
                "{mode} does not support {p}; use one of {}",
                list(mode.protocols())
            ),
        ),
        (false, Some(p)) => e.push(
            "spec.storage.protocol",
            format!(
                "{mode} has no SAN protocol of its own (the guest's disks come from the \
                 management cluster); remove protocol: {p}"
            ),
        ),
        _ => {}
    }
    if s.capacity.as_u64() == 0 {
        e.push("spec.storage.capacity", "must be more than 0");
    } else if s.capacity < MIN_ARRAY_VOLUME {
        e.push(
            "spec.storage.capacity",
            format!(
                "{} is below the smallest volume the array makes ({MIN_ARRAY_VOLUME}); \
                 write units, e.g. 4Ti",
                s.capacity
            ),
        );
    }
    if !limits::REPLICATION.contains(&s.replication) {
        e.push(
            "spec.storage.replication",
            format!(
                "{} is out of range: Portworx replication is 1, 2 or 3",
                s.replication
            ),
        );
    } else if mode.runs_portworx() && u32::from(s.replication) > t.spec.hosted_cluster.replicas {
        e.push(
            "spec.storage.replication",
            format!(
                "replication {} needs at least {} storage nodes, but hostedCluster.replicas is {}",
                s.replication, s.replication, t.spec.hosted_cluster.replicas
            ),
        );
    }
    if s.drives_per_node == 0 {
        e.push("spec.storage.drivesPerNode", "must be at least 1");
    } else if s.drives_per_node > MAX_DRIVES_PER_NODE {
        e.push(
            "spec.storage.drivesPerNode",
            format!(
                "{} is out of range 1..={MAX_DRIVES_PER_NODE} (Portworx pools per node)",
                s.drives_per_node
            ),
        );
    }
    if mode.runs_portworx() {
        if s.metadata_size < MIN_METADATA {
            e.push(
                "spec.storage.metadataSize",
                format!(
                    "{} is below the PX-StoreV2 minimum metadata device of 64 GiB",
                    s.metadata_size
                ),
            );
        } else {
            let (max, why) = max_device(mode);
            if s.metadata_size > max {
                e.push(
                    "spec.storage.metadataSize",
                    format!("{} is above the maximum of {max} ({why})", s.metadata_size),
                );
            }
        }
    }
    access_modes(s, e);
}

/// Every `storage.accessModes` entry is a Kubernetes access mode.
fn access_modes(s: &StorageSpec, e: &mut Errors) {
    const MODES: [&str; 4] = [
        "ReadWriteOnce",
        "ReadOnlyMany",
        "ReadWriteMany",
        "ReadWriteOncePod",
    ];
    for (i, m) in s.access_modes.iter().enumerate() {
        if !MODES.contains(&m.as_str()) {
            e.push(
                format!("spec.storage.accessModes[{i}]"),
                format!(
                    "{m:?} is not an access mode; use one of {}",
                    MODES.join(", ")
                ),
            );
        }
    }
}

/// The largest device a mode can give Portworx, and why: an array volume (4 PiB), or
/// for direct-access also a VM disk (100 TB).
fn max_device(mode: StorageMode) -> (Size, &'static str) {
    if mode.drives_are_vm_disks() {
        (
            MAX_VM_DISK,
            "a direct-access device is an array volume and a VM disk; OpenShift \
             Virtualization supports VM disks up to 100 TB",
        )
    } else {
        (MAX_ARRAY_VOLUME, "the largest volume the array makes")
    }
}

fn list<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn array(t: &TenantStorage, e: &mut Errors) {
    let a = &t.spec.array;
    if let Some(Err(why)) = a.token_lifetime.as_deref().map(super::parse_token_lifetime) {
        e.push("spec.array.tokenLifetime", why);
    }
    match &a.endpoint {
        // pure.json carries the endpoint with the tenant's token.
        None if t.mode().needs_token() => e.push(
            "spec.array.endpoint",
            "cloud-drive needs the array's management endpoint (pure.json MgmtEndPoint)",
        ),
        Some(ep) => {
            if ep.is_empty() {
                e.push("spec.array.endpoint", "must not be empty");
            } else if ep.contains("://") || ep.contains('/') {
                e.push(
                    "spec.array.endpoint",
                    format!("{ep:?} must be a host name or IP address without scheme or path"),
                );
            } else if ep.contains('@') {
                e.push(
                    "spec.array.endpoint",
                    "must not carry credentials; tokens go in --api-token-file or pure.json",
                );
            } else if let Some(p) = Grammar::Endpoint.problem(ep) {
                e.push("spec.array.endpoint", p);
            }
        }
        None => {}
    }
}

fn management(t: &TenantStorage, e: &mut Errors) {
    let m = &t.spec.management;
    if m.nodes.is_empty() && t.mode().uses_management_hosts() {
        e.push(
            "spec.management.nodes",
            "direct-access needs the management nodes: their hosts receive the tenant's volumes",
        );
    }
    let needs_initiators = t.protocol().filter(|_| t.mode().uses_management_hosts());
    if m.nodes.len() > MAX_MANAGEMENT_NODES {
        e.push(
            "spec.management.nodes",
            format!(
                "{} nodes is more than the {MAX_MANAGEMENT_NODES} hosts OpenShift Virtualization \
                 supports in one cluster",
                m.nodes.len()
            ),
        );
    }
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut hosts: HashMap<String, usize> = HashMap::new();
    let mut initiators: HashMap<String, String> = HashMap::new();
    let mut addrs: HashMap<Ipv4Addr, usize> = HashMap::new();
    for (i, n) in m.nodes.iter().enumerate() {
        let at = format!("spec.management.nodes[{i}]");
        if let Some(j) = names.insert(n.name.to_ascii_lowercase(), i) {
            e.push(
                format!("{at}.name"),
                format!(
                    "{:?} is already nodes[{j}] (node names are case-insensitive)",
                    n.name
                ),
            );
        }
        match n.array_host() {
            Ok(h) => {
                if let Some(j) = hosts.insert(h.key(), i) {
                    e.push(
                        format!("{at}.host"),
                        format!("array host {h} is already used by nodes[{j}]"),
                    );
                }
            }
            Err(err) => e.push(
                format!("{at}.name"),
                format!("{err}; set `host:` to the array host name for this node"),
            ),
        }
        node_initiators(e, &at, n, &mut initiators);
        if let Some(p) = needs_initiators
            && n.initiators(p).is_empty()
        {
            e.push(
                format!("{at}.{}", p.initiator_field()),
                format!(
                    "direct-access over {p} needs the {} of every management node",
                    p.initiator_field()
                ),
            );
        }
        if let Some(a) = n.storage_address {
            if let Some(j) = addrs.insert(a.addr, i) {
                e.push(
                    format!("{at}.storageAddress"),
                    format!("{} is already the address of nodes[{j}]", a.addr),
                );
            }
            if a.is_network_or_broadcast() {
                e.push(
                    format!("{at}.storageAddress"),
                    format!("{a} is the network or broadcast address of its subnet"),
                );
            }
        }
    }
    if let Some(lb) = &m.metallb {
        if lb.addresses.is_empty() {
            e.push(
                "spec.management.metallb.addresses",
                "must list at least one range or prefix",
            );
        }
        for (i, a) in lb.addresses.iter().enumerate() {
            if a.parse::<Ipv4Range>().is_err() && a.parse::<Ipv4Cidr>().is_err() {
                e.push(
                    format!("spec.management.metallb.addresses[{i}]"),
                    format!("{a:?} is neither an address range (a-b) nor a prefix (a/n)"),
                );
            }
        }
    }
}

/// The initiators of management node `n` (at `at`): each well-formed, and none
/// listed twice across nodes (`seen`: normalised initiator -> its path).
fn node_initiators(
    e: &mut Errors,
    at: &str,
    n: &ManagementNode,
    seen: &mut HashMap<String, String>,
) {
    for (field, list) in [("wwns", &n.wwns), ("iqns", &n.iqns), ("nqns", &n.nqns)] {
        for (k, raw) in list.iter().enumerate() {
            let path = format!("{at}.{field}[{k}]");
            let key = match field {
                "wwns" => match normalize_wwn(raw) {
                    Ok(w) if w.bytes().all(|b| b == b'0') => {
                        e.push(path, format!("{raw:?} is the null WWN, which no port has"));
                        continue;
                    }
                    Ok(w) => w,
                    Err(msg) => {
                        e.push(path, msg);
                        continue;
                    }
                },
                "iqns" => {
                    // Names are case-insensitive (RFC 3722): compare lowercased.
                    let lower = raw.to_ascii_lowercase();
                    if let Some(p) = iscsi_name_problem(&lower) {
                        e.push(path, p);
                        continue;
                    }
                    lower
                }
                _ => {
                    let lower = raw.to_ascii_lowercase();
                    if let Some(p) = nvme_name_problem(&lower) {
                        e.push(path, p);
                        continue;
                    }
                    lower
                }
            };
            if let Some(prev) = seen.insert(format!("{field}/{key}"), path.clone()) {
                e.push(
                    path,
                    format!(
                        "{raw:?} is already listed at {prev}; an initiator belongs to one host"
                    ),
                );
            }
        }
    }
}

/// `management.metallb` and `management.externalLoadBalancer` say opposite things
/// about who serves the API server's LoadBalancer service.
/// `storage.defaultStorageClass` is about the class pxfa renders in the tenant: a
/// kubevirt-csi tenant has none (HyperShift creates and owns the guest class).
fn default_class(t: &TenantStorage, e: &mut Errors) {
    if t.spec.storage.default_storage_class && !t.mode().runs_portworx() {
        e.push(
            "spec.storage.defaultStorageClass",
            "kubevirt-csi renders no tenant StorageClass (HyperShift creates and owns the guest class); \
             drop it",
        );
    }
}

fn load_balancer(t: &TenantStorage, e: &mut Errors) {
    let m = &t.spec.management;
    if m.external_load_balancer && m.metallb.is_some() {
        e.push(
            "spec.management.externalLoadBalancer",
            "true says another load balancer serves the API server, but spec.management.metallb \
             asks pxfa for a MetalLB pool: keep one",
        );
    }
}

fn network(t: &TenantStorage, n: &NetworkSpec, e: &mut Errors) {
    if let Some(v) = n.vlan
        && !limits::VLAN.contains(&v)
    {
        e.push("spec.network.vlan", format!("{v} is out of range 1..4094"));
    }
    if !limits::MTU.contains(&n.mtu) {
        e.push(
            "spec.network.mtu",
            format!("{} is out of range 576..9216", n.mtu),
        );
    }
    if let Some(u) = n.uplink_mtu {
        if !limits::MTU.contains(&u) {
            e.push(
                "spec.network.uplinkMtu",
                format!("{u} is out of range 576..9216"),
            );
        } else if u < n.mtu {
            e.push(
                "spec.network.uplinkMtu",
                format!(
                    "{u} is below spec.network.mtu {}: a VLAN or bridge cannot exceed its uplink's MTU, \
                     and nmstate would roll the whole policy back",
                    n.mtu
                ),
            );
        }
    }
    if n.keeps_addresses()
        && let Some(v) = t.virtualization_version()
        && v.at_least(&crate::site::facts::PERSISTENT_IPS_SINCE) == Some(false)
    {
        e.push(
            "spec.network.persistentIps",
            format!(
                "OpenShift Virtualization {v} keeps no VM address across live migration on an \
                 OVN-Kubernetes localnet network ({} or later); leave persistentIps off",
                crate::site::facts::PERSISTENT_IPS_SINCE
            ),
        );
    }
    let subnet = n.subnet;
    if subnet.addr != subnet.network() {
        e.push(
            "spec.network.subnet",
            format!(
                "{subnet} has host bits set; the network is {}/{}",
                subnet.network(),
                subnet.prefix
            ),
        );
    }
    if let Some(g) = n.gateway {
        if !subnet.contains(g) {
            e.push(
                "spec.network.gateway",
                format!("{g} is outside the subnet {subnet}"),
            );
        } else if n.vm_range.contains(g) {
            e.push(
                "spec.network.gateway",
                format!("{g} lies inside vmRange {}", n.vm_range),
            );
        }
    }
    let r = n.vm_range;
    if !subnet.contains(r.start) || !subnet.contains(r.end) {
        e.push(
            "spec.network.vmRange",
            format!("{r} is not inside the subnet {subnet}"),
        );
    }
    let workers = u64::from(t.spec.hosted_cluster.replicas);
    if r.len() < workers {
        e.push(
            "spec.network.vmRange",
            format!(
                "{r} holds {} addresses, fewer than the {workers} worker VMs",
                r.len()
            ),
        );
    }
    for (i, node) in t.spec.management.nodes.iter().enumerate() {
        let at = format!("spec.management.nodes[{i}].storageAddress");
        match node.storage_address {
            None => e.push(
                at,
                "every management node needs its address on the storage network when \
                 spec.network is set",
            ),
            Some(a) => {
                if !subnet.contains(a.addr) {
                    e.push(
                        at,
                        format!("{} is outside the storage subnet {subnet}", a.addr),
                    );
                } else if a.prefix != subnet.prefix {
                    e.push(
                        at,
                        format!(
                            "prefix /{} differs from the storage subnet's /{}",
                            a.prefix, subnet.prefix
                        ),
                    );
                } else if r.contains(a.addr) {
                    e.push(
                        at,
                        format!("{} lies inside vmRange {r}, which the VMs use", a.addr),
                    );
                } else if Some(a.addr) == n.gateway {
                    e.push(at, format!("{} is the gateway", a.addr));
                }
            }
        }
    }
}

fn portworx(t: &TenantStorage, e: &mut Errors) {
    let p = &t.spec.portworx;
    if let Some(m) = p.max_pool_size {
        size_in(
            e,
            "spec.portworx.maxPoolSize",
            m,
            MIN_DRIVE,
            MAX_ARRAY_VOLUME,
            "a pool's drive is one array volume, 8 GiB to 4 PiB",
        );
    }
}

/// What the spec implies: the drive layout, the pod quota and the LUNs or
/// attachments the tenant's volumes take, each within the array's, Portworx's and
/// KubeVirt's limits. Skipped when an input it needs is already reported invalid,
/// so that one mistake gives one error.
fn derived(t: &TenantStorage, e: &mut Errors) {
    let s = &t.spec.storage;
    let hc = &t.spec.hosted_cluster;
    let mode = s.mode;
    let ceiling = t.max_pool_size();
    if !mode.runs_portworx()
        || !limits::REPLICATION.contains(&s.replication)
        || !(MIN_PORTWORX_REPLICAS..=MAX_REPLICAS).contains(&hc.replicas)
        || !(1..=MAX_DRIVES_PER_NODE).contains(&s.drives_per_node)
        || s.capacity < MIN_ARRAY_VOLUME
        || !(MIN_DRIVE..=MAX_ARRAY_VOLUME).contains(&ceiling)
        || s.metadata_size < MIN_METADATA
        || s.metadata_size > max_device(mode).0
    {
        return;
    }
    let Some(l) = pool_layout(
        s.capacity,
        s.replication,
        hc.replicas,
        s.drives_per_node,
        ceiling,
    ) else {
        return;
    };
    let at = "spec.storage.capacity";
    if l.drives_per_node > u128::from(MAX_DRIVES_PER_NODE) {
        e.push(
            at,
            format!(
                "{} at replication {} on {} nodes needs {} drives per node of at most {ceiling} \
                 (the pool ceiling), more than the {MAX_DRIVES_PER_NODE} Portworx pools a node \
                 can hold; raise spec.portworx.maxPoolSize, add workers or lower the capacity",
                s.capacity, s.replication, hc.replicas, l.drives_per_node
            ),
        );
        return;
    }
    let (max, why) = max_device(mode);
    if l.drive_size > u128::from(max.as_u64()) {
        e.push(
            at,
            format!(
                "each drive would be {} GiB, above the maximum of {max} ({why}); lower \
                 spec.portworx.maxPoolSize or raise drivesPerNode",
                l.drive_size / u128::from(flasharray::size::GIB)
            ),
        );
        return;
    }
    // Metadata devices are provisioned in whole GiB, like the drives.
    let metadata = u128::from(s.metadata_size.gib_ceil()) * u128::from(flasharray::size::GIB);
    let nodes = u128::from(hc.replicas);
    let total = nodes * (l.drives_per_node * l.drive_size + metadata);
    let in_pod = mode.portworx_creates_drives() || s.pod.is_some() || t.realm().is_some();
    if in_pod {
        let quota = pod_quota(total);
        if quota.is_none_or(|q| q > u128::from(MAX_ARRAY_VOLUME.as_u64())) {
            e.push(
                at,
                format!(
                    "the tenant's pod would need a quota of {} ({} nodes x ({} drives + \
                     metadata) + {POD_QUOTA_HEADROOM_PERCENT}% headroom), above the array's \
                     pod quota limit of {MAX_ARRAY_VOLUME}; lower the capacity or metadataSize",
                    quota.map_or_else(|| "more than 2^128 bytes".to_string(), gib_text),
                    hc.replicas,
                    l.drives_per_node,
                ),
            );
        }
    }
    if mode.uses_management_hosts() {
        let volumes = nodes * (l.drives_per_node + 1);
        match s.attach {
            Attach::HostGroup if volumes > u128::from(MAX_LUNS) => e.push(
                "spec.storage.attach",
                format!(
                    "host-group attach connects all {volumes} tenant volumes ({} workers x ({} \
                     drives + metadata)) to one host group, which holds at most {MAX_LUNS} LUNs; \
                     use attach: fada, fewer drives or fewer workers",
                    hc.replicas, l.drives_per_node
                ),
            ),
            Attach::Fada => {
                let nodes_mgmt = t.spec.management.nodes.len() as u128;
                let max = nodes_mgmt * u128::from(MAX_FADA_ATTACHMENTS_PER_NODE);
                if nodes_mgmt > 0 && volumes > max {
                    e.push(
                        "spec.storage.attach",
                        format!(
                            "FADA attaches {volumes} tenant volumes to {nodes_mgmt} management \
                             node(s), which hold at most {MAX_FADA_ATTACHMENTS_PER_NODE} \
                             attachments each; add management nodes, fewer drives or fewer \
                             workers"
                        ),
                    );
                }
            }
            Attach::HostGroup => {}
        }
    }
}

/// A byte count as whole GiB, with the binary display for orientation.
fn gib_text(bytes: u128) -> String {
    let gib = bytes / u128::from(flasharray::size::GIB);
    match u64::try_from(bytes) {
        Ok(b) => format!("{gib} GiB ({})", Size::bytes(b)),
        Err(_) => format!("{gib} GiB"),
    }
}

#[cfg(test)]
mod tests;
