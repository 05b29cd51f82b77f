//! "Gone" needs evidence: which tenants named by pxfa's tags on the array are gone,
//! which exist, and which cannot be told (not accounted for).
//!
//! A tenant is gone only on evidence, never because a list the user happened to
//! pass left it out:
//!
//! * the management cluster was read ([`Evidence::Cluster`]): no TenantStorage with
//!   the tenant's identity exists, and its HostedCluster does not exist either
//!   ([`hosted_cluster_of`]: the one named like the tenant, or the one whose hosted
//!   control plane namespace holds the tenant's drive claims);
//! * only specs were given ([`Evidence::Specs`]): a tenant missing from them is gone
//!   only when the user stated that the specs are every tenant on the array
//!   (`complete`); otherwise it is *not accounted for*, listed with its objects and
//!   never cleaned up.
//!
//! Identity: a tenant is its namespace and its name (`px_topology::TenantId`). The
//! array's tags give both (an earlier pxfa's objects, tagged without a namespace, are
//! never orphans: see `plan::ownership`), and so do pxfa's cluster labels
//! (`crate::labels`). An object an earlier pxfa labelled with the name alone is a
//! [`TenantRef`] with no namespace: it matches a tenant of that name in any
//! namespace, so it is gone only when every tenant of that name is, and a missing
//! namespace can only keep a tenant, never make it gone.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use flasharray::TagResource;
use serde::Serialize;

use super::Known;
use super::seen::{ClusterFacts, HostedClusterFact, Seen, marked};
use crate::Tenant;
use crate::labels::LabelledTenant;

/// A tenant as one side names it: the namespace of its TenantStorage (when that
/// side gives one) and its name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct TenantRef {
    /// The TenantStorage's namespace; `None` when unknown (matches any).
    pub namespace: Option<String>,
    /// The tenant's name (`metadata.name`, the `pxfa.io tenant` tag).
    pub name: String,
}

impl TenantRef {
    /// `namespace` (when known) and `name`.
    pub fn new(namespace: Option<&str>, name: &str) -> Self {
        TenantRef {
            namespace: namespace.filter(|n| !n.is_empty()).map(str::to_string),
            name: name.to_string(),
        }
    }

    /// The identity of a loaded tenant.
    pub fn of(tenant: &Tenant) -> Self {
        let id = &tenant.desired.tenant;
        TenantRef::new(Some(&id.namespace), &id.name)
    }

    /// `namespace/name` (the array's tags, as orphans spell them) or a bare name
    /// (pxfa's cluster labels: any namespace).
    pub fn parse(s: &str) -> Self {
        match s.split_once('/') {
            Some((ns, name)) => TenantRef::new(Some(ns), name),
            None => TenantRef::new(None, s),
        }
    }

    /// The key the verdicts are kept by: array names ignore case.
    fn key(&self) -> TenantRef {
        TenantRef {
            namespace: self.namespace.clone(),
            name: self.name.to_ascii_lowercase(),
        }
    }

    /// Whether `self` and `other` can be the same tenant: the names are equal
    /// without case (array names are), and so are the namespaces where both are
    /// known.
    pub fn matches(&self, other: &TenantRef) -> bool {
        self.name.eq_ignore_ascii_case(&other.name)
            && match (&self.namespace, &other.namespace) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

/// The tenant pxfa's labels name; an earlier pxfa's label (no namespace) matches
/// that name in any namespace.
impl From<&LabelledTenant> for TenantRef {
    fn from(l: &LabelledTenant) -> Self {
        match l {
            LabelledTenant::Tenant(id) => TenantRef::new(Some(&id.namespace), &id.name),
            LabelledTenant::Unclaimed(name) => TenantRef::new(None, name),
        }
    }
}

impl fmt::Display for TenantRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// What says which tenants exist, besides the tenants given in [`Known`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// The management cluster was read: every TenantStorage identity on it (in every
    /// namespace, loadable or not), and its HostedClusters through the
    /// [`ClusterFacts`].
    Cluster {
        /// Every TenantStorage object's identity.
        storages: Vec<TenantRef>,
    },
    /// Only the specs given: `complete` when the user stated that they are every
    /// tenant on the array (`pxfa orphans --all-tenants-given`).
    Specs {
        /// The user's statement that no other tenant exists.
        complete: bool,
    },
}

impl Default for Evidence {
    fn default() -> Self {
        Evidence::Specs { complete: false }
    }
}

/// A tenant the tags name that is not known, and why it is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unaccounted {
    /// The tenant, as its tags name it.
    pub tenant: String,
    /// Its live objects on the array, and the objects pxfa labelled for it on the
    /// management cluster, as `kind name`.
    pub objects: Vec<String>,
    /// Why it is neither known nor gone, and what would decide it.
    pub evidence: String,
}

/// The verdict on every tenant the tags and labels name that is not known: gone
/// (with the evidence) or not accounted for (with why), by identity (names without
/// case).
#[derive(Debug, Default)]
pub(super) struct Judged {
    gone: BTreeMap<TenantRef, String>,
    unaccounted: BTreeMap<TenantRef, String>,
}

impl Judged {
    /// The evidence that `tenant` is gone, when it is. A tenant with no namespace
    /// (an earlier pxfa's label) is gone only when no tenant of its name is known or
    /// evidenced in any namespace.
    pub(super) fn gone(&self, tenant: &TenantRef) -> Option<&str> {
        self.gone.get(&tenant.key()).map(String::as_str)
    }

    /// Why `tenant` is kept though nobody accounts for it, when that is so.
    pub(super) fn unaccounted(&self, tenant: &TenantRef) -> Option<&str> {
        self.unaccounted.get(&tenant.key()).map(String::as_str)
    }

    /// Whether any tenant on the array is not accounted for.
    pub(super) fn any_unaccounted(&self) -> bool {
        !self.unaccounted.is_empty()
    }
}

/// The tenant the array's tags name, as orphans spell it (`namespace/name`; the
/// labels are read as [`TenantRef::from`] a `LabelledTenant`).
pub(super) fn tagged_identity(tenant: &str) -> TenantRef {
    TenantRef::parse(tenant)
}

/// Judges every tenant the tags and labels name that `known` does not hold.
pub(super) fn judge(seen: &Seen, known: &Known, facts: Option<&ClusterFacts>) -> Judged {
    let mut tenants = BTreeSet::new();
    for kind in [
        TagResource::Pod,
        TagResource::HostGroup,
        TagResource::Host,
        TagResource::Volume,
    ] {
        for (_, t) in marked(&seen.tags, kind) {
            tenants.extend(t.as_deref().map(tagged_identity));
        }
    }
    // Claims and other objects pxfa labelled, for a tenant the array may no
    // longer show.
    if let Some(f) = facts {
        let claims = f
            .claims
            .iter()
            .filter_map(super::seen::ClaimFact::pxfa_tenant);
        let objects =
            (f.tenant_objects.iter()).filter_map(super::seen::TenantObjectFact::pxfa_tenant);
        tenants.extend(claims.chain(objects).map(|l| TenantRef::from(&l)));
    }
    let mut out = Judged::default();
    for t in tenants.iter().filter(|t| !known.exists(t)) {
        match verdict(t, seen, known, facts) {
            Ok(evidence) => out.gone.insert(t.key(), evidence),
            Err(why) => out.unaccounted.insert(t.key(), why),
        };
    }
    out
}

/// `Ok(evidence)` when `id` is gone, `Err(why not known)` when it cannot be told.
fn verdict(
    id: &TenantRef,
    seen: &Seen,
    known: &Known,
    facts: Option<&ClusterFacts>,
) -> Result<String, String> {
    // An earlier pxfa's label names no namespace: every namespace is asked.
    let (who, storage) = match &id.namespace {
        Some(_) => (format!("tenant {id}"), id.to_string()),
        None => (
            format!(
                "a tenant named {} in any namespace (labelled by an earlier pxfa without {})",
                id.name,
                crate::labels::TENANT_NAMESPACE_LABEL
            ),
            format!("named {}", id.name),
        ),
    };
    match &known.evidence {
        Evidence::Specs { complete: true } => Ok(format!(
            "no spec given names {who}, and --all-tenants-given states the specs are every tenant on the array"
        )),
        Evidence::Specs { complete: false } => Err(format!(
            "no spec given names {who}; without the management cluster (--kubeconfig) there is no evidence it is gone \
             (give its spec, read the cluster, or state --all-tenants-given)"
        )),
        Evidence::Cluster { storages } => {
            if let Some(s) = storages.iter().find(|s| s.matches(id)) {
                return Err(format!(
                    "TenantStorage {s} exists on the management cluster but was not loaded"
                ));
            }
            let Some(facts) = facts else {
                return Err(format!(
                    "no TenantStorage names {who}, but the HostedClusters were not read"
                ));
            };
            match hosted_cluster_of(id, seen, facts) {
                Some(hc) => Err(format!(
                    "no TenantStorage names {who}, but its HostedCluster {}/{} exists (a tenant pxfa's CLI applies has no TenantStorage)",
                    hc.namespace, hc.name
                )),
                None => Ok(format!(
                    "no TenantStorage {storage} on the management cluster (every namespace), and no HostedCluster of it: none named {}, none whose control plane namespace holds its claims{}",
                    id.name,
                    claim_namespaces_text(&claim_namespaces(id, seen, facts))
                )),
            }
        }
    }
}

/// The hosted control plane namespaces that hold `id`'s drive claims: from the
/// `claim` tags of its drives, and from the claims pxfa labelled for it.
fn claim_namespaces(id: &TenantRef, seen: &Seen, facts: &ClusterFacts) -> BTreeSet<String> {
    let from_tags = super::seen::tagged_drives(seen)
        .into_iter()
        .filter(|d| tagged_identity(&d.tenant).matches(id))
        .filter_map(|d| Some(d.claim?.split_once('/')?.0.to_string()));
    let from_labels = facts
        .claims
        .iter()
        .filter(|c| {
            c.pxfa_tenant()
                .is_some_and(|t| TenantRef::from(&t).matches(id))
        })
        .map(|c| c.namespace.clone());
    from_tags.chain(from_labels).collect()
}

fn claim_namespaces_text(namespaces: &BTreeSet<String>) -> String {
    if namespaces.is_empty() {
        String::new()
    } else {
        let list: Vec<&str> = namespaces.iter().map(String::as_str).collect();
        format!(" ({})", list.join(", "))
    }
}

/// The HostedCluster of a tenant the tags name: one named like the tenant (in any
/// namespace), or one whose hosted control plane namespace
/// (`<namespace>-<name>`) holds the tenant's drive claims.
pub(super) fn hosted_cluster_of<'a>(
    id: &TenantRef,
    seen: &Seen,
    facts: &'a ClusterFacts,
) -> Option<&'a HostedClusterFact> {
    let namespaces = claim_namespaces(id, seen, facts);
    facts.hosted_clusters.iter().find(|hc| {
        hc.name.eq_ignore_ascii_case(&id.name) || namespaces.contains(&hc.hcp_namespace())
    })
}

/// The HostedCluster a loaded tenant's spec names, when the cluster has it.
pub(super) fn spec_hosted_cluster<'a>(
    tenant: &Tenant,
    facts: &'a ClusterFacts,
) -> Option<&'a HostedClusterFact> {
    let hc = &tenant.spec.spec.hosted_cluster;
    facts
        .hosted_clusters
        .iter()
        .find(|f| f.namespace == hc.namespace && f.name == hc.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_namespace_matches_any_and_names_ignore_case() {
        let legacy = TenantRef::new(None, "Tenant-Blue");
        let a = TenantRef::new(Some("team-a"), "tenant-blue");
        let b = TenantRef::new(Some("team-b"), "tenant-blue");
        assert!(legacy.matches(&a) && a.matches(&legacy));
        assert!(!a.matches(&b));
        assert!(!a.matches(&TenantRef::new(Some("team-a"), "tenant-red")));
        assert_eq!(a.to_string(), "team-a/tenant-blue");
        assert_eq!(TenantRef::new(Some(""), "x").namespace, None);
        assert_eq!(TenantRef::parse("team-a/tenant-blue"), a);
        assert_eq!(TenantRef::parse("Tenant-Blue"), legacy);
    }
}
