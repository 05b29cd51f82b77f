//! `pxfa doctor` reading real objects: the fake management site of the binary's
//! doctor tests (px-cluster's `fake_site.rs`, shared by path) loaded into the real
//! server, and doctor run through the binary against both. The two reports must
//! agree check by check. The objects loaded are exactly those doctor read from
//! the fake (its GET requests, answered again), so the fake and the real site
//! cannot drift apart.
//!
//! Doctor runs as the user `pxfa` that `deploy/rbac/management.yaml` binds (the
//! admin impersonating it), so a read the shipped roles lack is a difference here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use crate::controller::install_deploy;
use crate::fake_sites::fake_site::{complete, mount};
use crate::fake_sites::support::Fake;
use crate::fake_sites::{applied, command, fixture};
use crate::harness::{self, Server, apply_as, dynamic_api, ensure_namespace};

/// `pxfa doctor -f valid-full.yaml -o json` on the array state `state`, with
/// `$KUBECONFIG`; its exit code and report.
async fn doctor(state: &Path, kubeconfig: &Path) -> (Option<i32>, Value) {
    let (state, kubeconfig) = (state.to_path_buf(), kubeconfig.to_path_buf());
    let out = tokio::task::spawn_blocking(move || {
        command(&["--array", "sim", "--sim-state"])
            .arg(&state)
            .args(["doctor", "-f"])
            .arg(fixture("valid-full.yaml"))
            .args(["-o", "json"])
            .env("KUBECONFIG", &kubeconfig)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor -o json: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), report)
}

/// The objects the fake answered doctor's GETs with (a list's items one by one),
/// each with the namespace of its path.
async fn objects_read(fake: &Fake) -> Vec<Value> {
    let mut paths: Vec<String> = fake
        .requests("GET", "/")
        .await
        .iter()
        .map(|r| r.url.path().to_string())
        .collect();
    paths.sort();
    paths.dedup();
    let http = reqwest::Client::new();
    let mut out = Vec::new();
    for path in paths {
        let resp = http
            .get(format!("{}{path}", fake.server.uri()))
            .send()
            .await
            .unwrap();
        if !resp.status().is_success() {
            continue;
        }
        let body: Value = resp.json().await.unwrap();
        let namespace = path
            .split("/namespaces/")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .filter(|_| path.matches('/').count() > 4);
        let items = match body["items"].as_array() {
            Some(items) => items.clone(),
            None if body.get("kind").is_some() && body["kind"] != "APIResourceList" => vec![body],
            None => vec![],
        };
        for mut item in items {
            if let (Some(ns), None) = (namespace, item["metadata"].get("namespace")) {
                item["metadata"]["namespace"] = json!(ns);
            }
            out.push(item);
        }
    }
    out
}

/// What the real server requires that the fake's objects leave out.
pub(crate) fn completed(mut obj: Value) -> Value {
    match obj["kind"].as_str() {
        Some("StorageClass") => obj["provisioner"] = json!("pxd.portworx.com"),
        Some("ClusterVersion") => {
            obj["spec"] = json!({"clusterID": "00000000-0000-4000-8000-000000000001"});
            let desired = &mut obj["status"]["desired"];
            desired["image"] = json!("quay.io/openshift-release-dev/ocp-release@sha256:0");
            obj["status"]["availableUpdates"] = json!([]);
            obj["status"]["observedGeneration"] = json!(1);
            obj["status"]["versionHash"] = json!("test");
        }
        Some("DaemonSet") => {
            let labels = json!({"app": obj["metadata"]["name"]});
            obj["spec"] = json!({"selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "main", "image": "registry.invalid/main"}]}}});
        }
        Some("PersistentVolume") => {
            let spec = &mut obj["spec"];
            default(spec, "capacity", json!({"storage": "1Gi"}));
            default(spec, "accessModes", json!(["ReadWriteOnce"]));
            let handle = obj["metadata"]["name"].clone();
            let spec = &mut obj["spec"];
            default(
                spec,
                "csi",
                json!({"driver": "pxd.portworx.com", "volumeHandle": handle}),
            );
        }
        Some("PersistentVolumeClaim") => {
            let spec = &mut obj["spec"];
            default(spec, "accessModes", json!(["ReadWriteOnce"]));
            default(spec, "resources", json!({"requests": {"storage": "1Gi"}}));
        }
        _ => {}
    }
    obj
}

/// Sets `obj[key]` unless it is there.
fn default(obj: &mut Value, key: &str, value: Value) {
    if obj.get(key).is_none_or(Value::is_null) {
        obj[key] = value;
    }
}

/// Loads `objects` into the real server as the admin (status through the status
/// subresource where the kind has one); returns them as loaded, for removal.
pub(crate) async fn load(admin: &kube::Client, objects: Vec<Value>) -> Vec<Value> {
    let mut loaded = Vec::new();
    for obj in objects.into_iter().map(completed) {
        if obj["kind"] == "Namespace" {
            ensure_namespace(admin, obj["metadata"]["name"].as_str().unwrap()).await;
            continue;
        }
        if let Some(ns) = obj["metadata"]["namespace"].as_str() {
            ensure_namespace(admin, ns).await;
        }
        apply_as(admin, "fake-site", &obj).await;
        if let Some(status) = obj.get("status") {
            let api = dynamic_api(
                admin,
                obj["apiVersion"].as_str().unwrap(),
                obj["kind"].as_str().unwrap(),
                obj["metadata"]["namespace"].as_str(),
            )
            .await;
            let name = obj["metadata"]["name"].as_str().unwrap();
            // A kind without the subresource (404) stored its status with the object.
            match api
                .patch_status(
                    name,
                    &PatchParams::default(),
                    &Patch::Merge(&json!({"status": status})),
                )
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => panic!("status of {} {name}: {e}", obj["kind"]),
            }
        }
        loaded.push(obj);
    }
    loaded
}

pub(crate) async fn remove(admin: &kube::Client, loaded: &[Value]) {
    for obj in loaded {
        let api = dynamic_api(
            admin,
            obj["apiVersion"].as_str().unwrap(),
            obj["kind"].as_str().unwrap(),
            obj["metadata"]["namespace"].as_str(),
        )
        .await;
        let _ = api
            .delete(
                obj["metadata"]["name"].as_str().unwrap(),
                &Default::default(),
            )
            .await;
    }
}

/// The admin kubeconfig impersonating `user` (in `system:authenticated`).
pub(crate) fn impersonating(server: &Server, user: &str, dir: &Path) -> PathBuf {
    let mut config: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&server.kubeconfig).unwrap()).unwrap();
    for u in config["users"].as_array_mut().unwrap() {
        u["user"]["as"] = json!(user);
        u["user"]["as-groups"] = json!(["system:authenticated"]);
    }
    let path = dir.join(format!("{user}.kubeconfig"));
    std::fs::write(&path, serde_json::to_string(&config).unwrap()).unwrap();
    path
}

/// Each check's status and what it read, by check name and object.
fn checks(report: &Value) -> BTreeMap<String, String> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                format!("{} {}", c["name"].as_str().unwrap(), c["read"]),
                format!("{} {}", c["status"], c["found"]),
            )
        })
        .collect()
}

#[tokio::test]
async fn doctor_reports_the_same_on_the_fake_site_loaded_into_the_real_server() {
    // Alone: the site's cluster-scoped objects (ClusterVersion, Network, ...) are
    // the server's, and are removed after.
    let Some((server, _alone)) = harness::exclusive().await else {
        return;
    };
    let admin = server.admin().await;
    install_deploy(&admin).await;
    // As deploy/rbac/management.yaml says: one RoleBinding of the tenant role per
    // namespace pxfa works in; the shipped examples bind tenant-demo's, this is
    // tenant-full's hosted control plane namespace.
    ensure_namespace(&admin, "clusters-tenant-full").await;
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "pxfa", "namespace": "clusters-tenant-full"},
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "pxfa"}],
        "roleRef": {"kind": "ClusterRole", "apiGroup": "rbac.authorization.k8s.io",
                    "name": "pxfa-management-tenant"},
    });
    apply_as(&admin, "pxfa-test-deploy", &binding).await;
    let dir = tempfile::tempdir().unwrap();
    let state = applied(dir.path(), &fixture("valid-full.yaml"));

    let fake = Fake::start().await;
    mount(&fake.server, &complete()).await;
    let (fake_code, fake_report) = doctor(&state, &fake.kubeconfig).await;
    let loaded = load(&admin, objects_read(&fake).await).await;
    assert!(loaded.len() >= 10, "the site's objects: {loaded:#?}");

    let kubeconfig = impersonating(server, "pxfa", dir.path());
    let (real_code, real_report) = doctor(&state, &kubeconfig).await;
    remove(&admin, &loaded).await;
    let (fake_checks, real_checks) = (checks(&fake_report), checks(&real_report));
    let differences: Vec<String> = fake_checks
        .keys()
        .chain(real_checks.keys())
        .filter(|k| fake_checks.get(*k) != real_checks.get(*k))
        .map(|k| {
            format!(
                "{k}:\n  fake: {:?}\n  real: {:?}",
                fake_checks.get(k),
                real_checks.get(k)
            )
        })
        .collect();
    assert!(
        differences.is_empty(),
        "doctor tells the fake and the real server apart:\n{}",
        differences.join("\n")
    );
    assert_eq!(fake_report["facts"], real_report["facts"]);
    assert_eq!(fake_code, real_code);
}
