//! The API server stopped and started (`kube-apiserver.sh stop DIR`, `start DIR`:
//! etcd's data kept) while the controller, under the shipped RBAC, is in the middle
//! of a reconcile; and the two answers a real server gives to stale clients: a watch
//! from a resourceVersion it no longer holds ends in 410 Gone, and a write guarded
//! by a stale resourceVersion is a 409.
//!
//! The tenants are kubevirt-csi ones, which make nothing on the array: a reference
//! tenant counts the array writes of one reconcile without faults (none), and a
//! second tenant is caught mid-reconcile, its management objects applied and its
//! HostedCluster without a kubeconfig (HyperShift is held back), when the server
//! goes down for longer than the Lease. It converges, and its array has the writes
//! of the reference: nothing. A cloud-drive tenant's API token across the same
//! restart: `token_restart.rs`.

use std::collections::BTreeMap;
use std::time::Duration;

use flasharray_mock::{MockArray, Op};
use futures_util::{StreamExt, TryStreamExt};
use kube::Api;
use kube::api::{
    DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use px_controller::tenant_storage_resource;

use crate::controller::{
    Held, Window, add_tenant, assert_nothing_forbidden_outside, endpoint, install_deploy,
    play_hypershift, ready, service_account_kubeconfig, spawn_controller, start_array, tenant,
    terminate, wait_for, wait_for_leader,
};
use crate::harness::{self, namespace};

/// The array's write calls, per operation.
pub(crate) fn writes(array: &MockArray) -> BTreeMap<Op, u64> {
    array
        .stats()
        .per_op
        .into_iter()
        .filter(|(op, _)| op.is_write())
        .collect()
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
    let controller = spawn_controller(&kubeconfig, &ns, dir.path(), "restart-a");
    wait_for_leader(&admin, &["restart-a"], Duration::from_secs(30)).await;

    add_tenant(&admin, &tenant("ref", &ns, &endpoint(&ref_sim), "fa-ref")).await;
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

    // Mid-reconcile: the array written, the HostedCluster without a kubeconfig.
    add_tenant(&admin, &tenant("mid", &ns, &endpoint(&sim), "fa-mid")).await;
    let waiting = |objs: &[DynamicObject]| {
        objs.iter().any(|o| {
            o.metadata.name.as_deref() == Some("mid")
                && o.data["status"]["conditions"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|c| c["reason"] == "TenantKubeconfigMissing"))
        })
    };
    wait_for(
        &admin,
        &ns,
        dir.path(),
        "the second tenant waiting for its kubeconfig",
        Duration::from_secs(60),
        waiting,
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

    // The restart window, measured: from before the stop to the server's /readyz
    // ok (start_again waits for it). 403s the controller logs within it are the
    // starting server's, not missing rules.
    let from = jiff::Timestamp::now();
    server.stop();
    // Longer than the Lease (6 s): the leader loses it and aborts its reconcile.
    tokio::time::sleep(Duration::from_secs(8)).await;
    server.start_again();
    let restarting = Window {
        from,
        to: jiff::Timestamp::now(),
    };
    let admin = server.admin().await;
    server.assert_ready().await;
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
        "the restart made the controller write on the array what a reconcile without it does not"
    );
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
    // The controller retried what the starting server refused: nothing after it.
    assert_nothing_forbidden_outside(dir.path(), &[restarting]);
    terminate(controller);
    hypershift.abort();
    ref_sim.shutdown().await;
    sim.shutdown().await;
}

/// A watch from before the restart ends in 410 Gone (the new server's watch cache
/// starts after it), and a status update guarded by a stale resourceVersion (the
/// object moved on since it was read) is a 409.
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

    // Another writer moves the object on (the controller writes status only when it
    // changes), then a status update carrying the resourceVersion read before.
    let touch = serde_json::json!({"metadata": {"annotations": {"pxfa.io/test-touched": "1"}}});
    tenants
        .patch("ref", &PatchParams::default(), &Patch::Merge(&touch))
        .await
        .unwrap();
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
