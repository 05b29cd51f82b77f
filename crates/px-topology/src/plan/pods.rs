//! The tenant's pod: reading it, and its part of the plan (create, recover, grow
//! the quota, or destroy it once the desired state drops it).

use flasharray::models::Pod;
use flasharray::{FlashArray, FlashArrayExt, PodName, Result, Size, TagResource};

use super::change::{Action, Change, Detail, Kind, Payload};
use super::observed::{Observed, key};
use super::ownership::Claims;
use crate::desired::{DesiredState, Scope};

/// The named pods that exist, destroyed ones included.
pub(crate) async fn lookup_pods(array: &dyn FlashArray, names: &[String]) -> Result<Vec<Pod>> {
    array.lookup_pods(names).await
}

/// The desired pod's changes: create it, or (when pxfa may manage it) recover it
/// and grow its quota.
pub(crate) fn plan_pod(
    desired: &DesiredState,
    obs: &Observed,
    claims: &mut Claims<'_>,
) -> Vec<Change> {
    let Some(dp) = &desired.pod else {
        return Vec::new();
    };
    let name = dp.name.as_str();
    let payload = Payload::Pod {
        name: dp.name.clone(),
        quota: dp.quota.map(Size::as_u64),
    };
    let Some(o) = obs.pods.get(&key(name)) else {
        let mut c = Change::new(Action::Create, Kind::Pod, name, "not on the array").with(payload);
        if let Some(q) = dp.quota {
            c = c.detail("quota", q);
        }
        return vec![c];
    };
    let managed = claims.claim(
        (Kind::Pod, TagResource::Pod),
        name,
        Scope::Tenant,
        &dp.tags,
        false,
    );
    if !managed {
        return Vec::new();
    }
    let mut out = Vec::new();
    if o.destroyed {
        out.push(
            Change::new(
                Action::Recover,
                Kind::Pod,
                name,
                "destroyed and still pending eradication: recovered, not re-created",
            )
            .with(payload.clone()),
        );
    }
    // A quota only grows: after a scale-in the retained drives still count against
    // it, and lowering it could make the array refuse the next write half way.
    match dp.quota {
        Some(q) if o.quota_limit.is_none_or(|l| l < q.as_u64()) => {
            let from = o
                .quota_limit
                .map_or(Detail::Text("unlimited".into()), Detail::Bytes);
            out.push(
                Change::new(Action::Update, Kind::Pod, name, "quota differs")
                    .detail("from", from)
                    .detail("to", q)
                    .with(payload),
            );
        }
        _ if !o.destroyed => out.push(Change::new(Action::NoOp, Kind::Pod, name, "as desired")),
        _ => {}
    }
    out
}

/// Destroys (recoverably) the live pods tagged for the tenant that the desired state
/// no longer names.
pub(crate) fn delete_orphans(obs: &Observed) -> Vec<Change> {
    obs.orphans
        .pods
        .iter()
        .filter(|name| obs.pods.get(&key(name)).is_some_and(|o| !o.destroyed))
        .filter_map(|name| {
            let pn = PodName::new(name.as_str()).ok()?;
            Some(
                Change::new(
                    Action::Delete,
                    Kind::Pod,
                    name,
                    "tagged for this tenant but no longer desired; destroyed, recoverable until eradicated",
                )
                .with(Payload::Pod {
                    name: pn,
                    quota: None,
                }),
            )
        })
        .collect()
}
