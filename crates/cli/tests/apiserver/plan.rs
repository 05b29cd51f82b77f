//! `pxfa plan --kubeconfig` through the binary against the real API server: what
//! `apply --kubeconfig` would change on the management cluster, per object a read
//! and a server-side apply dry run (`dryRun=All`, field manager `pxfa`), compared.
//! A kubevirt-csi tenant (it makes nothing on the array, so `--detailed-exitcode`
//! counts the clusters only) in a namespace of its own: its objects show as
//! `create`; after `pxfa apply --kubeconfig` every object is `unchanged` and
//! `--detailed-exitcode` exits 0; a field taken over by another field manager is a
//! `conflict` naming that manager, and a label pxfa sets removed by another writer
//! is a `change` naming the field. No plan writes: the objects' resourceVersions
//! stay as they were, and objects to create are still absent. The fake API server
//! test of the same command is `tests/cluster.rs`
//! (`plan_with_kubeconfig_previews_the_clusters_without_writing`).
//!
//! It takes the server alone: a test applying the same site-wide objects (MetalLB,
//! the root disk StorageClass) meanwhile would show here as changes.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use kube::api::{Patch, PatchParams};
use px_topology::{Cluster, Form, Manifest};
use serde_json::{Value, json};

use crate::fake_sites::pxfa;
use crate::harness::{self, Server, apply_as, dynamic_api, ensure_namespace, versions, workspace};

const NAME: &str = "plan-kv";
const NS: &str = "plan-kv-hcp";

/// The kubevirt-csi example renamed: tenant and HostedCluster `plan-kv` in [`NS`].
fn spec_file(dir: &Path) -> String {
    let text = std::fs::read_to_string(workspace().join("examples/tenant-kubevirt-csi.yaml"))
        .unwrap()
        .replace("tenant-kv", NAME);
    let mut doc: Value = serde_saphyr::from_str(&text).unwrap();
    doc["spec"]["hostedCluster"]["namespace"] = json!(NS);
    let path = dir.join("plan-kv.yaml");
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    path.to_str().unwrap().to_string()
}

/// The management objects apply sends (as `plan` previews them): resources, no
/// credential, no MachineConfig (not applied without `--apply-node-config`).
fn management_objects(spec_file: &str) -> Vec<Manifest> {
    let spec = px_topology::load_spec(spec_file).unwrap();
    let sizing = px_topology::size(&spec, None).unwrap();
    px_topology::render(&spec, &sizing, &Default::default(), Default::default())
        .unwrap()
        .into_iter()
        .filter(|m| {
            m.cluster == Cluster::Management
                && m.form == Form::Resource
                && !m.secret
                && m.kind != "MachineConfig"
        })
        .collect()
}

fn describe(m: &Manifest) -> String {
    match &m.namespace {
        Some(ns) => format!("{} {ns}/{}", m.kind, m.name),
        None => format!("{} {}", m.kind, m.name),
    }
}

/// Objects of this tenant alone (the others, MetalLB and the StorageClass, are the
/// site's: another test may have made them).
fn own(m: &Manifest) -> bool {
    m.namespace.as_deref() == Some(NS) || m.name.starts_with(NAME) || m.name == NS
}

/// `pxfa --array sim plan -f SPEC --kubeconfig K` with `extra`, off the runtime.
async fn plan(server: &Server, spec: &str, extra: &[&str]) -> Output {
    let mut args: Vec<String> = ["--array", "sim", "plan", "-f", spec, "--kubeconfig"]
        .iter()
        .map(ToString::to_string)
        .collect();
    args.push(server.kubeconfig.to_str().unwrap().to_string());
    args.extend(extra.iter().map(ToString::to_string));
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        pxfa(&args)
    })
    .await
    .unwrap()
}

/// The clusters' objects of `plan -o json`: action and fields by object.
async fn previewed(server: &Server, spec: &str) -> BTreeMap<String, (String, Vec<String>)> {
    let out = plan(server, spec, &["-o", "json"]).await;
    assert!(out.status.success(), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("plan JSON");
    assert_eq!(v["kind"], "Plan");
    v["clusters"]["objects"]
        .as_array()
        .expect("clusters.objects")
        .iter()
        .map(|o| {
            let fields = o["fields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap().to_string())
                .collect();
            (
                o["object"].as_str().unwrap().to_string(),
                (o["action"].as_str().unwrap().to_string(), fields),
            )
        })
        .collect()
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Whether `m` exists on the server.
async fn exists(admin: &kube::Client, m: &Manifest) -> bool {
    let api = dynamic_api(
        admin,
        m.body["apiVersion"].as_str().unwrap(),
        &m.kind,
        m.namespace.as_deref(),
    )
    .await;
    api.get_opt(&m.name).await.unwrap().is_some()
}

/// The detailed exit code of `plan` and the objects' resourceVersions around it:
/// they must not move.
async fn plan_writes_nothing(
    server: &Server,
    admin: &kube::Client,
    spec: &str,
    objects: &[Manifest],
) -> Output {
    let bodies: Vec<Value> = objects.iter().map(|m| m.body.clone()).collect();
    let before = versions(admin, &bodies).await;
    let out = plan(server, spec, &["--detailed-exitcode"]).await;
    assert_eq!(
        versions(admin, &bodies).await,
        before,
        "plan wrote to the server"
    );
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_with_kubeconfig_previews_the_real_server_and_writes_nothing() {
    let Some((server, _alone)) = harness::exclusive().await else {
        return;
    };
    let admin = server.admin().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(dir.path());
    let objects = management_objects(&spec);
    let mine: Vec<&Manifest> = objects.iter().filter(|m| own(m)).collect();
    // The namespaces a real management cluster has (MetalLB's operator makes its own).
    for ns in objects.iter().filter_map(|m| m.namespace.as_deref()) {
        if ns != NS {
            ensure_namespace(&admin, ns).await;
        }
    }
    assert!(
        mine.len() >= 4,
        "{:?}",
        mine.iter().map(|m| describe(m)).collect::<Vec<_>>()
    );

    // Nothing of this tenant exists: each is a create, and nothing is made.
    let out = plan(server, &spec, &["--detailed-exitcode"]).await;
    let shown = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        shown.contains("Clusters (server-side apply dry run, nothing written):"),
        "{shown}"
    );
    let first = previewed(server, &spec).await;
    for m in &mine {
        assert_eq!(
            first.get(&describe(m)).map(|(a, _)| a.as_str()),
            Some("create"),
            "{}: {first:?}",
            describe(m)
        );
        assert!(
            shown.contains(&format!("+ create management {}", describe(m))),
            "{shown}"
        );
        assert!(!exists(&admin, m).await, "plan made {}", describe(m));
    }

    let applied = tokio::task::spawn_blocking({
        let (spec, kubeconfig) = (spec.clone(), server.kubeconfig.clone());
        move || {
            pxfa(&[
                "--array",
                "sim",
                "--yes",
                "apply",
                "-f",
                &spec,
                "--kubeconfig",
                kubeconfig.to_str().unwrap(),
                "--wait-timeout",
                "5s",
            ])
        }
    })
    .await
    .unwrap();
    assert!(applied.status.success(), "{}", text(&applied));

    // As applied: every object unchanged, exit 0, nothing written.
    let out = plan_writes_nothing(server, &admin, &spec, &objects).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let second = previewed(server, &spec).await;
    for m in &objects {
        assert_eq!(
            second.get(&describe(m)).map(|(a, _)| a.as_str()),
            Some("unchanged"),
            "{}: {second:?}",
            describe(m)
        );
    }
    drifted(server, &admin, &spec, &objects).await;
}

/// Another field manager takes over the IPAddressPool's addresses (a conflict for
/// apply) and another writer removes a label pxfa sets on the NodePool (a change).
async fn drifted(server: &Server, admin: &kube::Client, spec: &str, objects: &[Manifest]) {
    let pool = objects.iter().find(|m| m.kind == "IPAddressPool").unwrap();
    let taken = json!({"apiVersion": pool.body["apiVersion"], "kind": "IPAddressPool",
        "metadata": {"name": pool.name, "namespace": pool.namespace},
        "spec": {"addresses": ["198.51.100.200-198.51.100.209"]}});
    apply_as(admin, "other-manager", &taken).await;
    let pool_path = describe(pool);

    let node_pool = objects.iter().find(|m| m.kind == "NodePool").unwrap();
    let api = dynamic_api(
        admin,
        node_pool.body["apiVersion"].as_str().unwrap(),
        "NodePool",
        node_pool.namespace.as_deref(),
    )
    .await;
    let unlabel = json!({"metadata": {"labels": {"pxfa.io/tenant": null}}});
    let params = PatchParams {
        field_manager: Some("someone".to_string()),
        ..PatchParams::default()
    };
    api.patch(&node_pool.name, &params, &Patch::Merge(&unlabel))
        .await
        .unwrap();

    let out = plan_writes_nothing(server, admin, spec, objects).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        shown.contains(&format!("! conflict management {pool_path}")),
        "{shown}"
    );
    let third = previewed(server, spec).await;
    let (action, fields) = &third[&pool_path];
    assert_eq!(action, "conflict", "{third:?}");
    assert!(
        fields.iter().any(|f| f.contains("other-manager")),
        "the conflict names the other manager: {fields:?}"
    );
    let (action, fields) = &third[&describe(node_pool)];
    assert_eq!(action, "change", "{third:?}");
    assert!(
        fields
            .iter()
            .any(|f| f.starts_with("metadata.labels") && f.contains("pxfa.io/tenant")),
        "{fields:?}"
    );
    assert!(
        shown.contains(&format!("~ change management {}", describe(node_pool))),
        "{shown}"
    );
    // The other manager's addresses stay: plan took nothing back.
    let pools = dynamic_api(
        admin,
        pool.body["apiVersion"].as_str().unwrap(),
        "IPAddressPool",
        pool.namespace.as_deref(),
    )
    .await;
    let now = pools.get(&pool.name).await.unwrap();
    assert_eq!(now.data["spec"]["addresses"], taken["spec"]["addresses"]);
}
