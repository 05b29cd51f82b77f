//! When a Portworx StorageClass backing VM disks needs `nodiscard: "true"`.
//!
//! Two known problems ([H] in the reference): OpenShift Virtualization up to 4.18.4
//! mishandles discards on Portworx block devices, and OpenShift 4.20 before 4.20.27
//! has a kernel discard race. A version we cannot read counts as affected: losing
//! space reclamation is cheaper than corrupting a VM disk.

use crate::spec::Version;

/// StorageClass annotation recording the management cluster's OpenShift
/// Virtualization version that pxfa decided `nodiscard` for, so that `pxfa lint`
/// on the rendered files alone agrees with the renderer.
pub(crate) const VIRT_VERSION_ANNOTATION: &str = "pxfa.io/openshift-virtualization-version";
/// StorageClass annotation recording the management cluster's OpenShift version,
/// likewise.
pub(crate) const OCP_VERSION_ANNOTATION: &str = "pxfa.io/management-openshift-version";

const LAST_BAD_VIRT: Version = Version::new(4, 18, 4);
const FIRST_GOOD_OCP_420: Version = Version::new(4, 20, 27);

/// Why `nodiscard` is needed for these versions, or `None` when it is not.
pub(crate) fn nodiscard_reason(virt: Option<Version>, ocp: Option<Version>) -> Option<String> {
    let virt_reason = match virt {
        None => Some("the OpenShift Virtualization version is unknown".to_string()),
        Some(v) => match v.compare(&LAST_BAD_VIRT) {
            Some(std::cmp::Ordering::Greater) => None,
            Some(_) => Some(format!(
                "OpenShift Virtualization {v} is at or below 4.18.4 (discard bug with Portworx \
                 block devices)"
            )),
            None => Some(format!(
                "OpenShift Virtualization {v} has no patch level; 4.18.4 and older need it"
            )),
        },
    };
    let ocp_reason = match ocp {
        None => Some("the OpenShift version is unknown".to_string()),
        Some(v) if (v.major, v.minor) == (4, 20) => match v.at_least(&FIRST_GOOD_OCP_420) {
            Some(true) => None,
            Some(false) => Some(format!(
                "OpenShift {v} is older than 4.20.27 (kernel discard race)"
            )),
            None => Some(format!(
                "OpenShift {v} has no patch level; 4.20 before 4.20.27 needs it"
            )),
        },
        Some(_) => None,
    };
    match (virt_reason, ocp_reason) {
        (None, None) => None,
        (Some(a), None) | (None, Some(a)) => Some(a),
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
    }
}

/// Typed form of [`nodiscard_needed`].
pub(super) fn nodiscard_needed_for(virt: Option<Version>, ocp: Option<Version>) -> bool {
    nodiscard_reason(virt, ocp).is_some()
}

/// Whether a Portworx StorageClass used for VM disks needs `nodiscard: "true"`, given
/// the management cluster's OpenShift Virtualization version and the OpenShift version
/// (either may be absent or unparsable: then it is needed).
pub fn nodiscard_needed(virt: Option<&str>, ocp: Option<&str>) -> bool {
    let parse = |s: Option<&str>| s.and_then(|s| s.parse::<Version>().ok());
    nodiscard_needed_for(parse(virt), parse(ocp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds() {
        // Good virt, good OCP.
        assert!(!nodiscard_needed(Some("4.19.2"), Some("4.19.10")));
        assert!(!nodiscard_needed(Some("4.18.5"), Some("4.20.27")));
        assert!(!nodiscard_needed(Some("4.20.0"), Some("4.21.1")));
        // Virt at or below 4.18.4.
        assert!(nodiscard_needed(Some("4.18.4"), Some("4.19.10")));
        assert!(nodiscard_needed(Some("4.17.12"), Some("4.19.10")));
        assert!(nodiscard_needed(Some("4.18"), Some("4.19.10")));
        // OCP 4.20 before 4.20.27.
        assert!(nodiscard_needed(Some("4.20.1"), Some("4.20.26")));
        assert!(nodiscard_needed(Some("4.20.1"), Some("4.20")));
        // Unknown or unreadable.
        assert!(nodiscard_needed(None, Some("4.19.10")));
        assert!(nodiscard_needed(Some("4.19.2"), None));
        assert!(nodiscard_needed(Some("latest"), Some("4.19.10")));
    }

    #[test]
    fn reason_names_every_cause() {
        let r = nodiscard_reason(None, Some(Version::new(4, 20, 3))).unwrap();
        assert!(r.contains("unknown") && r.contains("4.20.27"), "{r}");
        assert_eq!(
            nodiscard_reason(Some(Version::new(4, 19, 0)), Some(Version::new(4, 19, 1))),
            None
        );
    }
}
