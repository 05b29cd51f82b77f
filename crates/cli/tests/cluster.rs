//! The cluster commands through the `pxfa` binary: `crd`, `apply --kubeconfig` against
//! an in-process fake Kubernetes API server, and `status` without a cluster. The
//! cluster logic itself is tested in px-cluster.

mod fake_sites;

use serde_json::Value;

use crate::fake_sites::support::{Fake, direct_access_spec, mount_ready_management, rendered};
use crate::fake_sites::{command, fixture, pxfa};

#[test]
fn crd_command_prints_the_crd() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let out = pxfa(&["crd"]);
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
    let spec_file = fixture("valid-full.yaml").to_str().unwrap().to_string();
    let out = tokio::task::spawn_blocking(move || {
        pxfa(&[
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

/// A kubeconfig that can be read only once (a pipe: `vault read ... | pxfa apply
/// --kubeconfig /dev/stdin`, or `--kubeconfig <(...)`): apply reads it once and
/// passes the client on, so the site facts, the preflight and the clusters all
/// have it. Read twice, the second read found the pipe drained and the preflight
/// refused the kubeconfig (exit 2).
#[tokio::test]
async fn apply_reads_a_piped_kubeconfig_once() {
    use std::io::Write;
    use std::process::Stdio;

    let fake = Fake::start().await;
    let spec = direct_access_spec();
    mount_ready_management(&fake.server, &rendered(&spec)).await;
    let kubeconfig = std::fs::read(&fake.kubeconfig).unwrap();
    let spec_file = fixture("valid-full.yaml").to_str().unwrap().to_string();
    let out = tokio::task::spawn_blocking(move || {
        let mut child = command(&[
            "--array",
            "sim",
            "--yes",
            "apply",
            "-f",
            &spec_file,
            "--kubeconfig",
            "/dev/stdin",
            "--context",
            "fake",
            "--wait-timeout",
            "5s",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pxfa");
        // Written once and closed: what a pipe from another command gives.
        child.stdin.take().unwrap().write_all(&kubeconfig).unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stderr.contains("site facts from the management cluster"),
        "{stderr}"
    );
    assert!(stdout.contains("clusters: done"), "{stdout}");
    assert!(!fake.requests("PUT", "/addvolume").await.is_empty());
}

#[tokio::test]
async fn status_without_kubeconfig_shows_the_array_layer_only() {
    let spec_file = fixture("valid-full.yaml").to_str().unwrap().to_string();
    let out = tokio::task::spawn_blocking(move || {
        pxfa(&["--array", "sim", "-o", "json", "status", "-f", &spec_file])
    })
    .await
    .unwrap();
    // Problems found (nothing applied yet): exit 3 (#37).
    assert_eq!(
        out.status.code(),
        Some(3),
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
