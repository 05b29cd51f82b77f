//! One reconcile of one TenantStorage object: validate, plan on the array, apply
//! (per `spec.apply`), render and server-side apply the management and tenant
//! manifests (px-cluster also attaches the Direct Access disks to the worker VMs),
//! and write status. Delete runs the finalizer instead.
//!
//! Every array and cluster step is the same px-topology / px-cluster code the CLI
//! runs; this module only orders the steps and turns each outcome into conditions.
//! A failure stops before the next write and is retried by re-planning from what the
//! array holds, so a write is never replayed blindly.

use std::collections::BTreeMap;
use std::path::Path;

use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::{Api, ResourceExt};
use px_cluster::{ApplyOptions as ClusterApplyOptions, apply_manifests};
use px_topology::converge::{self, ApplyOptions};
use px_topology::crd::{APPROVE_ANNOTATION, GROUP, PLURAL, VERSION};
use px_topology::driver::ArrayFacts;
use px_topology::manifests::{RenderOptions, render};
use px_topology::plan::{self, Action as PlanAction, Plan, PlanOptions};
use px_topology::render::Cluster;
use px_topology::spec::{self, API_VERSION, KIND};
use px_topology::{Tenant, refuse_losing_a_new_token};
use serde_json::{Value, json};

pub use crate::context::{Context, Outcome, context};

use crate::arrays::read_credentials;
use crate::error::{Error, Reason};
use crate::finalizer;
use crate::hosted::tenant_cluster;
use crate::journal::{ReconcileJournal, SecretJournal};
use crate::policy::{self, Decision};
use crate::report::{announce_transitions, array_state, write_status};
use crate::status::{ConditionType as C, PlanSummary, TenantStatus, now};

/// The `ApiResource` of TenantStorage.
pub fn tenant_storage_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, VERSION, KIND), PLURAL)
}

/// The spec document the parser accepts, built from the stored object: only the
/// metadata a spec has (server-set fields such as `uid` would be unknown fields).
pub fn tenant_document(obj: &DynamicObject) -> Value {
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

    if obj.metadata.deletion_timestamp.is_some() {
        return finalizer::delete(obj, ctx, &api, &id, (&mut status, &stamp), load_tenant(obj))
            .await;
    }

    let tenant = match load_tenant(obj) {
        Ok(t) => t,
        Err(message) => {
            status.set(
                C::Valid,
                false,
                "SpecInvalid",
                format!("{id}: {message}"),
                &stamp,
            );
            status.set(
                C::Ready,
                false,
                "SpecInvalid",
                "the spec is invalid; see Valid",
                &stamp,
            );
            write_status(&api, obj, &status).await?;
            announce_transitions(&ctx.events, obj, &status).await;
            return Ok(Outcome::Waiting("SpecInvalid"));
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
    let array = lease.array.as_ref();

    // Bad input the array reveals: a realm on an array whose REST version has none.
    // Nothing is written; a spec edit (or an upgraded array on the next drift
    // check) wakes it.
    match plan::require_realm_support(array, &tenant.desired).await {
        Ok(()) => {}
        Err(e @ plan::RealmGateError::Unsupported { .. }) => {
            let message = format!("{id}: {e}");
            status.set(C::Valid, false, "RealmUnsupported", message, stamp);
            status.set(
                C::Ready,
                false,
                "RealmUnsupported",
                "the array cannot hold the spec's realm; see Valid",
                stamp,
            );
            return Ok(Outcome::Waiting("RealmUnsupported"));
        }
        Err(e) => {
            return Err(Error::new(
                Reason::ArrayUnreachable,
                format!("reading array {}: {e}", lease.endpoint),
            ));
        }
    }

    let mut observed = plan::observe(array, &tenant.desired).await.map_err(|e| {
        Error::array(
            Reason::ArrayUnreachable,
            &format!("reading array {}", lease.endpoint),
            &e,
        )
    })?;
    // Dynamic drives not found by their tags: through the claims on this cluster
    // (the management Portworx creates a drive when its claim binds); unbound ones
    // stay pending and a later reconcile tags them.
    if !tenant.desired.drives.is_empty() {
        let claims = px_cluster::ClaimBindings::new(ctx.client.clone());
        if let Err(e) = plan::locate_drives(array, &tenant.desired, &mut observed, &claims).await {
            tracing::warn!(tenant = %id, "cannot read which drive claims are bound; their drives stay pending: {e}");
        }
    }
    // A token an earlier reconcile created and did not deliver: this process's
    // journal, and the object's journal Secret (another replica's, or this one's
    // before a restart).
    let vault = {
        let mut all = ctx.journals.lock().unwrap_or_else(|p| p.into_inner());
        all.entry(id.to_string()).or_default().clone()
    };
    let mut journal = ReconcileJournal::open(
        vault,
        SecretJournal::new(ctx.client.clone(), &ns, &obj.name_any()),
        &tenant.desired,
        &mut observed,
        id,
    )
    .await?;
    // The drives on the array keep their size (new workers get it too, and the
    // claims rendered below ask for it), and the plan carries the growth rules.
    let resized;
    let tenant = match tenant.keeping_drives_in_use(&observed) {
        Ok(Some(t)) => {
            resized = t;
            &resized
        }
        Ok(None) => tenant,
        Err(e) => return Err(Error::new(Reason::Internal, format!("{id}: {e}"))),
    };
    let plan = tenant.plan(&observed, &PlanOptions::default());
    status.array_objects = count_objects(&plan, false);

    if !plan.is_applicable() {
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
        status.last_plan = Some(PlanSummary::of(&plan, false));
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
            format!("{id}: the plan is blocked (conflicts with objects pxfa does not own, or refusals): {}", list.join("; ")),
            stamp,
        );
        status.set(
            C::Ready,
            false,
            "Conflict",
            "blocked; see ArrayReady",
            stamp,
        );
        return Ok(Outcome::Waiting("Conflict"));
    }

    // A change without a spec change since the last converge is drift.
    let converged_before = status.is_true(C::ArrayReady)
        && status
            .get(C::ArrayReady)
            .and_then(|c| c.observed_generation)
            == obj.metadata.generation;
    // Delivering a journaled token writes nothing on the array: it is neither drift
    // nor anything to approve (the approval of the apply that created it counted).
    let writes_array = plan
        .actionable()
        .any(|c| !(c.kind == plan::Kind::ApiToken && c.action == PlanAction::Update));
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

    let decision = policy::decide(tenant.spec.spec.apply, &tenant.spec.metadata.annotations);
    if writes_array && decision == Decision::WaitForApproval {
        let summary = PlanSummary::of(&plan, true);
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
        return Ok(Outcome::Waiting("ApprovalPending"));
    }
    status.last_plan = Some(PlanSummary::of(&plan, false));

    // The tenant cluster is where a new API token is kept; find it before any write.
    let tenant_client = tenant_cluster(&ctx.client, tenant).await;
    refuse_losing_a_new_token(&plan, tenant_client.is_ok()).map_err(|lost| {
        let why = tenant_client
            .as_ref()
            .err()
            .map(|e| e.message.clone())
            .unwrap_or_default();
        Error::new(Reason::TenantKubeconfigMissing, format!("{lost}: {why}"))
    })?;

    journal.before_apply(&plan).await?;
    let opts = ApplyOptions {
        vault: Some(journal.vault()),
        ..ApplyOptions::default()
    };
    let report = converge::apply(array, &tenant.desired, &plan, &opts, &|_| {}).await;
    journal.after_apply(id).await?;
    if !report.applied.is_empty() {
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
                    "array {}: {} change(s) applied: {}{}",
                    lease.endpoint,
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
    if let Some(f) = report.failed.first() {
        status.set(
            C::ArrayReady,
            false,
            "ArrayWriteFailed",
            format!("{id}: {} failed", f.change.to_line()),
            stamp,
        );
        return Err(Error::write_failed(&format!("array {}", lease.endpoint), f));
    }
    if !report.is_success() {
        return Err(Error::new(
            Reason::ArrayWriteFailed,
            format!(
                "array {}: {} change(s) skipped",
                lease.endpoint,
                report.skipped.len()
            ),
        ));
    }
    status.array_objects = count_objects(&plan, true);
    let (array_done, reason, message) = array_state(&plan, &lease.endpoint, report.applied.len());
    status.set(
        C::ArrayReady,
        array_done,
        reason,
        format!("{id}: {message}"),
        stamp,
    );
    if decision
        == (Decision::Apply {
            consume_approval: true,
        })
    {
        consume_approval(api, obj).await?;
        ctx.events
            .normal(
                obj,
                "ConsumeApproval",
                "ApprovalConsumed",
                &format!(
                    "{id}: one apply approved by {APPROVE_ANNOTATION}; the annotation is removed"
                ),
            )
            .await;
    }
    drop(lease);

    let facts = ArrayFacts {
        volume_serials: report.facts.volume_serials.clone(),
        api_token: report.facts.api_token.clone(),
    };
    let manifests = render(
        &tenant.spec,
        &tenant.sizing,
        &facts,
        RenderOptions {
            include_secrets: true,
            ..RenderOptions::default()
        },
    )
    .map_err(|e| {
        Error::new(
            Reason::Internal,
            format!("cannot render the manifests: {e}"),
        )
    })?;
    // The pull-secret template and the rebooting management MachineConfig stay with
    // the admin, as in the CLI without --apply-node-config.
    let (manifests, skipped) = px_cluster::cluster_bundle(&tenant.spec, manifests, false);
    for s in &skipped {
        tracing::info!(tenant = %id, "not applied: {s}");
    }
    let tenant_client = tenant_client.ok();
    let opts = ClusterApplyOptions {
        force_conflicts: false,
        wait: ctx.wait,
        apply_secrets: facts.api_token.is_some(),
        adopt_replaced_vms: false,
    };
    let applied = apply_manifests(
        &tenant.spec,
        &manifests,
        &ctx.client,
        tenant_client.as_ref(),
        &opts,
    )
    .await
    .map_err(|e| Error::new(Reason::ClusterApplyFailed, e.to_string()))?;
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
    let tenant_done = tenant_client.is_some() && applied.complete();
    // The tenant's px-pure-secret holds the token now (even if the tenant is not
    // ready yet), or the journal's entry was stale: the journal lets go of it, in
    // memory and then the Secret.
    let tenant_secrets: Vec<_> = manifests
        .iter()
        .filter(|m| m.secret && m.cluster == Cluster::Tenant)
        .collect();
    let token_in_tenant = tenant_client.is_some()
        && facts.api_token.is_some()
        && !tenant_secrets.is_empty()
        && tenant_secrets.iter().all(|m| applied.was_applied(m));
    if token_in_tenant || (tenant_done && journal.nothing_pending()) {
        journal.let_go(id).await;
    }
    status.set(
        C::TenantApplied,
        tenant_done,
        if tenant_client.is_none() {
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
            } else if tenant_client.is_none() {
                "the HostedCluster has no admin kubeconfig yet".to_string()
            } else {
                pending.join("; ")
            }
        ),
        stamp,
    );
    // Drives still waiting for their claims keep it in progress: the requeue soon
    // after tags them (a converged object would wait for its drift check).
    let ready = mgmt_done && tenant_done && array_done;
    status.set(
        C::Ready,
        ready,
        match (ready, array_done) {
            (true, _) => "Converged",
            (false, false) => reason,
            (false, true) => "InProgress",
        },
        format!(
            "{id}: {}",
            if ready {
                "converged"
            } else {
                "not finished; see the other conditions"
            }
        ),
        stamp,
    );
    Ok(if ready {
        Outcome::Converged
    } else {
        Outcome::InProgress
    })
}

async fn consume_approval(api: &Api<DynamicObject>, obj: &DynamicObject) -> Result<(), Error> {
    let patch = json!({"metadata": {"annotations": {APPROVE_ANNOTATION: null}}});
    api.patch(
        &obj.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map(|_| ())
    .map_err(|e| {
        Error::new(
            Reason::ClusterApplyFailed,
            format!("cannot remove {APPROVE_ANNOTATION}: {e}"),
        )
    })
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
