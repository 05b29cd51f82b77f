//! Admins, their API tokens and secure multi-tenancy: realms, management access
//! policies.
//!
//! Shapes from Pure's SDK models (py-pure-client `FA_2_36`: `Realm`, `RealmPost`,
//! `RealmPatch`, `PolicyManagementAccess`, `PolicyrulemanagementaccessRules`,
//! `Admin`, `AdminPost`). What stays uncertain is listed in `docs/realms.md`.

use super::requests::setters;
use super::*;

/// A realm (REST 2.36+): a tenant boundary holding pods, with its own quota and QoS.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Realm {
    /// Globally unique id the array assigns; kept across renames.
    pub id: Option<String>,
    /// Realm name, unique on the array; its pods are named `realm::pod`.
    pub name: String,
    /// Creation time, ms since epoch.
    pub created: Option<u64>,
    /// True while pending eradication.
    pub destroyed: bool,
    /// Whether its destroyed contents may be eradicated by hand.
    pub eradication_config: EradicationConfig,
    /// Bandwidth and IOPS limits for everything in the realm; both `null` when unlimited.
    pub qos: Qos,
    /// Quota in bytes, `null` when unlimited.
    pub quota_limit: Option<u64>,
    /// Space of every pod and volume in the realm.
    pub space: Space,
    /// Milliseconds until eradication, while destroyed.
    pub time_remaining: Option<u64>,
}

/// Body of `POST /realms`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct RealmPost {
    /// Quota in bytes (1 MiB – 4 PiB, multiple of 512).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota_limit: Option<u64>,
    /// Bandwidth and IOPS limits for everything in the realm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qos: Option<Qos>,
}

/// Body of `PATCH /realms`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct RealmPatch {
    /// New name. Whether the realm's pods (`realm::pod`) are renamed with it is not
    /// documented (low confidence); pxfa never renames a realm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Destroy (`true`, refused while not empty unless `destroy_contents`) or recover.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destroyed: Option<bool>,
}

/// A reference that names the kind of object too (`{"id", "name", "resource_type"}`),
/// e.g. the scope of a management access rule: `{"name": "r1", "resource_type": "realms"}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ReferenceWithType {
    /// Object id. Left out when unset: the array takes `id` or `name`, not both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Object name; sent instead of `id` in request bodies.
    pub name: Option<String>,
    /// The endpoint name of the kind: `realms`, `arrays`, `pods`, ...
    pub resource_type: Option<String>,
}

impl ReferenceWithType {
    /// A reference to the realm `name`.
    pub fn realm(name: impl Into<String>) -> Self {
        ReferenceWithType {
            id: None,
            name: Some(name.into()),
            resource_type: Some(RESOURCE_REALMS.into()),
        }
    }

    /// A reference by name to the management access policy `name`.
    pub fn management_access_policy(name: impl Into<String>) -> Self {
        ReferenceWithType {
            id: None,
            name: Some(name.into()),
            resource_type: Some("policies/management-access".into()),
        }
    }
}

/// `resource_type` of a realm in a [`ReferenceWithType`].
pub const RESOURCE_REALMS: &str = "realms";

/// One rule of a management access policy: a role within a scope.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ManagementAccessRule {
    /// Built-in role by name: `viewer`, `support`, `storage` or `admin`.
    pub role: NameRef,
    /// Where the role applies: an array or a realm.
    pub scope: ReferenceWithType,
}

impl ManagementAccessRule {
    /// The role `role` inside the realm `realm`.
    pub fn in_realm(role: impl Into<String>, realm: impl Into<String>) -> Self {
        ManagementAccessRule {
            role: NameRef::new(role),
            scope: ReferenceWithType::realm(realm),
        }
    }
}

/// A management access policy (`/policies/management-access`, REST 2.36+).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ManagementAccessPolicy {
    /// Globally unique id the array assigns.
    pub id: Option<String>,
    /// Policy name, unique on the array; admins attach it by name.
    pub name: String,
    /// `least-common-permissions` or `all-permissions`.
    pub aggregation_strategy: Option<AggregationStrategy>,
    /// Whether the policy applies.
    pub enabled: Option<bool>,
    /// Always `management-access`.
    pub policy_type: Option<String>,
    /// The scoped roles.
    pub rules: Vec<ManagementAccessRule>,
}

/// Body of `POST /policies/management-access`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ManagementAccessPolicyPost {
    /// Whether the policy applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// `least-common-permissions` keeps users of the policy from gaining rights from
    /// any other policy: what a tenant boundary needs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregation_strategy: Option<AggregationStrategy>,
    /// The scoped roles.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<ManagementAccessRule>,
}

/// An administrator (`/admins`). Passwords are never part of the model.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Admin {
    /// User name.
    pub name: String,
    /// The admin's API token, when shown (the token itself stays redacted).
    pub api_token: Option<ApiToken>,
    /// True for a local user.
    pub is_local: Option<bool>,
    /// True while locked out.
    pub locked: Option<bool>,
    /// Lockout left, ms.
    pub lockout_remaining: Option<u64>,
    /// Policies that give the admin its rights (REST 2.36+).
    pub management_access_policies: Vec<ReferenceWithType>,
    /// SSH public key.
    pub public_key: Option<String>,
    /// Array-wide role (`array_admin`, `storage_admin`, ...), `{"name": null}` when
    /// the rights come from policies.
    pub role: NameRef,
}

/// Body of `POST /admins` (REST 2.36 form). pxfa creates token-only users: no
/// password, rights only from `management_access_policies`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct AdminPost {
    /// Policies to attach, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub management_access_policies: Vec<ReferenceWithType>,
    /// Array-wide role, instead of policies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<NameRef>,
}

/// An admin's API token. The token itself is a secret: Debug shows it redacted and
/// Serialize writes `****`; only [`ApiToken::expose`] reveals it.
#[derive(Clone, Default, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ApiToken {
    /// Creation time, ms since epoch.
    pub created_at: Option<u64>,
    /// Expiry, ms since epoch; `null` never expires.
    pub expires_at: Option<u64>,
    /// The token, when the array exposed it.
    pub token: Option<SecretString>,
}

impl ApiToken {
    /// The token in clear text, for writing it where the admin asked.
    pub fn expose(&self) -> Option<&str> {
        self.token.as_ref().map(|t| t.expose_secret())
    }
}

impl std::fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiToken")
            .field("created_at", &self.created_at)
            .field("expires_at", &self.expires_at)
            .field("token", &self.token.as_ref().map(|_| "[REDACTED]"))
            .finish()
    }
}

impl Serialize for ApiToken {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("ApiToken", 3)?;
        st.serialize_field("created_at", &self.created_at)?;
        st.serialize_field("expires_at", &self.expires_at)?;
        st.serialize_field("token", &self.token.as_ref().map(|_| "****"))?;
        st.end()
    }
}

/// An admin and their API token (`/admins/api-tokens`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct AdminApiToken {
    /// Admin user name.
    pub name: String,
    /// The admin's token; its secret part is shown only when the call asked to expose it
    /// (`expose_api_token=true`).
    pub api_token: ApiToken,
}

// ---------------------------------------------------------------- request bodies

setters!(RealmPost {
    some with_quota_limit(quota_limit: u64);
    some with_qos(qos: Qos);
});

setters!(RealmPatch {
    some with_name(name: String);
    some with_destroyed(destroyed: bool);
});

setters!(ManagementAccessPolicyPost {
    some with_enabled(enabled: bool);
    some with_aggregation_strategy(aggregation_strategy: AggregationStrategy);
    set with_rules(rules: Vec<ManagementAccessRule>);
});

setters!(AdminPost {
    set with_management_access_policies(management_access_policies: Vec<ReferenceWithType>);
    some with_role(role: NameRef);
});
