//! The pages the runbook's steps follow, one row per page: a step names its page by
//! key, and the page's address and title are written only here.
//!
//! Confidence follows `../shared/reference/portworx-hcp.md`: [H] read in the page,
//! [M] one source, an older copy, or a straightforward inference, [L] unconfirmed.

use serde::Serialize;

/// How sure a step (or the page it rests on) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Confidence {
    /// Read directly in the vendor's page.
    H,
    /// One source only, or a straightforward inference from it.
    M,
    /// Unconfirmed: never part of the default procedure.
    L,
}

impl Confidence {
    /// `[H]`, `[M]` or `[L]`.
    pub fn tag(self) -> &'static str {
        match self {
            Confidence::H => "[H]",
            Confidence::M => "[M]",
            Confidence::L => "[L]",
        }
    }
}

/// A page a step follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Source {
    /// The key steps name it by.
    pub key: &'static str,
    /// The page's title, as its site gives it.
    pub title: &'static str,
    /// Its address.
    pub url: &'static str,
}

/// Every page the runbook cites.
pub(crate) const SOURCES: &[Source] = &[
    Source {
        key: "px-decommission",
        title: "Portworx: Decommission a node",
        url: "https://docs.portworx.com/portworx-enterprise/platform/uninstall/decommission-a-node",
    },
    Source {
        key: "px-scale-down",
        title: "Portworx: Scale down nodes (removing offline nodes)",
        url: "https://docs.portworx.com/portworx-enterprise/reference/cli/scale-down",
    },
    Source {
        key: "px-service-cli",
        title: "Portworx: Service operations using pxctl (maintenance mode, physical drives)",
        url: "https://docs.portworx.com/reference/cli/service",
    },
    Source {
        key: "px-pool-not-managed",
        title: "Portworx: Expand storage pools not managed by Portworx",
        url: "https://docs.portworx.com/portworx-enterprise/operations/scale-portworx-cluster/expand-storage-pool/expand-storage-pool-not-managed-by-px",
    },
    Source {
        key: "px-pool-expand",
        title: "Portworx: Expand your storage pool size (resize-drive)",
        url: "https://docs.portworx.com/portworx-enterprise/3.1/shared/expand-storage-pool-index",
    },
    Source {
        key: "px-fa-prepare",
        title: "Portworx: Prepare your environment for FlashArray (CAPACITY_DATA_HAS_CHANGED rescan rule)",
        url: "https://docs.portworx.com/portworx-enterprise/platform/install/pure-storage/flasharray/prepare",
    },
    Source {
        key: "rhel-online-resize",
        title: "Red Hat Enterprise Linux 7 Storage Administration Guide: Resizing an online logical unit (echo 1 > /sys/block/sdX/device/rescan)",
        url: "https://access.redhat.com/documentation/en-us/red_hat_enterprise_linux/7/html/storage_administration_guide/online-iscsi-resizing",
    },
    Source {
        key: "px-node-labels",
        title: "Portworx: Node labels (portworx.io/provision-storage-node, px/enabled)",
        url: "https://docs.portworx.com/portworx-enterprise/reference/node-labels",
    },
    Source {
        key: "px-clouddrive-cli",
        title: "Portworx: pxctl clouddrive (drivesets)",
        url: "https://docs.portworx.com/reference/cli/pxctl-reference/clouddrive-reference",
    },
    Source {
        key: "px-storagecluster",
        title: "Portworx: StorageCluster reference (deleteStrategy)",
        url: "https://docs.portworx.com/portworx-enterprise/reference/crd/storage-cluster",
    },
    Source {
        key: "px-hcp",
        title: "Portworx: Deploy OpenShift hosted clusters with Portworx",
        url: "https://docs.portworx.com/portworx-enterprise/how-to-guides/install-portworx-openshift-hosted-clusters",
    },
    Source {
        key: "hcp-evict-vms",
        title: "OpenShift: Hosted control planes on OpenShift Virtualization, Evicting KubeVirt virtual machines",
        url: "https://github.com/openshift/openshift-docs/blob/main/modules/hcp-virt-evict-vms.adoc",
    },
    Source {
        key: "virt-node-maintenance",
        title: "OpenShift Virtualization: Node maintenance (eviction strategies, RWX claims for live migration)",
        url: "https://docs.openshift.com/container-platform/4.6/virt/node_maintenance/virt-node-maintenance.html",
    },
    Source {
        key: "px-upgrade",
        title: "Portworx: Upgrade Portworx Enterprise (with the Portworx Operator)",
        url: "https://docs.portworx.com/portworx-enterprise/platform/upgrade",
    },
    Source {
        key: "hcp-manage",
        title: "OpenShift: Managing hosted control planes (node pools)",
        url: "https://docs.okd.io/latest/hosted_control_planes/hcp-managing.html",
    },
    Source {
        key: "hcp-destroy",
        title: "OpenShift: Destroying a hosted cluster on OpenShift Virtualization",
        url: "https://docs.okd.io/latest/hosted_control_planes/hcp-destroy/hcp-destroy-virt.html",
    },
    Source {
        key: "capi-delete-machine",
        title: "HyperShift PR 8369: targeted NodePool scale-down is done today with the Machine annotation cluster.x-k8s.io/delete-machine",
        url: "https://github.com/openshift/hypershift/pull/8369",
    },
    Source {
        key: "k8s-retain",
        title: "Kubernetes: Persistent volumes, reclaiming (Retain leaves a Released PV)",
        url: "https://kubernetes.io/docs/concepts/storage/persistent-volumes/#reclaiming",
    },
    Source {
        key: "k8s-reclaim-policy",
        title: "Kubernetes: Change the Reclaim Policy of a PersistentVolume (Delete: deleting the claim deletes the volume through its driver)",
        url: "https://kubernetes.io/docs/tasks/administer-cluster/change-pv-reclaim-policy/",
    },
    Source {
        key: "px-fada",
        title: "Portworx: Configure FlashArray as a Direct Access volume (CSI operations: create, ..., delete)",
        url: "https://docs.portworx.com/portworx-enterprise/provision-storage/create-pvcs/pure-flasharray",
    },
    Source {
        key: "wipefs",
        title: "wipefs(8): wipe a signature from a device",
        url: "https://man7.org/linux/man-pages/man8/wipefs.8.html",
    },
    Source {
        key: "pxfa-cluster",
        title: "pxfa: docs/cluster.md (worker indexes, VM disks, --adopt-replaced-vms)",
        url: "docs/cluster.md",
    },
    Source {
        key: "pxfa-lifecycle",
        title: "pxfa: docs/lifecycle.md (scale, grow, release, destroy)",
        url: "docs/lifecycle.md",
    },
];

/// The page `key` names; every key a step uses is in [`SOURCES`] (a test says so).
pub(crate) fn source(key: &str) -> Option<&'static Source> {
    SOURCES.iter().find(|s| s.key == key)
}
