//! Removing what pxfa made for one tenant: the calls of a [`DestroyPlan`]
//! (`plan::destroy` decides what goes, in reverse dependency order) run in
//! dependent rounds.
//!
//! Volumes and pods are destroyed, not eradicated, unless asked: they stay
//! recoverable for the array's eradication delay (24 h by default). When SafeMode
//! refuses an eradication, the object stays destroyed and is reported as pending.

use std::collections::BTreeMap;

use flasharray::{ErrorKind, FlashArray};
use serde::Serialize;

use super::ops::Op;
use super::realm_ops::RealmOp;
use super::schedule::{self, Graph, NodeOutcome, RunResult};
use super::{FailedChange, Outcome, ProgressEvent, SkippedChange};
use crate::desired::DesiredState;
// The destroy plan is the plan's (`plan::destroy`); these paths stay converge's too.
use crate::plan::DestroyPlan;
use crate::plan::{
    Blocker, Change, DestroyScope, Kind, Removal, lookup_pods, lookup_volumes, observe,
};
use crate::plan::{DestroyError, plan_destroy};

/// Switches of `destroy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DestroyOptions {
    /// Eradicate destroyed volumes and the pod: irreversible.
    pub eradicate: bool,
    /// Delete the token admin's API token. Tokens carry no tags, so pxfa cannot tell
    /// whether another tool uses the same admin's token: off by default, and meant
    /// for admins dedicated to one tenant.
    pub delete_token: bool,
    /// Destroy on the array the live drives the management Portworx created
    /// (dynamic provisioning); see [`DestroyScope::destroy_dynamic_drives`].
    pub destroy_dynamic_drives: bool,
    /// Most REST calls in flight at once.
    pub concurrency: usize,
    /// Raised (first Ctrl-C): start no more calls, let the ones in flight finish.
    pub cancel: super::Cancel,
}

impl Default for DestroyOptions {
    fn default() -> Self {
        DestroyOptions {
            eradicate: false,
            delete_token: false,
            destroy_dynamic_drives: false,
            concurrency: 8,
            cancel: super::Cancel::default(),
        }
    }
}

/// An object left destroyed because eradication was refused (SafeMode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingEradication {
    /// The kind of object left destroyed (a volume or the pod).
    pub kind: Kind,
    /// Its array name.
    pub name: String,
    /// Milliseconds until the array eradicates it by itself, when known.
    pub time_remaining_ms: Option<u64>,
    /// The array's refusal.
    pub reason: String,
}

/// The result of `destroy`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DestroyReport {
    /// The tenant destroyed, `namespace/name` (empty when destroy found nothing of
    /// the tenant's to plan).
    pub tenant: String,
    /// Everything destroy set out to do, in order.
    pub changes: Vec<Change>,
    /// The changes the array carried out.
    pub done: Vec<Change>,
    /// The changes the array refused or that failed, with the error.
    pub failed: Vec<FailedChange>,
    /// The changes not attempted because one they depend on failed, with the reason.
    pub skipped: Vec<SkippedChange>,
    /// Eradications SafeMode refused: the objects stay destroyed until the array
    /// eradicates them.
    pub pending_eradication: Vec<PendingEradication>,
    /// Objects of the desired state that are present but not this tenant's to remove
    /// (shared, untagged or another tenant's).
    pub kept: Vec<Blocker>,
    /// Dependent rounds of calls.
    pub rounds: usize,
    /// REST calls made (reads before and after included).
    pub calls: usize,
    /// Cancelled: the skipped changes were not started.
    pub interrupted: bool,
}

impl DestroyReport {
    /// The live dynamic drives the destroy kept because the management Portworx
    /// created them and is to release them ([`DestroyOptions::destroy_dynamic_drives`]
    /// off): while any is listed, their pod, realm and token stay too.
    pub fn held_dynamic_drives(&self) -> Vec<&Blocker> {
        self.kept
            .iter()
            .filter(|b| b.kind == Kind::Volume && crate::plan::is_held_dynamic_drive(b))
            .collect()
    }

    /// True when nothing failed or was skipped; pending eradications are not failures.
    pub fn is_success(&self) -> bool {
        self.failed.is_empty() && self.skipped.is_empty()
    }
}

/// Reads the array and computes what [`destroy`] would remove; writes nothing.
async fn preview_destroy(
    array: &dyn FlashArray,
    desired: &DesiredState,
    opts: &DestroyOptions,
) -> Result<DestroyPlan, DestroyError> {
    let obs = observe(array, desired).await?;
    plan_destroy(&obs, desired, opts)
}

/// Removes the tenant's objects. Soft by default; see [`DestroyOptions`].
pub(crate) async fn destroy(
    array: &dyn FlashArray,
    desired: &DesiredState,
    opts: &DestroyOptions,
    progress: &(dyn Fn(ProgressEvent) + Send + Sync),
) -> Result<DestroyReport, DestroyError> {
    let plan = preview_destroy(array, desired, opts).await?;
    Ok(destroy_planned(array, &plan, opts, progress).await)
}

/// Carries out a [`DestroyPlan`]: exactly its calls, in dependent rounds.
pub(crate) async fn destroy_planned(
    array: &dyn FlashArray,
    plan: &DestroyPlan,
    opts: &DestroyOptions,
    progress: &(dyn Fn(ProgressEvent) + Send + Sync),
) -> DestroyReport {
    let graph = graph(plan);
    let ctx = schedule::RunContext {
        concurrency: opts.concurrency,
        cancel: &opts.cancel,
        journal: None,
    };
    let run = schedule::run(array, &graph, &plan.changes, &ctx, progress).await;
    let mut report = DestroyReport {
        tenant: plan.tenant.to_string(),
        kept: plan.kept.clone(),
        rounds: run.rounds,
        calls: run.calls,
        interrupted: run.interrupted,
        ..DestroyReport::default()
    };
    let pending = pending_eradications(plan, &graph, &run);
    sort_outcomes(&mut report, plan, &run, &pending);
    if !report.pending_eradication.is_empty() {
        read_time_remaining(array, &mut report).await;
    }
    report.changes = plan.changes.clone();
    report
}

impl From<&DestroyOptions> for DestroyScope {
    fn from(opts: &DestroyOptions) -> Self {
        DestroyScope {
            eradicate: opts.eradicate,
            delete_token: opts.delete_token,
            destroy_dynamic_drives: opts.destroy_dynamic_drives,
        }
    }
}

/// The plan's calls as the graph of operations the scheduler runs: one node per
/// step, in the same order, so that node and step indexes agree.
fn graph(plan: &DestroyPlan) -> Graph {
    let mut g = Graph::default();
    for step in &plan.steps {
        let op = match step.call.clone() {
            Removal::Disconnect { target, volumes } => Op::Disconnect { target, volumes },
            Removal::DestroyVolumes(names) => Op::DestroyVolumes { names },
            Removal::RemoveMembers { group, hosts } => Op::RemoveMembers { group, hosts },
            Removal::EradicateVolumes(names) => Op::EradicateVolumes { names },
            Removal::DeleteHosts(names) => Op::DeleteHosts { names },
            Removal::DestroyPods(names) => Op::DestroyPods { names },
            Removal::DeleteHostGroups(names) => Op::DeleteHostGroups { names },
            Removal::EradicatePods(names) => Op::EradicatePods { names },
            Removal::DeleteToken(admin) => Op::DeleteToken { admin },
            Removal::DeleteRealmUser(admin) => Op::Realm(RealmOp::DeleteUser { admin }),
            Removal::DeleteAccessPolicy(name) => Op::Realm(RealmOp::DeletePolicy { name }),
            Removal::DestroyRealm(name) => Op::Realm(RealmOp::Destroy { name }),
            Removal::EradicateRealm(name) => Op::Realm(RealmOp::Eradicate { name }),
        };
        g.add(op, step.after.iter().copied(), step.changes.iter().copied());
    }
    g
}

/// SafeMode: refused eradications, and eradications skipped because of them, are
/// pending, not failed; the reason per change.
fn pending_eradications(plan: &DestroyPlan, g: &Graph, run: &RunResult) -> BTreeMap<usize, String> {
    let refused = |n: usize| match &run.outcomes[n] {
        Some(NodeOutcome::Failed(f)) if f.kind == ErrorKind::EradicationRefused => {
            Some(f.message.clone())
        }
        _ => None,
    };
    let first_refusal = plan.eradications.iter().find_map(|n| refused(*n));
    let mut pending = BTreeMap::new();
    for n in &plan.eradications {
        let reason = match &run.outcomes[*n] {
            Some(NodeOutcome::Skipped(_)) => first_refusal.as_ref().map(|first| {
                format!("not attempted: eradication of its contents was refused ({first})")
            }),
            _ => refused(*n),
        };
        let Some(reason) = reason else {
            continue;
        };
        for c in &g.nodes[*n].changes {
            pending.insert(*c, reason.clone());
        }
    }
    pending
}

/// Each change into done, failed, skipped or pending eradication.
fn sort_outcomes(
    report: &mut DestroyReport,
    plan: &DestroyPlan,
    run: &RunResult,
    pending: &BTreeMap<usize, String>,
) {
    for (i, outcome) in run.change_outcomes.iter().enumerate() {
        let c = plan.changes[i].clone();
        if let Some(reason) = pending.get(&i) {
            report.pending_eradication.push(PendingEradication {
                kind: c.kind,
                name: c.name.clone(),
                time_remaining_ms: None,
                reason: reason.clone(),
            });
            continue;
        }
        match outcome {
            Some(Outcome::Applied) => report.done.push(c),
            Some(Outcome::Failed {
                error,
                request_id,
                kind,
            }) => report.failed.push(FailedChange {
                change: c,
                error: error.clone(),
                request_id: request_id.clone(),
                kind: Some(*kind),
            }),
            Some(Outcome::Skipped { reason }) => report.skipped.push(SkippedChange {
                change: c,
                reason: reason.clone(),
            }),
            // Part of a removal is still a removal that did not finish: a failure.
            Some(Outcome::Partial {
                done,
                failed,
                request_id,
            }) => report.failed.push(FailedChange {
                change: c,
                error: format!("{failed} (done before it: {})", done.join("; ")),
                request_id: request_id.clone(),
                kind: None,
            }),
            None => {}
        }
    }
}

/// How long the array keeps the objects pending eradication: one read per kind,
/// best effort.
async fn read_time_remaining(array: &dyn FlashArray, report: &mut DestroyReport) {
    let key = |s: &str| s.to_ascii_lowercase();
    let names = |kind: Kind| -> Vec<String> {
        (report.pending_eradication.iter())
            .filter(|p| p.kind == kind)
            .map(|p| p.name.clone())
            .collect()
    };
    let (vols, pods) = (names(Kind::Volume), names(Kind::Pod));
    let mut remaining: BTreeMap<String, Option<u64>> = BTreeMap::new();
    if !vols.is_empty() {
        report.calls += 1;
        if let Ok(found) = lookup_volumes(array, &vols).await {
            remaining.extend(found.into_iter().map(|v| (key(&v.name), v.time_remaining)));
        }
    }
    if !pods.is_empty() {
        report.calls += 1;
        if let Ok(found) = lookup_pods(array, &pods).await {
            remaining.extend(found.into_iter().map(|p| (key(&p.name), p.time_remaining)));
        }
    }
    for p in &mut report.pending_eradication {
        p.time_remaining_ms = remaining.get(&key(&p.name)).copied().flatten();
    }
}
