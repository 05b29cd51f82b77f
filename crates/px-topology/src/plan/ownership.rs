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
//! what they hold, with [`is_tenants`] for the pods inside a realm. A tenant's token
//! user is recorded on its pod instead (`token-user=<user>`): another tenant whose
//! token user a pod names, or whose token user is the default name of a tenant
//! that records none, is refused it ([`TagIndex::token_claimants`],
//! `token::claimed_elsewhere`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use flasharray::models::Tag;
use flasharray::{FlashArray, Result, TagParams, TagResource};
use futures_util::future::try_join_all;

use super::change::{Action, Blocker, Change, Kind, MAX_NAMES_PER_CALL, Payload};
use crate::desired::{
    MANAGED_BY_VALUE, SCOPE_SHARED, Scope, TAG_MANAGED_BY, TAG_NAMESPACE, TAG_SCOPE, TAG_TENANT,
    TAG_TENANT_NAMESPACE, TAG_TOKEN_USER, TenantId,
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
    /// Other tenants with objects on the array, as reports name them, with what
    /// their tags say of the desired token user ([`TagIndex::note_token_claimants`]).
    token_uses: BTreeMap<String, TokenUse>,
}

/// What one other tenant's tags say of a token user: read over all its objects,
/// since only its pod records its token user.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct TokenUse {
    /// A `token-user` tag of its names the user.
    names_it: bool,
    /// It has a `token-user` tag at all: its user is the one the tag names.
    recorded: bool,
    /// The user is its default token user (`pxfa-<name>`).
    default_is_it: bool,
}

impl TokenUse {
    fn merge(&mut self, other: TokenUse) {
        self.names_it |= other.names_it;
        self.recorded |= other.recorded;
        self.default_is_it |= other.default_is_it;
    }

    /// Whether it may use the user: its pod names it, or the user is its default
    /// and no tag of it says otherwise (a tenant of an earlier pxfa, or one not
    /// applied since pxfa recorded token users).
    fn claims(self) -> bool {
        self.names_it || (!self.recorded && self.default_is_it)
    }
}

/// The other tenants with objects on the array that may use a token user, and how:
/// their pod's `token-user` tag names it, or it is their default token user and no
/// tag of theirs names another. Shown as the phrase reports use ("the default token
/// user of tenant team-a/dev").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenClaimants {
    /// Tenants whose pod's `token-user` tag names the user, with whether it is
    /// their default token user too.
    tagged: BTreeMap<String, bool>,
    /// Tenants whose default token user it is, with no tag naming another.
    by_default: BTreeSet<String>,
}

impl TokenClaimants {
    /// True when no other tenant may use the user.
    pub fn is_empty(&self) -> bool {
        self.tagged.is_empty() && self.by_default.is_empty()
    }

    /// Whether a tenant's pod names the user (not only its default name).
    pub(crate) fn any_tagged(&self) -> bool {
        !self.tagged.is_empty()
    }

    /// Whether a tenant may use it as its default token user.
    pub(crate) fn any_by_default(&self) -> bool {
        !self.by_default.is_empty()
    }
}

/// `the default token user of tenant a, b and the token user of tenant c (its pod's
/// pxfa.io token-user tag)`.
impl std::fmt::Display for TokenClaimants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |s: Vec<&String>| s.into_iter().cloned().collect::<Vec<_>>().join(", ");
        let tagged = |default: bool| -> Vec<&String> {
            (self.tagged.iter())
                .filter(|(_, d)| **d == default)
                .map(|(t, _)| t)
                .collect()
        };
        let tag = format!("its pod's {TAG_NAMESPACE} {TAG_TOKEN_USER} tag");
        let mut parts = Vec::new();
        if !self.by_default.is_empty() {
            let names = list(self.by_default.iter().collect());
            parts.push(format!("the default token user of tenant {names}"));
        }
        for (default, what) in [(true, "the default token user"), (false, "the token user")] {
            let names = tagged(default);
            if !names.is_empty() {
                parts.push(format!("{what} of tenant {} ({tag})", list(names)));
            }
        }
        f.write_str(&parts.join(" and "))
    }
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

    /// The claim a drive is tagged with: the management Portworx created it (dynamic
    /// provisioning) and releases it, not pxfa. The one test of "a dynamic drive".
    pub(crate) fn claim_of(&self, volume: &str) -> Option<&str> {
        (self.get(TagResource::Volume, volume))
            .and_then(|t| t.get(crate::desired::TAG_CLAIM))
            .map(String::as_str)
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
            token_uses,
        } = other;
        for (t, u) in token_uses {
            self.token_uses.entry(t).or_default().merge(u);
        }
        self.volumes.extend(volumes);
        self.hosts.extend(hosts);
        self.host_groups.extend(host_groups);
        self.pods.extend(pods);
        self.spelled.extend(spelled);
        for (mine, theirs) in self.left_out.iter_mut().zip(left_out) {
            *mine |= theirs;
        }
    }

    /// Notes what the objects among `tags` of tenants other than `tenant` (another
    /// namespace's, or an earlier pxfa's without one) say of the token user
    /// `admin`. Array users carry no tags: a tenant's pod records its token user
    /// ([`TAG_TOKEN_USER`]), and a tenant none of whose objects records one (an
    /// earlier pxfa's, or one not applied since) may use its default token user,
    /// which derives from the tenant name alone. Either way, while such a tenant
    /// has objects on the array, the user may be its
    /// ([`TagIndex::token_claimants`]).
    pub(crate) fn note_token_claimants(&mut self, tags: &[Tag], tenant: &TenantId, admin: &str) {
        for t in by_object(tags).values() {
            if !matches!(
                owner(Some(t), tenant),
                Owner::OtherTenant(_) | Owner::Unclaimed
            ) {
                continue;
            }
            let Some(other) = marked_tenant(t) else {
                continue;
            };
            let recorded = t.get(TAG_TOKEN_USER);
            let seen = TokenUse {
                names_it: recorded.is_some_and(|u| u.eq_ignore_ascii_case(admin)),
                recorded: recorded.is_some(),
                default_is_it: crate::spec::default_token_user(other.name)
                    .eq_ignore_ascii_case(admin),
            };
            self.token_uses
                .entry(other.to_string())
                .or_default()
                .merge(seen);
        }
    }

    /// The other tenants that may use the desired token user
    /// ([`TagIndex::note_token_claimants`]).
    pub(crate) fn token_claimants(&self) -> TokenClaimants {
        let mut out = TokenClaimants::default();
        for (t, u) in self.token_uses.iter().filter(|(_, u)| u.claims()) {
            if u.names_it {
                out.tagged.insert(t.clone(), u.default_is_it);
            } else {
                out.by_default.insert(t.clone());
            }
        }
        out
    }

    /// Whether a pod of `tenant` records `admin` as its token user: it has been
    /// using it.
    pub(crate) fn records_token_user(&self, tenant: &TenantId, admin: &str) -> bool {
        self.pods.values().any(|t| {
            is_tenants(Some(t), tenant)
                && t.get(TAG_TOKEN_USER)
                    .is_some_and(|u| u.eq_ignore_ascii_case(admin))
        })
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

    /// `tenant`'s pod `pod`, recording `user` as its token user when given.
    fn pod_of(pod: &str, tenant: &str, user: Option<&str>) -> Vec<Tag> {
        let mut tags = ours(pod, tenant);
        if let Some(u) = user {
            tags.extend(tagged(pod, &[(TAG_TOKEN_USER, u)]));
        }
        tags
    }

    /// The claimants of `admin` seen from `me`, over every kind's listing.
    fn claimants_of(listings: &[(TagResource, Vec<Tag>)], me: &TenantId, admin: &str) -> TagIndex {
        let mut index = TagIndex::default();
        for (kind, tags) in listings {
            let mut one = TagIndex::default();
            one.note_token_claimants(tags, me, admin);
            one.insert(*kind, tags);
            index.merge(one);
        }
        index
    }

    #[test]
    fn a_pods_token_user_tag_names_its_user_and_frees_its_default_name() {
        let me = TenantId::new("team-c", "beta");
        // team-a/alpha's pod names `shared` explicitly: it claims `shared`.
        let listings = [(
            TagResource::Pod,
            pod_of("alpha", "team-a/alpha", Some("Shared")),
        )];
        let c = claimants_of(&listings, &me, "shared").token_claimants();
        assert!(c.any_tagged() && !c.any_by_default(), "{c:?}");
        assert_eq!(
            c.to_string(),
            "the token user of tenant team-a/alpha (its pod's pxfa.io token-user tag)"
        );
        assert!(
            claimants_of(&listings, &me, "other")
                .token_claimants()
                .is_empty()
        );

        // team-b/dev's pod names its own user: pxfa-dev, its default name, is free,
        // though its volumes (which record no user) are read too.
        let me = TenantId::new("team-a", "dev");
        let listings = [
            (
                TagResource::Pod,
                pod_of("dev-b", "team-b/dev", Some("pxfa-team-b-dev")),
            ),
            (TagResource::Volume, ours("dev-b::v1", "team-b/dev")),
        ];
        assert!(
            claimants_of(&listings, &me, "pxfa-dev")
                .token_claimants()
                .is_empty()
        );
        let c = claimants_of(&listings, &me, "pxfa-team-b-dev").token_claimants();
        assert!(c.any_tagged());

        // A tenant that records no user (an earlier pxfa's, or not applied since)
        // may use its default name.
        let listings = [
            (TagResource::Pod, pod_of("dev-b", "team-b/dev", None)),
            (
                TagResource::Pod,
                tagged(
                    "dev",
                    &[(TAG_MANAGED_BY, MANAGED_BY_VALUE), (TAG_TENANT, "dev")],
                ),
            ),
        ];
        let c = claimants_of(&listings, &me, "pxfa-dev").token_claimants();
        assert!(c.any_by_default() && !c.any_tagged());
        assert_eq!(
            c.to_string(),
            "the default token user of tenant dev (no namespace: tagged by an earlier pxfa), team-b/dev"
        );
        // This tenant's own objects never claim its user from it.
        let listings = [(
            TagResource::Pod,
            pod_of("dev-a", "team-a/dev", Some("pxfa-dev")),
        )];
        let index = claimants_of(&listings, &me, "pxfa-dev");
        assert!(index.token_claimants().is_empty());
        assert!(index.records_token_user(&me, "PXFA-dev"));
        assert!(!index.records_token_user(&TenantId::new("team-b", "dev"), "pxfa-dev"));
    }

    /// Issue #34: an explicit `spec.array.tokenUser` another tenant's pod names is
    /// refused before any write, naming the owner, even to a tenant with objects
    /// unless its own pod names the user too; a default name is refused only to a
    /// tenant with no objects yet.
    #[test]
    fn a_token_user_another_tenants_pod_names_is_refused() {
        use crate::desired::{DesiredApiToken, DesiredState};
        let desired = |ns: &str, name: &str, admin: &str| DesiredState {
            tenant: TenantId::new(ns, name),
            api_token: Some(DesiredApiToken {
                admin: admin.into(),
                lifetime: None,
            }),
            ..DesiredState::default()
        };
        let refused = |d: &DesiredState, listings: &[(TagResource, Vec<Tag>)]| {
            let admin = &d.api_token.as_ref().unwrap().admin;
            super::super::token::claimed_elsewhere(d, &claimants_of(listings, &d.tenant, admin))
        };
        let alpha = (
            TagResource::Pod,
            pod_of("alpha", "team-a/alpha", Some("shared")),
        );

        // A new tenant naming team-a/alpha's user: refused, naming the owner.
        let beta = desired("team-b", "beta", "shared");
        let b = refused(&beta, std::slice::from_ref(&alpha)).expect("refused");
        assert!(
            b.reason.contains("team-a/alpha") && b.reason.contains("token-user tag"),
            "{}",
            b.reason
        );
        assert!(
            !b.reason.contains("derives from the tenant name"),
            "{}",
            b.reason
        );
        assert!(b.resolution.contains("spec.array.tokenUser"));
        // ... and a live one (it has a pod, which records another user or none).
        for own in [None, Some("mine")] {
            let live = [
                alpha.clone(),
                (TagResource::Pod, pod_of("beta", "team-b/beta", own)),
            ];
            assert!(refused(&beta, &live).is_some(), "{own:?}");
        }
        // Both pods name it (they shared it before pxfa recorded users): kept.
        let both = [
            alpha.clone(),
            (
                TagResource::Pod,
                pod_of("beta", "team-b/beta", Some("shared")),
            ),
        ];
        assert!(refused(&beta, &both).is_none());

        // The default-name rule is as it was: refused to a tenant with no objects,
        // kept by one that has them.
        let other = (TagResource::Pod, pod_of("dev-b", "team-b/dev", None));
        let dev = desired("team-a", "dev", "pxfa-dev");
        let b = refused(&dev, std::slice::from_ref(&other)).expect("refused");
        assert!(
            b.reason.contains("default token user of tenant team-b/dev"),
            "{}",
            b.reason
        );
        let live = [
            other,
            (TagResource::Pod, pod_of("dev-a", "team-a/dev", None)),
        ];
        assert!(refused(&dev, &live).is_none());
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
