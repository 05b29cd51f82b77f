//! Dependent rounds: operations form a graph (an operation waits for the ones that
//! make what it needs); each round runs every operation whose dependencies are done,
//! concurrently up to a bound. Wall time is then about rounds x round trip, whatever
//! the number of objects.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::stream::{self, StreamExt};

use super::ops::{self, Failure, Op, Output};
use super::{Outcome, ProgressEvent};
use crate::plan::Change;

/// Stops a running apply or destroy from starting more operations (the first Ctrl-C):
/// operations in flight finish, so the array never sees a request the client gave up
/// on, and a token creation always reaches its journal step. Clones share the flag.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag not yet raised.
    pub fn new() -> Self {
        Cancel::default()
    }

    /// Raises the flag.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether the flag is raised.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Two handles are equal when they share the flag.
impl PartialEq for Cancel {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Cancel {}

/// The reason given to operations not started after [`Cancel::cancel`].
pub(crate) const INTERRUPTED: &str = "not started: the run was interrupted";

/// What a run needs besides the graph.
pub(crate) struct RunContext<'a> {
    /// Most operations in flight at once.
    pub concurrency: usize,
    /// Raised: start nothing more.
    pub cancel: &'a Cancel,
    /// Where a token creation is journaled.
    pub journal: Option<&'a dyn crate::token_journal::TokenJournal>,
}

/// An operation and what it waits for.
#[derive(Debug)]
pub(crate) struct Node {
    pub op: Op,
    pub deps: Vec<usize>,
    /// Indices of the changes this operation carries out (part of).
    pub changes: Vec<usize>,
}

/// Operations in an order where dependencies come first.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    pub nodes: Vec<Node>,
}

impl Graph {
    /// Adds an operation; `deps` must be earlier nodes.
    pub(super) fn add(
        &mut self,
        op: Op,
        deps: impl IntoIterator<Item = usize>,
        changes: impl IntoIterator<Item = usize>,
    ) -> usize {
        let mut deps: Vec<usize> = deps.into_iter().collect();
        deps.sort_unstable();
        deps.dedup();
        let id = self.nodes.len();
        debug_assert!(deps.iter().all(|d| *d < id), "dependencies come first");
        self.nodes.push(Node {
            op,
            deps,
            changes: changes.into_iter().collect(),
        });
        id
    }

    /// Round number (1-based) of every node: one more than its latest dependency.
    fn levels(&self) -> Vec<usize> {
        let mut level = vec![0; self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            level[i] = 1 + n.deps.iter().map(|d| level[*d]).max().unwrap_or(0);
        }
        level
    }
}

/// How one operation ended.
#[derive(Debug, Clone)]
pub(crate) enum NodeOutcome {
    Done,
    Failed(Failure),
    Skipped(String),
}

/// Everything a run produced.
#[derive(Debug, Default)]
pub(crate) struct RunResult {
    pub outcomes: Vec<Option<NodeOutcome>>,
    pub output: Output,
    pub rounds: usize,
    pub calls: usize,
    /// Final outcome per change index (only changes some node carries).
    pub change_outcomes: Vec<Option<Outcome>>,
    /// Objects written by the operations that succeeded.
    pub writes: super::WriteCounts,
    /// The run was cancelled: some operations were not started.
    pub interrupted: bool,
}

/// Runs the graph round by round. `changes` are the plan's changes; the progress
/// callback hears round boundaries and the start and end of every change.
pub(crate) async fn run(
    array: &dyn flasharray::FlashArray,
    graph: &Graph,
    changes: &[Change],
    ctx: &RunContext<'_>,
    progress: &(dyn Fn(ProgressEvent) + Send + Sync),
) -> RunResult {
    let levels = graph.levels();
    let rounds = levels.iter().copied().max().unwrap_or(0);
    let mut change_nodes: Vec<Vec<usize>> = vec![Vec::new(); changes.len()];
    for (i, n) in graph.nodes.iter().enumerate() {
        for c in &n.changes {
            change_nodes[*c].push(i);
        }
    }
    let mut res = RunResult {
        outcomes: vec![None; graph.nodes.len()],
        change_outcomes: vec![None; changes.len()],
        ..RunResult::default()
    };
    let mut started = BTreeSet::new();
    for round in 1..=rounds {
        let mut runnable = Vec::new();
        for (i, n) in graph.nodes.iter().enumerate() {
            if levels[i] != round {
                continue;
            }
            let blocked = n.deps.iter().find_map(|d| match &res.outcomes[*d] {
                Some(NodeOutcome::Done) => None,
                _ => Some(*d),
            });
            match blocked {
                Some(d) => {
                    let dep = &graph.nodes[d].op;
                    res.outcomes[i] = Some(NodeOutcome::Skipped(format!(
                        "not attempted: it needs `{}`, which did not succeed",
                        dep.describe()
                    )));
                }
                None => runnable.push(i),
            }
        }
        progress(ProgressEvent::RoundStarted {
            round,
            rounds,
            calls: runnable.len(),
        });
        for i in &runnable {
            for c in &graph.nodes[*i].changes {
                if started.insert(*c) {
                    progress(ProgressEvent::ChangeStarted {
                        index: *c,
                        change: changes[*c].clone(),
                    });
                }
            }
        }
        // Skipped nodes may complete changes too.
        let skipped_now: Vec<usize> = (0..graph.nodes.len())
            .filter(|i| {
                levels[*i] == round && matches!(res.outcomes[*i], Some(NodeOutcome::Skipped(_)))
            })
            .collect();
        for i in skipped_now {
            settle(graph, changes, &change_nodes, &mut res, i, progress);
        }
        // The flag is read as each operation starts: the ones already sent finish.
        let mut results = stream::iter(runnable.into_iter().map(|i| {
            let op = &graph.nodes[i].op;
            async move {
                if ctx.cancel.is_cancelled() {
                    return (i, None);
                }
                (i, Some(ops::run(array, op, ctx.journal).await))
            }
        }))
        .buffer_unordered(ctx.concurrency.max(1));
        while let Some((i, ran)) = results.next().await {
            let Some((calls, result)) = ran else {
                res.interrupted = true;
                res.outcomes[i] = Some(NodeOutcome::Skipped(INTERRUPTED.to_string()));
                settle(graph, changes, &change_nodes, &mut res, i, progress);
                continue;
            };
            res.calls += calls;
            res.outcomes[i] = Some(match result {
                Ok(out) => {
                    res.writes.add(&graph.nodes[i].op);
                    res.output.volumes.extend(out.volumes);
                    if out.token.is_some() {
                        res.output.token = out.token;
                    }
                    NodeOutcome::Done
                }
                Err(f) => NodeOutcome::Failed(f),
            });
            settle(graph, changes, &change_nodes, &mut res, i, progress);
        }
        res.rounds = round;
        progress(ProgressEvent::RoundFinished { round, rounds });
    }
    res
}

/// After node `i` ended: every change it carries whose nodes have all ended gets its
/// outcome and a `ChangeFinished` event. Applied when every node succeeded; when
/// some succeeded and others failed or were not attempted, partial (a volume created
/// whose tagging failed is neither applied nor skipped); otherwise failed beats
/// skipped.
fn settle(
    graph: &Graph,
    changes: &[Change],
    change_nodes: &[Vec<usize>],
    res: &mut RunResult,
    i: usize,
    progress: &(dyn Fn(ProgressEvent) + Send + Sync),
) {
    for c in &graph.nodes[i].changes {
        if res.change_outcomes[*c].is_some() {
            continue;
        }
        let nodes = &change_nodes[*c];
        if nodes.iter().any(|n| res.outcomes[*n].is_none()) {
            continue;
        }
        let mut done = Vec::new();
        let mut failed: Option<&Failure> = None;
        let mut skipped: Option<&String> = None;
        for n in nodes {
            match &res.outcomes[*n] {
                Some(NodeOutcome::Done) => done.push(graph.nodes[*n].op.describe()),
                Some(NodeOutcome::Failed(f)) => {
                    failed.get_or_insert(f);
                }
                Some(NodeOutcome::Skipped(r)) => {
                    skipped.get_or_insert(r);
                }
                None => {}
            }
        }
        let outcome = match (failed, skipped) {
            (None, None) => Outcome::Applied,
            (Some(f), _) if !done.is_empty() => Outcome::Partial {
                done,
                failed: f.message.clone(),
                request_id: f.request_id.clone(),
            },
            (None, Some(r)) if !done.is_empty() => Outcome::Partial {
                done,
                failed: r.clone(),
                request_id: None,
            },
            (Some(f), _) => Outcome::Failed {
                error: f.message.clone(),
                request_id: f.request_id.clone(),
                kind: f.kind,
            },
            (None, Some(r)) => Outcome::Skipped { reason: r.clone() },
        };
        progress(ProgressEvent::ChangeFinished {
            index: *c,
            change: changes[*c].clone(),
            outcome: outcome.clone(),
        });
        res.change_outcomes[*c] = Some(outcome);
    }
}
