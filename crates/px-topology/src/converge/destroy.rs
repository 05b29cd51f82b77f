//! Removing what pxfa made for one tenant, in reverse dependency order.
//!
//! Only objects tagged `managed-by=pxfa, tenant=<this tenant>` are touched: shared
//! management objects (`scope=shared`) and untagged objects are reported as kept.
//! Volumes and pods are destroyed, not eradicated, unless asked: they stay
//! recoverable for the array's eradication delay (24 h by default). When SafeMode
//! refuses an eradication, the object stays destroyed and is reported as pending.

use std::collections::BTreeMap;

use flasharray::{
    ConnectionTarget, ErrorKind, FlashArray, HostGroupName, HostName, PodName, TagResource,
    VolumeName,
};
use serde::Serialize;

use super::ops::Op;
use super::schedule::{self, Graph, NodeOutcome};

mod realm;
use super::{FailedChange, Outcome, ProgressEvent, SkippedChange};
use crate::desired::{DesiredState, MANAGED_BY_VALUE, TAG_MANAGED_BY, TAG_TENANT};
use crate::plan::{
    Action, Blocker, Change, Kind, MAX_NAMES_PER_CALL, Observed, Plan, lookup_pods, lookup_volumes,
    observe,
};

/// Switches of [`destroy`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DestroyOptions {
    /// Eradicate destroyed volumes and the pod: irreversible.
    pub eradicate: bool,
    /// Delete the token admin's API token. Tokens carry no tags, so pxfa cannot tell
    /// whether another tool uses the same admin's token: off by default, and meant
    /// for admins dedicated to one tenant.
    pub delete_token: bool,
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
            concurrency: 8,
            cancel: super::Cancel::default(),
        }
    }
}

/// An object left destroyed because eradication was refused (SafeMode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingEradication {
    /// Object kind.
    pub kind: Kind,
    /// Object name.
    pub name: String,
    /// Milliseconds until the array eradicates it by itself, when known.
    pub time_remaining_ms: Option<u64>,
    /// The array's refusal.
    pub reason: String,
}

/// The result of [`destroy`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct DestroyReport {
    /// Everything destroy set out to do, in order.
    pub changes: Vec<Change>,
    /// Changes done.
    pub done: Vec<Change>,
    /// Changes that failed.
    pub failed: Vec<FailedChange>,
    /// Changes not attempted.
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
    /// True when nothing failed or was skipped; pending eradications are not failures.
    pub fn is_success(&self) -> bool {
        self.failed.is_empty() && self.skipped.is_empty()
    }
}

/// Why destroy did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DestroyError {
    /// Reading the array failed.
    #[error("reading the array: {0}")]
    Observe(#[from] flasharray::Error),
    /// Nothing on the array is tagged for the tenant: refusing a destructive call
    /// with an empty selection (wrong tenant name, wrong array, already gone).
    #[error("nothing on the array is tagged for tenant {tenant:?}; nothing to destroy")]
    NothingSelected {
        /// The tenant.
        tenant: String,
    },
}

fn tenant_owned(obs: &Observed, kind: TagResource, name: &str, tenant: &str) -> bool {
    obs.tags.get(kind, name).is_some_and(|t| {
        t.get(TAG_MANAGED_BY).map(String::as_str) == Some(MANAGED_BY_VALUE)
            && t.get(TAG_TENANT).map(String::as_str) == Some(tenant)
    })
}

/// What [`destroy`] would remove, computed from one observation without touching the
/// array: the changes in the order they take effect, what is kept and why, and the
/// calls that carry the changes out. [`destroy_planned`] runs exactly these calls, so
/// a preview (`pxfa plan --destroy`, the confirmation prompt) lists what goes.
#[derive(Debug)]
pub struct DestroyPlan {
    /// The tenant.
    pub tenant: String,
    /// Every removal, in order (all `delete`).
    pub changes: Vec<Change>,
    /// Objects of the desired state that are present but not this tenant's.
    pub kept: Vec<Blocker>,
    graph: Graph,
    eradicate_nodes: Vec<usize>,
}

impl DestroyPlan {
    /// The preview as a [`Plan`], for the plan's text, JSON, YAML and pictures; kept
    /// objects are notes (they block nothing).
    pub fn to_plan(&self) -> Plan {
        let mut plan = Plan::new(
            &self.tenant,
            self.changes.clone(),
            Vec::new(),
            Vec::new(),
            BTreeMap::new(),
        );
        plan.notes = self
            .kept
            .iter()
            .map(|k| format!("kept {} {}: {}", k.kind.label(), k.name, k.reason))
            .collect();
        plan
    }
}

/// Reads the array and computes what [`destroy`] would remove; writes nothing.
pub async fn preview_destroy(
    array: &dyn FlashArray,
    desired: &DesiredState,
    opts: &DestroyOptions,
) -> Result<DestroyPlan, DestroyError> {
    let obs = observe(array, desired).await?;
    plan_destroy(&obs, desired, opts)
}

/// Removes the tenant's objects. Soft by default; see [`DestroyOptions`].
pub async fn destroy(
    array: &dyn FlashArray,
    desired: &DesiredState,
    opts: &DestroyOptions,
    progress: &(dyn Fn(ProgressEvent) + Send + Sync),
) -> Result<DestroyReport, DestroyError> {
    let plan = preview_destroy(array, desired, opts).await?;
    Ok(destroy_planned(array, &plan, opts, progress).await)
}

/// What would be destroyed, from an observation. Pure: no array access.
pub fn plan_destroy(
    obs: &Observed,
    desired: &DesiredState,
    opts: &DestroyOptions,
) -> Result<DestroyPlan, DestroyError> {
    let tenant = desired.tenant.as_str();

    // What is ours; what is kept and why.
    let mut kept = Vec::new();
    let mut keep = |kind: Kind, resource: TagResource, name: &str| {
        let why = match obs
            .tags
            .get(resource, name)
            .and_then(|t| t.get(TAG_TENANT).cloned())
        {
            Some(t) => format!("tagged for tenant {t:?}"),
            None if obs.tags.get(resource, name).is_some() => {
                "shared management object; never destroyed by a tenant".to_string()
            }
            None => "not created by pxfa (no pxfa tags)".to_string(),
        };
        kept.push(Blocker {
            kind,
            name: name.to_string(),
            reason: format!("kept: {why}"),
            resolution: "nothing to do: pxfa keeps what is not this tenant's".to_string(),
        });
    };
    let volumes: Vec<&flasharray::models::Volume> = obs
        .volumes
        .values()
        .filter(|v| {
            let ours = tenant_owned(obs, TagResource::Volume, &v.name, tenant);
            if !ours {
                keep(Kind::Volume, TagResource::Volume, &v.name);
            }
            ours
        })
        .collect();
    let hosts: Vec<&flasharray::models::Host> = obs
        .hosts
        .values()
        .filter(|h| {
            let ours = tenant_owned(obs, TagResource::Host, &h.name, tenant);
            if !ours {
                keep(Kind::Host, TagResource::Host, &h.name);
            }
            ours
        })
        .collect();
    let groups: Vec<&flasharray::models::HostGroup> = obs
        .host_groups
        .values()
        .filter(|g| {
            let ours = tenant_owned(obs, TagResource::HostGroup, &g.name, tenant);
            if !ours {
                keep(Kind::HostGroup, TagResource::HostGroup, &g.name);
            }
            ours
        })
        .collect();
    let pods: Vec<&flasharray::models::Pod> = obs
        .pods
        .values()
        .filter(|p| {
            let ours = tenant_owned(obs, TagResource::Pod, &p.name, tenant);
            if !ours {
                keep(Kind::Pod, TagResource::Pod, &p.name);
            }
            ours
        })
        .collect();
    let realm_removal = realm::select(obs, desired, opts, &mut kept);
    // A realm user pxfa deletes takes its token with it.
    let token = desired
        .api_token
        .as_ref()
        .filter(|_| opts.delete_token && obs.token == crate::plan::TokenState::HasToken)
        .filter(|t| !realm_removal.deletes_user(&t.admin));
    if realm_removal.is_empty()
        && volumes.is_empty()
        && hosts.is_empty()
        && groups.is_empty()
        && pods.is_empty()
        && token.is_none()
    {
        return Err(DestroyError::NothingSelected {
            tenant: tenant.to_string(),
        });
    }

    let key = |s: &str| s.to_ascii_lowercase();
    let our_volumes: BTreeMap<String, &str> = volumes
        .iter()
        .map(|v| (key(&v.name), v.name.as_str()))
        .collect();
    let our_hosts: BTreeMap<String, &str> = hosts
        .iter()
        .map(|h| (key(&h.name), h.name.as_str()))
        .collect();
    let our_groups: BTreeMap<String, &str> = groups
        .iter()
        .map(|g| (key(&g.name), g.name.as_str()))
        .collect();

    let mut changes: Vec<Change> = Vec::new();
    let mut g = Graph::default();
    let mut change = |c: Change| {
        changes.push(c);
        changes.len() - 1
    };

    // Round: disconnect every connection of our volumes, and of our hosts and groups.
    let mut disconnects: BTreeMap<(bool, String), (ConnectionTarget, Vec<VolumeName>)> =
        BTreeMap::new();
    for row in &obs.connections {
        let (Some(vol), Some(target)) = (row.volume.name.as_deref(), crate::plan::row_target(row))
        else {
            continue;
        };
        let is_group = matches!(target, ConnectionTarget::HostGroup(_));
        let target_ours = if is_group {
            our_groups.contains_key(&key(target.name()))
        } else {
            our_hosts.contains_key(&key(target.name()))
        };
        if !our_volumes.contains_key(&key(vol)) && !target_ours {
            continue;
        }
        let Ok(vn) = VolumeName::new(vol) else {
            continue;
        };
        let entry = disconnects
            .entry((is_group, key(target.name())))
            .or_insert_with(|| (target.clone(), Vec::new()));
        if !entry.1.contains(&vn) {
            entry.1.push(vn);
        }
    }
    let mut disc_vol: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut disc_target: BTreeMap<(bool, String), Vec<usize>> = BTreeMap::new();
    for ((is_group, tname), (target, vols)) in disconnects {
        for chunk in vols.chunks(MAX_NAMES_PER_CALL) {
            let ids: Vec<usize> = chunk
                .iter()
                .map(|v| {
                    change(Change::new(
                        Action::Delete,
                        Kind::Connection,
                        format!("{v} -> {}", target.name()),
                        "tenant destroyed",
                    ))
                })
                .collect();
            let n = g.add(
                Op::Disconnect {
                    target: target.clone(),
                    volumes: chunk.to_vec(),
                },
                [],
                ids,
            );
            for v in chunk {
                disc_vol.entry(v.key()).or_default().push(n);
            }
            disc_target
                .entry((is_group, tname.clone()))
                .or_default()
                .push(n);
        }
    }

    // Round: destroy live volumes; take our hosts out of their groups.
    let mut destroyed_in_pod: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut destroy_node: BTreeMap<String, usize> = BTreeMap::new();
    let live: Vec<VolumeName> = volumes
        .iter()
        .filter(|v| !v.destroyed)
        .filter_map(|v| VolumeName::new(v.name.as_str()).ok())
        .collect();
    for chunk in live.chunks(MAX_NAMES_PER_CALL) {
        let ids: Vec<usize> = chunk
            .iter()
            .map(|v| {
                change(Change::new(
                    Action::Delete,
                    Kind::Volume,
                    v.as_str(),
                    "tenant destroyed; recoverable until eradicated",
                ))
            })
            .collect();
        let deps: Vec<usize> = chunk
            .iter()
            .flat_map(|v| disc_vol.get(&v.key()).cloned().unwrap_or_default())
            .collect();
        let n = g.add(
            Op::DestroyVolumes {
                names: chunk.to_vec(),
            },
            deps,
            ids,
        );
        for v in chunk {
            destroy_node.insert(v.key(), n);
            if let Some(p) = v.pod() {
                destroyed_in_pod.entry(key(p)).or_default().push(n);
            }
        }
    }
    let mut by_group: BTreeMap<String, (HostGroupName, Vec<HostName>)> = BTreeMap::new();
    for h in &hosts {
        if let (Some(gname), Ok(hn)) =
            (h.host_group.name.as_deref(), HostName::new(h.name.as_str()))
            && let Ok(gn) = HostGroupName::new(gname)
        {
            by_group
                .entry(key(gname))
                .or_insert_with(|| (gn, Vec::new()))
                .1
                .push(hn);
        }
    }
    let mut left_host: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut left_group: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (gkey, (group, members)) in by_group {
        for chunk in members.chunks(MAX_NAMES_PER_CALL) {
            let ids: Vec<usize> = chunk
                .iter()
                .map(|h| {
                    change(Change::new(
                        Action::Delete,
                        Kind::HostGroupMembership,
                        format!("{h} -> {group}"),
                        "tenant destroyed",
                    ))
                })
                .collect();
            let n = g.add(
                Op::RemoveMembers {
                    group: group.clone(),
                    hosts: chunk.to_vec(),
                },
                [],
                ids,
            );
            for h in chunk {
                left_host.entry(h.key()).or_default().push(n);
            }
            left_group.entry(gkey.clone()).or_default().push(n);
        }
    }

    // Round: eradicate volumes (if asked); delete hosts.
    let mut eradicated_in_pod: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut eradicate_nodes = Vec::new();
    if opts.eradicate {
        let all: Vec<VolumeName> = volumes
            .iter()
            .filter_map(|v| VolumeName::new(v.name.as_str()).ok())
            .collect();
        for chunk in all.chunks(MAX_NAMES_PER_CALL) {
            let ids: Vec<usize> = chunk
                .iter()
                .map(|v| {
                    change(
                        Change::new(
                            Action::Delete,
                            Kind::Volume,
                            v.as_str(),
                            "tenant destroyed with eradication",
                        )
                        .detail("mode", "eradicate"),
                    )
                })
                .collect();
            let deps: Vec<usize> = chunk
                .iter()
                .filter_map(|v| destroy_node.get(&v.key()).copied())
                .collect();
            let n = g.add(
                Op::EradicateVolumes {
                    names: chunk.to_vec(),
                },
                deps,
                ids,
            );
            eradicate_nodes.push(n);
            for v in chunk {
                if let Some(p) = v.pod() {
                    eradicated_in_pod.entry(key(p)).or_default().push(n);
                }
            }
        }
    }
    let host_names: Vec<HostName> = hosts
        .iter()
        .filter_map(|h| HostName::new(h.name.as_str()).ok())
        .collect();
    let mut host_delete_nodes = Vec::new();
    for chunk in host_names.chunks(MAX_NAMES_PER_CALL) {
        let ids: Vec<usize> = chunk
            .iter()
            .map(|h| {
                change(Change::new(
                    Action::Delete,
                    Kind::Host,
                    h.as_str(),
                    "tenant destroyed",
                ))
            })
            .collect();
        let mut deps = Vec::new();
        for h in chunk {
            deps.extend(
                disc_target
                    .get(&(false, h.key()))
                    .cloned()
                    .unwrap_or_default(),
            );
            deps.extend(left_host.get(&h.key()).cloned().unwrap_or_default());
        }
        host_delete_nodes.push(g.add(
            Op::DeleteHosts {
                names: chunk.to_vec(),
            },
            deps,
            ids,
        ));
    }

    // Round: destroy the pod; delete groups.
    let mut pod_destroy: BTreeMap<String, usize> = BTreeMap::new();
    for p in pods.iter().filter(|p| !p.destroyed) {
        let Ok(pn) = PodName::new(p.name.as_str()) else {
            continue;
        };
        let id = change(Change::new(
            Action::Delete,
            Kind::Pod,
            p.name.as_str(),
            "tenant destroyed; recoverable until eradicated",
        ));
        let deps = destroyed_in_pod
            .get(&key(&p.name))
            .cloned()
            .unwrap_or_default();
        pod_destroy.insert(
            key(&p.name),
            g.add(Op::DestroyPods { names: vec![pn] }, deps, [id]),
        );
    }
    for grp in &groups {
        let Ok(gn) = HostGroupName::new(grp.name.as_str()) else {
            continue;
        };
        let id = change(Change::new(
            Action::Delete,
            Kind::HostGroup,
            grp.name.as_str(),
            "tenant destroyed",
        ));
        let mut deps = disc_target
            .get(&(true, key(&grp.name)))
            .cloned()
            .unwrap_or_default();
        deps.extend(left_group.get(&key(&grp.name)).cloned().unwrap_or_default());
        deps.extend(host_delete_nodes.iter().copied());
        g.add(Op::DeleteHostGroups { names: vec![gn] }, deps, [id]);
    }

    // Round: eradicate the pod (if asked); the token.
    let mut pods_gone: BTreeMap<String, Vec<usize>> = pod_destroy
        .iter()
        .map(|(p, n)| (p.clone(), vec![*n]))
        .collect();
    if opts.eradicate {
        for p in &pods {
            let Ok(pn) = PodName::new(p.name.as_str()) else {
                continue;
            };
            let id = change(
                Change::new(
                    Action::Delete,
                    Kind::Pod,
                    p.name.as_str(),
                    "tenant destroyed with eradication",
                )
                .detail("mode", "eradicate"),
            );
            let mut deps = eradicated_in_pod
                .get(&key(&p.name))
                .cloned()
                .unwrap_or_default();
            deps.extend(pod_destroy.get(&key(&p.name)).copied());
            let n = g.add(Op::EradicatePods { names: vec![pn] }, deps, [id]);
            eradicate_nodes.push(n);
            pods_gone.entry(key(&p.name)).or_default().push(n);
        }
    }
    if let Some(t) = token {
        let id = change(Change::new(
            Action::Delete,
            Kind::ApiToken,
            &t.admin,
            "tenant destroyed (delete_token)",
        ));
        g.add(
            Op::DeleteToken {
                admin: t.admin.clone(),
            },
            [],
            [id],
        );
    }
    realm::add(
        &realm_removal,
        opts,
        &mut g,
        &mut change,
        &pods_gone,
        &mut eradicate_nodes,
    );

    Ok(DestroyPlan {
        tenant: tenant.to_string(),
        changes,
        kept,
        graph: g,
        eradicate_nodes,
    })
}

/// Carries out a [`DestroyPlan`]: exactly its calls, in dependent rounds.
pub async fn destroy_planned(
    array: &dyn FlashArray,
    plan: &DestroyPlan,
    opts: &DestroyOptions,
    progress: &(dyn Fn(ProgressEvent) + Send + Sync),
) -> DestroyReport {
    let key = |s: &str| s.to_ascii_lowercase();
    let g = &plan.graph;
    let changes = &plan.changes;
    let eradicate_nodes = &plan.eradicate_nodes;
    let mut report = DestroyReport {
        kept: plan.kept.clone(),
        ..DestroyReport::default()
    };
    let ctx = schedule::RunContext {
        concurrency: opts.concurrency,
        cancel: &opts.cancel,
        vault: None,
    };
    let run = schedule::run(array, g, changes, &ctx, progress).await;
    report.rounds = run.rounds;
    report.calls = run.calls;
    report.interrupted = run.interrupted;

    // SafeMode: refused eradications, and eradications skipped because of them, are
    // pending, not failed.
    let refused: Vec<(usize, String)> = eradicate_nodes
        .iter()
        .filter_map(|n| match &run.outcomes[*n] {
            Some(NodeOutcome::Failed(f)) if f.kind == ErrorKind::EradicationRefused => {
                Some((*n, f.message.clone()))
            }
            _ => None,
        })
        .collect();
    let mut pending_changes: BTreeMap<usize, String> = BTreeMap::new();
    for n in eradicate_nodes {
        let reason = match &run.outcomes[*n] {
            Some(NodeOutcome::Failed(f)) if f.kind == ErrorKind::EradicationRefused => {
                f.message.clone()
            }
            Some(NodeOutcome::Skipped(_)) if !refused.is_empty() => {
                format!(
                    "not attempted: eradication of its contents was refused ({})",
                    refused[0].1
                )
            }
            _ => continue,
        };
        for c in &g.nodes[*n].changes {
            pending_changes.insert(*c, reason.clone());
        }
    }
    for (i, outcome) in run.change_outcomes.iter().enumerate() {
        let c = changes[i].clone();
        if let Some(reason) = pending_changes.get(&i) {
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
            Some(Outcome::Failed { error, request_id }) => report.failed.push(FailedChange {
                change: c,
                error: error.clone(),
                request_id: request_id.clone(),
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
            }),
            None => {}
        }
    }
    if !report.pending_eradication.is_empty() {
        // How long the array keeps them: one read per kind, best effort.
        let vols: Vec<String> = report
            .pending_eradication
            .iter()
            .filter(|p| p.kind == Kind::Volume)
            .map(|p| p.name.clone())
            .collect();
        let pds: Vec<String> = report
            .pending_eradication
            .iter()
            .filter(|p| p.kind == Kind::Pod)
            .map(|p| p.name.clone())
            .collect();
        let mut remaining: BTreeMap<String, Option<u64>> = BTreeMap::new();
        if !vols.is_empty() {
            report.calls += 1;
            if let Ok(found) = lookup_volumes(array, &vols).await {
                remaining.extend(found.into_iter().map(|v| (key(&v.name), v.time_remaining)));
            }
        }
        if !pds.is_empty() {
            report.calls += 1;
            if let Ok(found) = lookup_pods(array, &pds).await {
                remaining.extend(found.into_iter().map(|p| (key(&p.name), p.time_remaining)));
            }
        }
        for p in &mut report.pending_eradication {
            p.time_remaining_ms = remaining.get(&key(&p.name)).copied().flatten();
        }
    }
    report.changes = changes.clone();
    report
}
