//! Carrying a plan out on the array (`apply`) and removing a tenant (`destroy`).
//!
//! Both build a graph of batched REST operations from the plan and run it in
//! dependent rounds (pod, then host groups and hosts, then volumes and memberships,
//! then tags and connections). Independent operations of a round run concurrently
//! up to [`ApplyOptions::concurrency`]; a failed operation does not stop independent
//! ones, but the operations that need its result are skipped with a reason.
//!
//! Hand [`apply`] and [`destroy`] an array wrapped in `flasharray::Settling` (once):
//! after a lost answer it re-reads the affected objects before anything is sent
//! again, so no object is ever created twice. Converge adds no layer of its own (the
//! CLI's session and the controller's pool wrap every array they hand out), so over
//! a bare array a write whose answer was lost is reported as failed, not settled.
//!
//! Nothing here prints or exits: results come back as reports, and progress through
//! a callback the CLI can draw bars from.

mod destroy;
mod ops;
mod realm_ops;
mod rounds;
mod schedule;
mod writes;

use std::collections::BTreeMap;
use std::sync::Arc;

use flasharray::FlashArray;
use serde::Serialize;

pub(crate) use destroy::destroy;
pub(crate) use destroy::destroy_planned;
pub use destroy::{DestroyOptions, DestroyReport};
pub use schedule::Cancel;
pub use writes::WriteCounts;

use crate::desired::DesiredState;
use crate::driver::ArrayFacts;
use crate::plan::{Action, Change, Kind, Plan};
use crate::token_journal::TokenJournal;
use rounds::build_graph;

/// Switches of `apply`.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// Most REST calls in flight at once. Arrays rate-limit per session; 8 keeps a
    /// tenant's apply fast without provoking 429s.
    pub concurrency: usize,
    /// When the token admin already has a token, read its value (with
    /// `expose_api_token`) so that the report can carry it for `px-pure-secret`.
    pub read_existing_token: bool,
    /// Raised (first Ctrl-C): start no more calls; the ones in flight finish and the
    /// report says [`ApplyReport::interrupted`].
    pub cancel: Cancel,
    /// The token journal (see [`crate::token_journal`]): a token creation is journaled here,
    /// and a pending delivery is read from it. Without one a token lives only in the
    /// report until the caller delivers it.
    pub journal: Option<Arc<dyn TokenJournal>>,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions {
            concurrency: 8,
            read_existing_token: false,
            cancel: Cancel::default(),
            journal: None,
        }
    }
}

/// How one change ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Outcome {
    /// Every write of the change was made and answered.
    Applied,
    /// The array refused or the call broke.
    Failed {
        /// What failed, with the array's message.
        error: String,
        /// `X-Request-ID` of the failed call, for the array's logs.
        request_id: Option<String>,
        /// What the array's answer means ([`FailedChange::kind`]).
        #[serde(skip)]
        kind: flasharray::ErrorKind,
    },
    /// Not attempted: a prerequisite failed, the plan was blocked, or Ctrl-C came
    /// first.
    Skipped {
        /// What stopped it (the failed prerequisite, the blocker, or "not started").
        reason: String,
    },
    /// Some of the change's writes were made and others failed or were not
    /// attempted: a volume created whose tagging failed is on the array, so it is
    /// reported here, never as skipped.
    Partial {
        /// The writes made, as operations (`create volumes ...`).
        done: Vec<String>,
        /// What did not happen: the failure with the array's message, or why the rest
        /// was not attempted.
        failed: String,
        /// `X-Request-ID` of the failed call, when one failed.
        request_id: Option<String>,
    },
}

/// What `apply` and `destroy` report while they work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgressEvent {
    /// A round of concurrent calls begins.
    RoundStarted {
        /// 1-based round number.
        round: usize,
        /// Rounds in all.
        rounds: usize,
        /// Calls sent in this round.
        calls: usize,
    },
    /// Work on a change begins.
    ChangeStarted {
        /// Index in the plan's changes.
        index: usize,
        /// The change being started, as the plan listed it.
        change: Change,
    },
    /// A change ended.
    ChangeFinished {
        /// Index in the plan's changes.
        index: usize,
        /// The change that ended, as the plan listed it.
        change: Change,
        /// Applied, failed, skipped or partial.
        outcome: Outcome,
    },
    /// A round ended.
    RoundFinished {
        /// 1-based round number.
        round: usize,
        /// Rounds in all.
        rounds: usize,
    },
}

/// A change that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedChange {
    /// The change as the plan listed it; none of its writes are known to be made.
    pub change: Change,
    /// What failed, with the array's message.
    pub error: String,
    /// `X-Request-ID` of the failed call.
    pub request_id: Option<String>,
    /// What the array's answer means; `None` when the failure was not the array's
    /// answer to a write (a journal, a read after it).
    #[serde(skip)]
    pub kind: Option<flasharray::ErrorKind>,
}

impl FailedChange {
    /// A create the array refused because the object exists now, or a membership
    /// it refused because the host belongs to a group now: the array changed since
    /// it was read (another tenant's apply made a shared object first, or a person
    /// made it), so the plan was made on a stale reading. Not a failure of the
    /// change: a new reading and plan decide, ownership rules included.
    pub fn is_stale_reading(&self) -> bool {
        use flasharray::ErrorKind::{AlreadyExists, InUse};
        let c = &self.change;
        c.action == Action::Create
            && match self.kind {
                Some(AlreadyExists) => true,
                Some(InUse) => c.kind == Kind::HostGroupMembership,
                _ => false,
            }
    }
}

/// A change that was not attempted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedChange {
    /// The change as the plan listed it; nothing of it was sent.
    pub change: Change,
    /// What stopped it (the failed prerequisite, the blocker, or "not started").
    pub reason: String,
}

/// A change that was done in part (see [`Outcome::Partial`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartialChange {
    /// The change as the plan listed it.
    pub change: Change,
    /// The writes made, as operations (`create volumes ...`): they are on the array.
    pub done: Vec<String>,
    /// What did not happen, and why.
    pub failed: String,
    /// `X-Request-ID` of the failed call, when one failed.
    pub request_id: Option<String>,
}

/// The result of `apply`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ApplyReport {
    /// Changes carried out.
    pub applied: Vec<Change>,
    /// Changes that failed.
    pub failed: Vec<FailedChange>,
    /// Changes not attempted (their prerequisites failed, or the plan was blocked).
    pub skipped: Vec<SkippedChange>,
    /// Changes done in part: some of their writes were made, the rest failed or was
    /// not attempted. A re-apply finishes them.
    pub partial: Vec<PartialChange>,
    /// Dependent rounds of calls.
    pub rounds: usize,
    /// REST calls made, re-reads after lost answers included.
    pub calls: usize,
    /// Serials and token, for the manifests.
    pub facts: ArrayFacts,
    /// Objects written on the array, per successful write operation.
    pub writes: WriteCounts,
    /// Cancelled ([`ApplyOptions::cancel`]): the changes skipped as "not started"
    /// are left for the next apply.
    pub interrupted: bool,
}

impl ApplyReport {
    /// True when every change was applied.
    pub fn is_success(&self) -> bool {
        self.failed.is_empty() && self.skipped.is_empty() && self.partial.is_empty()
    }

    /// Changes that did not fully happen: failed and partial ones (skipped ones
    /// follow from them).
    pub fn failures(&self) -> usize {
        self.failed.len() + self.partial.len()
    }

    /// `Wrote 5 objects on the array (4 created, 1 tagged); 1 failed.`: what the
    /// array holds now that it did not before, and how many changes did not fully
    /// happen.
    pub fn writes_line(&self) -> String {
        self.writes.summary_line(self.failures())
    }
}

/// Carries out `plan` on `array` (inside `flasharray::Settling`: see the module
/// text). A blocked plan changes nothing: every change comes back skipped. Refused
/// changes are not in the plan's changes and are not applied.
pub(crate) async fn apply(
    array: &dyn FlashArray,
    desired: &DesiredState,
    plan: &Plan,
    opts: &ApplyOptions,
    progress: &(dyn Fn(ProgressEvent) + Send + Sync),
) -> ApplyReport {
    let mut report = ApplyReport::default();
    report.facts.volume_serials = plan.serials.clone();
    if plan.is_blocked() {
        let reason = format!(
            "plan is blocked by {} conflict(s); nothing was changed",
            plan.conflicts.len()
        );
        report.skipped = plan
            .actionable()
            .map(|c| SkippedChange {
                change: c.clone(),
                reason: reason.clone(),
            })
            .collect();
        return report;
    }
    let graph = build_graph(desired, plan);
    let ctx = schedule::RunContext {
        concurrency: opts.concurrency,
        cancel: &opts.cancel,
        journal: opts.journal.as_deref(),
    };
    let run = schedule::run(array, &graph, &plan.changes, &ctx, progress).await;
    report.rounds = run.rounds;
    report.calls = run.calls;
    report.writes = run.writes;
    report.interrupted = run.interrupted;
    for (i, outcome) in run.change_outcomes.iter().enumerate() {
        let change = plan.changes[i].clone();
        match outcome {
            Some(Outcome::Applied) => report.applied.push(change),
            Some(Outcome::Failed {
                error,
                request_id,
                kind,
            }) => report.failed.push(FailedChange {
                change,
                error: error.clone(),
                request_id: request_id.clone(),
                kind: Some(*kind),
            }),
            Some(Outcome::Skipped { reason }) => report.skipped.push(SkippedChange {
                change,
                reason: reason.clone(),
            }),
            Some(Outcome::Partial {
                done,
                failed,
                request_id,
            }) => report.partial.push(PartialChange {
                change,
                done: done.clone(),
                failed: failed.clone(),
                request_id: request_id.clone(),
            }),
            None => {}
        }
    }
    let wanted: BTreeMap<String, &str> = desired
        .volumes
        .iter()
        .map(|v| (v.name.key(), v.name.as_str()))
        .collect();
    for v in run.output.volumes {
        if let (Some(serial), Some(name)) = (v.serial, wanted.get(&v.name.to_ascii_lowercase())) {
            report.facts.volume_serials.insert(name.to_string(), serial);
        }
    }
    report.facts.api_token = run.output.token;
    deliver_pending(desired, plan, opts.journal.as_deref(), &mut report);
    if report.facts.api_token.is_none()
        && opts.read_existing_token
        && let Some(t) = &desired.api_token
        && plan
            .changes
            .iter()
            .any(|c| c.kind == Kind::ApiToken && c.action == Action::NoOp)
    {
        report.calls += 1;
        match array
            .list_api_tokens(std::slice::from_ref(&t.admin), true)
            .await
        {
            Ok(items) => {
                report.facts.api_token = items
                    .into_iter()
                    .find(|a| a.name.eq_ignore_ascii_case(&t.admin))
                    .and_then(|a| a.api_token.token);
            }
            Err(e) => report.failed.push(FailedChange {
                change: Change::new(
                    Action::NoOp,
                    Kind::ApiToken,
                    &t.admin,
                    "read the existing token",
                ),
                error: format!("read API token of {}: {e}", t.admin),
                request_id: e.request_id().map(str::to_string),
                kind: None,
            }),
        }
    }
    report
}

/// A token an earlier apply created and journaled but never delivered (the plan's
/// `update api-token`): its value comes from the journal, with no array write.
fn deliver_pending(
    desired: &DesiredState,
    plan: &Plan,
    journal: Option<&dyn TokenJournal>,
    report: &mut ApplyReport,
) {
    let Some(t) = &desired.api_token else {
        return;
    };
    let Some(change) = plan
        .changes
        .iter()
        .find(|c| c.kind == Kind::ApiToken && c.action == Action::Update)
    else {
        return;
    };
    let loaded = match journal {
        Some(v) => v.load(&t.admin).map_err(|e| e.to_string()),
        None => Err("no token journal was given".to_string()),
    };
    match loaded {
        Ok(Some(entry)) if entry.token.is_some() => {
            report.facts.api_token = entry.token;
            report.applied.push(change.clone());
        }
        Ok(_) => report.failed.push(FailedChange {
            change: change.clone(),
            error: format!("the token journal no longer holds the token of {}", t.admin),
            request_id: None,
            kind: None,
        }),
        Err(e) => report.failed.push(FailedChange {
            change: change.clone(),
            error: format!("cannot read the token journal of {}: {e}", t.admin),
            request_id: None,
            kind: None,
        }),
    }
}
