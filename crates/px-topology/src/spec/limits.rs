//! The range of every number in the spec, each with where it comes from, and the
//! drive layout that sizing and validation share.
//!
//! The array, Portworx, KubeVirt and HyperShift each enforce limits. pxfa checks them
//! all before anything is written, so that a spec the array would refuse halfway
//! through an apply (a 5 PiB metadata device, a pod quota above 4 PiB) exits 2 at
//! once with its field path. Sources are `reference/flasharray-rest.md` and
//! `reference/portworx-hcp.md` with their confidence marks, the HyperShift NodePool
//! CRD schema, and the OpenShift Virtualization "supported limits" page
//! (docs.okd.io/latest/virt/about_virt/virt-supported-limits.html, not in the
//! references, so \[M\]); where no source states a limit, the bound is conservative
//! and `docs/spec.md` says so.
//!
//! The drive layout ([`pool_layout`]) lives here rather than in `sizing` because
//! validation needs the derived drive count and size to check them, and `sizing`
//! already depends on the spec: one formula, no cycle.

use flasharray::Size;
use flasharray::size::{GIB, MAX_VOLUME, MIB, MIN_VOLUME};

/// Fewest worker VMs for the Portworx modes: Portworx needs 3 storage nodes for
/// quorum ([H] PX-REQ "Cluster size >= 3 nodes").
pub(crate) const MIN_PORTWORX_REPLICAS: u32 = 3;
/// Most worker VMs of one tenant: the OpenShift Virtualization tested maximum of
/// VMs defined in one (management) cluster, 10,000. NodePool `replicas` is an int32
/// (HyperShift CRD); Portworx's own cluster-size maximum is not in our references.
pub(crate) const MAX_REPLICAS: u32 = 10_000;
/// Most vCPU cores per worker VM: the OpenShift Virtualization theoretical maximum
/// of 255 vCPUs per VM (HyperShift sets cores only, one socket, one thread).
pub(crate) const MAX_CORES: u32 = 255;
/// Least memory per worker VM: OpenShift Virtualization requires 512 MB per VM.
pub(crate) const MIN_MEMORY: Size = Size::bytes(512 * MIB);
/// Most memory per worker VM: the OpenShift Virtualization theoretical maximum of
/// 16 TB per VM, read as decimal terabytes to stay on the safe side.
pub(crate) const MAX_MEMORY: Size = Size::bytes(16_000_000_000_000);
/// Largest single VM disk (root disks; direct-access drives and metadata devices,
/// which are VM disks too): the OpenShift Virtualization theoretical maximum of
/// 100 TB, decimal.
pub(crate) const MAX_VM_DISK: Size = Size::bytes(100_000_000_000_000);
/// Smallest volume (and pod quota) the array accepts: 1 MiB ([M] LXD; whether REST
/// refuses or rounds up smaller sizes is [L], so pxfa refuses them).
pub(crate) const MIN_ARRAY_VOLUME: Size = Size::bytes(MIN_VOLUME);
/// Largest volume, and largest pod `quota_limit`, the array accepts: 4 PiB ([H] SDK).
pub(crate) const MAX_ARRAY_VOLUME: Size = Size::bytes(MAX_VOLUME);
/// Most drives (hence PX-StoreV2 pools: one per drive spec) per storage node. No
/// reference states Portworx's maximum drives per node ([L]: "not found" in
/// reference/portworx-hcp.md §8); the Portworx 3.1 "Storage pools" page allows at
/// most 32 pools per node, which is the conservative bound used here.
pub(crate) const MAX_DRIVES_PER_NODE: u32 = 32;
/// Smallest PX-StoreV2 drive, hence the smallest pool ceiling: 8 GB ([H] PX-REQ,
/// kept as 8 GiB).
pub(crate) const MIN_DRIVE: Size = Size::gib(8);
/// Smallest PX-StoreV2 metadata device: 64 GB ([H] PX-STC, kept as 64 GiB).
pub(crate) const MIN_METADATA: Size = Size::gib(64);
/// Most management nodes: the OpenShift Virtualization tested maximum of 500 hosts
/// per cluster.
pub(crate) const MAX_MANAGEMENT_NODES: usize = 500;
/// LUNs one host or host group can hold: 1-4095 ([H] SDK `ConnectionPost.lun`).
/// With `attach: host-group` every tenant volume is connected to the one management
/// host group, so the tenant's volumes must fit in these LUNs.
pub(crate) const MAX_LUNS: u64 = 4095;
/// FADA attachments one management node can hold: up to 1,024 ([H] PX-FAFB,
/// PX-FA-PREP). With `attach: fada` every tenant volume is attached to some
/// management node, so the tenant can have at most this many per node.
pub(crate) const MAX_FADA_ATTACHMENTS_PER_NODE: u64 = 1024;
/// Portworx replication factors ([H] Portworx: repl 1, 2 or 3).
pub(crate) const REPLICATION: std::ops::RangeInclusive<u8> = 1..=3;
/// Tagged VLAN ids (IEEE 802.1Q; the array's host `vlan` takes 1-4094, [H] SDK).
pub(crate) const VLAN: std::ops::RangeInclusive<u16> = 1..=4094;
/// Storage-network MTU: 576 (the IPv4 minimum datagram every host must accept) to
/// 9216 (the largest jumbo frame common switches carry; the array's ports go to 9000).
pub(crate) const MTU: std::ops::RangeInclusive<u32> = 576..=9216;
/// TCP ports (an `endpoint` of `host:port`).
pub(crate) const PORT: std::ops::RangeInclusive<u32> = 1..=65535;

/// Pod quota headroom over the provisioned total, in percent: a pool resize or a
/// replacement drive must not hit the quota at once.
pub(crate) const POD_QUOTA_HEADROOM_PERCENT: u64 = 10;

/// The pod quota for `total` provisioned bytes: the total plus
/// [`POD_QUOTA_HEADROOM_PERCENT`], rounded up to a whole GiB; `None` on overflow.
pub(crate) fn pod_quota(total: u128) -> Option<u128> {
    let gib = u128::from(GIB);
    total
        .checked_mul(u128::from(100 + POD_QUOTA_HEADROOM_PERCENT))?
        .div_ceil(100 * gib)
        .checked_mul(gib)
}

/// How the usable capacity becomes drives on every storage node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolLayout {
    /// capacity × replication, in bytes.
    pub raw: u128,
    /// raw ÷ nodes, rounded up to a byte.
    pub per_node: u128,
    /// Drives per node: the request, raised so that no drive exceeds the ceiling.
    pub drives_per_node: u128,
    /// Size of every data drive in bytes: whole GiB, never below `MIN_DRIVE`.
    pub drive_size: u128,
}

/// The drive layout for `capacity` at `replication` over `nodes` storage nodes with
/// at least `requested` drives each, none larger than `ceiling` (rounded down to a
/// whole GiB). Computed in `u128` from `u64`/`u32` inputs, so nothing can wrap;
/// `None` only for zero nodes or a ceiling below one GiB.
pub fn pool_layout(
    capacity: Size,
    replication: u8,
    nodes: u32,
    requested: u32,
    ceiling: Size,
) -> Option<PoolLayout> {
    let gib = u128::from(GIB);
    let ceiling = u128::from(ceiling.as_u64() / GIB) * gib;
    if nodes == 0 || ceiling == 0 {
        return None;
    }
    let raw = u128::from(capacity.as_u64()) * u128::from(replication);
    let n = u128::from(nodes);
    let per_node = raw.div_ceil(n);
    let drives = u128::from(requested.max(1)).max(per_node.div_ceil(ceiling));
    // n < 2^32, drives < 2^36 (raw < 2^66 over a ceiling >= 2^30), gib = 2^30: the
    // product stays below 2^98.
    let drive_gib = raw.div_ceil(n * drives * gib);
    let drive_size = drive_gib.max(u128::from(MIN_DRIVE.as_u64() / GIB)) * gib;
    Some(PoolLayout {
        raw,
        per_node,
        drives_per_node: drives,
        drive_size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flasharray::size::{PIB, TIB};

    #[test]
    fn layout_raises_drives_to_respect_the_ceiling() {
        let l = pool_layout(Size::tib(40), 3, 3, 1, Size::tib(15)).unwrap();
        assert_eq!(l.raw, u128::from(120 * TIB));
        assert_eq!(l.per_node, u128::from(40 * TIB));
        assert_eq!(l.drives_per_node, 3);
        assert_eq!(l.drive_size, 13654 * u128::from(GIB));
    }

    #[test]
    fn layout_of_the_extremes_does_not_wrap() {
        let l = pool_layout(Size::bytes(u64::MAX), 3, 1, u32::MAX, Size::gib(1)).unwrap();
        assert_eq!(l.raw, u128::from(u64::MAX) * 3);
        assert!(l.drives_per_node >= u128::from(u32::MAX));
        // 15 PiB at replication 3 on 3 nodes with the default ceiling: 1024 drives,
        // far over the per-node limit, which validation reports.
        let l = pool_layout(Size::bytes(15 * PIB), 3, 3, 1, Size::tib(15)).unwrap();
        assert_eq!(l.drives_per_node, 1024);
        assert!(l.drives_per_node > u128::from(MAX_DRIVES_PER_NODE));
        assert_eq!(pool_layout(Size::tib(1), 3, 0, 1, Size::tib(15)), None);
        assert_eq!(
            pool_layout(Size::tib(1), 3, 3, 1, Size::bytes(GIB - 1)),
            None
        );
    }

    #[test]
    fn pod_quota_adds_headroom_in_whole_gib() {
        assert_eq!(pod_quota(u128::from(10 * GIB)), Some(u128::from(11 * GIB)));
        assert_eq!(pod_quota(1), Some(u128::from(GIB)));
        assert_eq!(pod_quota(0), Some(0));
        assert_eq!(pod_quota(u128::MAX), None);
    }

    #[test]
    fn small_capacities_get_the_drive_floor() {
        let l = pool_layout(Size::bytes(1), 1, 3, 1, Size::tib(15)).unwrap();
        assert_eq!(l.drive_size, u128::from(MIN_DRIVE.as_u64()));
    }
}
