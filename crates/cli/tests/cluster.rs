//! The cluster commands through the `pxfa` binary: `crd`, `apply --kubeconfig` against
//! an in-process fake Kubernetes API server, and `status` without a cluster. The
//! cluster logic itself is tested in px-cluster.

// The fake API server is px-cluster's test support, shared by path rather than
// copied; this binary uses only part of it.
#[allow(dead_code, unreachable_pub)]
#[path = "../../px-cluster/tests/it/support.rs"]
mod support;

use serde_json::Value;

use crate::support::{Fake, direct_access_spec, mount_ready_management, rendered};

fn pxfa_bin(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_pxfa"))
        .args(args)
        .env_remove("PUREFA_URL")
        .env_remove("PUREFA_API")
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .output()
        .expect("run pxfa")
}

fn fixture_path(name: &str) -> String {
    format!(
        "{}/../../fixtures/tenants/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn crd_command_prints_the_crd() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let out = pxfa_bin(&["crd"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let crd: CustomResourceDefinition = serde_saphyr::from_str(&text).expect("CRD YAML");
    assert_eq!(crd.metadata.name.as_deref(), Some("tenantstorages.pxfa.io"));
}

#[tokio::test]
async fn apply_with_kubeconfig_finishes_on_the_management_cluster() {
    let fake = Fake::start().await;
    let spec = direct_access_spec();
    mount_ready_management(&fake.server, &rendered(&spec)).await;
    let kubeconfig = fake.kubeconfig.to_str().unwrap().to_string();
    let spec_file = fixture_path("valid-full.yaml");
    let out = tokio::task::spawn_blocking(move || {
        pxfa_bin(&[
            "--array",
            "sim",
            "--yes",
            "apply",
            "-f",
            &spec_file,
            "--kubeconfig",
            &kubeconfig,
            "--context",
            "fake",
            "--wait-timeout",
            "5s",
        ])
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("worker 03 -> VM tenant-full-workers-3"),
        "{stdout}"
    );
    assert!(stdout.contains("clusters: done"), "{stdout}");
    assert!(!fake.requests("PUT", "/addvolume").await.is_empty());
}

#[tokio::test]
async fn status_without_kubeconfig_shows_the_array_layer_only() {
    let spec_file = fixture_path("valid-full.yaml");
    let out = tokio::task::spawn_blocking(move || {
        pxfa_bin(&["--array", "sim", "-o", "json", "status", "-f", &spec_file])
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("status JSON");
    let layers = v["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1, "no kubeconfig: the array layer only");
    assert!(layers[0]["name"].as_str().unwrap().starts_with("array"));
    // A fresh simulated array holds nothing of the tenant yet.
    assert!(
        layers[0]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["ok"] == false)
    );
}
