//! Response and request models, in the array's own vocabulary.
//!
//! Response models deserialize tolerantly (unknown fields ignored, missing fields
//! defaulted) and serialize **every** field, with `null` where there is no value and
//! `{"id": null, "name": null}` for unset references, exactly as real arrays do: the
//! simulator serves these same types to Pure's Python SDK, which raises on missing
//! keys. Request bodies (`*Post`, `*Patch`, in `requests`) skip unset fields instead.
//!
//! Every model is `#[non_exhaustive]`, so that a field the REST API adds is not a
//! breaking change. Outside this crate, build a response model (a mock answering
//! calls, a test faking one) with `Default` and field assignment, and a request body
//! with its `with_*` setters (`VolumePost::default().with_provisioned(GIB)`) or its
//! constructors (`VolumePatch::destroy()`).
//!
//! What a field means (units, when it is `null`, the REST version that added it) follows
//! the field descriptions of Pure's SDK models (py-pure-client, `FA_2_39`,
//! <https://github.com/PureStorage-OpenConnect/py-pure-client>) and the shapes real arrays
//! answer with; `docs/realms.md` lists what stays uncertain.

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize, Serializer};

/// A reference to another object by id and name (`{"id": ..., "name": ...}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Reference {
    /// Object id, if the object kind has ids.
    pub id: Option<String>,
    /// Object name; `null` in an unset reference, such as the `pod` of a volume outside any
    /// pod.
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
    /// A reference by name alone (no id), as the array gives for some members.
    pub fn named(name: impl Into<String>) -> Self {
        Reference {
            id: None,
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
#[non_exhaustive]
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
#[non_exhaustive]
pub struct Space {
    /// Data reduction ratio: host-mapped sectors over the physical space they take after
    /// compression and deduplication, without thin-provisioning savings (`5.0` reads 5:1).
    pub data_reduction: Option<f64>,
    /// Physical bytes of deduplicated data shared with other volumes or snapshots.
    pub shared: Option<u64>,
    /// Physical bytes held only by snapshots.
    pub snapshots: Option<u64>,
    /// Physical bytes of the array's own metadata (array-level space only; `null` on
    /// volumes).
    pub system: Option<u64>,
    /// Thin provisioning savings, 0–1.
    pub thin_provisioning: Option<f64>,
    /// Physical bytes used (deprecated for `total_used`).
    pub total_physical: Option<u64>,
    /// Provisioned bytes; `null` means unlimited.
    pub total_provisioned: Option<u64>,
    /// Data reduction with thin-provisioning savings: provisioned sectors over physical
    /// space (`10.0` reads 10:1).
    pub total_reduction: Option<f64>,
    /// Physical bytes of data no other volume or snapshot shares; excludes shared, snapshot
    /// and metadata space.
    pub unique: Option<u64>,
    /// Virtual (logical written) bytes.
    pub r#virtual: Option<u64>,
    /// Total used bytes (2.26+).
    pub total_used: Option<u64>,
    /// Used provisioned bytes (2.26+).
    pub used_provisioned: Option<u64>,
    /// Physical bytes of replication data (pods and arrays; `null` on volumes).
    pub replication: Option<u64>,
}

/// QoS limits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Qos {
    /// Bytes per second; 1 MiB/s – 512 GiB/s.
    pub bandwidth_limit: Option<u64>,
    /// IOPS; 100 – 100,000,000.
    pub iops_limit: Option<u64>,
}

/// Priority adjustment of a volume (2.10+).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct PriorityAdjustment {
    /// `+`, `-` or `=`.
    pub priority_adjustment_operator: Option<String>,
    /// The amount the operator applies: added or subtracted for `+`/`-`, the priority
    /// itself for `=`.
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

/// A volume (`GET /volumes`). A destroyed volume stays listed, with `destroyed` and
/// `time_remaining`, until it is eradicated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Volume {
    /// Globally unique id the array assigns; it never changes, even when the volume is
    /// renamed.
    pub id: Option<String>,
    /// Full name (`pod::vol` for volumes in a pod).
    pub name: String,
    /// Number of hosts and host groups connected.
    pub connection_count: Option<u64>,
    /// Creation time, ms since epoch.
    pub created: Option<u64>,
    /// True while pending eradication.
    pub destroyed: bool,
    /// `none`, `detected` or `fetched`: the state of the volume's host-side encryption key,
    /// as the array reports it (read-only).
    pub host_encryption_key_status: Option<HostEncryptionKeyStatus>,
    /// Size in bytes.
    pub provisioned: u64,
    /// Bandwidth and IOPS limits; both `null` when unlimited.
    pub qos: Qos,
    /// 24 upper-case hex characters.
    pub serial: Option<String>,
    /// Space the volume takes (bytes and reduction ratios).
    pub space: Space,
    /// Milliseconds until eradication, while destroyed.
    pub time_remaining: Option<u64>,
    /// The pod the volume is in.
    pub pod: Reference,
    /// The volume this one was copied from; unset for a volume created empty.
    pub source: Reference,
    /// Regular volume or protocol endpoint.
    pub subtype: Option<VolumeSubtype>,
    /// The volume group holding the volume (names `vg/vol`); `{"id": null, "name": null}`
    /// when in none.
    pub volume_group: Reference,
    /// `promoted` (takes writes; the state of a new volume) or `demoted` (read-only;
    /// ActiveDR).
    pub promotion_status: Option<PromotionStatus>,
    /// The state asked for with `PATCH`; `promotion_status` follows once the array has
    /// promoted or demoted the volume.
    pub requested_promotion_state: Option<PromotionStatus>,
    /// Effective priority: the sum of the relative `priority_adjustment`s that apply, or
    /// the value an `=` adjustment sets (2.10+; read-only).
    pub priority: Option<i64>,
    /// How this volume's priority differs from its container's (2.10+); `+0` when never
    /// set.
    pub priority_adjustment: PriorityAdjustment,
}

/// CHAP credentials of a host. Passwords never appear in Debug output.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Chap {
    /// User name the host presents to the array in CHAP; `null` when CHAP is off.
    pub host_user: Option<String>,
    /// Host password (masked by the array on GET).
    #[serde(serialize_with = "ser_masked")]
    pub host_password: Option<SecretString>,
    /// User name the array presents to the host in mutual CHAP; `null` when unused.
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
#[non_exhaustive]
pub struct PortConnectivity {
    /// e.g. `Redundant`.
    pub details: Option<String>,
    /// e.g. `healthy`.
    pub status: Option<String>,
}

/// A host: the initiators of one server. Hosts have no id.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Host {
    /// Host name, unique on the array (hosts are addressed by name only).
    pub name: String,
    /// CHAP credentials for iSCSI; all four fields `null` without CHAP.
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
    /// Personality; `null` (the Linux default) when unset.
    pub personality: Option<HostPersonality>,
    /// Whether the host reaches the array over both controllers (read-only).
    pub port_connectivity: PortConnectivity,
    /// Arrays that expose active/optimized paths to this host in a stretched pod (the
    /// others expose non-optimized ones). Cannot be set on a host that is in a host group.
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
#[non_exhaustive]
pub struct HostGroup {
    /// Host group name, unique on the array (groups are addressed by name only).
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
#[non_exhaustive]
pub struct Member {
    /// The host group or pod (by name; hosts' groups have no id).
    pub group: Reference,
    /// The host in the group, or the array a pod is stretched to.
    pub member: Reference,
}

/// One row of `/connections`: a volume seen by one host. A host-group connection
/// appears once per member host, each row carrying the group and the shared LUN.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Connection {
    /// The host; `{"name": null}` for a group without members.
    pub host: NameRef,
    /// The host group, `{"name": null}` for a private connection.
    pub host_group: NameRef,
    /// Logical unit number.
    pub lun: Option<u32>,
    /// Protocol endpoint (vVols), usually unset.
    pub protocol_endpoint: Reference,
    /// The connected volume (`pod::vol` inside a pod).
    pub volume: Reference,
    /// NVMe namespace id (2.27+).
    pub nsid: Option<u32>,
}

/// An array a pod lives on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct PodArray {
    /// Id of the array; the local array's matches `GET /arrays`.
    pub id: Option<String>,
    /// Array name.
    pub name: Option<String>,
    /// When the pod was frozen, ms since epoch.
    pub frozen_at: Option<u64>,
    /// Whether this array reaches the pod's mediator: `online`, `unreachable`, `flummoxed`
    /// (a wrong mediator) or `unknown`. Only an `online` mediator can decide a failover.
    pub mediator_status: Option<String>,
    /// True on the one array chosen to stay online if the arrays lose each other while
    /// neither reaches the mediator; set by the array, never by users.
    pub pre_elected: Option<bool>,
    /// Resync progress of this array, 0.0–1.0; `null` when in sync.
    pub progress: Option<f64>,
    /// This array's state in the pod: `online`, `resyncing`, `offline`, `suspended` (Purity
    /// 6.6+) or `unknown`.
    pub status: Option<String>,
}

/// Pod eradication settings (2.13+).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct EradicationConfig {
    /// Whether destroyed objects may be eradicated by hand.
    pub manual_eradication: Option<ManualEradication>,
}

/// A pod: a container of volumes, the unit of replication and of quota.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Pod {
    /// Globally unique id the array assigns; kept across renames.
    pub id: Option<String>,
    /// Pod name, unique on the array; volumes in it are named `pod::vol`.
    pub name: String,
    /// The arrays the pod is on, each with its sync and mediator state; one entry until the
    /// pod is stretched.
    pub arrays: Vec<PodArray>,
    /// True while pending eradication.
    pub destroyed: bool,
    /// Arrays of a stretched pod that stay online first when the arrays lose each other;
    /// empty when none is preferred.
    pub failover_preferences: Vec<Reference>,
    /// Most space the pod would take on any one array, bytes; deprecated for
    /// `space.footprint`.
    pub footprint: Option<u64>,
    /// Mediator, `purestorage` by default.
    pub mediator: Option<String>,
    /// Version the mediator reports; `null` when unknown.
    pub mediator_version: Option<String>,
    /// The pod this one was cloned from; unset for a pod created empty.
    pub source: Reference,
    /// Space of every volume in the pod.
    pub space: Space,
    /// Milliseconds until eradication, while destroyed.
    pub time_remaining: Option<u64>,
    /// Number of pods linked as sources.
    pub link_source_count: Option<u64>,
    /// Number of pods linked as targets.
    pub link_target_count: Option<u64>,
    /// Promoted or demoted.
    pub promotion_status: Option<PromotionStatus>,
    /// The state asked for with `PATCH`; `promotion_status` follows when the promotion or
    /// demotion is done (demoting leaves a destroyed `<pod>.undo-demote`).
    pub requested_promotion_state: Option<PromotionStatus>,
    /// Number of arrays the pod is on (2 or more when stretched).
    pub array_count: Option<u64>,
    /// Whether its destroyed contents may be eradicated by hand (2.13+).
    pub eradication_config: EradicationConfig,
    /// Quota in bytes, `null` when unlimited (2.23+).
    pub quota_limit: Option<u64>,
}

/// A tag on an object (`/volumes/tags`, `/hosts/tags`, ...).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Tag {
    /// Namespace; pxfa uses `pxfa.io`.
    pub namespace: Option<String>,
    /// Key (1–63 characters), unique per object and namespace: `PUT /{kind}/tags/batch`
    /// with an existing key replaces the value.
    pub key: String,
    /// Value, free text of up to 256 characters; `GET /{kind}/tags` selects by object and
    /// namespace, not by value.
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
#[non_exhaustive]
pub struct TagBody {
    /// Namespace; the array uses `default` when none is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Key (1–63 characters), unique per object and namespace.
    pub key: String,
    /// Value, free text of up to 256 characters.
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
#[non_exhaustive]
pub struct ArrayEradicationConfig {
    /// Delay before destroyed objects are eradicated, ms.
    pub eradication_delay: Option<u64>,
    /// All enabled, or partially disabled by SafeMode.
    pub manual_eradication: Option<ManualEradication>,
}

/// The array itself (`GET /arrays`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ArrayInfo {
    /// Globally unique id of the array.
    pub id: Option<String>,
    /// Array name.
    pub name: String,
    /// `Purity//FA`.
    pub os: Option<String>,
    /// Purity version, e.g. `6.7.4`.
    pub version: Option<String>,
    /// Login banner.
    pub banner: Option<String>,
    /// Usable capacity, bytes; `null` for a user without the right to see it.
    pub capacity: Option<u64>,
    /// Data redundancy, 0.0–1.0; below 1.0 the array is rebuilding it.
    pub parity: Option<f64>,
    /// Space of the whole array.
    pub space: Space,
    /// GUI idle timeout, ms.
    pub idle_timeout: Option<u64>,
    /// NTP servers the array syncs with; empty when none (or not visible to the user).
    pub ntp_servers: Vec<String>,
    /// SCSI timeout, ms (the array's default is 60 s).
    pub scsi_timeout: Option<u64>,
    /// True when the physical console is locked; `null` for a user without the right to see
    /// it.
    pub console_lock_enabled: Option<bool>,
    /// The delay and SafeMode settings for eradicating destroyed objects.
    pub eradication_config: ArrayEradicationConfig,
}

/// Array capacity and space (`GET /arrays/space`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ArraySpace {
    /// Globally unique id of the array.
    pub id: Option<String>,
    /// Array name.
    pub name: String,
    /// Usable capacity, bytes.
    pub capacity: u64,
    /// Parity, 0–1.
    pub parity: Option<f64>,
    /// Space of the whole array at `time`.
    pub space: Space,
    /// Sample time, ms since epoch.
    pub time: Option<u64>,
}

mod requests;
mod tenancy;
mod vocabulary;
pub use requests::*;
pub use tenancy::*;
pub use vocabulary::*;

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
            aggregation_strategy: Some(AggregationStrategy::LeastCommonPermissions),
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
