//! A gone tenant's realm (cloud-drive-realm mode). Realms carry no tags, so a realm
//! is pxfa's by the same mark the plan's ownership uses (`docs/realms.md`,
//! ownership): the tenant's pod inside it is tagged for the tenant. Here every pod
//! in it, live or destroyed, must be tagged for one tenant, and that tenant must be
//! gone; a realm holding any other pod is never listed.
//!
//! The array destroys a realm only while it holds no live pod, unless the request
//! sets `destroy_contents` (Pure's SDK, `patch_realms` and `RealmPatch`, REST 2.36:
//! <https://github.com/PureStorage-OpenConnect/py-pure-client>, `FA_2_36`; the mock
//! enforces it in `flasharray-mock/src/realm.rs`). The cleanup never sets it: the
//! realm is destroyed after its tenant's pods, by the tenant's soft destroy, so the
//! array's own rule refuses a realm that still holds a live pod. Destroying is soft:
//! the realm waits for eradication like its pods. The realm user and its access
//! policy carry no tags either and are left (named in the evidence when an access
//! policy reaches into the realm).

use std::collections::{BTreeMap, BTreeSet};

use flasharray::models::{ManagementAccessPolicy, RealmPatch};
use flasharray::{ErrorKind, FlashArray, ListParams, RealmName, TagResource};

use super::evidence::{Judged, tagged_identity};
use super::seen::{RealmSeen, marked};
use super::{Known, Orphan, OrphanKind, PendingEradication, Target};
use crate::plan::TagIndex;

/// Scope type of a management access rule inside a realm.
const RESOURCE_REALMS: &str = "realms";

/// The realms of gone tenants' pods (`realm::pod` tagged for a tenant that does
/// not exist). Nothing is read when there is none, so arrays older than REST 2.36
/// (no realms) and tenants without realms cost no call.
pub(super) async fn read(
    array: &dyn FlashArray,
    tags: &TagIndex,
    known: &Known,
) -> flasharray::Result<Vec<RealmSeen>> {
    let names: BTreeSet<String> = marked(tags, TagResource::Pod)
        .into_iter()
        .filter(|(_, t)| {
            t.as_deref()
                .is_some_and(|t| !known.exists(&tagged_identity(t)))
        })
        .filter_map(|(pod, _)| pod.split_once("::").map(|(r, _)| r.to_ascii_lowercase()))
        .collect();
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let (realms, policies) = futures_util::future::try_join(
        array.list_realms(&ListParams::all()),
        array.list_management_access_policies(&[]),
    )
    .await?;
    let mut out = Vec::new();
    for r in realms
        .into_iter()
        .filter(|r| names.contains(&r.name.to_ascii_lowercase()))
    {
        let params = ListParams {
            filter: Some(format!("name='{}::*'", r.name)),
            ..ListParams::default()
        };
        let pods = match array.list_pods(&params).await {
            Err(e) if e.kind() == ErrorKind::NotFound => Vec::new(),
            p => p?,
        };
        let prefix = format!("{}::", r.name.to_ascii_lowercase());
        out.push(RealmSeen {
            policies: reaching_into(&policies, &r.name),
            pods: pods
                .into_iter()
                .map(|p| p.name)
                .filter(|n| n.to_ascii_lowercase().starts_with(&prefix))
                .collect(),
            name: r.name,
            destroyed: r.destroyed,
            time_remaining: r.time_remaining,
        });
    }
    Ok(out)
}

/// The access policies with a rule scoped to `realm`.
fn reaching_into(policies: &[ManagementAccessPolicy], realm: &str) -> Vec<String> {
    policies
        .iter()
        .filter(|p| {
            p.rules.iter().any(|r| {
                r.scope.resource_type.as_deref() == Some(RESOURCE_REALMS)
                    && r.scope
                        .name
                        .as_deref()
                        .is_some_and(|n| n.eq_ignore_ascii_case(realm))
            })
        })
        .map(|p| p.name.clone())
        .collect()
}

/// The one tenant every pod in the realm is tagged for, when there is one and
/// `gone` says it is gone (a pod without pxfa's tenant tag, or two tenants, and it
/// is not).
fn gone_owner(r: &RealmSeen, tags: &TagIndex, gone: impl Fn(&str) -> bool) -> Option<String> {
    let owners: BTreeMap<String, String> = marked(tags, TagResource::Pod)
        .into_iter()
        .filter_map(|(p, t)| Some((p.to_ascii_lowercase(), t?)))
        .collect();
    let mut tenants = BTreeSet::new();
    for p in &r.pods {
        tenants.insert(owners.get(&p.to_ascii_lowercase())?.to_ascii_lowercase());
    }
    let mut tenants = tenants.into_iter();
    match (tenants.next(), tenants.next()) {
        (Some(t), None) if gone(&t) => Some(t),
        _ => None,
    }
}

/// Live realms that hold only the pods of a tenant gone on evidence.
pub(super) fn find(realms: &[RealmSeen], tags: &TagIndex, judged: &Judged) -> Vec<Orphan> {
    let mut out = Vec::new();
    for r in realms.iter().filter(|r| !r.destroyed) {
        let Some(t) = gone_owner(r, tags, |t| judged.gone(&tagged_identity(t)).is_some()) else {
            continue;
        };
        let evidence = judged.gone(&tagged_identity(&t)).unwrap_or_default();
        let left = if r.policies.is_empty() {
            String::new()
        } else {
            format!(
                "; access policies reaching into it (carry no tags, left as they are): {}",
                r.policies.join(", ")
            )
        };
        out.push(Orphan {
            kind: OrphanKind::TenantGone,
            layer: "array",
            object: format!("realm {}", r.name),
            evidence: format!(
                "holds only pods tagged pxfa.io for tenant {t} ({}); {evidence}{left}",
                r.pods.join(", ")
            ),
            age_ms: None,
            tenant: Some(t.clone()),
            cleanup: Target::Realm {
                name: r.name.clone(),
                tenant: t,
            },
        });
    }
    out
}

/// Destroyed realms of gone tenants: they wait for eradication.
pub(super) fn pending(
    realms: &[RealmSeen],
    tags: &TagIndex,
    known: &Known,
) -> Vec<PendingEradication> {
    realms
        .iter()
        .filter(|r| r.destroyed)
        .filter_map(|r| {
            gone_owner(r, tags, |t| !known.exists(&tagged_identity(t))).map(|t| {
                PendingEradication {
                    object: format!("realm {}", r.name),
                    tenant: Some(t),
                    time_remaining_ms: r.time_remaining,
                }
            })
        })
        .collect()
}

/// Soft-destroys the realm (`destroy_contents` never set: the array refuses while
/// a live pod is in it).
pub(super) async fn destroy(array: &dyn FlashArray, name: &str) -> Result<String, String> {
    let r = RealmName::new(name).map_err(|e| e.to_string())?;
    let patch = RealmPatch::default().with_destroyed(true);
    match array
        .patch_realms(std::slice::from_ref(&r), &patch, false)
        .await
    {
        Ok(_) => Ok("soft-destroyed (recoverable until eradicated)".into()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok("already gone".into()),
        Err(e) => Err(e.to_string()),
    }
}
