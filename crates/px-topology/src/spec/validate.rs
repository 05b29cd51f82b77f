//! Semantic checks that types alone cannot express. Every check reports its field
//! path and keeps going, so the admin sees every problem in one run.

use std::collections::HashMap;
use std::net::Ipv4Addr;

use flasharray::Size;
use flasharray::models::normalize_wwn;

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
    derived(t, &mut e);
    e.0.extend(super::provisioning::validate(t));
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
    for (path, name) in [
        ("spec.hostedCluster.pullSecret", Some(t.pull_secret_name())),
        ("spec.hostedCluster.sshKeySecret", hc.ssh_key_secret.clone()),
        (
            "spec.hostedCluster.etcdStorageClass",
            hc.etcd_storage_class.clone(),
        ),
    ] {
        if let Some(p) = name.and_then(|n| dns_subdomain_problem(&n)) {
            e.push(path, p);
        }
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
    // Pod names may carry a realm (`realm::pod`) on the array, but the spec names the
    // pod alone: a realm is not a `storage.pod` setting.
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

/// The largest device a mode can give Portworx, and why: an array volume (4 PiB), or
/// for direct-access also a VM disk (100 TB).
fn max_device(mode: StorageMode) -> (Size, &'static str) {
    if mode == StorageMode::DirectAccess {
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
            } else if let Some(p) = endpoint_problem(ep) {
                e.push("spec.array.endpoint", p);
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

/// Why `ep` is not `host`, `host:port` or `[ipv6]:port` (host a DNS name or IPv4
/// address, port 1..=65535), or `None`.
fn endpoint_problem(ep: &str) -> Option<String> {
    let (host, port) = if let Some(rest) = ep.strip_prefix('[') {
        let Some((v6, after)) = rest.split_once(']') else {
            return Some(format!("{ep:?} opens '[' without closing it"));
        };
        if v6.parse::<std::net::Ipv6Addr>().is_err() {
            return Some(format!("{v6:?} in {ep:?} is not an IPv6 address"));
        }
        match after {
            "" => (None, None),
            a => match a.strip_prefix(':') {
                Some(p) => (None, Some(p)),
                None => return Some(format!("{ep:?}: expected ':port' after ']'")),
            },
        }
    } else {
        match ep.split_once(':') {
            Some((h, p)) if !p.contains(':') => (Some(h), Some(p)),
            Some(_) => {
                return Some(format!(
                    "{ep:?}: write an IPv6 address in brackets ([2001:db8::10]), as pure.json does"
                ));
            }
            None => (Some(ep), None),
        }
    };
    if let Some(h) = host
        && h.parse::<Ipv4Addr>().is_err()
        && let Some(p) = dns_subdomain_problem(&h.to_ascii_lowercase())
    {
        return Some(format!("{h:?} is not a host name or IPv4 address: {p}"));
    }
    if let Some(p) = port {
        let ok = p.len() <= 5
            && p.chars().all(|c| c.is_ascii_digit())
            && p.parse::<u32>().is_ok_and(|n| limits::PORT.contains(&n));
        if !ok {
            return Some(format!("port {p:?} in {ep:?} is out of range 1..=65535"));
        }
    }
    None
}

/// Why `raw` is not an iSCSI qualified name (`iqn.YYYY-MM.naming-authority[:id]`,
/// RFC 3720 §3.2.6.3.1) or EUI name (`eui.` and 16 hex digits), or `None`.
fn iscsi_name_problem(raw: &str) -> Option<String> {
    let bad = |why: &str| Some(format!("{raw:?} is not an iSCSI name: {why}"));
    if raw.len() > 223 {
        return bad("longer than 223 bytes");
    }
    if let Some(hex) = raw.strip_prefix("eui.") {
        if hex.len() != 16 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return bad("eui. names carry exactly 16 hex digits");
        }
        return None;
    }
    let Some(rest) = raw.strip_prefix("iqn.") else {
        return bad("expected iqn.… or eui.…");
    };
    qualified_name_problem(rest, "iqn.2004-10.com.example").and_then(|why| bad(&why))
}

/// Why `raw` is not an NVMe qualified name (`nqn.YYYY-MM.reverse-domain:…`, at most
/// 223 bytes, NVMe base spec §4.5), or `None`.
fn nvme_name_problem(raw: &str) -> Option<String> {
    let bad = |why: &str| Some(format!("{raw:?} is not an NVMe qualified name: {why}"));
    if raw.len() > 223 {
        return bad("longer than 223 bytes");
    }
    let Some(rest) = raw.strip_prefix("nqn.") else {
        return bad("expected nqn.…");
    };
    qualified_name_problem(rest, "nqn.2014-08.org.nvmexpress").and_then(|why| bad(&why))
}

/// Checks the `YYYY-MM.authority[:anything]` part shared by IQNs and NQNs: a date,
/// a reversed domain of lowercase letters, digits, '-' and '.', then printable ASCII
/// without spaces.
fn qualified_name_problem(rest: &str, example: &str) -> Option<String> {
    let b = rest.as_bytes();
    let date_ok = b.len() > 8
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && matches!(
            &rest[5..7],
            "01" | "02" | "03" | "04" | "05" | "06" | "07" | "08" | "09" | "10" | "11" | "12"
        )
        && b[7] == b'.';
    if !date_ok {
        return Some(format!(
            "expected a date YYYY-MM and '.' after the prefix ({example}…)"
        ));
    }
    let after = &rest[8..];
    let (authority, tail) = after.split_once(':').unwrap_or((after, ""));
    if authority.is_empty()
        || !authority
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
    {
        return Some(
            "the naming authority (reversed domain) takes lowercase letters, digits, '-' and '.'"
                .into(),
        );
    }
    if !tail.chars().all(|c| c.is_ascii_graphic()) {
        return Some("only printable ASCII without spaces may follow the ':'".into());
    }
    None
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
    for (field, v) in [
        ("bridge", &n.bridge),
        ("uplink", &n.uplink),
        ("guestInterface", &n.guest_interface),
    ] {
        // The kernel's rule (dev_valid_name): 1 to 15 bytes, not "." or "..", no '/',
        // ':' or whitespace; nmstate and OVN want ASCII, so pxfa does too.
        if v.is_empty()
            || v.len() > 15
            || v == "."
            || v == ".."
            || !v
                .chars()
                .all(|c| c.is_ascii_graphic() && c != '/' && c != ':')
        {
            e.push(
                format!("spec.network.{field}"),
                format!(
                    "{v:?} is not a Linux interface name (1 to 15 ASCII characters, no '/', ':' \
                     or spaces)"
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
    let in_pod = mode == StorageMode::CloudDrive || s.pod.is_some();
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
    if mode == StorageMode::DirectAccess {
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
mod tests {
    use std::path::{Path, PathBuf};

    use flasharray::size::{GIB, MIB, PIB, TIB};

    use super::*;
    use crate::spec::{parse_spec, parse_valid_spec};

    fn repo(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(rel)
    }

    fn example(name: &str) -> TenantStorage {
        let text = std::fs::read_to_string(repo("examples").join(name)).unwrap();
        parse_valid_spec(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    /// The paths of every error for `t`.
    fn paths(t: &TenantStorage) -> Vec<String> {
        t.validate().into_iter().map(|e| e.path).collect()
    }

    fn refused_at(t: &TenantStorage, path: &str) {
        let errs = t.validate();
        assert!(
            errs.iter().any(|e| e.path == path),
            "expected an error at {path}, got {errs:?}"
        );
    }

    fn accepted(t: &TenantStorage) {
        let errs = t.validate();
        assert!(errs.is_empty(), "{errs:?}");
        crate::sizing::size(t, None).unwrap();
    }

    #[test]
    fn examples_and_valid_fixtures_pass_every_range() {
        for name in [
            "tenant-direct-access.yaml",
            "tenant-cloud-drive.yaml",
            "tenant-kubevirt-csi.yaml",
        ] {
            accepted(&example(name));
        }
        for name in ["valid-full.yaml", "valid-minimal.yaml"] {
            let text = std::fs::read_to_string(repo("fixtures/tenants").join(name)).unwrap();
            accepted(&parse_valid_spec(&text).unwrap_or_else(|e| panic!("{name}: {e}")));
        }
    }

    /// Every `fixtures/tenants/invalid-*.yaml` is refused, by parsing or validation,
    /// with the field its first line names. The e2e test checks the same through the
    /// binary; this one runs in milliseconds and points at the spec code.
    #[test]
    fn every_invalid_fixture_names_its_field() {
        let mut n = 0;
        for entry in std::fs::read_dir(repo("fixtures/tenants")).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if !(name.starts_with("invalid-") && name.ends_with(".yaml")) {
                continue;
            }
            n += 1;
            let bytes = std::fs::read(&path).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            let expect = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("# expect: "))
                .unwrap_or_else(|| panic!("{name}: no `# expect:` first line"))
                .trim()
                .to_string();
            let errors = match parse_valid_spec(&text) {
                Ok(t) => match crate::sizing::size(&t, None) {
                    Ok(_) => panic!("{name}: accepted"),
                    Err(e) => vec![e],
                },
                Err(e) => e.0,
            };
            assert!(
                errors.iter().any(|e| e.path == expect),
                "{name}: no error at {expect:?}: {errors:?}"
            );
        }
        assert!(n >= 150, "only {n} invalid fixtures");
    }

    #[test]
    fn the_issue_cases_are_refused_with_their_field() {
        let mut t = example("tenant-cloud-drive.yaml");
        t.spec.storage.metadata_size = Size::bytes(5 * PIB);
        refused_at(&t, "spec.storage.metadataSize");

        let mut t = example("tenant-direct-access.yaml");
        t.spec.storage.capacity = Size::bytes(15 * PIB);
        t.spec.storage.drives_per_node = 1;
        refused_at(&t, "spec.storage.capacity");

        let mut t = example("tenant-direct-access.yaml");
        t.spec.storage.drives_per_node = 100_000;
        refused_at(&t, "spec.storage.drivesPerNode");

        // 2^64 − 1 bytes used to wrap to a small size in the GiB round-up; now the
        // parser refuses it, naming the field.
        let text = std::fs::read_to_string(repo("examples/tenant-direct-access.yaml")).unwrap();
        for (field, line) in [
            ("metadataSize", "metadataSize: 64Gi"),
            ("capacity", "capacity: 4Ti"),
            ("memory", "memory: 32Gi"),
        ] {
            let bad = text.replace(line, &format!("{field}: 18446744073709551615"));
            assert_ne!(bad, text);
            let e = parse_spec(&bad).unwrap_err();
            assert!(e.path.ends_with(field), "{e}");
            assert!(e.message.contains("too large"), "{e}");
        }
    }

    #[test]
    fn node_ranges_accept_their_bounds_and_refuse_past_them() {
        let base = example("tenant-kubevirt-csi.yaml");
        let hc = |f: &dyn Fn(&mut HostedClusterSpec)| {
            let mut t = base.clone();
            f(&mut t.spec.hosted_cluster);
            t
        };
        accepted(&hc(&|h| h.replicas = MAX_REPLICAS));
        refused_at(
            &hc(&|h| h.replicas = MAX_REPLICAS + 1),
            "spec.hostedCluster.replicas",
        );
        accepted(&hc(&|h| h.cores = MAX_CORES));
        refused_at(
            &hc(&|h| h.cores = MAX_CORES + 1),
            "spec.hostedCluster.cores",
        );
        refused_at(&hc(&|h| h.cores = 0), "spec.hostedCluster.cores");
        accepted(&hc(&|h| h.memory = MIN_MEMORY));
        accepted(&hc(&|h| h.memory = MAX_MEMORY));
        refused_at(
            &hc(&|h| h.memory = Size::bytes(MIN_MEMORY.as_u64() - 1)),
            "spec.hostedCluster.memory",
        );
        refused_at(
            &hc(&|h| h.memory = Size::bytes(MAX_MEMORY.as_u64() + 1)),
            "spec.hostedCluster.memory",
        );
        accepted(&hc(&|h| h.root_volume_size = MAX_VM_DISK));
        refused_at(
            &hc(&|h| h.root_volume_size = Size::bytes(MAX_VM_DISK.as_u64() + 1)),
            "spec.hostedCluster.rootVolumeSize",
        );
        refused_at(
            &hc(&|h| h.root_volume_size = Size::bytes(512)),
            "spec.hostedCluster.rootVolumeSize",
        );
    }

    #[test]
    fn storage_ranges_accept_their_bounds_and_refuse_past_them() {
        let base = example("tenant-direct-access.yaml");
        let st = |f: &dyn Fn(&mut TenantStorage)| {
            let mut t = base.clone();
            f(&mut t);
            t
        };
        accepted(&st(&|t| {
            t.spec.storage.drives_per_node = MAX_DRIVES_PER_NODE
        }));
        refused_at(
            &st(&|t| t.spec.storage.drives_per_node = MAX_DRIVES_PER_NODE + 1),
            "spec.storage.drivesPerNode",
        );
        refused_at(
            &st(&|t| t.spec.storage.drives_per_node = 0),
            "spec.storage.drivesPerNode",
        );
        // direct-access devices are VM disks: 100 TB, not 4 PiB.
        accepted(&st(&|t| t.spec.storage.metadata_size = Size::gib(64)));
        refused_at(
            &st(&|t| t.spec.storage.metadata_size = Size::bytes(MAX_VM_DISK.as_u64() + 1)),
            "spec.storage.metadataSize",
        );
        refused_at(
            &st(&|t| t.spec.storage.capacity = Size::bytes(MIB - 1)),
            "spec.storage.capacity",
        );
        accepted(&st(&|t| t.spec.storage.capacity = Size::bytes(MIB)));
        // 32 drives of 15 TiB per node is the most a 3-node tenant holds at the default
        // ceiling (and its pod quota stays under 4 PiB).
        accepted(&st(&|t| t.spec.storage.capacity = Size::tib(32 * 15)));
        refused_at(
            &st(&|t| t.spec.storage.capacity = Size::tib(32 * 15 + 1)),
            "spec.storage.capacity",
        );

        let cd = example("tenant-cloud-drive.yaml");
        let mut t = cd.clone();
        t.spec.storage.metadata_size = MAX_ARRAY_VOLUME;
        // A 4 PiB metadata device on 3 nodes cannot fit a 4 PiB pod quota.
        refused_at(&t, "spec.storage.capacity");
        t.spec.storage.metadata_size = Size::bytes(MAX_ARRAY_VOLUME.as_u64() + 512);
        refused_at(&t, "spec.storage.metadataSize");
    }

    #[test]
    fn the_pod_quota_limit_is_exact() {
        // cloud-drive, 3 nodes, replication 3: total = 3 × (drive + 64 GiB); the quota
        // adds 10 % and must stay within 4 PiB.
        let mut t = example("tenant-cloud-drive.yaml");
        t.spec.storage.replication = 3;
        t.spec.portworx.max_pool_size = Some(MAX_ARRAY_VOLUME);
        t.spec.storage.drives_per_node = 1;
        let fits = |cap_gib: u64| {
            let total = 3 * (cap_gib + 64) * GIB;
            limits::pod_quota(u128::from(total)).unwrap() <= u128::from(4 * PIB)
        };
        let mut lo = 1u64;
        let mut hi = 4 * PIB / GIB;
        while lo + 1 < hi {
            let mid = (lo + hi) / 2;
            if fits(mid) { lo = mid } else { hi = mid }
        }
        t.spec.storage.capacity = Size::gib(lo);
        accepted(&t);
        let s = crate::sizing::size(&t, None).unwrap();
        assert!(s.pod_quota <= MAX_ARRAY_VOLUME);
        t.spec.storage.capacity = Size::gib(hi);
        refused_at(&t, "spec.storage.capacity");
    }

    #[test]
    fn lun_and_attachment_limits_follow_the_attach_mode() {
        let mut t = example("tenant-direct-access.yaml");
        t.spec.network = None;
        for n in &mut t.spec.management.nodes {
            n.storage_address = None;
        }
        t.spec.storage.pod = None;
        t.spec.storage.capacity = Size::tib(1);
        // 195 workers × (20 + 1) = 4095 volumes: exactly the LUNs of a host group.
        t.spec.hosted_cluster.replicas = 195;
        t.spec.storage.drives_per_node = 20;
        // A host group pre-connects volumes pxfa creates: import provisioning, which
        // needs a release that documents it (3.7 with the FA/FB driver).
        t.spec.storage.attach = Attach::HostGroup;
        t.spec.storage.provisioning = Provisioning::Import;
        t.spec.portworx.version = "3.7.0".parse().unwrap();
        t.spec.management.fa_fb_driver = true;
        accepted(&t);
        t.spec.hosted_cluster.replicas = 196;
        refused_at(&t, "spec.storage.attach");
        // FADA: 3 management nodes × 1024 attachments.
        t.spec.storage.attach = Attach::Fada;
        t.spec.hosted_cluster.replicas = 146; // 146 × 21 = 3066 <= 3072
        accepted(&t);
        t.spec.hosted_cluster.replicas = 147; // 147 × 21 = 3087 > 3072
        refused_at(&t, "spec.storage.attach");
    }

    #[test]
    fn initiators_and_endpoints() {
        for ok in [
            "iqn.1994-05.com.redhat:worker-01",
            "iqn.2004-10.com.example",
            "eui.02004567A425678D",
        ] {
            assert_eq!(iscsi_name_problem(&ok.to_ascii_lowercase()), None, "{ok}");
        }
        for bad in [
            "iqn.1994-5.com.redhat:x",
            "iqn.1994-00.com.redhat:x",
            "iqn.1994-05.:x",
            "iqn.1994-05.com_x",
            "eui.0200",
            "iscsi",
        ] {
            assert!(iscsi_name_problem(bad).is_some(), "{bad}");
        }
        assert_eq!(
            nvme_name_problem(
                "nqn.2014-08.org.nvmexpress:uuid:5b3c5a6e-0000-4000-8000-000000000001"
            ),
            None
        );
        assert!(nvme_name_problem("nqn.2014-08.org.nvmexpress:uuid:\u{e9}").is_some());
        for ok in [
            "fa1-mgmt.example.net",
            "FA1.Example.NET",
            "10.0.0.5",
            "10.0.0.5:443",
            "fa1:8443",
            "[2001:db8::10]",
            "[2001:db8::10]:443",
        ] {
            assert_eq!(endpoint_problem(ok), None, "{ok}");
        }
        for bad in [
            "fa1:0",
            "fa1:65536",
            "fa1:",
            "fa1:+1",
            "2001:db8::10",
            "[2001:db8::10",
            "[2001:db8::10]443",
            "fa_1",
            "-fa1",
            ":443",
        ] {
            assert!(endpoint_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn one_mistake_gives_one_error() {
        // An out-of-range input is reported once, not again by every derived check.
        let mut t = example("tenant-direct-access.yaml");
        t.spec.storage.drives_per_node = 100_000;
        assert_eq!(paths(&t), vec!["spec.storage.drivesPerNode".to_string()]);
        let mut t = example("tenant-direct-access.yaml");
        t.spec.storage.capacity = Size::bytes(15 * PIB);
        assert_eq!(paths(&t), vec!["spec.storage.capacity".to_string()]);
        let _ = TIB;
    }
}
