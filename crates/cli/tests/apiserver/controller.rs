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

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use flasharray_mock::MockArray;
use flasharray_sim::{RunningSim, SimConfig, Simulator};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
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
async fn install_deploy(admin: &kube::Client) {
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
async fn service_account_kubeconfig(admin: &kube::Client, server: &Server, dir: &Path) -> PathBuf {
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

async fn start_array(admin: &kube::Client, ns: &str) -> RunningSim {
    let sim = Simulator::start(
        MockArray::builder().build(),
        SimConfig {
            tls: true,
            ..SimConfig::new(SIM_TOKEN.to_string().into())
        },
    )
    .await
    .expect("simulator starts");
    let endpoint = sim.url().trim_start_matches("https://").to_string();
    let pure = json!({"FlashArrays": [{"MgmtEndPoint": endpoint, "APIToken": SIM_TOKEN}]});
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": CREDS, "namespace": ns},
        "stringData": {"pure.json": pure.to_string(), "ca.crt": sim.cert_pem()},
    });
    let api: Api<Secret> = Api::namespaced(admin.clone(), ns);
    api.create(
        &PostParams::default(),
        &serde_json::from_value(secret).unwrap(),
    )
    .await
    .unwrap();
    sim
}

/// Tenant `i`: the kubevirt-csi example renamed, its HostedCluster in `ns`.
fn tenant(i: usize, ns: &str, endpoint: &str) -> Value {
    let path = workspace().join("examples/tenant-kubevirt-csi.yaml");
    let mut obj: Value = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let name = format!("kv{i:02}");
    obj["metadata"] = json!({"name": name, "namespace": ns});
    obj["spec"]["hostedCluster"]["name"] = json!(name);
    obj["spec"]["hostedCluster"]["namespace"] = json!(ns);
    obj["spec"]["array"] = json!({"endpoint": endpoint});
    obj["spec"]["credentialsSecret"] = json!({"name": CREDS, "caKey": "ca.crt"});
    obj
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
/// (this server) and `status.kubeconfig`. Runs until aborted.
async fn play_hypershift(admin: kube::Client, ns: String, kubeconfig: String) {
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
            if hc.data["status"]["kubeconfig"]["name"].is_string() {
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

/// The controller as the Deployment runs it, but under this test's kubeconfig,
/// watching one namespace; its log goes to `dir/controller.log`.
fn spawn_controller(kubeconfig: &Path, ns: &str, dir: &Path) -> Child {
    let log = std::fs::File::create(dir.join("controller.log")).unwrap();
    Command::new(env!("CARGO_BIN_EXE_pxfa"))
        .args([
            "controller",
            "run",
            "--namespace",
            ns,
            "--metrics-address",
            "127.0.0.1:0",
        ])
        .args(["--wait-timeout", "10s", "--identity", "apiserver-test"])
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start pxfa controller run")
}

async fn tenants(admin: &kube::Client, ns: &str) -> Vec<DynamicObject> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(admin.clone(), ns, &tenant_storage_resource());
    api.list(&ListParams::default()).await.unwrap().items
}

fn ready(obj: &DynamicObject) -> bool {
    TenantStatus::from_object(&serde_json::to_value(obj).unwrap()).is_true(ConditionType::Ready)
}

/// Waits until `done` holds for the namespace's TenantStorage objects; on timeout,
/// fails with their conditions and the controller's log.
async fn wait_for(
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
            let log = std::fs::read_to_string(dir.join("controller.log")).unwrap_or_default();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_under_its_shipped_rbac_makes_20_tenants_ready_and_deletes_them() {
    let Some(server) = harness::server() else {
        return;
    };
    let admin = server.admin().await;
    install_deploy(&admin).await;
    let dir = tempfile::tempdir().unwrap();
    let ns = namespace(&admin, "controller").await;
    let kubeconfig = service_account_kubeconfig(&admin, server, dir.path()).await;
    let sim = start_array(&admin, &ns).await;
    let endpoint = sim.url().trim_start_matches("https://").to_string();
    let hypershift = tokio::spawn(play_hypershift(
        admin.clone(),
        ns.clone(),
        std::fs::read_to_string(&server.kubeconfig).unwrap(),
    ));
    let api: Api<DynamicObject> =
        Api::namespaced_with(admin.clone(), &ns, &tenant_storage_resource());
    for i in 0..TENANTS {
        let obj = tenant(i, &ns, &endpoint);
        site_namespaces(&admin, &obj).await;
        let name = obj["metadata"]["name"].as_str().unwrap().to_string();
        api.patch(&name, &PatchParams::apply("pxfa-test"), &Patch::Apply(&obj))
            .await
            .unwrap();
    }
    let mut controller = spawn_controller(&kubeconfig, &ns, dir.path());
    wait_for(
        &admin,
        &ns,
        dir.path(),
        "every tenant Ready",
        Duration::from_secs(240),
        |objs| objs.len() == TENANTS && objs.iter().all(ready),
    )
    .await;
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
    let log = std::fs::read_to_string(dir.path().join("controller.log")).unwrap();
    assert!(
        !log.contains("forbidden"),
        "the controller was refused something:\n{log}"
    );
    let _ = controller.kill();
    let _ = controller.wait();
    hypershift.abort();
    sim.shutdown().await;
}
