//! The fake management cluster and the objects a TenantStorage reconcile reads.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::merge_patch::merge;
use super::objects::secret;
use flasharray::FlashArray;
use flasharray_mock::{MockArray, SimFada};
use kube::api::DynamicObject;
use px_controller::{ArrayPool, Connector, Credentials};
use px_controller::{Context, Outcome, reconcile};
use px_controller::{Error, Metrics, TenantStatus};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Match, Mock, Request, Respond, ResponseTemplate};

use crate::lease::{Events, Leases};
use crate::support::{self, Fake};

pub(crate) const NS: &str = "pxfa";

/// What the world's controller allows: the tenant in [`NS`] refers to its
/// HostedCluster in `clusters` (the spec's default namespace).
pub(crate) fn references() -> px_controller::NamespaceReferences {
    px_controller::NamespaceReferences::parse(&[format!("{NS}=clusters")]).unwrap()
}
pub(crate) const NAME: &str = "tenant-full";
const CREDS: &str = "fa1-creds";
pub(crate) const TOKEN: &str = "7f3a-not-a-real-array-token";

/// Hands out the one MockArray and counts how often a client was built.
pub(crate) struct MockConnector {
    pub(crate) array: MockArray,
    pub(crate) built: Arc<AtomicUsize>,
}

impl Connector for MockConnector {
    fn connect(&self, creds: &Credentials) -> Result<Arc<dyn FlashArray>, Error> {
        assert_eq!(creds.endpoint, "fa1-mgmt.example.net");
        self.built.fetch_add(1, Ordering::SeqCst);
        Ok(Arc::new(self.array.clone()))
    }
}

/// The stored TenantStorage objects, by name, and a merge-patch responder for them.
#[derive(Clone, Default)]
pub(crate) struct Store(Arc<Mutex<BTreeMap<String, Value>>>);

impl Store {
    pub(crate) fn get(&self, name: &str) -> Value {
        self.0.lock().unwrap()[name].clone()
    }
    pub(crate) fn put(&self, obj: Value) {
        let name = obj["metadata"]["name"].as_str().unwrap().to_string();
        self.0.lock().unwrap().insert(name, obj);
    }
    /// Edits the object as a user would: a spec change bumps the generation.
    pub(crate) fn edit(&self, name: &str, f: impl FnOnce(&mut Value)) {
        let mut all = self.0.lock().unwrap();
        let obj = all.get_mut(name).unwrap();
        let before = obj["spec"].clone();
        f(obj);
        if obj["spec"] != before {
            let g = obj["metadata"]["generation"].as_i64().unwrap_or(1);
            obj["metadata"]["generation"] = json!(g + 1);
        }
        bump(obj);
    }
    pub(crate) fn status(&self, name: &str) -> TenantStatus {
        TenantStatus::from_object(&self.get(name))
    }
}

fn bump(obj: &mut Value) {
    let rv: u64 = obj["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    obj["metadata"]["resourceVersion"] = json!((rv + 1).to_string());
}

impl Respond for Store {
    fn respond(&self, r: &Request) -> ResponseTemplate {
        let segments: Vec<&str> = r.url.path().split('/').collect();
        let i = segments
            .iter()
            .position(|s| *s == "tenantstorages")
            .unwrap();
        let name = segments[i + 1];
        let status_only = segments.get(i + 2) == Some(&"status");
        let mut all = self.0.lock().unwrap();
        let Some(obj) = all.get_mut(name) else {
            return ResponseTemplate::new(404).set_body_json(
                json!({"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404}),
            );
        };
        if r.method.as_str() == "PATCH" {
            let mut patch: Value = r.body_json().unwrap();
            if status_only {
                patch = json!({"status": patch["status"].clone()});
            } else {
                if let Some(m) = patch.as_object_mut() {
                    m.remove("status");
                }
                let sent_rv = patch["metadata"]["resourceVersion"]
                    .as_str()
                    .map(str::to_string);
                if let Some(rv) = sent_rv {
                    if Some(rv.as_str()) != obj["metadata"]["resourceVersion"].as_str() {
                        return ResponseTemplate::new(409).set_body_json(json!({"kind": "Status", "status": "Failure", "reason": "Conflict", "code": 409}));
                    }
                    patch["metadata"]
                        .as_object_mut()
                        .unwrap()
                        .remove("resourceVersion");
                }
            }
            merge(obj, &patch);
            bump(obj);
            // An object being deleted goes once its last finalizer is gone.
            let gone = obj["metadata"]["deletionTimestamp"].is_string()
                && obj["metadata"]["finalizers"]
                    .as_array()
                    .is_none_or(|f| f.is_empty());
            let body = obj.clone();
            if gone {
                all.remove(name);
            }
            return ResponseTemplate::new(200).set_body_json(body);
        }
        ResponseTemplate::new(200).set_body_json(obj.clone())
    }
}

/// How the journal Secrets answer their next writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stall {
    /// The `n`th write (1-based, counting from when it is set) takes effect and its
    /// answer never comes: what a controller killed right after that write leaves.
    AfterEffect(usize),
    /// The `n`th write never reaches the store and never answers.
    BeforeEffect(usize),
    /// The `n`th write is refused (500) without effect.
    Refuse(usize),
}

#[derive(Default)]
struct SecretsState {
    objects: BTreeMap<String, Value>,
    writes: usize,
    stall: Option<Stall>,
    stalled: bool,
    rv: u64,
    /// After this write (1-based, counted like the stalls) takes effect, another
    /// writer changes the Secret.
    touch_after: Option<usize>,
}

/// The controller's token journal Secrets (`pxfa-token-journal-*` in any namespace):
/// get, create (409 when it exists), replace and delete guarded by the
/// resourceVersion as a real API server does (409 on a mismatch), with stalls.
#[derive(Clone, Default)]
pub(crate) struct JournalSecrets(Arc<Mutex<SecretsState>>);

impl JournalSecrets {
    /// The stored Secret `namespace/name`.
    pub(crate) fn get(&self, key: &str) -> Option<Value> {
        self.0.lock().unwrap().objects.get(key).cloned()
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.0.lock().unwrap().objects.is_empty()
    }
    pub(crate) fn stall(&self, s: Stall) {
        let mut st = self.0.lock().unwrap();
        st.writes = 0;
        st.stall = Some(s);
        st.stalled = false;
    }
    pub(crate) fn stalled(&self) -> bool {
        self.0.lock().unwrap().stalled
    }
    pub(crate) fn clear_stall(&self) {
        self.0.lock().unwrap().stall = None;
    }
    /// Right after the `n`th write from now takes effect, another writer (a second
    /// replica) rewrites the Secret: it gets a new resourceVersion.
    pub(crate) fn touch_after_write(&self, n: usize) {
        let mut st = self.0.lock().unwrap();
        st.writes = 0;
        st.touch_after = Some(n);
    }
    /// Stores a Secret as another party made it.
    pub(crate) fn put(&self, key: &str, obj: Value) {
        let mut st = self.0.lock().unwrap();
        st.rv += 1;
        let mut obj = obj;
        obj["metadata"]["resourceVersion"] = json!(st.rv.to_string());
        st.objects.insert(key.to_string(), obj);
    }
}

impl Respond for JournalSecrets {
    fn respond(&self, r: &Request) -> ResponseTemplate {
        let segments: Vec<&str> = r.url.path().split('/').collect();
        // /api/v1/namespaces/{ns}/secrets[/{name}]
        let ns = segments[4];
        let body: Option<Value> = r.body_json().ok();
        let name = match segments.get(6) {
            Some(n) => n.to_string(),
            None => body
                .as_ref()
                .and_then(|b| b["metadata"]["name"].as_str())
                .unwrap_or_default()
                .to_string(),
        };
        let key = format!("{ns}/{name}");
        let mut st = self.0.lock().unwrap();
        let status = |code: u16, reason: &str| {
            ResponseTemplate::new(code).set_body_json(json!({
                "kind": "Status", "apiVersion": "v1", "status": "Failure",
                "reason": reason, "code": code}))
        };
        let write = matches!(r.method.as_str(), "POST" | "PUT" | "DELETE");
        let mut hang = false;
        if write {
            st.writes += 1;
            match st.stall {
                Some(Stall::BeforeEffect(n)) if n == st.writes => {
                    st.stalled = true;
                    return ResponseTemplate::new(200).set_delay(Duration::from_secs(3600));
                }
                Some(Stall::AfterEffect(n)) if n == st.writes => hang = true,
                Some(Stall::Refuse(n)) if n == st.writes => {
                    return status(500, "InternalError");
                }
                _ => {}
            }
        }
        let current_rv = st.objects.get(&key).and_then(|o| {
            o["metadata"]["resourceVersion"]
                .as_str()
                .map(str::to_string)
        });
        let stamp = |st: &mut SecretsState, mut obj: Value| {
            st.rv += 1;
            obj["metadata"]["resourceVersion"] = json!(st.rv.to_string());
            st.objects.insert(key.clone(), obj.clone());
            obj
        };
        let answer = match r.method.as_str() {
            "GET" => match st.objects.get(&key) {
                Some(o) => Ok(o.clone()),
                None => Err(status(404, "NotFound")),
            },
            "POST" if current_rv.is_some() => Err(status(409, "AlreadyExists")),
            "POST" => Ok(stamp(&mut st, body.unwrap())),
            "PUT" => {
                let body = body.unwrap();
                let sent = body["metadata"]["resourceVersion"]
                    .as_str()
                    .map(str::to_string);
                match current_rv {
                    None => Err(status(404, "NotFound")),
                    Some(rv) if sent.as_deref() != Some(rv.as_str()) => {
                        Err(status(409, "Conflict"))
                    }
                    Some(_) => Ok(stamp(&mut st, body)),
                }
            }
            "DELETE" => {
                let want = body.as_ref().and_then(|b| {
                    b["preconditions"]["resourceVersion"]
                        .as_str()
                        .map(str::to_string)
                });
                match current_rv {
                    None => Err(status(404, "NotFound")),
                    Some(rv) if want.as_ref().is_some_and(|w| *w != rv) => {
                        Err(status(409, "Conflict"))
                    }
                    Some(_) => Ok(st.objects.remove(&key).unwrap()),
                }
            }
            _ => Err(status(405, "MethodNotAllowed")),
        };
        if hang {
            st.stalled = true;
            return ResponseTemplate::new(200).set_delay(Duration::from_secs(3600));
        }
        if write && answer.is_ok() && st.touch_after == Some(st.writes) {
            st.rv += 1;
            let rv = st.rv.to_string();
            if let Some(o) = st.objects.get_mut(&key) {
                o["metadata"]["resourceVersion"] = json!(rv);
            }
        }
        match answer {
            Ok(obj) => ResponseTemplate::new(200).set_body_json(obj),
            Err(t) => t,
        }
    }
}

/// List and watch of every TenantStorage: a list of the stored objects, and watches
/// that end after a moment without events (the watcher then watches again).
struct ListWatch(Store);

impl Respond for ListWatch {
    fn respond(&self, r: &Request) -> ResponseTemplate {
        if r.url
            .query_pairs()
            .any(|(k, v)| k == "watch" && v == "true")
        {
            return ResponseTemplate::new(200)
                .set_delay(Duration::from_millis(200))
                .set_body_string("");
        }
        let items: Vec<Value> = self.0.0.lock().unwrap().values().cloned().collect();
        ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "pxfa.io/v1alpha1", "kind": "TenantStorageList",
            "metadata": {"resourceVersion": "1"}, "items": items}))
    }
}

/// What an armed fault answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// `409 Conflict`, as for a write on a stale object.
    Conflict,
    /// `429 Too Many Requests` with `Retry-After` in seconds.
    TooManyRequests(u64),
    /// `503 Service Unavailable`: the API server is down.
    Unavailable,
    /// A watch that ends at once with `410 Gone` (its resourceVersion is too old):
    /// the watcher must list again.
    WatchGone,
}

/// One armed fault: the requests it matches and for how long it lasts.
struct Rule {
    method: Option<&'static str>,
    /// The end of the paths it matches (`""`: every path).
    path: &'static str,
    /// Watches only (`Some(true)`), never watches (`Some(false)`), or both.
    watch: Option<bool>,
    fault: Fault,
    /// How many more requests it answers (`None`: until `until`).
    left: Option<usize>,
    until: Option<std::time::Instant>,
}

impl Rule {
    fn matches(&self, r: &Request) -> bool {
        let watch = r
            .url
            .query_pairs()
            .any(|(k, v)| k == "watch" && v == "true");
        self.method.is_none_or(|m| r.method.as_str() == m)
            && r.url.path().ends_with(self.path)
            && self.watch.is_none_or(|w| w == watch)
            && self.left.is_none_or(|n| n > 0)
            && self.until.is_none_or(|t| std::time::Instant::now() < t)
    }
}

/// API-server faults: armed rules answer the requests they match before any other
/// mock of the fake server; a request no rule matches is served as usual.
#[derive(Clone, Default)]
pub(crate) struct Faults(Arc<Mutex<Armed>>);

/// The rules, and how often each fault was answered.
#[derive(Default)]
struct Armed {
    rules: Vec<Rule>,
    fired: BTreeMap<String, usize>,
}

impl Faults {
    /// The next `times` requests with `method` whose path ends with `path` get `fault`.
    pub(crate) fn arm(&self, method: &'static str, path: &'static str, fault: Fault, times: usize) {
        self.push(Rule {
            method: Some(method),
            path,
            watch: Some(false),
            fault,
            left: Some(times),
            until: None,
        });
    }

    /// The next `times` watches of TenantStorage end with `fault`.
    pub(crate) fn arm_watch(&self, fault: Fault, times: usize) {
        self.push(Rule {
            method: Some("GET"),
            path: "/tenantstorages",
            watch: Some(true),
            fault,
            left: Some(times),
            until: None,
        });
    }

    /// Every request gets 503 for `outage`.
    pub(crate) fn outage(&self, outage: Duration) {
        self.push(Rule {
            method: None,
            path: "",
            watch: None,
            fault: Fault::Unavailable,
            left: None,
            until: Some(std::time::Instant::now() + outage),
        });
    }

    fn push(&self, rule: Rule) {
        self.0.lock().unwrap().rules.push(rule);
    }

    /// How many requests got `fault`.
    pub(crate) fn fired(&self, fault: Fault) -> usize {
        let armed = self.0.lock().unwrap();
        armed.fired.get(&format!("{fault:?}")).copied().unwrap_or(0)
    }

    pub(crate) async fn mount(&self, server: &wiremock::MockServer) {
        Mock::given(self.clone())
            .respond_with(self.clone())
            .with_priority(1)
            .mount(server)
            .await;
    }
}

impl Match for Faults {
    fn matches(&self, r: &Request) -> bool {
        self.0
            .lock()
            .unwrap()
            .rules
            .iter()
            .any(|rule| rule.matches(r))
    }
}

impl Respond for Faults {
    fn respond(&self, r: &Request) -> ResponseTemplate {
        let mut armed = self.0.lock().unwrap();
        let Armed { rules, fired } = &mut *armed;
        let Some(rule) = rules.iter_mut().find(|rule| rule.matches(r)) else {
            // Expired between the match and the answer: a short outage's last word.
            return ResponseTemplate::new(503);
        };
        if let Some(n) = &mut rule.left {
            *n -= 1;
        }
        let fault = rule.fault;
        *fired.entry(format!("{fault:?}")).or_insert(0) += 1;
        let status = |code: u16, reason: &str| {
            ResponseTemplate::new(code).set_body_json(json!({
                "kind": "Status", "apiVersion": "v1", "status": "Failure",
                "reason": reason, "code": code, "message": reason}))
        };
        match fault {
            Fault::Conflict => status(409, "Conflict"),
            Fault::TooManyRequests(secs) => {
                status(429, "TooManyRequests").insert_header("Retry-After", secs.to_string())
            }
            Fault::Unavailable => status(503, "ServiceUnavailable"),
            Fault::WatchGone => ResponseTemplate::new(200).set_body_string(
                json!({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1",
                    "status": "Failure", "reason": "Expired", "code": 410,
                    "message": "too old resource version"}})
                .to_string()
                    + "\n",
            ),
        }
    }
}

/// A fake management cluster serving one TenantStorage and a MockArray behind it.
pub(crate) struct World {
    pub(crate) fake: Fake,
    /// API-server faults, answered before anything else.
    pub(crate) faults: Faults,
    pub(crate) leases: Leases,
    pub(crate) events: Events,
    pub(crate) store: Store,
    pub(crate) journal: JournalSecrets,
    /// The phase the tenant's StorageCluster reports.
    pub(crate) portworx_phase: Arc<Mutex<&'static str>>,
    pub(crate) array: MockArray,
    pub(crate) built: Arc<AtomicUsize>,
    /// How many worker VMs the NodePool has (4 at the start).
    pub(crate) vms: Arc<AtomicUsize>,
    /// The tenant's HostedCluster (there at the start; a test may remove it).
    pub(crate) hosted: HostedCluster,
    pub(crate) ctx: Arc<Context>,
}

/// HostedCluster `clusters/tenant-full` and its admin kubeconfig Secret, as
/// HyperShift keeps them: while the HostedCluster exists it names the Secret in
/// `status.kubeconfig` and the Secret holds the tenant cluster's kubeconfig; absent,
/// both are 404 until the HostedCluster is applied (server-side apply), and then
/// both are there (HyperShift's work, done at once).
#[derive(Clone)]
pub(crate) struct HostedCluster {
    exists: Arc<AtomicBool>,
    kubeconfig: String,
}

impl HostedCluster {
    /// No HostedCluster (and no kubeconfig Secret) until one is applied.
    pub(crate) fn remove(&self) {
        self.exists.store(false, Ordering::SeqCst);
    }
}

impl Respond for HostedCluster {
    fn respond(&self, r: &Request) -> ResponseTemplate {
        let secret_read = r.url.path().starts_with("/api/v1/");
        if r.method.as_str() == "PATCH" && !secret_read {
            self.exists.store(true, Ordering::SeqCst);
        }
        if !self.exists.load(Ordering::SeqCst) {
            return ResponseTemplate::new(404).set_body_json(
                json!({"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404}),
            );
        }
        if secret_read {
            return ResponseTemplate::new(200).set_body_json(secret(
                "clusters",
                "tenant-full-admin-kubeconfig",
                &[],
                &[("kubeconfig", &self.kubeconfig)],
            ));
        }
        ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
            "metadata": {"name": "tenant-full", "namespace": "clusters"},
            "status": {"kubeconfig": {"name": "tenant-full-admin-kubeconfig"}}}))
    }
}

/// The valid-full fixture as a cloud-drive tenant (option a): Portworx in the tenant
/// makes its own drives, with an API token of array user pxfa-tenant-full that the
/// controller creates and delivers in the tenant's px-pure-secret.
pub(crate) fn cloud_drive_object() -> Value {
    let mut obj = tenant_object();
    let storage = obj["spec"]["storage"].as_object_mut().unwrap();
    storage.insert("mode".into(), json!("cloud-drive"));
    for direct_access_only in ["attach", "provisioning", "diskBus", "fadaStorageClass"] {
        storage.remove(direct_access_only);
    }
    obj
}

/// The valid-full fixture as a stored custom resource, with a credentials Secret.
pub(crate) fn tenant_object() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/tenants/valid-full.yaml"
    ))
    .unwrap();
    let doc: Value = serde_saphyr::from_str(&text).unwrap();
    let mut obj = doc.clone();
    obj["metadata"]["uid"] = json!("0b7c5a51-0000-4000-8000-000000000001");
    obj["metadata"]["generation"] = json!(1);
    obj["metadata"]["resourceVersion"] = json!("1");
    obj["metadata"]["creationTimestamp"] = json!("2026-12-01T10:00:00Z");
    obj["spec"]["credentialsSecret"] = json!({"name": CREDS});
    obj
}

/// The drive claims of the hosted control plane namespace as the management cluster
/// holds them: absent until applied, then `Pending` until the test binds them (to PV
/// [`SimFada::pv_name`], whose array volume the test creates as the management
/// Portworx would).
#[derive(Clone, Default)]
pub(crate) struct DriveClaims(Arc<Mutex<BTreeMap<String, ClaimState>>>);

#[derive(Clone, Copy, Default)]
struct ClaimState {
    applied: bool,
    bound: bool,
}

impl DriveClaims {
    /// Whether claim `name` was applied.
    pub(crate) fn applied(&self, name: &str) -> bool {
        self.0.lock().unwrap().get(name).is_some_and(|c| c.applied)
    }
    /// Binds claim `name` (it reads `Bound` once it exists).
    pub(crate) fn bind(&self, name: &str) {
        self.0
            .lock()
            .unwrap()
            .entry(name.to_string())
            .or_default()
            .bound = true;
    }
}

impl Respond for DriveClaims {
    fn respond(&self, r: &Request) -> ResponseTemplate {
        let name = r.url.path().rsplit('/').next().unwrap().to_string();
        let mut all = self.0.lock().unwrap();
        let claim = all.entry(name.clone()).or_default();
        let mut body = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                              "metadata": {"name": name, "namespace": HCP_NS}});
        if r.method.as_str() == "PATCH" {
            claim.applied = true;
            if let Ok(sent) = r.body_json::<Value>() {
                merge(&mut body, &sent);
            }
        } else if !claim.applied {
            return ResponseTemplate::new(404).set_body_json(
                json!({"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404}),
            );
        }
        if claim.bound {
            body["spec"]["volumeName"] = json!(SimFada::pv_name(HCP_NS, &name));
            body["status"] = json!({"phase": "Bound"});
        } else {
            body["status"] = json!({"phase": "Pending"});
        }
        ResponseTemplate::new(200).set_body_json(body)
    }
}

/// The hosted control plane namespace: the worker VMs and their drive claims.
pub(crate) const HCP_NS: &str = "clusters-tenant-full";

impl World {
    /// The fake cluster around `obj`, on an empty array.
    pub(crate) async fn start(obj: Value) -> World {
        let array = MockArray::builder().admin("pxfa-tenant-full").build();
        World::start_on(obj, array, 2_000).await
    }

    /// The fake cluster around `obj` on `array`; readiness waits end after `wait_ms`.
    pub(crate) async fn start_on(obj: Value, array: MockArray, wait_ms: u64) -> World {
        let pure =
            json!({"FlashArrays": [{"MgmtEndPoint": "fa1-mgmt.example.net", "APIToken": TOKEN}]})
                .to_string();
        Self::start_with(obj, array, wait_ms, &[("pure.json", &pure)], None).await
    }

    /// As [`World::start_on`], with the array Secret's data and, when given, the
    /// connector the pool builds clients with (else the one handing out `array`).
    pub(crate) async fn start_with(
        obj: Value,
        array: MockArray,
        wait_ms: u64,
        creds: &[(&str, &str)],
        connector: Option<Box<dyn Connector>>,
    ) -> World {
        let fake = Fake::start().await;
        let store = Store::default();
        store.put(obj);
        let server = &fake.server;
        let faults = Faults::default();
        faults.mount(server).await;
        Mock::given(path_regex(
            r"^/apis/pxfa\.io/v1alpha1/namespaces/[^/]+/tenantstorages/[^/]+(/status)?$",
        ))
        .respond_with(store.clone())
        .with_priority(1)
        .mount(server)
        .await;
        Mock::given(method("GET"))
            .and(path("/apis/pxfa.io/v1alpha1/tenantstorages"))
            .respond_with(ListWatch(store.clone()))
            .with_priority(1)
            .mount(server)
            .await;
        Mock::given(method("GET"))
            .and(path(format!("/api/v1/namespaces/{NS}/secrets/{CREDS}")))
            .respond_with(ResponseTemplate::new(200).set_body_json(secret(NS, CREDS, &[], creds)))
            .with_priority(1)
            .mount(server)
            .await;
        // The HostedCluster and its admin kubeconfig Secret; the tenant cluster is
        // the same fake server, reached through that Secret.
        let kubeconfig = std::fs::read_to_string(&fake.kubeconfig)
            .unwrap()
            .replace("current-context: other", "current-context: fake");
        let hosted = HostedCluster {
            exists: Arc::new(AtomicBool::new(true)),
            kubeconfig,
        };
        Mock::given(path_regex(
            r"^/apis/hypershift\.openshift\.io/v1beta1/namespaces/clusters/hostedclusters/tenant-full$|^/api/v1/namespaces/clusters/secrets/tenant-full-admin-kubeconfig$",
        ))
        .respond_with(hosted.clone())
        .with_priority(1)
        .mount(server)
        .await;
        // Portworx in the tenant is Online at once (a test may hold it back).
        let portworx_phase = Arc::new(Mutex::new("Online"));
        let phase = portworx_phase.clone();
        Mock::given(method("GET"))
            .and(path_regex(r"/storageclusters/[^/]+$"))
            .respond_with(move |_: &Request| {
                ResponseTemplate::new(200).set_body_json(json!({
                    "apiVersion": "core.libopenstorage.org/v1", "kind": "StorageCluster",
                    "metadata": {"name": "px-tenant-full", "namespace": "portworx"},
                    "status": {"phase": *phase.lock().unwrap()}}))
            })
            .with_priority(1)
            .mount(server)
            .await;
        super::objects::mount_installed_operator(server).await;
        let journal = JournalSecrets::default();
        Mock::given(path_regex(
            r"^/api/v1/namespaces/[^/]+/secrets/pxfa-token-journal-[^/]+$",
        ))
        .respond_with(journal.clone())
        .with_priority(1)
        .mount(server)
        .await;
        // Creating one: the only POST of a Secret the controller makes.
        Mock::given(method("POST"))
            .and(path_regex(r"^/api/v1/namespaces/[^/]+/secrets$"))
            .respond_with(journal.clone())
            .with_priority(1)
            .mount(server)
            .await;
        let leases = Leases::default();
        leases.mount(server).await;
        let events = Events::default();
        events.mount(server).await;
        // Discovery for every kind this object renders.
        let obj: DynamicObject = serde_json::from_value(store.get(NAME)).unwrap();
        let spec = px_controller::load_tenant(&obj)
            .map(|t| t.spec)
            .unwrap_or_else(|_| support::direct_access_spec());
        support::mount_ready_management(server, &support::rendered(&spec)).await;
        // The NodePool's VMs, as many as `vms` says (the support's listing has 4).
        let vms = Arc::new(AtomicUsize::new(4));
        let count = vms.clone();
        Mock::given(method("GET"))
            .and(path(format!(
                "/apis/kubevirt.io/v1/namespaces/{HCP_NS}/virtualmachines"
            )))
            .respond_with(move |_: &Request| {
                let items: Vec<Value> = (0..count.load(Ordering::SeqCst))
                    .map(|i| {
                        support::vm_json(
                            &format!("tenant-full-workers-{i}"),
                            &format!("2026-01-{:02}T00:00:00Z", i + 1),
                            None,
                            json!([]),
                        )
                    })
                    .collect();
                ResponseTemplate::new(200).set_body_json(json!({
                    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineList",
                    "metadata": {}, "items": items}))
            })
            .with_priority(1)
            .mount(server)
            .await;

        let built = Arc::new(AtomicUsize::new(0));
        let connector = connector.unwrap_or_else(|| {
            Box::new(MockConnector {
                array: array.clone(),
                built: built.clone(),
            })
        });
        let ctx = px_controller::context(
            fake.client().await,
            ArrayPool::new(connector, 4, Arc::new(Metrics::new())),
            support::fast_wait(wait_ms),
            Duration::from_secs(60),
            "test-replica",
            Duration::from_secs(15),
            references(),
        );
        World {
            fake,
            faults,
            leases,
            events,
            store,
            journal,
            portworx_phase,
            array,
            built,
            vms,
            hosted,
            ctx,
        }
    }

    /// Serves the drive claims of the hosted control plane namespace from the
    /// returned state instead of the catch-all (every claim `Bound`, no volume).
    pub(crate) async fn serve_drive_claims(&self) -> DriveClaims {
        let claims = DriveClaims::default();
        Mock::given(path_regex(format!(
            r"^/api/v1/namespaces/{HCP_NS}/persistentvolumeclaims/[^/]+$"
        )))
        .respond_with(claims.clone())
        .with_priority(1)
        .mount(&self.fake.server)
        .await;
        claims
    }

    /// One reconcile of the stored object, as the controller would run it.
    pub(crate) async fn reconcile(&self) -> Result<Outcome, Error> {
        let obj: DynamicObject = serde_json::from_value(self.store.get(NAME)).unwrap();
        reconcile(&obj, &self.ctx).await
    }

    /// Another controller replica on the same management cluster and array: its own
    /// client, pool, metrics and probe state, as a second pod would have.
    pub(crate) async fn replica(&self, identity: &str, lease_duration: Duration) -> Arc<Context> {
        let connector = MockConnector {
            array: self.array.clone(),
            built: self.built.clone(),
        };
        px_controller::context(
            self.fake.client().await,
            ArrayPool::new(Box::new(connector), 4, Arc::new(Metrics::new())),
            support::fast_wait(2_000),
            Duration::from_secs(60),
            identity,
            lease_duration,
            references(),
        )
    }

    pub(crate) fn exists(&self) -> bool {
        self.store.0.lock().unwrap().contains_key(NAME)
    }
}
