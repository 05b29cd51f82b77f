//! "Is this object ours": the one place that reads pxfa's `pxfa.io` tags as
//! ownership.
//!
//! pxfa marks what it makes with `managed-by=pxfa` plus the tenant's identity,
//! `tenant=<name>` and `tenant-namespace=<namespace>` (a tenant's object; see
//! [`TenantId`]), or `scope=shared` (a management object several tenants use).
//! [`owner`] is the one rule that says whose an object is; every decision about an
//! existing object starts there:
//!
//! | tags on the array | desired scope | plan | destroy |
//! |---|---|---|---|
//! | this tenant (namespace and name) | tenant | manage it (tag drift is fixed) | remove it |
//! | this tenant | shared | conflict: retag by hand | remove it |
//! | shared | tenant | conflict: name taken | keep |
//! | shared | shared | manage it | keep |
//! | another tenant (another namespace or name) | any | conflict, never adopted | keep |
//! | this name, no namespace (an earlier pxfa) | any | conflict until claimed (`claim`) | keep |
//! | none (or not `managed-by=pxfa`) | any | conflict, or tagged with `--adopt` | keep |
//!
//! A `tenant` tag names its tenant even without `managed-by=pxfa`: `--adopt` never
//! takes an object another tenant's tags claim.
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
    TAG_TENANT_NAMESPACE, TenantId,
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
    /// Other tenants with objects on the array whose default token user is the
    /// desired one ([`TagIndex::note_token_claimants`]), as reports name them.
    token_claimants: BTreeSet<String>,
}

/// A taggable kind as pxfa's reports name it (`host group`, not `hostGroup`).
pub(crate) fn kind_label(kind: TagResource) -> &'static str {
    match kind {
        TagResource::Volume => "volume",
        TagResource::Host => "host",
        TagResource::HostGroup => "host group",
        TagResource::Pod => "pod",
    }
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
        tenant: &TenantId,
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
            token_claimants,
        } = other;
        self.token_claimants.extend(token_claimants);
        self.volumes.extend(volumes);
        self.hosts.extend(hosts);
        self.host_groups.extend(host_groups);
        self.pods.extend(pods);
        self.spelled.extend(spelled);
        for (mine, theirs) in self.left_out.iter_mut().zip(left_out) {
            *mine |= theirs;
        }
    }

    /// Notes the tenants other than `tenant` that tagged objects among `tags` name
    /// (another namespace's, or an earlier pxfa's without one) whose default token
    /// user is `admin`. Array users carry no tags, and a default token user derives
    /// from the tenant name alone: while such a tenant has objects on the array, the
    /// user may be its.
    pub(crate) fn note_token_claimants(&mut self, tags: &[Tag], tenant: &TenantId, admin: &str) {
        for t in by_object(tags).values() {
            if !matches!(
                owner(Some(t), tenant),
                Owner::OtherTenant(_) | Owner::Unclaimed
            ) {
                continue;
            }
            if let Some(other) = marked_tenant(t)
                && crate::spec::default_token_user(other.name).eq_ignore_ascii_case(admin)
            {
                self.token_claimants.insert(other.to_string());
            }
        }
    }

    /// The other tenants that may use the desired token user
    /// ([`TagIndex::note_token_claimants`]).
    pub(crate) fn token_claimants(&self) -> &BTreeSet<String> {
        &self.token_claimants
    }

    /// Whether the array holds a pod or volume tagged for `tenant`.
    pub(crate) fn owns_objects(&self, tenant: &TenantId) -> bool {
        [TagResource::Pod, TagResource::Volume]
            .into_iter()
            .any(|k| self.of(k).values().any(|t| is_tenants(Some(t), tenant)))
    }

    /// Whether tags of other tenants' objects of `kind` were left out
    /// ([`TagIndex::insert_relevant`]).
    pub(crate) fn left_out(&self, kind: TagResource) -> bool {
        self.left_out[usize::from(kind_slot(kind))]
    }

    /// Names (as spelled on the array) of the objects of `kind` tagged for `tenant`.
    pub fn owned_by(&self, kind: TagResource, tenant: &TenantId) -> Vec<String> {
        self.matching(kind, |t| is_tenants(Some(t), tenant))
    }

    /// Names (as spelled on the array) of the objects of `kind` an earlier pxfa
    /// tagged for `tenant`'s name without a namespace: nobody's until claimed.
    pub fn unclaimed_by(&self, kind: TagResource, tenant: &TenantId) -> Vec<String> {
        self.matching(kind, |t| owner(Some(t), tenant) == Owner::Unclaimed)
    }

    fn matching(
        &self,
        kind: TagResource,
        keep: impl Fn(&BTreeMap<String, String>) -> bool,
    ) -> Vec<String> {
        self.of(kind)
            .iter()
            .filter(|(_, t)| keep(t))
            .map(|(k, _)| self.spelling(kind, k))
            .collect()
    }

    /// The object `key` (lower-cased) as the array spells it.
    fn spelling(&self, kind: TagResource, key: &str) -> String {
        self.spelled
            .get(&(kind_slot(kind), key.to_string()))
            .cloned()
            .unwrap_or_else(|| key.to_string())
    }

    /// Whether the object `name` is tagged for `tenant`.
    pub(crate) fn is_tenants(&self, kind: TagResource, name: &str, tenant: &TenantId) -> bool {
        is_tenants(self.get(kind, name), tenant)
    }
}

/// The lower-cased names of the objects among `tags` that another tenant owns
/// ([`owner`]), except those in `names`.
fn others_objects(tags: &[Tag], tenant: &TenantId, names: &BTreeSet<String>) -> HashSet<String> {
    by_object(tags)
        .into_iter()
        .filter(|(name, t)| {
            matches!(owner(Some(t), tenant), Owner::OtherTenant(_)) && !names.contains(name)
        })
        .map(|(name, _)| name)
        .collect()
}

/// The `pxfa.io` tags among `tags` by lower-cased object name.
fn by_object(tags: &[Tag]) -> HashMap<String, BTreeMap<String, String>> {
    let mut by_object: HashMap<String, BTreeMap<String, String>> = HashMap::new();
    for t in tags {
        if t.namespace.as_deref() != Some(TAG_NAMESPACE) {
            continue;
        }
        let Some(name) = t.resource.name.as_deref() else {
            continue;
        };
        let e = by_object.entry(name.to_ascii_lowercase()).or_default();
        e.insert(t.key.clone(), t.value.clone());
    }
    by_object
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

/// A tenant as an object's `tenant` tags name it. An earlier pxfa wrote no
/// `tenant-namespace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct TaggedTenant<'a> {
    /// The `tenant-namespace` tag, if any.
    pub(crate) namespace: Option<&'a str>,
    /// The `tenant` tag.
    pub(crate) name: &'a str,
}

impl TaggedTenant<'_> {
    /// The identity it names, when the tags name a namespace.
    pub(crate) fn id(&self) -> Option<TenantId> {
        self.namespace.map(|ns| TenantId::new(ns, self.name))
    }
}

/// `namespace/name`, or the bare name with why it has no namespace.
impl std::fmt::Display for TaggedTenant<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.namespace {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => write!(f, "{} (no namespace: tagged by an earlier pxfa)", self.name),
        }
    }
}

/// The tenant the tags name (a `tenant` tag), with or without `managed-by`.
pub(crate) fn tagged_tenant(tags: &BTreeMap<String, String>) -> Option<TaggedTenant<'_>> {
    Some(TaggedTenant {
        namespace: tags.get(TAG_TENANT_NAMESPACE).map(String::as_str),
        name: tags.get(TAG_TENANT)?,
    })
}

/// The tenant pxfa's tags (`managed-by=pxfa` and a `tenant` tag) name: whose object
/// it is when no tenant asks (orphans).
pub(crate) fn marked_tenant(tags: &BTreeMap<String, String>) -> Option<TaggedTenant<'_>> {
    let managed = tags.get(TAG_MANAGED_BY).map(String::as_str) == Some(MANAGED_BY_VALUE);
    tagged_tenant(tags).filter(|_| managed)
}

/// Who owns an object, from its `pxfa.io` tags.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Owner<'a> {
    /// Tagged for this tenant: its namespace and its name.
    Tenant,
    /// Tagged as a shared management object.
    Shared,
    /// Tagged for another tenant: another name, or this name in another namespace,
    /// or another name by an earlier pxfa.
    OtherTenant(TaggedTenant<'a>),
    /// Tagged by an earlier pxfa for this tenant's name, without a namespace: it may
    /// be another namespace's, so it is nobody's until claimed for one namespace.
    Unclaimed,
    /// No usable pxfa tags.
    Unmanaged,
}

/// The owner the tags `tags` name, seen from `tenant`: the one rule for "this
/// tenant's" (the table in the module text).
pub(crate) fn owner<'a>(
    tags: Option<&'a BTreeMap<String, String>>,
    tenant: &TenantId,
) -> Owner<'a> {
    let Some(tags) = tags else {
        return Owner::Unmanaged;
    };
    let managed = tags.get(TAG_MANAGED_BY).map(String::as_str) == Some(MANAGED_BY_VALUE);
    if let Some(t) = tagged_tenant(tags) {
        let same_name = t.name == tenant.name;
        return match t.namespace {
            Some(ns) if same_name && ns == tenant.namespace => {
                if managed {
                    Owner::Tenant
                } else {
                    Owner::Unmanaged
                }
            }
            None if same_name => {
                if managed {
                    Owner::Unclaimed
                } else {
                    Owner::Unmanaged
                }
            }
            _ => Owner::OtherTenant(t),
        };
    }
    if managed && tags.get(TAG_SCOPE).map(String::as_str) == Some(SCOPE_SHARED) {
        Owner::Shared
    } else {
        Owner::Unmanaged
    }
}

/// Whether `tags` mark an object pxfa made for `tenant` (what destroy may remove).
pub(crate) fn is_tenants(tags: Option<&BTreeMap<String, String>>, tenant: &TenantId) -> bool {
    owner(tags, tenant) == Owner::Tenant
}

/// Whether pxfa made the object: this tenant's or shared (whose initiators and tags
/// pxfa may change).
pub(crate) fn is_pxfas(tags: Option<&BTreeMap<String, String>>, tenant: &TenantId) -> bool {
    matches!(owner(tags, tenant), Owner::Tenant | Owner::Shared)
}

/// What to do about an object an earlier pxfa tagged for this tenant's name.
pub(crate) const CLAIM_HINT: &str =
    "if it is this tenant's, claim it for this namespace: pxfa claim -f SPEC (docs/lifecycle.md)";

/// Why destroy keeps an object that is not `tenant`'s, from its tags.
pub(crate) fn kept_reason(tags: Option<&BTreeMap<String, String>>, tenant: &TenantId) -> String {
    match owner(tags, tenant) {
        Owner::OtherTenant(t) => format!("tagged for tenant {t}"),
        Owner::Unclaimed => format!(
            "tagged by an earlier pxfa for a tenant named {:?} with no namespace; {CLAIM_HINT}",
            tenant.name
        ),
        Owner::Shared => "shared management object; never destroyed by a tenant".into(),
        Owner::Tenant | Owner::Unmanaged => "not created by pxfa (no pxfa tags)".to_string(),
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
    tenant: &'a TenantId,
    tags: &'a TagIndex,
    adopt: bool,
    /// Objects pxfa must not touch.
    pub(crate) conflicts: Vec<Blocker>,
    /// Tags to set on objects pxfa may manage.
    pub(crate) tag_changes: Vec<Change>,
}

impl<'a> Claims<'a> {
    /// No decisions yet; `adopt` takes untagged objects over.
    pub(crate) fn new(tenant: &'a TenantId, tags: &'a TagIndex, adopt: bool) -> Self {
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
                self.conflict(kind, name, format!("exists and is tagged for tenant {t}; pxfa never touches another tenant's objects"), rename);
                false
            }
            (Owner::Unclaimed, _) => {
                self.conflict(kind, name, format!("exists tagged by an earlier pxfa for a tenant named {:?} with no namespace, which may be another namespace's; pxfa will not change it until it is claimed for one namespace (pxfa claim)", self.tenant.name), CLAIM_HINT);
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
                self.conflict(kind, name, format!("exists without pxfa's tags (managed-by=pxfa, tenant={}, tenant-namespace={}); pxfa will not change it unless you adopt it.{hint}", self.tenant.name, self.tenant.namespace), "adopt it (--adopt), or rename or remove it on the array");
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

    /// Tagged for `tenant` (`namespace/name`) as pxfa tags its objects.
    fn ours(name: &str, tenant: &str) -> Vec<Tag> {
        let id = TenantId::from(tenant);
        tagged(
            name,
            &[
                (TAG_MANAGED_BY, MANAGED_BY_VALUE),
                (TAG_TENANT, &id.name),
                (TAG_TENANT_NAMESPACE, &id.namespace),
            ],
        )
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        (pairs.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_tenant_is_its_namespace_and_its_name() {
        let me = TenantId::new("team-a", "blue");
        let managed = (TAG_MANAGED_BY, MANAGED_BY_VALUE);
        let mine = map(&[
            managed,
            (TAG_TENANT, "blue"),
            (TAG_TENANT_NAMESPACE, "team-a"),
        ]);
        assert_eq!(owner(Some(&mine), &me), Owner::Tenant);
        assert!(is_tenants(Some(&mine), &me));

        // The same name in another namespace is another tenant.
        let theirs = map(&[
            managed,
            (TAG_TENANT, "blue"),
            (TAG_TENANT_NAMESPACE, "team-b"),
        ]);
        let Owner::OtherTenant(t) = owner(Some(&theirs), &me) else {
            panic!("team-b's object read as {:?}", owner(Some(&theirs), &me));
        };
        assert_eq!(t.to_string(), "team-b/blue");
        assert!(!is_tenants(Some(&theirs), &me));
        assert!(!is_pxfas(Some(&theirs), &me));
        assert!(kept_reason(Some(&theirs), &me).contains("team-b/blue"));

        // An earlier pxfa's tags (no namespace) of this name: nobody's until claimed.
        let legacy = map(&[managed, (TAG_TENANT, "blue")]);
        assert_eq!(owner(Some(&legacy), &me), Owner::Unclaimed);
        assert!(!is_tenants(Some(&legacy), &me));
        assert!(kept_reason(Some(&legacy), &me).contains("pxfa claim"));
        // ... and of another name: another tenant's.
        let other = TenantId::new("team-a", "red");
        assert!(
            matches!(owner(Some(&legacy), &other), Owner::OtherTenant(t) if t.namespace.is_none())
        );

        // A tenant tag without managed-by still claims the object: never adopted.
        let loose = map(&[(TAG_TENANT, "blue"), (TAG_TENANT_NAMESPACE, "team-b")]);
        assert!(matches!(owner(Some(&loose), &me), Owner::OtherTenant(_)));
        let loose_mine = map(&[(TAG_TENANT, "blue"), (TAG_TENANT_NAMESPACE, "team-a")]);
        assert_eq!(owner(Some(&loose_mine), &me), Owner::Unmanaged);
    }

    #[test]
    fn adopt_never_takes_an_object_another_tenants_tags_claim() {
        let me = TenantId::new("team-a", "blue");
        let mut index = TagIndex::default();
        let want = ownership_tags_for(&me);
        for tags in [
            ours("theirs", "team-b/blue"),
            tagged(
                "legacy",
                &[(TAG_MANAGED_BY, MANAGED_BY_VALUE), (TAG_TENANT, "blue")],
            ),
            tagged("loose", &[(TAG_TENANT, "red")]),
            tagged("bare", &[("note", "x")]),
        ] {
            index.insert(TagResource::Volume, &tags);
        }
        let mut claims = Claims::new(&me, &index, true);
        let res = (Kind::Volume, TagResource::Volume);
        for name in ["theirs", "legacy", "loose"] {
            assert!(
                !claims.claim(res, name, Scope::Tenant, &want, true),
                "{name}"
            );
        }
        assert!(claims.claim(res, "bare", Scope::Tenant, &want, true));
        assert_eq!(claims.conflicts.len(), 3);
        assert!(claims.conflicts[0].reason.contains("team-b/blue"));
        assert!(claims.conflicts[1].resolution.contains("pxfa claim"));
        assert_eq!(claims.tag_changes.len(), 1);
    }

    fn ownership_tags_for(id: &TenantId) -> BTreeMap<String, String> {
        crate::desired::ownership_tags(id, Scope::Tenant, "px-data")
    }

    #[test]
    fn only_other_tenants_objects_the_plan_does_not_name_are_left_out() {
        let kind = TagResource::Volume;
        let red = TenantId::from("red");
        let listing: Vec<Tag> = [
            ours("Red-1", "red"),
            ours("blue-1", "blue"),
            ours("Blue-Taken", "blue"),
            // Red's name in another namespace: another tenant's.
            ours("red-elsewhere", "team-b/red"),
            tagged(
                "mgmt",
                &[
                    (TAG_MANAGED_BY, MANAGED_BY_VALUE),
                    (TAG_SCOPE, SCOPE_SHARED),
                ],
            ),
            // Not pxfa's (no managed-by), but its tenant tag names red.
            tagged(
                "loose",
                &[(TAG_TENANT, "red"), (TAG_TENANT_NAMESPACE, "default")],
            ),
        ]
        .concat();
        let names: BTreeSet<String> = ["blue-taken".to_string()].into();
        let mut index = TagIndex::default();
        index.insert_relevant(kind, listing.clone(), &red, &names);
        assert!(index.left_out(kind));
        assert!(!index.left_out(TagResource::Host));
        assert_eq!(index.get(kind, "blue-1"), None);
        assert_eq!(index.get(kind, "red-elsewhere"), None);
        assert!(matches!(
            owner(index.get(kind, "blue-taken"), &red),
            Owner::OtherTenant(t) if t.to_string() == "default/blue"
        ));
        assert_eq!(owner(index.get(kind, "mgmt"), &red), Owner::Shared);
        assert!(index.get(kind, "loose").is_some());
        assert_eq!(index.owned_by(kind, &red), ["Red-1"]);

        // The decisions the plan makes from it are those of the full index.
        let mut full = TagIndex::default();
        full.insert(kind, &listing);
        for name in [
            "red-1",
            "blue-1",
            "blue-taken",
            "red-elsewhere",
            "mgmt",
            "loose",
            "none",
        ] {
            assert_eq!(
                index.is_tenants(kind, name, &red),
                full.is_tenants(kind, name, &red)
            );
            assert_eq!(
                is_pxfas(index.get(kind, name), &red),
                is_pxfas(full.get(kind, name), &red),
                "{name}"
            );
        }
    }

    #[test]
    fn a_listing_of_this_tenant_and_shared_objects_is_kept_whole() {
        let listing = [
            ours("red-1", "red"),
            tagged("mgmt", &[(TAG_SCOPE, SCOPE_SHARED)]),
            // An earlier pxfa's object of red's name: it matters (a claim conflict).
            tagged(
                "red-old",
                &[(TAG_MANAGED_BY, MANAGED_BY_VALUE), (TAG_TENANT, "red")],
            ),
        ]
        .concat();
        let mut index = TagIndex::default();
        let red = TenantId::from("red");
        index.insert_relevant(TagResource::Pod, listing.clone(), &red, &BTreeSet::new());
        let mut full = TagIndex::default();
        full.insert(TagResource::Pod, &listing);
        assert_eq!(index, full);
        assert!(!index.left_out(TagResource::Pod));
        assert_eq!(index.unclaimed_by(TagResource::Pod, &red), ["red-old"]);

        let mut merged = TagIndex::default();
        merged.merge(index);
        assert_eq!(merged, full);
    }
}
