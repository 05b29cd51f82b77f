//! pxfa's labels on the Kubernetes objects it renders for a tenant, and the one rule
//! that reads them back: "this object is tenant X's".
//!
//! Every tenant-owned object pxfa renders (both clusters) carries
//! `app.kubernetes.io/managed-by: pxfa`, `pxfa.io/tenant: <name>` and
//! `pxfa.io/tenant-namespace: <namespace>`: the tenant's identity ([`TenantId`]), so
//! that team-a/dev's objects and team-b/dev's are told apart on the cluster as on
//! the array. Label values hold 63 characters: the name (at most 40) and the
//! namespace (a DNS-1123 label, at most 63) fit. The namespace is the one the tenant
//! resolves to ([`crate::spec::TenantStorage::tenant_id`]): `metadata.namespace`, as
//! the CLI fills it when absent.
//!
//! An earlier pxfa wrote `pxfa.io/tenant` alone: such an object is no tenant's until
//! its tenant is applied again (server-side apply adds the namespace label to what
//! it renders); [`LabelledTenant::Unclaimed`] says so, and the orphan rules keep it
//! while any tenant of that name may own it.

use std::collections::BTreeMap;

use crate::desired::TenantId;

/// `app.kubernetes.io/managed-by`, with the value [`MANAGED_BY_VALUE`].
pub(crate) const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// The value of [`MANAGED_BY_LABEL`] on pxfa's objects.
pub(crate) const MANAGED_BY_VALUE: &str = "pxfa";
/// The label naming the tenant (`metadata.name`).
pub const TENANT_LABEL: &str = "pxfa.io/tenant";
/// The label naming the tenant's namespace; an earlier pxfa did not write it.
pub const TENANT_NAMESPACE_LABEL: &str = "pxfa.io/tenant-namespace";

/// The labels of a tenant-owned object of `tenant`.
pub(crate) fn tenant_labels(tenant: &TenantId) -> BTreeMap<String, String> {
    BTreeMap::from([
        (MANAGED_BY_LABEL.to_string(), MANAGED_BY_VALUE.to_string()),
        (TENANT_LABEL.to_string(), tenant.name.clone()),
        (TENANT_NAMESPACE_LABEL.to_string(), tenant.namespace.clone()),
    ])
}

/// The label selector of `tenant`'s objects (`oc get -l`, a list's
/// `labelSelector`): pxfa's, this name, this namespace. Objects an earlier pxfa
/// labelled without a namespace are not selected ([`unclaimed_selector`]).
pub fn tenant_selector(tenant: &TenantId) -> String {
    format!(
        "{MANAGED_BY_LABEL}={MANAGED_BY_VALUE},{TENANT_LABEL}={},{TENANT_NAMESPACE_LABEL}={}",
        tenant.name, tenant.namespace
    )
}

/// The label selector of the objects an earlier pxfa labelled for a tenant named
/// `name`, without a namespace: they may be any namespace's tenant of that name.
pub fn unclaimed_selector(name: &str) -> String {
    format!("{MANAGED_BY_LABEL}={MANAGED_BY_VALUE},{TENANT_LABEL}={name},!{TENANT_NAMESPACE_LABEL}")
}

/// The tenant pxfa's labels name on an object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LabelledTenant {
    /// Both labels: this tenant's.
    Tenant(TenantId),
    /// `pxfa.io/tenant` alone (an earlier pxfa): a tenant of this name in a
    /// namespace nobody recorded, so no tenant's for certain.
    Unclaimed(String),
}

/// `namespace/name`, or the name with why it has no namespace.
impl std::fmt::Display for LabelledTenant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LabelledTenant::Tenant(id) => write!(f, "{id}"),
            LabelledTenant::Unclaimed(name) => write!(
                f,
                "{name} (no namespace: labelled by an earlier pxfa, without {TENANT_NAMESPACE_LABEL})"
            ),
        }
    }
}

/// The tenant pxfa's labels name: `pxfa.io/tenant` (and `pxfa.io/tenant-namespace`)
/// beside `app.kubernetes.io/managed-by: pxfa`; `None` when pxfa did not label it
/// for a tenant. The one rule for "this object is tenant X's" on a cluster.
pub fn labelled_tenant(labels: &BTreeMap<String, String>) -> Option<LabelledTenant> {
    if labels.get(MANAGED_BY_LABEL).map(String::as_str) != Some(MANAGED_BY_VALUE) {
        return None;
    }
    let name = labels.get(TENANT_LABEL).filter(|n| !n.is_empty())?;
    Some(match labels.get(TENANT_NAMESPACE_LABEL) {
        Some(ns) if !ns.is_empty() => LabelledTenant::Tenant(TenantId::new(ns, name)),
        _ => LabelledTenant::Unclaimed(name.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        (pairs.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn both_labels_name_a_tenant_and_the_name_alone_names_nobody() {
        let a = TenantId::new("team-a", "dev");
        let b = TenantId::new("team-b", "dev");
        let labels = tenant_labels(&a);
        let read = labelled_tenant(&labels).unwrap();
        assert_eq!(read, LabelledTenant::Tenant(a.clone()));
        assert_ne!(read, LabelledTenant::Tenant(b));
        assert_eq!(read.to_string(), "team-a/dev");

        let old = map(&[(MANAGED_BY_LABEL, "pxfa"), (TENANT_LABEL, "dev")]);
        let read = labelled_tenant(&old).unwrap();
        assert_eq!(read, LabelledTenant::Unclaimed("dev".into()));
        assert!(read.to_string().contains("earlier pxfa"));

        // Not pxfa's, or no tenant: nobody's.
        assert_eq!(labelled_tenant(&map(&[(TENANT_LABEL, "dev")])), None);
        assert_eq!(labelled_tenant(&map(&[(MANAGED_BY_LABEL, "pxfa")])), None);
    }

    #[test]
    fn selectors_name_both_labels_or_the_missing_one() {
        let a = TenantId::new("team-a", "dev");
        assert_eq!(
            tenant_selector(&a),
            "app.kubernetes.io/managed-by=pxfa,pxfa.io/tenant=dev,pxfa.io/tenant-namespace=team-a"
        );
        assert_eq!(
            unclaimed_selector("dev"),
            "app.kubernetes.io/managed-by=pxfa,pxfa.io/tenant=dev,!pxfa.io/tenant-namespace"
        );
    }
}
