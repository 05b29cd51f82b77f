//! Sizing over a tenant's life: the drives already on the array win over a fresh
//! division of the capacity.
//!
//! A fresh sizing divides `capacity × replication` over the workers, so adding a
//! worker would make every drive smaller, and existing PX-StoreV2 drives cannot
//! shrink. [`keep_drives_in_use`] keeps the data drives in use (their size and count
//! per worker) for every worker, new ones included, and grows them only when the
//! capacity asks for more than they give, along `spec.storage.capacityGrowth`:
//!
//! * `resize` (default): every data drive grows to ⌈per worker ÷ drives⌉, up to the
//!   PX-StoreV2 pool ceiling (`spec.portworx.maxPoolSize`, default 15 TiB, fixed at
//!   pool creation: Portworx 3.1 "Considerations for planning PX-StoreV2 pool
//!   capacity" [M]). PX-StoreV2 pools expand by resize-drive only, add-drive to an
//!   existing pool is not supported ([H] PX-STORE). Past the ceiling: refused.
//! * `add-pool`: every worker gets ⌈shortfall ÷ size in use⌉ more data drives of the
//!   size in use (all data drives stay equal, as resize-drive wants), each a new
//!   pool, up to [`limits::MAX_DRIVES_PER_NODE`] per worker. Past the cap: refused.
//!
//! A capacity below the one the drives were sized for (the tenant pod's
//! `pxfa.io capacity` tag) is a decrease: the fresh sizing is returned so that the
//! plan shows what would shrink, and the plan refuses it unless `--allow-shrink`.

use std::collections::BTreeMap;

use flasharray::Size;
use flasharray::size::GIB;
use serde::Serialize;

use super::{MIN_DRIVE, POD_QUOTA_HEADROOM_PERCENT, Sizing, headroom};
use crate::spec::{CapacityGrowth, TenantStorage, limits};

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
    /// The capacity the drives were sized for (the pod's `pxfa.io capacity` tag),
    /// when known; a smaller spec capacity is a decrease, refused by the plan.
    pub capacity_before: Option<Size>,
    /// Live (not destroyed) drive bytes per worker index. The drives of indexes the
    /// spec no longer has are retained and still count against the pod quota.
    pub per_worker: BTreeMap<u32, Size>,
}

/// What the drives in use made of the sizing; the plan prints it and refuses the
/// blocked paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "path", rename_all = "kebab-case")]
pub enum Growth {
    /// The drives in use give at least what the capacity asks: kept as they are
    /// (a scale-out, or a raise within what they already give).
    Kept {
        /// Data drive size in use.
        drive: Size,
    },
    /// Every data drive grows (`capacityGrowth: resize`).
    Resize {
        /// Data drive size in use.
        from: Size,
        /// Data drive size after the growth.
        to: Size,
        /// Data drives per worker.
        drives_per_node: u32,
    },
    /// Every worker gets more data drives of the size in use (`capacityGrowth:
    /// add-pool`).
    AddPool {
        /// Size of every data drive, old and new.
        drive: Size,
        /// Data drives per worker before.
        from: u32,
        /// Data drives per worker after.
        to: u32,
    },
    /// The raise cannot be done on the path asked for; the drives stay as they are.
    Refused {
        /// Why.
        reason: String,
        /// What the admin can do.
        resolution: String,
    },
    /// The capacity went down.
    Decrease {
        /// The capacity the drives were sized for.
        from: Size,
        /// The capacity the spec asks now.
        to: Size,
    },
}

impl Growth {
    /// Reason and resolution when the plan must refuse: a blocked raise, or a
    /// decrease without `allow_shrink`.
    pub fn refusal(&self, allow_shrink: bool) -> Option<(String, String)> {
        match self {
            Growth::Refused { reason, resolution } => Some((reason.clone(), resolution.clone())),
            Growth::Decrease { from, to } if !allow_shrink => Some((
                format!(
                    "capacity {to} is below the {from} the drives were sized for; PX-StoreV2 \
                     pools cannot shrink"
                ),
                format!(
                    "restore spec.storage.capacity to {from} or more, or --allow-shrink \
                     (truncates drives: destroys pool data)"
                ),
            )),
            _ => None,
        }
    }

    /// The growth in one line, for the plan's notes and `pxfa size`.
    pub fn line(&self) -> String {
        match self {
            Growth::Kept { drive } => format!(
                "capacity growth: none needed — the data drives in use ({drive}) give what the \
                 capacity asks; existing drives are never shrunk"
            ),
            Growth::Resize {
                from,
                to,
                drives_per_node,
            } => format!(
                "capacity growth: resize — every data drive grows {from} -> {to} \
                 ({drives_per_node} per worker; import: array resize and larger claims; \
                 dynamic: larger claims only)"
            ),
            Growth::AddPool { drive, from, to } => format!(
                "capacity growth: add-pool — every worker goes from {from} to {to} data drives \
                 of {drive} (each new drive is a new pool)"
            ),
            Growth::Refused { reason, .. } => format!("capacity growth: refused — {reason}"),
            Growth::Decrease { from, to } => {
                format!("capacity decrease: {from} -> {to}, refused unless --allow-shrink")
            }
        }
    }

    /// The Portworx steps the admin runs in the tenant after apply (none when the
    /// drives do not change).
    pub fn admin_steps(&self) -> Vec<String> {
        match self {
            Growth::Resize { to, .. } => vec![
                format!(
                    "once the claims show the new size ({} GiB per data drive), check inside each \
                     worker VM that every data disk (pxdata<d>) has grown (`lsblk`); VM disk \
                     expansion through KubeVirt is [L], and a SCSI disk shows its new size only \
                     after a rescan (`echo 1 > /sys/class/block/<sd>/device/rescan`; direct-access \
                     guests have no CAPACITY_DATA_HAS_CHANGED udev rule; `pxfa runbook grow` \
                     prints the command per worker)",
                    to.as_u64() / GIB
                ),
                "in the tenant, one storage node at a time, resize each data pool onto its grown \
                 disks: `pxctl service pool update --resize <pool-uid>` (Portworx: expanding pools \
                 on drives it does not manage; `pool expand --operation resize-drive` is for \
                 drives Portworx manages); `pxfa runbook grow -f SPEC` prints every step"
                    .to_string(),
            ],
            Growth::AddPool { from, to, .. } => {
                let disks: Vec<String> = (*from..*to).map(|d| format!("pxdata{d}")).collect();
                vec![format!(
                    "in the tenant, one storage node at a time: `pxctl service maintenance \
                     --enter`, then for each new disk ({}) `pxctl service drive add --drive \
                     /dev/disk/by-id/<disk> --newpool`, then `pxctl service maintenance --exit` \
                     (Portworx pxctl service reference: adding drives needs maintenance mode; the \
                     StorageCluster's storage.devices is fixed after install); `pxfa runbook \
                     add-pool -f SPEC` prints every step",
                    disks.join(", ")
                )]
            }
            _ => Vec::new(),
        }
    }
}

/// `sizing` adjusted to the drives in use (see the module docs); unchanged when
/// there are none, or when they are what the fresh sizing gives anyway. The pod
/// quota also covers the retained drives of removed workers, so that a growth or a
/// scale-out after a scale-in is never refused on quota.
pub fn keep_drives_in_use(spec: &TenantStorage, sizing: Sizing, in_use: &DrivesInUse) -> Sizing {
    let mut s = lifecycle_sizing(spec, sizing, in_use);
    let retained: u64 = in_use
        .per_worker
        .range(s.storage_nodes..)
        .map(|(_, b)| b.as_u64())
        .sum();
    if s.has_pool && retained > 0 {
        let total = u128::from(s.total_provisioned.as_u64()) + u128::from(retained);
        if let Some(q) = limits::pod_quota(total).and_then(|q| u64::try_from(q).ok()) {
            s.pod_quota = Size::bytes(q);
        }
        s.in_use.push(format!(
            "retained drives   = {} of removed workers (kept with their data) also count: pod \
             quota {}",
            Size::bytes(retained),
            s.pod_quota
        ));
    }
    s
}

fn lifecycle_sizing(spec: &TenantStorage, sizing: Sizing, in_use: &DrivesInUse) -> Sizing {
    let mut s = sizing;
    if !s.has_pool {
        return s;
    }
    let capacity = spec.spec.storage.capacity;
    if let Some(before) = in_use.capacity_before
        && capacity < before
    {
        let g = Growth::Decrease {
            from: before,
            to: capacity,
        };
        s.in_use.push(g.line());
        s.growth = Some(g);
        return s;
    }
    let d = in_use.drives_per_node;
    if in_use.data.as_u64() == 0 || d == 0 {
        return s;
    }
    let have = in_use.data;
    let given = u128::from(have.as_u64()) * u128::from(d);
    let (drives, drive, growth) = if given >= u128::from(s.per_node.as_u64()) {
        (d, have, Growth::Kept { drive: have })
    } else {
        match spec.spec.storage.capacity_growth {
            CapacityGrowth::Resize => resize_drives(&s, capacity, (d, have)),
            CapacityGrowth::AddPool => add_drives(&s, capacity, (d, have)),
        }
    };
    let metadata = s.metadata_size.max(in_use.metadata);
    if drives == s.drives_per_node
        && drive == s.drive_size
        && metadata == s.metadata_size
        && !matches!(growth, Growth::Resize { .. } | Growth::AddPool { .. })
    {
        // Steady state: the fresh sizing is what is on the array.
        return s;
    }
    relayout(&mut s, drives, drive, metadata);
    s.in_use.push(format!(
        "drives in use     = {d} x {have} per worker: capacity {} asks {} usable; {} workers x {} \
         x {} / {} = {} usable{}",
        s.usable_capacity,
        s.usable_capacity,
        s.storage_nodes,
        s.drives_per_node,
        drive,
        s.replication,
        s.effective_usable,
        if s.effective_usable > s.usable_capacity {
            " (more than asked: existing drives are never shrunk)"
        } else {
            ""
        }
    ));
    s.in_use.push(growth.line());
    s.in_use.extend(growth.admin_steps());
    s.growth = Some(growth);
    s
}

/// `capacityGrowth: resize`: the `d` drives of `have` per worker grow to hold the
/// capacity, unless that passes the pool ceiling (a refusal).
fn resize_drives(s: &Sizing, capacity: Size, (d, have): (u32, Size)) -> (u32, Size, Growth) {
    let gib = u128::from(GIB);
    let nodes = u128::from(s.storage_nodes);
    let to_gib = u128::from(s.raw_capacity.as_u64())
        .div_ceil(nodes.max(1) * u128::from(d) * gib)
        .max(u128::from(MIN_DRIVE.as_u64() / GIB));
    let to = Size::bytes(u64::try_from(to_gib * gib).unwrap_or(u64::MAX));
    let ceiling = s.pool_ceiling;
    if to > ceiling {
        let reason = format!(
            "capacity {capacity} needs {} per worker: each of the {d} data drive(s) \
             would grow {have} -> {to}, past the {ceiling} PX-StoreV2 pool ceiling \
             fixed at pool creation (spec.portworx.maxPoolSize)",
            s.per_node
        );
        let resolution = "set spec.storage.capacityGrowth: add-pool, or add workers \
                          (spec.hostedCluster.replicas)"
            .to_string();
        return (d, have, Growth::Refused { reason, resolution });
    }
    let growth = Growth::Resize {
        from: have,
        to,
        drives_per_node: d,
    };
    (d, to, growth)
}

/// `capacityGrowth: add-pool`: more drives of `have` per worker hold the capacity,
/// unless that passes the drives pxfa allows per node (a refusal).
fn add_drives(s: &Sizing, capacity: Size, (d, have): (u32, Size)) -> (u32, Size, Growth) {
    let given = u128::from(have.as_u64()) * u128::from(d);
    let more = (u128::from(s.per_node.as_u64()) - given).div_ceil(u128::from(have.as_u64()));
    let to = u128::from(d) + more;
    if to > u128::from(limits::MAX_DRIVES_PER_NODE) {
        let reason = format!(
            "capacity {capacity} needs {to} data drives of {have} per worker, more than \
             the {} pxfa allows per node",
            limits::MAX_DRIVES_PER_NODE
        );
        let resolution = "add workers (spec.hostedCluster.replicas), or set \
                          spec.storage.capacityGrowth: resize"
            .to_string();
        return (d, have, Growth::Refused { reason, resolution });
    }
    let to = u32::try_from(to).unwrap_or(u32::MAX);
    let growth = Growth::AddPool {
        drive: have,
        from: d,
        to,
    };
    (to, have, growth)
}

/// `s` with `drives` of `drive` and `metadata` per worker: the totals, the quota and
/// the array headroom recomputed.
fn relayout(s: &mut Sizing, drives: u32, drive: Size, metadata: Size) {
    // Saturating: the inputs are validated sizes, a growth stays near the fresh
    // sizing, and a saturated total would only make the array refuse the quota.
    let nodes = u64::from(s.storage_nodes);
    let pool = drive.as_u64().saturating_mul(u64::from(drives));
    let data_total = pool.saturating_mul(nodes);
    let meta_total = metadata.as_u64().saturating_mul(nodes);
    let total = data_total.saturating_add(meta_total);
    let quota_gib = (u128::from(total) * u128::from(100 + POD_QUOTA_HEADROOM_PERCENT))
        .div_ceil(100 * u128::from(GIB));
    s.drives_per_node = drives;
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
}
