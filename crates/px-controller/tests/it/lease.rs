//! The fake API server's Leases (`coordination.k8s.io/v1`) and Events
//! (`events.k8s.io/v1`). Leases are stored and versioned like the real API server
//! does it: a create of an existing Lease and a replace with a stale
//! `resourceVersion` get 409, so two replicas racing for one Lease cannot both win.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::path_regex;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The stored Leases by name; `down` makes every Lease call fail with 503.
#[derive(Clone, Default)]
pub(crate) struct Leases {
    objects: Arc<Mutex<BTreeMap<String, Value>>>,
    version: Arc<AtomicU64>,
    pub(crate) down: Arc<AtomicBool>,
}

fn status(code: u16, reason: &str) -> ResponseTemplate {
    ResponseTemplate::new(code).set_body_json(json!({
        "kind": "Status", "apiVersion": "v1", "status": "Failure",
        "reason": reason, "code": code, "message": reason}))
}

impl Leases {
    /// The holder of Lease `name`, if any.
    pub(crate) fn holder(&self, name: &str) -> Option<String> {
        self.objects.lock().unwrap().get(name).and_then(|l| {
            l["spec"]["holderIdentity"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        })
    }

    /// `spec.leaseTransitions` of Lease `name`.
    pub(crate) fn transitions(&self, name: &str) -> i64 {
        self.objects.lock().unwrap()[name]["spec"]["leaseTransitions"]
            .as_i64()
            .unwrap_or(0)
    }

    fn next_version(&self) -> String {
        (self.version.fetch_add(1, Ordering::SeqCst) + 1).to_string()
    }

    pub(crate) async fn mount(&self, server: &MockServer) {
        Mock::given(path_regex(
            r"^/apis/coordination\.k8s\.io/v1/namespaces/[^/]+/leases(/[^/]+)?$",
        ))
        .respond_with(self.clone())
        .with_priority(1)
        .mount(server)
        .await;
    }
}

impl Respond for Leases {
    fn respond(&self, r: &Request) -> ResponseTemplate {
        if self.down.load(Ordering::SeqCst) {
            return status(503, "ServiceUnavailable");
        }
        let segments: Vec<&str> = r.url.path().split('/').collect();
        let i = segments.iter().position(|s| *s == "leases").unwrap();
        let mut all = self.objects.lock().unwrap();
        match (r.method.as_str(), segments.get(i + 1)) {
            ("GET", Some(name)) => match all.get(*name) {
                Some(l) => ResponseTemplate::new(200).set_body_json(l.clone()),
                None => status(404, "NotFound"),
            },
            ("POST", None) => {
                let mut lease: Value = r.body_json().unwrap();
                let name = lease["metadata"]["name"].as_str().unwrap().to_string();
                if all.contains_key(&name) {
                    return status(409, "AlreadyExists");
                }
                lease["apiVersion"] = json!("coordination.k8s.io/v1");
                lease["kind"] = json!("Lease");
                lease["metadata"]["resourceVersion"] = json!(self.next_version());
                all.insert(name, lease.clone());
                ResponseTemplate::new(201).set_body_json(lease)
            }
            ("PUT", Some(name)) => {
                let mut lease: Value = r.body_json().unwrap();
                let Some(stored) = all.get(*name) else {
                    return status(404, "NotFound");
                };
                if lease["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"] {
                    return status(409, "Conflict");
                }
                lease["metadata"]["resourceVersion"] = json!(self.next_version());
                all.insert(name.to_string(), lease.clone());
                ResponseTemplate::new(200).set_body_json(lease)
            }
            _ => status(405, "MethodNotAllowed"),
        }
    }
}

/// Accepts every Event (create and series patch) and keeps them for the tests.
#[derive(Clone, Default)]
pub(crate) struct Events(pub(crate) Arc<Mutex<Vec<Value>>>);

impl Events {
    /// The reasons of the Events received so far, in order.
    pub(crate) fn reasons(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| e["reason"].as_str().map(str::to_string))
            .collect()
    }

    /// The notes of the Events with `reason`, in order.
    pub(crate) fn notes(&self, reason: &str) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e["reason"] == reason)
            .filter_map(|e| e["note"].as_str().map(str::to_string))
            .collect()
    }

    pub(crate) async fn mount(&self, server: &MockServer) {
        Mock::given(path_regex(
            r"^/apis/events\.k8s\.io/v1/namespaces/[^/]+/events(/[^/]+)?$",
        ))
        .respond_with(self.clone())
        .with_priority(1)
        .mount(server)
        .await;
    }
}

impl Respond for Events {
    fn respond(&self, r: &Request) -> ResponseTemplate {
        let mut ev: Value = r.body_json().unwrap_or(Value::Null);
        if r.method.as_str() == "POST" {
            self.0.lock().unwrap().push(ev.clone());
        }
        ev["apiVersion"] = json!("events.k8s.io/v1");
        ev["kind"] = json!("Event");
        ResponseTemplate::new(if r.method.as_str() == "POST" {
            201
        } else {
            200
        })
        .set_body_json(ev)
    }
}
