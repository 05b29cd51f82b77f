//! Reading the part of the array a tenant's plan depends on.
//!
//! Round 1 (concurrent): the desired pod, host groups, hosts and volumes by name,
//! every `pxfa.io` tag per resource kind (ownership of the desired objects *and* the
//! tenant's orphans in one call per kind), the token admin, the desired realm with
//! its pods, policy and admin, and the connections of the desired volumes and of
//! the desired tenant-scoped hosts and groups. Every
//! read tolerates missing names (membership filters), so a fresh array costs no
//! second try. Round 2, only when the tags name orphans or dynamically provisioned
//! drives (found by their tags, see [`super::drives`]): those volumes, the members
//! of orphan groups and their connections. A re-apply with nothing to do is
//! therefore one read round, two for a dynamic tenant whose drives pxfa tagged.

use std::collections::{BTreeMap, BTreeSet};

use flasharray::models::{Connection, Host, HostGroup, Pod, Tag, Volume};
use flasharray::{
    ConnectionParams, ErrorKind, FlashArray, FlashArrayExt, ListParams, MemberParams, Result,
    TagParams, TagResource, membership_filter,
};
use futures_util::future::try_join_all;

use super::MAX_NAMES_PER_CALL;
use super::drives::ObservedDrives;
use crate::desired::{
    DesiredState, MANAGED_BY_VALUE, Scope, TAG_MANAGED_BY, TAG_NAMESPACE, TAG_TENANT,
};

/// pxfa's tags (`pxfa.io` namespace) per object, keyed by lower-cased object name
/// because array names are case-insensitive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagIndex {
    /// Volume tags.
    pub volumes: BTreeMap<String, BTreeMap<String, String>>,
    /// Host tags.
    pub hosts: BTreeMap<String, BTreeMap<String, String>>,
    /// Host group tags.
    pub host_groups: BTreeMap<String, BTreeMap<String, String>>,
    /// Pod tags.
    pub pods: BTreeMap<String, BTreeMap<String, String>>,
    /// The object names as the array spells them, by kind slot and lower-cased name.
    spelled: BTreeMap<(u8, String), String>,
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

    /// Names (as spelled on the array) of the objects of `kind` tagged for `tenant`.
    pub fn owned_by(&self, kind: TagResource, tenant: &str) -> Vec<String> {
        self.of(kind)
            .iter()
            .filter(|(_, t)| {
                t.get(TAG_MANAGED_BY).map(String::as_str) == Some(MANAGED_BY_VALUE)
                    && t.get(TAG_TENANT).map(String::as_str) == Some(tenant)
            })
            .map(|(k, _)| {
                self.spelled
                    .get(&(kind_slot(kind), k.clone()))
                    .cloned()
                    .unwrap_or_else(|| k.clone())
            })
            .collect()
    }
}

/// The token admin as the array reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenState {
    /// The desired state asks for no token; nothing was read.
    #[default]
    NotWanted,
    /// The admin user does not exist on the array.
    AdminMissing,
    /// The admin exists and has no API token.
    NoToken,
    /// The admin already has an API token.
    HasToken,
}

/// What the token journal (`crate::vault`) says about the observed token; filled in
/// by `vault::read_journal`, [`TokenJournal::None`] when no journal was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenJournal {
    /// No entry (or no journal read).
    #[default]
    None,
    /// An entry that does not match the array (another token, or none): ignored.
    Stale,
    /// The array holds the token the journal holds, not yet delivered: deliver it
    /// from the journal without an array write.
    PendingDelivery,
    /// The array holds a token created within the window of an intent whose answer
    /// never reached the journal: provably ours, its value never left the array.
    Interrupted,
}

/// What the array holds of a tenant's objects, keyed by lower-cased name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// Pods (desired and orphaned), destroyed ones included.
    pub pods: BTreeMap<String, Pod>,
    /// Host groups (desired and orphaned).
    pub host_groups: BTreeMap<String, HostGroup>,
    /// Hosts (desired and orphaned).
    pub hosts: BTreeMap<String, Host>,
    /// Every host on the array, read only when the desired state has management
    /// node hosts: they are found by initiator, not by name.
    pub all_hosts: Vec<Host>,
    /// Volumes (desired and orphaned), destroyed ones included.
    pub volumes: BTreeMap<String, Volume>,
    /// Every `pxfa.io` tag on the array, by kind and object.
    pub tags: TagIndex,
    /// Connections of the existing tenant volumes, hosts and host groups (one row per
    /// host, as the array lists them), without duplicates.
    pub connections: Vec<Connection>,
    /// Members of the orphaned host groups, by lower-cased group name.
    pub group_members: BTreeMap<String, Vec<String>>,
    /// The token admin.
    pub token: TokenState,
    /// When the admin's token was created (ms since the epoch, the array's clock).
    pub token_created_at: Option<u64>,
    /// What the token journal says about that token.
    pub token_journal: TokenJournal,
    /// The desired realm, its pods, policy and admin (read in round 1).
    pub realm: super::RealmState,
    /// Objects tagged for this tenant that the desired state no longer names.
    pub orphans: Orphans,
    /// The desired dynamically provisioned drives found by tags (and, after
    /// [`super::locate_drives`], through their claims).
    pub drives: ObservedDrives,
    /// Dependent read rounds `observe` took: 1, or 2 when there were orphans.
    pub rounds: usize,
}

/// Objects tagged for the tenant that the desired state no longer names, as the array
/// spells their names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Orphans {
    /// Volumes.
    pub volumes: Vec<String>,
    /// Hosts.
    pub hosts: Vec<String>,
    /// Host groups.
    pub host_groups: Vec<String>,
    /// Pods.
    pub pods: Vec<String>,
}

impl Orphans {
    fn is_empty(&self) -> bool {
        self.volumes.is_empty()
            && self.hosts.is_empty()
            && self.host_groups.is_empty()
            && self.pods.is_empty()
    }
}

fn keyed<T>(items: Vec<T>, name: impl Fn(&T) -> &str) -> BTreeMap<String, T> {
    items
        .into_iter()
        .map(|i| (name(&i).to_ascii_lowercase(), i))
        .collect()
}

/// Reads what `desired` depends on. Read-only; see the module text for the rounds.
pub async fn observe(array: &dyn FlashArray, desired: &DesiredState) -> Result<Observed> {
    let pod_names: Vec<String> = desired.pod.iter().map(|p| p.name.to_string()).collect();
    let group_names: Vec<String> = desired
        .host_groups
        .iter()
        .map(|g| g.name.to_string())
        .collect();
    let host_names: Vec<String> = desired.hosts.iter().map(|h| h.name.to_string()).collect();
    let volume_names: Vec<String> = desired.volumes.iter().map(|v| v.name.to_string()).collect();

    // Round 1. Host-side connections only for tenant-scoped hosts and groups: a
    // shared management group sees every tenant's volumes, and this tenant's rows on
    // it come with the volume listing.
    let tenant_hosts: Vec<String> = desired
        .hosts
        .iter()
        .filter(|h| h.scope == Scope::Tenant)
        .map(|h| h.name.to_string())
        .collect();
    let tenant_groups: Vec<String> = desired
        .host_groups
        .iter()
        .filter(|g| g.scope == Scope::Tenant)
        .map(|g| g.name.to_string())
        .collect();
    let objects = futures_util::future::try_join4(
        lookup_pods(array, &pod_names),
        lookup_host_groups(array, &group_names),
        lookup_hosts(array, &host_names),
        lookup_volumes(array, &volume_names),
    );
    let tags = try_join_all(
        [
            TagResource::Volume,
            TagResource::Host,
            TagResource::HostGroup,
            TagResource::Pod,
        ]
        .map(|k| async move { lookup_tags(array, k, &[]).await.map(|t| (k, t)) }),
    );
    let token = read_token_state(array, desired);
    let all_hosts = async {
        if desired.hosts.is_empty() {
            Ok(Vec::new())
        } else {
            array.list_hosts(&ListParams::all()).await
        }
    };
    let connections = list_connections_of(array, &volume_names, &tenant_hosts, &tenant_groups);
    let realm = super::realm::read_realm(array, desired);
    let (((pods, groups, hosts, volumes), tags, token, mut rows), all_hosts, realm) =
        futures_util::future::try_join3(
            futures_util::future::try_join4(objects, tags, token, connections),
            all_hosts,
            realm,
        )
        .await?;

    let mut obs = Observed {
        pods: keyed(pods, |p| &p.name),
        host_groups: keyed(groups, |g| &g.name),
        hosts: keyed(hosts, |h| &h.name),
        volumes: keyed(volumes, |v| &v.name),
        all_hosts,
        token: token.0,
        token_created_at: token.1,
        realm,
        rounds: 1,
        ..Observed::default()
    };
    for (kind, t) in tags {
        obs.tags.insert(kind, &t);
    }

    // Round 2: orphans, with their connections.
    let not_desired = |names: Vec<String>, desired: &[String]| -> Vec<String> {
        let want: BTreeSet<String> = desired.iter().map(|n| n.to_ascii_lowercase()).collect();
        names
            .into_iter()
            .filter(|n| !want.contains(&n.to_ascii_lowercase()))
            .collect()
    };
    let t = &desired.tenant;
    // Tagged drives of the desired state are no orphans: read with them below.
    obs.drives.tagged = super::drives::by_tags(desired, &obs.tags);
    let drive_names = obs.drives.tagged_names();
    let known_volumes: Vec<String> = volume_names.iter().chain(&drive_names).cloned().collect();
    obs.orphans = Orphans {
        volumes: not_desired(obs.tags.owned_by(TagResource::Volume, t), &known_volumes),
        hosts: not_desired(obs.tags.owned_by(TagResource::Host, t), &host_names),
        host_groups: not_desired(obs.tags.owned_by(TagResource::HostGroup, t), &group_names),
        pods: not_desired(obs.tags.owned_by(TagResource::Pod, t), &pod_names),
    };
    if !obs.orphans.is_empty() || !drive_names.is_empty() {
        obs.rounds = 2;
        let o = &obs.orphans;
        let volumes_to_read: Vec<String> = o.volumes.iter().chain(&drive_names).cloned().collect();
        let members = try_join_all(o.host_groups.iter().map(|g| async move {
            let m = array
                .list_host_group_members(&MemberParams {
                    group_names: vec![g.clone()],
                    member_names: vec![],
                })
                .await;
            match m {
                Ok(m) => Ok((
                    g.to_ascii_lowercase(),
                    m.into_iter()
                        .filter_map(|m| m.member.name)
                        .collect::<Vec<_>>(),
                )),
                Err(e) if e.kind() == ErrorKind::NotFound => Ok((g.to_ascii_lowercase(), vec![])),
                Err(e) => Err(e),
            }
        }));
        let (objects, members, orphan_rows) = futures_util::future::try_join3(
            futures_util::future::try_join4(
                lookup_pods(array, &o.pods),
                lookup_host_groups(array, &o.host_groups),
                lookup_hosts(array, &o.hosts),
                lookup_volumes(array, &volumes_to_read),
            ),
            members,
            list_connections_of(array, &volumes_to_read, &o.hosts, &o.host_groups),
        )
        .await?;
        let (pods, groups, hosts, volumes) = objects;
        obs.pods.extend(keyed(pods, |p| &p.name));
        obs.host_groups.extend(keyed(groups, |g| &g.name));
        obs.hosts.extend(keyed(hosts, |h| &h.name));
        obs.volumes.extend(keyed(volumes, |v| &v.name));
        obs.group_members = members.into_iter().collect();
        rows.extend(orphan_rows);
    }

    // Keep the rows of live volumes that exist and of the tenant's own hosts and
    // groups (by the tags the array holds, not the desired state).
    let mine = |kind: TagResource, name: &str| {
        obs.tags
            .get(kind, name)
            .and_then(|t| t.get(TAG_TENANT))
            .map(String::as_str)
            == Some(desired.tenant.as_str())
    };
    let live = |v: &str| {
        obs.volumes
            .get(&v.to_ascii_lowercase())
            .is_some_and(|v| !v.destroyed)
    };
    let keep = |c: &Connection| {
        c.volume.name.as_deref().is_some_and(live)
            || c.host.name.as_deref().is_some_and(|h| {
                obs.hosts.contains_key(&h.to_ascii_lowercase()) && mine(TagResource::Host, h)
            })
            || c.host_group.name.as_deref().is_some_and(|g| {
                obs.host_groups.contains_key(&g.to_ascii_lowercase())
                    && mine(TagResource::HostGroup, g)
            })
    };
    let kept: Vec<Connection> = dedup_rows(rows).into_iter().filter(keep).collect();
    obs.connections = kept;
    Ok(obs)
}

/// The desired token user's token on the array, and when it was created
/// (`NotWanted` when the desired state wants no token; the admin missing is
/// [`TokenState::AdminMissing`], not an error).
pub async fn read_token_state(
    array: &dyn FlashArray,
    desired: &DesiredState,
) -> Result<(TokenState, Option<u64>)> {
    let Some(tok) = &desired.api_token else {
        return Ok((TokenState::NotWanted, None));
    };
    match array
        .list_api_tokens(std::slice::from_ref(&tok.admin), false)
        .await
    {
        Ok(items) => {
            let found = items.iter().find(|a| {
                a.name.eq_ignore_ascii_case(&tok.admin)
                    && (a.api_token.created_at.is_some()
                        || a.api_token.token.is_some()
                        || a.api_token.expires_at.is_some())
            });
            Ok(match found {
                Some(a) => (TokenState::HasToken, a.api_token.created_at),
                None => (TokenState::NoToken, None),
            })
        }
        Err(e) if e.kind() == ErrorKind::NotFound => Ok((TokenState::AdminMissing, None)),
        Err(e) => Err(e),
    }
}

/// The named volumes that exist, destroyed ones included (the lookup rule is
/// [`flasharray::ext`]'s).
pub(crate) async fn lookup_volumes(
    array: &dyn FlashArray,
    names: &[String],
) -> Result<Vec<Volume>> {
    array.lookup_volumes(names).await
}

/// The named hosts that exist.
pub(crate) async fn lookup_hosts(array: &dyn FlashArray, names: &[String]) -> Result<Vec<Host>> {
    array.lookup_hosts(names).await
}

/// The named host groups that exist.
pub(crate) async fn lookup_host_groups(
    array: &dyn FlashArray,
    names: &[String],
) -> Result<Vec<HostGroup>> {
    array.lookup_host_groups(names).await
}

/// The named pods that exist, destroyed ones included.
pub(crate) async fn lookup_pods(array: &dyn FlashArray, names: &[String]) -> Result<Vec<Pod>> {
    array.lookup_pods(names).await
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

/// Connections of the given volumes, hosts and host groups, one call per chunk of
/// names and side, concurrently, by membership filter (`volume.name=(...)`), so that
/// missing names simply have no rows; without duplicate rows.
pub(crate) async fn list_connections_of(
    array: &dyn FlashArray,
    volumes: &[String],
    hosts: &[String],
    groups: &[String],
) -> Result<Vec<Connection>> {
    let mut params = Vec::new();
    for (field, names) in [
        ("volume.name", volumes),
        ("host.name", hosts),
        ("host_group.name", groups),
    ] {
        for c in names.chunks(MAX_NAMES_PER_CALL) {
            params.push(ConnectionParams {
                filter: Some(membership_filter(field, c)),
                ..Default::default()
            });
        }
    }
    let calls = params.iter().map(|p| async move {
        match array.list_connections(p).await {
            Ok(rows) => Ok(rows),
            // Nothing matched the filter.
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    });
    let rows = try_join_all(calls).await?.into_iter().flatten().collect();
    Ok(dedup_rows(rows))
}

/// `rows` without repeats of the same host, group and volume (names ignore case).
fn dedup_rows(rows: Vec<Connection>) -> Vec<Connection> {
    let mut seen = BTreeSet::new();
    rows.into_iter()
        .filter(|c| {
            seen.insert((
                c.host.name.clone().map(|n| n.to_ascii_lowercase()),
                c.host_group.name.clone().map(|n| n.to_ascii_lowercase()),
                c.volume.name.clone().map(|n| n.to_ascii_lowercase()),
            ))
        })
        .collect()
}
