//! Response and request models, in the array's own vocabulary.
//!
//! Response models deserialize tolerantly (unknown fields ignored, missing fields
//! defaulted) and serialize **every** field, with `null` where there is no value and
//! `{"id": null, "name": null}` for unset references, exactly as real arrays do: the
//! simulator serves these same types to Pure's Python SDK, which raises on missing
//! keys. Request bodies (`*Post`, `*Patch`) skip unset fields instead.

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize, Serializer};

/// A reference to another object by id and name (`{"id": ..., "name": ...}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reference {
    /// Object id, if the object kind has ids.
    pub id: Option<String>,
    /// Object name.
    pub name: Option<String>,
}

impl Reference {
    /// A reference to a named object with an id.
    pub fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        Reference {
            id: Some(id.into()),
            name: Some(name.into()),
        }
    }
    /// True when neither id nor name is set.
    pub fn is_unset(&self) -> bool {
        self.id.is_none() && self.name.is_none()
    }
}

/// A reference by name only, for objects without ids (hosts, host groups).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NameRef {
    /// Object name, `null` when unset.
    pub name: Option<String>,
}

impl NameRef {
    /// A reference to `name`.
    pub fn new(name: impl Into<String>) -> Self {
        NameRef {
            name: Some(name.into()),
        }
    }
}

/// Space accounting, shared by volumes, hosts, host groups, pods and the array.
/// All values are read-only; integers are bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Space {
    /// Data reduction ratio.
    pub data_reduction: Option<f64>,
    /// Shared bytes.
    pub shared: Option<u64>,
    /// Snapshot bytes.
    pub snapshots: Option<u64>,
    /// System bytes.
    pub system: Option<u64>,
    /// Thin provisioning savings, 0–1.
    pub thin_provisioning: Option<f64>,
    /// Physical bytes used (deprecated for `total_used`).
    pub total_physical: Option<u64>,
    /// Provisioned bytes; `null` means unlimited.
    pub total_provisioned: Option<u64>,
    /// Total reduction ratio.
    pub total_reduction: Option<f64>,
    /// Unique bytes.
    pub unique: Option<u64>,
    /// Virtual (logical written) bytes.
    pub r#virtual: Option<u64>,
    /// Total used bytes (2.26+).
    pub total_used: Option<u64>,
    /// Used provisioned bytes (2.26+).
    pub used_provisioned: Option<u64>,
    /// Replication bytes (pods and arrays).
    pub replication: Option<u64>,
}

/// QoS limits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Qos {
    /// Bytes per second; 1 MiB/s – 512 GiB/s.
    pub bandwidth_limit: Option<u64>,
    /// IOPS; 100 – 100,000,000.
    pub iops_limit: Option<u64>,
}

/// Priority adjustment of a volume (2.10+).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PriorityAdjustment {
    /// `+`, `-` or `=`.
    pub priority_adjustment_operator: Option<String>,
    /// Adjustment value.
    pub priority_adjustment_value: Option<i64>,
}

impl Default for PriorityAdjustment {
    fn default() -> Self {
        PriorityAdjustment {
            priority_adjustment_operator: Some("+".into()),
            priority_adjustment_value: Some(0),
        }
    }
}

/// A volume.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Volume {
    /// UUID.
    pub id: Option<String>,
    /// Full name (`pod::vol` for volumes in a pod).
    pub name: String,
    /// Number of hosts and host groups connected.
    pub connection_count: Option<u64>,
    /// Creation time, ms since epoch.
    pub created: Option<u64>,
    /// True while pending eradication.
    pub destroyed: bool,
    /// `none`, `detected` or `fetched`.
    pub host_encryption_key_status: Option<String>,
    /// Size in bytes.
    pub provisioned: u64,
    /// QoS limits.
    pub qos: Qos,
    /// 24 upper-case hex characters.
    pub serial: Option<String>,
    /// Space accounting.
    pub space: Space,
    /// Milliseconds until eradication, while destroyed.
    pub time_remaining: Option<u64>,
    /// The pod the volume is in.
    pub pod: Reference,
    /// The copy source.
    pub source: Reference,
    /// `regular` or `protocol_endpoint`.
    pub subtype: Option<String>,
    /// The volume group the volume is in.
    pub volume_group: Reference,
    /// `promoted` or `demoted`.
    pub promotion_status: Option<String>,
    /// `promoted` or `demoted`.
    pub requested_promotion_state: Option<String>,
    /// Effective priority.
    pub priority: Option<i64>,
    /// Priority adjustment.
    pub priority_adjustment: PriorityAdjustment,
}

/// CHAP credentials of a host. Passwords never appear in Debug output.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Chap {
    /// Host user.
    pub host_user: Option<String>,
    /// Host password (masked by the array on GET).
    #[serde(serialize_with = "ser_masked")]
    pub host_password: Option<SecretString>,
    /// Target user.
    pub target_user: Option<String>,
    /// Target password (masked by the array on GET).
    #[serde(serialize_with = "ser_masked")]
    pub target_password: Option<SecretString>,
}

impl std::fmt::Debug for Chap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chap")
            .field("host_user", &self.host_user)
            .field(
                "host_password",
                &self.host_password.as_ref().map(|_| "****"),
            )
            .field("target_user", &self.target_user)
            .field(
                "target_password",
                &self.target_password.as_ref().map(|_| "****"),
            )
            .finish()
    }
}

impl PartialEq for Chap {
    fn eq(&self, other: &Self) -> bool {
        let s = |x: &Option<SecretString>| x.as_ref().map(|v| v.expose_secret().to_string());
        self.host_user == other.host_user
            && self.target_user == other.target_user
            && s(&self.host_password) == s(&other.host_password)
            && s(&self.target_password) == s(&other.target_password)
    }
}

fn ser_masked<S: Serializer>(v: &Option<SecretString>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(_) => s.serialize_str("****"),
        None => s.serialize_none(),
    }
}

/// Port connectivity of a host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PortConnectivity {
    /// e.g. `Redundant`.
    pub details: Option<String>,
    /// e.g. `healthy`.
    pub status: Option<String>,
}

/// A host: the initiators of one server. Hosts have no id.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Host {
    /// Name.
    pub name: String,
    /// CHAP settings.
    pub chap: Chap,
    /// Number of connections (private and shared).
    pub connection_count: Option<u64>,
    /// Host group, `{"name": null}` when in none.
    pub host_group: NameRef,
    /// iSCSI qualified names.
    pub iqns: Vec<String>,
    /// NVMe qualified names.
    pub nqns: Vec<String>,
    /// FC WWNs, 16 upper-case hex digits without colons.
    pub wwns: Vec<String>,
    /// `aix`, `esxi`, ... or null.
    pub personality: Option<String>,
    /// Port connectivity.
    pub port_connectivity: PortConnectivity,
    /// Preferred arrays.
    pub preferred_arrays: Vec<Reference>,
    /// Space of the connected volumes.
    pub space: Space,
    /// True for a host on this array.
    pub is_local: Option<bool>,
    /// `any`, `untagged` or a VLAN id.
    pub vlan: Option<String>,
}

/// A host group. Host groups have no id.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostGroup {
    /// Name.
    pub name: String,
    /// Number of volumes connected to the group.
    pub connection_count: Option<u64>,
    /// Number of member hosts.
    pub host_count: Option<u64>,
    /// True for a group on this array.
    pub is_local: Option<bool>,
    /// Space of the connected volumes.
    pub space: Space,
}

/// A group membership row (`/host-groups/hosts`, `/pods/arrays`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Member {
    /// The group.
    pub group: Reference,
    /// The member.
    pub member: Reference,
}

/// One row of `/connections`: a volume seen by one host. A host-group connection
/// appears once per member host, each row carrying the group and the shared LUN.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Connection {
    /// The host; `{"name": null}` for a group without members.
    pub host: NameRef,
    /// The host group, `{"name": null}` for a private connection.
    pub host_group: NameRef,
    /// Logical unit number.
    pub lun: Option<u32>,
    /// Protocol endpoint (vVols), usually unset.
    pub protocol_endpoint: Reference,
    /// The volume.
    pub volume: Reference,
    /// NVMe namespace id (2.27+).
    pub nsid: Option<u32>,
}

/// An array a pod lives on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PodArray {
    /// Array id.
    pub id: Option<String>,
    /// Array name.
    pub name: Option<String>,
    /// When the pod was frozen, ms since epoch.
    pub frozen_at: Option<u64>,
    /// Mediator status.
    pub mediator_status: Option<String>,
    /// Pre-elected flag.
    pub pre_elected: Option<bool>,
    /// Resync progress.
    pub progress: Option<f64>,
    /// `online`, `resyncing`, ...
    pub status: Option<String>,
}

/// Pod eradication settings (2.13+).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EradicationConfig {
    /// `all-enabled`, `all-disabled`, ...
    pub manual_eradication: Option<String>,
}

/// A pod: a container of volumes, the unit of replication and of quota.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Pod {
    /// UUID.
    pub id: Option<String>,
    /// Name.
    pub name: String,
    /// The arrays the pod is on.
    pub arrays: Vec<PodArray>,
    /// True while pending eradication.
    pub destroyed: bool,
    /// Failover preferences.
    pub failover_preferences: Vec<Reference>,
    /// Deprecated footprint.
    pub footprint: Option<u64>,
    /// Mediator, `purestorage` by default.
    pub mediator: Option<String>,
    /// Mediator version.
    pub mediator_version: Option<String>,
    /// Clone origin.
    pub source: Reference,
    /// Space accounting.
    pub space: Space,
    /// Milliseconds until eradication, while destroyed.
    pub time_remaining: Option<u64>,
    /// Number of pods linked as sources.
    pub link_source_count: Option<u64>,
    /// Number of pods linked as targets.
    pub link_target_count: Option<u64>,
    /// `promoted`, `demoted`, ...
    pub promotion_status: Option<String>,
    /// Requested promotion state.
    pub requested_promotion_state: Option<String>,
    /// Number of arrays.
    pub array_count: Option<u64>,
    /// Eradication settings.
    pub eradication_config: EradicationConfig,
    /// Quota in bytes, `null` when unlimited (2.23+).
    pub quota_limit: Option<u64>,
}

/// A tag on an object (`/volumes/tags`, `/hosts/tags`, ...).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Tag {
    /// Namespace; pxfa uses `pxfa.io`.
    pub namespace: Option<String>,
    /// Key.
    pub key: String,
    /// Value.
    pub value: String,
    /// Whether the tag follows copies.
    pub copyable: Option<bool>,
    /// The tagged object.
    pub resource: Reference,
}

impl Tag {
    /// A tag for the object `resource` in `namespace`.
    pub fn new(
        resource: impl Into<String>,
        namespace: impl Into<String>,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        Tag {
            namespace: Some(namespace.into()),
            key: key.into(),
            value: value.into(),
            copyable: Some(false),
            resource: Reference {
                id: None,
                name: Some(resource.into()),
            },
        }
    }
}

/// A tag inside a create body (`POST /volumes`, `/hosts`, `/host-groups`, `/pods`,
/// REST 2.39+). It names no object: it applies to every name of the call, which is
/// why [`Tag`] (whose `resource` would be sent as `{"id":null,"name":null}`) is not
/// reused here.
///
/// Creating an object with its ownership tags in the same call is what makes an
/// interrupted apply safe: there is no moment at which the object exists untagged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TagBody {
    /// Namespace; the array uses `default` when none is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Key.
    pub key: String,
    /// Value.
    pub value: String,
    /// Whether the tag follows copies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copyable: Option<bool>,
}

impl TagBody {
    /// A non-copyable tag in `namespace` (pxfa's tags describe one object, so a copy
    /// of it must not inherit them).
    pub fn new(
        namespace: impl Into<String>,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        TagBody {
            namespace: Some(namespace.into()),
            key: key.into(),
            value: value.into(),
            copyable: Some(false),
        }
    }

    /// The same tag placed on the object `resource`, for `PUT /{kind}/tags/batch`.
    pub fn on(&self, resource: impl Into<String>) -> Tag {
        Tag {
            namespace: self.namespace.clone(),
            key: self.key.clone(),
            value: self.value.clone(),
            copyable: self.copyable,
            resource: Reference {
                id: None,
                name: Some(resource.into()),
            },
        }
    }
}

/// Array-wide eradication settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ArrayEradicationConfig {
    /// Delay before destroyed objects are eradicated, ms.
    pub eradication_delay: Option<u64>,
    /// `all-enabled` or `partial-disabled` (SafeMode).
    pub manual_eradication: Option<String>,
}

/// The array itself (`GET /arrays`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ArrayInfo {
    /// UUID.
    pub id: Option<String>,
    /// Array name.
    pub name: String,
    /// `Purity//FA`.
    pub os: Option<String>,
    /// Purity version, e.g. `6.7.4`.
    pub version: Option<String>,
    /// Login banner.
    pub banner: Option<String>,
    /// Usable capacity, bytes.
    pub capacity: Option<u64>,
    /// Parity.
    pub parity: Option<f64>,
    /// Space accounting.
    pub space: Space,
    /// GUI idle timeout, ms.
    pub idle_timeout: Option<u64>,
    /// NTP servers.
    pub ntp_servers: Vec<String>,
    /// SCSI timeout, ms.
    pub scsi_timeout: Option<u64>,
    /// Console lock.
    pub console_lock_enabled: Option<bool>,
    /// Eradication settings.
    pub eradication_config: ArrayEradicationConfig,
}

/// Array capacity and space (`GET /arrays/space`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ArraySpace {
    /// UUID.
    pub id: Option<String>,
    /// Array name.
    pub name: String,
    /// Usable capacity, bytes.
    pub capacity: u64,
    /// Parity, 0–1.
    pub parity: Option<f64>,
    /// Space accounting.
    pub space: Space,
    /// Sample time, ms since epoch.
    pub time: Option<u64>,
}

/// Body of `POST /volumes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct VolumePost {
    /// Size in bytes; the array defaults to 1 MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<u64>,
    /// Copy source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<NameRef>,
    /// Tags every created volume carries from its first moment (REST 2.39+; the REST
    /// client tags in a second call on older arrays).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TagBody>,
}

/// One item of `POST /volumes/batch` (REST 2.32+; Pure's SDK `VolumeBatchPost`):
/// a volume with its own size and its own tags. Volumes of several sizes, each with
/// its per-volume tags (node and disk index), are then born complete in one call,
/// where `POST /volumes` gives every name of a call the same size and tags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolumeBatchPost {
    /// The volume's name (`pod::volume` inside a pod).
    pub name: crate::name::VolumeName,
    /// Size in bytes; the array defaults to 1 MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<u64>,
    /// The volume's tags from its first moment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TagBody>,
}

impl VolumeBatchPost {
    /// A volume of `provisioned` bytes without tags (set `tags` after).
    pub fn new(name: crate::name::VolumeName, provisioned: u64) -> Self {
        VolumeBatchPost {
            name,
            provisioned: Some(provisioned),
            tags: Vec::new(),
        }
    }
}

/// Body of `PATCH /volumes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct VolumePatch {
    /// New name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// New size; shrinking needs `truncate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<u64>,
    /// Destroy (`true`) or recover (`false`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destroyed: Option<bool>,
    /// Move into a pod (`""` moves out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pod: Option<NameRef>,
    /// QoS limits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qos: Option<Qos>,
}

/// Body of `POST /hosts`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostPost {
    /// iSCSI initiators.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub iqns: Vec<String>,
    /// NVMe initiators.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nqns: Vec<String>,
    /// FC initiators.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wwns: Vec<String>,
    /// Host personality.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub personality: Option<String>,
    /// Tags every created host carries from its first moment (REST 2.39+).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TagBody>,
}

/// Body of `POST /host-groups`: a group has nothing to set at creation but its tags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostGroupPost {
    /// Tags every created group carries from its first moment (REST 2.39+).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TagBody>,
}

/// Body of `PATCH /hosts`. `iqns`/`nqns`/`wwns` replace the lists; `add_*` and
/// `remove_*` change them item by item.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostPatch {
    /// New name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Replace the IQN list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iqns: Option<Vec<String>>,
    /// Replace the NQN list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nqns: Option<Vec<String>>,
    /// Replace the WWN list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wwns: Option<Vec<String>>,
    /// Add IQNs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub add_iqns: Vec<String>,
    /// Add NQNs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub add_nqns: Vec<String>,
    /// Add WWNs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub add_wwns: Vec<String>,
    /// Remove IQNs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remove_iqns: Vec<String>,
    /// Remove NQNs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remove_nqns: Vec<String>,
    /// Remove WWNs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remove_wwns: Vec<String>,
    /// Move into a host group (`""` moves out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_group: Option<NameRef>,
    /// Personality.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub personality: Option<String>,
}

/// Body of `POST /pods`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PodPost {
    /// Quota in bytes (2.23+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota_limit: Option<u64>,
    /// Tags every created pod carries from its first moment (REST 2.39+).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TagBody>,
}

/// Body of `PATCH /pods`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PodPatch {
    /// New name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Destroy or recover.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destroyed: Option<bool>,
    /// Quota in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota_limit: Option<u64>,
}

mod tenancy;
pub use tenancy::*;

/// Normalises a WWN to the array's form: 16 upper-case hex digits, no colons. The
/// rules are [`crate::Wwn`]'s; this returns its [`crate::Wwn::as_str`].
pub fn normalize_wwn(wwn: &str) -> Result<String, String> {
    crate::Wwn::new(wwn)
        .map(|w| w.as_str().to_string())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volume_serializes_every_field_with_nulls() {
        let v = Volume {
            name: "v1".into(),
            ..Default::default()
        };
        let j = serde_json::to_value(&v).unwrap();
        assert_eq!(j["pod"], serde_json::json!({"id": null, "name": null}));
        assert!(j.get("time_remaining").unwrap().is_null());
        assert_eq!(
            j["qos"],
            serde_json::json!({"bandwidth_limit": null, "iops_limit": null})
        );
        assert!(j["space"].get("virtual").is_some());
    }

    #[test]
    fn host_outside_group_keeps_key() {
        let h = Host {
            name: "h".into(),
            ..Default::default()
        };
        let j = serde_json::to_value(&h).unwrap();
        assert_eq!(j["host_group"], serde_json::json!({"name": null}));
        assert_eq!(j["wwns"], serde_json::json!([]));
    }

    #[test]
    fn tolerant_decode() {
        let v: Volume =
            serde_json::from_str(r#"{"name":"x","provisioned":1048576,"new_field":{"a":1}}"#)
                .unwrap();
        assert_eq!(v.provisioned, 1048576);
    }

    #[test]
    fn token_never_shown() {
        let t: AdminApiToken = serde_json::from_str(
            r#"{"name":"pxfa","api_token":{"created_at":1,"expires_at":null,"token":"6f1e0c6a-9d3f-4d10-8bbf-2b8c3e1f0a11"}}"#,
        )
        .unwrap();
        assert_eq!(
            t.api_token.expose(),
            Some("6f1e0c6a-9d3f-4d10-8bbf-2b8c3e1f0a11")
        );
        let dbg = format!("{t:?}");
        assert!(!dbg.contains("6f1e0c6a"), "{dbg}");
        let ser = serde_json::to_string(&t).unwrap();
        assert!(!ser.contains("6f1e0c6a"), "{ser}");
    }

    #[test]
    fn wwn_forms() {
        assert_eq!(
            normalize_wwn("21:00:f4:c7:aa:00:27:06").unwrap(),
            "2100F4C7AA002706"
        );
        assert!(normalize_wwn("21:00").is_err());
    }

    #[test]
    fn realm_scoped_policy_body() {
        let p = ManagementAccessPolicyPost {
            enabled: Some(true),
            aggregation_strategy: Some("least-common-permissions".into()),
            rules: vec![ManagementAccessRule::in_realm("storage", "r1")],
        };
        let j = serde_json::to_value(&p).unwrap();
        assert_eq!(
            j["rules"][0],
            serde_json::json!({"role": {"name": "storage"},
                "scope": {"name": "r1", "resource_type": "realms"}})
        );
        let r = serde_json::to_value(Realm::default()).unwrap();
        assert!(r["quota_limit"].is_null() && r.get("time_remaining").is_some());
    }

    #[test]
    fn patch_skips_unset() {
        let p = VolumePatch {
            destroyed: Some(true),
            ..Default::default()
        };
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"destroyed":true}"#);
    }
}
