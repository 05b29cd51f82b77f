//! Request bodies (`*Post`, `*Patch`): unset fields are skipped when serialised.
//!
//! Each has `with_*` setters, one a field (an `Option` field's setter takes the value
//! and sets `Some`), so that callers outside the crate can build them although they
//! are `#[non_exhaustive]`; the common bodies also have constructors.

use serde::{Deserialize, Serialize};

use super::{HostPersonality, NameRef, Qos, TagBody};

/// `with_*` setters for request bodies: `set` fields take their own type, `some`
/// fields (an `Option`) take the value and store `Some(value)`.
macro_rules! setters {
    ($ty:ident { $($kind:ident $with:ident($f:ident: $t:ty);)* }) => {
        impl $ty {
            $(setters!(@one $kind $with $f $t);)*
        }
    };
    (@one set $with:ident $f:ident $t:ty) => {
        #[doc = concat!("Sets `", stringify!($f), "`.")]
        #[must_use]
        pub fn $with(mut self, value: $t) -> Self {
            self.$f = value;
            self
        }
    };
    (@one some $with:ident $f:ident $t:ty) => {
        #[doc = concat!("Sets `", stringify!($f), "` to `Some(value)`.")]
        #[must_use]
        pub fn $with(mut self, value: $t) -> Self {
            self.$f = Some(value);
            self
        }
    };
}
pub(super) use setters;

/// Body of `POST /volumes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct VolumePost {
    /// Size in bytes; the array defaults to 1 MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<u64>,
    /// Copy an existing volume or snapshot (`src.snap1`) into the new volume; the array
    /// refuses an existing target name unless the call overwrites.
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
#[non_exhaustive]
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
    /// A volume of `provisioned` bytes without tags (add them with
    /// [`VolumeBatchPost::with_tags`]).
    pub fn new(name: crate::name::VolumeName, provisioned: u64) -> Self {
        VolumeBatchPost {
            name,
            provisioned: Some(provisioned),
            tags: Vec::new(),
        }
    }
}

setters!(VolumeBatchPost {
    set with_tags(tags: Vec<TagBody>);
});

/// Body of `PATCH /volumes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct VolumePatch {
    /// Rename; inside a pod, the short name (the pod is implied).
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
    /// New bandwidth and IOPS limits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qos: Option<Qos>,
}

/// Body of `POST /hosts`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct HostPost {
    /// iSCSI initiators (IQNs); an initiator belongs to at most one host.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub iqns: Vec<String>,
    /// NVMe initiators (NQNs); an initiator belongs to at most one host.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nqns: Vec<String>,
    /// Fibre Channel initiators (WWNs); an initiator belongs to at most one host.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wwns: Vec<String>,
    /// How the array tunes itself for the host's OS; leave unset for Linux.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub personality: Option<HostPersonality>,
    /// Tags every created host carries from its first moment (REST 2.39+).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TagBody>,
}

/// Body of `POST /host-groups`: a group has nothing to set at creation but its tags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct HostGroupPost {
    /// Tags every created group carries from its first moment (REST 2.39+).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TagBody>,
}

/// Body of `PATCH /hosts`. `iqns`/`nqns`/`wwns` replace the lists; `add_*` and
/// `remove_*` change them item by item.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct HostPatch {
    /// New name; the host keeps its initiators, connections and group.
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
    /// IQNs to add, keeping the others.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub add_iqns: Vec<String>,
    /// NQNs to add, keeping the others.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub add_nqns: Vec<String>,
    /// WWNs to add, keeping the others.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub add_wwns: Vec<String>,
    /// IQNs to remove, keeping the others.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remove_iqns: Vec<String>,
    /// NQNs to remove, keeping the others.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remove_nqns: Vec<String>,
    /// WWNs to remove, keeping the others.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remove_wwns: Vec<String>,
    /// Move into a host group (`""` moves out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_group: Option<NameRef>,
    /// New personality (see [`HostPersonality`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub personality: Option<HostPersonality>,
}

/// Body of `POST /pods`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
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
#[non_exhaustive]
pub struct PodPatch {
    /// Rename; the pod's volumes follow (`new::vol`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Destroy (`true`; refused while the pod holds volumes) or recover (`false`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destroyed: Option<bool>,
    /// New quota in bytes (2.23+). A quota below what the pod's volumes provision is
    /// refused (the array's `ignore_usage` query, which this client does not send, would
    /// allow it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota_limit: Option<u64>,
}

setters!(VolumePost {
    some with_provisioned(provisioned: u64);
    some with_source(source: NameRef);
    set with_tags(tags: Vec<TagBody>);
});

setters!(VolumePatch {
    some with_name(name: String);
    some with_provisioned(provisioned: u64);
    some with_destroyed(destroyed: bool);
    some with_pod(pod: NameRef);
    some with_qos(qos: Qos);
});

impl VolumePatch {
    /// Destroy (recoverable until eradicated).
    pub fn destroy() -> Self {
        VolumePatch::default().with_destroyed(true)
    }

    /// Recover a destroyed volume.
    pub fn recover() -> Self {
        VolumePatch::default().with_destroyed(false)
    }
}

setters!(HostPost {
    set with_iqns(iqns: Vec<String>);
    set with_nqns(nqns: Vec<String>);
    set with_wwns(wwns: Vec<String>);
    some with_personality(personality: HostPersonality);
    set with_tags(tags: Vec<TagBody>);
});

setters!(HostGroupPost {
    set with_tags(tags: Vec<TagBody>);
});

setters!(HostPatch {
    some with_name(name: String);
    some with_iqns(iqns: Vec<String>);
    some with_nqns(nqns: Vec<String>);
    some with_wwns(wwns: Vec<String>);
    set with_add_iqns(add_iqns: Vec<String>);
    set with_add_nqns(add_nqns: Vec<String>);
    set with_add_wwns(add_wwns: Vec<String>);
    set with_remove_iqns(remove_iqns: Vec<String>);
    set with_remove_nqns(remove_nqns: Vec<String>);
    set with_remove_wwns(remove_wwns: Vec<String>);
    some with_host_group(host_group: NameRef);
    some with_personality(personality: HostPersonality);
});

setters!(PodPost {
    some with_quota_limit(quota_limit: u64);
    set with_tags(tags: Vec<TagBody>);
});

setters!(PodPatch {
    some with_name(name: String);
    some with_destroyed(destroyed: bool);
    some with_quota_limit(quota_limit: u64);
});

impl PodPatch {
    /// Destroy (recoverable until eradicated; refused while the pod is not empty).
    pub fn destroy() -> Self {
        PodPatch::default().with_destroyed(true)
    }

    /// Recover a destroyed pod.
    pub fn recover() -> Self {
        PodPatch::default().with_destroyed(false)
    }
}
