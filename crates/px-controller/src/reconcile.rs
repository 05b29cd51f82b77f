//! One reconcile of one TenantStorage object: validate, plan on the array, apply
//! (per `spec.apply`), render and server-side apply the management and tenant
//! manifests (px-cluster also attaches the Direct Access disks to the worker VMs),
//! and write status. Delete runs the finalizer instead.
//!
//! The steps and their order are px-topology's tenant pipeline
//! ([`px_topology::Tenant::observe`] and the stages after it), the same the CLI
//! runs; the cluster side is `clusters.rs`. This module adds the finalizer, the
//! apply policy and the Events, and turns each stage's outcome into conditions.
//! A failure stops before the next write and is retried by re-planning from what the
//! array holds, so a write is never replayed blindly.
//!
//! The observation reads the array's listings ([`crate::observations`]), shared by
//! every tenant on the array; a plan that would write, or that is blocked, is made
//! again from the array itself before anything is decided on it, so nothing is
//! written (or refused) from a listing.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::{Api, ResourceExt};
use px_cluster::ClustersReport;
use px_topology::crd::{APPROVE_ANNOTATION, GROUP, PLURAL, VERSION};
use px_topology::spec::{self, API_VERSION, KIND};
use px_topology::token_journal::TokenJournal;
use px_topology::{
    Action as PlanAction, ApplyOptions, ApplyReport, Delivery, FailedChange, ObserveError, Plan,
    PlanOptions, Planned, Site, Tenant,
};
use serde_json::{Value, json};

pub use crate::context::{Context, Outcome, context};

use crate::arrays::read_credentials;
use crate::clusters::{Clusters, cluster_error};
use crate::error::{Error, Reason};
use crate::finalizer;
use crate::hosted::tenant_cluster;
use crate::policy::{self, Decision};
use crate::report::{announce_transitions, array_state, listed, write_status};
use crate::status::{ConditionType as C, PlanSummary, TenantStatus, now};
use crate::token_journal::{ControllerTokenJournal, SecretTokenJournal};

/// The `ApiResource` of TenantStorage.
pub fn tenant_storage_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, VERSION, KIND), PLURAL)
}

/// The spec document the parser accepts, built from the stored object: only the
/// metadata a spec has (server-set fields such as `uid` would be unknown fields).
pub(crate) fn tenant_document(obj: &DynamicObject) -> Value {
    let annotations: BTreeMap<String, String> = obj
        .annotations()
        .iter()
        .filter(|(k, _)| k.as_str() != "kubectl.kubernetes.io/last-applied-configuration")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": obj.name_any(),
            "namespace": obj.namespace(),
            "labels": obj.labels(),
            "annotations": annotations,
        },
        "spec": obj.data.get("spec").cloned().unwrap_or(Value::Null),
    })
}

/// Parses and validates; every problem with its field path.
pub fn load_tenant(obj: &DynamicObject) -> Result<Tenant, String> {
    let id = format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any());
    let spec = spec::from_value(tenant_document(obj)).map_err(|e| e.to_string())?;
    let errors = spec.validate();
    if !errors.is_empty() {
        return Err(px_topology::SpecErrors(errors)
            .to_string()
            .replace('\n', "; "));
    }
    Tenant::from_spec(spec, Path::new(&id)).map_err(|e| e.to_string())
}

/// The object's tenant, when its spec is valid and refers only to namespaces it
/// may ([`crate::references`]); else the reason (`SpecInvalid`,
/// `NamespaceNotAllowed`) and the message.
fn admit(obj: &DynamicObject, ctx: &Context, ns: &str) -> Result<Tenant, (&'static str, String)> {
    let tenant = load_tenant(obj).map_err(|m| ("SpecInvalid", m))?;
    ctx.references
        .check(ns, &tenant.spec)
        .map_err(|m| ("NamespaceNotAllowed", m))?;
    Ok(tenant)
}

/// Reconciles one object and writes its status. Errors are written to status
/// (`Degraded`) before they are returned for the controller's backoff.
pub async fn reconcile(obj: &DynamicObject, ctx: &Context) -> Result<Outcome, Error> {
    let ns = obj.namespace().unwrap_or_default();
    let api: Api<DynamicObject> =
        Api::namespaced_with(ctx.client.clone(), &ns, &tenant_storage_resource());
    let id = format!("TenantStorage {ns}/{}", obj.name_any());
    let mut status = TenantStatus::from_object(&obj.data);
    status.observed_generation = obj.metadata.generation;
    let stamp = now();

    // A spec referring to a namespace it may not is treated as invalid everywhere,
    // the delete path included: nothing there is read or acted on.
    let loaded = admit(obj, ctx, &ns);
    if obj.metadata.deletion_timestamp.is_some() {
        let loaded = loaded.map_err(|(_, message)| message);
        return finalizer::delete(obj, ctx, &api, &id, (&mut status, &stamp), loaded).await;
    }

    let tenant = match loaded {
        Ok(t) => t,
        Err((reason, message)) => {
            status.set(C::Valid, false, reason, format!("{id}: {message}"), &stamp);
            status.set(
                C::Ready,
                false,
                reason,
                "the spec is invalid; see Valid",
                &stamp,
            );
            write_status(&api, obj, &status).await?;
            announce_transitions(&ctx.events, obj, &status).await;
            return Ok(Outcome::Waiting(reason));
        }
    };
    status.set(
        C::Valid,
        true,
        "Valid",
        format!("{id}: the spec is valid"),
        &stamp,
    );

    let result = converge_tenant(obj, ctx, &api, &id, &tenant, &mut status, &stamp).await;
    match &result {
        Ok(_) => {
            if !matches!(result, Ok(Outcome::Waiting("Conflict"))) {
                status.set(
                    C::Degraded,
                    false,
                    "AsExpected",
                    format!("{id}: no failures"),
                    &stamp,
                );
            }
        }
        Err(e) => {
            status.set(
                C::Degraded,
                true,
                e.reason.as_str(),
                format!("{id}: {}", e.message),
                &stamp,
            );
            status.set(
                C::Ready,
                false,
                e.reason.as_str(),
                "degraded; see Degraded",
                &stamp,
            );
        }
    }
    write_status(&api, obj, &status).await?;
    announce_transitions(&ctx.events, obj, &status).await;
    result
}

/// The pipeline ([`px_topology::Tenant::observe`] and on) over this object:
/// observe, plan, the apply policy, apply, the clusters; each outcome becomes
/// conditions.
async fn converge_tenant(
    obj: &DynamicObject,
    ctx: &Context,
    api: &Api<DynamicObject>,
    id: &str,
    tenant: &Tenant,
    status: &mut TenantStatus,
    stamp: &str,
) -> Result<Outcome, Error> {
    finalizer::ensure_finalizer(ctx, api, obj).await?;
    let ns = obj.namespace().unwrap_or_default();
    let creds = read_credentials(&ctx.client, &ns, &tenant.spec).await?;
    let lease = ctx.arrays.acquire(&creds).await?;
    // The lease (this array's share of the work) ends before the clusters; the
    // stages after the apply make no array call.
    let (array, fresh) = (lease.array.clone(), lease.fresh.clone());
    // A token an earlier reconcile created and did not deliver: this process's
    // journal, and the object's journal Secret (another replica's, or this one's
    // before a restart).
    let token_journal = {
        let mut all = ctx.journals.lock().unwrap_or_else(|p| p.into_inner());
        all.entry(id.to_string()).or_default().clone()
    };
    let secret = SecretTokenJournal::new(ctx.client.clone(), &ns, &obj.name_any());
    let journal: Arc<dyn TokenJournal> =
        Arc::new(ControllerTokenJournal::open(token_journal, secret, &tenant.desired, id).await?);
    // Dynamic drives not found by their tags: through the claims on this cluster
    // (the management Portworx creates a drive when its claim binds); unbound ones
    // stay pending and a later reconcile tags them.
    let claims = px_cluster::ClaimBindings::new(ctx.client.clone());
    let site = Site {
        array: array.as_ref(),
        claims: Some(&claims),
        journal: Some(journal.clone()),
    };
    let planned = match observe_and_plan(tenant, site, fresh.as_ref(), id).await {
        Ok(p) => p,
        Err(e) => return observe_failed(e, id, &lease.endpoint, status, stamp),
    };
    // The tenant cluster keeps a new API token. Until it exists (its HostedCluster
    // is among the objects applied below) the token's creation is held and the
    // rest applies; a later reconcile creates and delivers it.
    let tenant_client = tenant_cluster(&ctx.client, planned.tenant()).await;
    let why = tenant_client.as_ref().err().map(|e| e.message.clone());
    let planned = planned.holding_a_new_token(why.is_none(), why.as_deref().unwrap_or_default());
    let plan = planned.plan();
    status.array_objects = count_objects(plan, false);
    if !plan.is_applicable() {
        return Ok(blocked(plan, id, status, stamp));
    }
    // A change without a spec change since the last converge is drift.
    let writes_array = planned.writes_array();
    let drifted = set_drifted(obj, id, plan, writes_array, status, stamp);
    let decision = policy::decide(tenant.spec.spec.apply, &tenant.spec.metadata.annotations);
    if writes_array && decision == Decision::WaitForApproval {
        return Ok(approval_pending(plan, id, status, stamp));
    }
    status.last_plan = Some(PlanSummary::of(plan, false));

    let clusters = Clusters::new(&ctx.client, tenant_client, ctx.wait, id);
    let applied = planned
        .apply(&clusters.side, ApplyOptions::default(), &|_| {})
        .await
        .map_err(|e| clusters.apply_error(e))?;
    let report = applied.report();
    announce_applied(ctx, obj, &lease.endpoint, report, drifted).await;
    if let Some(outcome) = stale_reading(report, id, status, stamp) {
        return Ok(outcome);
    }
    if let Some(f) = report.failed.first() {
        let message = format!("{id}: {} failed", f.change.to_line());
        status.set(C::ArrayReady, false, "ArrayWriteFailed", message, stamp);
        return Err(Error::write_failed(&format!("array {}", lease.endpoint), f));
    }
    if !report.is_success() {
        let skipped = report.skipped.len();
        let message = format!("array {}: {skipped} change(s) skipped", lease.endpoint);
        return Err(Error::new(Reason::ArrayWriteFailed, message));
    }
    status.array_objects = count_objects(applied.plan(), true);
    let (array_done, reason, message) =
        array_state(applied.plan(), &lease.endpoint, report.applied.len());
    let message = format!("{id}: {message}");
    status.set(C::ArrayReady, array_done, reason, message, stamp);
    if decision
        == (Decision::Apply {
            consume_approval: true,
        })
    {
        consume_approval(ctx, api, obj, id).await?;
    }
    drop(lease);

    let (delivery, journal) = applied
        .to_clusters(&clusters.side)
        .await
        .map_err(cluster_error)?;
    // The Secret left behind is read again by the next reconcile: a delivered token
    // is delivered again (the same value), a stale entry ignored.
    if let Some(Err(e)) = journal {
        tracing::warn!(tenant = %id, "{}", crate::clusters::journal_error(e).message);
    }
    let tenant_missing = clusters.tenant_missing.is_some();
    cluster_conditions(&delivery, tenant_missing, id, status, stamp)?;
    // Drives still waiting for their claims keep it in progress: the requeue soon
    // after tags them (a converged object would wait for its drift check).
    let ready = status.is_true(C::ManagementApplied) && delivery.complete && array_done;
    let reason = match (ready, array_done) {
        (true, _) => "Converged",
        (false, false) => reason,
        (false, true) => "InProgress",
    };
    let message = if ready {
        "converged"
    } else {
        "not finished; see the other conditions"
    };
    status.set(C::Ready, ready, reason, format!("{id}: {message}"), stamp);
    Ok(if ready {
        Outcome::Converged
    } else {
        Outcome::InProgress
    })
}

/// The plan from the listings (`site.array`) when it has nothing to do; else the
/// plan again from `fresh` (the array itself), which the apply then writes through:
/// the listings are trusted only to say that nothing needs doing.
async fn observe_and_plan<'a>(
    tenant: &Tenant,
    site: Site<'a>,
    fresh: &'a dyn flasharray::FlashArray,
    id: &str,
) -> Result<Planned<'a>, ObserveError> {
    let opts = PlanOptions::default();
    let from_listings = tenant.observe(site.clone()).await?;
    let unreadable = from_listings.claims_unreadable().map(ToString::to_string);
    let planned = from_listings.plan(&opts);
    if planned.plan().is_applicable() && !planned.writes_array() {
        warn_claims_unreadable(id, unreadable);
        return Ok(planned);
    }
    let observation = tenant
        .observe(Site {
            array: fresh,
            ..site
        })
        .await?;
    warn_claims_unreadable(id, observation.claims_unreadable().map(ToString::to_string));
    Ok(observation.plan(&opts))
}

fn warn_claims_unreadable(id: &str, unreadable: Option<String>) {
    if let Some(e) = unreadable {
        tracing::warn!(tenant = %id, "cannot read which drive claims are bound; their drives stay pending: {e}");
    }
}

/// An observation that failed: a realm the array cannot hold is bad input the array
/// reveals (nothing is written; a spec edit, or an upgraded array on the next drift
/// check, wakes it); anything else is an unreachable array.
fn observe_failed(
    e: ObserveError,
    id: &str,
    endpoint: &str,
    status: &mut TenantStatus,
    stamp: &str,
) -> Result<Outcome, Error> {
    match e {
        ObserveError::Realm(e) if e.is_unsupported() => {
            let message = format!("{id}: {e}");
            status.set(C::Valid, false, "RealmUnsupported", message, stamp);
            status.set(
                C::Ready,
                false,
                "RealmUnsupported",
                "the array cannot hold the spec's realm; see Valid",
                stamp,
            );
            Ok(Outcome::Waiting("RealmUnsupported"))
        }
        ObserveError::Realm(e) => Err(Error::new(
            Reason::ArrayUnreachable,
            format!("reading array {endpoint}: {e}"),
        )),
        ObserveError::Array { source, .. } => Err(Error::array(
            Reason::ArrayUnreachable,
            &format!("reading array {endpoint}"),
            &source,
        )),
        e => Err(Error::new(Reason::Internal, format!("{id}: {e}"))),
    }
}

/// A plan with conflicts or refusals: nothing is applied, the object waits.
/// The reason of a reconcile whose writes found the array changed since it was read.
pub(crate) const ARRAY_CHANGED: &str = "ArrayChanged";

/// Every failed write found the array changed since it was read
/// ([`FailedChange::is_stale_reading`]: the first tenants on a new array race to
/// create the objects they share). That is not an error: the next reconcile reads
/// again, and its plan decides, ownership included. Once only: a second stale
/// reading in a row is an `ArrayWriteFailed` like any other, so a reading that never
/// sees the object cannot loop quietly.
fn stale_reading(
    report: &ApplyReport,
    id: &str,
    status: &mut TenantStatus,
    stamp: &str,
) -> Option<Outcome> {
    let again = (status.get(C::ArrayReady)).is_some_and(|c| c.reason == ARRAY_CHANGED);
    let stale = !report.failed.is_empty()
        && report.failed.iter().all(FailedChange::is_stale_reading)
        && report.partial.is_empty();
    if again || !stale {
        return None;
    }
    let found: Vec<String> = (report.failed.iter())
        .map(|f| format!("{} ({})", f.change.to_line(), f.error))
        .collect();
    let message = format!(
        "{id}: the array changed since it was read: {}; reading it again",
        listed(&found)
    );
    status.set(C::ArrayReady, false, ARRAY_CHANGED, message.clone(), stamp);
    status.set(C::Ready, false, ARRAY_CHANGED, message, stamp);
    Some(Outcome::ReadAgain)
}

fn blocked(plan: &Plan, id: &str, status: &mut TenantStatus, stamp: &str) -> Outcome {
    let list: Vec<String> = plan
        .conflicts
        .iter()
        .chain(&plan.refusals)
        .map(|c| {
            format!(
                "{} {}: {} (resolve: {})",
                c.kind.label(),
                c.name,
                c.reason,
                c.resolution
            )
        })
        .collect();
    status.last_plan = Some(PlanSummary::of(plan, false));
    status.set(
        C::ArrayReady,
        false,
        "Conflict",
        format!("{id}: blocked by {}", list.join("; ")),
        stamp,
    );
    status.set(
        C::Degraded,
        true,
        "Conflict",
        format!(
            "{id}: the plan is blocked (conflicts with objects pxfa does not own, or refusals): {}",
            list.join("; ")
        ),
        stamp,
    );
    status.set(
        C::Ready,
        false,
        "Conflict",
        "blocked; see ArrayReady",
        stamp,
    );
    Outcome::Waiting("Conflict")
}

/// Sets `Drifted`: the plan writes on the array and the object had converged at
/// this generation.
fn set_drifted(
    obj: &DynamicObject,
    id: &str,
    plan: &Plan,
    writes_array: bool,
    status: &mut TenantStatus,
    stamp: &str,
) -> bool {
    let converged_before = status.is_true(C::ArrayReady)
        && status
            .get(C::ArrayReady)
            .and_then(|c| c.observed_generation)
            == obj.metadata.generation;
    let drifted = writes_array && converged_before;
    status.set(
        C::Drifted,
        drifted,
        if drifted { "ArrayDrift" } else { "NoDrift" },
        if drifted {
            format!(
                "{id}: the array differs from the spec: {} change(s)",
                plan.actionable().count()
            )
        } else {
            format!("{id}: the array matched the spec when last checked")
        },
        stamp,
    );
    drifted
}

/// `spec.apply: manual` and changes wait for the approval annotation.
fn approval_pending(plan: &Plan, id: &str, status: &mut TenantStatus, stamp: &str) -> Outcome {
    let summary = PlanSummary::of(plan, true);
    let message = format!(
        "{id}: {} change(s) wait for approval (annotate {APPROVE_ANNOTATION}): {}",
        summary.pending.len(),
        summary.pending.join("; ")
    );
    status.last_plan = Some(summary);
    status.set(C::ArrayReady, false, "ApprovalPending", message, stamp);
    status.set(
        C::Ready,
        false,
        "ApprovalPending",
        "spec.apply is manual; see ArrayReady",
        stamp,
    );
    Outcome::Waiting("ApprovalPending")
}

/// The Event for the changes the apply made on the array.
async fn announce_applied(
    ctx: &Context,
    obj: &DynamicObject,
    endpoint: &str,
    report: &ApplyReport,
    drifted: bool,
) {
    if report.applied.is_empty() {
        return;
    }
    let lines: Vec<String> = report
        .applied
        .iter()
        .take(10)
        .map(|c| c.to_line())
        .collect();
    let more = report.applied.len().saturating_sub(lines.len());
    ctx.events
        .normal(
            obj,
            "ApplyArray",
            if drifted {
                "DriftRepaired"
            } else {
                "ArrayChangesApplied"
            },
            &format!(
                "array {endpoint}: {} change(s) applied: {}{}",
                report.applied.len(),
                lines.join("; "),
                if more > 0 {
                    format!("; and {more} more")
                } else {
                    String::new()
                }
            ),
        )
        .await;
}

/// `ManagementApplied` and `TenantApplied` from what the clusters made of the
/// manifests; a conflict on the management cluster is the reconcile's error.
fn cluster_conditions(
    delivery: &Delivery<ClustersReport>,
    tenant_missing: bool,
    id: &str,
    status: &mut TenantStatus,
    stamp: &str,
) -> Result<(), Error> {
    let applied = &delivery.report.applied;
    if let Some(c) = applied.conflicts.first() {
        status.set(
            C::ManagementApplied,
            false,
            "Conflict",
            format!("{id}: {}: {}", c.object, c.message),
            stamp,
        );
        return Err(Error::new(
            Reason::Conflict,
            format!("{}: {}", c.object, c.message),
        ));
    }
    let pending: Vec<String> = applied
        .pending
        .iter()
        .map(|p| format!("{}: {}", p.object, p.state))
        .collect();
    let mgmt_done = applied
        .stopped_at
        .as_deref()
        .is_none_or(|s| !s.starts_with("management"));
    status.set(
        C::ManagementApplied,
        mgmt_done,
        if mgmt_done { "Applied" } else { "Pending" },
        format!(
            "{id}: {}",
            if mgmt_done {
                "management manifests applied".to_string()
            } else {
                pending.join("; ")
            }
        ),
        stamp,
    );
    let tenant_done = delivery.complete;
    status.set(
        C::TenantApplied,
        tenant_done,
        if tenant_missing {
            "TenantKubeconfigMissing"
        } else if tenant_done {
            "Applied"
        } else {
            "Pending"
        },
        format!(
            "{id}: {}",
            if tenant_done {
                "tenant manifests applied".to_string()
            } else if tenant_missing {
                "the HostedCluster has no admin kubeconfig yet".to_string()
            } else {
                pending.join("; ")
            }
        ),
        stamp,
    );
    Ok(())
}

/// Removes the approval annotation after the apply it approved, and says so.
async fn consume_approval(
    ctx: &Context,
    api: &Api<DynamicObject>,
    obj: &DynamicObject,
    id: &str,
) -> Result<(), Error> {
    let patch = json!({"metadata": {"annotations": {APPROVE_ANNOTATION: null}}});
    api.patch(
        &obj.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map_err(|e| {
        Error::new(
            Reason::ClusterApplyFailed,
            format!("cannot remove {APPROVE_ANNOTATION}: {e}"),
        )
    })?;
    ctx.events
        .normal(
            obj,
            "ConsumeApproval",
            "ApprovalConsumed",
            &format!("{id}: one apply approved by {APPROVE_ANNOTATION}; the annotation is removed"),
        )
        .await;
    Ok(())
}

/// The tenant's array objects by kind: before an apply, what the plan saw (all but
/// creates); after a successful one, all but deletes.
fn count_objects(plan: &Plan, applied: bool) -> BTreeMap<String, u64> {
    let gone = if applied {
        PlanAction::Delete
    } else {
        PlanAction::Create
    };
    let mut counts = BTreeMap::new();
    // A pending drive is not on the array yet.
    let counted = |a: PlanAction| a != gone && a != PlanAction::Pending;
    for c in plan.changes.iter().filter(|c| counted(c.action)) {
        let kind = serde_json::to_value(c.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| c.kind.label().to_string());
        *counts.entry(kind).or_insert(0) += 1;
    }
    counts
}
