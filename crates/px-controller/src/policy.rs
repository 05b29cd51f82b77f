//! `spec.apply`: whether a plan with changes runs now or waits for an approval
//! annotation, which approves exactly one apply (the controller removes it after).

use std::collections::BTreeMap;

use px_topology::crd::APPROVE_ANNOTATION;
use px_topology::spec::ApplyPolicy;

/// What to do with a plan that has changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Apply (auto, or manual with the approval annotation).
    Apply {
        /// The approval annotation must be removed after the apply.
        consume_approval: bool,
    },
    /// Manual and not approved: plan only.
    WaitForApproval,
}

/// The decision for an object's policy and annotations.
pub(crate) fn decide(
    policy: Option<ApplyPolicy>,
    annotations: &BTreeMap<String, String>,
) -> Decision {
    match policy.unwrap_or_default() {
        ApplyPolicy::Auto => Decision::Apply {
            consume_approval: annotations.contains_key(APPROVE_ANNOTATION),
        },
        ApplyPolicy::Manual if annotations.contains_key(APPROVE_ANNOTATION) => Decision::Apply {
            consume_approval: true,
        },
        ApplyPolicy::Manual => Decision::WaitForApproval,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_waits_until_approved() {
        let none = BTreeMap::new();
        let approved: BTreeMap<String, String> =
            [(APPROVE_ANNOTATION.to_string(), "yes".to_string())].into();
        assert_eq!(
            decide(Some(ApplyPolicy::Manual), &none),
            Decision::WaitForApproval
        );
        assert_eq!(
            decide(Some(ApplyPolicy::Manual), &approved),
            Decision::Apply {
                consume_approval: true
            }
        );
        assert_eq!(
            decide(None, &none),
            Decision::Apply {
                consume_approval: false
            }
        );
    }
}
