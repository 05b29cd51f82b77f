//! `pxfa controller run` as a process, under the ServiceAccount, Roles and bindings
//! that `deploy/` ships (a TokenRequest token for `pxfa-system/pxfa-controller`, not
//! the admin), against a simulated array over HTTPS: 20 tenants become Ready, and
//! deleting them goes through the finalizer. A verb missing in `deploy/` is a 403
//! here, and the test fails naming it.
//!
//! The test plays HyperShift's one part the controller waits for: each HostedCluster
//! the controller applies gets `status.kubeconfig` and its kubeconfig Secret, which
//! points back at this server (admin identity) as the tenant cluster. The kubevirt-csi
//! mode is used: it waits for no operator (no NNCP, claim or StorageCluster).
//!
//! Two replicas elect a leader on the shipped Lease; the leader is killed with
//! SIGKILL and the standby takes the Lease and carries on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flasharray_mock::MockArray;
use flasharray_sim::{RunningSim, SimConfig, Simulator};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::Api;
use kube::api::{DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use px_controller::{ConditionType, TenantStatus, tenant_storage_resource};
use serde_json::{Value, json};

use crate::harness::{
    self, Server, apply_as, ensure_namespace, namespace, workspace, yaml_documents,
};

const TENANTS: usize = 20;
const SIM_TOKEN: &str = "apiserver-test-array-token";
const CREDS: &str = "fa-creds";

/// deploy/rbac/management.yaml and deploy/controller/controller.yaml, as an admin
/// applies them (every object must be accepted).
pub(crate) async fn install_deploy(admin: &kube::Client) {
    for file in [
        "deploy/rbac/management.yaml",
        "deploy/controller/controller.yaml",
    ] {
        for doc in yaml_documents(&workspace().join(file)) {
            // The example RoleBindings name tenant namespaces a real cluster has.
            if let Some(ns) = doc["metadata"]["namespace"].as_str() {
                ensure_namespace(admin, ns).await;
            }
            apply_as(admin, "pxfa-test-deploy", &doc).await;
        }
    }
}

/// A kubeconfig for the shipped ServiceAccount: a one-hour TokenRequest token,
/// written 0600 and never printed.
pub(crate) async fn service_account_kubeconfig(
    admin: &kube::Client,
    server: &Server,
    dir: &Path,
) -> PathBuf {
    let sa: Api<ServiceAccount> = Api::namespaced(admin.clone(), "pxfa-system");
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: vec![],
            expiration_seconds: Some(3600),
            ..TokenRequestSpec::default()
        },
        ..TokenRequest::default()
    };
    let token = sa
        .create_token_request("pxfa-controller", &PostParams::default(), &request)
        .await
        .expect("TokenRequest for pxfa-system/pxfa-controller")
        .status
        .expect("a token")
        .token;
    let mut config: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&server.kubeconfig).unwrap()).unwrap();
    config["users"] = json!([{"name": "pxfa-controller", "user": {"token": token}}]);
    config["contexts"][0]["context"]["user"] = json!("pxfa-controller");
    let path = dir.join("controller.kubeconfig");
    write_private(&path, &serde_json::to_string(&config).unwrap());
    path
}

fn write_private(path: &Path, text: &str) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// A simulated array over HTTPS, its credentials in Secret `creds` of `ns`; the
/// array itself is returned too, for its call counts.
pub(crate) async fn start_array(
    admin: &kube::Client,
    ns: &str,
    creds: &str,
) -> (RunningSim, MockArray) {
    let array = MockArray::builder().build();
    let sim = Simulator::start(
        array.clone(),
        SimConfig {
            tls: true,
            ..SimConfig::new(SIM_TOKEN.to_string().into())
        },
    )
    .await
    .expect("simulator starts");
    let endpoint = endpoint(&sim);
    let pure = json!({"FlashArrays": [{"MgmtEndPoint": endpoint, "APIToken": SIM_TOKEN}]});
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": creds, "namespace": ns},
        "stringData": {"pure.json": pure.to_string(), "ca.crt": sim.cert_pem()},
    });
    let api: Api<Secret> = Api::namespaced(admin.clone(), ns);
    api.create(
        &PostParams::default(),
        &serde_json::from_value(secret).unwrap(),
    )
    .await
    .unwrap();
    (sim, array)
}

pub(crate) fn endpoint(sim: &RunningSim) -> String {
    sim.url().trim_start_matches("https://").to_string()
}

/// Tenant `name`: the kubevirt-csi example renamed, its HostedCluster in `ns`, on
/// the array of Secret `creds`.
pub(crate) fn tenant(name: &str, ns: &str, endpoint: &str, creds: &str) -> Value {
    let path = workspace().join("examples/tenant-kubevirt-csi.yaml");
    let mut obj: Value = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    obj["metadata"] = json!({"name": name, "namespace": ns});
    obj["spec"]["hostedCluster"]["name"] = json!(name);
    obj["spec"]["hostedCluster"]["namespace"] = json!(ns);
    obj["spec"]["array"] = json!({"endpoint": endpoint});
    obj["spec"]["credentialsSecret"] = json!({"name": creds, "caKey": "ca.crt"});
    obj
}

/// Applies tenant `obj` as the test (its site's namespaces made first).
pub(crate) async fn add_tenant(admin: &kube::Client, obj: &Value) {
    site_namespaces(admin, obj).await;
    let ns = obj["metadata"]["namespace"].as_str().unwrap();
    let name = obj["metadata"]["name"].as_str().unwrap();
    let api: Api<DynamicObject> =
        Api::namespaced_with(admin.clone(), ns, &tenant_storage_resource());
    api.patch(name, &PatchParams::apply("pxfa-test"), &Patch::Apply(obj))
        .await
        .unwrap();
}

/// The namespaces a tenant's objects go to that a real cluster already has (the
/// HostedCluster's own is in the bundle).
async fn site_namespaces(admin: &kube::Client, spec: &Value) {
    let spec = px_topology::parse_valid_spec(&serde_json::to_string(spec).unwrap()).unwrap();
    let sizing = px_topology::size(&spec, None).unwrap();
    let manifests =
        px_topology::render(&spec, &sizing, &Default::default(), Default::default()).unwrap();
    for m in manifests {
        if let Some(ns) = &m.namespace {
            ensure_namespace(admin, ns).await;
        }
    }
}

/// HyperShift's part: every HostedCluster in `ns` gets its admin kubeconfig Secret
/// (this server) and `status.kubeconfig`, except those `held` names. Runs until
/// aborted; API errors (a stopped server) are retried.
pub(crate) async fn play_hypershift(
    admin: kube::Client,
    ns: String,
    kubeconfig: String,
    held: Held,
) {
    let hcs = harness::dynamic_api(
        &admin,
        "hypershift.openshift.io/v1beta1",
        "HostedCluster",
        Some(&ns),
    )
    .await;
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), &ns);
    loop {
        for hc in hcs
            .list(&ListParams::default())
            .await
            .map(|l| l.items)
            .unwrap_or_default()
        {
            let name = hc.metadata.name.clone().unwrap();
            if hc.data["status"]["kubeconfig"]["name"].is_string()
                || held.lock().unwrap().contains(&name)
            {
                continue;
            }
            let secret_name = format!("{name}-admin-kubeconfig");
            let secret = json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": secret_name, "namespace": ns},
                "stringData": {"kubeconfig": kubeconfig}});
            let _ = secrets
                .patch(
                    &secret_name,
                    &PatchParams::apply("hypershift").force(),
                    &Patch::Apply(&secret),
                )
                .await;
            let status = json!({"status": {"kubeconfig": {"name": secret_name}}});
            let _ = hcs
                .patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
                .await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// HostedCluster names whose kubeconfig HyperShift holds back.
pub(crate) type Held = Arc<Mutex<BTreeSet<String>>>;

/// The controller as the Deployment runs it (leader election on the shipped Lease
/// `pxfa-system/pxfa-controller`, its times scaled down), under this test's
/// kubeconfig, watching one namespace; its log (JSON lines, each with its timestamp)
/// goes to `dir/controller-<identity>.log`.
pub(crate) fn spawn_controller(kubeconfig: &Path, ns: &str, dir: &Path, identity: &str) -> Child {
    let log = std::fs::File::create(dir.join(format!("controller-{identity}.log"))).unwrap();
    Command::new(env!("CARGO_BIN_EXE_pxfa"))
        .args([
            "controller",
            "run",
            "--namespace",
            ns,
            "--metrics-address",
            "127.0.0.1:0",
        ])
        .args(["--wait-timeout", "10s", "--identity", identity])
        .args(["--lease-duration", "6s", "--renew-deadline", "4s"])
        .args(["--retry-period", "1s", "--log-format", "json"])
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start pxfa controller run")
}

pub(crate) async fn tenants(admin: &kube::Client, ns: &str) -> Vec<DynamicObject> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(admin.clone(), ns, &tenant_storage_resource());
    api.list(&ListParams::default()).await.unwrap().items
}

pub(crate) fn ready(obj: &DynamicObject) -> bool {
    TenantStatus::from_object(&serde_json::to_value(obj).unwrap()).is_true(ConditionType::Ready)
}

/// Waits until `done` holds for the namespace's TenantStorage objects; on timeout,
/// fails with their conditions and the controller's log.
pub(crate) async fn wait_for(
    admin: &kube::Client,
    ns: &str,
    dir: &Path,
    what: &str,
    deadline: Duration,
    done: impl Fn(&[DynamicObject]) -> bool,
) {
    let start = Instant::now();
    loop {
        let objects = tenants(admin, ns).await;
        if done(&objects) {
            return;
        }
        if start.elapsed() > deadline {
            let states: Vec<String> = objects
                .iter()
                .map(|o| {
                    format!(
                        "{}: {}",
                        o.metadata.name.clone().unwrap(),
                        o.data["status"]["conditions"]
                    )
                })
                .collect();
            let log = controller_logs(dir);
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            panic!(
                "{what}: not within {deadline:?}\n{}\ncontroller log (last lines, newest first):\n{}",
                states.join("\n"),
                tail.join("\n")
            );
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Every controller log in `dir`, one after the other.
pub(crate) fn controller_logs(dir: &Path) -> String {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs.iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            format!("== {}\n{text}", p.display())
        })
        .collect()
}

/// The shipped Lease's holder, if any.
pub(crate) async fn lease_holder(admin: &kube::Client) -> Option<String> {
    let api: Api<Lease> = Api::namespaced(admin.clone(), "pxfa-system");
    api.get_opt("pxfa-controller")
        .await
        .ok()
        .flatten()
        .and_then(|l| l.spec)
        .and_then(|s| s.holder_identity)
        .filter(|h| !h.is_empty())
}

/// Waits until the Lease is held by one of `identities`, and returns which.
pub(crate) async fn wait_for_leader(
    admin: &kube::Client,
    identities: &[&str],
    deadline: Duration,
) -> String {
    let start = Instant::now();
    loop {
        let holder = lease_holder(admin).await;
        if let Some(h) = holder.as_deref().filter(|h| identities.contains(h)) {
            return h.to_string();
        }
        assert!(
            start.elapsed() < deadline,
            "the Lease went to none of {identities:?} within {deadline:?} (holder: {holder:?})"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// SIGTERM: the controller releases the Lease as it shuts down.
pub(crate) fn terminate(mut child: Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

pub(crate) fn assert_nothing_forbidden(dir: &Path) {
    assert_nothing_forbidden_outside(dir, &[]);
}

/// A stretch of wall-clock time, as measured by the test around something it did.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    pub(crate) from: jiff::Timestamp,
    pub(crate) to: jiff::Timestamp,
}

/// No controller log line says "forbidden", except those logged within one of
/// `windows`: while a real API server starts, it answers before its RBAC
/// authorizer's informers have synced, and refuses with 403 what the shipped
/// roles allow (a real cluster does the same during an apiserver rollout). The
/// controller retries those; a 403 logged outside such a window is a rule
/// missing in `deploy/`. A line without a readable timestamp is never excused.
pub(crate) fn assert_nothing_forbidden_outside(dir: &Path, windows: &[Window]) {
    let log = controller_logs(dir);
    let refused: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("forbidden"))
        .filter(|line| {
            logged_at(line).is_none_or(|t| !windows.iter().any(|w| w.from <= t && t <= w.to))
        })
        .collect();
    assert!(
        refused.is_empty(),
        "the controller was refused something (outside {windows:?}):\n{}\n\nits whole log:\n{log}",
        refused.join("\n")
    );
}

/// The `timestamp` of a `--log-format json` line.
fn logged_at(line: &str) -> Option<jiff::Timestamp> {
    let line: Value = serde_json::from_str(line).ok()?;
    line["timestamp"].as_str()?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_controllers_under_the_shipped_rbac_make_20_tenants_ready_survive_a_killed_leader_and_delete_them()
 {
    let Some((server, _turn)) = harness::shared().await else {
        return;
    };
    let admin = server.admin().await;
    install_deploy(&admin).await;
    let dir = tempfile::tempdir().unwrap();
    let ns = namespace(&admin, "controller").await;
    let kubeconfig = service_account_kubeconfig(&admin, server, dir.path()).await;
    let (sim, _array) = start_array(&admin, &ns, CREDS).await;
    let hypershift = tokio::spawn(play_hypershift(
        admin.clone(),
        ns.clone(),
        std::fs::read_to_string(&server.kubeconfig).unwrap(),
        Held::default(),
    ));
    for i in 0..TENANTS {
        add_tenant(
            &admin,
            &tenant(&format!("kv{i:02}"), &ns, &endpoint(&sim), CREDS),
        )
        .await;
    }
    let mut replicas = BTreeMap::from([
        (
            "replica-a",
            spawn_controller(&kubeconfig, &ns, dir.path(), "replica-a"),
        ),
        (
            "replica-b",
            spawn_controller(&kubeconfig, &ns, dir.path(), "replica-b"),
        ),
    ]);
    let all_ready =
        |n: usize| move |objs: &[DynamicObject]| objs.len() == n && objs.iter().all(ready);
    wait_for(
        &admin,
        &ns,
        dir.path(),
        "every tenant Ready",
        Duration::from_secs(240),
        all_ready(TENANTS),
    )
    .await;

    // kill -9 the leader: its Lease is not released, the standby takes it once
    // it expires (6 s here) and carries on.
    let leader = wait_for_leader(&admin, &["replica-a", "replica-b"], Duration::from_secs(5)).await;
    let standby = if leader == "replica-a" {
        "replica-b"
    } else {
        "replica-a"
    };
    let mut killed = replicas.remove(leader.as_str()).unwrap();
    killed.kill().unwrap();
    killed.wait().unwrap();
    wait_for_leader(&admin, &[standby], Duration::from_secs(30)).await;
    add_tenant(&admin, &tenant("kv-after", &ns, &endpoint(&sim), CREDS)).await;
    wait_for(
        &admin,
        &ns,
        dir.path(),
        "the new leader makes a new tenant Ready, the others stay Ready",
        Duration::from_secs(120),
        all_ready(TENANTS + 1),
    )
    .await;

    let api: Api<DynamicObject> =
        Api::namespaced_with(admin.clone(), &ns, &tenant_storage_resource());
    for obj in tenants(&admin, &ns).await {
        api.delete(&obj.metadata.name.unwrap(), &DeleteParams::default())
            .await
            .unwrap();
    }
    wait_for(
        &admin,
        &ns,
        dir.path(),
        "every tenant deleted",
        Duration::from_secs(180),
        <[_]>::is_empty,
    )
    .await;
    assert_nothing_forbidden(dir.path());
    for (_, child) in replicas {
        terminate(child);
    }
    assert_eq!(
        lease_holder(&admin).await,
        None,
        "the leader released the Lease on SIGTERM"
    );
    hypershift.abort();
    sim.shutdown().await;
}
