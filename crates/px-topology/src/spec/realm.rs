//! `spec.array.realm`: FlashArray secure multi-tenancy for one tenant.
//!
//! The realm holds the tenant's pod (`<realm>::<pod>`, so its volumes are
//! `<realm>::<pod>::<vol>`); for cloud-drive the token user is a token-only admin
//! whose one management access policy gives it a role inside the realm and nowhere
//! else. Realms exist from REST 2.36 on ([`REALM_MIN_REST_MINOR`]); the facts and
//! their confidence are in `docs/realms.md`.

use flasharray::{PodName, RealmName};

use super::model::RealmPodForm;
use super::{SpecError, TenantStorage};

/// The first REST 2.x minor version with `/realms`, `/policies/management-access`
/// and policy-holding admins: 2.36 (py-pure-client `FA_2_36` is the first client
/// with `get_realms`/`post_realms`; Ansible `purefa_realm` has
/// `MINIMUM_API_VERSION = "2.36"`).
pub const REALM_MIN_REST_MINOR: u32 = 36;

/// The field the realm settings live in, for error paths.
pub(crate) const REALM_FIELD: &str = "spec.array.realm";

/// Default role of the realm user inside the realm: `storage` manages volumes,
/// pods' contents and connections, which is what Portworx does ([L]: the role
/// Portworx needs is not documented beyond "realm-scoped policy"; configurable).
pub(crate) const DEFAULT_REALM_ROLE: &str = "storage";

/// Default aggregation strategy of the realm user's policy: with
/// `least-common-permissions` no other policy can add rights (Pure's SDK field
/// description); configurable because whether a token-only user needs it is [L].
pub(crate) const DEFAULT_REALM_AGGREGATION: &str = "least-common-permissions";

/// Roles a realm user may get: the built-in roles that can change things (the
/// read-only `viewer` and `support` cannot create Portworx's drives).
pub(crate) const REALM_ROLES: [&str; 2] = ["storage", "admin"];

/// The aggregation strategies of a management access policy (Pure's SDK, 2.36).
pub(crate) const REALM_AGGREGATIONS: [&str; 2] = ["least-common-permissions", "all-permissions"];

impl TenantStorage {
    /// The tenant's realm, if it has one.
    pub fn realm(&self) -> Option<&RealmName> {
        self.spec.array.realm.as_ref()
    }

    /// The realm user's role inside the realm (default `DEFAULT_REALM_ROLE`).
    pub fn realm_role(&self) -> &str {
        self.spec
            .array
            .realm_role
            .as_deref()
            .unwrap_or(DEFAULT_REALM_ROLE)
    }

    /// The realm user's policy aggregation (default `DEFAULT_REALM_AGGREGATION`).
    pub fn realm_aggregation_strategy(&self) -> &str {
        self.spec
            .array
            .realm_aggregation_strategy
            .as_deref()
            .unwrap_or(DEFAULT_REALM_AGGREGATION)
    }

    /// The management access policy pxfa creates for the realm user: named like the
    /// user (policies and admins are separate name spaces on the array).
    pub fn realm_policy(&self) -> String {
        self.token_user()
    }

    /// The tenant's pod inside its realm, `<realm>::<pod>`, where `pod` is
    /// `storage.pod` or the tenant name; `None` without a realm.
    pub fn realm_pod(&self) -> Option<Result<PodName, flasharray::name::NameError>> {
        let realm = self.realm()?;
        let pod = self
            .spec
            .storage
            .pod
            .as_ref()
            .map_or(self.tenant_name(), |p| p.as_str());
        Some(PodName::in_realm(realm, pod))
    }
}

impl TenantStorage {
    /// How manifests name `pod` to Portworx: without its realm or with it, by
    /// `spec.array.realmPodForm` (`auto`: short for cloud-drive, qualified otherwise).
    pub fn pod_in_manifests(&self, pod: &PodName) -> String {
        let short = match self.spec.array.realm_pod_form.unwrap_or_default() {
            RealmPodForm::Auto => self.mode().needs_token(),
            RealmPodForm::Short => true,
            RealmPodForm::Qualified => false,
        };
        match pod.as_str().split_once("::") {
            Some((_, p)) if short => p.to_string(),
            _ => pod.as_str().to_string(),
        }
    }
}

/// The realm rules of `t`, each with its field path.
pub(super) fn validate(t: &TenantStorage) -> Vec<SpecError> {
    let mut e = Vec::new();
    let a = &t.spec.array;
    let Some(realm) = t.realm() else {
        for (set, field) in [
            (a.realm_role.is_some(), "spec.array.realmRole"),
            (
                a.realm_aggregation_strategy.is_some(),
                "spec.array.realmAggregationStrategy",
            ),
            (a.realm_pod_form.is_some(), "spec.array.realmPodForm"),
        ] {
            if set {
                e.push(SpecError::new(field, "only applies with spec.array.realm"));
            }
        }
        return e;
    };
    if !t.mode().uses_array() {
        e.push(SpecError::new(
            REALM_FIELD,
            "kubevirt-csi puts nothing on the array, so there is nothing to put in a realm; \
             remove spec.array.realm",
        ));
        return e;
    }
    let pod = t.spec.storage.pod.as_ref().map(|p| p.as_str());
    if pod
        .unwrap_or(t.tenant_name())
        .eq_ignore_ascii_case(realm.as_str())
    {
        e.push(SpecError::new(
            REALM_FIELD,
            format!(
                "realm {realm} has the name of the tenant's pod; the array wants a realm name to \
                 differ from every pod name: choose another realm name or set spec.storage.pod"
            ),
        ));
    }
    if let Some(Err(err)) = t.realm_pod() {
        e.push(SpecError::new(
            "spec.storage.pod",
            format!("the pod inside realm {realm} is not a valid name: {err}"),
        ));
    }
    let role = t.realm_role();
    if !REALM_ROLES.contains(&role) {
        e.push(SpecError::new(
            "spec.array.realmRole",
            format!(
                "{role:?} is not a role the tenant's Portworx can work with; use one of {}",
                REALM_ROLES.join(", ")
            ),
        ));
    }
    let agg = t.realm_aggregation_strategy();
    if !REALM_AGGREGATIONS.contains(&agg) {
        e.push(SpecError::new(
            "spec.array.realmAggregationStrategy",
            format!("{agg:?} is not one of {}", REALM_AGGREGATIONS.join(", ")),
        ));
    }
    if !t.mode().needs_token() && (a.realm_role.is_some() || a.realm_aggregation_strategy.is_some())
    {
        e.push(SpecError::new(
            "spec.array.realmRole",
            "only cloud-drive has a realm user (direct-access Portworx never talks to the array)",
        ));
    }
    e
}

/// Refuses a realm on an array whose REST version has none: `rest_minor` is the
/// `N` of the REST 2.N version the client speaks with the array (`None`: not a REST
/// array, e.g. the in-memory one, which has realms). Called before any write.
pub fn check_rest_version(t: &TenantStorage, rest_minor: Option<u32>) -> Result<(), SpecError> {
    match (t.realm(), rest_minor) {
        (Some(realm), Some(minor)) if minor < REALM_MIN_REST_MINOR => Err(SpecError::new(
            REALM_FIELD,
            format!(
                "realm {realm} needs FlashArray REST 2.{REALM_MIN_REST_MINOR} or newer (Purity \
                 6.6.11+ has secure multi-tenancy); this array speaks REST 2.{minor} at most: \
                 upgrade Purity or remove spec.array.realm"
            ),
        )),
        _ => Ok(()),
    }
}
