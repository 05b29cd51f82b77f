//! Portworx pool sizing: from the usable capacity a tenant asks for to the drives
//! every storage node gets and what that provisions on the array.
//!
//! The arithmetic, in order (each step is a line of [`Sizing::explain`]):
//!
//! 1. raw = capacity × replication (Portworx keeps `replication` copies);
//! 2. per node = raw ÷ storage nodes (every worker VM is a storage node);
//! 3. drives per node = max(requested, ⌈per node ÷ pool ceiling⌉), so that no
//!    PX-StoreV2 pool exceeds its ceiling (default 15 TiB, `spec.portworx.maxPoolSize`);
//! 4. drive size = ⌈per node ÷ drives⌉ rounded up to a whole GiB (hence a multiple
//!    of 512 bytes, as the array wants), never below the 8 GiB PX-StoreV2 floor;
//! 5. one metadata device per node (>= 64 GiB);
//! 6. provisioned on the array = nodes × (drives × drive size + metadata);
//! 7. pod quota = provisioned + 10 %, rounded up to a whole GiB, so that a pool
//!    resize or a replacement drive does not hit the quota at once;
//! 8. against the array (when known): how much of its capacity and free space the
//!    tenant would provision. FlashArray volumes are thin, so this is an upper bound
//!    on physical use before data reduction, not a prediction.
//!
//! kubevirt-csi has no Portworx pool in the tenant: its capacity comes from the
//! management cluster's StorageClass, so the sizing only says so.

use flasharray::Size;
use flasharray::models::ArraySpace;
use flasharray::size::{GIB, TIB};
use serde::Serialize;

mod in_use;

pub use in_use::{DrivesInUse, Growth, keep_drives_in_use};

use crate::lint::{Finding, Severity, spec_rules};
use crate::spec::{SpecError, StorageMode, TenantStorage, limits};

/// Smallest drive PX-StoreV2 accepts.
pub(crate) const MIN_DRIVE: Size = limits::MIN_DRIVE;
/// Smallest drive PX-StoreV2 recommends.
pub(crate) const RECOMMENDED_DRIVE: Size = Size::gib(128);
/// Smallest metadata device.
pub(crate) const MIN_METADATA: Size = limits::MIN_METADATA;
/// Pod quota headroom over the provisioned total, in percent.
pub(crate) const POD_QUOTA_HEADROOM_PERCENT: u64 = limits::POD_QUOTA_HEADROOM_PERCENT;

/// What the sizing needs to know about the array's space (from `get_array_space`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArraySpaceInfo {
    /// The array's name, as `get_array_space` reports it.
    pub name: String,
    /// Usable capacity.
    pub capacity: Size,
    /// Physical space used.
    pub used: Size,
    /// Space already provisioned to volumes, when the array reports it.
    pub provisioned: Option<Size>,
}

impl From<&ArraySpace> for ArraySpaceInfo {
    fn from(a: &ArraySpace) -> Self {
        let used = a.space.total_used.or(a.space.total_physical).unwrap_or(0);
        ArraySpaceInfo {
            name: a.name.clone(),
            capacity: Size::bytes(a.capacity),
            used: Size::bytes(used),
            provisioned: a.space.total_provisioned.map(Size::bytes),
        }
    }
}

/// The tenant against the array's space.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArrayHeadroom {
    /// What the array reported.
    pub array: ArraySpaceInfo,
    /// capacity − used (zero when the array is over-full).
    pub free: Size,
    /// The tenant's provisioned total as a percentage of the array's capacity.
    pub percent_of_capacity: f64,
    /// The tenant's provisioned total as a percentage of the free space
    /// (`None` when nothing is free).
    pub percent_of_free: Option<f64>,
    /// Free space if the tenant filled every byte it provisions (upper bound:
    /// volumes are thin and data is reduced). Negative when it would not fit.
    pub free_after_bytes: i128,
    /// (already provisioned + tenant) ÷ capacity, when the array reports provisioning.
    pub provisioning_ratio_after: Option<f64>,
    /// capacity − (already provisioned + tenant), when the array reports provisioning:
    /// negative means the array is over-provisioned (normal for thin arrays, but worth
    /// knowing).
    pub unprovisioned_after_bytes: Option<i128>,
}

/// The pool sizing of one tenant. Sizes are bytes in JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sizing {
    /// The tenant sized (`metadata.name`).
    pub tenant: String,
    /// The spec's storage mode, which decides the pool layout.
    pub mode: StorageMode,
    /// Whether the tenant has a Portworx pool at all (false for kubevirt-csi, where
    /// every size below is zero).
    pub has_pool: bool,
    /// Usable capacity asked for.
    pub usable_capacity: Size,
    /// Portworx's replication factor (`spec.storage.replication`, 1 to 3).
    pub replication: u8,
    /// capacity × replication.
    pub raw_capacity: Size,
    /// Storage nodes (worker VMs).
    pub storage_nodes: u32,
    /// raw ÷ nodes, rounded up to a byte.
    pub per_node: Size,
    /// PX-StoreV2 pool ceiling used.
    pub pool_ceiling: Size,
    /// drivesPerNode from the spec.
    pub requested_drives_per_node: u32,
    /// Drives per node after respecting the ceiling.
    pub drives_per_node: u32,
    /// Size of each data drive.
    pub drive_size: Size,
    /// drives × drive size: each node's pool.
    pub pool_size: Size,
    /// Metadata device per node.
    pub metadata_size: Size,
    /// Data drives on the array, all nodes.
    pub data_provisioned: Size,
    /// Metadata devices on the array, all nodes.
    pub metadata_provisioned: Size,
    /// Everything provisioned on the array for this tenant's pools.
    pub total_provisioned: Size,
    /// Quota for the tenant's pod: total + `POD_QUOTA_HEADROOM_PERCENT`, whole GiB.
    pub pod_quota: Size,
    /// Usable capacity Portworx will actually offer: nodes × pool ÷ replication
    /// (>= the request; the difference is rounding).
    pub effective_usable: Size,
    /// The tenant against the array, when the array's space was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array: Option<ArrayHeadroom>,
    /// PX-StoreV2 and headroom findings.
    pub findings: Vec<Finding>,
    /// How the drives already on the array changed the sizing ([`keep_drives_in_use`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub in_use: Vec<String>,
    /// Which path a capacity change took against the drives in use (none for a
    /// fresh sizing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub growth: Option<Growth>,
}

/// Sizes the tenant's pools, optionally against the array's space.
pub fn size(spec: &TenantStorage, array: Option<ArraySpaceInfo>) -> Result<Sizing, SpecError> {
    let s = &spec.spec.storage;
    if s.capacity.as_u64() == 0 {
        return Err(SpecError::new(
            "spec.storage.capacity",
            "must be more than 0",
        ));
    }
    if !spec.mode().runs_portworx() {
        return Ok(without_pool(spec));
    }
    let (nodes, repl, ceiling_gib) = pool_bounds(spec)?;
    let t = Totals::of(spec, nodes, repl)?;
    let mut findings = spec_rules::px_storev2_nodes(spec);
    let drive_size = Size::bytes(t.drive);
    if drive_size < RECOMMENDED_DRIVE {
        findings.push(Finding::new(
            "PXFA018",
            Severity::Warning,
            "spec.storage.capacity",
            format!(
                "each drive is {drive_size}, below the 128 GiB PX-StoreV2 recommends; raise \
                 capacity or lower drivesPerNode"
            ),
        ));
    }
    let total_size = to_size(t.total, "total")?;
    let headroom = array.map(|a| headroom(a, total_size, &mut findings));
    Ok(Sizing {
        tenant: spec.tenant_name().to_string(),
        mode: spec.mode(),
        has_pool: true,
        usable_capacity: s.capacity,
        replication: repl,
        raw_capacity: to_size(t.raw, "raw capacity")?,
        storage_nodes: nodes,
        per_node: to_size(t.per_node, "per-node share")?,
        pool_ceiling: Size::bytes(ceiling_gib * GIB),
        requested_drives_per_node: s.drives_per_node,
        drives_per_node: t.drives,
        drive_size,
        pool_size: to_size(t.pool, "pool size")?,
        metadata_size: t.metadata,
        data_provisioned: to_size(t.data, "data total")?,
        metadata_provisioned: to_size(t.meta, "metadata total")?,
        total_provisioned: total_size,
        pod_quota: to_size(t.quota, "pod quota")?,
        effective_usable: to_size(t.data / u128::from(repl), "effective capacity")?,
        array: headroom,
        findings,
        in_use: Vec::new(),
        growth: None,
    })
}

/// A tenant without Portworx of its own (kubevirt-csi): its capacity, no pool.
fn without_pool(spec: &TenantStorage) -> Sizing {
    let s = &spec.spec.storage;
    let zero = Size::bytes(0);
    Sizing {
        tenant: spec.tenant_name().to_string(),
        mode: spec.mode(),
        has_pool: false,
        usable_capacity: s.capacity,
        replication: s.replication,
        raw_capacity: zero,
        storage_nodes: 0,
        per_node: zero,
        pool_ceiling: spec.max_pool_size(),
        requested_drives_per_node: s.drives_per_node,
        drives_per_node: 0,
        drive_size: zero,
        pool_size: zero,
        metadata_size: zero,
        data_provisioned: zero,
        metadata_provisioned: zero,
        total_provisioned: zero,
        pod_quota: zero,
        effective_usable: zero,
        array: None,
        findings: Vec::new(),
        in_use: Vec::new(),
        growth: None,
    }
}

/// The storage nodes, the replication and the pool ceiling in GiB, each checked:
/// replication 1 to 3 and no more than the nodes, a ceiling that holds a drive.
fn pool_bounds(spec: &TenantStorage) -> Result<(u32, u8, u64), SpecError> {
    let nodes = spec.storage_nodes();
    let repl = spec.spec.storage.replication;
    if !(1..=3).contains(&repl) {
        return Err(SpecError::new(
            "spec.storage.replication",
            format!("{repl} is out of range: Portworx replication is 1, 2 or 3"),
        ));
    }
    if nodes == 0 || u32::from(repl) > nodes {
        return Err(SpecError::new(
            "spec.storage.replication",
            format!(
                "replication {repl} needs at least {repl} storage nodes; the tenant has {nodes}"
            ),
        ));
    }
    let ceiling_gib = spec.max_pool_size().as_u64() / GIB;
    if ceiling_gib < MIN_DRIVE.as_u64() / GIB {
        return Err(SpecError::new(
            "spec.portworx.maxPoolSize",
            format!("{} is below the 8 GiB drive minimum", spec.max_pool_size()),
        ));
    }
    Ok((nodes, repl, ceiling_gib))
}

fn too_big(what: &str) -> SpecError {
    SpecError::new("spec.storage.capacity", format!("{what} overflows"))
}

fn to_size(b: u128, what: &str) -> Result<Size, SpecError> {
    u64::try_from(b).map(Size::bytes).map_err(|_| too_big(what))
}

/// The pool layout and what it provisions, in bytes.
struct Totals {
    raw: u128,
    per_node: u128,
    drives: u32,
    drive: u64,
    metadata: Size,
    pool: u128,
    data: u128,
    meta: u128,
    total: u128,
    quota: u128,
}

impl Totals {
    /// u64 × u32 × u32 fits in u128, but the headroom multiplication need not: every
    /// step is checked and an overflow names the field that caused it.
    fn of(spec: &TenantStorage, nodes: u32, repl: u8) -> Result<Self, SpecError> {
        let s = &spec.spec.storage;
        let layout = limits::pool_layout(
            s.capacity,
            repl,
            nodes,
            s.drives_per_node,
            spec.max_pool_size(),
        )
        .ok_or_else(|| too_big("drive layout"))?;
        let n = u128::from(nodes);
        let drives = u32::try_from(layout.drives_per_node).map_err(|_| too_big("drive count"))?;
        let drive = u64::try_from(layout.drive_size).map_err(|_| too_big("drive size"))?;
        let metadata = s
            .metadata_size
            .checked_round_up_gib()
            .ok_or_else(|| {
                SpecError::new(
                    "spec.storage.metadataSize",
                    format!(
                        "{} overflows when rounded up to a whole GiB",
                        s.metadata_size
                    ),
                )
            })?
            .max(MIN_METADATA);
        let pool = u128::from(drive) * u128::from(drives);
        let data = pool.checked_mul(n).ok_or_else(|| too_big("data total"))?;
        let meta = u128::from(metadata.as_u64()) * n;
        let total = data.checked_add(meta).ok_or_else(|| too_big("total"))?;
        let quota = limits::pod_quota(total).ok_or_else(|| too_big("pod quota"))?;
        Ok(Totals {
            raw: layout.raw,
            per_node: layout.per_node,
            drives,
            drive,
            metadata,
            pool,
            data,
            meta,
            total,
            quota,
        })
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    part as f64 * 100.0 / whole as f64
}

fn headroom(a: ArraySpaceInfo, total: Size, findings: &mut Vec<Finding>) -> ArrayHeadroom {
    let cap = a.capacity.as_u64();
    let free = cap.saturating_sub(a.used.as_u64());
    let free_after = i128::from(free) - i128::from(total.as_u64());
    if free_after < 0 {
        findings.push(Finding::new(
            "PXFA019",
            Severity::Warning,
            format!("array/{}", a.name),
            format!(
                "the tenant provisions {total} but the array has {} free; fine while data \
                 reduction and thin provisioning hold, but a full tenant would fill the array. \
                 Lower capacity or add array capacity",
                Size::bytes(free)
            ),
        ));
    }
    ArrayHeadroom {
        percent_of_capacity: if cap == 0 {
            100.0
        } else {
            percent(total.as_u64(), cap)
        },
        percent_of_free: (free > 0).then(|| percent(total.as_u64(), free)),
        free: Size::bytes(free),
        free_after_bytes: free_after,
        provisioning_ratio_after: a
            .provisioned
            .filter(|_| cap > 0)
            .map(|p| (p.as_u64() as f64 + total.as_u64() as f64) / cap as f64),
        unprovisioned_after_bytes: a
            .provisioned
            .map(|p| i128::from(cap) - i128::from(p.as_u64()) - i128::from(total.as_u64())),
        array: a,
    }
}

impl Sizing {
    /// The arithmetic, line by line, for `pxfa size`.
    pub fn explain(&self) -> Vec<String> {
        let mut l = Vec::new();
        if !self.has_pool {
            l.push(format!(
                "tenant {}: {} has no Portworx pool in the tenant; the guest's {} come from the \
                 management cluster's StorageClass, so size that class's pool instead",
                self.tenant, self.mode, self.usable_capacity
            ));
            return l;
        }
        l.push(format!("tenant {} ({}):", self.tenant, self.mode));
        l.push(format!(
            "raw capacity      = usable {} x replication {} = {}",
            self.usable_capacity, self.replication, self.raw_capacity
        ));
        l.push(format!(
            "per storage node  = {} / {} nodes = {}",
            self.raw_capacity, self.storage_nodes, self.per_node
        ));
        let needed = if self.drives_per_node > self.requested_drives_per_node {
            format!(
                " (raised from {} so that no pool exceeds the {} PX-StoreV2 ceiling)",
                self.requested_drives_per_node, self.pool_ceiling
            )
        } else {
            format!(" (pool ceiling {} respected)", self.pool_ceiling)
        };
        l.push(format!(
            "drives per node   = {}{needed}",
            self.drives_per_node
        ));
        l.push(format!(
            "drive size        = {} / {} drive(s), rounded up to a whole GiB (min 8 GiB) = {}",
            self.per_node,
            self.drives_per_node,
            exact(self.drive_size)
        ));
        l.push(format!(
            "pool per node     = {} x {} = {}",
            self.drives_per_node,
            exact(self.drive_size),
            exact(self.pool_size)
        ));
        l.push(format!(
            "metadata per node = {} (PX-StoreV2 minimum 64 GiB)",
            self.metadata_size
        ));
        l.push(format!(
            "on the array      = {} nodes x ({} + {}) = {} data + {} metadata = {}",
            self.storage_nodes,
            self.pool_size,
            self.metadata_size,
            self.data_provisioned,
            self.metadata_provisioned,
            self.total_provisioned
        ));
        l.push(format!(
            "usable after repl = {} x {} / {} = {} (asked {})",
            self.storage_nodes,
            self.pool_size,
            self.replication,
            self.effective_usable,
            self.usable_capacity
        ));
        l.extend(self.in_use.iter().cloned());
        l.push(format!(
            "pod quota         = {} + {}% headroom, rounded up to a GiB = {}",
            self.total_provisioned, POD_QUOTA_HEADROOM_PERCENT, self.pod_quota
        ));
        if let Some(h) = &self.array {
            l.push(format!(
                "array {}: capacity {}, used {}, free {}",
                h.array.name, h.array.capacity, h.array.used, h.free
            ));
            let of_free = h
                .percent_of_free
                .map(|p| format!("{p:.1}% of free"))
                .unwrap_or_else(|| "no free space".into());
            l.push(format!(
                "tenant share      = {:.1}% of capacity, {of_free}; free after (if every byte \
                 were written) {}",
                h.percent_of_capacity,
                signed_size(h.free_after_bytes)
            ));
            if let (Some(r), Some(u)) = (h.provisioning_ratio_after, h.unprovisioned_after_bytes) {
                l.push(format!(
                    "provisioned after = {r:.2} x capacity (unprovisioned {})",
                    signed_size(u)
                ));
            }
            l.push(
                "note: FlashArray volumes are thin and data is reduced, so these are upper \
                 bounds on physical use"
                    .into(),
            );
        }
        for f in &self.findings {
            l.push(format!("{} {}: {}", f.severity, f.rule, f.message));
        }
        l
    }
}

/// A size for the explanation: whole GiB spelled out when the binary display would
/// round (`13654 GiB (13.33 TiB)`), so the admin sees the exact drive size.
fn exact(s: Size) -> String {
    let b = s.as_u64();
    if b >= TIB && b.is_multiple_of(GIB) && !b.is_multiple_of(TIB) {
        format!("{} GiB ({s})", b / GIB)
    } else {
        s.to_string()
    }
}

fn signed_size(b: i128) -> String {
    let mag = Size::bytes(u64::try_from(b.unsigned_abs()).unwrap_or(u64::MAX));
    if b < 0 {
        format!("-{mag}")
    } else {
        mag.to_string()
    }
}
