//! One real kube-apiserver with etcd (`scripts/kube-apiserver.sh`) per test binary,
//! shared by its tests; each test works in namespaces of its own.
//!
//! Without Go, or without the upstream CRDs (`PXFA_SCHEMAS_DIR`, default
//! `../shared/schemas`), the tests skip with a loud notice; `PXFA_REQUIRE_APISERVER=1`
//! (set by `.ci/run`) makes that a failure. The server stops by itself when this
//! test process ends (`PXFA_APISERVER_WATCH_PID`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use kube::discovery::{ApiResource, Scope, pinned_kind};
use serde_json::{Value, json};

/// The running server: its state folder and admin kubeconfig (a client certificate
/// in `system:masters`).
pub(crate) struct Server {
    pub(crate) dir: PathBuf,
    pub(crate) kubeconfig: PathBuf,
}

static SERVER: OnceLock<Option<Server>> = OnceLock::new();

/// Tests share the server (read); a test that stops it takes it alone (write).
static TURN: RwLock<()> = RwLock::const_new(());

pub(crate) fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schemas_dir() -> PathBuf {
    std::env::var_os("PXFA_SCHEMAS_DIR")
        .map_or_else(|| workspace().join("../shared/schemas"), PathBuf::from)
}

/// The shared server, started on first use, and this test's share of it (held
/// while the test runs); `None` when this tier is skipped.
pub(crate) async fn shared() -> Option<(&'static Server, RwLockReadGuard<'static, ()>)> {
    let server = SERVER.get_or_init(start).as_ref()?;
    Some((server, TURN.read().await))
}

/// The server for a test that stops and starts it: no other test runs meanwhile.
pub(crate) async fn exclusive() -> Option<(&'static Server, RwLockWriteGuard<'static, ()>)> {
    let server = SERVER.get_or_init(start).as_ref()?;
    Some((server, TURN.write().await))
}

fn go_found() -> bool {
    Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[allow(
    clippy::print_stderr,
    reason = "a skipped tier must be loud in the test output"
)]
fn skip(why: &str) -> Option<Server> {
    let required = std::env::var("PXFA_REQUIRE_APISERVER").is_ok_and(|v| v == "1");
    eprintln!();
    eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
    eprintln!("!!! REAL API SERVER TESTS SKIPPED: {why}");
    eprintln!("!!! Rendered objects, the CRD and the controller's RBAC are NOT checked");
    eprintln!("!!! against a real kube-apiserver. They need Go (>= 1.24) and the upstream");
    eprintln!("!!! CRDs (PXFA_SCHEMAS_DIR); CI sets PXFA_REQUIRE_APISERVER=1, which turns");
    eprintln!("!!! this skip into a failure.");
    eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
    assert!(!required, "{why}, and PXFA_REQUIRE_APISERVER=1");
    None
}

fn start() -> Option<Server> {
    let schemas = schemas_dir();
    if !schemas.is_dir() {
        return skip(&format!("{} not found", schemas.display()));
    }
    if !go_found() {
        return skip("go not found");
    }
    let dir = std::env::temp_dir().join(format!("pxfa-apiserver-{}", std::process::id()));
    let stdout = script("start", &dir);
    let kubeconfig = PathBuf::from(stdout.lines().last().expect("the kubeconfig path"));
    assert!(kubeconfig.is_file(), "{}", kubeconfig.display());
    Some(Server { dir, kubeconfig })
}

/// `scripts/kube-apiserver.sh VERB DIR`, its standard output.
fn script(verb: &str, dir: &Path) -> String {
    let out = Command::new("bash")
        .arg(workspace().join("scripts/kube-apiserver.sh"))
        .arg(verb)
        .arg(dir)
        .env("PXFA_BIN", env!("CARGO_BIN_EXE_pxfa"))
        .env("PXFA_SCHEMAS_DIR", schemas_dir())
        .env("PXFA_APISERVER_WATCH_PID", std::process::id().to_string())
        .output()
        .expect("run scripts/kube-apiserver.sh");
    assert!(
        out.status.success(),
        "kube-apiserver.sh {verb} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

impl Server {
    /// `kube-apiserver.sh stop DIR`: etcd's data stays.
    pub(crate) fn stop(&self) {
        script("stop", &self.dir);
    }

    /// `kube-apiserver.sh start DIR` again: the same data, port and keys.
    pub(crate) fn start_again(&self) {
        script("start", &self.dir);
    }

    /// `/readyz?verbose` as the admin: every check passed, among them the RBAC
    /// bootstrap roles and the informers the RBAC authorizer reads (until they have
    /// synced, a starting server refuses what the roles allow). `start` and
    /// `start_again` return only after `/readyz` said ok (tools/kube-apiserver);
    /// this names the checks, so a server without them fails here.
    pub(crate) async fn assert_ready(&self) {
        // kube's own client: px-cluster's takes only JSON answers, and this one is text.
        let kubeconfig = kube::config::Kubeconfig::read_from(&self.kubeconfig).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        let request = http::Request::get("/readyz?verbose")
            .body(Vec::new())
            .unwrap();
        let body = client
            .request_text(request)
            .await
            .expect("GET /readyz?verbose");
        for check in [
            "[+]poststarthook/rbac/bootstrap-roles ok",
            "[+]informer-sync ok",
            "readyz check passed",
        ] {
            assert!(
                body.contains(check),
                "/readyz?verbose lacks {check:?}:\n{body}"
            );
        }
        assert!(!body.contains("[-]"), "/readyz?verbose:\n{body}");
    }

    /// A client with the admin identity.
    pub(crate) async fn admin(&self) -> kube::Client {
        px_cluster::connect(&self.kubeconfig, None, px_cluster::KubeBounds::default())
            .await
            .expect("admin client")
    }
}

/// A new namespace `<prefix>-<n>` for one test.
pub(crate) async fn namespace(client: &kube::Client, prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = format!("{prefix}-{}", NEXT.fetch_add(1, Ordering::SeqCst));
    ensure_namespace(client, &name).await;
    name
}

/// Creates `name` unless it exists (a real cluster has its system namespaces).
pub(crate) async fn ensure_namespace(client: &kube::Client, name: &str) {
    let api: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    match api.create(&PostParams::default(), &ns).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => panic!("create namespace {name}: {e}"),
    }
}

/// The API of `api_version`/`kind` in `namespace` (ignored for cluster-scoped kinds),
/// found by discovery.
pub(crate) async fn dynamic_api(
    client: &kube::Client,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = kube::api::GroupVersionKind::gvk(group, version, kind);
    let (resource, caps): (ApiResource, _) = pinned_kind(client, &gvk)
        .await
        .unwrap_or_else(|e| panic!("discovery of {api_version} {kind}: {e}"));
    match (caps.scope, namespace) {
        (Scope::Namespaced, Some(ns)) => Api::namespaced_with(client.clone(), ns, &resource),
        _ => Api::all_with(client.clone(), &resource),
    }
}

/// Server-side apply of `obj` as `manager`, forcing conflicts (the harness's own
/// set-up, not pxfa's apply).
pub(crate) async fn apply_as(client: &kube::Client, manager: &str, obj: &Value) -> DynamicObject {
    let api = dynamic_api(
        client,
        obj["apiVersion"].as_str().unwrap(),
        obj["kind"].as_str().unwrap(),
        obj["metadata"]["namespace"].as_str(),
    )
    .await;
    let name = obj["metadata"]["name"].as_str().unwrap();
    api.patch(
        name,
        &PatchParams::apply(manager).force(),
        &Patch::Apply(obj),
    )
    .await
    .unwrap_or_else(|e| panic!("apply {} {name}: {e}", obj["kind"]))
}

/// The resourceVersion of every object loaded, by kind and name.
pub(crate) async fn versions(admin: &kube::Client, loaded: &[Value]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for obj in loaded {
        let (kind, ns) = (
            obj["kind"].as_str().unwrap(),
            obj["metadata"]["namespace"].as_str(),
        );
        let api = dynamic_api(admin, obj["apiVersion"].as_str().unwrap(), kind, ns).await;
        let name = obj["metadata"]["name"].as_str().unwrap();
        let got = api.get(name).await.unwrap();
        out.insert(
            format!("{kind} {}/{name}", ns.unwrap_or("")),
            got.metadata.resource_version.unwrap(),
        );
    }
    out
}

/// The documents of a YAML file.
pub(crate) fn yaml_documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.split("\n---\n")
        .map(|d| serde_saphyr::from_str::<Value>(d).unwrap())
        .filter(|d| !d.is_null())
        .collect()
}
