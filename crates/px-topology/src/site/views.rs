//! What was read from each layer of the site, as plain values. px-cluster fills the
//! cluster views, the CLI the array view; the checks and the facts are computed from
//! them.

/// The answer to one read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read<T> {
    /// The object (or the value in it) was found.
    Found(T),
    /// The API server answered that it does not exist (404: the object, or its kind
    /// because the operator that serves it is not installed).
    Missing,
    /// It could not be read (forbidden, not answered); the text says why.
    Unreadable(String),
}

impl<T> Read<T> {
    /// The found value, if any.
    pub fn found(&self) -> Option<&T> {
        match self {
            Read::Found(v) => Some(v),
            _ => None,
        }
    }

    /// Maps the found value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Read<U> {
        match self {
            Read::Found(v) => Read::Found(f(v)),
            Read::Missing => Read::Missing,
            Read::Unreadable(why) => Read::Unreadable(why),
        }
    }
}

/// One management StorageCluster (the management Portworx).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StorageClusterView {
    /// The StorageCluster's namespace (where the management Portworx runs).
    pub namespace: String,
    /// The StorageCluster's name within it.
    pub name: String,
    /// `status.version`, else the tag of `spec.image`.
    pub version: Option<String>,
    /// The annotation `portworx.io/pure-csi-integration` is `"true"`.
    pub fa_fb_driver: bool,
    /// `status.phase` (`Running`, `Online`, `Initializing`, ...).
    pub phase: Option<String>,
}

/// One MetalLB IPAddressPool.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PoolView {
    /// The pool's name (in MetalLB's namespace).
    pub name: String,
    /// `spec.autoAssign` (default true).
    pub auto_assign: bool,
    /// `spec.serviceAllocation.namespaces`; empty: every namespace (unless selectors
    /// restrict it).
    pub namespaces: Vec<String>,
    /// `spec.serviceAllocation.namespaceSelectors` or `serviceSelectors` is set: the
    /// pool serves only what they select, which doctor does not evaluate.
    pub selectors: bool,
}

/// MetalLB on the management cluster.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetallbView {
    /// A `MetalLB` instance exists in `metallb-system`.
    pub instance: bool,
    /// The IPAddressPools of every namespace.
    pub pools: Vec<PoolView>,
}

/// OpenShift Virtualization's cluster-wide eviction settings (HyperConverged).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EvictionView {
    /// `spec.evictionStrategy` (or `spec.virtualization.evictionStrategy`, where
    /// Red Hat's procedure writes it); `None` when unset.
    pub strategy: Option<String>,
    /// `spec.workloadUpdateStrategy.workloadUpdateMethods` (or under
    /// `spec.virtualization`).
    pub update_methods: Vec<String>,
}

/// One node's storage uplink, from its NodeNetworkState.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UplinkView {
    /// Node name.
    pub node: String,
    /// The uplink's MTU, `None` when the node has no interface of that name.
    pub mtu: Option<u32>,
    /// The nmstate type of the interface named as the spec's storage bridge
    /// (`linux-bridge`, `ovs-bridge`), `None` when the node has none.
    pub bridge_type: Option<String>,
}

/// Where one of the tenant NodePool's worker VMs runs, from its
/// VirtualMachineInstance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerPlacement {
    /// The VMI's name (the worker VM's).
    pub vm: String,
    /// `status.nodeName`: the management node it runs on, `None` while unscheduled.
    pub node: Option<String>,
}

/// One MachineConfig: its name and the files it writes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MachineConfigView {
    /// `metadata.name`.
    pub name: String,
    /// `spec.config.storage.files[].path`.
    pub files: Vec<String>,
}

/// A Secret holding an array credential (a `pure.json`), found on a cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialView {
    /// `management` or `tenant`.
    pub cluster: String,
    /// The Secret's namespace on that cluster.
    pub namespace: String,
    /// The Secret's name within it.
    pub name: String,
    /// The token in it is the one pxfa itself is running with, an array
    /// administrator's; `None` when it was not compared.
    pub is_admin_token: Option<bool>,
}

/// An object the bundle references but does not create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRead {
    /// `Secret`, `Namespace`.
    pub kind: String,
    /// Namespace, for namespaced kinds.
    pub namespace: Option<String>,
    /// The object's name, as the spec gives it.
    pub name: String,
    /// Where the spec names it (`spec.hostedCluster.pullSecret`).
    pub field: String,
    /// Whether it is there.
    pub read: Read<()>,
}

/// What was read from the management cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagementView {
    /// ClusterVersion `version` `status.desired.version`.
    pub openshift_version: Read<String>,
    /// HyperConverged `openshift-cnv/kubevirt-hyperconverged`
    /// `status.versions[name=operator].version`.
    pub virtualization_version: Read<String>,
    /// KubeVirt `openshift-cnv/kubevirt-kubevirt-hyperconverged`
    /// `spec.configuration.developerConfiguration.featureGates`.
    pub kubevirt_feature_gates: Read<Vec<String>>,
    /// MultiClusterEngine `multiclusterengine` `spec.overrides.components`: name and
    /// `enabled`.
    pub mce_components: Read<Vec<(String, bool)>>,
    /// MetalLB (Missing: its API is not served, the operator is not installed).
    pub metallb: Read<MetallbView>,
    /// NMState `nmstate` (Missing: no instance, or the operator is not installed).
    pub nmstate: Read<()>,
    /// Every NodeNetworkState's interfaces named as the spec's uplink and bridge.
    pub uplinks: Read<Vec<UplinkView>>,
    /// DaemonSet `openshift-multus/whereabouts-reconciler`.
    pub whereabouts_reconciler: Read<()>,
    /// Network.operator.openshift.io `cluster` `spec.defaultNetwork.type`
    /// (`OVNKubernetes`).
    pub network_type: Read<String>,
    /// OpenShift Virtualization's IPAM controller, which keeps a VM's address in an
    /// IPAMClaim across live migration: HyperConverged
    /// `spec.featureGates.deployKubevirtIpamController`, or its Deployment
    /// `openshift-cnv/kubevirt-ipam-controller-manager` found running.
    pub ipam_controller: Read<bool>,
    /// HyperConverged `openshift-cnv/kubevirt-hyperconverged` eviction settings.
    pub eviction: Read<EvictionView>,
    /// The tenant NodePool's VirtualMachineInstances in the hosted control plane
    /// namespace, with the node each runs on.
    pub worker_placement: Read<Vec<WorkerPlacement>>,
    /// StorageClusters of every namespace.
    pub portworx: Read<Vec<StorageClusterView>>,
    /// StorageClass names.
    pub storage_classes: Read<Vec<String>>,
    /// VolumeSnapshotClass names (Missing: the snapshot API is not served).
    pub snapshot_classes: Read<Vec<String>>,
    /// MachineConfigs: name and the paths of the files they write.
    pub machine_configs: Read<Vec<MachineConfigView>>,
    /// Secrets and namespaces the bundle references but does not create.
    pub referenced: Vec<ObjectRead>,
    /// Array credentials found in Secrets (the management Portworx's, and any in
    /// the tenant's namespaces).
    pub credentials: Read<Vec<CredentialView>>,
}

impl ManagementView {
    /// A view where nothing could be read (no kubeconfig): every check is unknown.
    pub fn unread(why: &str) -> ManagementView {
        fn u<T>(why: &str) -> Read<T> {
            Read::Unreadable(why.to_string())
        }
        ManagementView {
            openshift_version: u(why),
            virtualization_version: u(why),
            kubevirt_feature_gates: u(why),
            mce_components: u(why),
            metallb: u(why),
            nmstate: u(why),
            uplinks: u(why),
            whereabouts_reconciler: u(why),
            network_type: u(why),
            ipam_controller: u(why),
            eviction: u(why),
            worker_placement: u(why),
            portworx: u(why),
            storage_classes: u(why),
            snapshot_classes: u(why),
            machine_configs: u(why),
            referenced: Vec::new(),
            credentials: u(why),
        }
    }
}

/// What was read from the tenant (hosted) cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantView {
    /// The Portworx operator's Subscription in the Portworx namespace, with its
    /// `status.installedCSV` (empty when none yet).
    pub operator: Read<String>,
    /// Secret `px-pure-secret` in the Portworx namespace.
    pub pure_secret: Read<()>,
    /// The tenant StorageCluster's `status.phase`.
    pub storage_cluster: Read<String>,
    /// Every StorageNode: name and `status.phase`.
    pub storage_nodes: Read<Vec<(String, String)>>,
    /// The validation claim's `status.phase`.
    pub validation_claim: Read<String>,
    /// Array credentials found in the tenant cluster's Secrets.
    pub credentials: Read<Vec<CredentialView>>,
}

/// What was read from the array.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArrayView {
    /// Why the array could not be reached; `None` when it answered.
    pub unreachable: Option<String>,
    /// Array name.
    pub name: Option<String>,
    /// Purity version.
    pub purity_version: Option<String>,
    /// The REST 2.x minor version in use.
    pub rest_minor: Option<u32>,
    /// The REST 2.x minor the spec's features need, with the feature
    /// (`realms: 2.36`); `None` when the spec needs nothing beyond the oldest.
    pub rest_needed: Option<(u32, String)>,
    /// SafeMode: eradication is locked (destroyed volumes cannot be eradicated
    /// before their timer); `None` when not reported.
    pub safemode: Option<bool>,
    /// The preflight's findings (space, pod quota).
    pub space_findings: Vec<String>,
    /// Management nodes whose initiators no host holds yet (node names).
    pub nodes_without_host: Vec<String>,
    /// Why the plan has no hosts for the tenant (`attach: fada`: the management
    /// Portworx connects drives on demand), when it has none: a node without a host
    /// is then told, not warned about (pxfa makes none).
    pub no_hosts_planned: Option<String>,
    /// Objects that stop the plan (foreign objects with pxfa's names, ...), as
    /// `kind name: reason`.
    pub blockers: Vec<String>,
}
