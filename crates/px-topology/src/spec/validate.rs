//! Semantic checks that types alone cannot express. Every check reports its field
//! path and keeps going, so the admin sees every problem in one run.

use std::collections::HashMap;
use std::net::Ipv4Addr;

use flasharray::models::normalize_wwn;
use flasharray::size::GIB;

use super::model::*;
use super::net::{Ipv4Cidr, Ipv4Range};
use super::{MAX_TENANT_NAME, SpecError, TenantStorage};

/// Smallest PX-StoreV2 metadata device.
const MIN_METADATA: u64 = 64 * GIB;

struct Errors(Vec<SpecError>);

impl Errors {
    fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(SpecError::new(path, message));
    }
}

/// Why `s` is not a DNS-1123 label (lowercase letters, digits, `-`, alphanumeric at
/// both ends, at most `max` characters), or `None` when it is one.
pub(crate) fn dns_label_problem(s: &str, max: usize) -> Option<String> {
    if s.is_empty() {
        return Some("must not be empty".into());
    }
    if s.len() > max {
        return Some(format!(
            "{s:?} is {} characters long; the limit is {max}",
            s.len()
        ));
    }
    if !s
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Some(format!(
            "{s:?} is not a DNS-1123 label (only lowercase letters, digits and '-')"
        ));
    }
    if s.starts_with('-') || s.ends_with('-') {
        return Some(format!("{s:?} must start and end with a letter or digit"));
    }
    None
}

/// Why `s` is not a DNS-1123 subdomain (labels joined by `.`, at most 253), or `None`.
pub(crate) fn dns_subdomain_problem(s: &str) -> Option<String> {
    if s.len() > 253 {
        return Some(format!("{s:?} is longer than 253 characters"));
    }
    s.split('.')
        .find_map(|l| dns_label_problem(l, 63))
        .map(|p| format!("{s:?} is not a DNS-1123 subdomain: {p}"))
}

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
    hosted_cluster(t, &mut e);
    storage(t, &mut e);
    array(t, &mut e);
    management(t, &mut e);
    if let Some(n) = &t.spec.network {
        network(t, n, &mut e);
    }
    portworx(t, &mut e);
    e.0.extend(super::provisioning::validate(t));
    e.0
}

fn hosted_cluster(t: &TenantStorage, e: &mut Errors) {
    let hc = &t.spec.hosted_cluster;
    if let Some(p) = dns_label_problem(&hc.name, 63) {
        e.push("spec.hostedCluster.name", p);
    }
    if let Some(p) = dns_label_problem(&hc.namespace, 63) {
        e.push("spec.hostedCluster.namespace", p);
    }
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
    if let Some(p) = dns_label_problem(&t.node_pool(), 63) {
        e.push("spec.hostedCluster.nodePool", p);
    }
    let min_replicas = if t.mode().runs_portworx() { 3 } else { 1 };
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
    if hc.cores == 0 {
        e.push("spec.hostedCluster.cores", "must be at least 1");
    }
    if hc.memory.as_u64() == 0 {
        e.push("spec.hostedCluster.memory", "must be more than 0");
    }
    if hc.root_volume_size.as_u64() == 0 {
        e.push("spec.hostedCluster.rootVolumeSize", "must be more than 0");
    }
    if let Some(p) = dns_subdomain_problem(&hc.root_storage_class) {
        e.push("spec.hostedCluster.rootStorageClass", p);
    }
    if let Some(img) = &hc.release_image
        && img.trim().is_empty()
    {
        e.push(
            "spec.hostedCluster.releaseImage",
            "must not be empty when given",
        );
    }
}

fn storage(t: &TenantStorage, e: &mut Errors) {
    let s = &t.spec.storage;
    let mode = s.mode;
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
    }
    if !(1..=3).contains(&s.replication) {
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
    }
    if mode.runs_portworx() && s.metadata_size.as_u64() < MIN_METADATA {
        e.push(
            "spec.storage.metadataSize",
            format!(
                "{} is below the PX-StoreV2 minimum metadata device of 64 GiB",
                s.metadata_size
            ),
        );
    }
    if let Some(p) = dns_subdomain_problem(&t.app_storage_class()) {
        e.push("spec.storage.appStorageClass", p);
    }
    if let Some(p) = s
        .fada_storage_class
        .as_deref()
        .and_then(dns_subdomain_problem)
    {
        e.push("spec.storage.fadaStorageClass", p);
    }
    if let Some(p) = dns_subdomain_problem(&s.guest_storage_class) {
        e.push("spec.storage.guestStorageClass", p);
    }
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

fn list<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn array(t: &TenantStorage, e: &mut Errors) {
    let a = &t.spec.array;
    match &a.endpoint {
        None if t.mode() == StorageMode::CloudDrive => e.push(
            "spec.array.endpoint",
            "cloud-drive needs the array's management endpoint (pure.json MgmtEndPoint)",
        ),
        Some(ep) => {
            let ep = ep.trim();
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
            }
        }
        None => {}
    }
    if t.mode() == StorageMode::CloudDrive {
        let user = t.token_user();
        if let Some(p) = array_user_problem(&user) {
            e.push("spec.array.tokenUser", p);
        }
    }
}

/// Array user names: letters, digits, `-`, `_`, 1..=32 characters (conservative: the
/// array's exact rule is not documented in our references).
fn array_user_problem(u: &str) -> Option<String> {
    if u.is_empty() || u.len() > 32 {
        return Some(format!("{u:?} must be 1 to 32 characters long"));
    }
    if !u
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Some(format!("{u:?} may only hold letters, digits, '-' and '_'"));
    }
    if !u.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Some(format!("{u:?} must start with a letter"));
    }
    None
}

fn management(t: &TenantStorage, e: &mut Errors) {
    let m = &t.spec.management;
    if m.nodes.is_empty() && t.mode() == StorageMode::DirectAccess {
        e.push(
            "spec.management.nodes",
            "direct-access needs the management nodes: their hosts receive the tenant's volumes",
        );
    }
    let needs_initiators = match (t.mode(), t.protocol()) {
        (StorageMode::DirectAccess, Some(p)) => Some(p),
        _ => None,
    };
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut hosts: HashMap<String, usize> = HashMap::new();
    let mut initiators: HashMap<String, String> = HashMap::new();
    let mut addrs: HashMap<Ipv4Addr, usize> = HashMap::new();
    for (i, n) in m.nodes.iter().enumerate() {
        let at = format!("spec.management.nodes[{i}]");
        if let Some(p) = dns_subdomain_problem(&n.name) {
            e.push(format!("{at}.name"), p);
        }
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
        for (field, list) in [("wwns", &n.wwns), ("iqns", &n.iqns), ("nqns", &n.nqns)] {
            for (k, raw) in list.iter().enumerate() {
                let path = format!("{at}.{field}[{k}]");
                let key = match field {
                    "wwns" => match normalize_wwn(raw) {
                        Ok(w) => w,
                        Err(msg) => {
                            e.push(path, msg);
                            continue;
                        }
                    },
                    "iqns" => {
                        if !(raw.starts_with("iqn.") || raw.starts_with("eui.")) || raw.len() > 223
                        {
                            e.push(path, format!("{raw:?} is not an iSCSI name (iqn.… or eui.…, at most 223 characters)"));
                            continue;
                        }
                        raw.to_ascii_lowercase()
                    }
                    _ => {
                        if !raw.starts_with("nqn.") || raw.len() > 223 {
                            e.push(path, format!("{raw:?} is not an NVMe qualified name (nqn.…, at most 223 characters)"));
                            continue;
                        }
                        raw.to_ascii_lowercase()
                    }
                };
                if let Some(prev) = initiators.insert(format!("{field}/{key}"), path.clone()) {
                    e.push(
                        path,
                        format!(
                            "{raw:?} is already listed at {prev}; an initiator belongs to one host"
                        ),
                    );
                }
            }
        }
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

fn network(t: &TenantStorage, n: &NetworkSpec, e: &mut Errors) {
    if let Some(v) = n.vlan
        && !(1..=4094).contains(&v)
    {
        e.push("spec.network.vlan", format!("{v} is out of range 1..4094"));
    }
    if !(576..=9216).contains(&n.mtu) {
        e.push(
            "spec.network.mtu",
            format!("{} is out of range 576..9216", n.mtu),
        );
    }
    for (field, v) in [
        ("bridge", &n.bridge),
        ("uplink", &n.uplink),
        ("guestInterface", &n.guest_interface),
    ] {
        if v.is_empty() || v.len() > 15 || v.contains(['/', ' ']) {
            e.push(
                format!("spec.network.{field}"),
                format!(
                    "{v:?} is not a Linux interface name (1 to 15 characters, no '/' or spaces)"
                ),
            );
        }
    }
    if let Some(p) = dns_label_problem(&n.nad_name, 63) {
        e.push("spec.network.nadName", p);
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
    if let Some(pr) = dns_label_problem(&p.namespace, 63) {
        e.push("spec.portworx.namespace", pr);
    }
    if let Some(pr) = dns_label_problem(&t.portworx_cluster_name(), 63) {
        e.push("spec.portworx.clusterName", pr);
    }
    if let Some(m) = p.max_pool_size
        && m.as_u64() < 8 * GIB
    {
        e.push(
            "spec.portworx.maxPoolSize",
            format!("{m} is below the 8 GiB PX-StoreV2 drive minimum"),
        );
    }
}
