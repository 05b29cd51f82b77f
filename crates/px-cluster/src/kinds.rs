//! The kinds px-cluster reads or writes by name, as typed group/version/kind with
//! their REST plural, so that a typo is a compile error rather than a 404 at run time.
//! Kinds that only come from rendered manifests are resolved by discovery instead.

use kube::core::GroupVersionKind;
use kube::discovery::ApiResource;

/// A kind with its REST resource name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kind {
    /// API group (`""` for core).
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    /// REST resource name (`virtualmachines`).
    pub plural: &'static str,
}

impl Kind {
    /// The group/version/kind.
    pub(crate) fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind::gvk(self.group, self.version, self.kind)
    }

    /// The resource for a dynamic `Api`.
    pub(crate) fn resource(&self) -> ApiResource {
        ApiResource::from_gvk_with_plural(&self.gvk(), self.plural)
    }
}

/// KubeVirt's `VirtualMachine`: worker VMs of the NodePool.
pub(crate) const VIRTUAL_MACHINE: Kind = Kind {
    group: "kubevirt.io",
    version: "v1",
    kind: "VirtualMachine",
    plural: "virtualmachines",
};

/// HyperShift's `HostedCluster`: whether a tenant's hosted cluster exists, is made
/// or is being deleted (`pxfa orphans`' evidence).
pub(crate) const HOSTED_CLUSTER: Kind = Kind {
    group: "hypershift.openshift.io",
    version: "v1beta1",
    kind: "HostedCluster",
    plural: "hostedclusters",
};

/// KubeVirt's `VirtualMachineInstance`: the running VMs, with guest interface names.
pub(crate) const VIRTUAL_MACHINE_INSTANCE: Kind = Kind {
    group: "kubevirt.io",
    version: "v1",
    kind: "VirtualMachineInstance",
    plural: "virtualmachineinstances",
};

/// Portworx's `StorageNode` in the tenant.
pub(crate) const STORAGE_NODE: Kind = Kind {
    group: "core.libopenstorage.org",
    version: "v1",
    kind: "StorageNode",
    plural: "storagenodes",
};

/// Portworx's `StorageCluster` in the tenant.
pub(crate) const STORAGE_CLUSTER: Kind = Kind {
    group: "core.libopenstorage.org",
    version: "v1",
    kind: "StorageCluster",
    plural: "storageclusters",
};

/// nmstate's `NodeNetworkConfigurationPolicy` on the management cluster.
pub(crate) const NNCP: Kind = Kind {
    group: "nmstate.io",
    version: "v1",
    kind: "NodeNetworkConfigurationPolicy",
    plural: "nodenetworkconfigurationpolicies",
};

/// Core `PersistentVolumeClaim`.
pub(crate) const PVC: Kind = Kind {
    group: "",
    version: "v1",
    kind: "PersistentVolumeClaim",
    plural: "persistentvolumeclaims",
};
