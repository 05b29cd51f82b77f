//! The steps, as data: one table per piece of procedure, and per operation and mode
//! the list of pieces in order. Nothing here knows a tenant; `{name}` words are
//! filled from the spec by `super::vars`, `<name>` words are what the operator reads
//! off an earlier step's output.
//!
//! Template words: `{spec}`, `{tenant}`, `{tenant_ns}` (the tenant's namespace, its
//! `pxfa.io/tenant-namespace` label), `{hc}` (HostedCluster), `{hc_ns}` (its
//! namespace), `{hcp}` (hosted control plane namespace), `{nodepool}`, `{px_ns}`
//! (tenant Portworx namespace), `{stc}` (tenant StorageCluster), `{fada_class}`,
//! `{pod}` (array pod), `{repl}`, `{old_gib}` and `{grow_gib}` (drive size before and after the edit); per worker `{worker}` (two digits),
//! and the list words `{claims}` (the worker's management claims), `{devices}`
//! (its disks' `/dev/disk/by-id` paths in the guest) and `{data_devices}` (the data
//! disks among them).

use super::sources::Confidence::{self, H, M};
use crate::spec::provisioning::Strategy;

/// Where a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Where {
    /// The management cluster (`oc` with its kubeconfig).
    Management,
    /// The tenant (hosted) cluster; `pxctl` inside its Portworx pods.
    Tenant,
    /// pxfa on the admin's machine (it reaches the array and, with kubeconfigs, the
    /// clusters itself).
    Local,
}

impl Where {
    /// `management`, `tenant`, `local`.
    pub fn as_str(self) -> &'static str {
        match self {
            Where::Management => "management",
            Where::Tenant => "tenant",
            Where::Local => "local",
        }
    }
}

/// One step, before a tenant's names are filled in.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepTemplate {
    /// Stable id (`decommission.cluster-delete`), for tests and machines.
    pub id: &'static str,
    /// Where it runs.
    pub on: Where,
    /// Repeated for each selected worker (direct-access only).
    pub per_worker: bool,
    /// What the step does.
    pub title: &'static str,
    /// The command, word by word (empty: a manual step).
    pub command: &'static [&'static str],
    /// What to check before going on.
    pub check: &'static str,
    /// The page it follows (a key of `super::sources::SOURCES`).
    pub source: &'static str,
    /// How sure the step is.
    pub confidence: Confidence,
}

/// A piece of procedure: steps that always go together.
pub(crate) type Piece = &'static [StepTemplate];

// One positional row per step keeps the tables readable as tables.
#[allow(clippy::too_many_arguments)]
const fn st(
    id: &'static str,
    on: Where,
    per_worker: bool,
    title: &'static str,
    command: &'static [&'static str],
    check: &'static str,
    source: &'static str,
    confidence: Confidence,
) -> StepTemplate {
    StepTemplate {
        id,
        on,
        per_worker,
        title,
        command,
        check,
        source,
        confidence,
    }
}

use Where::{Local, Management, Tenant};

// ---- finding a direct-access worker --------------------------------------------

/// Which VM carries worker `{worker}`: pxfa recorded it on the worker's claims.
pub(crate) const FIND_WORKER_VM: Piece = &[st(
    "worker.find-vm",
    Management,
    true,
    "Find the VM that carries worker {worker} (pxfa records it on the worker's claims)",
    &[
        "oc",
        "get",
        "pvc",
        "-n",
        "{hcp}",
        "{claims}",
        "-o",
        "custom-columns=CLAIM:.metadata.name,VM:.metadata.annotations.pxfa\\.io/attached-vm,PV:.spec.volumeName",
    ],
    "every claim names the same VM; call it <vm-w{worker}>: the tenant node carries the VM's name [M]",
    "pxfa-cluster",
    H,
)];

// ---- Portworx decommission -----------------------------------------------------

/// Portworx's decommission procedure for a node that is still up.
pub(crate) const DECOMMISSION_LIVE: Piece = &[
    st(
        "decommission.node-id",
        Tenant,
        true,
        "Find the Portworx node ID of <vm-w{worker}>",
        &["pxctl", "status"],
        "the node <vm-w{worker}> is listed; call its ID <node-id-w{worker}>",
        "px-decommission",
        H,
    ),
    st(
        "decommission.kvdb",
        Tenant,
        true,
        "Check whether the node is an internal KVDB member",
        &["pxctl", "service", "kvdb", "members"],
        "<node-id-w{worker}> is not listed; a KVDB member cannot be removed: fail it over first (put the node in maintenance and wait until another node replaces it in this list). On a 3-node tenant every storage node is a member",
        "px-decommission",
        H,
    ),
    st(
        "decommission.replicas",
        Tenant,
        true,
        "List the volumes with a replica on the node and raise replication of repl-1 volumes elsewhere",
        &["pxctl", "volume", "list", "--node", "<node-id-w{worker}>"],
        "for each volume with a single replica there: `pxctl volume ha-update --repl 2 <volume>` and wait until `pxctl volume inspect <volume>` shows it up and clean",
        "px-decommission",
        H,
    ),
    st(
        "decommission.drain",
        Tenant,
        true,
        "Cordon and drain the node so applications move",
        &[
            "oc",
            "adm",
            "drain",
            "<vm-w{worker}>",
            "--ignore-daemonsets",
            "--delete-emptydir-data",
        ],
        "no application pod using Portworx volumes runs on <vm-w{worker}>",
        "px-decommission",
        H,
    ),
    st(
        "decommission.maintenance",
        Tenant,
        true,
        "Put Portworx on the node in maintenance mode (in its Portworx pod)",
        &["pxctl", "service", "maintenance", "--enter"],
        "`pxctl status` on the node reports maintenance mode",
        "px-decommission",
        H,
    ),
    st(
        "decommission.cluster-delete",
        Tenant,
        true,
        "Remove the node from the Portworx cluster (always required; run it from another node)",
        &["pxctl", "cluster", "delete", "<node-id-w{worker}>"],
        "`pxctl cluster list` no longer lists <node-id-w{worker}>",
        "px-decommission",
        H,
    ),
    st(
        "decommission.px-off",
        Tenant,
        true,
        "Keep Portworx from starting on the node again",
        &[
            "oc",
            "label",
            "node",
            "<vm-w{worker}>",
            "px/enabled=false",
            "--overwrite",
        ],
        "no Portworx pod runs on <vm-w{worker}>",
        "px-node-labels",
        H,
    ),
];

/// Portworx's procedure for a node that is gone (its VM was lost).
pub(crate) const DECOMMISSION_OFFLINE: Piece = &[
    st(
        "decommission.offline-node-id",
        Tenant,
        true,
        "Find the Portworx node ID of the lost node",
        &["pxctl", "status"],
        "the node <vm-w{worker}> is Offline; call its ID <node-id-w{worker}>",
        "px-scale-down",
        H,
    ),
    DECOMMISSION_LIVE[1],
    st(
        "decommission.offline-replicas",
        Tenant,
        true,
        "List the volumes that had a replica on the lost node",
        &["pxctl", "volume", "list", "--node", "<node-id-w{worker}>"],
        "volumes with repl 1 there are lost (restore them from backup); the others run degraded until replication is restored",
        "px-decommission",
        H,
    ),
    st(
        "decommission.offline-cluster-delete",
        Tenant,
        true,
        "Remove the lost node from the Portworx cluster (always required)",
        &["pxctl", "cluster", "delete", "<node-id-w{worker}>"],
        "`pxctl cluster list` no longer lists <node-id-w{worker}>",
        "px-scale-down",
        H,
    ),
];

/// After a node left: replication back to the tenant's factor.
pub(crate) const RESTORE_REPLICATION: Piece = &[st(
    "decommission.restore-replication",
    Tenant,
    false,
    "Restore replication of the volumes that lost or moved a replica",
    &[
        "pxctl",
        "volume",
        "ha-update",
        "--repl",
        "{repl}",
        "<volume>",
    ],
    "`pxctl volume list` shows every volume up with HA {repl} (or its own factor)",
    "px-decommission",
    H,
)];

// ---- NodePool ------------------------------------------------------------------

/// Remove one chosen VM from the NodePool.
pub(crate) const NODEPOOL_REMOVE_VM: Piece = &[
    st(
        "nodepool.mark-machine",
        Management,
        true,
        "Mark the VM's Machine for deletion, so the NodePool removes this VM and no other",
        &[
            "oc",
            "annotate",
            "machine",
            "-n",
            "{hcp}",
            "<vm-w{worker}>",
            "cluster.x-k8s.io/delete-machine=yes",
        ],
        "the Machine exists under the VM's name [M]; if not, find it by its node in `oc get machines -n {hcp} -o wide`",
        "capi-delete-machine",
        M,
    ),
    st(
        "nodepool.scale-in",
        Local,
        false,
        "Lower spec.hostedCluster.replicas in the spec, then apply: the NodePool {nodepool} shrinks; the removed workers' drives are retained",
        &[
            "pxfa",
            "apply",
            "-f",
            "{spec}",
            "--yes",
            "--kubeconfig",
            "<management-kubeconfig>",
        ],
        "`oc get vm -n {hcp}` no longer lists the marked VM, and every other VM is still there",
        "hcp-manage",
        H,
    ),
];

/// Grow the NodePool by editing the spec.
pub(crate) const NODEPOOL_SCALE_OUT: Piece = &[
    st(
        "nodepool.plan-out",
        Local,
        false,
        "Raise spec.hostedCluster.replicas in the spec and read the plan",
        &["pxfa", "plan", "-f", "{spec}"],
        "existing drives are `= keep` (never resized); the pod quota rises before new drives",
        "pxfa-lifecycle",
        H,
    ),
    st(
        "nodepool.scale-out",
        Local,
        false,
        "Apply: the pod quota, the new workers' claims and disks, the NodePool {nodepool}",
        &[
            "pxfa",
            "apply",
            "-f",
            "{spec}",
            "--yes",
            "--kubeconfig",
            "<management-kubeconfig>",
            "--tenant-kubeconfig",
            "<tenant-kubeconfig>",
        ],
        "`oc get nodepool -n {hc_ns} {nodepool}` shows the new replica count ready",
        "hcp-manage",
        H,
    ),
];

/// A cloud-drive node that joins after install is a storage node only when its
/// Node asks for a driveset, once; pxfa does not set the label NodePool-wide (a
/// replacement VM would then make new drives instead of taking over the orphaned
/// driveset).
pub(crate) const CD_LABEL_NEW_NODE: Piece = &[st(
    "node.storage-label",
    Tenant,
    false,
    "Ask Portworx for a driveset on the new node (a one-time request, on this Node only)",
    &[
        "oc",
        "label",
        "node",
        "<new-node>",
        "portworx.io/provision-storage-node=true",
    ],
    "`pxctl clouddrive list` shows a new driveset for <new-node>; without the label it joins storageless",
    "px-node-labels",
    H,
)];

/// The new node is in the Portworx cluster with a pool.
pub(crate) const NEW_NODE_JOINED: Piece = &[st(
    "node.joined",
    Tenant,
    false,
    "Check Portworx lists the new storage node with its pool",
    &["oc", "get", "storagenodes", "-n", "{px_ns}"],
    "the new node is Online with a pool (`pxctl status` says the same)",
    "px-hcp",
    H,
)];

// ---- direct-access drives --------------------------------------------------------

/// The worker's claims are bound and its drives tagged.
pub(crate) const DA_STATUS: Piece = &[st(
    "drives.status",
    Local,
    false,
    "Check claims bound, drives tagged and the StorageCluster online",
    &[
        "pxfa",
        "status",
        "-f",
        "{spec}",
        "--kubeconfig",
        "<management-kubeconfig>",
        "--tenant-kubeconfig",
        "<tenant-kubeconfig>",
    ],
    "every drive `present, tagged`, every claim Bound, the StorageCluster {stc} online",
    "pxfa-lifecycle",
    H,
)];

/// A PV's reclaim policy set to Delete: deleting its claim then deletes the volume
/// through its driver (the management Portworx, for dynamic drives).
const RECLAIM_DELETE: &[&str] = &[
    "oc",
    "patch",
    "pv",
    "<pv>",
    "--type",
    "merge",
    "-p",
    "{\"spec\":{\"persistentVolumeReclaimPolicy\":\"Delete\"}}",
];

/// Delete the Released PVs of deleted claims (import provisioning: their policy is
/// Retain, and pxfa destroyed the drives on the array).
const RELEASE_PVS: StepTemplate = st(
    "release.pvs",
    Management,
    false,
    "(import provisioning) Delete the Released PVs of those claims",
    &["oc", "delete", "pv", "<pv>"],
    "`oc get pv` lists no Released PV whose claim was in {hcp}",
    "k8s-retain",
    H,
);

/// Release the drives of removed workers and clear what Kubernetes keeps. Dynamic
/// provisioning: the management Portworx created the drives, so it deletes them
/// with their claims once each PV's reclaim policy is Delete (as `delete` does;
/// pxfa keeps them unless `--destroy-dynamic-drives`) [L]. Import: pxfa made
/// them, so pxfa destroys them and the Released PVs go by hand.
pub(crate) const DA_RELEASE: Piece = &[
    st(
        "release.reclaim-delete",
        Management,
        true,
        "(dynamic provisioning) Let the management Portworx delete the removed worker's drives with their claims: set the reclaim policy of each PV noted in the first step to Delete",
        RECLAIM_DELETE,
        "`oc get pv <pv> -o jsonpath={.spec.persistentVolumeReclaimPolicy}` prints Delete for every PV of worker {worker}",
        "k8s-reclaim-policy",
        H,
    ),
    st(
        "release.claims-delete",
        Management,
        true,
        "(dynamic provisioning) Delete the removed worker's claims: the management Portworx deletes each drive on the array and its PV",
        &["oc", "delete", "pvc", "-n", "{hcp}", "{claims}"],
        "`oc get pv <pv>` says NotFound for every PV of worker {worker}; `pxfa plan -f {spec}` retains no drive of worker {worker} (a PV stuck Released or Failed: `oc describe pv <pv>` names the driver's error) [M]",
        "px-fada",
        M,
    ),
    st(
        "release.drives",
        Local,
        false,
        "(import provisioning) Soft-destroy the removed workers' retained drives on the array",
        &[
            "pxfa",
            "apply",
            "-f",
            "{spec}",
            "--yes",
            "--release-removed-workers",
        ],
        "the plan shows `- destroy` only for indexes at or past spec.hostedCluster.replicas",
        "pxfa-lifecycle",
        H,
    ),
    st(
        "release.claims",
        Management,
        true,
        "(import provisioning) Delete the removed worker's claims (their PVs go Released; Retain keeps nothing on the array now)",
        &["oc", "delete", "pvc", "-n", "{hcp}", "{claims}"],
        "`oc get pv` shows the PVs noted in the first step as Released",
        "k8s-retain",
        H,
    ),
    RELEASE_PVS,
];

/// Replace a lost VM's node: the new VM gets the worker's disks, wiped, and joins
/// as a new Portworx node.
pub(crate) const DA_REJOIN_WIPED: Piece = &[
    st(
        "replace.vm-gone",
        Management,
        true,
        "Make sure the old VM is gone for good (not moved, not being deleted)",
        &["oc", "get", "vm", "-n", "{hcp}"],
        "<vm-w{worker}> is not listed; a new VM without a worker index is",
        "pxfa-cluster",
        H,
    ),
    st(
        "replace.hold-px",
        Tenant,
        false,
        "Keep Portworx off the new node until its disks are wiped",
        &[
            "oc",
            "label",
            "node",
            "<new-vm>",
            "px/enabled=false",
            "--overwrite",
        ],
        "no Portworx pod runs on <new-vm>",
        "px-node-labels",
        H,
    ),
    st(
        "replace.attach",
        Local,
        false,
        "Give the worker's disks to the new VM (the old node is decommissioned, so no two Portworx nodes share them)",
        &[
            "pxfa",
            "apply",
            "-f",
            "{spec}",
            "--yes",
            "--kubeconfig",
            "<management-kubeconfig>",
            "--adopt-replaced-vms",
        ],
        "`oc get vm -n {hcp} <new-vm> -o yaml` has annotation pxfa.io/worker-index and the disks pxdata*/pxmeta",
        "pxfa-cluster",
        H,
    ),
    st(
        "replace.wipe",
        Tenant,
        true,
        "Wipe the old node's signatures from the disks, so Portworx takes them as new",
        &[
            "oc",
            "debug",
            "node/<new-vm>",
            "--",
            "chroot",
            "/host",
            "wipefs",
            "-a",
            "{devices}",
        ],
        "`lsblk -f` on the node shows no signature on these disks",
        "wipefs",
        M,
    ),
    st(
        "replace.release-px",
        Tenant,
        false,
        "Let Portworx start on the new node: it joins as a new node",
        &["oc", "label", "node", "<new-vm>", "px/enabled-"],
        "`pxctl status` lists <new-vm> Online with a new node ID and its pool",
        "px-node-labels",
        H,
    ),
];

/// The data drives grow (FADA claims expand), then Portworx resizes the pools.
pub(crate) const DA_GROW: Piece = &[
    st(
        "grow.plan",
        Local,
        false,
        "Raise spec.storage.capacity and read the plan",
        &["pxfa", "plan", "-f", "{spec}"],
        "\"capacity growth: resize\" names the new drive size ({old_gib} -> {grow_gib} GiB); no refusal for the pool ceiling",
        "pxfa-lifecycle",
        H,
    ),
    st(
        "grow.apply",
        Local,
        false,
        "Apply: the pod quota first, then larger claims (the FADA volumes expand)",
        &[
            "pxfa",
            "apply",
            "-f",
            "{spec}",
            "--yes",
            "--kubeconfig",
            "<management-kubeconfig>",
        ],
        "`oc get pvc -n {hcp}` shows the new capacity on every data claim",
        "pxfa-lifecycle",
        H,
    ),
    st(
        "grow.rescan",
        Tenant,
        true,
        "Rescan the grown disks in the guest and check their size: a SCSI disk reports its new capacity only on a rescan (the kernel's CAPACITY_DATA_HAS_CHANGED unit attention triggers one only through the 90-scsi-ua.rules udev rule, which direct-access guests lack); a virtio disk has no rescan file and resizes by itself",
        &[
            "oc",
            "debug",
            "node/<vm-w{worker}>",
            "--",
            "chroot",
            "/host",
            "sh",
            "-c",
            "for d in {data_devices}; do r=/sys/class/block/$(basename \"$(readlink -f \"$d\")\")/device/rescan; if [ -e \"$r\" ]; then echo 1 > \"$r\"; fi; done; lsblk {data_devices}",
        ],
        "every data disk shows the new size; that KubeVirt passes a claim's expansion to the running VM is [L]: if not, restart the VM one at a time",
        "rhel-online-resize",
        H,
    ),
    st(
        "grow.pool-update",
        Tenant,
        true,
        "Resize the node's pools onto the grown disks (drives Portworx does not manage), one node at a time",
        &[
            "pxctl",
            "service",
            "pool",
            "update",
            "--resize",
            "<pool-uid>",
        ],
        "`pxctl service pool show` on the node gives each pool its new size before the next node",
        "px-pool-not-managed",
        H,
    ),
];

/// New data disks per worker, each added as a new pool in maintenance mode.
pub(crate) const DA_ADD_POOL: Piece = &[
    st(
        "add-pool.plan",
        Local,
        false,
        "Set spec.storage.capacityGrowth: add-pool, raise spec.storage.capacity and read the plan",
        &["pxfa", "plan", "-f", "{spec}"],
        "the plan adds data drives of the size in use to every worker and names their serials (pxdata<d>)",
        "pxfa-lifecycle",
        H,
    ),
    st(
        "add-pool.apply",
        Local,
        false,
        "Apply: the pod quota, the new claims, and their disks hotplugged into each VM",
        &[
            "pxfa",
            "apply",
            "-f",
            "{spec}",
            "--yes",
            "--kubeconfig",
            "<management-kubeconfig>",
        ],
        "the new claims are Bound and `oc get vm -n {hcp} -o yaml` lists the new pxdata disks",
        "pxfa-lifecycle",
        H,
    ),
    st(
        "add-pool.maintenance",
        Tenant,
        true,
        "Put Portworx on <vm-w{worker}> in maintenance mode (one node at a time)",
        &["pxctl", "service", "maintenance", "--enter"],
        "`pxctl status` on the node reports maintenance mode; no other node is in maintenance",
        "px-service-cli",
        H,
    ),
    st(
        "add-pool.drive-add",
        Tenant,
        true,
        "Add each new disk as a new pool",
        &[
            "pxctl",
            "service",
            "drive",
            "add",
            "--drive",
            "<new-disk-path>",
            "--newpool",
        ],
        "the path is the new serial's /dev/disk/by-id link, made like the StorageCluster's {data_devices}; `pxctl service drive show` lists it",
        "px-service-cli",
        H,
    ),
    st(
        "add-pool.exit",
        Tenant,
        true,
        "Leave maintenance mode",
        &["pxctl", "service", "maintenance", "--exit"],
        "`pxctl service pool show` lists the new pool Online before the next node",
        "px-service-cli",
        H,
    ),
];

// ---- cloud drives ------------------------------------------------------------------

/// Drivesets: what Portworx holds on the array for each node.
pub(crate) const CD_DRIVESETS: Piece = &[st(
    "cloud.drivesets",
    Tenant,
    false,
    "List the drivesets (one per storage node)",
    &["pxctl", "clouddrive", "list"],
    "note the node's driveset and its drives' FlashArray volume IDs",
    "px-clouddrive-cli",
    H,
)];

/// After a node left: its driveset must be gone, or its volumes stay in the pod.
pub(crate) const CD_DRIVESET_GONE: Piece = &[st(
    "cloud.driveset-gone",
    Tenant,
    false,
    "Check the removed node's driveset is gone",
    &["pxctl", "clouddrive", "list"],
    "the node's driveset is not listed; if it is, its volumes stay in array pod {pod} (that Portworx deletes them with the node is [M])",
    "px-clouddrive-cli",
    M,
)];

/// The cloud-drive variant of finding a node (pxfa keeps no worker index there).
pub(crate) const CD_FIND_NODE: Piece = &[st(
    "cloud.node",
    Tenant,
    false,
    "Choose the node and find its Portworx node ID",
    &["pxctl", "status"],
    "call the node <node> and its ID <node-id>",
    "px-decommission",
    H,
)];

/// Decommission a live cloud-drive node: the live steps with `<node>` names.
pub(crate) const CD_DECOMMISSION: Piece = &[
    st(
        "cloud.kvdb",
        Tenant,
        false,
        "Check whether the node is an internal KVDB member",
        &["pxctl", "service", "kvdb", "members"],
        "<node-id> is not listed; a KVDB member cannot be removed: fail it over first. On a 3-node tenant every storage node is a member",
        "px-decommission",
        H,
    ),
    st(
        "cloud.replicas",
        Tenant,
        false,
        "Raise replication of repl-1 volumes with a replica on the node",
        &["pxctl", "volume", "list", "--node", "<node-id>"],
        "each single-replica volume there was raised (`pxctl volume ha-update --repl 2 <volume>`) and is clean",
        "px-decommission",
        H,
    ),
    st(
        "cloud.drain",
        Tenant,
        false,
        "Cordon and drain the node",
        &[
            "oc",
            "adm",
            "drain",
            "<node>",
            "--ignore-daemonsets",
            "--delete-emptydir-data",
        ],
        "no application pod using Portworx volumes runs on <node>",
        "px-decommission",
        H,
    ),
    st(
        "cloud.maintenance",
        Tenant,
        false,
        "Put Portworx on the node in maintenance mode (in its Portworx pod)",
        &["pxctl", "service", "maintenance", "--enter"],
        "`pxctl status` on the node reports maintenance mode",
        "px-decommission",
        H,
    ),
    st(
        "cloud.cluster-delete",
        Tenant,
        false,
        "Remove the node from the Portworx cluster (always required; from another node)",
        &["pxctl", "cluster", "delete", "<node-id>"],
        "`pxctl cluster list` no longer lists <node-id>",
        "px-decommission",
        H,
    ),
];

/// Remove the chosen node's VM from the NodePool (cloud-drive and kubevirt-csi).
pub(crate) const NODEPOOL_REMOVE_NODE: Piece = &[
    st(
        "nodepool.mark-node-machine",
        Management,
        false,
        "Mark the node's Machine for deletion, so the NodePool removes this VM and no other",
        &[
            "oc",
            "annotate",
            "machine",
            "-n",
            "{hcp}",
            "<node>",
            "cluster.x-k8s.io/delete-machine=yes",
        ],
        "the Machine carries the node's name [M]; if not, find it by NODE in `oc get machines -n {hcp} -o wide`",
        "capi-delete-machine",
        M,
    ),
    NODEPOOL_REMOVE_VM[1],
];

/// Grow cloud drives: pxfa raises the pod quota, Portworx resizes its own drives.
pub(crate) const CD_GROW: Piece = &[
    st(
        "cloud.grow-apply",
        Local,
        false,
        "Raise spec.storage.capacity and apply: the pod quota rises so the drives fit",
        &["pxfa", "apply", "-f", "{spec}", "--yes"],
        "`pxfa pod list` shows pod {pod} with the new quota",
        "pxfa-lifecycle",
        H,
    ),
    st(
        "cloud.pool-expand",
        Tenant,
        false,
        "Grow each pool's cloud drives from {old_gib} GiB to {grow_gib} GiB (Portworx manages them: resize-drive), one pool at a time",
        &[
            "pxctl",
            "service",
            "pool",
            "expand",
            "--operation",
            "resize-drive",
            "--size",
            "{grow_gib}",
            "--uid",
            "<pool-uid>",
        ],
        "`pxctl service pool show` gives the pool its new size ({grow_gib} GiB per drive: `pxfa size -f` of the edited spec); PX-StoreV2 pools grow by resize-drive only",
        "px-pool-expand",
        H,
    ),
];

/// Replace a lost cloud-drive VM: the new VM joins storageless and takes over the
/// orphaned driveset (the documented FlashArray cloud-drive failover); only if it
/// does not, the lost node is decommissioned and the new one asks for a driveset.
pub(crate) const CD_REPLACE: Piece = &[
    st(
        "cloud.lost-node",
        Tenant,
        false,
        "Find the lost node's Portworx ID and its driveset",
        &["pxctl", "clouddrive", "list"],
        "the driveset of the lost node <node> (ID <node-id>) is listed and its node is offline",
        "px-clouddrive-cli",
        H,
    ),
    st(
        "cloud.old-machine",
        Management,
        false,
        "Delete the lost VM's Machine if it is still there, so the NodePool makes a new VM",
        &["oc", "delete", "machine", "-n", "{hcp}", "<node>"],
        "`oc get vm -n {hcp}` lists a new VM running in its place; do not label the new node",
        "hcp-manage",
        M,
    ),
    st(
        "cloud.takeover",
        Tenant,
        false,
        "Check the new node took over the orphaned driveset",
        &["pxctl", "clouddrive", "list"],
        "the driveset of <node-id> is now attached to the new node and `pxctl status` lists it Online with the old pools; if not, go on with the next two steps",
        "px-clouddrive-cli",
        M,
    ),
    st(
        "cloud.no-takeover-delete",
        Tenant,
        false,
        "Only if there was no takeover: remove the lost node from the Portworx cluster",
        &["pxctl", "cluster", "delete", "<node-id>"],
        "`pxctl cluster list` no longer lists <node-id>",
        "px-scale-down",
        H,
    ),
    st(
        "cloud.no-takeover-label",
        Tenant,
        false,
        "Only if there was no takeover: ask Portworx for a new driveset on the new node (once, on this Node only)",
        &[
            "oc",
            "label",
            "node",
            "<new-node>",
            "portworx.io/provision-storage-node=true",
        ],
        "`pxctl clouddrive list` shows a new driveset for <new-node>",
        "px-node-labels",
        H,
    ),
];

/// Uninstall the tenant's Portworx so it deletes its drives and hosts first.
pub(crate) const CD_UNINSTALL: Piece = &[
    st(
        "delete.delete-strategy",
        Tenant,
        false,
        "Tell the operator to delete the drives when the StorageCluster goes",
        &[
            "oc",
            "patch",
            "storagecluster",
            "-n",
            "{px_ns}",
            "{stc}",
            "--type",
            "merge",
            "-p",
            "{\"spec\":{\"deleteStrategy\":{\"type\":\"UninstallAndDelete\"}}}",
        ],
        "`oc get storagecluster -n {px_ns} {stc} -o jsonpath={.spec.deleteStrategy.type}` prints UninstallAndDelete (operator 26.3+, Portworx 3.6.2+)",
        "px-storagecluster",
        H,
    ),
    st(
        "delete.uninstall",
        Tenant,
        false,
        "Delete the StorageCluster and wait for the uninstall",
        &[
            "oc",
            "delete",
            "storagecluster",
            "-n",
            "{px_ns}",
            "{stc}",
            "--wait",
        ],
        "no Portworx pod is left in {px_ns}; `pxfa volume list --filter \"name='{pod}::*'\"` is empty and no array host holds the tenant VMs' initiators — else they are orphaned [M]",
        "px-storagecluster",
        M,
    ),
];

/// Delete the HostedCluster (its namespace, claims and VMs go with it).
pub(crate) const DELETE_HOSTED_CLUSTER: Piece = &[st(
    "delete.hosted-cluster",
    Management,
    false,
    "Delete the HostedCluster; the hosted control plane namespace, its VMs and claims go with it",
    &[
        "oc",
        "delete",
        "hostedcluster",
        "-n",
        "{hc_ns}",
        "{hc}",
        "--wait",
    ],
    "`oc get namespace {hcp}` says NotFound",
    "hcp-destroy",
    H,
)];

/// What the HostedCluster's deletion leaves: pxfa's MetalLB pool (still reserving
/// its range) and the Secrets and ConfigMap pxfa rendered in the HostedCluster's
/// namespace. `pxfa orphans` lists any left as `tenant-object`. The selectors name
/// the tenant's identity (`crate::labels::tenant_selector`), so that a same-named
/// tenant of another namespace keeps its objects; what an earlier pxfa labelled
/// with the name alone is not selected, and the check says how to find it.
pub(crate) const DELETE_TENANT_OBJECTS: Piece = &[
    st(
        "delete.metallb",
        Management,
        false,
        "Delete the tenant's MetalLB pool and advertisement (none without management.metallb)",
        &[
            "oc",
            "delete",
            "ipaddresspool,l2advertisement",
            "-n",
            "metallb-system",
            "-l",
            "app.kubernetes.io/managed-by=pxfa,pxfa.io/tenant={tenant},pxfa.io/tenant-namespace={tenant_ns}",
        ],
        "`oc get ipaddresspool,l2advertisement -n metallb-system -l pxfa.io/tenant={tenant},pxfa.io/tenant-namespace={tenant_ns}` finds nothing: the range is free for another tenant. \
         Objects an earlier pxfa labelled without pxfa.io/tenant-namespace are not selected (a same-named tenant of another namespace may own them): \
         list them with `oc get ipaddresspool,l2advertisement -n metallb-system -l 'pxfa.io/tenant={tenant},!pxfa.io/tenant-namespace'` \
         and delete by name only those whose addresses are this tenant's",
        "pxfa-lifecycle",
        H,
    ),
    st(
        "delete.secrets",
        Management,
        false,
        "Delete the pull-secret and SSH-key Secrets and the NodePool ConfigMap pxfa rendered",
        &[
            "oc",
            "delete",
            "secret,configmap",
            "-n",
            "{hc_ns}",
            "-l",
            "app.kubernetes.io/managed-by=pxfa,pxfa.io/tenant={tenant},pxfa.io/tenant-namespace={tenant_ns}",
        ],
        "`pxfa orphans --kubeconfig <management-kubeconfig>` lists no tenant-object of {tenant_ns}/{tenant}. \
         Objects an earlier pxfa labelled without pxfa.io/tenant-namespace are not selected: \
         `oc get secret,configmap -n {hc_ns} -l 'pxfa.io/tenant={tenant},!pxfa.io/tenant-namespace'` lists them \
         (pxfa orphans reports them as kept); delete by name only those this HostedCluster used",
        "pxfa-lifecycle",
        H,
    ),
];

/// Remove what pxfa made on the array.
pub(crate) const PXFA_DESTROY: Piece = &[st(
    "delete.pxfa-destroy",
    Local,
    false,
    "Soft-destroy the tenant's tagged objects on the array (drives, pod; recoverable for the eradication delay)",
    &["pxfa", "destroy", "-f", "{spec}", "--yes"],
    "`pxfa plan --destroy -f {spec}` finds nothing left to remove",
    "pxfa-lifecycle",
    H,
)];

/// Before deleting a direct-access tenant: every drive found and tagged.
pub(crate) const DA_DELETE_PREPARE: Piece = &[st(
    "delete.drives-tagged",
    Local,
    false,
    "Make sure pxfa has found and tagged every drive (untagged drives are not pxfa's to destroy)",
    &[
        "pxfa",
        "apply",
        "-f",
        "{spec}",
        "--yes",
        "--kubeconfig",
        "<management-kubeconfig>",
    ],
    "`pxfa status -f {spec}` shows every drive `present, tagged` and none pending",
    "pxfa-lifecycle",
    H,
)];

/// Dynamic provisioning: the management Portworx created the drives, so it releases
/// them. With the PVs' reclaim policy Delete, the claims going with the namespace
/// make its CSI driver delete each volume on the array and its own record of it; a
/// destroy by pxfa on the array would leave both the record and the PV stale [L].
pub(crate) const DA_DELETE_RELEASE_DYNAMIC: Piece = &[
    st(
        "delete.drive-pvs",
        Management,
        false,
        "(dynamic provisioning) Find the PVs of the tenant's drive claims",
        &[
            "oc",
            "get",
            "pvc",
            "-n",
            "{hcp}",
            "-l",
            "pxfa.io/tenant={tenant}",
            "-o",
            "custom-columns=CLAIM:.metadata.name,PV:.spec.volumeName",
        ],
        "note every PV; call each <pv>",
        "pxfa-cluster",
        H,
    ),
    st(
        "delete.reclaim-delete",
        Management,
        false,
        "(dynamic provisioning) Let the management Portworx delete the drives with their claims: set each PV's reclaim policy to Delete",
        RECLAIM_DELETE,
        "`oc get pv <pv> -o jsonpath={.spec.persistentVolumeReclaimPolicy}` prints Delete for every PV noted",
        "k8s-reclaim-policy",
        H,
    ),
];

/// Dynamic provisioning, after the namespace is gone: Portworx released the drives.
pub(crate) const DA_DELETE_RELEASED_DYNAMIC: Piece = &[st(
    "delete.drives-released",
    Management,
    false,
    "(dynamic provisioning) Wait until the management Portworx has deleted the drives",
    &["oc", "get", "pv", "<pv>"],
    "every PV noted says NotFound; `pxfa plan --destroy -f {spec}` keeps no drive as \"released through the management Portworx\" (a PV stuck Released or Failed: `oc describe pv <pv>` names the driver's error) [M]",
    "px-fada",
    M,
)];

/// The steps that apply to one provisioning strategy only (direct-access delete
/// and scale-in): the dynamic ones release through Portworx, the import ones
/// through the array.
const RELEASE_ONLY_FOR: &[(&str, Strategy)] = &[
    ("delete.drive-pvs", Strategy::Dynamic),
    ("delete.reclaim-delete", Strategy::Dynamic),
    ("delete.drives-released", Strategy::Dynamic),
    ("release.reclaim-delete", Strategy::Dynamic),
    ("release.claims-delete", Strategy::Dynamic),
    ("delete.released-pvs", Strategy::Import),
    ("release.drives", Strategy::Import),
    ("release.claims", Strategy::Import),
    ("release.pvs", Strategy::Import),
];

/// Whether the step with `id` is for `strategy` (`None`: no strategy applies;
/// steps not in [`RELEASE_ONLY_FOR`] are for every strategy).
pub(crate) fn applies_to(id: &str, strategy: Option<Strategy>) -> bool {
    let Some(strategy) = strategy else {
        return true;
    };
    (RELEASE_ONLY_FOR.iter())
        .find(|(only, _)| *only == id)
        .is_none_or(|(_, s)| *s == strategy)
}

/// After the namespace is gone: the Released PVs are what remain.
pub(crate) const DA_DELETE_LEFTOVERS: Piece = &[
    st(
        "delete.released-pvs",
        Management,
        false,
        "(import provisioning) Find the Released PVs the deleted claims left (the claims went with the namespace)",
        &[
            "oc",
            "get",
            "pv",
            "-o",
            "custom-columns=PV:.metadata.name,NS:.spec.claimRef.namespace,CLAIM:.spec.claimRef.name,PHASE:.status.phase",
        ],
        "note every PV whose NS is {hcp}: each is Released",
        "k8s-retain",
        H,
    ),
    RELEASE_PVS,
    st(
        "delete.storage-class",
        Management,
        false,
        "Delete the tenant's FADA StorageClass",
        &["oc", "delete", "storageclass", "{fada_class}"],
        "`oc get storageclass {fada_class}` says NotFound",
        "pxfa-lifecycle",
        H,
    ),
];

// ---- kubevirt-csi --------------------------------------------------------------------

/// The kubevirt-csi tenant's volumes after the HostedCluster is gone.
pub(crate) const CSI_DELETE_LEFTOVERS: Piece = &[st(
    "delete.csi-pvs",
    Management,
    false,
    "Check the guest volumes' infra PVs (the infra claims lived in {hcp})",
    &[
        "oc",
        "get",
        "pv",
        "-o",
        "custom-columns=PV:.metadata.name,NS:.spec.claimRef.namespace,PHASE:.status.phase",
    ],
    "no PV of {hcp} is left, or (infra class with Retain) the Released ones are deleted with `oc delete pv <pv>` once their data is no longer needed",
    "k8s-retain",
    H,
)];

/// Grow a kubevirt-csi NodePool: nothing on the array, the guests' volumes come
/// from the management cluster.
pub(crate) const CSI_SCALE_OUT: Piece = &[st(
    "csi.scale-out",
    Local,
    false,
    "Raise spec.hostedCluster.replicas in the spec and apply: the NodePool {nodepool} grows (nothing changes on the array)",
    &[
        "pxfa",
        "apply",
        "-f",
        "{spec}",
        "--yes",
        "--kubeconfig",
        "<management-kubeconfig>",
    ],
    "`oc get nodepool -n {hc_ns} {nodepool}` shows the new replica count ready",
    "hcp-manage",
    H,
)];

/// Drain a kubevirt-csi node so guest volumes move with the pods.
pub(crate) const CSI_DRAIN: Piece = &[st(
    "csi.drain",
    Tenant,
    false,
    "Cordon and drain the node; kubevirt-csi detaches its volumes as the pods leave",
    &[
        "oc",
        "adm",
        "drain",
        "<node>",
        "--ignore-daemonsets",
        "--delete-emptydir-data",
    ],
    "`oc get volumeattachments` lists none for <node>",
    "hcp-manage",
    M,
)];

/// Replace a kubevirt-csi worker: the NodePool makes a new VM for a deleted Machine.
pub(crate) const CSI_REPLACE: Piece = &[
    CSI_DRAIN[0],
    st(
        "csi.delete-machine",
        Management,
        false,
        "Delete the node's Machine; the NodePool makes a new VM",
        &["oc", "delete", "machine", "-n", "{hcp}", "<node>"],
        "`oc get nodepool -n {hc_ns} {nodepool}` is back to its replica count; the new node is Ready in the tenant",
        "hcp-manage",
        M,
    ),
];

// ---- [L] alternatives, never in the default procedure ---------------------------------

/// A documented alternative that rests on an unconfirmed assumption.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unconfirmed {
    /// What it would do.
    pub what: &'static str,
    /// Why it is off.
    pub why: &'static str,
}

/// Keeping a replaced worker's data by adopting its drives as they are.
pub(crate) const ADOPT_AS_OLD_NODE: Unconfirmed = Unconfirmed {
    what: "Skip the decommission and the wipe, attach the old worker's drives to the new VM (`pxfa apply --adopt-replaced-vms`) and let Portworx take the new VM as the old node",
    why: "[L] no Portworx document says Portworx takes a new VM as the old node from its local drives; the documented path is decommission, wipe, join as a new node",
};

// ---- the plan's next steps --------------------------------------------------------

/// Direct-access scale-in: Portworx's decommission of each removed worker, the VM
/// out of the NodePool, replication restored, the drives released. `pieces` and
/// the plan's next steps for a retained worker both read it.
pub(crate) const DA_SCALE_IN: &[Piece] = &[
    FIND_WORKER_VM,
    DECOMMISSION_LIVE,
    NODEPOOL_REMOVE_VM,
    RESTORE_REPLICATION,
    DA_RELEASE,
];

/// `pieces` as one line per step for one worker, from the step data alone: what a
/// plan lists as next steps, where only the tenant's name and the worker index are
/// known. `{tenant}` and `{worker}` are filled; every other `{name}` becomes the
/// operator's `<name>` (the whole runbook, `pxfa runbook`, fills them from the
/// spec).
pub(crate) fn outline(
    pieces: &[Piece],
    strategy: Option<Strategy>,
    tenant: &str,
    worker: u32,
) -> Vec<String> {
    let fill = |s: &str| {
        let s = s
            .replace("{tenant}", tenant)
            .replace("{worker}", &format!("{worker:02}"));
        unknown_words_as_holes(&s)
    };
    pieces
        .iter()
        .flat_map(|p| p.iter())
        .filter(|t| applies_to(t.id, strategy))
        .map(|t| {
            let mut line = format!("worker {worker}: {}", fill(t.title));
            if !t.command.is_empty() {
                let words: Vec<String> = t.command.iter().map(|w| fill(w)).collect();
                line.push_str(&format!(" (on {}: `{}`)", t.on.as_str(), words.join(" ")));
            }
            line
        })
        .collect()
}

/// `{name}` words left in `s` as `<name>`.
fn unknown_words_as_holes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else {
            break;
        };
        let word = &rest[open + 1..close];
        out.push_str(&rest[..open]);
        if !word.is_empty() && word.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            out.push('<');
            out.push_str(word);
            out.push('>');
        } else {
            out.push_str(&rest[open..=close]);
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

// ---- what pxfa itself could verify ----------------------------------------------------

/// Steps whose outcome pxfa can read once it has the clusters, by step id, with
/// what it checks: `pxfa status --kubeconfig` verifies those in [`STATUS_CHECKS`]
/// (px-cluster's `status::runbook_checks`, which `doctor` can call too); the runbook
/// lists every one (`verifiableBy`).
pub(crate) const VERIFIABLE: &[(&str, &str)] = &[
    (
        "worker.find-vm",
        "management claims of the worker carry pxfa.io/attached-vm naming one existing VM",
    ),
    (
        "nodepool.scale-out",
        "new workers' claims Bound, their drives tagged, one VM per index with pxfa.io/worker-index",
    ),
    (
        "drives.status",
        "claims Bound, drives present and tagged, StorageCluster online (pxfa status today)",
    ),
    (
        "decommission.cluster-delete",
        "the node is gone from the tenant's StorageNodes",
    ),
    (
        "decommission.offline-cluster-delete",
        "the node is gone from the tenant's StorageNodes",
    ),
    (
        "cloud.cluster-delete",
        "the node is gone from the tenant's StorageNodes",
    ),
    (
        "nodepool.scale-in",
        "VMs of the NodePool equal spec.hostedCluster.replicas and carry indexes 0..replicas",
    ),
    (
        "release.drives",
        "drives of removed indexes destroyed on the array (pxfa status today)",
    ),
    (
        "release.pvs",
        "no Released PV whose claim was in the hosted control plane namespace",
    ),
    (
        "replace.attach",
        "the new VM carries the worker index and the worker's disks",
    ),
    ("node.joined", "a StorageNode per worker, Online"),
    (
        "grow.apply",
        "every data claim's capacity is the planned drive size",
    ),
    (
        "add-pool.apply",
        "the new claims Bound and hotplugged into each VM",
    ),
    (
        "delete.delete-strategy",
        "the tenant StorageCluster's spec.deleteStrategy.type is UninstallAndDelete (status shows it; a StorageCluster deleted without it is a problem)",
    ),
    (
        "delete.pxfa-destroy",
        "nothing tagged for the tenant is left live on the array (pxfa plan --destroy today)",
    ),
    (
        "delete.released-pvs",
        "no Released PV whose claim was in the hosted control plane namespace",
    ),
    (
        "nodepool.mark-node-machine",
        "VMs of the NodePool equal spec.hostedCluster.replicas",
    ),
    (
        "csi.scale-out",
        "VMs of the NodePool equal spec.hostedCluster.replicas",
    ),
    (
        "csi.delete-machine",
        "VMs of the NodePool equal spec.hostedCluster.replicas (a new VM in the old one's place)",
    ),
    (
        "delete.csi-pvs",
        "no Released PV whose claim was in the hosted control plane namespace",
    ),
];

/// The steps of `VERIFIABLE` that `pxfa status` checks when it reads the
/// clusters (the management cluster; the node checks also the tenant cluster). The
/// others need the array's or the tenant's state at one moment of the procedure.
pub const STATUS_CHECKS: &[&str] = &[
    "nodepool.scale-out",
    "drives.status",
    "replace.attach",
    "add-pool.apply",
    "worker.find-vm",
    "nodepool.scale-in",
    "grow.apply",
    "release.pvs",
    "delete.released-pvs",
    "decommission.cluster-delete",
    "decommission.offline-cluster-delete",
    "node.joined",
    "nodepool.mark-node-machine",
    "cloud.cluster-delete",
    "delete.delete-strategy",
    "csi.scale-out",
    "csi.delete-machine",
    "delete.csi-pvs",
    "release.drives",
];

/// Whether `pxfa status` checks the step `id` ([`STATUS_CHECKS`]).
pub(crate) fn checked_by_status(id: &str) -> bool {
    STATUS_CHECKS.contains(&id)
}

/// Steps shared by several modes whose [`VERIFIABLE`] words hold for
/// direct-access alone: a cloud-drive scale-out has no claims pxfa renders and no
/// worker index (its new node's join is `node.joined`).
const DIRECT_ACCESS_ONLY: &[&str] = &["nodepool.scale-out"];

/// What pxfa could verify after the step `id` in `mode`, if anything.
pub(crate) fn verifiable_in(id: &str, mode: crate::spec::StorageMode) -> Option<&'static str> {
    if !mode.drives_are_vm_disks() && DIRECT_ACCESS_ONLY.contains(&id) {
        return None;
    }
    verifiable(id)
}

/// What pxfa could verify after the step `id`, if anything.
pub fn verifiable(id: &str) -> Option<&'static str> {
    VERIFIABLE
        .iter()
        .find(|(i, _)| *i == id)
        .map(|(_, what)| *what)
}

// ---- management-cluster maintenance ----------------------------------------------

/// Before any management upgrade (OpenShift, OpenShift Virtualization, Portworx):
/// doctor's live-migration checks, and where the tenant's workers run.
pub(crate) const MAINT_PREPARE: Piece = &[
    st(
        "maint.doctor",
        Local,
        false,
        "Check the site before the upgrade: eviction settings, storage-address persistence and worker spread",
        &[
            "pxfa",
            "doctor",
            "-f",
            "{spec}",
            "--kubeconfig",
            "<management-kubeconfig>",
        ],
        "hyperconverged-eviction (direct-access with ReadWriteOnce drives), storage-address-persistence (cloud-drive) and worker-spread (direct-access, cloud-drive) ok",
        "pxfa-lifecycle",
        H,
    ),
    st(
        "maint.where",
        Management,
        false,
        "List the tenant's worker VMs and the management node each runs on",
        &["oc", "get", "vmi", "-n", "{hcp}", "-o", "wide"],
        "NODENAME differs for every worker (two on one node: that node's drain takes two Portworx nodes and, on 3 workers, the KVDB quorum; move one first); the upgrade goes one management node at a time (MachineConfigPool maxUnavailable 1)",
        "hcp-manage",
        M,
    ),
];

/// Direct-access with ReadWriteOnce drives: the workers cannot live-migrate, so each
/// one is stopped while its management node is drained and started again after.
pub(crate) const MAINT_DA_NODE: Piece = &[
    st(
        "maint.stop-worker",
        Management,
        false,
        "When the node to drain next runs a worker of {tenant} (a drain waits on it, FailedToEvictVM during a Portworx upgrade), stop that VM",
        &["virtctl", "stop", "<vm-on-node>", "-n", "{hcp}"],
        "`pxctl status` in the tenant shows that node offline and every volume still served by its other replicas (replication {repl})",
        "hcp-evict-vms",
        M,
    ),
    st(
        "maint.drain",
        Management,
        false,
        "Let the upgrade drain the node (or drain it yourself for a manual window)",
        &[
            "oc",
            "adm",
            "drain",
            "<management-node>",
            "--ignore-daemonsets",
            "--delete-emptydir-data",
        ],
        "the node is drained and upgraded (`oc get mcp worker` UPDATED, or the Portworx pod on it Running the new version)",
        "virt-node-maintenance",
        M,
    ),
    st(
        "maint.start-worker",
        Management,
        false,
        "Start the worker VM again once its node is back (uncordoned) and wait for its Portworx node before the next node",
        &["virtctl", "start", "<vm-on-node>", "-n", "{hcp}"],
        "`pxctl status` in the tenant shows every node Online again before the next management node is drained",
        "hcp-evict-vms",
        M,
    ),
];

/// cloud-drive and kubevirt-csi (and direct-access with ReadWriteMany drives): the
/// workers live-migrate; check each migration and, for cloud-drive, the storage
/// address the VM kept.
pub(crate) const MAINT_MIGRATE: Piece = &[st(
    "maint.migrations",
    Management,
    false,
    "After each management node: the tenant's VMs migrated off it (the drain or the Portworx upgrade started the migrations)",
    &["oc", "get", "vmim", "-n", "{hcp}"],
    "every VirtualMachineInstanceMigration Succeeded; a cloud-drive worker keeps its storage address only with persistent IPs (`oc get ipamclaims -n {hcp}`), else check it against the whereabouts pool (kubevirt/kubevirt#14320)",
    "virt-node-maintenance",
    M,
)];

/// Portworx's own upgrade on the management cluster, after the operator.
pub(crate) const MAINT_PORTWORX: Piece = &[st(
    "maint.portworx",
    Management,
    false,
    "For a management Portworx upgrade: upgrade the operator, then the StorageCluster image; it restarts Portworx node by node",
    &["oc", "get", "storagenodes", "-A"],
    "every management StorageNode Online on the new version before you call the upgrade done",
    "px-upgrade",
    M,
)];
