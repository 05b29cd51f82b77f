//! Kubernetes Events for every change the controller makes, on the TenantStorage
//! object (`oc describe tenantstorage` lists them).
//!
//! `events.k8s.io/v1`, not core v1: it is the current Events API (core v1 Events
//! are its legacy view and `oc get events` shows both), it has the `action` field
//! next to `reason`, and `reportingController`/`reportingInstance` name the replica
//! that acted, which matters with leader election. kube-runtime's recorder also folds
//! repeats into an event series instead of one object per repeat.
//!
//! Publishing is best effort: a refused Event is logged and counted, never a
//! reconcile failure. Notes are built from messages that never hold a secret.

use std::sync::Arc;

use k8s_openapi::api::core::v1::ObjectReference;
use kube::ResourceExt;
use kube::api::DynamicObject;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use px_topology::spec::{API_VERSION, KIND};

use crate::metrics::Metrics;

/// The `reportingController` of every Event.
pub(crate) const REPORTING_CONTROLLER: &str = "pxfa.io/controller";

/// Longest note the Events API accepts (1 kB); longer ones are cut.
const MAX_NOTE: usize = 1024;

/// Publishes Events as one replica.
pub struct Events {
    recorder: Recorder,
    metrics: Arc<Metrics>,
}

impl Events {
    /// A publisher through `client`, reporting as `instance` (the pod name).
    pub fn new(client: kube::Client, instance: &str, metrics: Arc<Metrics>) -> Self {
        Events {
            recorder: Recorder::new(
                client,
                Reporter {
                    controller: REPORTING_CONTROLLER.to_string(),
                    instance: Some(instance.to_string()),
                },
            ),
            metrics,
        }
    }

    /// A `Normal` event: something was changed as asked.
    pub async fn normal(&self, obj: &DynamicObject, action: &str, reason: &str, note: &str) {
        self.publish(obj, EventType::Normal, action, reason, note)
            .await;
    }

    /// A `Warning` event: a change failed or is blocked.
    pub async fn warning(&self, obj: &DynamicObject, action: &str, reason: &str, note: &str) {
        self.publish(obj, EventType::Warning, action, reason, note)
            .await;
    }

    async fn publish(
        &self,
        obj: &DynamicObject,
        type_: EventType,
        action: &str,
        reason: &str,
        note: &str,
    ) {
        let mut note = note.to_string();
        if note.len() > MAX_NOTE {
            let mut cut = MAX_NOTE - 3;
            while !note.is_char_boundary(cut) {
                cut -= 1;
            }
            note.truncate(cut);
            note.push_str("...");
        }
        let ev = Event {
            type_,
            reason: reason.to_string(),
            note: Some(note),
            action: action.to_string(),
            secondary: None,
        };
        let label = match type_ {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        };
        match self.recorder.publish(&ev, &reference(obj)).await {
            Ok(()) => self.metrics.event(label),
            Err(e) => {
                self.metrics.event("failed");
                tracing::warn!(object = %obj.name_any(), reason, error = %e, "cannot publish an Event");
            }
        }
    }
}

/// The object reference of a TenantStorage object.
fn reference(obj: &DynamicObject) -> ObjectReference {
    ObjectReference {
        api_version: Some(API_VERSION.to_string()),
        kind: Some(KIND.to_string()),
        name: obj.metadata.name.clone(),
        namespace: obj.metadata.namespace.clone(),
        uid: obj.metadata.uid.clone(),
        resource_version: obj.metadata.resource_version.clone(),
        ..ObjectReference::default()
    }
}
