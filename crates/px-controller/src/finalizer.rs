//! Deleting a TenantStorage object: the finalizer keeps it until the tenant's array
//! objects are destroyed as `spec.onDelete` says: `destroy` (the default) leaves
//! them recoverable for the array's eradication delay, `eradicate` only when the
//! object says so, `keep` touches nothing. Adding the finalizer, running the policy
//! and removing the finalizer again are here; [`crate::reconcile`](mod@crate::reconcile) calls them.

use flasharray::FlashArray;
use kube::api::{DynamicObject, Patch, PatchParams};
use kube::{Api, ResourceExt};
use px_topology::{
    ApplyOptions, ArrayOnly, DestroyError, DestroyOptions, DestroyReport, ObserveError, Site,
    Tenant,
};

use px_topology::spec::OnDelete;
use serde_json::json;

use crate::arrays::read_credentials;
use crate::context::{Context, Outcome};
use crate::error::{Error, Reason};
use crate::report::{announce_transitions, listed, write_status};
use crate::status::{ConditionType as C, TenantStatus};
use crate::token_journal::{SecretTokenJournal, undelivered_token};

/// The finalizer the controller puts on every object it reconciled.
pub(crate) const FINALIZER: &str = "pxfa.io/tenant-storage";

/// What deleting did on the array.
#[derive(Debug)]
pub(crate) enum Deleted {
    /// `onDelete: keep`: nothing was touched.
    Kept,
    /// Destroyed (and eradicated when asked); the report says what is recoverable.
    Destroyed(DestroyReport),
    /// Dynamic drives the management Portworx is to release are still live: they,
    /// and the pod, realm and token around them, stay until it has (the names).
    Held(Vec<String>),
}

/// Runs the object's delete policy against the array. An incomplete destroy is an
/// error: the finalizer stays and the delete is retried (the next run re-observes,
/// so nothing is replayed blindly).
/// `delete_token`: the tenant user's API token goes too (the token journal holds it
/// undelivered, so it is pxfa's and nobody has it).
pub(crate) async fn on_delete(
    array: &dyn FlashArray,
    tenant: &Tenant,
    delete_token: bool,
) -> Result<Deleted, Error> {
    let policy = tenant.spec.spec.on_delete.unwrap_or_default();
    let eradicate = match policy {
        OnDelete::Keep => return Ok(Deleted::Kept),
        OnDelete::Destroy => false,
        OnDelete::Eradicate => true,
    };
    let name = tenant.desired.tenant.to_string();
    // Dynamic drives are the management Portworx's: an array-side destroy leaves its
    // volume records and PVs stale, so as with `pxfa destroy` they are held for it to
    // release unless spec.destroyDynamicDrives says to destroy them here (#36 N6).
    let opts = DestroyOptions {
        eradicate,
        delete_token,
        destroy_dynamic_drives: tenant.spec.spec.destroy_dynamic_drives,
        ..DestroyOptions::default()
    };
    let report = destroy_tenant(array, tenant, &opts).await.map_err(|e| {
        Error::new(
            Reason::ArrayUnreachable,
            format!("cannot destroy tenant {name}: {e}"),
        )
    })?;
    if let Some(f) = report.failed.first() {
        return Err(Error::write_failed(&format!("destroying tenant {name}"), f));
    }
    let held: Vec<String> = (report.held_dynamic_drives().iter())
        .map(|b| b.name.clone())
        .collect();
    if !held.is_empty() {
        return Ok(Deleted::Held(held));
    }
    Ok(Deleted::Destroyed(report))
}

/// The tenant pipeline's destroy: observe, plan the destroy, carry it out. Nothing
/// selected means an earlier attempt destroyed everything and then failed later on;
/// an array that cannot hold the tenant's objects (the realm or tag gate) holds none
/// of them.
async fn destroy_tenant(
    array: &dyn FlashArray,
    tenant: &Tenant,
    opts: &DestroyOptions,
) -> Result<DestroyReport, String> {
    let observation = match tenant.observe(Site::array(array)).await {
        Ok(observation) => observation,
        Err(ObserveError::Realm(e)) if e.is_unsupported() => return Ok(DestroyReport::default()),
        Err(e) => return Err(e.to_string()),
    };
    match observation.plan_destroy(opts) {
        Ok(planned) => Ok(planned.destroy(opts, &|_| {}).await),
        Err(DestroyError::NothingSelected { .. }) => Ok(DestroyReport::default()),
        Err(e) => Err(e.to_string()),
    }
}

/// A dynamic tenant's drives whose claims are bound but that no reconcile tagged
/// yet are tagged first: the destroy goes by tags, and the pod cannot go while it
/// holds them. Claims that cannot be read (the hosted control plane namespace being
/// deleted too) leave the destroy as it was: it fails on the pod and is retried.
async fn adopt_bound_drives(
    ctx: &Context,
    array: &dyn FlashArray,
    tenant: &Tenant,
    id: &str,
) -> Result<(), Error> {
    if tenant.desired.drives.is_empty() {
        return Ok(());
    }
    let claims = px_cluster::ClaimBindings::new(ctx.client.clone());
    let site = Site {
        claims: Some(&claims),
        ..Site::array(array)
    };
    let observation = match tenant.observe(site).await {
        Ok(o) => o,
        // An array without realms (or that cannot tag the tenant's objects) holds
        // nothing pxfa made for this tenant to destroy.
        Err(ObserveError::Realm(e)) if e.is_unsupported() => return Ok(()),
        Err(ObserveError::Array { source, .. }) => {
            return Err(Error::array(
                Reason::ArrayUnreachable,
                "reading the array",
                &source,
            ));
        }
        Err(e) => {
            return Err(Error::new(
                Reason::ArrayUnreachable,
                format!("reading the array: {e}"),
            ));
        }
    };
    if let Some(e) = observation.claims_unreadable() {
        tracing::warn!(
            object = id,
            "cannot read which drive claims are bound; the destroy takes the tagged drives only: {e}"
        );
        return Ok(());
    }
    let adoption = observation.plan_drive_adoption();
    // A drive pxfa cannot tell apart is not tagged (not taken); the others are. The
    // destroy then leaves the pod if it still holds volumes, and says so.
    for n in &adoption.plan().notes {
        tracing::warn!(object = id, "deleting: {n}");
    }
    if !adoption.plan().has_changes() {
        return Ok(());
    }
    let applied = match adoption
        .apply(&ArrayOnly, ApplyOptions::default(), &|_| {})
        .await
    {
        Ok(a) => a,
        // No token is created by a drive tagging, and its site has no journal.
        Err(e) => return Err(Error::new(Reason::Internal, format!("{id}: {e}"))),
    };
    let report = applied.report();
    if let Some(f) = report.failed.first() {
        return Err(Error::write_failed(&format!("{id}: deleting"), f));
    }
    tracing::info!(
        object = id,
        tagged = report.applied.len(),
        "drives found through their claims tagged before the destroy"
    );
    Ok(())
}

/// Deletes the object: runs `spec.onDelete` on the array (from `tenant`, the
/// object's spec as loaded), then removes the finalizer. A spec that does not load
/// keeps the finalizer and touches nothing.
pub(crate) async fn delete(
    obj: &DynamicObject,
    ctx: &Context,
    api: &Api<DynamicObject>,
    id: &str,
    (status, stamp): (&mut TenantStatus, &str),
    tenant: Result<Tenant, String>,
) -> Result<Outcome, Error> {
    if !obj.finalizers().iter().any(|f| f == FINALIZER) {
        return Ok(Outcome::Deleted);
    }
    // The finalizer is only added after the spec validated, so the tenant may hold
    // array objects. A spec that turned invalid since says neither what they are nor
    // what spec.onDelete wants: keep the finalizer and touch nothing until the spec
    // is valid again (or an admin removes the finalizer to leave everything in place).
    let tenant = match tenant {
        Ok(t) => t,
        Err(message) => {
            let why = format!(
                "{id}: deleting waits for a valid spec (array objects untouched; fix the spec, \
                 or remove finalizer {FINALIZER} to leave them in place): {message}"
            );
            status.set(
                C::Valid,
                false,
                "SpecInvalid",
                format!("{id}: {message}"),
                stamp,
            );
            status.set(
                C::Degraded,
                true,
                "DeleteBlockedSpecInvalid",
                why.clone(),
                stamp,
            );
            write_status(api, obj, status).await?;
            announce_transitions(&ctx.events, obj, status).await;
            return Ok(Outcome::Waiting("SpecInvalid"));
        }
    };
    let ns = obj.namespace().unwrap_or_default();
    let run = async {
        let creds = read_credentials(&ctx.client, &ns, &tenant.spec).await?;
        let lease = ctx.arrays.acquire(&creds).await?;
        let keep = tenant.spec.spec.on_delete.unwrap_or_default() == OnDelete::Keep;
        // The delete path writes: it reads the array itself, never the listings.
        if !keep {
            adopt_bound_drives(ctx, lease.fresh.as_ref(), &tenant, id).await?;
        }
        // A token the journal holds undelivered is pxfa's and nobody has it: it
        // goes with the tenant, and then the journal. With onDelete keep the array
        // user and token stay, and so does the journal Secret still holding the
        // token (docs/controller.md).
        let mut journal = SecretTokenJournal::new(ctx.client.clone(), &ns, &obj.name_any());
        let undelivered =
            !keep && undelivered_token(&mut journal, lease.fresh.as_ref(), &tenant).await?;
        let deleted = on_delete(lease.fresh.as_ref(), &tenant, undelivered).await?;
        if matches!(deleted, Deleted::Destroyed(_)) {
            journal.remove().await?;
        }
        Ok::<_, Error>(deleted)
    };
    match run.await {
        Ok(Deleted::Kept) => {
            tracing::info!(object = id, "onDelete keep: array objects left in place");
            ctx.events
                .normal(
                    obj,
                    "Delete",
                    "Kept",
                    &format!("{id}: spec.onDelete is keep: the array objects stay in place"),
                )
                .await;
        }
        Ok(Deleted::Destroyed(r)) => {
            tracing::info!(
                object = id,
                destroyed = r.done.len(),
                pending_eradication = r.pending_eradication.len(),
                "tenant destroyed on the array"
            );
            let eradicate =
                tenant.spec.spec.on_delete == Some(px_topology::spec::OnDelete::Eradicate);
            ctx.events
                .normal(
                    obj,
                    "Delete",
                    if eradicate { "Eradicated" } else { "Destroyed" },
                    &format!(
                        "{id}: {} array change(s) done{}",
                        r.done.len(),
                        if eradicate {
                            String::new()
                        } else {
                            format!("; {} object(s) recoverable until the array's eradication delay ends", r.pending_eradication.len())
                        }
                    ),
                )
                .await;
        }
        Ok(Deleted::Held(drives)) => {
            return held(ctx, (api, obj), id, (status, stamp), &tenant, &drives).await;
        }
        Err(e) => {
            status.set(
                C::Degraded,
                true,
                e.reason.as_str(),
                format!("{id}: deleting: {}", e.message),
                stamp,
            );
            write_status(api, obj, status).await?;
            announce_transitions(&ctx.events, obj, status).await;
            return Err(e);
        }
    }
    let kept: Vec<String> = obj
        .finalizers()
        .iter()
        .filter(|f| *f != FINALIZER)
        .cloned()
        .collect();
    set_finalizers(
        ctx,
        api,
        obj,
        kept,
        &format!("cannot remove the finalizer of {id}"),
        ("RemoveFinalizer", "FinalizerRemoved"),
        &format!("{id}: finalizer {FINALIZER} removed"),
    )
    .await?;
    Ok(Outcome::Deleted)
}

/// Why the delete waits, and what ends the wait (the status and a warning Event).
pub(crate) const DRIVES_HELD: &str = "DynamicDrivesHeld";

/// The delete waits for the management Portworx to release the tenant's dynamic
/// drives: the finalizer stays, `Degraded` says which drives and how to release
/// them (announced as a warning Event when it turns so), and the delete is retried
/// at the drift interval (the release happens on the cluster, not on this object).
async fn held(
    ctx: &Context,
    (api, obj): (&Api<DynamicObject>, &DynamicObject),
    id: &str,
    (status, stamp): (&mut TenantStatus, &str),
    tenant: &Tenant,
    drives: &[String],
) -> Result<Outcome, Error> {
    let message = format!(
        "{id}: deleting waits for the management Portworx to release {} dynamic drive(s) it \
         created ({}): set their PVs' reclaim policy to Delete and delete their claims in {} \
         (pxfa runbook delete), or delete the HostedCluster with Delete PVs; the pod, realm and \
         token go once they are released. To destroy them on the array instead (the management \
         Portworx is gone), set spec.destroyDynamicDrives: true",
        drives.len(),
        listed(drives),
        tenant.spec.hcp_namespace(),
    );
    tracing::info!(
        object = id,
        drives = drives.len(),
        "deleting waits for dynamic drives"
    );
    status.set(C::Degraded, true, DRIVES_HELD, message, stamp);
    status.set(
        C::Ready,
        false,
        DRIVES_HELD,
        "deleting: waiting for dynamic drives; see Degraded",
        stamp,
    );
    write_status(api, obj, status).await?;
    // A warning Event when Degraded turns to this reason.
    announce_transitions(&ctx.events, obj, status).await;
    Ok(Outcome::Waiting(DRIVES_HELD))
}

/// Adds the finalizer unless the object has it: from then on, deleting the object
/// runs `spec.onDelete` first.
pub(crate) async fn ensure_finalizer(
    ctx: &Context,
    api: &Api<DynamicObject>,
    obj: &DynamicObject,
) -> Result<(), Error> {
    if obj.finalizers().iter().any(|f| f == FINALIZER) {
        return Ok(());
    }
    let mut list = obj.finalizers().to_vec();
    list.push(FINALIZER.to_string());
    set_finalizers(
        ctx,
        api,
        obj,
        list,
        &format!("cannot add finalizer {FINALIZER}"),
        ("AddFinalizer", "FinalizerAdded"),
        &format!("finalizer {FINALIZER} added: deleting the object runs spec.onDelete first"),
    )
    .await
}

/// Writes the object's finalizer list (guarded by its resourceVersion, so that a
/// concurrent change is refused rather than overwritten) and records the change as
/// an Event (`action`, `reason`).
async fn set_finalizers(
    ctx: &Context,
    api: &Api<DynamicObject>,
    obj: &DynamicObject,
    finalizers: Vec<String>,
    failure: &str,
    (action, reason): (&str, &str),
    note: &str,
) -> Result<(), Error> {
    let patch =
        json!({"metadata": {"finalizers": finalizers, "resourceVersion": obj.resource_version()}});
    api.patch(
        &obj.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map_err(|e| Error::new(Reason::ClusterApplyFailed, format!("{failure}: {e}")))?;
    ctx.events.normal(obj, action, reason, note).await;
    Ok(())
}
