//! Sizing over a tenant's life: the drives already on the array win over a fresh
//! division of the capacity.
//!
//! A fresh sizing divides `capacity × replication` over the workers, so adding a
//! worker would make every drive smaller, and existing PX-StoreV2 drives cannot
//! shrink. [`keep_drives_in_use`] keeps the data drive size in use for every worker
//! (new ones included) unless the capacity asks for more (then every drive grows, as
//! the fresh sizing says), and leaves a capacity decrease to the plan, which refuses
//! the shrink.

use flasharray::Size;
use flasharray::size::GIB;

use super::{POD_QUOTA_HEADROOM_PERCENT, Sizing, headroom};
use crate::spec::TenantStorage;

/// The tenant's drives on the array, as their tags and sizes say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DrivesInUse {
    /// Data drive size most existing drives have (the largest when they differ: a
    /// half-finished grow).
    pub data: Size,
    /// Metadata device size in use.
    pub metadata: Size,
    /// Data drives per existing worker.
    pub drives_per_node: u32,
    /// The capacity the drives were sized for, when known; a smaller spec capacity
    /// is a decrease, refused by the plan.
    pub capacity_before: Option<Size>,
}

/// `sizing` adjusted to the drives in use; unchanged when there are none, when the
/// layout (drives per node) differs, or for a capacity decrease.
pub fn keep_drives_in_use(spec: &TenantStorage, sizing: Sizing, in_use: &DrivesInUse) -> Sizing {
    let mut s = sizing;
    if !s.has_pool
        || in_use.data.as_u64() == 0
        || in_use.drives_per_node != s.drives_per_node
        || in_use
            .capacity_before
            .is_some_and(|c| spec.spec.storage.capacity < c)
    {
        return s;
    }
    let drive = s.drive_size.max(in_use.data);
    let metadata = s.metadata_size.max(in_use.metadata);
    if drive == s.drive_size && metadata == s.metadata_size {
        // The fresh sizing already gives (or grows to) at least the drives in use.
        return s;
    }
    let nodes = u64::from(s.storage_nodes);
    let pool = drive.as_u64() * u64::from(s.drives_per_node);
    let data_total = pool * nodes;
    let meta_total = metadata.as_u64() * nodes;
    let total = data_total + meta_total;
    let quota_gib = (u128::from(total) * u128::from(100 + POD_QUOTA_HEADROOM_PERCENT))
        .div_ceil(100 * u128::from(GIB));
    s.drive_size = drive;
    s.metadata_size = metadata;
    s.pool_size = Size::bytes(pool);
    s.data_provisioned = Size::bytes(data_total);
    s.metadata_provisioned = Size::bytes(meta_total);
    s.total_provisioned = Size::bytes(total);
    s.pod_quota = Size::bytes(u64::try_from(quota_gib).unwrap_or(u64::MAX / GIB) * GIB);
    s.effective_usable = Size::bytes(data_total / u64::from(s.replication.max(1)));
    if let Some(h) = s.array.take() {
        s.findings.retain(|f| f.rule != "PXFA019");
        s.array = Some(headroom(h.array, s.total_provisioned, &mut s.findings));
    }
    s.in_use.push(format!(
        "drives in use     = {}: capacity {} asks {} usable; {} workers x {} x {} / {} = {} usable \
         (more than asked: existing drives are never shrunk)",
        in_use.data,
        s.usable_capacity,
        s.usable_capacity,
        s.storage_nodes,
        s.drives_per_node,
        drive,
        s.replication,
        s.effective_usable
    ));
    s
}
