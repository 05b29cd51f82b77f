//! Deterministic names for what pxfa creates, on the array and in Kubernetes.
//!
//! Management hosts are named in the spec (`management.nodes[].host`, default the
//! node name), not here: they are shared with other tenants and often pre-exist.
//!
//! Names are derived only from the tenant description (tenant name, worker index,
//! disk index, node name), never from time or randomness: `plan` must find the
//! objects an earlier `apply` made, and a second `apply` must not create duplicates.
//!
//! Purity limits every name part to 63 characters. A tenant name may itself be 63
//! characters long (it is a DNS-1123 label), so `<tenant>-w00-data0` can overflow.
//! When it does, the tenant part is cut and followed by a short hash of the *whole*
//! tenant name: two long tenants sharing a 50-character prefix still get different
//! names, and the same tenant always gets the same name.

use flasharray::name::{MAX_NAME_LEN, NameError};
use flasharray::{PodName, VolumeName};

/// Length of the hash suffix in hex digits (32 bits): collisions need two long tenant
/// names with the same cut prefix *and* the same hash, about one in four billion.
const HASH_HEX: usize = 8;

/// What a tenant volume holds on its worker VM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum DiskRole {
    /// A Portworx storage-pool drive, `d` counting from 0.
    Data(u32),
    /// The PX-StoreV2 system metadata device (one per worker).
    Metadata,
}

impl DiskRole {
    /// The value of the `role` tag on the array (`px-data` / `px-metadata`).
    pub(crate) fn tag(self) -> &'static str {
        match self {
            DiskRole::Data(_) => "px-data",
            DiskRole::Metadata => "px-metadata",
        }
    }

    /// The disk serial the worker VM presents to the guest (`pxdata0`, `pxmeta`).
    ///
    /// The serial is the same on every VM, so one cluster-wide StorageCluster can list
    /// the same `/dev/disk/by-id/...` path for all nodes; virtio-blk keeps at most 20
    /// serial characters, which these names respect for any realistic disk count.
    pub(crate) fn serial(self) -> String {
        match self {
            DiskRole::Data(d) => format!("pxdata{d}"),
            DiskRole::Metadata => "pxmeta".to_string(),
        }
    }

    /// The `disk-index` tag value: the data index, or `meta`.
    pub(crate) fn index_tag(self) -> String {
        match self {
            DiskRole::Data(d) => d.to_string(),
            DiskRole::Metadata => "meta".to_string(),
        }
    }

    /// The suffix in the volume name (`data0`, `meta`).
    fn name_part(self) -> String {
        match self {
            DiskRole::Data(d) => format!("data{d}"),
            DiskRole::Metadata => "meta".to_string(),
        }
    }
}

/// 64-bit FNV-1a: tiny, dependency-free and stable across Rust releases and
/// platforms, which `std`'s `DefaultHasher` does not promise. Not for security.
fn fnv1a64(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The stable hash suffix used when `s` must be shortened.
pub(crate) fn short_hash(s: &str) -> String {
    let full = format!("{:016x}", fnv1a64(s));
    full[..HASH_HEX].to_string()
}

/// `<stem>-<suffix>` if it fits in `limit` characters, otherwise
/// `<cut stem>-<hash of stem>-<suffix>`; the cut never leaves a trailing `-`/`_`,
/// so the result still starts and ends with an alphanumeric character.
pub(crate) fn fit(stem: &str, suffix: &str, limit: usize) -> String {
    let joined = if suffix.is_empty() {
        stem.to_string()
    } else {
        format!("{stem}-{suffix}")
    };
    if joined.chars().count() <= limit {
        return joined;
    }
    let hash = short_hash(stem);
    let tail = if suffix.is_empty() {
        hash
    } else {
        format!("{hash}-{suffix}")
    };
    let room = limit.saturating_sub(tail.len() + 1);
    let cut: String = stem.chars().take(room).collect();
    let cut = cut.trim_end_matches(['-', '_', '.']);
    if cut.is_empty() {
        tail
    } else {
        format!("{cut}-{tail}")
    }
}

/// The short (pod-less) name of a tenant worker volume: `<tenant>-w<ii>-data<d>` or
/// `<tenant>-w<ii>-meta`, at most 63 characters.
///
/// The same string names the management-cluster PVC bound to that volume, so an
/// admin can go from `oc get pvc` to `purevol list` without a lookup table.
pub(crate) fn worker_volume_short(tenant: &str, worker: u32, role: DiskRole) -> String {
    fit(
        tenant,
        &format!("w{worker:02}-{}", role.name_part()),
        MAX_NAME_LEN,
    )
}

/// The full array name of a tenant worker volume, `pod::vol` when the tenant has a pod.
pub(crate) fn worker_volume(
    tenant: &str,
    pod: Option<&PodName>,
    worker: u32,
    role: DiskRole,
) -> Result<VolumeName, NameError> {
    let short = worker_volume_short(tenant, worker, role);
    match pod {
        Some(p) => VolumeName::in_pod(p, &short),
        None => VolumeName::new(short),
    }
}

/// Name of the ConfigMap that carries the tenant MachineConfig (multipath + udev).
pub(crate) fn multipath_config_map(tenant: &str) -> String {
    fit(tenant, "px-multipath", 253)
}

/// Name of the per-node NodeNetworkConfigurationPolicy: `<bridge>-<node>`.
pub(crate) fn nncp(bridge: &str, node: &str) -> String {
    let node = node.replace('.', "-");
    fit(&format!("{bridge}-{node}"), "", 253)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn short_tenant_names_are_plain() {
        assert_eq!(
            worker_volume_short("tenant-demo", 0, DiskRole::Data(0)),
            "tenant-demo-w00-data0"
        );
        assert_eq!(
            worker_volume_short("tenant-demo", 12, DiskRole::Metadata),
            "tenant-demo-w12-meta"
        );
        let pod = PodName::new("tenant-demo").unwrap();
        assert_eq!(
            worker_volume("tenant-demo", Some(&pod), 1, DiskRole::Data(3))
                .unwrap()
                .as_str(),
            "tenant-demo::tenant-demo-w01-data3"
        );
    }

    #[test]
    fn long_names_fit_and_stay_valid() {
        let tenant = format!("t{}", "x".repeat(62));
        assert_eq!(tenant.len(), 63);
        for w in [0, 9, 99, 100, 4095] {
            for role in [DiskRole::Data(0), DiskRole::Data(31), DiskRole::Metadata] {
                let n = worker_volume_short(&tenant, w, role);
                assert!(n.len() <= MAX_NAME_LEN, "{n} is {} chars", n.len());
                assert!(n.ends_with(&format!("w{w:02}-{}", role.name_part())), "{n}");
                VolumeName::new(n.clone()).unwrap();
                let pod = PodName::new(&tenant).unwrap();
                worker_volume(&tenant, Some(&pod), w, role).unwrap();
            }
        }
    }

    #[test]
    fn names_are_stable() {
        let tenant = "a-very-long-tenant-name-that-goes-on-and-on-for-quite-a-while-x";
        let a = worker_volume_short(tenant, 3, DiskRole::Data(1));
        let b = worker_volume_short(tenant, 3, DiskRole::Data(1));
        assert_eq!(a, b);
        // Pinned: a change of hash function or layout renames every volume on every
        // array, which `plan` would then see as delete + create. Never change this.
        assert_eq!(short_hash("tenant-demo"), "0f99b9a7");
        assert_eq!(format!("{:016x}", fnv1a64("")), "cbf29ce484222325");
        assert_eq!(format!("{:016x}", fnv1a64("a")), "af63dc4c8601ec8c");
    }

    #[test]
    fn long_names_sharing_a_prefix_do_not_collide() {
        let prefix = "shared-prefix-".repeat(4);
        let mut seen = HashSet::new();
        for i in 0..200 {
            let tenant = format!("{prefix}{i:03}");
            let tenant = &tenant[tenant.len().saturating_sub(63)..];
            let tenant = format!("s{}", &tenant[1..]);
            let n = worker_volume_short(&tenant, 0, DiskRole::Data(0));
            assert!(seen.insert(n.to_ascii_lowercase()), "collision on {n}");
        }
    }

    #[test]
    fn cut_never_ends_with_a_separator() {
        // The cut lands right after a '-' in the stem.
        let tenant = format!("{}-{}", "a".repeat(41), "b".repeat(21));
        let n = worker_volume_short(&tenant, 0, DiskRole::Data(0));
        assert!(!n.contains("--"), "{n}");
        VolumeName::new(n).unwrap();
    }

    #[test]
    fn roles_and_serials() {
        assert_eq!(DiskRole::Data(2).serial(), "pxdata2");
        assert_eq!(DiskRole::Metadata.serial(), "pxmeta");
        assert_eq!(DiskRole::Data(2).tag(), "px-data");
        assert_eq!(DiskRole::Metadata.index_tag(), "meta");
        assert!(DiskRole::Data(999).serial().len() <= 20);
    }

    #[test]
    fn kubernetes_names() {
        assert_eq!(
            nncp("br-storage", "worker-01.example"),
            "br-storage-worker-01-example"
        );
        assert_eq!(multipath_config_map("t1"), "t1-px-multipath");
    }
}
