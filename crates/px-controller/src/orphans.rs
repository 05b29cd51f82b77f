//! Orphan counts: every drift interval the leading controller runs `pxfa orphans`'s
//! scan ([`px_topology::orphans::scan`]) on each array its TenantStorage objects
//! name, exposes the counts as the `pxfa_controller_orphans{array,kind}` gauges and
//! publishes a Warning Event when a kind's count on an array rises.
//!
//! Read-only: the controller never cleans up (that is `pxfa orphans --cleanup`,
//! after a person has read the evidence). The management cluster is read once per
//! pass and handed to every array's scan through [`ReadOnly`], whose cleanup half
//! refuses, so no code path here can delete.
//!
//! The tenants that exist are every TenantStorage object in every namespace (as
//! `pxfa orphans --kubeconfig` loads them): a tenant in a namespace this controller
//! does not watch is still a tenant, never an orphan. The same read is the
//! evidence for the others: a tenant the array's tags name is gone only when no
//! TenantStorage with its identity exists and its HostedCluster does not either
//! (`px_topology::orphans`' evidence rule); any other is counted nowhere, kept.
//!
//! Each kind has its reason (`OrphansTenantGone`, ...). kube-runtime's recorder
//! folds an Event with the same reason on the same object within its cache window
//! into the first one's series (its count goes up, its note stays): the gauge, not
//! the note, holds the current count.
//!
//! The Event goes on the TenantStorage object of the tenant the orphan's marks
//! name, when that tenant exists (an unbound drive in its pod, its leftover
//! claim); otherwise (a gone tenant's objects, a host no tenant accounts for) on
//! the first TenantStorage object, by namespace and name, that uses the array.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use kube::ResourceExt;
use kube::api::DynamicObject;
use px_cluster::ClusterOrphans;
use px_cluster::orphans::tenant_storage_id;
use px_topology::orphans::{
    ClusterFacts, ClusterReader, ClusterTarget, Evidence, Known, Orphan, OrphanKind, OrphanReport,
    ScanOptions, scan,
};

use crate::arrays::{Credentials, read_credentials};
use crate::context::Context;
use crate::reconcile::load_tenant;

/// Most orphan objects one Event names (the rest are counted).
const NAMED_IN_EVENT: usize = 5;

/// The management cluster as one pass read it: every array's scan sees the same
/// facts, and nothing can be removed through it.
struct ReadOnly(ClusterFacts);

#[async_trait]
impl ClusterReader for ReadOnly {
    async fn facts(&self) -> Result<ClusterFacts, String> {
        Ok(self.0.clone())
    }

    async fn remove(&self, _target: &ClusterTarget) -> Result<(), String> {
        Err("the controller only reports orphans; pxfa orphans --cleanup removes them".into())
    }
}

/// One array the TenantStorage objects use: how to reach it and whose it is.
struct ArrayUse {
    creds: Credentials,
    /// The objects using it, by `namespace/name` (the first is the Event's fallback).
    objects: BTreeMap<String, DynamicObject>,
}

/// The counts of the last pass, by array endpoint: a rise is measured against them.
#[derive(Debug, Default)]
pub struct OrphanCounts {
    last: BTreeMap<String, BTreeMap<OrphanKind, usize>>,
}

impl OrphanCounts {
    /// No pass yet (every count taken as zero: orphans found by the first pass
    /// are reported as a rise).
    pub fn new() -> Self {
        OrphanCounts::default()
    }

    /// The last pass's count of `kind` on `array`, when that array was scanned.
    pub fn get(&self, array: &str, kind: OrphanKind) -> Option<usize> {
        self.last.get(array).and_then(|c| c.get(&kind)).copied()
    }
}

/// Runs a pass every drift interval (the first after one interval, so that the
/// first reconciles are not slowed), until aborted with the controller.
pub(crate) async fn run(ctx: Arc<Context>) {
    let mut counts = OrphanCounts::new();
    loop {
        tokio::time::sleep(ctx.drift_interval).await;
        if ctx.health.is_leading() {
            pass(&ctx, &mut counts).await;
        }
    }
}

/// One pass over every array the TenantStorage objects use: scan, set the
/// gauges, warn about rises. An array that cannot be read keeps its last gauges
/// and is logged; the others are still scanned.
pub async fn pass(ctx: &Context, counts: &mut OrphanCounts) {
    let objects = match px_cluster::orphans::tenant_storages(&ctx.client).await {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!(error = %e, "orphan scan: cannot list the TenantStorage objects");
            return;
        }
    };
    let (known, by_name, loaded) = known_tenants(&objects);
    let arrays = arrays_in_use(ctx, &known, &loaded).await;
    if arrays.is_empty() {
        return;
    }
    let facts = match ClusterOrphans::new(ctx.client.clone()).facts().await {
        Ok(f) => ReadOnly(f),
        Err(e) => {
            tracing::warn!(error = %e, "orphan scan: cannot read the management cluster");
            return;
        }
    };
    for (endpoint, used) in arrays {
        let report = match scan_array(ctx, &used.creds, &facts, &known).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(array = %endpoint, error = %e, "orphan scan failed");
                continue;
            }
        };
        let now = report.counts();
        ctx.metrics
            .set_orphans(&endpoint, now.iter().map(|(k, n)| (k.as_str(), *n)));
        let before = counts.last.insert(endpoint.clone(), now.clone());
        for kind in risen(before.as_ref(), &now) {
            warn_rise(ctx, &endpoint, kind, &report, &used, &by_name).await;
        }
    }
}

/// The tenants that exist (an object that does not load still exists by its
/// `namespace/name`), each loaded tenant's object by `namespace/name`
/// (lower-cased, as tags compare), and
/// the loaded objects with their tenant's index in [`Known::tenants`].
fn known_tenants(
    objects: &[DynamicObject],
) -> (
    Known,
    BTreeMap<String, DynamicObject>,
    Vec<(&DynamicObject, usize)>,
) {
    let mut known = Known {
        evidence: Evidence::Cluster {
            storages: objects.iter().map(tenant_storage_id).collect(),
        },
        ..Known::default()
    };
    let mut by_name = BTreeMap::new();
    let mut loaded = Vec::new();
    for obj in objects {
        match load_tenant(obj) {
            Ok(t) => {
                by_name.insert(
                    t.desired.tenant.to_string().to_ascii_lowercase(),
                    obj.clone(),
                );
                loaded.push((obj, known.tenants.len()));
                known.tenants.push(t);
            }
            Err(why) => known.unloaded.push((tenant_storage_id(obj), why)),
        }
    }
    (known, by_name, loaded)
}

/// The arrays the loaded tenants name, by endpoint, through their credentials
/// Secrets. A tenant whose Secret cannot be read is skipped (its reconcile
/// reports that); its array is still scanned when another tenant names it.
async fn arrays_in_use(
    ctx: &Context,
    known: &Known,
    loaded: &[(&DynamicObject, usize)],
) -> BTreeMap<String, ArrayUse> {
    let mut out: BTreeMap<String, ArrayUse> = BTreeMap::new();
    for (obj, i) in loaded {
        let ns = obj.namespace().unwrap_or_default();
        let creds = match read_credentials(&ctx.client, &ns, &known.tenants[*i].spec).await {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!(object = %obj.name_any(), error = %e.message, "orphan scan: no credentials");
                continue;
            }
        };
        let key = format!("{ns}/{}", obj.name_any());
        out.entry(creds.endpoint.clone())
            .or_insert_with(|| ArrayUse {
                creds,
                objects: BTreeMap::new(),
            })
            .objects
            .insert(key, (*obj).clone());
    }
    out
}

/// The scan of one array through the pool's shared client (its listings are the
/// drift checks' cache, so a pass costs the array little).
async fn scan_array(
    ctx: &Context,
    creds: &Credentials,
    facts: &ReadOnly,
    known: &Known,
) -> Result<OrphanReport, String> {
    let lease = ctx.arrays.acquire(creds).await.map_err(|e| e.message)?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    scan(
        lease.array.as_ref(),
        Some(facts),
        known,
        &ScanOptions::at(now_ms),
    )
    .await
    .map_err(|e| e.to_string())
}

/// The kinds whose count went up since `before` (a first pass counts from zero).
fn risen(
    before: Option<&BTreeMap<OrphanKind, usize>>,
    now: &BTreeMap<OrphanKind, usize>,
) -> Vec<OrphanKind> {
    now.iter()
        .filter(|(k, n)| **n > before.and_then(|b| b.get(k)).copied().unwrap_or(0))
        .map(|(k, _)| *k)
        .collect()
}

/// One Warning Event per object the risen kind's orphans belong to (see the
/// module docs for which object).
async fn warn_rise(
    ctx: &Context,
    endpoint: &str,
    kind: OrphanKind,
    report: &OrphanReport,
    used: &ArrayUse,
    by_name: &BTreeMap<String, DynamicObject>,
) {
    let Some(fallback) = used.objects.values().next() else {
        return;
    };
    let mut targets: BTreeMap<String, (&DynamicObject, Vec<&Orphan>)> = BTreeMap::new();
    for o in report.orphans.iter().filter(|o| o.kind == kind) {
        let obj = o
            .tenant
            .as_ref()
            .and_then(|t| by_name.get(&t.to_ascii_lowercase()))
            .unwrap_or(fallback);
        let key = format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any());
        targets.entry(key).or_insert((obj, Vec::new())).1.push(o);
    }
    let total = report.orphans.iter().filter(|o| o.kind == kind).count();
    for (obj, orphans) in targets.values() {
        let note = rise_note(endpoint, kind, total, orphans);
        ctx.events
            .warning(obj, "ScanOrphans", &reason(kind), &note)
            .await;
    }
}

/// The Event's reason, one per kind (`OrphansHostWithoutNode`): Events of one
/// reason on one object are folded into a series, so two kinds must not share one.
fn reason(kind: OrphanKind) -> String {
    let mut out = String::from("Orphans");
    for word in kind.as_str().split('-') {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    out
}

/// The Event's note: the count, the objects (a few), and what to run.
fn rise_note(endpoint: &str, kind: OrphanKind, total: usize, orphans: &[&Orphan]) -> String {
    let mut named: Vec<&str> = orphans
        .iter()
        .take(NAMED_IN_EVENT)
        .map(|o| o.object.as_str())
        .collect();
    let more = orphans.len().saturating_sub(NAMED_IN_EVENT);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    named.sort_unstable();
    format!(
        "{total} {} orphan(s) on array {endpoint}: {}{more}. The controller does not clean up; \
         `pxfa orphans --kubeconfig` shows the evidence and --cleanup removes them",
        kind.as_str(),
        named.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rise_is_counted_from_zero_and_a_fall_is_none() {
        let now: BTreeMap<OrphanKind, usize> = [
            (OrphanKind::TenantGone, 2),
            (OrphanKind::UnboundDrive, 1),
            (OrphanKind::HostWithoutNode, 0),
        ]
        .into();
        assert_eq!(
            risen(None, &now),
            vec![OrphanKind::TenantGone, OrphanKind::UnboundDrive]
        );
        let before: BTreeMap<OrphanKind, usize> =
            [(OrphanKind::TenantGone, 3), (OrphanKind::UnboundDrive, 0)].into();
        assert_eq!(risen(Some(&before), &now), vec![OrphanKind::UnboundDrive]);
        assert!(risen(Some(&now), &now).is_empty());
    }

    #[test]
    fn each_kind_has_its_own_reason() {
        assert_eq!(
            reason(OrphanKind::HostWithoutNode),
            "OrphansHostWithoutNode"
        );
        let all: std::collections::BTreeSet<String> =
            OrphanKind::ALL.into_iter().map(reason).collect();
        assert_eq!(all.len(), OrphanKind::ALL.len());
    }

    #[tokio::test]
    async fn the_cluster_view_refuses_every_removal() {
        let r = ReadOnly(ClusterFacts::default());
        let target = ClusterTarget::PersistentVolume { name: "pv".into() };
        assert!(r.remove(&target).await.is_err());
        assert_eq!(r.facts().await.unwrap(), ClusterFacts::default());
    }

    #[test]
    fn the_note_names_a_few_objects_and_counts_the_rest() {
        let orphans: Vec<Orphan> = (0..7)
            .map(|i| Orphan {
                kind: OrphanKind::UnboundDrive,
                layer: "array",
                object: format!("volume t::d{i}"),
                tenant: Some("t".into()),
                evidence: String::new(),
                age_ms: None,
                cleanup: px_topology::orphans::Target::Volume {
                    name: format!("t::d{i}"),
                },
            })
            .collect();
        let refs: Vec<&Orphan> = orphans.iter().collect();
        let note = rise_note("fa1", OrphanKind::UnboundDrive, 7, &refs);
        assert!(note.starts_with("7 unbound-drive orphan(s) on array fa1: volume t::d0"));
        assert!(note.contains("volume t::d4 and 2 more."));
        assert!(!note.contains("t::d5"));
    }
}
