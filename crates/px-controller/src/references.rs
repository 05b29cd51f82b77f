//! Namespace isolation: a TenantStorage refers only to objects in its own namespace,
//! or in namespaces the controller's own configuration allows for it
//! (`pxfa controller run --allow-namespace-reference FROM=TO`).
//!
//! The controller runs with rights in every namespace it serves; a TenantStorage
//! is written by a team with rights in its namespace alone. Every object the spec
//! names outside the credentials Secret (which is always read in the object's
//! namespace) lives in `spec.hostedCluster.namespace`: the HostedCluster, its
//! admin kubeconfig Secret, the pull secret, the SSH key Secret, and (derived from
//! them) the hosted control plane namespace `<namespace>-<name>` with the worker
//! VMs and drive claims. So that one namespace is checked, once, before anything
//! is read: otherwise team-a could make the controller read team-b's Secrets or
//! act on team-b's HostedCluster.

use std::collections::{BTreeMap, BTreeSet};

use px_topology::spec::TenantStorage;

/// `FROM` that allows a reference from every namespace.
const ANY: &str = "*";

/// Which namespaces a TenantStorage may refer to besides its own: by the object's
/// namespace (`*`: any), the namespaces allowed. Empty: its own namespace only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamespaceReferences {
    allowed: BTreeMap<String, BTreeSet<String>>,
}

impl NamespaceReferences {
    /// Rules `FROM=TO` (a TenantStorage in `FROM`, or in any namespace for `*`, may
    /// refer to `TO`); an error names the rule that is not one.
    pub fn parse<S: AsRef<str>>(rules: &[S]) -> Result<Self, String> {
        let mut out = NamespaceReferences::default();
        for rule in rules {
            let rule = rule.as_ref();
            let (from, to) = rule
                .split_once('=')
                .map(|(f, t)| (f.trim(), t.trim()))
                .filter(|(f, t)| !f.is_empty() && !t.is_empty() && *t != ANY)
                .ok_or_else(|| {
                    format!(
                        "{rule:?} is not FROM=TO (a namespace or * for FROM, a namespace for TO)"
                    )
                })?;
            out.allowed
                .entry(from.to_string())
                .or_default()
                .insert(to.to_string());
        }
        Ok(out)
    }

    /// Whether an object in `from` may refer to an object in `to`.
    pub fn allows(&self, from: &str, to: &str) -> bool {
        from == to
            || [from, ANY]
                .iter()
                .any(|f| self.allowed.get(*f).is_some_and(|t| t.contains(to)))
    }

    /// Whether the TenantStorage in `namespace` with `spec` refers only to
    /// namespaces it may; the error says which field and what to do.
    pub(crate) fn check(&self, namespace: &str, spec: &TenantStorage) -> Result<(), String> {
        let hc = &spec.spec.hosted_cluster;
        if self.allows(namespace, &hc.namespace) {
            return Ok(());
        }
        Err(format!(
            "spec.hostedCluster.namespace: {:?} is not this object's namespace ({namespace:?}) and the controller \
             does not allow references from {namespace:?} to it; nothing there (HostedCluster {}/{}, its kubeconfig, \
             pull secret or SSH key Secret) was read. Put the TenantStorage in {:?}, or have the controller's \
             administrator allow it (pxfa controller run --allow-namespace-reference {namespace}={})",
            hc.namespace, hc.namespace, hc.name, hc.namespace, hc.namespace
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_namespace_always_others_only_as_allowed() {
        let none = NamespaceReferences::default();
        assert!(none.allows("team-a", "team-a"));
        assert!(!none.allows("team-a", "clusters"));
        let r = NamespaceReferences::parse(&["team-a=clusters", "*=shared"]).unwrap();
        assert!(r.allows("team-a", "clusters"));
        assert!(!r.allows("team-b", "clusters"));
        assert!(r.allows("team-b", "shared"));
        assert!(!r.allows("team-a", "team-b"));
    }

    #[test]
    fn a_rule_that_is_not_from_to_is_refused_by_name() {
        for bad in ["team-a", "=clusters", "team-a=", "team-a=*"] {
            let e = NamespaceReferences::parse(&[bad]).unwrap_err();
            assert!(e.contains(&format!("{bad:?}")), "{e}");
        }
    }
}
