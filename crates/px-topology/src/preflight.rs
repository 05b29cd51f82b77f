//! Checks before the first write of an apply: does what the plan provisions fit the
//! array's free space and the pods' quotas? (A missing token user already blocks the
//! plan as a conflict.) Pure
//! functions of the plan, what was observed and the array's space: the CLI gathers
//! the inputs and reports every finding at once, so that a refused apply has changed
//! nothing and names every reason.

use std::collections::BTreeMap;

use flasharray::Size;
use serde::Serialize;

use crate::plan::{Action, Kind, Observed, Payload, Plan};
use crate::sizing::ArraySpaceInfo;

/// One reason not to start an apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PreflightFinding {
    /// What was checked: `space` or `pod-quota`.
    pub check: &'static str,
    /// What is wrong and what to do about it.
    pub message: String,
}

/// What the caller allows on top of the rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PreflightOptions {
    /// Provision more than the array has free (arrays are thin-provisioned).
    pub allow_overcommit: bool,
}

/// Every finding of the checks below, in a fixed order. `space` is `None` when the
/// array's space was not read (the check is then skipped).
pub fn preflight(
    plan: &Plan,
    observed: &Observed,
    space: Option<&ArraySpaceInfo>,
    opts: PreflightOptions,
) -> Vec<PreflightFinding> {
    let mut out = Vec::new();
    if let Some(space) = space {
        out.extend(free_space(plan, observed, space, opts));
    }
    out.extend(pod_quotas(plan, observed));
    out
}

/// Bytes the plan adds: the size of every created or recovered volume plus the growth
/// of every resized one, plus the pending dynamic drives, which the management
/// Portworx creates on this array as soon as the claims this apply writes bind. No
/// data reduction is assumed.
pub fn new_bytes(plan: &Plan, observed: &Observed) -> u64 {
    let mut total = plan
        .changes
        .iter()
        .filter(|c| c.action == Action::Pending && c.kind == Kind::Volume)
        .filter_map(|c| match c.details.get("size") {
            Some(crate::plan::Detail::Bytes(b)) => Some(*b),
            _ => None,
        })
        .fold(0u64, u64::saturating_add);
    for c in plan.actionable() {
        let Payload::Volume { name, size, .. } = &c.payload else {
            continue;
        };
        if c.kind != Kind::Volume {
            continue;
        }
        let have = observed
            .volumes
            .get(&name.key())
            .map_or(0, |v| v.provisioned);
        total = total.saturating_add(match c.action {
            Action::Create => *size,
            // A destroyed volume's space is already counted as used until eradication.
            Action::Recover => 0,
            Action::Update => size.saturating_sub(have),
            // Retained drives of removed workers keep the space they have; pending
            // drives are counted above (they are not actionable).
            Action::Delete | Action::NoOp | Action::Retain | Action::Pending => 0,
        });
    }
    total
}

/// Refuses when the plan provisions more than the array has free, unless allowed.
fn free_space(
    plan: &Plan,
    observed: &Observed,
    space: &ArraySpaceInfo,
    opts: PreflightOptions,
) -> Option<PreflightFinding> {
    let new = new_bytes(plan, observed);
    let free = space.capacity.as_u64().saturating_sub(space.used.as_u64());
    if new <= free || opts.allow_overcommit {
        return None;
    }
    Some(PreflightFinding {
        check: "space",
        message: format!(
            "the plan provisions {} on array {}, which has {} free (capacity {}, used {}), assuming no data reduction; \
             free space first, shrink the tenant, or pass --allow-overcommit (the array is thin-provisioned)",
            Size::bytes(new),
            space.name,
            Size::bytes(free),
            space.capacity,
            space.used
        ),
    })
}

/// Refuses when a pod's volumes after the plan exceed its quota after the plan: the
/// creates would fail half way. No override: raise the quota or shrink the tenant.
fn pod_quotas(plan: &Plan, observed: &Observed) -> Vec<PreflightFinding> {
    // Quota after the plan, by pod key: observed, then what the plan sets.
    let mut quota: BTreeMap<String, (String, Option<u64>)> = observed
        .pods
        .iter()
        .map(|(k, p)| (k.clone(), (p.name.clone(), p.quota_limit)))
        .collect();
    // Live volume sizes after the plan, by volume key.
    let mut sizes: BTreeMap<String, (Option<String>, u64)> = observed
        .volumes
        .iter()
        .filter(|(_, v)| !v.destroyed)
        .map(|(k, v)| {
            (
                k.clone(),
                (
                    v.pod.name.as_ref().map(|p| p.to_ascii_lowercase()),
                    v.provisioned,
                ),
            )
        })
        .collect();
    for c in plan.actionable() {
        match (&c.payload, c.action) {
            (
                Payload::Pod { name, quota: q },
                Action::Create | Action::Update | Action::Recover,
            ) => {
                let entry = quota
                    .entry(name.key())
                    .or_insert_with(|| (name.to_string(), None));
                if q.is_some() || c.action == Action::Create {
                    entry.1 = *q;
                }
            }
            (Payload::Pod { name, .. }, Action::Delete) => {
                quota.remove(&name.key());
            }
            (
                Payload::Volume { name, size, .. },
                Action::Create | Action::Update | Action::Recover,
            ) if c.kind == Kind::Volume => {
                let pod = name.pod().map(str::to_ascii_lowercase);
                sizes.insert(name.key(), (pod, *size));
            }
            (Payload::Volume { name, .. }, Action::Delete) if c.kind == Kind::Volume => {
                sizes.remove(&name.key());
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (key, (pod, limit)) in &quota {
        let Some(limit) = limit else { continue };
        let after: u64 = sizes
            .values()
            .filter(|(p, _)| p.as_deref() == Some(key.as_str()))
            .map(|(_, s)| *s)
            .fold(0u64, u64::saturating_add);
        if after > *limit {
            out.push(PreflightFinding {
                check: "pod-quota",
                message: format!(
                    "pod {pod} would hold {} of volumes, over its quota of {}; the creates would fail half way. \
                     Raise the pod's quota or shrink the tenant's capacity",
                    Size::bytes(after),
                    Size::bytes(*limit)
                ),
            });
        }
    }
    out
}
