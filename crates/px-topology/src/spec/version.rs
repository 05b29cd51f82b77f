//! Product versions (`3.6.2`, `4.19.10`, `v4.20`, `4.19.10-multi`) and the comparisons
//! the rules need.
//!
//! Versions in the wild are "semver-ish": a leading `v`, a missing patch level, a
//! suffix such as `-multi` or `-x86_64`. A missing patch level is kept as unknown, so
//! that a rule whose threshold depends on the patch can say "cannot tell" instead of
//! guessing.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `major.minor[.patch]` with any pre-release/build suffix dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Version {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Patch level, when given.
    pub patch: Option<u32>,
}

impl Version {
    /// A full `major.minor.patch` version.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Version {
            major,
            minor,
            patch: Some(patch),
        }
    }

    /// Compares with `other`; `None` when the answer depends on a patch level this
    /// version does not state.
    pub fn compare(&self, other: &Version) -> Option<Ordering> {
        match (self.major, self.minor).cmp(&(other.major, other.minor)) {
            Ordering::Equal => match (self.patch, other.patch) {
                (Some(a), Some(b)) => Some(a.cmp(&b)),
                (None, None) => Some(Ordering::Equal),
                _ => None,
            },
            o => Some(o),
        }
    }

    /// `Some(true)` when this version is `>= other`, `None` when it cannot be told.
    pub fn at_least(&self, other: &Version) -> Option<bool> {
        self.compare(other).map(|o| o != Ordering::Less)
    }

    /// The version in an OpenShift release image tag
    /// (`quay.io/openshift-release-dev/ocp-release:4.19.10-multi` -> `4.19.10`);
    /// `None` for digests or tags that are not versions.
    pub fn from_release_image(image: &str) -> Option<Version> {
        let last = image.rsplit('/').next()?;
        if last.contains('@') {
            return None;
        }
        let (_, tag) = last.split_once(':')?;
        tag.parse().ok()
    }
}

impl FromStr for Version {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{s:?} is not a version (expected major.minor.patch, e.g. 3.6.2)");
        // A suffix (`-multi`, `+build.1`, `-x86_64`) takes semver's characters and
        // '_'; nothing else (spaces, line breaks, control characters) is a version.
        if !s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'))
        {
            return Err(bad());
        }
        let t = s.strip_prefix(['v', 'V']).unwrap_or(s);
        let core = t.split(['-', '+']).next().unwrap_or("");
        let mut parts = core.split('.');
        let num = |p: Option<&str>| -> Result<Option<u32>, String> {
            match p {
                None => Ok(None),
                Some(p) if !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) => {
                    p.parse().map(Some).map_err(|_| bad())
                }
                Some(_) => Err(bad()),
            }
        };
        let major = num(parts.next())?.ok_or_else(bad)?;
        let minor = num(parts.next())?.ok_or_else(bad)?;
        let patch = num(parts.next())?;
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(Version {
            major,
            minor,
            patch,
        })
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.patch {
            Some(p) => write!(f, "{}.{}.{}", self.major, self.minor, p),
            None => write!(f, "{}.{}", self.major, self.minor),
        }
    }
}

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Version {
    /// Accepts strings only: an unquoted YAML `4.20` is the number 4.2, and guessing
    /// it back would silently turn OpenShift 4.20 into 4.2.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        match v {
            serde_json::Value::String(s) => s.parse().map_err(serde::de::Error::custom),
            serde_json::Value::Number(n) => Err(serde::de::Error::custom(format!(
                "{n} is a YAML number, not a version; quote it (\"{n}\") so that e.g. 4.20 \
                 is not read as 4.2"
            ))),
            other => Err(serde::de::Error::custom(format!(
                "expected a version string such as \"3.6.2\", found {other}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_semverish() {
        assert_eq!("3.6.2".parse::<Version>().unwrap(), Version::new(3, 6, 2));
        assert_eq!(
            "v4.20.27".parse::<Version>().unwrap(),
            Version::new(4, 20, 27)
        );
        assert_eq!(
            "4.19.10-multi".parse::<Version>().unwrap(),
            Version::new(4, 19, 10)
        );
        let v: Version = "4.18".parse().unwrap();
        assert_eq!(v.patch, None);
        for s in ["", "4", "a.b.c", "4.19.x", "1.2.3.4", "4..1"] {
            assert!(s.parse::<Version>().is_err(), "{s}");
        }
    }

    #[test]
    fn compares_with_unknown_patch() {
        let v418: Version = "4.18".parse().unwrap();
        assert_eq!(v418.at_least(&Version::new(4, 18, 4)), None);
        assert_eq!(v418.at_least(&Version::new(4, 17, 9)), Some(true));
        assert_eq!(
            Version::new(3, 6, 1).at_least(&Version::new(3, 6, 2)),
            Some(false)
        );
        assert_eq!(
            Version::new(3, 7, 0).at_least(&Version::new(3, 6, 2)),
            Some(true)
        );
    }

    #[test]
    fn release_image_tag() {
        let img = "quay.io/openshift-release-dev/ocp-release:4.19.10-multi";
        assert_eq!(
            Version::from_release_image(img),
            Some(Version::new(4, 19, 10))
        );
        assert_eq!(
            Version::from_release_image("registry:5000/ocp@sha256:abcd"),
            None
        );
        assert_eq!(Version::from_release_image("registry:5000/ocp"), None);
        assert_eq!(Version::from_release_image("quay.io/x/ocp:latest"), None);
    }
}
