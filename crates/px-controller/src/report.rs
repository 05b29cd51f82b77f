//! What one reconcile reports: the `status` written through the status subresource
//! and the Events for the conditions that changed.

use kube::api::{DynamicObject, Patch, PatchParams};
use kube::{Api, ResourceExt};
use px_topology::{Action, Change, Kind, Plan};
use serde_json::{Value, json};

use crate::error::{Error, Reason};
use crate::events::Events;
use crate::status::{ConditionType as C, TenantStatus};

/// Events for the conditions that changed in this reconcile: converged, degraded
/// (or degraded for a new reason), spec invalid, waiting for approval.
pub(crate) async fn announce_transitions(
    events: &Events,
    obj: &DynamicObject,
    after: &TenantStatus,
) {
    let before = TenantStatus::from_object(&obj.data);
    // `t` is now `to`, and was not, or was for another reason.
    let turned = |t: C, to: bool| match (before.get(t), after.get(t)) {
        (_, None) => false,
        (None, Some(now)) => now.status == to.into(),
        (Some(was), Some(now)) => {
            now.status == to.into() && (was.status != now.status || was.reason != now.reason)
        }
    };
    let message = |t: C| after.get(t).map(|c| c.message.clone()).unwrap_or_default();
    let reason = |t: C| after.get(t).map(|c| c.reason.clone()).unwrap_or_default();
    if turned(C::Ready, true) {
        events
            .normal(obj, "Reconcile", "Converged", &message(C::Ready))
            .await;
    }
    if turned(C::Degraded, true) {
        events
            .warning(
                obj,
                "Reconcile",
                &reason(C::Degraded),
                &message(C::Degraded),
            )
            .await;
    }
    if turned(C::Valid, false) {
        events
            .warning(obj, "Validate", &reason(C::Valid), &message(C::Valid))
            .await;
    }
    if turned(C::ArrayReady, false) && reason(C::ArrayReady) == "ApprovalPending" {
        events
            .normal(obj, "Plan", "ApprovalPending", &message(C::ArrayReady))
            .await;
    }
}

/// `ArrayReady` after a successful apply: (holds, reason, message). Drives whose
/// claims have not bound (dynamic provisioning) are not on the array yet: the
/// management Portworx creates each when its claim binds and a later reconcile tags
/// it, so until then the array is `DrivesPending`, not converged (tagging them then
/// is not drift). An API token held back while no tenant cluster can keep it
/// (`TokenHeld`, its reason in the message) is created by a later reconcile. Drives
/// of removed workers are named as retained: they keep their data, and the
/// controller never releases them.
pub(crate) fn array_state(
    plan: &Plan,
    endpoint: &str,
    applied: usize,
) -> (bool, &'static str, String) {
    let held = plan.held_token();
    // The held token is Pending too; it is said on its own.
    let pending = names(plan, |c| {
        c.action == Action::Pending && c.kind != Kind::ApiToken
    });
    let retained = names(plan, |c| c.action == Action::Retain);
    let mut message = match (pending.is_empty(), held) {
        (true, None) => {
            format!("array {endpoint} holds every object ({applied} change(s) applied)")
        }
        (true, Some(_)) => format!(
            "array {endpoint} holds every object but the API token ({applied} change(s) applied)"
        ),
        (false, _) => format!(
            "array {endpoint}: {applied} change(s) applied; {} drive(s) wait for their claims to \
             bind (the management Portworx creates each drive then, and the next reconcile tags \
             it): the volumes {}",
            pending.len(),
            listed(&pending)
        ),
    };
    if let Some(t) = held {
        message.push_str(&format!(
            "; the API token of array user {}: {}",
            t.name, t.reason
        ));
    }
    if !retained.is_empty() {
        message.push_str(&format!(
            "; {} drive(s) of removed workers retained with their data (released only by \
             `pxfa apply --release-removed-workers`, see docs/lifecycle.md): {}",
            retained.len(),
            listed(&retained)
        ));
    }
    match (held, pending.is_empty()) {
        (Some(_), _) => (false, "TokenHeld", message),
        (None, true) => (true, "Converged", message),
        (None, false) => (false, "DrivesPending", message),
    }
}

fn names(plan: &Plan, which: impl Fn(&Change) -> bool) -> Vec<&str> {
    plan.changes
        .iter()
        .filter(|c| which(c))
        .map(|c| c.name.as_str())
        .collect()
}

/// The first few names, and how many more.
/// A status message names at most these; the rest are counted.
pub(crate) fn listed<S: AsRef<str>>(names: &[S]) -> String {
    const SHOWN: usize = 6;
    let shown: Vec<&str> = names.iter().take(SHOWN).map(AsRef::as_ref).collect();
    let mut s = shown.join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    s
}

pub(crate) async fn write_status(
    api: &Api<DynamicObject>,
    obj: &DynamicObject,
    status: &TenantStatus,
) -> Result<(), Error> {
    // A merge patch merges maps: kinds no longer counted are removed explicitly.
    let mut value = serde_json::to_value(status)
        .map_err(|e| Error::new(Reason::Internal, format!("cannot encode status: {e}")))?;
    if let Some(old) = obj.data["status"]["arrayObjects"].as_object() {
        for kind in old
            .keys()
            .filter(|k| !status.array_objects.contains_key(*k))
        {
            value["arrayObjects"][kind] = Value::Null;
        }
    }
    let patch = json!({ "status": value });
    api.patch_status(
        &obj.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .map(|_| ())
    .map_err(|e| {
        Error::new(
            Reason::ClusterApplyFailed,
            format!("cannot write status: {e}"),
        )
    })
}
