//! The controller's orphan counts (#24 item 4): one pass over the fake management
//! cluster (the TenantStorage list, its credentials Secret, empty cluster kinds)
//! and the brownfield MockArray, whose tenant-blue no TenantStorage names (its
//! objects are tenant-gone orphans), plus a host pxfa tagged whose node is gone
//! (host-without-node). Both kinds show in `/metrics` and raise a Warning Event;
//! nothing is written to the array or the cluster; an unchanged second pass adds no
//! Event, a new orphan of a kind adds one.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use flasharray::models::{HostPost, Tag};
use flasharray::{FlashArray, HostName, TagResource};
use flasharray_mock::{MockArray, Seed};
use px_cluster::WaitOptions;
use px_controller::{ArrayPool, Metrics, OrphanCounts, context, load_tenant, orphan_pass};
use px_topology::orphans::{Evidence, Known, OrphanKind, ScanOptions, scan};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::fake::{MockConnector, NS, TOKEN, tenant_object};
use crate::objects::{mount_empty_orphan_lists, secret};
use crate::support::Fake;

const ENDPOINT: &str = "fa1-mgmt.example.net";

fn list(kind: &str, items: &[Value]) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "apiVersion": "v1", "kind": format!("{kind}List"), "metadata": {}, "items": items}))
}

/// The fake: the TenantStorage list, its Secret, the cluster kinds the scan
/// reads (empty), and Events accepted as sent.
async fn mount(fake: &Fake) {
    Mock::given(method("GET"))
        .and(path("/apis/pxfa.io/v1alpha1/tenantstorages"))
        .respond_with(list("TenantStorage", &[tenant_object()]))
        .mount(&fake.server)
        .await;
    let pure = json!({"FlashArrays": [{"MgmtEndPoint": ENDPOINT, "APIToken": TOKEN}]}).to_string();
    Mock::given(method("GET"))
        .and(path(format!("/api/v1/namespaces/{NS}/secrets/fa1-creds")))
        .respond_with(ResponseTemplate::new(200).set_body_json(secret(
            NS,
            "fa1-creds",
            &[],
            &[("pure.json", &pure)],
        )))
        .mount(&fake.server)
        .await;
    mount_empty_orphan_lists(&fake.server).await;
    Mock::given(method("POST"))
        .and(path(format!(
            "/apis/events.k8s.io/v1/namespaces/{NS}/events"
        )))
        .respond_with(|r: &Request| {
            ResponseTemplate::new(201).set_body_json(r.body_json::<Value>().unwrap())
        })
        .mount(&fake.server)
        .await;
    Mock::given(method("PATCH"))
        .and(path_regex(format!(
            "^/apis/events.k8s.io/v1/namespaces/{NS}/events/"
        )))
        .respond_with(|r: &Request| {
            ResponseTemplate::new(200).set_body_json(r.body_json::<Value>().unwrap())
        })
        .mount(&fake.server)
        .await;
}

/// The management cluster the fake serves to the scan: none of the kinds it reads.
struct NoKubernetesObjects;

#[async_trait::async_trait]
impl px_topology::orphans::ClusterReader for NoKubernetesObjects {
    async fn facts(&self) -> Result<px_topology::orphans::ClusterFacts, String> {
        Ok(px_topology::orphans::ClusterFacts::default())
    }

    async fn remove(&self, _: &px_topology::orphans::ClusterTarget) -> Result<(), String> {
        Err("read-only".into())
    }
}

/// A host pxfa tagged as shared whose initiator no node has.
async fn gone_node_host(a: &dyn FlashArray, name: &str, wwn: &str) {
    let h = HostName::new(name).unwrap();
    a.create_hosts(
        std::slice::from_ref(&h),
        &HostPost::default().with_wwns(vec![wwn.into()]),
    )
    .await
    .unwrap();
    let tags: Vec<Tag> = [
        ("managed-by", "pxfa"),
        ("scope", "shared"),
        ("role", "mgmt-host"),
    ]
    .iter()
    .map(|(k, v)| Tag::new(name, "pxfa.io", *k, *v))
    .collect();
    a.set_tags(TagResource::Host, &tags).await.unwrap();
}

/// The Warning Events the fake received, by their note.
async fn warnings(fake: &Fake) -> Vec<String> {
    fake.requests("POST", "/events")
        .await
        .iter()
        .map(|r| r.body_json::<Value>().unwrap())
        .filter(|e| {
            e["type"] == "Warning"
                && e["reason"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("Orphans"))
        })
        .map(|e| e["note"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn orphan_counts_are_gauges_and_a_rise_is_a_warning_and_nothing_is_written() {
    let fake = Fake::start().await;
    mount(&fake).await;
    let array = MockArray::builder().seed(Seed::brownfield()).build();
    gone_node_host(&array, "pxfa-gone-node", "20000025B5FF0E01").await;
    let metrics = Arc::new(Metrics::new());
    let pool = ArrayPool::new(
        Box::new(MockConnector {
            array: array.clone(),
            built: Arc::new(AtomicUsize::new(0)),
        }),
        4,
        metrics.clone(),
    );
    let ctx = context(
        fake.client().await,
        pool,
        WaitOptions::default(),
        Duration::from_secs(300),
        "pxfa-controller-0",
        Duration::from_secs(15),
        px_controller::NamespaceReferences::default(),
    );
    // What pxfa orphans finds with the same tenants: the gauges must say the same.
    let obj: kube::api::DynamicObject = serde_json::from_value(tenant_object()).unwrap();
    // The controller's evidence: this TenantStorage is the only one, and no
    // HostedCluster exists (the fake serves none), so tenant-blue is gone.
    let known = Known {
        tenants: vec![load_tenant(&obj).unwrap()],
        unloaded: Vec::new(),
        evidence: Evidence::Cluster {
            storages: vec![px_cluster::orphans::tenant_storage_id(&obj)],
        },
    };
    let opts = ScanOptions::at(array.clock().now_ms());
    let expected = scan(&array, Some(&NoKubernetesObjects), &known, &opts)
        .await
        .unwrap()
        .counts();
    array.reset_stats();

    let mut counts = OrphanCounts::new();
    orphan_pass(&ctx, &mut counts).await;
    assert_eq!(array.stats().writes, 0, "the controller never cleans up");
    let gone = expected[&OrphanKind::TenantGone];
    assert!(gone > 0, "tenant-blue's objects: {expected:?}");
    assert_eq!(expected[&OrphanKind::HostWithoutNode], 1, "{expected:?}");
    for kind in [OrphanKind::TenantGone, OrphanKind::HostWithoutNode] {
        assert_eq!(
            metrics.orphans(ENDPOINT, kind.as_str()),
            Some(expected[&kind])
        );
        assert_eq!(counts.get(ENDPOINT, kind), Some(expected[&kind]));
    }
    let text = metrics.render();
    assert!(
        text.contains("# TYPE pxfa_controller_orphans gauge"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "pxfa_controller_orphans{{array=\"{ENDPOINT}\",kind=\"host-without-node\"}} 1"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "pxfa_controller_orphans{{array=\"{ENDPOINT}\",kind=\"unbound-drive\"}} 0"
        )),
        "{text}"
    );
    let first = warnings(&fake).await;
    assert_eq!(first.len(), 2, "one Warning per risen kind: {first:#?}");
    assert!(
        first
            .iter()
            .any(|n| n.starts_with(&format!("{gone} tenant-gone orphan(s) on array {ENDPOINT}"))),
        "{first:#?}"
    );
    assert!(
        first
            .iter()
            .any(|n| n.contains("host-without-node") && n.contains("host pxfa-gone-node")),
        "{first:#?}"
    );
    for verb in ["PUT", "PATCH", "DELETE"] {
        assert!(fake.requests(verb, "/").await.is_empty(), "no {verb}");
    }
    assert!(
        fake.requests("POST", "/")
            .await
            .iter()
            .all(|r| r.url.path().ends_with("/events")),
        "the only writes are Events"
    );

    // Nothing changed: no new Event. One more gone node: its kind rises again, and
    // kube-runtime folds the repeat into the first Event's series.
    orphan_pass(&ctx, &mut counts).await;
    assert_eq!(warnings(&fake).await.len(), 2);
    gone_node_host(&array, "pxfa-gone-node-2", "20000025B5FF0E02").await;
    // The scan reads the drift checks' listings: a pass after the listing interval.
    ctx.arrays.expire_listings();
    array.reset_stats();
    orphan_pass(&ctx, &mut counts).await;
    assert_eq!(array.stats().writes, 0);
    assert_eq!(metrics.orphans(ENDPOINT, "host-without-node"), Some(2));
    assert_eq!(warnings(&fake).await.len(), 2, "no new Event object");
    let repeats: Vec<Value> = fake
        .requests("PATCH", "/events/")
        .await
        .iter()
        .map(|r| r.body_json::<Value>().unwrap())
        .collect();
    assert_eq!(repeats.len(), 1, "{repeats:#?}");
    assert_eq!(repeats[0]["reason"], "OrphansHostWithoutNode");
    assert_eq!(repeats[0]["series"]["count"], 2);
}
