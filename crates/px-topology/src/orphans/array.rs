//! The array's orphans: objects tagged for a tenant that does not exist, drive
//! volumes no claim binds, hosts pxfa created whose initiators no node has, and the
//! connections of pxfa's volumes to such hosts; and their cleanup.
//!
//! One read: every `pxfa.io` tag per kind, the tagged volumes and pods (destroyed
//! ones included), every host (initiators), the connections of the tagged hosts and
//! the array's eradication settings.

use std::collections::{BTreeMap, BTreeSet};

use flasharray::{
    ConnectionTarget, ErrorKind, FlashArray, HostGroupName, HostName, ListParams, TagResource,
    VolumeName, Wwn,
};

use super::evidence::{Judged, TenantRef, Unaccounted, spec_hosted_cluster, tagged_identity};
use super::seen::{Seen, marked, tagged_drives};
use super::{
    CleanupItem, CleanupReport, ClusterFacts, Known, NotChecked, Orphan, OrphanKind, SafeMode,
    ScanOptions, Target,
};
use crate::converge::{DestroyOptions, destroy};
use crate::desired::{DesiredState, TAG_ROLE, TenantId};
use crate::plan::{TagIndex, list_connections_of, lookup_pods, lookup_tags, lookup_volumes};
use crate::plan::{kind_label, marked_tenant};

/// Reads what the rules need (`known`: whose realms to read).
pub(super) async fn read(array: &dyn FlashArray, known: &Known) -> flasharray::Result<Seen> {
    let mut tags = TagIndex::default();
    for kind in [
        TagResource::Volume,
        TagResource::Host,
        TagResource::HostGroup,
        TagResource::Pod,
    ] {
        tags.insert(kind, &lookup_tags(array, kind, &[]).await?);
    }
    let names = |kind| -> Vec<String> { marked(&tags, kind).into_iter().map(|(n, _)| n).collect() };
    let (volumes, pods, hosts, info) = futures_util::future::try_join4(
        lookup_volumes(array, &names(TagResource::Volume)),
        lookup_pods(array, &names(TagResource::Pod)),
        array.list_hosts(&ListParams::all()),
        array.get_array(),
    )
    .await?;
    let connections = list_connections_of(array, &[], &names(TagResource::Host), &[]).await?;
    let realms = super::realm::read(array, &tags, known).await?;
    let cfg = &info.eradication_config;
    let safe_mode = SafeMode {
        enabled: cfg
            .manual_eradication
            .as_ref()
            .is_some_and(|m| !matches!(m, flasharray::models::ManualEradication::AllEnabled)),
        eradication_delay_ms: cfg.eradication_delay,
    };
    Ok(Seen {
        tags,
        volumes: volumes
            .into_iter()
            .map(|v| (v.name.to_ascii_lowercase(), v))
            .collect(),
        pods: pods
            .into_iter()
            .map(|p| (p.name.to_ascii_lowercase(), p))
            .collect(),
        hosts,
        connections,
        realms,
        safe_mode,
    })
}

fn destroyed(seen: &Seen, kind: TagResource, name: &str) -> Option<Option<u64>> {
    let key = name.to_ascii_lowercase();
    match kind {
        TagResource::Volume => seen
            .volumes
            .get(&key)
            .filter(|v| v.destroyed)
            .map(|v| v.time_remaining),
        TagResource::Pod => seen
            .pods
            .get(&key)
            .filter(|p| p.destroyed)
            .map(|p| p.time_remaining),
        _ => None,
    }
}

/// pxfa's destroyed volumes and pods, and gone tenants' destroyed realms: they
/// wait for the array's eradication.
pub(super) fn pending(seen: &Seen, known: &Known) -> Vec<super::PendingEradication> {
    let mut out = super::realm::pending(&seen.realms, &seen.tags, known);
    for kind in [TagResource::Pod, TagResource::Volume] {
        for (name, tenant) in marked(&seen.tags, kind) {
            if let Some(time_remaining_ms) = destroyed(seen, kind, &name) {
                out.push(super::PendingEradication {
                    object: format!("{} {name}", kind_label(kind)),
                    tenant,
                    time_remaining_ms,
                });
            }
        }
    }
    out
}

/// The array's orphans.
pub(super) fn find(
    seen: &Seen,
    (known, judged): (&Known, &Judged),
    facts: Option<&ClusterFacts>,
    opts: &ScanOptions,
    not_checked: &mut Vec<NotChecked>,
) -> Vec<Orphan> {
    let mut out = gone_tenants(seen, judged, opts);
    out.extend(super::realm::find(&seen.realms, &seen.tags, judged));
    if let Some(f) = facts {
        out.extend(unbound_drives(seen, known, f, opts));
    }
    match hosts_unchecked(known, judged) {
        Some(why) => not_checked.extend(
            [
                OrphanKind::HostWithoutNode,
                OrphanKind::ConnectionToGoneHost,
            ]
            .map(|kind| NotChecked {
                kind,
                why: why.clone(),
            }),
        ),
        None => out.extend(hosts_without_nodes(seen, known)),
    }
    out
}

/// Why the host rules cannot run: a host is without a node only when every tenant's
/// nodes are known, so every tenant must be loaded, and none may be unaccounted for
/// or possibly missing from an incomplete list of specs.
fn hosts_unchecked(known: &Known, judged: &Judged) -> Option<String> {
    if let Some(why) = known.incomplete() {
        return Some(why);
    }
    if judged.any_unaccounted() {
        return Some("tenants not accounted for are on the array; their nodes are unknown".into());
    }
    match &known.evidence {
        super::Evidence::Specs { complete: false } => Some(
            "the specs given may not be every tenant (--kubeconfig, or --all-tenants-given); another tenant's nodes may use these hosts".into(),
        ),
        super::Evidence::Specs { complete: true } => None,
        super::Evidence::Cluster { storages } => {
            let missing: Vec<String> = storages
                .iter()
                .filter(|s| !known.ids().any(|k| k.matches(s)))
                .map(ToString::to_string)
                .collect();
            (!missing.is_empty()).then(|| {
                format!(
                    "TenantStorage objects not given with -f: {}; their nodes are unknown",
                    missing.join(", ")
                )
            })
        }
    }
}

/// The age of a live volume, from the array's `created` time, when it says.
fn volume_age(seen: &Seen, name: &str, now_ms: u64) -> Option<u64> {
    seen.volumes
        .get(&name.to_ascii_lowercase())
        .and_then(|v| v.created)
        .map(|c| now_ms.saturating_sub(c))
}

/// Whether the object `name` of `kind` is there and live.
fn live(seen: &Seen, kind: TagResource, name: &str) -> bool {
    let present = match kind {
        TagResource::Volume => seen.volumes.contains_key(&name.to_ascii_lowercase()),
        TagResource::Pod => seen.pods.contains_key(&name.to_ascii_lowercase()),
        _ => true,
    };
    present && destroyed(seen, kind, name).is_none()
}

/// Live objects tagged for a tenant that is gone, on the evidence [`Judged`] holds.
fn gone_tenants(seen: &Seen, judged: &Judged, opts: &ScanOptions) -> Vec<Orphan> {
    let mut out = Vec::new();
    for kind in TENANT_KINDS {
        for (name, tenant) in marked(&seen.tags, kind) {
            let Some(t) = tenant else { continue };
            let Some(evidence) = judged.gone(&tagged_identity(&t)) else {
                continue;
            };
            if !live(seen, kind, &name) {
                continue;
            }
            out.push(Orphan {
                kind: OrphanKind::TenantGone,
                layer: "array",
                object: format!("{} {name}", kind_label(kind)),
                evidence: format!("tagged pxfa.io managed-by=pxfa for tenant {t}; {evidence}"),
                age_ms: volume_age(seen, &name, opts.now_ms)
                    .filter(|_| kind == TagResource::Volume),
                tenant: Some(t.clone()),
                cleanup: Target::GoneTenant { tenant: t },
            });
        }
    }
    out
}

/// The kinds tagged for a tenant, in the order they are listed.
const TENANT_KINDS: [TagResource; 4] = [
    TagResource::Pod,
    TagResource::HostGroup,
    TagResource::Host,
    TagResource::Volume,
];

/// The tenants nobody accounts for, each with its live objects: kept, and listed.
pub(super) fn unaccounted(seen: &Seen, judged: &Judged) -> Vec<Unaccounted> {
    let mut by_tenant: BTreeMap<String, Unaccounted> = BTreeMap::new();
    for kind in TENANT_KINDS {
        for (name, tenant) in marked(&seen.tags, kind) {
            let Some(t) = tenant else { continue };
            let Some(why) = judged.unaccounted(&tagged_identity(&t)) else {
                continue;
            };
            if !live(seen, kind, &name) {
                continue;
            }
            by_tenant
                .entry(t.to_ascii_lowercase())
                .or_insert_with(|| Unaccounted {
                    tenant: t.clone(),
                    objects: Vec::new(),
                    evidence: why.to_string(),
                })
                .objects
                .push(format!("{} {name}", kind_label(kind)));
        }
    }
    by_tenant.into_values().collect()
}

/// The live drive volumes of loaded tenants that no claim backs, in any phase: by
/// the claim's PV name (dynamic, `is_fada_volume_for`), the `claim` tag, or the
/// claim's name (import names the claim after the volume). Never a drive younger
/// than the grace period (its claim may not be made or bound yet), one whose age the
/// array does not give, or one of a tenant whose HostedCluster is not made and
/// settled (being made again, its claims come back with its namespace).
fn unbound_drives(
    seen: &Seen,
    known: &Known,
    facts: &ClusterFacts,
    opts: &ScanOptions,
) -> Vec<Orphan> {
    let mut out = Vec::new();
    for d in tagged_drives(seen) {
        let tagged = tagged_identity(&d.tenant);
        let Some(tenant) = known
            .tenants
            .iter()
            .find(|t| TenantRef::of(t).matches(&tagged))
        else {
            continue;
        };
        let role = seen
            .tags
            .get(TagResource::Volume, &d.name)
            .and_then(|m| m.get(TAG_ROLE))
            .map(String::as_str);
        if !d.live || !matches!(role, Some("px-data" | "px-metadata")) {
            continue;
        }
        let claimed = facts
            .claims
            .iter()
            .any(|c| d.backs(c.volume_name.as_deref(), Some(&c.key())));
        if claimed {
            continue;
        }
        let Some(age) = volume_age(seen, &d.name, opts.now_ms) else {
            continue;
        };
        if age < opts.drive_grace_ms {
            continue;
        }
        let Some(hc) = spec_hosted_cluster(tenant, facts).filter(|hc| hc.settled()) else {
            continue;
        };
        out.push(Orphan {
            kind: OrphanKind::UnboundDrive,
            layer: "array",
            object: format!("volume {}", d.name),
            evidence: format!(
                "drive of tenant {} (role {}), created {} ago (grace {}); no claim on the management cluster backs it, in any phase; its HostedCluster {}/{} is available",
                d.tenant,
                role.unwrap_or_default(),
                crate::human_ms(age),
                crate::human_ms(opts.drive_grace_ms),
                hc.namespace,
                hc.name
            ),
            age_ms: Some(age),
            tenant: Some(d.tenant),
            cleanup: Target::Volume { name: d.name },
        });
    }
    out
}

/// Every initiator a node of a known tenant has ([`Wwn::initiator_key`] form).
fn node_initiators(known: &Known) -> BTreeSet<String> {
    known
        .tenants
        .iter()
        .flat_map(|t| &t.desired.hosts)
        .flat_map(|h| h.wwns.iter().chain(&h.iqns).chain(&h.nqns))
        .map(|i| Wwn::initiator_key(i))
        .collect()
}

/// Hosts pxfa made (shared, or of an existing tenant) whose initiators no node of
/// any tenant has, and the private connections of pxfa's volumes to them.
fn hosts_without_nodes(seen: &Seen, known: &Known) -> Vec<Orphan> {
    let nodes = node_initiators(known);
    let mut out = Vec::new();
    for (name, tenant) in marked(&seen.tags, TagResource::Host) {
        if tenant
            .as_deref()
            .is_some_and(|t| !known.exists(&tagged_identity(t)))
        {
            continue; // a gone tenant's host goes with the tenant
        }
        let Some(h) = seen
            .hosts
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(&name))
        else {
            continue;
        };
        let name = h.name.clone();
        let initiators: Vec<&String> = h.wwns.iter().chain(&h.iqns).chain(&h.nqns).collect();
        if initiators
            .iter()
            .any(|i| nodes.contains(&Wwn::initiator_key(i)))
        {
            continue;
        }
        let shown: Vec<&str> = initiators.iter().map(|s| s.as_str()).collect();
        for c in seen.connections.iter().filter(|c| {
            c.host_group.name.is_none()
                && c.host
                    .name
                    .as_deref()
                    .is_some_and(|n| n.eq_ignore_ascii_case(&name))
        }) {
            let Some(vol) = c.volume.name.clone() else {
                continue;
            };
            let tags = seen.tags.get(TagResource::Volume, &vol);
            let Some(vt) = tags.and_then(marked_tenant).and_then(|m| m.id()) else {
                continue; // not pxfa's volume (or no tenant's yet): never listed
            };
            let vt = vt.to_string();
            out.push(Orphan {
                age_ms: None,
                kind: OrphanKind::ConnectionToGoneHost,
                layer: "array",
                object: format!("connection {vol} -> {name}"),
                evidence: format!(
                    "volume of tenant {vt} connected to host {name}, whose node is gone (no node has {})",
                    shown.join(", ")
                ),
                tenant: Some(vt),
                cleanup: Target::Connection {
                    volume: vol,
                    host: name.clone(),
                },
            });
        }
        out.push(Orphan {
            age_ms: None,
            kind: OrphanKind::HostWithoutNode,
            layer: "array",
            object: format!("host {name}"),
            evidence: format!(
                "tagged pxfa.io managed-by=pxfa ({}); no node of any tenant has its initiators {}",
                tenant
                    .as_deref()
                    .map_or("scope=shared".to_string(), |t| format!("tenant {t}")),
                if shown.is_empty() {
                    "(none)".to_string()
                } else {
                    shown.join(", ")
                }
            ),
            tenant,
            cleanup: Target::Host { name },
        });
    }
    out
}

fn item(object: &str, r: Result<String, String>) -> CleanupItem {
    match r {
        Ok(outcome) => CleanupItem {
            object: object.to_string(),
            outcome,
            ok: true,
        },
        Err(e) => CleanupItem {
            object: object.to_string(),
            outcome: format!("failed: {e}"),
            ok: false,
        },
    }
}

/// Cleans up the array's orphans in dependency order: gone tenants (their soft
/// destroy), connections, unbound drives, hosts. Never eradicates.
pub(super) async fn cleanup(array: &dyn FlashArray, orphans: &[Orphan]) -> CleanupReport {
    let mut out = CleanupReport::default();
    let mut gone: BTreeMap<&str, Vec<&Orphan>> = BTreeMap::new();
    for o in orphans {
        if let Target::GoneTenant { tenant } = &o.cleanup {
            gone.entry(tenant.as_str()).or_default().push(o);
        }
    }
    let mut failed = BTreeSet::new();
    for (tenant, objects) in gone {
        let r = destroy_tenant(array, tenant, &mut out.pending_eradication).await;
        if r.is_err() {
            failed.insert(tenant);
        }
        for o in objects {
            out.items.push(item(&o.object, r.clone()));
        }
    }
    // A gone tenant's realm after its pods (the array refuses a realm with a live pod).
    for o in orphans {
        let Target::Realm { name, tenant } = &o.cleanup else {
            continue;
        };
        let r = if failed.contains(tenant.as_str()) {
            Err(format!(
                "kept: tenant {tenant}'s destroy failed, its pods may be live"
            ))
        } else {
            super::realm::destroy(array, name).await
        };
        if r.is_ok() {
            out.pending_eradication.push(o.object.clone());
        }
        out.items.push(item(&o.object, r));
    }
    for o in orphans {
        let r = match &o.cleanup {
            Target::Connection { volume, host } => disconnect(array, host, volume).await,
            _ => continue,
        };
        out.items.push(item(&o.object, r));
    }
    for o in orphans {
        let r = match &o.cleanup {
            Target::Volume { name } => {
                let r = destroy_volume(array, name).await;
                if r.is_ok() {
                    out.pending_eradication.push(o.object.clone());
                }
                r
            }
            _ => continue,
        };
        out.items.push(item(&o.object, r));
    }
    for o in orphans {
        let r = match &o.cleanup {
            Target::Host { name } => delete_host(array, name).await,
            _ => continue,
        };
        out.items.push(item(&o.object, r));
    }
    out
}

/// A gone tenant's objects, by the same soft destroy `pxfa destroy` runs (never
/// eradicating): every object tagged for it, disconnected and removed in order.
async fn destroy_tenant(
    array: &dyn FlashArray,
    tenant: &str,
    pending: &mut Vec<String>,
) -> Result<String, String> {
    let desired = DesiredState {
        tenant: TenantId::from(tenant),
        ..DesiredState::default()
    };
    let r = destroy(array, &desired, &DestroyOptions::default(), &|_| {})
        .await
        .map_err(|e| e.to_string())?;
    if let Some(f) = r.failed.first() {
        return Err(format!(
            "tenant {tenant}'s destroy: {} {}: {}",
            f.change.kind.label(),
            f.change.name,
            f.error
        ));
    }
    for c in &r.done {
        if matches!(c.kind, crate::plan::Kind::Volume | crate::plan::Kind::Pod) {
            pending.push(format!("{} {}", c.kind.label(), c.name));
        }
    }
    Ok(format!(
        "soft-destroyed with tenant {tenant} ({} changes; recoverable until eradicated)",
        r.done.len()
    ))
}

fn gone_ok(e: flasharray::Error) -> Result<(), String> {
    if e.kind() == ErrorKind::NotFound {
        Ok(())
    } else {
        Err(e.to_string())
    }
}

async fn disconnect(array: &dyn FlashArray, host: &str, volume: &str) -> Result<String, String> {
    let h = HostName::new(host).map_err(|e| e.to_string())?;
    let v = VolumeName::new(volume).map_err(|e| e.to_string())?;
    match array
        .delete_connections(&ConnectionTarget::Host(h), &[v])
        .await
    {
        Ok(()) => Ok("disconnected".into()),
        Err(e) => gone_ok(e).map(|()| "already disconnected".into()),
    }
}

/// Disconnects the volume from every host and group it is connected to, then
/// destroys it (soft).
async fn destroy_volume(array: &dyn FlashArray, name: &str) -> Result<String, String> {
    let v = VolumeName::new(name).map_err(|e| e.to_string())?;
    let rows = list_connections_of(array, &[name.to_string()], &[], &[])
        .await
        .map_err(|e| e.to_string())?;
    let mut targets: Vec<ConnectionTarget> = Vec::new();
    for r in &rows {
        if let Some(t) = crate::plan::row_target(r)
            && !targets.contains(&t)
        {
            targets.push(t);
        }
    }
    for t in targets {
        if let Err(e) = array.delete_connections(&t, std::slice::from_ref(&v)).await {
            gone_ok(e)?;
        }
    }
    match array
        .patch_volumes(
            std::slice::from_ref(&v),
            &flasharray::models::VolumePatch::destroy(),
            false,
        )
        .await
    {
        Ok(_) => Ok("soft-destroyed (recoverable until eradicated)".into()),
        Err(e) => gone_ok(e).map(|()| "already gone".into()),
    }
}

/// Removes the host's private connections (only pxfa's volumes may have any left:
/// a foreign volume's connection keeps the host) and its group membership, then
/// deletes it.
async fn delete_host(array: &dyn FlashArray, name: &str) -> Result<String, String> {
    let h = HostName::new(name).map_err(|e| e.to_string())?;
    let hosts = array
        .list_hosts(&ListParams::names([name]))
        .await
        .or_else(|e| gone_ok(e).map(|()| Vec::new()))?;
    let Some(host) = hosts.first() else {
        return Ok("already gone".into());
    };
    let rows = list_connections_of(array, &[], &[name.to_string()], &[])
        .await
        .map_err(|e| e.to_string())?;
    if rows.iter().any(|r| r.host_group.name.is_none()) {
        return Err(
            "still connected to volumes pxfa did not make; kept (disconnect them by hand first)"
                .into(),
        );
    }
    if let Some(g) = host.host_group.name.as_deref() {
        let g = HostGroupName::new(g).map_err(|e| e.to_string())?;
        if let Err(e) = array
            .remove_host_group_members(&g, std::slice::from_ref(&h))
            .await
        {
            gone_ok(e)?;
        }
    }
    match array.delete_hosts(std::slice::from_ref(&h)).await {
        Ok(()) => Ok("deleted (hosts hold no data)".into()),
        Err(e) => gone_ok(e).map(|()| "already gone".into()),
    }
}
