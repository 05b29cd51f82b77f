//! The tenant pipeline's cluster side (`px_cluster::TenantClusters`) against a
//! management and a tenant fake API server and an in-memory array: the whole
//! pipeline from the observation to the clusters, the one rule for a kept token and
//! a complete run, the token journal's durable-copy hooks in their order around the
//! clusters, and a new token refused where nothing could keep it.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use flasharray_mock::MockArray;
use px_cluster::tenant_clusters::delivery;
use px_cluster::{
    ApplyReport, ClusterClients, ClustersReport, Notice, TenantClusters, TenantClustersOptions,
};
use px_topology::token_journal::{JournalError, MemTokenJournal, TokenJournal};
use px_topology::{
    ApplyError, ApplyOptions, ArrayFacts, Cluster, Manifest, PlanOptions, Site, Tenant,
};
use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path_regex};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::support::*;

const CSV: &str = "portworx-operator.v25.2.0";

/// A journal in memory whose durable copy's hooks are recorded in order, as the
/// controller's Secret gets them.
#[derive(Debug, Default)]
struct Recorder {
    entries: MemTokenJournal,
    calls: Mutex<Vec<String>>,
}

impl Recorder {
    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }
    fn note(&self, s: String) {
        self.calls.lock().unwrap().push(s);
    }
}

#[async_trait]
impl TokenJournal for Recorder {
    fn memory(&self) -> Option<&MemTokenJournal> {
        Some(&self.entries)
    }
    fn drops_stale_entries(&self) -> bool {
        true
    }
    async fn persist_intent(&self, user: &str) -> Result<(), JournalError> {
        self.note(format!("persist_intent {user}"));
        Ok(())
    }
    async fn persist_token(&self, user: &str) -> Result<(), JournalError> {
        self.note(format!("persist_token {user}"));
        Ok(())
    }
    async fn persist_delivered(&self, user: &str) -> Result<(), JournalError> {
        self.note(format!("persist_delivered {user}"));
        Ok(())
    }
}

/// A tenant cluster that echoes every apply. When `ready`, its Portworx operator's
/// CSV is Succeeded and its StorageCluster Online; else both stay installing.
async fn tenant_cluster(fake: &Fake, manifests: &[Manifest], ready: bool) {
    mount_discovery(&fake.server, manifests).await;
    Mock::given(method("PATCH"))
        .and(header("content-type", "application/apply-patch+yaml"))
        .respond_with(|r: &Request| {
            ResponseTemplate::new(200).set_body_json(r.body_json::<Value>().unwrap())
        })
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex("/subscriptions/[^/]+$"))
        .respond_with(|r: &Request| {
            ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
                "metadata": {"name": r.url.path().rsplit('/').next().unwrap()},
                "status": {"state": "AtLatestKnown", "installedCSV": CSV}}))
        })
        .mount(&fake.server)
        .await;
    let (csv_phase, phase) = if ready {
        ("Succeeded", "Online")
    } else {
        ("Installing", "Initializing")
    };
    Mock::given(method("GET"))
        .and(path_regex("/clusterserviceversions/[^/]+$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
            "metadata": {"name": CSV}, "status": {"phase": csv_phase}})))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .respond_with(move |r: &Request| {
            ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": "v1", "kind": "Object",
                "metadata": {"name": r.url.path().rsplit('/').next().unwrap()},
                "status": {"phase": phase, "conditions": [{"type": "Available", "status": "True"}]}}))
        })
        .mount(&fake.server)
        .await;
}

/// The cloud-drive tenant, its array (with the token user) and both clusters.
struct World {
    tenant: Tenant,
    array: MockArray,
    management: Fake,
    tenant_fake: Fake,
}

impl World {
    async fn start(ready: bool) -> World {
        let spec = cloud_drive_spec();
        let manifests = rendered(&spec);
        let management = Fake::start().await;
        mount_ready_management(&management.server, &manifests).await;
        let tenant_fake = Fake::start().await;
        tenant_cluster(&tenant_fake, &manifests, ready).await;
        let array = MockArray::new();
        array.add_admin(&spec.token_user());
        let tenant = Tenant::from_spec(spec, "tenant-cd.yaml".as_ref()).expect("tenant");
        World {
            tenant,
            array,
            management,
            tenant_fake,
        }
    }

    async fn clients(&self, with_tenant: bool) -> ClusterClients {
        ClusterClients {
            management: self.management.client().await,
            tenant: if with_tenant {
                Some(self.tenant_fake.client().await)
            } else {
                None
            },
        }
    }
}

fn options() -> TenantClustersOptions {
    TenantClustersOptions {
        wait: fast_wait(400),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_new_token_reaches_the_tenant_cluster_and_the_journal_lets_go() {
    let w = World::start(true).await;
    let journal = Arc::new(Recorder::default());
    let notices = Mutex::new(Vec::new());
    let notify = |n: Notice<'_>| notices.lock().unwrap().push(format!("{n:?}"));
    let side = TenantClusters::new(Some(w.clients(true).await), options(), Box::new(notify));
    let site = Site {
        journal: Some(journal.clone() as Arc<dyn TokenJournal>),
        ..Site::array(&w.array)
    };
    let planned = w
        .tenant
        .observe(site)
        .await
        .expect("observe")
        .plan(&PlanOptions::default());
    let applied = planned
        .apply(&side, ApplyOptions::default(), &|_| {})
        .await
        .expect("apply");
    assert!(applied.report().is_success(), "{:#?}", applied.report());
    let token = applied.facts().api_token.expect("a token was created");
    let (delivery, let_go) = applied.to_clusters(&side).await.expect("clusters");
    assert!(
        delivery.token_kept && delivery.complete,
        "{:#?}",
        delivery.report
    );
    assert!(let_go.expect("the journal let go").is_ok());
    let user = w.tenant.spec.token_user();
    assert_eq!(
        journal.calls(),
        [
            format!("persist_intent {user}"),
            format!("persist_token {user}"),
            format!("persist_delivered {user}")
        ]
    );
    assert!(journal.load(&user).expect("journal").is_none());
    // The token went to the tenant's px-pure-secret and nowhere else.
    let secret = w
        .tenant_fake
        .requests("PATCH", "/secrets/px-pure-secret")
        .await;
    assert_eq!(secret.len(), 1);
    let body = String::from_utf8_lossy(&secret[0].body).to_string();
    assert!(body.contains(secrecy::ExposeSecret::expose_secret(&token)));
    assert!(
        w.management
            .requests("PATCH", "/secrets/px-pure-secret")
            .await
            .is_empty()
    );
    let shown = notices.lock().unwrap().join("\n");
    assert!(
        !shown.contains(secrecy::ExposeSecret::expose_secret(&token)),
        "{shown}"
    );
}

#[tokio::test]
async fn a_tenant_cluster_still_installing_keeps_the_token_but_is_not_complete() {
    let w = World::start(false).await;
    let journal = Arc::new(MemTokenJournal::new());
    let side = TenantClusters::new(Some(w.clients(true).await), options(), Box::new(|_| {}));
    let site = Site {
        journal: Some(journal.clone() as Arc<dyn TokenJournal>),
        ..Site::array(&w.array)
    };
    let planned = w
        .tenant
        .observe(site)
        .await
        .expect("observe")
        .plan(&PlanOptions::default());
    let applied = planned
        .apply(&side, ApplyOptions::default(), &|_| {})
        .await
        .expect("apply");
    let (delivery, let_go) = applied.to_clusters(&side).await.expect("clusters");
    // The secret (step 20) was accepted before the operator or the StorageCluster
    // (steps 25 and 30) stopped the run.
    assert!(delivery.token_kept, "{:#?}", delivery.report);
    assert!(!delivery.complete);
    assert!(delivery.report.applied.stopped_at.is_some());
    assert!(let_go.is_some());
}

#[tokio::test]
async fn without_a_tenant_cluster_a_new_token_is_refused_before_any_write() {
    let w = World::start(true).await;
    let side = TenantClusters::new(Some(w.clients(false).await), options(), Box::new(|_| {}));
    let planned = w
        .tenant
        .observe(Site::array(&w.array))
        .await
        .expect("observe")
        .plan(&PlanOptions::default());
    let before = w.array.stats();
    let refused = planned.apply(&side, ApplyOptions::default(), &|_| {}).await;
    assert!(matches!(refused, Err(ApplyError::TokenWouldBeLost(_))));
    assert_eq!(w.array.stats().writes, before.writes, "nothing was written");
    assert!(w.management.requests("PATCH", "").await.is_empty());
}

#[tokio::test]
async fn a_token_kept_elsewhere_is_not_delivered_by_a_run_without_the_tenant_cluster() {
    let w = World::start(true).await;
    let side = TenantClusters::new(Some(w.clients(false).await), options(), Box::new(|_| {}));
    let planned = w
        .tenant
        .observe(Site::array(&w.array))
        .await
        .expect("observe")
        .plan(&PlanOptions::default())
        .with_token_copy(true);
    let applied = planned
        .apply(&side, ApplyOptions::default(), &|_| {})
        .await
        .expect("a token kept elsewhere may be created");
    let (delivery, let_go) = applied.to_clusters(&side).await.expect("clusters");
    assert!(!delivery.token_kept && !delivery.complete);
    assert!(let_go.is_none(), "the journal keeps the token");
    // The management cluster got its part; the tenant's was reported as skipped.
    assert!(!w.management.requests("PATCH", "").await.is_empty());
    assert!(
        delivery
            .report
            .applied
            .skipped
            .iter()
            .any(|s| s.object.contains("px-pure-secret"))
    );
}

fn tenant_secret() -> Manifest {
    let spec = cloud_drive_spec();
    let token = SecretString::from("not-a-real-token");
    px_topology::pure_secret(&spec, Some(&token))
}

fn facts_with_token() -> ArrayFacts {
    ArrayFacts {
        api_token: Some(SecretString::from("not-a-real-token")),
        ..ArrayFacts::default()
    }
}

#[test]
fn the_token_is_kept_only_when_the_tenant_accepted_its_secret_and_nothing_conflicted() {
    let secret = tenant_secret();
    assert_eq!(secret.cluster, Cluster::Tenant);
    let manifests = vec![secret.clone()];
    let accepted = ApplyReport {
        applied: vec![format!(
            "Secret {}/{}",
            secret.namespace.as_deref().unwrap(),
            secret.name
        )],
        ..ApplyReport::default()
    };
    let report = |applied: ApplyReport| ClustersReport {
        applied,
        drives: None,
    };
    let ok = delivery(
        &manifests,
        report(accepted.clone()),
        true,
        &facts_with_token(),
    );
    assert!(
        ok.token_kept && ok.complete,
        "the report names the secret as applied"
    );
    // No tenant cluster, or no token this run: nothing was delivered.
    assert!(
        !delivery(
            &manifests,
            report(accepted.clone()),
            false,
            &facts_with_token()
        )
        .token_kept
    );
    assert!(
        !delivery(
            &manifests,
            report(accepted.clone()),
            true,
            &ArrayFacts::default()
        )
        .token_kept
    );
    // A bundle without the tenant's secret delivers no token.
    assert!(!delivery(&[], report(accepted.clone()), true, &facts_with_token()).token_kept);
    // The secret not applied (the run stopped before it).
    let stopped = ApplyReport {
        stopped_at: Some("management step 80".to_string()),
        ..ApplyReport::default()
    };
    let d = delivery(&manifests, report(stopped), true, &facts_with_token());
    assert!(!d.token_kept && !d.complete);
    // A conflict stops the run before the journal may let go.
    let conflicted = ApplyReport {
        conflicts: vec![px_cluster::Conflict {
            object: "Namespace portworx".to_string(),
            fields: vec![],
            message: "conflict".to_string(),
        }],
        ..accepted
    };
    let d = delivery(&manifests, report(conflicted), true, &facts_with_token());
    assert!(!d.token_kept && !d.complete);
}

#[tokio::test]
async fn failed_drive_tagging_leaves_the_run_incomplete() {
    let w = World::start(true).await;
    let planned = w
        .tenant
        .observe(Site::array(&w.array))
        .await
        .expect("observe")
        .plan(&PlanOptions::default());
    let failed = px_topology::ApplyReport {
        skipped: vec![px_topology::SkippedChange {
            change: planned.plan().changes[0].clone(),
            reason: "an earlier change failed".to_string(),
        }],
        ..Default::default()
    };
    assert!(!failed.is_success());
    let d = delivery(
        &[],
        ClustersReport {
            applied: ApplyReport::default(),
            drives: Some(failed),
        },
        true,
        &ArrayFacts::default(),
    );
    assert!(!d.complete);
    let d = delivery(
        &[],
        ClustersReport {
            applied: ApplyReport::default(),
            drives: Some(Default::default()),
        },
        true,
        &ArrayFacts::default(),
    );
    assert!(d.complete);
}

#[tokio::test]
async fn the_storage_nic_the_worker_vms_report_is_rendered_for_both_adapters() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/tenant-cloud-drive.yaml"
    ))
    .unwrap();
    let spec = px_topology::parse_valid_spec(&text).expect("valid example");
    let (ns, nad) = (
        spec.hcp_namespace(),
        spec.spec.network.as_ref().unwrap().nad_name.clone(),
    );
    let management = Fake::start().await;
    let vmi = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
           "metadata": {"name": format!("{}-abcde", spec.node_pool()), "namespace": ns},
           "spec": {"networks": [{"name": "storage", "multus": {"networkName": format!("{ns}/{nad}")}}]},
           "status": {"interfaces": [{"name": "storage", "interfaceName": "enp7s0"}]}});
    Mock::given(method("GET"))
        .and(path_regex("/virtualmachineinstances$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceList", "metadata": {},
            "items": [vmi]})))
        .mount(&management.server)
        .await;
    let manifests = rendered(&spec);
    mount_ready_management(&management.server, &manifests).await;
    let tenant_fake = Fake::start().await;
    tenant_cluster(&tenant_fake, &manifests, true).await;
    let tenant = Tenant::from_spec(spec, "tenant-cloud-drive.yaml".as_ref()).expect("tenant");
    let notices = Mutex::new(Vec::new());
    let side = TenantClusters::new(
        Some(ClusterClients {
            management: management.client().await,
            tenant: Some(tenant_fake.client().await),
        }),
        options(),
        Box::new(|n: Notice<'_>| {
            if let Notice::GuestInterfaceReplaced { specified, found } = n {
                notices
                    .lock()
                    .unwrap()
                    .push(format!("{specified} -> {found}"));
            }
        }),
    );
    let delivery =
        px_topology::ClusterSide::apply_manifests(&side, &tenant, &ArrayFacts::default())
            .await
            .expect("clusters");
    assert!(delivery.complete, "{:#?}", delivery.report);
    assert_eq!(*notices.lock().unwrap(), ["enp2s0 -> enp7s0"]);
    let applied: Vec<String> = tenant_fake
        .requests("PATCH", "/storageclusters/")
        .await
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).to_string())
        .collect();
    assert!(!applied.is_empty());
    assert!(
        applied
            .iter()
            .all(|b| b.contains("enp7s0") && !b.contains("enp2s0")),
        "{applied:?}"
    );
}

#[tokio::test]
async fn the_drives_of_claims_bound_on_the_management_cluster_are_tagged_once() {
    use flasharray_mock::SimFada;
    use flasharray_mock::fada::SimClaim;
    use px_cluster::ClaimBindings;
    use px_cluster::tenant_clusters::{DriveTagging, tag_bound_drives};

    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/tenant-direct-access.yaml"
    ))
    .unwrap();
    let spec = px_topology::parse_valid_spec(&text).expect("valid example");
    let tenant = Tenant::from_spec(spec, "tenant-direct-access.yaml".as_ref()).expect("tenant");
    assert!(
        !tenant.desired.drives.is_empty(),
        "the example's drives are dynamic"
    );
    let array = MockArray::new();
    array.add_admin(&tenant.spec.token_user());
    // The array part: the pod; the drives stay pending until their claims bind.
    let side = TenantClusters::new(None, options(), Box::new(|_| {}));
    let planned = tenant
        .observe(Site::array(&array))
        .await
        .expect("observe")
        .plan(&PlanOptions::default())
        .with_token_copy(true);
    let applied = planned
        .apply(&side, ApplyOptions::default(), &|_| {})
        .await
        .expect("apply");
    assert!(applied.report().is_success(), "{:#?}", applied.report());
    // The management Portworx creates a volume per claim and binds the claims.
    let pod = tenant.desired.drives[0].pod.clone();
    let claims: Vec<SimClaim> = tenant
        .desired
        .drives
        .iter()
        .map(|d| SimClaim {
            namespace: d.claim.namespace.clone(),
            name: d.claim.name.clone(),
            size: d.size,
        })
        .collect();
    SimFada::new()
        .provision(&array, pod.as_ref(), &claims)
        .await
        .expect("provision");
    let keys: Vec<(String, String)> = claims
        .iter()
        .map(|c| (c.namespace.clone(), c.name.clone()))
        .collect();
    let bindings = SimFada::new()
        .bound(&array, pod.as_ref(), &keys)
        .await
        .expect("bindings");
    assert_eq!(bindings.len(), claims.len());
    let management = Fake::start().await;
    for b in &bindings {
        Mock::given(method("GET"))
            .and(path_regex(format!(
                "^/api/v1/namespaces/{}/persistentvolumeclaims/{}$",
                b.namespace, b.name
            )))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": b.name, "namespace": b.namespace},
                "spec": {"volumeName": b.pv},
                "status": {"phase": "Bound"}})))
            .mount(&management.server)
            .await;
    }
    let locator = ClaimBindings::new(management.client().await);
    let drives = DriveTagging {
        array: &array,
        concurrency: 4,
    };
    let shown = Mutex::new(Vec::new());
    let notices = |n: Notice<'_>| {
        if let Notice::DrivesTagging { changes } = n {
            shown.lock().unwrap().push(changes);
        }
    };
    let tagged = tag_bound_drives(drives, &tenant, &locator, &notices)
        .await
        .expect("tagging")
        .expect("the found drives were tagged");
    assert!(tagged.is_success(), "{tagged:#?}");
    assert_eq!(tagged.applied.len(), claims.len());
    assert_eq!(*shown.lock().unwrap(), [claims.len()]);
    // Tagged once: the next run finds nothing to do.
    let again = tag_bound_drives(drives, &tenant, &locator, &notices)
        .await
        .expect("tagging again");
    assert!(again.is_none(), "{again:#?}");
}
