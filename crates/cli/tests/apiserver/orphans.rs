//! `pxfa orphans --kubeconfig` through the binary reading real objects: the site
//! of px-cluster's fake-server orphans test (`tests/it/orphans.rs`: claims, PVs,
//! VMs and KubeVirt's pods, pxfa's and others', beside the brownfield array) made
//! as real objects, and the same findings asserted: every cluster kind found,
//! nothing foreign listed, nothing written. As the admin (the CLI user's reads of
//! cluster-wide kinds are px-cluster's to settle).
//!
//! Fake only: the cleanup. Detaching a VM disk is KubeVirt's `removevolume`
//! subresource, served by virt-api, which this server has not; and without
//! kube-controller-manager the PVC/PV protection finalizers keep deleted claims.
//! The tenant is `fixtures/tenants/valid-full.yaml` renamed, so that the objects
//! other tests leave on the shared server are not its.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use flasharray_mock::{OTHER_TENANT, blue_volume};
use px_topology::Cluster;
use serde_json::{Value, json};

use crate::fake_sites::support::rendered;
use crate::fake_sites::{command, fixture, spec_of};
use crate::harness::{self, versions};
use crate::site::load;

const TENANT: &str = "rs-orph";

fn labels(tenant: &str) -> Value {
    json!({"app.kubernetes.io/managed-by": "pxfa", "pxfa.io/tenant": tenant})
}

fn pvc(ns: &str, name: &str, labels: Value, pv: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": name, "namespace": ns, "labels": labels},
           "spec": {"volumeName": pv}, "status": {"phase": "Bound"}})
}

fn pv(name: &str, claim_ns: &str, claim: &str, phase: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
           "spec": {"claimRef": {"namespace": claim_ns, "name": claim}}, "status": {"phase": phase}})
}

fn vm(ns: &str, name: &str, index: Option<u32>, claim: &str) -> Value {
    let annotations = index.map_or(
        json!({}),
        |i| json!({"pxfa.io/worker-index": i.to_string()}),
    );
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
           "metadata": {"name": name, "namespace": ns, "annotations": annotations},
           "spec": {"template": {"spec": {"domain": {"devices": {"disks": []}},
               "volumes": [{"name": "pxdata0", "persistentVolumeClaim": {"claimName": claim}}]}}}})
}

/// A pod of KubeVirt's (`kubevirt.io: app`), owned by pod `owner`, mounting `claim`.
fn pod(ns: &str, name: &str, app: &str, owner: Option<&str>, claim: Option<&str>) -> Value {
    let owners: Vec<Value> = owner
        .map(|o| json!({"apiVersion": "v1", "kind": "Pod", "name": o, "uid": format!("uid-{o}")}))
        .into_iter()
        .collect();
    let volumes: Vec<Value> = claim
        .map(|c| json!({"name": "v", "persistentVolumeClaim": {"claimName": c}}))
        .into_iter()
        .collect();
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns, "labels": {"kubevirt.io": app},
                        "ownerReferences": owners},
           "spec": {"containers": [{"name": "c", "image": "registry.invalid/c"}],
                    "automountServiceAccountToken": false, "volumes": volumes}})
}

/// The ServiceAccount admission needs `default` in a pod's namespace, which
/// kube-controller-manager (not run here) makes on a cluster.
fn default_service_account(ns: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ServiceAccount",
           "metadata": {"name": "default", "namespace": ns}})
}

/// `valid-full.yaml` as tenant [`TENANT`], written to `dir`.
fn spec_file(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture("valid-full.yaml"))
        .unwrap()
        .replace("tenant-full", TENANT);
    let path = dir.join(format!("{TENANT}.yaml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The fake test's site: (objects, the blue tenant's PV name, the hosted control
/// plane namespace).
fn site(spec: &px_topology::TenantStorage) -> (Vec<Value>, String, String) {
    let ns = spec.hcp_namespace();
    let claims: Vec<String> = rendered(spec)
        .into_iter()
        .filter(|m| m.kind == "PersistentVolumeClaim" && m.cluster == Cluster::Management)
        .filter(|m| m.name.contains("-w"))
        .map(|m| m.name)
        .collect();
    let gone = claims.iter().find(|c| c.contains("-w01-data0")).unwrap();
    let kept = claims.iter().find(|c| c.contains("-w00-data0")).unwrap();
    let blue_pv = format!("pvc-{}", blue_volume(0).rsplit_once("-pvc-").unwrap().1);
    let mut objects = vec![
        default_service_account(&ns),
        default_service_account("apps"),
    ];
    objects.extend(
        claims
            .iter()
            .filter(|c| *c != gone)
            .map(|c| pvc(&ns, c, labels(TENANT), &format!("pv-{c}"))),
    );
    objects.extend([
        pvc(
            "clusters-blue",
            "blue-w00-data0",
            labels(OTHER_TENANT),
            &blue_pv,
        ),
        pvc("apps", "db", json!({}), "rs-orph-pv-db"),
        pv(&blue_pv, "clusters-blue", "blue-w00-data0-old", "Released"),
        pv("rs-orph-pv-foreign", "apps", "old-db", "Released"),
        pv("rs-orph-pv-db", "apps", "db", "Bound"),
        vm(&ns, &format!("{TENANT}-workers-1"), Some(1), gone),
        vm(&ns, &format!("{TENANT}-workers-0"), Some(0), kept),
        vm("apps", "someone-elses", None, "missing"),
        pod(&ns, "virt-launcher-w0", "virt-launcher", None, None),
        pod(
            &ns,
            "hp-volume-gone",
            "hotplug-disk",
            Some("virt-launcher-gone"),
            Some(kept),
        ),
        pod(
            &ns,
            "hp-volume-live",
            "hotplug-disk",
            Some("virt-launcher-w0"),
            Some(kept),
        ),
        pod(
            "apps",
            "hp-volume-foreign",
            "hotplug-disk",
            None,
            Some("db"),
        ),
    ]);
    (objects, blue_pv, ns)
}

#[tokio::test]
async fn orphans_reads_real_objects_as_the_fake_test_finds_them() {
    let Some((server, _turn)) = harness::shared().await else {
        return;
    };
    let admin = server.admin().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_file(dir.path());
    let (objects, blue_pv, ns) = site(&spec_of(&spec));
    let loaded = load(&admin, objects).await;
    let before = versions(&admin, &loaded).await;

    // The brownfield array, saved by a read (a new simulated array is saved once).
    let state = dir.path().join("state.json");
    let seeded = command(&["--array", "sim", "--sim-seed", "brownfield", "--sim-state"])
        .arg(&state)
        .args(["volume", "list", "-o", "name"])
        .output()
        .unwrap();
    assert!(seeded.status.success(), "{seeded:?}");
    let array_before = std::fs::read(&state).unwrap();
    let mut cmd = command(&["--array", "sim", "--sim-state"]);
    cmd.arg(&state).args(["orphans", "-f"]).arg(&spec);
    cmd.arg("--kubeconfig").arg(&server.kubeconfig);
    cmd.args(["-o", "json"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "orphans -o json: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(versions(&admin, &loaded).await, before, "the scan wrote");
    assert_eq!(
        std::fs::read(&state).unwrap(),
        array_before,
        "the scan changed the array"
    );

    let orphans = report["orphans"].as_array().unwrap();
    let listed: Vec<&str> = orphans
        .iter()
        .map(|o| o["object"].as_str().unwrap())
        .collect();
    // Others' objects on the shared server are not counted: only this site's and
    // the brownfield array's.
    let mine = |o: &&Value| {
        let object = o["object"].as_str().unwrap();
        o["tenant"] == format!("{}/{OTHER_TENANT}", flasharray_mock::OTHER_TENANT_NAMESPACE)
            || [format!("{ns}/"), "clusters-blue/".into(), blue_pv.clone()]
                .iter()
                .any(|m| object.contains(m.as_str()))
    };
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for o in orphans.iter().filter(mine) {
        *counts.entry(o["kind"].as_str().unwrap()).or_default() += 1;
    }
    assert_eq!(
        counts,
        [
            ("hotplug-pod-without-vm", 1),
            ("leftover-claim", 1),
            ("released-volume", 1),
            ("tenant-gone", 7),
            ("vm-disk-without-claim", 1),
        ]
        .into(),
        "{report:#}"
    );
    for want in [
        format!("PersistentVolume {blue_pv}"),
        "PersistentVolumeClaim clusters-blue/blue-w00-data0".to_string(),
        format!("VirtualMachine {ns}/{TENANT}-workers-1 disk pxdata0"),
        format!("Pod {ns}/hp-volume-gone"),
    ] {
        assert!(listed.contains(&want.as_str()), "{want} in {listed:#?}");
    }
    for foreign in [
        "apps/",
        "rs-orph-pv-foreign",
        "rs-orph-pv-db",
        "someone-elses",
        "hp-volume-live",
        "workers-0",
    ] {
        assert!(
            !listed.iter().any(|l| l.contains(foreign)),
            "{foreign} listed: {listed:#?}"
        );
    }
}
