//! Every example, and the variants the schema tests render, applied to the real API
//! server as `pxfa apply --kubeconfig` applies it (px-cluster's `apply_manifests`:
//! server-side apply, field manager `pxfa`, step by step), with the upstream CRDs
//! loaded: every object accepted, CEL rules included; a second apply changes nothing.
//!
//! The waits are cut short (no operator runs here to make an object ready); each step
//! is applied on its own so that a pending wait does not stop the next. Not applied
//! here, as `apply` does not apply them either: fragments, merge patches of existing
//! objects, and the worker VMs' disks (KubeVirt's `addvolume` is an aggregated API
//! of KubeVirt's own server, not a CRD).

use std::collections::BTreeMap;
use std::time::Duration;

use kube::api::{DeleteParams, Patch, PatchParams};
use px_cluster::{ApplyOptions, WaitOptions, apply_manifests, cluster_bundle};
use px_topology::{ArrayFacts, Cluster, Form, Manifest, RenderOptions, TenantStorage};
use serde_json::{Value, json};

use crate::harness::{self, dynamic_api, ensure_namespace, workspace};

const MODES: [&str; 5] = [
    "cloud-drive",
    "cloud-drive-nvme",
    "cloud-drive-realm",
    "direct-access",
    "kubevirt-csi",
];

fn example(mode: &str) -> TenantStorage {
    px_topology::load_spec(workspace().join(format!("examples/tenant-{mode}.yaml")))
        .unwrap_or_else(|e| panic!("example {mode}: {e}"))
}

/// The examples, cloud-drive on an OVN-Kubernetes localnet network with persistent
/// IPs, and direct-access with pre-created volumes (Portworx 3.7, FA/FB driver).
fn specs() -> Vec<(String, TenantStorage)> {
    let mut specs: Vec<(String, TenantStorage)> = MODES
        .iter()
        .map(|m| ((*m).to_string(), example(m)))
        .collect();
    let mut localnet = example("cloud-drive");
    localnet.spec.network.as_mut().unwrap().persistent_ips = Some(true);
    specs.push(("cloud-drive (persistentIps)".into(), localnet));
    let mut import = example("direct-access");
    import.spec.portworx.version = px_topology::spec::Version::new(3, 7, 0);
    import.spec.management.fa_fb_driver = true;
    import.spec.storage.provisioning = px_topology::spec::Provisioning::Import;
    specs.push(("direct-access (import)".into(), import));
    specs
}

/// What `apply --kubeconfig --apply-node-config` sends: the bundle without the
/// templates, without the VM disk patches (see the module comment).
fn bundle(spec: &TenantStorage) -> Vec<Manifest> {
    let sizing = px_topology::size(spec, None).unwrap();
    let manifests = px_topology::render(
        spec,
        &sizing,
        &ArrayFacts::default(),
        RenderOptions::default(),
    )
    .unwrap();
    let (kept, _skipped) = cluster_bundle(spec, manifests, true);
    kept.into_iter()
        .filter(|m| !(matches!(m.form, Form::JsonPatch { .. }) && m.kind == "VirtualMachine"))
        .collect()
}

fn options() -> ApplyOptions {
    ApplyOptions {
        force_conflicts: false,
        wait: WaitOptions {
            timeout: Duration::from_millis(1),
            interval: Duration::from_millis(1),
        },
        apply_secrets: true,
        adopt_replaced_vms: false,
    }
}

/// Applies the bundle step by step (management cluster and tenant cluster are both
/// this server); returns the applied objects, or what was refused.
async fn apply(
    client: &kube::Client,
    spec: &TenantStorage,
    manifests: &[Manifest],
) -> Result<Vec<Manifest>, Vec<String>> {
    let mut steps: BTreeMap<(bool, u32), Vec<Manifest>> = BTreeMap::new();
    for m in manifests {
        let key = (m.cluster == Cluster::Tenant, m.order);
        steps.entry(key).or_default().push(m.clone());
    }
    let (mut applied, mut refused) = (Vec::new(), Vec::new());
    for group in steps.values() {
        match apply_manifests(spec, group, client, Some(client), &options()).await {
            Ok(report) => {
                refused.extend(report.conflicts.iter().map(|c| format!("conflict: {c:?}")));
                applied.extend(group.iter().filter(|m| report.was_applied(m)).cloned());
            }
            Err(e) => refused.push(format!("{e}: {}", source_chain(&e))),
        }
    }
    if refused.is_empty() {
        Ok(applied)
    } else {
        Err(refused)
    }
}

fn source_chain(e: &dyn std::error::Error) -> String {
    let mut out = Vec::new();
    let mut next = e.source();
    while let Some(s) = next {
        out.push(s.to_string());
        next = s.source();
    }
    out.join(": ")
}

/// Each applied object as the server holds it, without its resourceVersion: the
/// server's first re-apply of a new PersistentVolumeClaim writes it once more (the
/// resourceVersion moves, nothing returned changes), so the resourceVersion alone
/// would flag a no-op.
async fn snapshot(client: &kube::Client, objects: &[Manifest]) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for m in objects {
        let api = dynamic_api(
            client,
            m.body["apiVersion"].as_str().unwrap(),
            &m.kind,
            m.namespace.as_deref(),
        )
        .await;
        let mut obj = serde_json::to_value(api.get(&m.name).await.unwrap()).unwrap();
        obj["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("resourceVersion");
        out.push((m.file_name.clone(), obj));
    }
    out
}

/// Deletes what one spec applied (finalizers dropped: no controller here removes
/// them), so that the next spec's objects of the same names start afresh. Namespaces
/// stay: without the namespace controller a deleted one never goes away.
async fn remove(client: &kube::Client, objects: &[Manifest]) {
    for m in objects.iter().filter(|m| m.kind != "Namespace") {
        let api = dynamic_api(
            client,
            m.body["apiVersion"].as_str().unwrap(),
            &m.kind,
            m.namespace.as_deref(),
        )
        .await;
        let unfinalized = json!({"metadata": {"finalizers": null}});
        let _ = api
            .patch(
                &m.name,
                &PatchParams::default(),
                &Patch::Merge(&unfinalized),
            )
            .await;
        let _ = api.delete(&m.name, &DeleteParams::default()).await;
    }
}

fn namespaces(manifests: &[Manifest]) -> Vec<String> {
    let mut names: Vec<String> = manifests
        .iter()
        .filter_map(|m| m.namespace.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

#[tokio::test]
async fn every_example_is_accepted_and_a_second_apply_changes_nothing() {
    // Alone: the tenant-side objects land in fixed namespaces (`default`'s
    // `pxfa-validate` claim), where the controller tests' tenants, whose tenant
    // cluster is this same server, apply their own; "a second apply changes
    // nothing" holds only when no other tenant writes there meanwhile.
    let Some((server, _alone)) = harness::exclusive().await else {
        return;
    };
    let client = server.admin().await;
    let mut failures = Vec::new();
    let mut accepted = 0;
    for (mode, spec) in specs() {
        let manifests = bundle(&spec);
        for ns in namespaces(&manifests) {
            ensure_namespace(&client, &ns).await;
        }
        let applied = match apply(&client, &spec, &manifests).await {
            Ok(applied) => applied,
            Err(refused) => {
                failures.extend(refused.into_iter().map(|r| format!("[{mode}] {r}")));
                continue;
            }
        };
        let resources = manifests
            .iter()
            .filter(|m| matches!(m.form, Form::Resource))
            .count();
        if applied.len() != resources {
            failures.push(format!(
                "[{mode}] {} of {resources} objects applied",
                applied.len()
            ));
        }
        accepted += applied.len();
        let before = snapshot(&client, &applied).await;
        if let Err(refused) = apply(&client, &spec, &manifests).await {
            failures.extend(refused.into_iter().map(|r| format!("[{mode}] again: {r}")));
        }
        let after = snapshot(&client, &applied).await;
        for ((file, old), (_, new)) in before.iter().zip(&after) {
            if old != new {
                failures.push(format!(
                    "[{mode}] the second apply changed {file}: {old} -> {new}"
                ));
            }
        }
        remove(&client, &applied).await;
    }
    assert!(
        failures.is_empty(),
        "refused by the API server:\n{}",
        failures.join("\n")
    );
    assert!(accepted >= 60, "only {accepted} objects applied");
}

/// The check above can fail: a NodePool whose `upgradeType` is outside the CRD's enum
/// is refused by the server, and apply reports it as an error naming the field.
#[tokio::test]
async fn a_server_side_refusal_is_an_error_of_apply() {
    let Some((server, _turn)) = harness::shared().await else {
        return;
    };
    let client = server.admin().await;
    let spec = example("cloud-drive");
    let mut manifests: Vec<Manifest> = bundle(&spec)
        .into_iter()
        .filter(|m| m.kind == "NodePool")
        .collect();
    assert_eq!(manifests.len(), 1);
    ensure_namespace(&client, manifests[0].namespace.as_deref().unwrap()).await;
    manifests[0].body["spec"]["management"]["upgradeType"] = Value::String("Sideways".into());
    let refused = apply(&client, &spec, &manifests).await.unwrap_err();
    assert!(refused.join("\n").contains("upgradeType"), "{refused:?}");
}

/// A field pxfa applies that another manager has taken over (`oc apply
/// --server-side --force-conflicts` by someone else) is a 409 the report lists with
/// that manager, and stops the apply; `force_conflicts` takes it back.
#[tokio::test]
async fn a_field_another_manager_owns_is_a_conflict_until_forced() {
    let Some((server, _turn)) = harness::shared().await else {
        return;
    };
    let client = server.admin().await;
    let spec = example("cloud-drive");
    let ns = harness::namespace(&client, "conflict").await;
    let mut cm = bundle(&spec)
        .into_iter()
        .find(|m| m.kind == "ConfigMap")
        .expect("the multipath ConfigMap");
    cm.namespace = Some(ns.clone());
    cm.body["metadata"]["namespace"] = Value::String(ns);
    let manifests = vec![cm.clone()];
    apply(&client, &spec, &manifests).await.unwrap();
    let mut theirs = cm.body.clone();
    theirs["data"]["config"] = Value::String("edited by someone else".into());
    harness::apply_as(&client, "someone-else", &theirs).await;
    let refused = apply(&client, &spec, &manifests)
        .await
        .unwrap_err()
        .join("\n");
    assert!(
        refused.contains("conflict") && refused.contains("someone-else"),
        "{refused}"
    );
    let forced = ApplyOptions {
        force_conflicts: true,
        ..options()
    };
    let report = apply_manifests(&spec, &manifests, &client, Some(&client), &forced)
        .await
        .unwrap();
    assert!(
        report.conflicts.is_empty() && report.was_applied(&cm),
        "{report:?}"
    );
}
