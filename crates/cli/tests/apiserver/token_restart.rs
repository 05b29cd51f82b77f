//! No API token lost when the API server stops mid-reconcile: a cloud-drive tenant
//! (the array makes it a one-time API token, shown only in the answer that creates
//! it) whose token creation is held on the array (`Faults::hold`) while
//! `kube-apiserver.sh stop DIR` runs. The array answers once the server refuses
//! connections: the token exists, its value is in the controller's memory only (the
//! journal Secret holds the intent, written before the call, and cannot be written
//! now), and the leader loses the Lease (the server stays down 8 s, longer than the
//! Lease). Leading again after `start DIR`, the controller forgets what it
//! remembered of token journals (another replica may have led meanwhile;
//! `px_controller::controller::lead`) and reads the journal Secret: an intent and a
//! token created in its window, an interrupted creation whose value never left the
//! array. It replaces that token (deleted, made again: the array writes nothing
//! else) and delivers the new one. The tenant's px-pure-secret held one token value
//! over its whole life (watched from the restart; it did not exist before), the one
//! token the array user has; the journal Secret is gone; the tenant is Ready. The
//! px-controller `faults.rs` and `token_journal.rs` tests check the same against the
//! fake API server.
//!
//! Nobody but the controller creates the HostedCluster: its first reconcile holds
//! the token back (no tenant cluster to keep it in yet) and applies the array
//! objects and the HostedCluster; HyperShift (played) gives the HostedCluster its
//! admin kubeconfig, and a later reconcile creates the token.
//!
//! The server is the management and the tenant cluster. The controller reaches the
//! tenant cluster with the HostedCluster's admin kubeconfig (HyperShift's, played
//! here), not as the user `pxfa` of `deploy/rbac/tenant.yaml`, so only
//! `deploy/rbac/management.yaml` is applied; the tenant's Portworx objects go to a
//! Portworx namespace of this test's own (`spec.portworx.namespace`), apart from
//! the `portworx` namespace the other tests' tenants use. The operators the tenant
//! waits for (nmstate, OLM, Portworx) are played by the test: they set the status
//! fields pxfa reads.

use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flasharray::FlashArray;
use flasharray_mock::{MockArray, Op};
use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{
    ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
    WatchEvent, WatchParams,
};
use serde_json::{Value, json};

use crate::controller::{
    Held, Window, add_tenant, assert_nothing_forbidden_outside, controller_logs, endpoint,
    install_deploy, play_hypershift, ready, service_account_kubeconfig, spawn_controller,
    start_array, terminate, wait_for, wait_for_leader,
};
use crate::harness::{self, Server, namespace, workspace};
use crate::restart::writes;

const NAME: &str = "cd-outage";
const USER: &str = "pxfa-cd-outage";
const CREDS: &str = "fa-cd";
const JOURNAL: &str = "pxfa-token-journal-cd-outage";

/// Tenant `name`: the cloud-drive example renamed, its HostedCluster in `ns`, on the
/// array of Secret `creds`, its tenant Portworx in namespace `px_ns`.
fn cloud_drive_tenant(ns: &str, endpoint: &str, px_ns: &str) -> Value {
    let path = workspace().join("examples/tenant-cloud-drive.yaml");
    let mut obj: Value = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    obj["metadata"] = json!({"name": NAME, "namespace": ns});
    obj["spec"]["hostedCluster"]["name"] = json!(NAME);
    obj["spec"]["hostedCluster"]["namespace"] = json!(ns);
    obj["spec"]["storage"]["pod"] = json!(NAME);
    obj["spec"]["array"] = json!({"endpoint": endpoint, "tokenUser": USER});
    obj["spec"]["credentialsSecret"] = json!({"name": CREDS, "caKey": "ca.crt"});
    obj["spec"]["portworx"]["namespace"] = json!(px_ns);
    obj
}

/// A fixed kind's API (no discovery: it runs while the server is down too).
fn fixed(
    client: &kube::Client,
    (group, version, kind, plural): (&str, &str, &str, &str),
    ns: Option<&str>,
) -> Api<DynamicObject> {
    let ar =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    }
}

const NNCP: (&str, &str, &str, &str) = (
    "nmstate.io",
    "v1",
    "NodeNetworkConfigurationPolicy",
    "nodenetworkconfigurationpolicies",
);
const SUBSCRIPTION: (&str, &str, &str, &str) = (
    "operators.coreos.com",
    "v1alpha1",
    "Subscription",
    "subscriptions",
);
const CSV: (&str, &str, &str, &str) = (
    "operators.coreos.com",
    "v1alpha1",
    "ClusterServiceVersion",
    "clusterserviceversions",
);
const STORAGE_CLUSTER: (&str, &str, &str, &str) = (
    "core.libopenstorage.org",
    "v1",
    "StorageCluster",
    "storageclusters",
);

/// The operators a cloud-drive tenant waits for, as far as pxfa reads them: nmstate
/// (every NodeNetworkConfigurationPolicy `Available`), OLM (each Subscription in
/// `px_ns` installed a ClusterServiceVersion, `Succeeded`) and the Portworx operator
/// (each StorageCluster in `px_ns` `Online`). Runs until aborted; failures (a
/// stopped server) are tried again.
async fn play_operators(admin: kube::Client, px_ns: String) {
    loop {
        let _ = operators_once(&admin, &px_ns).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn operators_once(admin: &kube::Client, px_ns: &str) -> Result<(), kube::Error> {
    let status = |v: Value| Patch::Merge(json!({ "status": v }));
    let params = PatchParams::default();
    let nncps = fixed(admin, NNCP, None);
    for p in nncps.list(&ListParams::default()).await?.items {
        let available = p.data["status"]["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "Available"));
        if !available {
            let condition = json!({"type": "Available", "status": "True",
                "reason": "SuccessfullyConfigured", "message": "played by the test"});
            let name = p.metadata.name.unwrap();
            nncps
                .patch_status(&name, &params, &status(json!({"conditions": [condition]})))
                .await?;
        }
    }
    let subs = fixed(admin, SUBSCRIPTION, Some(px_ns));
    let csvs = fixed(admin, CSV, Some(px_ns));
    for s in subs.list(&ListParams::default()).await?.items {
        if s.data["status"]["installedCSV"].is_string() {
            continue;
        }
        let name = s.metadata.name.unwrap();
        let csv_name = format!("{name}.v0.0.1");
        let csv = json!({"apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "ClusterServiceVersion",
            "metadata": {"name": csv_name, "namespace": px_ns},
            "spec": {"displayName": "played by the test",
                     "install": {"strategy": "deployment", "spec": {"deployments": []}}}});
        match csvs
            .create(
                &PostParams::default(),
                &serde_json::from_value(csv).unwrap(),
            )
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => return Err(e),
        }
        csvs.patch_status(&csv_name, &params, &status(json!({"phase": "Succeeded"})))
            .await?;
        let now = jiff::Timestamp::now().to_string();
        let installed =
            json!({"installedCSV": csv_name, "state": "AtLatestKnown", "lastUpdated": now});
        subs.patch_status(&name, &params, &status(installed))
            .await?;
    }
    let clusters = fixed(admin, STORAGE_CLUSTER, Some(px_ns));
    for c in clusters.list(&ListParams::default()).await?.items {
        if c.data["status"]["phase"] != "Online" {
            let name = c.metadata.name.unwrap();
            clusters
                .patch_status(&name, &params, &status(json!({"phase": "Online"})))
                .await?;
        }
    }
    Ok(())
}

/// The API server's address, from the admin kubeconfig.
fn address(server: &Server) -> SocketAddr {
    let config: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&server.kubeconfig).unwrap()).unwrap();
    let url = config["clusters"][0]["cluster"]["server"].as_str().unwrap();
    url.trim_start_matches("https://").parse().unwrap()
}

/// Waits until `done`; on timeout fails with `what` and the controller's log.
async fn until(dir: &std::path::Path, what: &str, deadline: Duration, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        if start.elapsed() > deadline {
            let log = controller_logs(dir);
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            panic!(
                "{what}: not within {deadline:?}\ncontroller log (last lines, newest first):\n{}",
                tail.join("\n")
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The journal Secret's `state`, if the Secret exists (never its token).
async fn journal_state(admin: &kube::Client, ns: &str) -> Option<String> {
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), ns);
    let secret = secrets.get_opt(JOURNAL).await.unwrap()?;
    let state = secret.data?.remove("state")?;
    Some(String::from_utf8(state.0).unwrap())
}

/// The creation times of the array user's tokens (one per token).
async fn tokens(array: &MockArray) -> Vec<Option<u64>> {
    let a: &dyn FlashArray = array;
    a.list_api_tokens(&[USER.to_string()], false)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.api_token.created_at)
        .collect()
}

/// The API token in the tenant's px-pure-secret (`pure.json`), if any.
async fn delivered(admin: &kube::Client, px_ns: &str) -> Option<String> {
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), px_ns);
    token_of(&secrets.get_opt("px-pure-secret").await.unwrap()?)
}

/// Stops the server while the token creation is held, lets the array answer once
/// the server refuses connections, keeps it down 8 s and starts it again: the
/// restart window, as measured.
async fn restart_while_held(
    server: &'static Server,
    array: &MockArray,
    dir: &std::path::Path,
) -> Window {
    let from = jiff::Timestamp::now();
    let addr = address(server);
    let stopping = tokio::task::spawn_blocking(|| server.stop());
    until(
        dir,
        "the API server refusing connections",
        Duration::from_secs(30),
        || TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err(),
    )
    .await;
    array.faults().release(Op::CreateApiToken);
    stopping.await.unwrap();
    let created = Instant::now();
    while tokens(array).await.is_empty() {
        assert!(
            created.elapsed() < Duration::from_secs(10),
            "the token creation answered"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Longer than the Lease (6 s): the leader loses it and aborts its reconcile.
    tokio::time::sleep(Duration::from_secs(8)).await;
    server.start_again();
    Window {
        from,
        to: jiff::Timestamp::now(),
    }
}

/// The token values the tenant's px-pure-secret held, in order (consecutive
/// repeats once).
type Deliveries = Arc<Mutex<Vec<String>>>;

fn token_of(secret: &Secret) -> Option<String> {
    let pure = secret.data.as_ref()?.get("pure.json")?;
    let pure: Value = serde_json::from_slice(&pure.0).ok()?;
    pure["FlashArrays"][0]["APIToken"]
        .as_str()
        .map(str::to_string)
}

/// Lists the Secrets of `px_ns` and watches them from that list on, noting each
/// token value the px-pure-secret holds; runs until aborted (or the watch ends,
/// which the test checks it did not).
async fn watch_deliveries(admin: kube::Client, px_ns: String, seen: Deliveries) {
    let secrets: Api<Secret> = Api::namespaced(admin, &px_ns);
    let note = |s: &Secret| {
        if s.metadata.name.as_deref() != Some("px-pure-secret") {
            return;
        }
        let mut seen = seen.lock().unwrap();
        if let Some(t) = token_of(s)
            && seen.last() != Some(&t)
        {
            seen.push(t);
        }
    };
    let list = secrets.list(&ListParams::default()).await.unwrap();
    list.items.iter().for_each(&note);
    let rv = list.metadata.resource_version.unwrap();
    let mut events = secrets
        .watch(&WatchParams::default().timeout(290), &rv)
        .await
        .unwrap()
        .boxed();
    while let Ok(Some(event)) = events.try_next().await {
        match event {
            WatchEvent::Added(s) | WatchEvent::Modified(s) => note(&s),
            WatchEvent::Error(_) => return,
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_created_while_the_api_server_is_down_is_replaced_and_delivered_once() {
    let Some((server, _alone)) = harness::exclusive().await else {
        return;
    };
    let admin = server.admin().await;
    install_deploy(&admin).await;
    let dir = tempfile::tempdir().unwrap();
    let ns = namespace(&admin, "token-restart").await;
    let px_ns = format!("{ns}-portworx");
    let kubeconfig = service_account_kubeconfig(&admin, server, dir.path()).await;
    let (sim, array) = start_array(&admin, &ns, CREDS).await;
    array.add_admin(USER);
    array.faults().hold(Op::CreateApiToken);
    let hypershift = tokio::spawn(play_hypershift(
        admin.clone(),
        ns.clone(),
        std::fs::read_to_string(&server.kubeconfig).unwrap(),
        Held::default(),
    ));
    let operators = tokio::spawn(play_operators(admin.clone(), px_ns.clone()));
    let controller = spawn_controller(&kubeconfig, &ns, dir.path(), "token-a");
    wait_for_leader(&admin, &["token-a"], Duration::from_secs(30)).await;
    let tenant = cloud_drive_tenant(&ns, &endpoint(&sim), &px_ns);
    add_tenant(&admin, &tenant).await;

    // The token creation reached the array and is held there, before its effect;
    // the intent was journaled before the call.
    until(
        dir.path(),
        "the token creation on the array",
        Duration::from_secs(180),
        || array.stats().op(Op::CreateApiToken) == 1,
    )
    .await;
    assert_eq!(
        journal_state(&admin, &ns).await.as_deref(),
        Some("creating"),
        "the intent is in the journal Secret before the token is created"
    );
    assert!(tokens(&array).await.is_empty(), "no token while held");
    assert_eq!(
        delivered(&admin, &px_ns).await,
        None,
        "nothing delivered yet"
    );
    let before = writes(&array);

    let restarting = restart_while_held(server, &array, dir.path()).await;
    let admin = server.admin().await;
    let seen = Deliveries::default();
    let watching = tokio::spawn(watch_deliveries(admin.clone(), px_ns.clone(), seen.clone()));
    server.assert_ready().await;
    wait_for_leader(&admin, &["token-a"], Duration::from_secs(60)).await;
    wait_for(
        &admin,
        &ns,
        dir.path(),
        "the cloud-drive tenant Ready after the restart",
        Duration::from_secs(180),
        |objs| objs.len() == 1 && objs.iter().all(ready),
    )
    .await;

    let mut replaced = before.clone();
    *replaced.entry(Op::CreateApiToken).or_default() += 1;
    *replaced.entry(Op::DeleteApiToken).or_default() += 1;
    assert_eq!(
        writes(&array),
        replaced,
        "the array writes after the held token creation are other than its replacement; the controller's log:\n{}",
        controller_logs(dir.path())
    );
    assert_eq!(tokens(&array).await.len(), 1, "one token of {USER}");
    let held = delivered(&admin, &px_ns)
        .await
        .expect("the tenant's px-pure-secret holds an API token");
    assert_eq!(
        array.api_token_owner(&held).as_deref(),
        Some(USER),
        "the delivered token logs in as {USER}"
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        (seen.len(), seen.last() == Some(&held)),
        (1, true),
        "the px-pure-secret held one token value, the one delivered (values not shown)"
    );
    assert!(
        !watching.is_finished(),
        "the watch of the px-pure-secret ran throughout"
    );
    watching.abort();
    assert_eq!(
        journal_state(&admin, &ns).await,
        None,
        "the journal Secret is gone once the token is delivered"
    );
    assert_nothing_forbidden_outside(dir.path(), &[restarting]);
    terminate(controller);
    hypershift.abort();
    operators.abort();
    sim.shutdown().await;
}
