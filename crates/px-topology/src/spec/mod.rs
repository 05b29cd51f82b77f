//! The `TenantStorage` spec: parsing with field paths, defaults, semantic validation
//! and the derived values other modules need.
//!
//! Parsing goes YAML text -> `serde_json::Value` (serde-saphyr) -> typed structs
//! through `serde_path_to_error`, so every error names the field it is about:
//! `spec.storage.capacity: "4 TB" is not a valid size ...`. Validation then checks
//! what types cannot (mode/protocol combinations, initiators, addresses, limits) and
//! reports every problem at once, not only the first.

mod identifiers;
pub mod limits;
mod mode;
mod model;
mod net;
#[cfg(test)]
mod proptests;
pub mod provisioning;
pub mod realm;
mod schema;
pub(crate) mod tags;
mod validate;
mod version;

use std::fmt;
use std::path::Path;

use flasharray::Size;

pub(crate) use identifiers::escape_unprintable;
pub use identifiers::is_unprintable;
pub use model::*;
pub use net::{Ipv4Cidr, Ipv4Range};
pub use version::Version;

/// Largest spec read, in bytes: a spec file's limit (`files`).
pub(crate) use crate::files::MAX_SPEC_BYTES;

/// Longest tenant name. Derived names append worker, disk and role parts to it and
/// must fit the array's 63 characters; 40 keeps them whole and readable (longer
/// names would have to be cut and hashed).
pub(crate) const MAX_TENANT_NAME: usize = 40;

/// Default PX-StoreV2 pool ceiling (`-max_thin_pool_size`), per the Portworx
/// PX-StoreV2 page for 3.1 ([M] in the reference: configurable with
/// `spec.portworx.maxPoolSize`).
pub(crate) const DEFAULT_MAX_POOL_SIZE: Size = Size::tib(15);

/// One problem with a spec, at a field path such as `spec.storage.capacity`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SpecError {
    /// Dotted path of the field (`spec.management.nodes[1].wwns[0]`), or `document`
    /// when the YAML itself cannot be read.
    pub path: String,
    /// What is wrong and, where possible, how to fix it.
    pub message: String,
}

impl SpecError {
    /// An error at `path`. Control characters in the path or message (a map key or
    /// a value the parser quotes as it was written) are escaped
    /// (`escape_unprintable`): the error is printed, and input must never drive
    /// the terminal.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        let (path, message) = (path.into(), message.into());
        SpecError {
            path: escape_unprintable(&path).into_owned(),
            message: escape_unprintable(&message).into_owned(),
        }
    }
}

/// Every problem found in a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecErrors(pub Vec<SpecError>);

impl fmt::Display for SpecErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecErrors {}

impl From<SpecError> for SpecErrors {
    fn from(e: SpecError) -> Self {
        SpecErrors(vec![e])
    }
}

/// The YAML parser's budget: a spec is one small document, so a few tens of
/// thousands of nodes, shallow nesting and few aliases are plenty. The library's
/// defaults (250,000 nodes) let an alias bomb cost half a second and 80 MB before
/// it is refused; these make it a millisecond.
pub(crate) fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = 200_000;
    budget.max_nodes = 50_000;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    budget.max_recorded_anchor_events = 50_000;
    budget.max_recorded_anchor_bytes = MAX_SPEC_BYTES;
    budget.max_total_scalar_bytes = MAX_SPEC_BYTES;
    budget.max_depth = 32;
    budget.max_documents = 1;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// Parses a spec: structure, types and defaults. Semantic rules are checked by
/// [`TenantStorage::validate`]; [`parse_valid_spec`] does both.
pub fn parse_spec(yaml: &str) -> Result<TenantStorage, SpecError> {
    if yaml.len() > MAX_SPEC_BYTES {
        return Err(SpecError::new(
            "document",
            format!(
                "{} bytes is more than a spec can be ({MAX_SPEC_BYTES} bytes)",
                yaml.len()
            ),
        ));
    }
    let value: serde_json::Value = serde_saphyr::from_str_with_options(yaml, yaml_options())
        .map_err(|e| SpecError::new("document", format!("not valid YAML: {e}")))?;
    if let Some(t) = tags::unknown_tags(yaml).into_iter().next() {
        return Err(SpecError::new(t.path.clone(), t.message()));
    }
    from_value(value)
}

/// Parses a spec already read into a JSON value (a YAML document from a
/// multi-document file, or a custom resource fetched from a cluster).
pub fn from_value(value: serde_json::Value) -> Result<TenantStorage, SpecError> {
    if !value.is_object() {
        return Err(SpecError::new(
            "document",
            "expected a mapping with apiVersion, kind, metadata and spec",
        ));
    }
    let mut spec: TenantStorage = serde_path_to_error::deserialize(value).map_err(|e| {
        let parent = e.path().to_string();
        let parent = (parent != "." && !parent.is_empty()).then_some(parent);
        let message = e.into_inner().to_string();
        // serde reports a missing field at its parent; name the field itself, so
        // that `spec.network.subnet` is the path, as for every other error.
        let missing = message
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'));
        let path = match (parent, missing) {
            (Some(p), Some(field)) => format!("{p}.{field}"),
            (None, Some(field)) => field.to_string(),
            (Some(p), None) => p,
            (None, None) => "document".to_string(),
        };
        SpecError::new(path, message)
    })?;
    spec.resolve_defaults();
    Ok(spec)
}

/// Parses and validates; every problem is reported.
pub fn parse_valid_spec(yaml: &str) -> Result<TenantStorage, SpecErrors> {
    let spec = parse_spec(yaml)?;
    let errors = spec.validate();
    if errors.is_empty() {
        Ok(spec)
    } else {
        Err(SpecErrors(errors))
    }
}

/// Reads, parses and validates a spec file. The file is read as an admin's input
/// ([`crate::files::read_input`]): a FIFO, a device or a file over
/// `MAX_SPEC_BYTES` is refused without blocking or being read into memory.
pub fn load_spec(path: impl AsRef<Path>) -> Result<TenantStorage, SpecErrors> {
    let path = path.as_ref();
    let text = crate::files::read_input_text(path, crate::files::InputKind::Spec).map_err(|e| {
        SpecErrors(vec![SpecError::new(
            path.display().to_string(),
            format!("cannot read the spec: {e}"),
        )])
    })?;
    parse_valid_spec(&text)
}

/// How long a tenant token lives when `spec.array.tokenLifetime` is absent: a year,
/// so that a token pxfa made does not work forever, and a yearly `pxfa token
/// rotate` keeps it fresh without a gap.
pub(crate) const DEFAULT_TOKEN_LIFETIME: std::time::Duration =
    std::time::Duration::from_secs(365 * 86_400);

/// `spec.array.tokenLifetime` as written: `never`, or a duration (`Err`: the reason).
pub(crate) fn parse_token_lifetime(s: &str) -> Result<Option<std::time::Duration>, String> {
    if s == "never" {
        return Ok(None);
    }
    let d = humantime::parse_duration(s)
        .map_err(|e| format!("{s:?} is neither a duration (365d, 2160h) nor never: {e}"))?;
    if d < std::time::Duration::from_secs(86_400) {
        return Err(format!(
            "{s:?} is under a day: the token would expire before a rotation could replace it"
        ));
    }
    Ok(Some(d))
}

/// The token user of a tenant named `name` whose spec names none: `pxfa-<name>`.
/// It derives from the name alone, so same-named tenants of two namespaces share it
/// unless one names its own (`spec.array.tokenUser`): the plan refuses the second
/// (`plan::token`), and destroy and rotation never touch a user another tenant's
/// objects may use.
pub(crate) fn default_token_user(name: &str) -> String {
    format!("pxfa-{name}")
}

impl TenantStorage {
    /// Checks the semantic rules; empty when the spec is valid.
    pub fn validate(&self) -> Vec<SpecError> {
        validate::validate(self)
    }

    /// Fills the name-derived defaults in, so that a serialised spec shows the
    /// effective values. Idempotent.
    pub fn resolve_defaults(&mut self) {
        let name = self.metadata.name.clone();
        let hc = &mut self.spec.hosted_cluster;
        if hc.node_pool.is_none() {
            hc.node_pool = Some(format!("{name}-workers"));
        }
        if self.spec.storage.app_storage_class.is_none() {
            self.spec.storage.app_storage_class =
                Some(format!("px-repl{}", self.spec.storage.replication));
        }
        if self.spec.array.token_user.is_none() && self.spec.storage.mode.needs_token() {
            self.spec.array.token_user = Some(default_token_user(&name));
        }
        if self.spec.portworx.cluster_name.is_none() && self.spec.storage.mode.runs_portworx() {
            self.spec.portworx.cluster_name = Some(format!("px-{name}"));
        }
    }

    /// The tenant name (`metadata.name`), the root of every derived name.
    pub fn tenant_name(&self) -> &str {
        &self.metadata.name
    }

    /// Who the tenant is: `metadata.namespace` (absent: [`DEFAULT_TENANT_NAMESPACE`],
    /// where `oc apply` puts it without a context namespace; the CLI resolves an
    /// absent one first) and `metadata.name`.
    ///
    /// [`DEFAULT_TENANT_NAMESPACE`]: crate::desired::DEFAULT_TENANT_NAMESPACE
    pub fn tenant_id(&self) -> crate::desired::TenantId {
        let ns = self.metadata.namespace.as_deref();
        crate::desired::TenantId::new(
            ns.unwrap_or(crate::desired::DEFAULT_TENANT_NAMESPACE),
            &self.metadata.name,
        )
    }

    /// The storage mode.
    pub fn mode(&self) -> StorageMode {
        self.spec.storage.mode
    }

    /// The SAN protocol (`None` for kubevirt-csi).
    pub fn protocol(&self) -> Option<Protocol> {
        self.spec.storage.protocol
    }

    /// The hosted control plane namespace on the management cluster:
    /// `<hostedCluster.namespace>-<hostedCluster.name>`.
    pub fn hcp_namespace(&self) -> String {
        let hc = &self.spec.hosted_cluster;
        format!("{}-{}", hc.namespace, hc.name)
    }

    /// The NodePool name (default `<name>-workers`).
    pub fn node_pool(&self) -> String {
        self.spec
            .hosted_cluster
            .node_pool
            .clone()
            .unwrap_or_else(|| format!("{}-workers", self.metadata.name))
    }

    /// Portworx storage nodes in the tenant: every worker VM for the Portworx modes,
    /// none for kubevirt-csi.
    pub fn storage_nodes(&self) -> u32 {
        if self.mode().runs_portworx() {
            self.spec.hosted_cluster.replicas
        } else {
            0
        }
    }

    /// The array admin owning the tenant's API token (default `pxfa-<name>`).
    pub fn token_user(&self) -> String {
        self.spec
            .array
            .token_user
            .clone()
            .unwrap_or_else(|| default_token_user(&self.metadata.name))
    }

    /// How long the tenant's API tokens live (`spec.array.tokenLifetime`, default
    /// a year); `None`: they never expire.
    pub fn token_lifetime(&self) -> Option<std::time::Duration> {
        match self.spec.array.token_lifetime.as_deref() {
            None => Some(DEFAULT_TOKEN_LIFETIME),
            // Validated: an invalid value never gets this far.
            Some(s) => parse_token_lifetime(s).unwrap_or(Some(DEFAULT_TOKEN_LIFETIME)),
        }
    }

    /// The tenant StorageCluster name (default `px-<name>`).
    pub fn portworx_cluster_name(&self) -> String {
        self.spec
            .portworx
            .cluster_name
            .clone()
            .unwrap_or_else(|| format!("px-{}", self.metadata.name))
    }

    /// The management FADA StorageClass that holds the tenant's drives: explicit
    /// `storage.fadaStorageClass`, else `pxfa-fada-<metadata.name>`. One per tenant,
    /// because its `pure_fa_pod_name` parameter is immutable.
    pub fn fada_storage_class(&self) -> String {
        self.spec
            .storage
            .fada_storage_class
            .clone()
            .unwrap_or_else(|| {
                format!(
                    "{}{}",
                    model::DEFAULT_FADA_STORAGE_CLASS_PREFIX,
                    self.metadata.name
                )
            })
    }

    /// The tenant's app StorageClass (default `px-repl<replication>`).
    pub fn app_storage_class(&self) -> String {
        self.spec
            .storage
            .app_storage_class
            .clone()
            .unwrap_or_else(|| format!("px-repl{}", self.spec.storage.replication))
    }

    /// The PX-StoreV2 pool ceiling (default `DEFAULT_MAX_POOL_SIZE`).
    pub fn max_pool_size(&self) -> Size {
        self.spec
            .portworx
            .max_pool_size
            .unwrap_or(DEFAULT_MAX_POOL_SIZE)
    }

    /// The hosted cluster's OpenShift version: `ocpVersion`, else the release image
    /// tag, else unknown.
    pub fn ocp_version(&self) -> Option<Version> {
        let hc = &self.spec.hosted_cluster;
        hc.ocp_version.or_else(|| {
            hc.release_image
                .as_deref()
                .and_then(Version::from_release_image)
        })
    }

    /// The management cluster's OpenShift Virtualization version, when given
    /// (`management.virtualizationVersion`, else the deprecated
    /// `hostedCluster.virtualizationVersion`).
    pub fn virtualization_version(&self) -> Option<Version> {
        self.spec
            .management
            .virtualization_version
            .or(self.spec.hosted_cluster.virtualization_version)
    }

    /// The management cluster's OpenShift version, when given.
    pub fn management_ocp_version(&self) -> Option<Version> {
        self.spec.management.openshift_version
    }

    /// The management Portworx's release: `management.portworxVersion` (stated, or
    /// read from the site), else `portworx.version`. The one rule for which release
    /// decides what the management Portworx does with a direct-access tenant's drives.
    pub fn management_portworx_version(&self) -> Version {
        self.spec
            .management
            .portworx_version
            .unwrap_or(self.spec.portworx.version)
    }

    /// The pull-secret Secret's name (default `<hostedCluster.name>-pull-secret`).
    pub fn pull_secret_name(&self) -> String {
        self.spec
            .hosted_cluster
            .pull_secret
            .clone()
            .unwrap_or_else(|| format!("{}-pull-secret", self.spec.hosted_cluster.name))
    }

    /// Whether the worker VMs are attached to the storage network: as
    /// `network.attachWorkers` says, else only for cloud-drive; never without a
    /// network.
    pub fn workers_on_storage_network(&self) -> bool {
        self.spec.network.as_ref().is_some_and(|n| {
            n.attach_workers
                .unwrap_or(self.mode().guest_reaches_array())
        })
    }

    /// Whether the worker VMs join the storage network with whereabouts addresses,
    /// which live migration does not keep (kubevirt/kubevirt#14320).
    pub fn workers_on_whereabouts(&self) -> bool {
        self.workers_on_storage_network()
            && self
                .spec
                .network
                .as_ref()
                .is_some_and(|n| !n.keeps_addresses())
    }

    /// Whether the tenant's apps ask for ReadWriteMany (with `storage.volumeMode`).
    pub fn wants_rwx(&self) -> bool {
        self.spec
            .storage
            .access_modes
            .iter()
            .any(|m| m == "ReadWriteMany")
    }
}

impl ManagementNode {
    /// The node's array host name: `host`, else the node name when it is a valid
    /// array name.
    pub fn array_host(&self) -> Result<flasharray::HostName, flasharray::name::NameError> {
        match &self.host {
            Some(h) => Ok(h.clone()),
            None => flasharray::HostName::new(self.name.clone()),
        }
    }

    /// The initiators of `protocol` on this node.
    pub fn initiators(&self, protocol: Protocol) -> &[String] {
        match protocol {
            Protocol::Fc => &self.wwns,
            Protocol::Iscsi => &self.iqns,
            Protocol::NvmeTcp => &self.nqns,
        }
    }
}
