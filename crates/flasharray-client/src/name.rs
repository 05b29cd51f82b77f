//! Validated object names.
//!
//! Purity names are 1–63 characters of letters, digits and `-` (volumes also allow
//! `_`), start and end with a letter or digit, contain at least one letter, and are
//! case-insensitive: `vol1` and `VOL1` are the same object, shown with the case used
//! at creation. Volumes in a pod are written `pod::vol`; each part obeys the rules.
//! Objects inside a realm (secure multi-tenancy, REST 2.36+) carry the realm as one
//! more prefix: a pod `realm::pod`, its volumes `realm::pod::vol` (see
//! `docs/realms.md` for how certain that form is).
//!
//! The types here enforce those rules once, at the edge, so that an invalid name is
//! refused before any request leaves the client, with the same wording the mock array
//! uses for its 400 answers.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Longest name, in characters, of any single part of an object name.
pub const MAX_NAME_LEN: usize = 63;

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} name {name:?}: {reason}")]
pub struct NameError {
    /// The kind of object the name was meant for (`volume`, `host`, ...).
    pub kind: &'static str,
    /// The refused input.
    pub name: String,
    /// What rule it breaks.
    pub reason: String,
}

/// The kind of object a name belongs to; each has slightly different rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NameKind {
    /// A volume; `_` allowed, optionally `pod::vol`.
    Volume,
    /// A host; letters, digits and `-` (no `_`, no `realm::` prefix: realm hosts are not
    /// modelled).
    Host,
    /// A host group; letters, digits and `-`.
    HostGroup,
    /// A pod; optionally `realm::pod`.
    Pod,
    /// A realm (secure multi-tenancy).
    Realm,
}

impl NameKind {
    /// The word used in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            NameKind::Volume => "volume",
            NameKind::Host => "host",
            NameKind::HostGroup => "host group",
            NameKind::Pod => "pod",
            NameKind::Realm => "realm",
        }
    }
}

/// Checks one simple (non-compound) name part against Purity's rules.
pub fn check_simple(kind: NameKind, part: &str, allow_underscore: bool) -> Result<(), NameError> {
    let err = |reason: &str| NameError {
        kind: kind.as_str(),
        name: part.to_string(),
        reason: reason.to_string(),
    };
    if part.is_empty() {
        return Err(err("must not be empty"));
    }
    let len = part.chars().count();
    if len > MAX_NAME_LEN {
        return Err(err(&format!(
            "is {len} characters long; the limit is {MAX_NAME_LEN}"
        )));
    }
    for c in part.chars() {
        let ok = c.is_ascii_alphanumeric() || c == '-' || (allow_underscore && c == '_');
        if !ok {
            let allowed = if allow_underscore {
                "letters, digits, '-' and '_'"
            } else {
                "letters, digits and '-'"
            };
            return Err(err(&format!(
                "character {c:?} is not allowed (only {allowed})"
            )));
        }
    }
    let first = part.chars().next().unwrap_or('-');
    let last = part.chars().last().unwrap_or('-');
    if !first.is_ascii_alphanumeric() || !last.is_ascii_alphanumeric() {
        return Err(err("must start and end with a letter or digit"));
    }
    if !part.chars().any(|c| c.is_ascii_alphabetic()) {
        return Err(err("must contain at least one letter"));
    }
    Ok(())
}

macro_rules! simple_name {
    ($(#[$doc:meta])* $ty:ident, $kind:expr) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $ty(String);

        impl $ty {
            /// Validates `name` and wraps it.
            pub fn new(name: impl Into<String>) -> Result<Self, NameError> {
                let name = name.into();
                check_simple($kind, &name, false)?;
                Ok(Self(name))
            }
            /// The name as written at creation.
            pub fn as_str(&self) -> &str {
                &self.0
            }
            /// The name in the form used to compare identity (lower case).
            pub fn key(&self) -> String {
                self.0.to_ascii_lowercase()
            }
        }

        name_common!($ty);
    };
}

macro_rules! name_common {
    ($ty:ident) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{:?}", self.0)
            }
        }
        impl PartialEq for $ty {
            fn eq(&self, other: &Self) -> bool {
                self.0.eq_ignore_ascii_case(&other.0)
            }
        }
        impl Eq for $ty {}
        impl Hash for $ty {
            fn hash<H: Hasher>(&self, state: &mut H) {
                for b in self.0.bytes() {
                    state.write_u8(b.to_ascii_lowercase());
                }
            }
        }
        impl PartialOrd for $ty {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for $ty {
            fn cmp(&self, other: &Self) -> Ordering {
                self.key().cmp(&other.key())
            }
        }
        impl FromStr for $ty {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::new(s)
            }
        }
        impl TryFrom<String> for $ty {
            type Error = NameError;
            fn try_from(s: String) -> Result<Self, Self::Error> {
                Self::new(s)
            }
        }
        impl TryFrom<&str> for $ty {
            type Error = NameError;
            fn try_from(s: &str) -> Result<Self, Self::Error> {
                Self::new(s)
            }
        }
        impl AsRef<str> for $ty {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
        impl $ty {
            /// Whether `other` names the same object: the array compares names
            /// ignoring ASCII case. (No `Borrow<str>`: equality and hashing here ignore
            /// case, which `str`'s do not, so map lookups by `&str` would be wrong; key
            /// maps by [`Self::key`] instead.)
            pub fn eq_ignore_case(&self, other: &str) -> bool {
                same_name(&self.0, other)
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::new(s).map_err(serde::de::Error::custom)
            }
        }
    };
}

simple_name!(
    /// A validated host name.
    HostName,
    NameKind::Host
);
simple_name!(
    /// A validated host group name.
    HostGroupName,
    NameKind::HostGroup
);
simple_name!(
    /// A validated realm name: one simple part, no `::`.
    RealmName,
    NameKind::Realm
);

/// A validated pod name, possibly inside a realm (`realm::pod`).
#[derive(Clone)]
pub struct PodName(String);

impl PodName {
    /// Validates `name` (`pod` or `realm::pod`) and wraps it.
    pub fn new(name: impl Into<String>) -> Result<Self, NameError> {
        let name = name.into();
        match name.split_once("::") {
            Some((realm, pod)) => {
                check_simple(NameKind::Realm, realm, false).map_err(|e| NameError {
                    kind: "pod",
                    name: name.clone(),
                    reason: format!("realm part: {}", e.reason),
                })?;
                check_simple(NameKind::Pod, pod, false).map_err(|e| NameError {
                    kind: "pod",
                    name: name.clone(),
                    reason: e.reason,
                })?;
            }
            None => check_simple(NameKind::Pod, &name, false)?,
        }
        Ok(Self(name))
    }

    /// Builds `realm::pod` from its parts.
    pub fn in_realm(realm: &RealmName, pod: &str) -> Result<Self, NameError> {
        Self::new(format!("{}::{}", realm.as_str(), pod))
    }

    /// The full name as written at creation.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name in the form used to compare identity (lower case).
    pub fn key(&self) -> String {
        self.0.to_ascii_lowercase()
    }

    /// The realm part of `realm::pod`, if any.
    pub fn realm(&self) -> Option<&str> {
        self.0.split_once("::").map(|(r, _)| r)
    }
}

name_common!(PodName);

/// A validated volume name, possibly in a pod (`pod::vol`).
#[derive(Clone)]
pub struct VolumeName(String);

impl VolumeName {
    /// Validates `name` (`vol`, `pod::vol` or `realm::pod::vol`) and wraps it.
    pub fn new(name: impl Into<String>) -> Result<Self, NameError> {
        let name = name.into();
        match name.rsplit_once("::") {
            Some((pod, vol)) => {
                PodName::new(pod).map_err(|e| NameError {
                    kind: "volume",
                    name: name.clone(),
                    reason: format!("pod part: {}", e.reason),
                })?;
                check_simple(NameKind::Volume, vol, true).map_err(|e| NameError {
                    kind: "volume",
                    name: name.clone(),
                    reason: e.reason,
                })?;
            }
            None => check_simple(NameKind::Volume, &name, true)?,
        }
        Ok(Self(name))
    }

    /// Builds `pod::vol` (or `realm::pod::vol`) from its parts.
    pub fn in_pod(pod: &PodName, volume: &str) -> Result<Self, NameError> {
        Self::new(format!("{}::{}", pod.as_str(), volume))
    }

    /// The full name as written at creation.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name in the form used to compare identity (lower case).
    pub fn key(&self) -> String {
        self.0.to_ascii_lowercase()
    }

    /// The pod part of `pod::vol` (`realm::pod` for `realm::pod::vol`), if any.
    pub fn pod(&self) -> Option<&str> {
        self.0.rsplit_once("::").map(|(p, _)| p)
    }

    /// The realm part of `realm::pod::vol`, if any.
    pub fn realm(&self) -> Option<&str> {
        self.pod().and_then(|p| p.split_once("::")).map(|(r, _)| r)
    }

    /// The volume part, without any pod or realm prefix.
    pub fn short(&self) -> &str {
        self.0.rsplit_once("::").map_or(self.0.as_str(), |(_, v)| v)
    }
}

name_common!(VolumeName);

/// Compares two names the way the array does (ASCII case-insensitively).
pub fn same_name(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn accepts_array_names() {
        for n in ["v1", "a", "data-01", "A1-b2", &"x".repeat(63)] {
            HostName::new(n).unwrap();
        }
        VolumeName::new("px_data_01").unwrap();
        VolumeName::new("tenant-a::px_data_01").unwrap();
    }

    #[test]
    fn refuses_bad_names() {
        for (n, why) in [
            ("", "empty"),
            ("-a", "start and end"),
            ("a-", "start and end"),
            ("123", "at least one letter"),
            ("a b", "not allowed"),
            ("a_b", "not allowed"),
            ("é", "not allowed"),
        ] {
            let e = HostName::new(n).unwrap_err();
            assert!(e.reason.contains(why), "{n:?}: {e}");
        }
        assert!(
            HostName::new("x".repeat(64))
                .unwrap_err()
                .reason
                .contains("64")
        );
        assert!(VolumeName::new("_a").is_err());
        assert!(
            VolumeName::new("p_d::v")
                .unwrap_err()
                .reason
                .contains("pod")
        );
        assert!(VolumeName::new("p::").is_err());
        assert!(VolumeName::new(format!("p::{}", "v".repeat(64))).is_err());
    }

    #[test]
    fn identity_is_case_insensitive() {
        let a = VolumeName::new("Data01").unwrap();
        let b = VolumeName::new("DATA01").unwrap();
        assert_eq!(a, b);
        let set: HashSet<_> = [a.clone(), b].into_iter().collect();
        assert_eq!(set.len(), 1);
        assert_eq!(a.to_string(), "Data01");
    }

    #[test]
    fn pod_parts() {
        let v = VolumeName::new("p1::v1").unwrap();
        assert_eq!(v.pod(), Some("p1"));
        assert_eq!(v.short(), "v1");
        let p = PodName::new("p2").unwrap();
        assert_eq!(VolumeName::in_pod(&p, "x").unwrap().as_str(), "p2::x");
    }

    #[test]
    fn realm_parts() {
        let v = VolumeName::new("r1::p1::v_1").unwrap();
        assert_eq!(v.pod(), Some("r1::p1"));
        assert_eq!(v.realm(), Some("r1"));
        assert_eq!(v.short(), "v_1");
        assert_eq!(VolumeName::new("p1::v1").unwrap().realm(), None);
        let p = PodName::new("r1::p1").unwrap();
        assert_eq!(p.realm(), Some("r1"));
        let r = RealmName::new("r2").unwrap();
        assert_eq!(PodName::in_realm(&r, "p").unwrap().as_str(), "r2::p");
        assert!(RealmName::new("r::x").is_err());
        assert!(PodName::new("r::p::q").is_err());
        assert!(PodName::new("r_1::p").unwrap_err().reason.contains("realm"));
        assert!(VolumeName::new("a::b::c::d").is_err());
        assert!(VolumeName::new("::p::v").is_err());
    }

    #[test]
    fn serde_validates() {
        let ok: HostName = serde_json::from_str("\"h1\"").unwrap();
        assert_eq!(ok.as_str(), "h1");
        assert!(serde_json::from_str::<HostName>("\"-h\"").is_err());
    }
}
