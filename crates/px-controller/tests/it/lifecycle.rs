//! A real site's lifecycle through the controller: a brownfield shared array whose
//! foreign objects stay exactly as they were through create, a worker change and
//! delete; `hostedCluster.replicas` 4 → 5 → 4 under the growth rules (drives in use
//! keep their size, a removed worker's drives are retained); and dynamic drives the
//! management Portworx creates when their claims bind, tagged as they bind.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use flasharray::{ConnectionParams, FlashArray, ListParams, TagParams, TagResource};
use flasharray_mock::fada::SimClaim;
use flasharray_mock::foreign::ForeignView;
use flasharray_mock::{MockArray, MockClock, Seed, SimFada};
use px_controller::Outcome;
use px_controller::{ConditionStatus, ConditionType as C};
use serde_json::{Value, json};

use crate::fake::{DriveClaims, HCP_NS, NAME, World, tenant_object};

const POD: &str = "tenant-full";

/// The tenant's volumes: name → (provisioned, destroyed).
async fn drives(w: &World) -> BTreeMap<String, (u64, bool)> {
    w.array
        .list_volumes(&ListParams::all())
        .await
        .unwrap()
        .into_iter()
        .filter(|v| v.name.starts_with("tenant-full::"))
        .map(|v| (v.name, (v.provisioned, v.destroyed)))
        .collect()
}

fn vol(worker: u32, disk: &str) -> String {
    format!("{POD}::{POD}-w{worker:02}-{disk}")
}

fn cond(w: &World, t: C) -> (ConditionStatus, String, String) {
    let s = w.store.status(NAME);
    let c = s.get(t).unwrap_or_else(|| panic!("no {t:?} in {s:?}"));
    (c.status, c.reason.clone(), c.message.clone())
}

fn set_replicas(w: &World, n: u32) {
    w.store.edit(NAME, |o| {
        o["spec"]["hostedCluster"]["replicas"] = json!(n);
    });
}

async fn converged(w: &World, step: &str) {
    let outcome = w.reconcile().await;
    assert_eq!(
        outcome.as_ref().ok(),
        Some(&Outcome::Converged),
        "{step}: {outcome:?}: {:?}",
        w.store.status(NAME)
    );
}

/// The volumes connected to the management host group.
async fn on_host_group(w: &World) -> Vec<String> {
    let mut v: Vec<String> = w
        .array
        .list_connections(&ConnectionParams::default())
        .await
        .unwrap()
        .into_iter()
        .filter(|c| c.host_group.name.as_deref() == Some("hcp-mgmt"))
        .filter_map(|c| c.volume.name)
        .collect();
    v.sort();
    v.dedup();
    v
}

async fn pod_quota(w: &World) -> u64 {
    w.array.list_pods(&ListParams::names([POD])).await.unwrap()[0]
        .quota_limit
        .unwrap()
}

fn delete(w: &World) {
    w.store.edit(NAME, |o| {
        o["metadata"]["deletionTimestamp"] = json!("2026-12-01T11:00:00Z")
    });
}

// ------------------------------------------------------------------ brownfield

/// The valid-full tenant on the brownfield site: its three management nodes are the
/// site's (found by their FC ports, under other names), 4Ti over 4 workers.
fn brownfield_object() -> Value {
    let mut obj = tenant_object();
    obj["spec"]["storage"]["protocol"] = json!("fc");
    obj["spec"]["storage"]["capacity"] = json!("4Ti");
    obj["spec"]["management"]["nodes"] = json!([
        {"name": "worker-01", "wwns": ["21:00:f4:c7:aa:00:27:06", "21:00:f4:c7:aa:00:27:07"],
         "storageAddress": "10.40.0.101/20"},
        {"name": "worker-02", "wwns": ["21:00:f4:c7:aa:00:28:06", "21:00:f4:c7:aa:00:28:07"],
         "storageAddress": "10.40.0.102/20"},
        {"name": "worker-03", "wwns": ["21:00:f4:c7:aa:00:29:06", "21:00:f4:c7:aa:00:29:07"],
         "storageAddress": "10.40.0.103/20"},
    ]);
    obj
}

fn brownfield_array() -> MockArray {
    MockArray::builder()
        .clock(MockClock::manual(30 * 24 * 3600 * 1000))
        .seed(Seed::brownfield())
        .admin("pxfa-tenant-full")
        .build()
}

async fn foreign_unchanged(w: &World, before: &ForeignView, step: &str) {
    let now = ForeignView::read(&w.array, NAME).await.unwrap();
    assert_eq!(
        now.changes_since(before),
        Vec::<String>::new(),
        "{step}: a foreign object changed"
    );
    assert_eq!(now.to_json(), before.to_json(), "{step}");
}

#[tokio::test]
async fn brownfield_site_keeps_every_foreign_object_through_create_scale_and_delete() {
    let w = World::start_on(brownfield_object(), brownfield_array(), 2_000).await;
    let before = ForeignView::read(&w.array, NAME).await.unwrap();
    for key in [
        "host:px-mgmt-worker-01",
        "host:worker-02",
        "pod:tenant-blue",
        "pod:analytics",
        "volume:old-scratch",
        "host-group:esx-prod",
    ] {
        assert!(before.contains(key), "the seed holds {key}");
    }
    let hosts = w.array.list_hosts(&ListParams::all()).await.unwrap().len();

    converged(&w, "create").await;
    foreign_unchanged(&w, &before, "create").await;
    assert_eq!(
        drives(&w).await.len(),
        12,
        "4 workers x (2 data + 1 metadata)"
    );
    // The management nodes are the site's hosts, found by their ports: none created,
    // the decoy named worker-02 (another server) left out of the group.
    let after = w.array.list_hosts(&ListParams::all()).await.unwrap();
    assert_eq!(after.len(), hosts, "no host created");
    let mut members: Vec<&str> = after
        .iter()
        .filter(|h| h.host_group.name.as_deref() == Some("hcp-mgmt"))
        .map(|h| h.name.as_str())
        .collect();
    members.sort();
    assert_eq!(
        members,
        ["px-mgmt-worker-01", "px-mgmt-worker-02", "worker-03"]
    );
    assert_eq!(cond(&w, C::Ready).0, ConditionStatus::True);

    // Converged: a second reconcile writes nothing.
    w.array.reset_stats();
    converged(&w, "again").await;
    assert_eq!(w.array.stats().writes, 0, "{:?}", w.array.stats().per_op);

    // A worker more: its drives and connections only.
    w.vms.store(5, Ordering::SeqCst);
    set_replicas(&w, 5);
    converged(&w, "4 -> 5").await;
    foreign_unchanged(&w, &before, "4 -> 5").await;
    assert_eq!(drives(&w).await.len(), 15);

    // Delete: the tenant's objects are destroyed (recoverable), nothing foreign is.
    delete(&w);
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Deleted);
    assert!(!w.exists());
    foreign_unchanged(&w, &before, "delete").await;
    let d = drives(&w).await;
    assert_eq!(d.len(), 15);
    assert!(d.values().all(|(_, destroyed)| *destroyed), "{d:?}");
}

// ------------------------------------------------------------------ workers

/// The claim size the last apply of a management drive claim asked for.
async fn claimed(w: &World, claim: &str) -> Option<String> {
    let applied = w
        .fake
        .requests("PATCH", &format!("/persistentvolumeclaims/{claim}"))
        .await;
    applied.iter().rev().find_map(|r| {
        let body: Value = r.body_json().ok()?;
        body["spec"]["resources"]["requests"]["storage"]
            .as_str()
            .map(str::to_string)
    })
}

#[tokio::test]
async fn workers_4_5_4_keep_the_drives_in_use_and_retain_the_removed_one() {
    let w = World::start(tenant_object()).await;
    converged(&w, "create").await;
    let first = drives(&w).await;
    assert_eq!(first.len(), 12, "4 workers x (2 data + 1 metadata)");
    let (data, _) = first[&vol(0, "data0")];
    let (meta, _) = first[&vol(0, "meta")];
    let quota = pod_quota(&w).await;

    // 4 -> 5: a fresh division of the 8Ti over 5 workers would make every drive
    // smaller; the drives in use keep their size and the new worker gets it.
    w.vms.store(5, Ordering::SeqCst);
    set_replicas(&w, 5);
    converged(&w, "4 -> 5").await;
    let five = drives(&w).await;
    for (name, before) in &first {
        assert_eq!(five[name], *before, "{name} is never resized");
    }
    assert_eq!(five[&vol(4, "data0")], (data, false));
    assert_eq!(five[&vol(4, "data1")], (data, false));
    assert_eq!(five[&vol(4, "meta")], (meta, false));
    assert_eq!(five.len(), 15);
    assert!(
        pod_quota(&w).await > quota,
        "the quota rises with the worker"
    );
    let connected = on_host_group(&w).await;
    assert_eq!(connected, five.keys().cloned().collect::<Vec<_>>());
    // The claims the management cluster gets ask for the size in use.
    let gib = format!("{}Gi", data >> 30);
    for claim in ["tenant-full-w04-data0", "tenant-full-w00-data0"] {
        assert_eq!(claimed(&w, claim).await, Some(gib.clone()), "{claim}");
    }
    let status = w.store.status(NAME);
    assert_eq!(status.observed_generation, Some(2));
    let plan = status.last_plan.clone().unwrap();
    assert_eq!(
        (plan.create, plan.update, plan.delete),
        (6, 1, 0),
        "3 volumes and their connections, the quota: {plan:?}"
    );
    assert_eq!(status.array_objects.get("volume"), Some(&15));
    let (_, _, message) = cond(&w, C::ArrayReady);
    assert!(message.contains("(7 change(s) applied)"), "{message}");
    assert_eq!(
        cond(&w, C::Drifted).0,
        ConditionStatus::False,
        "a spec change"
    );
    let notes = w.events.notes("ArrayChangesApplied");
    assert!(
        notes.last().is_some_and(|n| n.contains(&vol(4, "data0"))),
        "{notes:?}"
    );

    // 5 -> 4: worker 4's drives are retained with their data: no array write, and
    // the status names them.
    let quota5 = pod_quota(&w).await;
    set_replicas(&w, 4);
    for step in ["5 -> 4", "5 -> 4, again"] {
        w.array.reset_stats();
        converged(&w, step).await;
        assert_eq!(w.array.stats().writes, 0, "{step}");
        assert_eq!(
            drives(&w).await,
            five,
            "{step}: nothing destroyed or resized"
        );
        assert_eq!(
            on_host_group(&w).await,
            connected,
            "{step}: nothing disconnected"
        );
        assert_eq!(pod_quota(&w).await, quota5, "{step}");
        let status = w.store.status(NAME);
        assert_eq!(status.observed_generation, Some(3));
        let plan = status.last_plan.clone().unwrap();
        assert_eq!((plan.create, plan.update, plan.delete), (0, 0, 0), "{step}");
        assert_eq!(status.array_objects.get("volume"), Some(&15), "{step}");
        let (state, reason, message) = cond(&w, C::ArrayReady);
        assert_eq!(
            (state, reason.as_str()),
            (ConditionStatus::True, "Converged")
        );
        assert!(
            message.contains("3 drive(s) of removed workers retained with their data")
                && message.contains("--release-removed-workers"),
            "{step}: {message}"
        );
        for d in ["data0", "data1", "meta"] {
            assert!(message.contains(&vol(4, d)), "{step}: {message}");
        }
        assert!(!message.contains(&vol(3, "data0")), "{message}");
        assert_eq!(cond(&w, C::Drifted).0, ConditionStatus::False, "{step}");
    }
}

// ------------------------------------------------------------------ dynamic drives

/// The valid-full tenant on Portworx 3.6.2, dynamic: the management Portworx creates
/// each drive volume in the tenant's pod when its claim binds (`attach: fada`).
fn dynamic_object() -> Value {
    let mut obj = tenant_object();
    obj["spec"]["portworx"]["version"] = json!("3.6.2");
    obj["spec"]["management"]["faFbDriver"] = json!(false);
    obj["spec"]["storage"]["provisioning"] = json!("dynamic");
    obj["spec"]["storage"]["attach"] = json!("fada");
    obj
}

/// The tenant's drive claims (name, size), from the desired state.
fn drive_claims(w: &World) -> Vec<(String, flasharray::Size)> {
    let obj: kube::api::DynamicObject = serde_json::from_value(w.store.get(NAME)).unwrap();
    let t = px_controller::load_tenant(&obj).unwrap();
    t.desired
        .drives
        .iter()
        .inspect(|d| assert_eq!(d.claim.namespace, HCP_NS))
        .map(|d| (d.claim.name.clone(), d.size))
        .collect()
}

/// The management Portworx binds `names`: it creates each one's volume in the pod,
/// then the claim reads `Bound`.
async fn bind(w: &World, claims: &DriveClaims, names: &[(String, flasharray::Size)]) {
    provision(w, names).await;
    for (name, _) in names {
        claims.bind(name);
    }
}

/// The management Portworx creates the volume of each of `names` in the pod (named
/// after the PV, [`SimFada::volume_name`]).
async fn provision(w: &World, names: &[(String, flasharray::Size)]) {
    let pod = flasharray::PodName::new(POD).unwrap();
    let sim: Vec<SimClaim> = names
        .iter()
        .map(|(name, size)| SimClaim {
            namespace: HCP_NS.into(),
            name: name.clone(),
            size: *size,
        })
        .collect();
    SimFada::new()
        .provision(&w.array, Some(&pod), &sim)
        .await
        .unwrap();
}

/// The claims whose volumes carry the tenant's tags (`pxfa.io claim=<ns>/<name>`).
async fn tagged(w: &World) -> Vec<String> {
    let tags = w
        .array
        .list_tags(TagResource::Volume, &TagParams::default())
        .await
        .unwrap();
    let mine: Vec<String> = tags
        .iter()
        .filter(|t| t.key == "tenant" && t.value == NAME)
        .filter_map(|t| t.resource.name.clone())
        .collect();
    let mut out: Vec<String> = tags
        .iter()
        .filter(|t| t.key == "claim" && t.resource.name.as_ref().is_some_and(|n| mine.contains(n)))
        .map(|t| {
            t.value
                .trim_start_matches(&format!("{HCP_NS}/"))
                .to_string()
        })
        .collect();
    out.sort();
    out
}

fn sorted(names: &[(String, flasharray::Size)]) -> Vec<String> {
    let mut v: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
    v.sort();
    v
}

#[tokio::test]
async fn dynamic_drives_are_tagged_as_their_claims_bind_and_then_converge() {
    let array = MockArray::builder().admin("pxfa-tenant-full").build();
    let w = World::start_on(dynamic_object(), array, 300).await;
    let claims = w.serve_drive_claims().await;
    let all = drive_claims(&w);
    assert_eq!(all.len(), 12, "4 workers x (2 data + 1 metadata)");

    // First reconcile: pxfa creates the pod and applies the claims; none is bound.
    assert_eq!(w.reconcile().await.unwrap(), Outcome::InProgress);
    assert!(all.iter().all(|(n, _)| claims.applied(n)));
    assert!(drives(&w).await.is_empty(), "pxfa creates no drive volume");
    assert_eq!(tagged(&w).await, Vec::<String>::new());
    let (state, reason, message) = cond(&w, C::ArrayReady);
    assert_eq!(
        (state, reason.as_str()),
        (ConditionStatus::False, "DrivesPending")
    );
    assert!(
        message.contains("12 drive(s) wait for their claims to bind"),
        "{message}"
    );
    let (state, reason, message) = cond(&w, C::ManagementApplied);
    assert_eq!(
        (state, reason.as_str()),
        (ConditionStatus::False, "Pending")
    );
    assert!(
        message.contains("tenant-full-w03-meta: phase Pending"),
        "{message}"
    );
    assert_eq!(cond(&w, C::Ready).1, "DrivesPending");
    let status = w.store.status(NAME);
    assert_eq!(
        status.array_objects,
        BTreeMap::from([("pod".to_string(), 1)])
    );

    // Workers 0 and 1 bind: their drives are found and tagged; the others pending.
    let (early, late): (Vec<_>, Vec<_>) = all
        .iter()
        .cloned()
        .partition(|(n, _)| n.contains("-w00-") || n.contains("-w01-"));
    bind(&w, &claims, &early).await;
    assert_eq!(w.reconcile().await.unwrap(), Outcome::InProgress);
    assert_eq!(tagged(&w).await, sorted(&early));
    assert_eq!(drives(&w).await.len(), 6, "the unbound have no volume yet");
    let (state, reason, message) = cond(&w, C::ArrayReady);
    assert_eq!(
        (state, reason.as_str()),
        (ConditionStatus::False, "DrivesPending")
    );
    assert!(
        message.contains("6 drive(s) wait") && message.contains("tenant-full-w02-data0"),
        "{message}"
    );
    assert!(!message.contains("tenant-full-w00-data0"), "{message}");
    assert_eq!(cond(&w, C::Ready).0, ConditionStatus::False);
    assert_eq!(
        cond(&w, C::Drifted).0,
        ConditionStatus::False,
        "tagging a drive that just bound is not drift"
    );

    // The rest bind: tagged, and the tenant converges.
    bind(&w, &claims, &late).await;
    converged(&w, "all bound").await;
    assert_eq!(tagged(&w).await, sorted(&all));
    assert_eq!(drives(&w).await.len(), 12);
    assert_eq!(cond(&w, C::ArrayReady).1, "Converged");
    assert_eq!(cond(&w, C::Drifted).0, ConditionStatus::False);
    assert_eq!(w.store.status(NAME).last_plan.unwrap().create, 6, "6 tags");
    w.array.reset_stats();
    converged(&w, "again").await;
    assert_eq!(w.array.stats().writes, 0);
    assert_eq!(w.store.status(NAME).array_objects.get("volume"), Some(&12));
    let reasons = w.events.reasons();
    assert!(!reasons.iter().any(|r| r == "DriftRepaired"), "{reasons:?}");
    assert_eq!(
        reasons.iter().filter(|r| *r == "Converged").count(),
        1,
        "{reasons:?}"
    );

    // Deleting: the drives are the management Portworx's to release (#36 N6), so the
    // delete holds them, and their pod, and waits, saying so.
    delete(&w);
    w.array.reset_stats();
    assert_eq!(
        w.reconcile().await.unwrap(),
        Outcome::Waiting("DynamicDrivesHeld")
    );
    assert_eq!(w.array.stats().writes, 0, "nothing destroyed on the array");
    assert!(w.exists(), "the finalizer stays");
    let d = drives(&w).await;
    assert!(d.values().all(|(_, destroyed)| !destroyed), "{d:?}");
    let (state, reason, message) = cond(&w, C::Degraded);
    assert_eq!(
        (state, reason.as_str()),
        (ConditionStatus::True, "DynamicDrivesHeld")
    );
    assert!(
        message.contains("12 dynamic drive(s)")
            && message.contains("reclaim policy to Delete")
            && message.contains("spec.destroyDynamicDrives: true"),
        "{message}"
    );
    assert!(
        w.events.reasons().iter().any(|r| r == "DynamicDrivesHeld"),
        "{:?}",
        w.events.reasons()
    );
    // Portworx releases them (reclaim policy Delete, claims deleted: its CSI
    // DeleteVolume destroys each volume); the next delete takes the pod and ends.
    let names: Vec<flasharray::VolumeName> = d
        .keys()
        .map(|n| flasharray::VolumeName::new(n.as_str()).unwrap())
        .collect();
    w.array
        .patch_volumes(&names, &flasharray::models::VolumePatch::destroy(), false)
        .await
        .unwrap();
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Deleted);
    assert!(!w.exists(), "the finalizer is gone");
    let pods = w.array.list_pods(&ListParams::names([POD])).await.unwrap();
    assert!(pods.iter().all(|p| p.destroyed), "{pods:?}");
}

/// spec.destroyDynamicDrives: the delete destroys the dynamic drives on the array
/// (recoverably), for a management Portworx that is gone, and ends at once.
#[tokio::test]
async fn destroy_dynamic_drives_takes_them_on_the_array() {
    let array = MockArray::builder().admin("pxfa-tenant-full").build();
    let mut obj = dynamic_object();
    obj["spec"]["destroyDynamicDrives"] = json!(true);
    let w = World::start_on(obj, array, 300).await;
    let claims = w.serve_drive_claims().await;
    let all = drive_claims(&w);
    assert_eq!(w.reconcile().await.unwrap(), Outcome::InProgress);
    bind(&w, &claims, &all).await;
    converged(&w, "all bound").await;
    delete(&w);
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Deleted);
    assert!(!w.exists(), "the finalizer is gone");
    let d = drives(&w).await;
    assert_eq!(d.len(), 12);
    assert!(d.values().all(|(_, destroyed)| *destroyed), "{d:?}");
}

#[tokio::test]
async fn deleting_before_the_drives_are_tagged_tags_then_destroys_them() {
    let array = MockArray::builder().admin("pxfa-tenant-full").build();
    // Destroyed on the array (spec.destroyDynamicDrives) so that the tagging shows
    // in what the delete takes; by default it holds them (the test above).
    let mut obj = dynamic_object();
    obj["spec"]["destroyDynamicDrives"] = json!(true);
    let w = World::start_on(obj, array, 300).await;
    let claims = w.serve_drive_claims().await;
    let all = drive_claims(&w);
    assert_eq!(w.reconcile().await.unwrap(), Outcome::InProgress);
    bind(&w, &claims, &all).await;
    assert!(tagged(&w).await.is_empty(), "no reconcile tagged them yet");
    // Deleted before a reconcile tagged them: the delete finds them through their
    // bound claims, tags them, and the destroy takes them with the pod.
    delete(&w);
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Deleted);
    assert!(!w.exists(), "the finalizer is gone");
    let d = drives(&w).await;
    assert_eq!(d.len(), 12);
    assert!(d.values().all(|(_, destroyed)| *destroyed), "{d:?}");
    assert_eq!(
        tagged(&w).await,
        sorted(&all),
        "tagged as the tenant's first"
    );
}

#[tokio::test]
async fn deleting_when_no_bound_claim_names_the_drives_keeps_the_finalizer_and_them() {
    let array = MockArray::builder().admin("pxfa-tenant-full").build();
    let w = World::start_on(dynamic_object(), array, 300).await;
    let _claims = w.serve_drive_claims().await;
    let all = drive_claims(&w);
    assert_eq!(w.reconcile().await.unwrap(), Outcome::InProgress);
    // The volumes are in the pod, and no bound claim says whose they are (their
    // claims never read Bound, or went with the hosted control plane namespace).
    provision(&w, &all).await;
    // The destroy goes by tags only, so the pod still holds them and cannot go;
    // nothing is lost and the finalizer stays (docs/controller.md, Known limits).
    delete(&w);
    let e = w.reconcile().await.expect_err("the pod is not empty");
    assert_eq!(e.reason, px_controller::Reason::ArrayWriteFailed);
    assert!(w.exists(), "the finalizer stays");
    let d = drives(&w).await;
    assert_eq!(d.len(), 12);
    assert!(d.values().all(|(_, destroyed)| !destroyed), "{d:?}");
    assert_eq!(cond(&w, C::Degraded).1, "ArrayWriteFailed");
}

#[tokio::test]
async fn claims_that_bind_during_the_first_reconcile_are_tagged_before_ready() {
    let array = MockArray::builder().admin("pxfa-tenant-full").build();
    let w = std::sync::Arc::new(World::start_on(dynamic_object(), array, 2_000).await);
    let claims = w.serve_drive_claims().await;
    let all = drive_claims(&w);
    // The management Portworx binds each claim as soon as it is applied, while the
    // reconcile that applied it waits for the claims to be Bound.
    let run = {
        let w = w.clone();
        tokio::spawn(async move { w.reconcile().await })
    };
    while !all.iter().all(|(n, _)| claims.applied(n)) {
        assert!(
            !run.is_finished(),
            "the reconcile ended before applying the claims"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    bind(&w, &claims, &all).await;
    // Its plan saw no claim: the drives are on the array now but not the tenant's
    // yet, so it is not Ready (Ready would wait for the drift check to tag them,
    // and a delete meanwhile would leave them behind).
    assert_eq!(run.await.unwrap().unwrap(), Outcome::InProgress);
    assert_eq!(cond(&w, C::ManagementApplied).0, ConditionStatus::True);
    assert_eq!(cond(&w, C::Ready).1, "DrivesPending");
    assert_eq!(tagged(&w).await, Vec::<String>::new());
    // The requeue tags them all and converges; that is not drift.
    converged(&w, "requeue").await;
    assert_eq!(tagged(&w).await, sorted(&all));
    assert_eq!(cond(&w, C::Drifted).0, ConditionStatus::False);
    let reasons = w.events.reasons();
    assert!(
        reasons.iter().any(|r| r == "ArrayChangesApplied"),
        "{reasons:?}"
    );
    assert!(!reasons.iter().any(|r| r == "DriftRepaired"), "{reasons:?}");
}
