//! The storage options as drivers: from the validated spec and the sizing, each
//! driver says which array objects the tenant needs and which manifests go to which
//! cluster. Everything around them (sizing, plan, converge, writing files, lint) is
//! shared, so a fourth option is one new module here plus one arm in [`driver_for`].

mod cloud_drive;
mod direct_access;
mod kubevirt_csi;

use std::collections::BTreeMap;

use flasharray::name::NameError;
use secrecy::SecretString;
use serde::Serialize;

pub(crate) use cloud_drive::CloudDrive;
pub(crate) use direct_access::DirectAccess;
pub(crate) use direct_access::live_migratable_drives;
pub(crate) use kubevirt_csi::KubevirtCsi;

use crate::desired::{DesiredRealm, DesiredRealmUser, DesiredState};
use crate::render::hosted_cluster::GuestStorage;
use crate::render::{Manifest, RenderError};
use crate::sizing::Sizing;
use crate::spec::{StorageMode, TenantStorage};

/// Why a driver cannot describe a tenant. Specs are validated before drivers run,
/// so these are the cases validation cannot see (names that only overflow once
/// derived, a field a mode needs that the spec left empty).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    /// A spec field the driver needs is missing or unusable.
    #[error("{path}: {message}")]
    Invalid {
        /// Dotted spec path (`spec.storage.pod`).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A derived array name is not a valid name.
    #[error("{path}: derived name is not valid on the array: {source}")]
    Name {
        /// The spec field the name derives from.
        path: String,
        /// The array's naming rule that failed.
        source: NameError,
    },
}

impl From<DriverError> for RenderError {
    /// Keeps the driver's path and message, so a manifest error reads the same as
    /// the spec problem behind it.
    fn from(e: DriverError) -> Self {
        match e {
            DriverError::Invalid { path, message } => RenderError::Invalid { path, message },
            DriverError::Name { path, source } => RenderError::Name { path, source },
        }
    }
}

/// What `apply` learned from the array that manifests may need: the one type
/// `converge::apply` reports and [`StorageDriver::manifests`] reads. Plain
/// rendering passes [`ArrayFacts::default()`]. Neither `Debug` nor serialization
/// ever shows the token.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ArrayFacts {
    /// Serial numbers of the tenant's volumes, keyed by full volume name (`pod::vol`;
    /// looked up in lower case by [`ArrayFacts::serial_of`]): written next to the
    /// PVCs so that an admin can match a guest disk to an array volume.
    pub volume_serials: BTreeMap<String, String>,
    /// The tenant's API token (cloud-drive), when apply created or read it.
    /// Rendered only with `RenderOptions::include_secrets`.
    #[serde(skip)]
    pub api_token: Option<SecretString>,
}

impl ArrayFacts {
    /// The serial of `volume` (any case), if known.
    pub fn serial_of(&self, volume: &str) -> Option<&str> {
        self.volume_serials
            .get(&volume.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// One storage option.
pub trait StorageDriver: Send + Sync {
    /// The mode as spelled in the spec (`direct-access`, ...).
    fn mode(&self) -> &'static str;

    /// The array objects the tenant needs (empty for options that need none).
    fn desired_state(
        &self,
        spec: &TenantStorage,
        sizing: &Sizing,
    ) -> Result<DesiredState, DriverError>;

    /// What the HostedCluster's KubeVirt CSI driver gives the guest. Default: nothing
    /// (`storageDriver: None`), for options that bring their own storage, so that
    /// HyperShift's default class does not become the guest's default.
    fn guest_storage(&self, _spec: &TenantStorage) -> GuestStorage {
        GuestStorage::None
    }

    /// The option-specific manifests, for both clusters. The shared ones (storage
    /// network, MetalLB, MCE, root-disk class, HostedCluster) are added by
    /// `manifests::render`.
    fn manifests(
        &self,
        spec: &TenantStorage,
        sizing: &Sizing,
        facts: &ArrayFacts,
    ) -> Result<Vec<Manifest>, RenderError>;
}

/// The driver for the spec's storage mode.
pub fn driver_for(spec: &TenantStorage) -> Box<dyn StorageDriver> {
    match spec.mode() {
        StorageMode::CloudDrive => Box::new(CloudDrive),
        StorageMode::DirectAccess => Box::new(DirectAccess),
        StorageMode::KubevirtCsi => Box::new(KubevirtCsi),
    }
}

/// The tenant's realm for the desired state, with `user` as its realm user.
pub(crate) fn desired_realm(
    spec: &TenantStorage,
    user: Option<DesiredRealmUser>,
) -> Option<DesiredRealm> {
    spec.realm().map(|name| DesiredRealm {
        name: name.clone(),
        user,
    })
}

/// The protocol of a Portworx mode, which validation guarantees is set.
pub(crate) fn required_protocol(
    spec: &TenantStorage,
) -> Result<crate::spec::Protocol, DriverError> {
    spec.protocol().ok_or_else(|| DriverError::Invalid {
        path: "spec.storage.protocol".to_string(),
        message: format!("mode {} needs a protocol", spec.mode()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_debug_hides_the_token() {
        let facts = ArrayFacts {
            volume_serials: BTreeMap::new(),
            api_token: Some(SecretString::from("6e1b3c1a-token-value")),
        };
        let dbg = format!("{facts:?}");
        assert!(!dbg.contains("6e1b3c1a-token-value"), "{dbg}");
        let json = serde_json::to_string(&facts).expect("serializable");
        assert!(!json.contains("6e1b3c1a-token-value"), "{json}");
    }

    #[test]
    fn serial_lookup_ignores_case() {
        let mut facts = ArrayFacts::default();
        facts
            .volume_serials
            .insert("t::t-w00-data0".to_string(), "ABC123".to_string());
        assert_eq!(facts.serial_of("T::T-W00-DATA0"), Some("ABC123"));
        assert_eq!(facts.serial_of("t::t-w01-data0"), None);
    }
}
