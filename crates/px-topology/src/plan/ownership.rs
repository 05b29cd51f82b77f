//! "Is this object ours": the one place that reads pxfa's `pxfa.io` tags as
//! ownership.
//!
//! pxfa marks what it makes with `managed-by=pxfa` plus `tenant=<tenant>` (a
//! tenant's object) or `scope=shared` (a management object several tenants use).
//! Every decision about an existing object starts here:
//!
//! | tags on the array | desired scope | plan | destroy |
//! |---|---|---|---|
//! | this tenant | tenant | manage it (tag drift is fixed) | remove it |
//! | this tenant | shared | conflict: retag by hand | remove it |
//! | shared | tenant | conflict: name taken | keep |
//! | shared | shared | manage it | keep |
//! | another tenant | any | conflict, never adopted | keep |
//! | none (or not `managed-by=pxfa`) | any | conflict, or tagged with `--adopt` | keep |
//!
//! Realms, access policies and admins carry no tags: `realm.rs` decides theirs from
//! what they hold, with [`is_tenants`] for the pods inside a realm.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use flasharray::models::Tag;
use flasharray::{FlashArray, Result, TagParams, TagResource};
use futures_util::future::try_join_all;

use super::change::{Action, Blocker, Change, Kind, MAX_NAMES_PER_CALL, Payload};
use crate::desired::{
    MANAGED_BY_VALUE, SCOPE_SHARED, Scope, TAG_MANAGED_BY, TAG_NAMESPACE, TAG_SCOPE, TAG_TENANT,
};

/// pxfa's tags (`pxfa.io` namespace) per object, keyed by lower-cased object name
/// because array names are case-insensitive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagIndex {
    /// pxfa's tags of each volume listed.
    pub volumes: BTreeMap<String, BTreeMap<String, String>>,
    /// pxfa's tags of each host listed.
    pub hosts: BTreeMap<String, BTreeMap<String, String>>,
    /// pxfa's tags of each host group listed.
    pub host_groups: BTreeMap<String, BTreeMap<String, String>>,
    /// pxfa's tags of each pod listed.
    pub pods: BTreeMap<String, BTreeMap<String, String>>,
    /// The object names as the array spells them, by kind slot and lower-cased name.
    spelled: BTreeMap<(u8, String), String>,
    /// By kind slot: whether [`TagIndex::insert_relevant`] left other tenants'
    /// objects out, so that a name missing here may still be another tenant's.
    left_out: [bool; 4],
}

fn kind_slot(kind: TagResource) -> u8 {
    match kind {
        TagResource::Volume => 0,
        TagResource::Host => 1,
        TagResource::HostGroup => 2,
        TagResource::Pod => 3,
    }
}

impl TagIndex {
    /// The tags of one kind.
    pub fn of(&self, kind: TagResource) -> &BTreeMap<String, BTreeMap<String, String>> {
        match kind {
            TagResource::Volume => &self.volumes,
            TagResource::Host => &self.hosts,
            TagResource::HostGroup => &self.host_groups,
            TagResource::Pod => &self.pods,
        }
    }

    fn of_mut(&mut self, kind: TagResource) -> &mut BTreeMap<String, BTreeMap<String, String>> {
        match kind {
            TagResource::Volume => &mut self.volumes,
            TagResource::Host => &mut self.hosts,
            TagResource::HostGroup => &mut self.host_groups,
            TagResource::Pod => &mut self.pods,
        }
    }

    /// pxfa's tags of the object `name`, if it has any.
    pub fn get(&self, kind: TagResource, name: &str) -> Option<&BTreeMap<String, String>> {
        self.of(kind).get(&name.to_ascii_lowercase())
    }

    /// Adds tags read from the array; tags outside `pxfa.io` are ignored.
    pub fn insert(&mut self, kind: TagResource, tags: &[Tag]) {
        for t in tags {
            if t.namespace.as_deref() != Some(TAG_NAMESPACE) {
                continue;
            }
            let Some(name) = t.resource.name.as_deref() else {
                continue;
            };
            let key = name.to_ascii_lowercase();
            self.spelled
                .insert((kind_slot(kind), key.clone()), name.to_string());
            self.of_mut(kind)
                .entry(key)
                .or_default()
                .insert(t.key.clone(), t.value.clone());
        }
    }

    /// Adds the tags read from the array that a plan for `tenant` can need: those of
    /// every object except another tenant's whose name `names` (lower-cased) lacks.
    ///
    /// Another tenant's object matters to this tenant's plan only when it takes a
    /// name the plan uses (a conflict); elsewhere it reads as not this tenant's and
    /// not pxfa's to change, exactly as an object with no tags does, so leaving it
    /// out keeps every decision while an observation no longer holds a copy of
    /// every tenant's tags. Where a name is learned later (drives found through
    /// their claims), [`TagIndex::left_out`] says to read its tags.
    pub(crate) fn insert_relevant(
        &mut self,
        kind: TagResource,
        tags: Vec<Tag>,
        tenant: &str,
        names: &BTreeSet<String>,
    ) {
        let others = others_objects(&tags, tenant, names);
        if others.is_empty() {
            self.insert(kind, &tags);
            return;
        }
        self.left_out[usize::from(kind_slot(kind))] = true;
        let kept: Vec<Tag> = tags
            .into_iter()
            .filter(|t| {
                let name = t.resource.name.as_deref().unwrap_or_default();
                !others.contains(name.to_ascii_lowercase().as_str())
            })
            .collect();
        self.insert(kind, &kept);
    }

    /// Takes in `other`'s tags (an index of other kinds, read at the same time).
    pub(crate) fn merge(&mut self, other: TagIndex) {
        let TagIndex {
            volumes,
            hosts,
            host_groups,
            pods,
            spelled,
            left_out,
        } = other;
        self.volumes.extend(volumes);
        self.hosts.extend(hosts);
        self.host_groups.extend(host_groups);
        self.pods.extend(pods);
        self.spelled.extend(spelled);
        for (mine, theirs) in self.left_out.iter_mut().zip(left_out) {
            *mine |= theirs;
        }
    }

    /// Whether tags of other tenants' objects of `kind` were left out
    /// ([`TagIndex::insert_relevant`]).
    pub(crate) fn left_out(&self, kind: TagResource) -> bool {
        self.left_out[usize::from(kind_slot(kind))]
    }

    /// Names (as spelled on the array) of the objects of `kind` tagged for `tenant`.
    pub fn owned_by(&self, kind: TagResource, tenant: &str) -> Vec<String> {
        self.of(kind)
            .iter()
            .filter(|(_, t)| is_tenants(Some(t), tenant))
            .map(|(k, _)| {
                self.spelled
                    .get(&(kind_slot(kind), k.clone()))
                    .cloned()
                    .unwrap_or_else(|| k.clone())
            })
            .collect()
    }

    /// Whether the object `name` is tagged for `tenant`.
    pub(crate) fn is_tenants(&self, kind: TagResource, name: &str, tenant: &str) -> bool {
        is_tenants(self.get(kind, name), tenant)
    }
}

/// The lower-cased names of the objects among `tags` that another tenant owns
/// ([`owner`]: pxfa's `managed-by` and another `tenant`), except those in `names`.
fn others_objects(tags: &[Tag], tenant: &str, names: &BTreeSet<String>) -> HashSet<String> {
    // Per object: (managed by pxfa, tagged for another tenant).
    let mut seen: HashMap<String, (bool, bool)> = HashMap::new();
    for t in tags {
        if t.namespace.as_deref() != Some(TAG_NAMESPACE) {
            continue;
        }
        let Some(name) = t.resource.name.as_deref() else {
            continue;
        };
        let managed = t.key == TAG_MANAGED_BY && t.value == MANAGED_BY_VALUE;
        let other = t.key == TAG_TENANT && t.value != tenant;
        if !(managed || other) {
            continue;
        }
        let e = seen.entry(name.to_ascii_lowercase()).or_default();
        e.0 |= managed;
        e.1 |= other;
    }
    seen.into_iter()
        .filter(|(name, (managed, other))| *managed && *other && !names.contains(name))
        .map(|(name, _)| name)
        .collect()
}

/// pxfa's tags of `kind`: of the given objects, or of every object when `resources`
/// is empty. Tags of destroyed objects are included so that they can be recovered.
pub(crate) async fn lookup_tags(
    array: &dyn FlashArray,
    kind: TagResource,
    resources: &[String],
) -> Result<Vec<Tag>> {
    let params = |names: &[String]| TagParams {
        resource_names: names.to_vec(),
        namespaces: vec![TAG_NAMESPACE.to_string()],
        resource_destroyed: None,
    };
    if resources.is_empty() {
        return array.list_tags(kind, &params(&[])).await;
    }
    let calls = resources.chunks(MAX_NAMES_PER_CALL).map(|c| {
        let p = params(c);
        async move { array.list_tags(kind, &p).await }
    });
    Ok(try_join_all(calls).await?.into_iter().flatten().collect())
}

/// Who owns an object, from its `pxfa.io` tags.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Owner<'a> {
    /// Tagged for this tenant.
    Tenant,
    /// Tagged as a shared management object.
    Shared,
    /// Tagged for another tenant.
    OtherTenant(&'a str),
    /// No usable pxfa tags.
    Unmanaged,
}

/// The owner the tags `tags` name, seen from `tenant`.
pub(crate) fn owner<'a>(tags: Option<&'a BTreeMap<String, String>>, tenant: &str) -> Owner<'a> {
    let Some(tags) = tags else {
        return Owner::Unmanaged;
    };
    if tags.get(TAG_MANAGED_BY).map(String::as_str) != Some(MANAGED_BY_VALUE) {
        return Owner::Unmanaged;
    }
    match tags.get(TAG_TENANT) {
        Some(t) if t == tenant => Owner::Tenant,
        Some(t) => Owner::OtherTenant(t),
        None if tags.get(TAG_SCOPE).map(String::as_str) == Some(SCOPE_SHARED) => Owner::Shared,
        None => Owner::Unmanaged,
    }
}

/// Whether `tags` mark an object pxfa made for `tenant` (what destroy may remove).
pub(crate) fn is_tenants(tags: Option<&BTreeMap<String, String>>, tenant: &str) -> bool {
    owner(tags, tenant) == Owner::Tenant
}

/// Whether pxfa made the object: this tenant's or shared (whose initiators and tags
/// pxfa may change).
pub(crate) fn is_pxfas(tags: Option<&BTreeMap<String, String>>, tenant: &str) -> bool {
    matches!(owner(tags, tenant), Owner::Tenant | Owner::Shared)
}

/// Why destroy keeps an object that is not this tenant's, from its tags.
pub(crate) fn kept_reason(tags: Option<&BTreeMap<String, String>>) -> String {
    match tags.and_then(|t| t.get(TAG_TENANT)) {
        Some(t) => format!("tagged for tenant {t:?}"),
        None if tags.is_some() => "shared management object; never destroyed by a tenant".into(),
        None => "not created by pxfa (no pxfa tags)".to_string(),
    }
}

/// The desired tags of `resource` as the array's tag bodies.
pub(crate) fn to_tags(resource: &str, tags: &BTreeMap<String, String>) -> Vec<Tag> {
    tags.iter()
        .map(|(k, v)| Tag::new(resource, TAG_NAMESPACE, k, v))
        .collect()
}

/// A tag change setting `want` on `name` (first tagging or drift).
pub(crate) fn tag_change(
    action: Action,
    kind: Kind,
    resource: TagResource,
    name: &str,
    reason: String,
    want: &BTreeMap<String, String>,
) -> Change {
    Change::new(action, Kind::Tag, name, reason)
        .detail("on", kind.label())
        .with(Payload::Tags {
            resource,
            tags: to_tags(name, want),
        })
}

/// The keys of `want` whose value `have` lacks.
pub(crate) fn drifted<'a>(
    want: &'a BTreeMap<String, String>,
    have: Option<&BTreeMap<String, String>>,
) -> Vec<&'a str> {
    want.iter()
        .filter(|(k, v)| have.and_then(|h| h.get(*k)) != Some(*v))
        .map(|(k, _)| k.as_str())
        .collect()
}

/// The plan's ownership decisions about existing objects: the conflicts they raise
/// and the tag changes (adoption, drift) they need.
pub(crate) struct Claims<'a> {
    tenant: &'a str,
    tags: &'a TagIndex,
    adopt: bool,
    /// Objects pxfa must not touch.
    pub(crate) conflicts: Vec<Blocker>,
    /// Tags to set on objects pxfa may manage.
    pub(crate) tag_changes: Vec<Change>,
}

impl<'a> Claims<'a> {
    /// No decisions yet; `adopt` takes untagged objects over.
    pub(crate) fn new(tenant: &'a str, tags: &'a TagIndex, adopt: bool) -> Self {
        Claims {
            tenant,
            tags,
            adopt,
            conflicts: Vec::new(),
            tag_changes: Vec::new(),
        }
    }

    pub(crate) fn conflict(&mut self, kind: Kind, name: &str, reason: String, resolution: &str) {
        self.conflicts.push(Blocker {
            kind,
            name: name.to_string(),
            reason,
            resolution: resolution.to_string(),
        });
    }

    /// Decides whether pxfa may manage the existing object `name` (the table in the
    /// module text); records a conflict when not, and a tag change when its tags must
    /// be set. `pristine`: it matches what pxfa would create (a hint to adopt it).
    pub(crate) fn claim(
        &mut self,
        (kind, resource): (Kind, TagResource),
        name: &str,
        scope: Scope,
        want: &BTreeMap<String, String>,
        pristine: bool,
    ) -> bool {
        let have = self.tags.get(resource, name);
        let rename = "give this tenant's object another name (metadata.name, spec.storage.pod)";
        match (owner(have, self.tenant), scope) {
            (Owner::OtherTenant(t), _) => {
                self.conflict(kind, name, format!("exists and is tagged for tenant {t:?}; pxfa never touches another tenant's objects"), rename);
                false
            }
            (Owner::Shared, Scope::Tenant) => {
                self.conflict(kind, name, "exists as a shared management object (scope=shared); a tenant object cannot take its name".into(), rename);
                false
            }
            (Owner::Tenant, Scope::Shared) => {
                self.conflict(kind, name, "exists tagged for this tenant only, but the desired state shares it between tenants; retag it by hand".into(), "retag it by hand (pxfa.io scope=shared), or delete it");
                false
            }
            (Owner::Unmanaged, _) if self.adopt => {
                let why = "adopted: exists without pxfa's tags and adoption was asked for";
                let c = tag_change(Action::Create, kind, resource, name, why.into(), want);
                self.tag_changes.push(c);
                true
            }
            (Owner::Unmanaged, _) => {
                let hint = if pristine {
                    " It matches what pxfa would create, so it may be left by an apply interrupted before tagging; if so, adopt it."
                } else {
                    ""
                };
                self.conflict(kind, name, format!("exists without pxfa's tags (managed-by=pxfa, tenant={}); pxfa will not change it unless you adopt it.{hint}", self.tenant), "adopt it (--adopt), or rename or remove it on the array");
                false
            }
            (Owner::Tenant, Scope::Tenant) | (Owner::Shared, Scope::Shared) => {
                let drift = drifted(want, have);
                if !drift.is_empty() {
                    let why = format!("pxfa tags differ: {}", drift.join(", "));
                    let c = tag_change(Action::Update, kind, resource, name, why, want);
                    self.tag_changes.push(c);
                }
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tagged(name: &str, pairs: &[(&str, &str)]) -> Vec<Tag> {
        (pairs.iter())
            .map(|(k, v)| Tag::new(name, TAG_NAMESPACE, *k, *v))
            .collect()
    }

    fn ours(name: &str, tenant: &str) -> Vec<Tag> {
        tagged(
            name,
            &[(TAG_MANAGED_BY, MANAGED_BY_VALUE), (TAG_TENANT, tenant)],
        )
    }

    #[test]
    fn only_other_tenants_objects_the_plan_does_not_name_are_left_out() {
        let kind = TagResource::Volume;
        let listing: Vec<Tag> = [
            ours("Red-1", "red"),
            ours("blue-1", "blue"),
            ours("Blue-Taken", "blue"),
            tagged(
                "mgmt",
                &[
                    (TAG_MANAGED_BY, MANAGED_BY_VALUE),
                    (TAG_SCOPE, SCOPE_SHARED),
                ],
            ),
            // Not pxfa's (no managed-by): unmanaged, whatever its tenant tag says.
            tagged("loose", &[(TAG_TENANT, "blue")]),
        ]
        .concat();
        let names: BTreeSet<String> = ["blue-taken".to_string()].into();
        let mut index = TagIndex::default();
        index.insert_relevant(kind, listing.clone(), "red", &names);
        assert!(index.left_out(kind));
        assert!(!index.left_out(TagResource::Host));
        assert_eq!(index.get(kind, "blue-1"), None);
        assert_eq!(
            owner(index.get(kind, "blue-taken"), "red"),
            Owner::OtherTenant("blue")
        );
        assert_eq!(owner(index.get(kind, "mgmt"), "red"), Owner::Shared);
        assert!(index.get(kind, "loose").is_some());
        assert_eq!(index.owned_by(kind, "red"), ["Red-1"]);

        // The decisions the plan makes from it are those of the full index.
        let mut full = TagIndex::default();
        full.insert(kind, &listing);
        for name in ["red-1", "blue-1", "blue-taken", "mgmt", "loose", "none"] {
            assert_eq!(
                index.is_tenants(kind, name, "red"),
                full.is_tenants(kind, name, "red")
            );
            assert_eq!(
                is_pxfas(index.get(kind, name), "red"),
                is_pxfas(full.get(kind, name), "red"),
                "{name}"
            );
        }
    }

    #[test]
    fn a_listing_of_this_tenant_and_shared_objects_is_kept_whole() {
        let listing = [
            ours("red-1", "red"),
            tagged("mgmt", &[(TAG_SCOPE, SCOPE_SHARED)]),
        ]
        .concat();
        let mut index = TagIndex::default();
        index.insert_relevant(TagResource::Pod, listing.clone(), "red", &BTreeSet::new());
        let mut full = TagIndex::default();
        full.insert(TagResource::Pod, &listing);
        assert_eq!(index, full);
        assert!(!index.left_out(TagResource::Pod));

        let mut merged = TagIndex::default();
        merged.merge(index);
        assert_eq!(merged, full);
    }
}
