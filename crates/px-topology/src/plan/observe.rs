//! Reading the part of the array a tenant's plan depends on.
//!
//! Round 1 (concurrent): the desired pod, host groups, hosts and volumes by name,
//! every `pxfa.io` tag per resource kind (ownership of the desired objects *and* the
//! tenant's orphans in one call per kind; the observation keeps only the tags its
//! plan can need, see `TagIndex::insert_relevant`), the token admin, the desired realm with
//! its pods, policy and admin, and the connections of the desired volumes and of
//! the desired tenant-scoped hosts and groups. Every
//! read tolerates missing names (membership filters), so a fresh array costs no
//! second try. Round 2, only when the tags name orphans or dynamically provisioned
//! drives (found by their tags, see [`super::drives`]): those volumes, the members
//! of orphan groups and their connections. A re-apply with nothing to do is
//! therefore one read round, two for a dynamic tenant whose drives pxfa tagged.

use std::collections::BTreeSet;

use flasharray::models::Tag;

use flasharray::models::Connection;
use flasharray::{FlashArray, ListParams, Result, TagResource};
use futures_util::future::{try_join_all, try_join3, try_join4};

use super::connections::{list_connections_of, tenant_rows};
use super::drives::{DriveLocator, LocateError, by_tags, locate_bound};
use super::host_groups::{lookup_host_groups, read_members};
use super::hosts::lookup_hosts;
use super::observed::{Orphans, keyed};
use super::ownership::{TagIndex, lookup_tags};
use super::pods::lookup_pods;
use super::realm::read_realm;
use super::token::read_token;
use super::volumes::lookup_volumes;
use crate::desired::{DesiredState, Scope, TenantId};

use super::observed::Observed;

/// The names the desired state gives each kind.
struct Names {
    pods: Vec<String>,
    groups: Vec<String>,
    hosts: Vec<String>,
    volumes: Vec<String>,
    /// Tenant-scoped hosts and groups: their connections are read host-side too.
    tenant_hosts: Vec<String>,
    tenant_groups: Vec<String>,
}

impl Names {
    fn of(desired: &DesiredState) -> Self {
        let tenant_scoped = |scope: Scope| scope == Scope::Tenant;
        Names {
            pods: desired.pod.iter().map(|p| p.name.to_string()).collect(),
            groups: desired
                .host_groups
                .iter()
                .map(|g| g.name.to_string())
                .collect(),
            hosts: desired.hosts.iter().map(|h| h.name.to_string()).collect(),
            volumes: desired.volumes.iter().map(|v| v.name.to_string()).collect(),
            tenant_hosts: desired
                .hosts
                .iter()
                .filter(|h| tenant_scoped(h.scope))
                .map(|h| h.name.to_string())
                .collect(),
            tenant_groups: desired
                .host_groups
                .iter()
                .filter(|g| tenant_scoped(g.scope))
                .map(|g| g.name.to_string())
                .collect(),
        }
    }

    /// The desired names of `kind`, lower-cased: whose tags the plan reads whoever
    /// owns them.
    fn lowered(&self, kind: TagResource) -> BTreeSet<String> {
        let names = match kind {
            TagResource::Volume => &self.volumes,
            TagResource::Host => &self.hosts,
            TagResource::HostGroup => &self.groups,
            TagResource::Pod => &self.pods,
        };
        names.iter().map(|n| n.to_ascii_lowercase()).collect()
    }
}

/// Reads what `desired` depends on. Read-only; see the module text for the rounds.
pub(crate) async fn observe(array: &dyn FlashArray, desired: &DesiredState) -> Result<Observed> {
    let names = Names::of(desired);
    let (mut obs, mut rows) = first_round(array, desired, &names).await?;
    rows.extend(second_round(array, desired, &names, &mut obs).await?);
    obs.connections = tenant_rows(rows, &obs, &desired.tenant);
    Ok(obs)
}

/// Round 1: the desired objects by name, every `pxfa.io` tag, the token admin, every
/// host (when node hosts are desired), the realm, and the connections.
async fn first_round(
    array: &dyn FlashArray,
    desired: &DesiredState,
    names: &Names,
) -> Result<(Observed, Vec<Connection>)> {
    let objects = try_join4(
        lookup_pods(array, &names.pods),
        lookup_host_groups(array, &names.groups),
        lookup_hosts(array, &names.hosts),
        lookup_volumes(array, &names.volumes),
    );
    let tags = try_join_all(
        [
            TagResource::Volume,
            TagResource::Host,
            TagResource::HostGroup,
            TagResource::Pod,
        ]
        .map(|k| {
            let admin = desired.api_token.as_ref().map(|t| t.admin.as_str());
            relevant_tags(array, k, (&desired.tenant, admin), names)
        }),
    );
    let token = read_token(array, desired);
    let all_hosts = async {
        if desired.hosts.is_empty() {
            Ok(Vec::new())
        } else {
            array.list_hosts(&ListParams::all()).await
        }
    };
    // Host-side connections only for tenant-scoped hosts and groups: a shared
    // management group sees every tenant's volumes, and this tenant's rows on it
    // come with the volume listing.
    let connections = list_connections_of(
        array,
        &names.volumes,
        &names.tenant_hosts,
        &names.tenant_groups,
    );
    let realm = read_realm(array, desired);
    let (((pods, groups, hosts, volumes), tags, token, rows), all_hosts, realm) = try_join3(
        try_join4(objects, tags, token, connections),
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
        token: token.state,
        token_created_at: token.created_at,
        token_expires_at: token.expires_at,
        realm,
        rounds: 1,
        ..Observed::default()
    };
    for t in tags {
        obs.tags.merge(t);
    }
    Ok((obs, rows))
}

/// Every `pxfa.io` tag of `kind`, indexed as soon as it is read so that only what
/// this tenant's plan can need outlives the call (the listing grows with tenants).
async fn relevant_tags(
    array: &dyn FlashArray,
    kind: TagResource,
    (tenant, token_admin): (&TenantId, Option<&str>),
    names: &Names,
) -> Result<TagIndex> {
    let all: Vec<Tag> = lookup_tags(array, kind, &[]).await?;
    let mut index = TagIndex::default();
    if let Some(admin) = token_admin {
        index.note_token_claimants(&all, tenant, admin);
    }
    index.insert_relevant(kind, all, tenant, &names.lowered(kind));
    Ok(index)
}

/// Round 2, only when the tags of round 1 name orphans or the desired dynamic
/// drives: those objects, the members of orphan groups, and their connections.
async fn second_round(
    array: &dyn FlashArray,
    desired: &DesiredState,
    names: &Names,
    obs: &mut Observed,
) -> Result<Vec<Connection>> {
    // Tagged drives of the desired state are no orphans: read with them below.
    obs.drives.tagged = by_tags(desired, &obs.tags);
    let drive_names = obs.drives.tagged_names();
    let known_volumes: Vec<String> = names.volumes.iter().chain(&drive_names).cloned().collect();
    obs.orphans = orphans(obs, &desired.tenant, names, &known_volumes);
    if obs.orphans.is_empty() && drive_names.is_empty() {
        return Ok(Vec::new());
    }
    obs.rounds = 2;
    let o = &obs.orphans;
    let volumes_to_read: Vec<String> = o.volumes.iter().chain(&drive_names).cloned().collect();
    let (objects, members, rows) = try_join3(
        try_join4(
            lookup_pods(array, &o.pods),
            lookup_host_groups(array, &o.host_groups),
            lookup_hosts(array, &o.hosts),
            lookup_volumes(array, &volumes_to_read),
        ),
        read_members(array, &o.host_groups),
        list_connections_of(array, &volumes_to_read, &o.hosts, &o.host_groups),
    )
    .await?;
    let (pods, groups, hosts, volumes) = objects;
    obs.pods.extend(keyed(pods, |p| &p.name));
    obs.host_groups.extend(keyed(groups, |g| &g.name));
    obs.hosts.extend(keyed(hosts, |h| &h.name));
    obs.volumes.extend(keyed(volumes, |v| &v.name));
    obs.group_members = members;
    Ok(rows)
}

/// The objects tagged for `tenant` that the desired state does not name.
fn orphans(obs: &Observed, tenant: &TenantId, names: &Names, known_volumes: &[String]) -> Orphans {
    let not_desired = |kind: TagResource, desired: &[String]| -> Vec<String> {
        let want: BTreeSet<String> = desired.iter().map(|n| n.to_ascii_lowercase()).collect();
        obs.tags
            .owned_by(kind, tenant)
            .into_iter()
            .filter(|n| !want.contains(&n.to_ascii_lowercase()))
            .collect()
    };
    Orphans {
        volumes: not_desired(TagResource::Volume, known_volumes),
        hosts: not_desired(TagResource::Host, &names.hosts),
        host_groups: not_desired(TagResource::HostGroup, &names.groups),
        pods: not_desired(TagResource::Pod, &names.pods),
    }
}

/// Asks `locator` about the desired drives `observe` did not find by tags and looks
/// the bound ones up on the array (one filtered listing per pod and batch of
/// claims); records the result in `observed.drives`. Read-only on the array.
pub(crate) async fn locate_drives(
    array: &dyn FlashArray,
    desired: &DesiredState,
    observed: &mut Observed,
    locator: &dyn DriveLocator,
) -> std::result::Result<(), LocateError> {
    locate_bound(array, desired, &mut observed.drives, locator).await?;
    tags_of_located(array, observed).await?;
    Ok(())
}

/// The tags of the volumes found through their claims that the observation left
/// out (another tenant's: the drive plan refuses to retag them and says whose they
/// are). One read by name, only when tags were left out and such a volume lacks them.
async fn tags_of_located(array: &dyn FlashArray, observed: &mut Observed) -> Result<()> {
    let kind = TagResource::Volume;
    if !observed.tags.left_out(kind) {
        return Ok(());
    }
    let unknown: BTreeSet<String> = (observed.drives.bound.values())
        .flat_map(|b| &b.matches)
        .filter(|v| observed.tags.get(kind, &v.name).is_none())
        .map(|v| v.name.clone())
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = unknown.into_iter().collect();
    let tags = lookup_tags(array, kind, &names).await?;
    observed.tags.insert(kind, &tags);
    Ok(())
}
