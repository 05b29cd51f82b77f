//! The API server stopped and started (`kube-apiserver.sh stop DIR`, `start DIR`:
//! etcd's data kept) while the controller, under the shipped RBAC, is in the middle
//! of a reconcile; and the two answers a real server gives to stale clients: a watch
//! from a resourceVersion it no longer holds ends in 410 Gone, and a write guarded
//! by a stale resourceVersion is a 409.
//!
//! The tenants are cloud-drive ones: their array writes are a pod and the tenant's
//! API token, which the token journal holds until the tenant's `px-pure-secret` does.
//! A reference tenant on its own array counts the array writes of one reconcile
//! without faults; a second tenant of the same shape, on an array of its own, is
//! caught after its array writes and before its HostedCluster has a kubeconfig
//! (HyperShift is held back: the token is only in the journal), and the server goes
//! down for longer than the Lease. It converges with the same array writes as the
//! reference (nothing written twice, one token made), and the token its
//! `px-pure-secret` holds is the array's token of the tenant's user (none lost).
//!
//! The test plays the operators the controller waits for: OLM (a Subscription's
//! ClusterServiceVersion `Succeeded`), Portworx (StorageCluster `Online`) and
//! nmstate (NNCP `Available`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use flasharray_mock::{MockArray, Op};
use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{
    DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use px_controller::tenant_storage_resource;
use serde_json::{Value, json};

use crate::controller::{
    Held, add_tenant, assert_nothing_forbidden, endpoint, install_deploy, play_hypershift, ready,
    service_account_kubeconfig, spawn_controller, start_array, tenant, terminate, wait_for,
    wait_for_leader,
};
use crate::harness::{self, apply_as, dynamic_api, namespace, workspace};

const TOKEN_USER: &str = "pxfa-tenant-cd";

/// Tenant `name`: the cloud-drive example renamed, its HostedCluster in `ns`, its
/// Portworx in `px-<name>` of the tenant cluster, on the array of Secret `creds`.
fn cloud_drive(name: &str, ns: &str, endpoint: &str, creds: &str) -> Value {
    let path = workspace().join("examples/tenant-cloud-drive.yaml");
    let mut obj: Value = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    obj["metadata"] = json!({"name": name, "namespace": ns});
    obj["spec"]["hostedCluster"]["name"] = json!(name);
    obj["spec"]["hostedCluster"]["namespace"] = json!(ns);
    obj["spec"]["array"]["endpoint"] = json!(endpoint);
    obj["spec"]["credentialsSecret"] = json!({"name": creds, "caKey": "ca.crt"});
    obj["spec"]["portworx"]["namespace"] = json!(format!("px-{name}"));
    obj
}

/// OLM, Portworx and nmstate as far as the controller waits for them: every
/// Subscription gets a `Succeeded` ClusterServiceVersion, every StorageCluster
/// phase `Online`, every NNCP `Available`. Runs until aborted; errors (a stopped
/// server) are retried.
async fn play_operators(admin: kube::Client) {
    loop {
        let _ = play_operators_once(&admin).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn play_operators_once(admin: &kube::Client) -> Result<(), kube::Error> {
    let status = |v: Value| Patch::Merge(json!({"status": v}));
    let pp = PatchParams::default();
    let nncps = dynamic_api(
        admin,
        "nmstate.io/v1",
        "NodeNetworkConfigurationPolicy",
        None,
    )
    .await;
    for o in nncps.list(&ListParams::default()).await?.items {
        if o.data["status"]["conditions"].is_null() {
            let available = json!({"conditions": [{"type": "Available", "status": "True",
                "reason": "SuccessfullyConfigured", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
            nncps
                .patch_status(&o.metadata.name.unwrap(), &pp, &status(available))
                .await?;
        }
    }
    let subs = dynamic_api(admin, "operators.coreos.com/v1alpha1", "Subscription", None).await;
    for o in subs.list(&ListParams::default()).await?.items {
        let ns = o.metadata.namespace.clone().unwrap();
        if o.data["status"]["installedCSV"].is_string() {
            continue;
        }
        let csv_name = "portworx-operator.v0.0.0-test";
        let csv = json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
            "metadata": {"name": csv_name, "namespace": ns},
            "spec": {"displayName": "Portworx (played by the test)", "install": {"strategy": "deployment"}}});
        apply_as(admin, "olm", &csv).await;
        let csvs = dynamic_api(
            admin,
            "operators.coreos.com/v1alpha1",
            "ClusterServiceVersion",
            Some(&ns),
        )
        .await;
        csvs.patch_status(csv_name, &pp, &status(json!({"phase": "Succeeded"})))
            .await?;
        let subs_ns = dynamic_api(
            admin,
            "operators.coreos.com/v1alpha1",
            "Subscription",
            Some(&ns),
        )
        .await;
        subs_ns
            .patch_status(
                &o.metadata.name.unwrap(),
                &pp,
                &status(json!({"installedCSV": csv_name, "lastUpdated": "2026-01-01T00:00:00Z"})),
            )
            .await?;
    }
    let stcs = dynamic_api(admin, "core.libopenstorage.org/v1", "StorageCluster", None).await;
    for o in stcs.list(&ListParams::default()).await?.items {
        if o.data["status"]["phase"] != "Online" {
            let ns = o.metadata.namespace.clone().unwrap();
            let api = dynamic_api(
                admin,
                "core.libopenstorage.org/v1",
                "StorageCluster",
                Some(&ns),
            )
            .await;
            api.patch_status(
                &o.metadata.name.unwrap(),
                &pp,
                &status(json!({"phase": "Online"})),
            )
            .await?;
        }
    }
    Ok(())
}

/// The API token in tenant `name`'s `px-pure-secret` (its Portworx namespace).
async fn delivered_token(admin: &kube::Client, name: &str) -> String {
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), &format!("px-{name}"));
    let secret = secrets.get("px-pure-secret").await.expect("px-pure-secret");
    let pure = &secret.data.expect("data")["pure.json"].0;
    let pure: Value = serde_json::from_slice(pure).unwrap();
    pure["FlashArrays"][0]["APIToken"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The array's write calls, per operation.
fn writes(array: &MockArray) -> BTreeMap<Op, u64> {
    array
        .stats()
        .per_op
        .into_iter()
        .filter(|(op, _)| op.is_write())
        .collect()
}

async fn until(what: &str, deadline: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < deadline,
            "{what}: not within {deadline:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_server_restarted_mid_reconcile_converges_without_a_second_array_write() {
    let Some((server, _alone)) = harness::exclusive().await else {
        return;
    };
    let admin = server.admin().await;
    install_deploy(&admin).await;
    let dir = tempfile::tempdir().unwrap();
    let ns = namespace(&admin, "restart").await;
    let kubeconfig = service_account_kubeconfig(&admin, server, dir.path()).await;
    let (ref_sim, ref_array) = start_array(&admin, &ns, "fa-ref").await;
    let (sim, array) = start_array(&admin, &ns, "fa-mid").await;
    let held = Held::default();
    held.lock().unwrap().insert("mid".to_string());
    let hypershift = tokio::spawn(play_hypershift(
        admin.clone(),
        ns.clone(),
        std::fs::read_to_string(&server.kubeconfig).unwrap(),
        held.clone(),
    ));
    let operators = tokio::spawn(play_operators(admin.clone()));
    let controller = spawn_controller(&kubeconfig, &ns, dir.path(), "restart-a");
    wait_for_leader(&admin, &["restart-a"], Duration::from_secs(30)).await;

    add_tenant(
        &admin,
        &cloud_drive("ref", &ns, &endpoint(&ref_sim), "fa-ref"),
    )
    .await;
    let one = |name: &'static str| {
        move |objs: &[DynamicObject]| {
            objs.iter()
                .any(|o| o.metadata.name.as_deref() == Some(name) && ready(o))
        }
    };
    wait_for(
        &admin,
        &ns,
        dir.path(),
        "the reference tenant Ready",
        Duration::from_secs(90),
        one("ref"),
    )
    .await;
    let reference = writes(&ref_array);
    assert!(
        !reference.is_empty(),
        "the reference tenant wrote on its array"
    );

    // Mid-reconcile: the array written, the HostedCluster without a kubeconfig.
    add_tenant(&admin, &cloud_drive("mid", &ns, &endpoint(&sim), "fa-mid")).await;
    until(
        "the second tenant's array writes",
        Duration::from_secs(60),
        || writes(&array) == reference,
    )
    .await;
    let tenants: Api<DynamicObject> =
        Api::namespaced_with(admin.clone(), &ns, &tenant_storage_resource());
    let before = tenants.list(&ListParams::default()).await.unwrap();
    let stale_rv = before.metadata.resource_version.clone().unwrap();
    let stale_obj = before
        .items
        .iter()
        .find(|o| o.metadata.name.as_deref() == Some("ref"))
        .unwrap()
        .clone();

    server.stop();
    // Longer than the Lease (6 s): the leader loses it and aborts its reconcile.
    tokio::time::sleep(Duration::from_secs(8)).await;
    server.start_again();
    let admin = server.admin().await;
    operators.abort();
    let operators = tokio::spawn(play_operators(admin.clone()));
    held.lock().unwrap().clear();
    wait_for_leader(&admin, &["restart-a"], Duration::from_secs(60)).await;
    let both = |objs: &[DynamicObject]| objs.len() == 2 && objs.iter().all(ready);
    wait_for(
        &admin,
        &ns,
        dir.path(),
        "both tenants Ready after the restart",
        Duration::from_secs(120),
        both,
    )
    .await;
    assert_eq!(
        writes(&array),
        reference,
        "the restart made the controller write something on the array twice"
    );
    for (name, array) in [("ref", &ref_array), ("mid", &array)] {
        let token = delivered_token(&admin, name).await;
        assert_eq!(
            array.api_token_owner(&token).as_deref(),
            Some(TOKEN_USER),
            "{name}'s px-pure-secret holds a token its array does not know"
        );
    }
    // A tenant added after the restart is seen: the controller's watch came back.
    add_tenant(&admin, &tenant("late", &ns, &endpoint(&ref_sim), "fa-ref")).await;
    let three = |objs: &[DynamicObject]| objs.len() == 3 && objs.iter().all(ready);
    wait_for(
        &admin,
        &ns,
        dir.path(),
        "a tenant added after the restart Ready",
        Duration::from_secs(90),
        three,
    )
    .await;

    stale_clients_get_410_and_409(&admin, &ns, &stale_rv, stale_obj).await;
    assert_nothing_forbidden(dir.path());
    terminate(controller);
    hypershift.abort();
    operators.abort();
    ref_sim.shutdown().await;
    sim.shutdown().await;
}

/// A watch from before the restart ends in 410 Gone (the new server's watch cache
/// starts after it), and a status write guarded by a stale resourceVersion is a 409.
async fn stale_clients_get_410_and_409(
    admin: &kube::Client,
    ns: &str,
    stale_rv: &str,
    mut stale_obj: DynamicObject,
) {
    let tenants: Api<DynamicObject> =
        Api::namespaced_with(admin.clone(), ns, &tenant_storage_resource());
    let mut events = tenants
        .watch(&WatchParams::default().timeout(10), stale_rv)
        .await
        .expect("a watch is opened")
        .boxed();
    let mut gone = None;
    while let Some(event) = events.try_next().await.expect("the watch stream") {
        if let WatchEvent::Error(e) = event {
            gone = Some(e);
            break;
        }
    }
    let gone = gone.expect("a watch from before the restart ends in an error event");
    assert_eq!(
        (gone.code, gone.reason.as_str()),
        (410, "Expired"),
        "{gone:?}"
    );

    stale_obj.data["status"]["observedGeneration"] = serde_json::json!(1);
    let err = tenants
        .replace_status("ref", &PostParams::default(), &stale_obj)
        .await
        .expect_err("a status write with a stale resourceVersion");
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409),
        "{err}"
    );
}
