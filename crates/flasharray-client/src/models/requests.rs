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
#[non_exhaustive]
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
