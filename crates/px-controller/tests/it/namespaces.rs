//! Issue #34 item 3, namespace isolation: a TenantStorage refers only to its own
//! namespace, or to those the controller's configuration allows for it. Two teams
//! on one fake API server: team-b has an array credentials Secret and a
//! HostedCluster; team-a's TenantStorage names team-b's HostedCluster namespace
//! (and a credentials Secret of the same name as team-b's). The controller marks
//! it `Valid=False` (`NamespaceNotAllowed`), reads nothing of team-b's (the fake
//! saw no request under team-b), builds no array client, and on delete keeps the
//! finalizer and touches nothing. Allowing `team-a=clusters` does not open team-b.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use flasharray_mock::MockArray;
use kube::api::DynamicObject;
use px_controller::{
    ArrayPool, ConditionStatus, ConditionType, Metrics, NamespaceReferences, Outcome, TenantStatus,
    reconcile,
};
use serde_json::{Value, json};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::fake::{MockConnector, Store, TOKEN, tenant_object};
use crate::objects::secret;
use crate::support::{self, Fake};

/// The fake: the TenantStorage objects of every namespace (by name), Events
/// accepted, team-b's credentials Secret and HostedCluster. Anything else is 404.
async fn mount(fake: &Fake, store: &Store) {
    Mock::given(path_regex(
        r"^/apis/pxfa\.io/v1alpha1/namespaces/[^/]+/tenantstorages/[^/]+(/status)?$",
    ))
    .respond_with(store.clone())
    .mount(&fake.server)
    .await;
    Mock::given(path_regex(
        r"^/apis/events\.k8s\.io/v1/namespaces/[^/]+/events",
    ))
    .respond_with(|r: &Request| {
        let body: Value = r.body_json().unwrap_or(json!({}));
        ResponseTemplate::new(201).set_body_json(body)
    })
    .mount(&fake.server)
    .await;
    let pure =
        json!({"FlashArrays": [{"MgmtEndPoint": "fa1-mgmt.example.net", "APIToken": TOKEN}]})
            .to_string();
    Mock::given(method("GET"))
        .and(path_regex(r"^/api/v1/namespaces/team-b/secrets/fa1-creds$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(secret(
            "team-b",
            "fa1-creds",
            &[],
            &[("pure.json", &pure)],
        )))
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(
            r"^/apis/hypershift\.openshift\.io/v1beta1/namespaces/team-b/hostedclusters/blue$",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
            "metadata": {"name": "blue", "namespace": "team-b"},
            "status": {"kubeconfig": {"name": "blue-admin-kubeconfig"}}})))
        .mount(&fake.server)
        .await;
}

/// team-a's TenantStorage: the valid full spec, in team-a, naming HostedCluster
/// `hc_namespace/blue` and credentials Secret `fa1-creds`.
fn team_a(hc_namespace: &str) -> Value {
    let mut obj = tenant_object();
    obj["metadata"]["namespace"] = json!("team-a");
    obj["spec"]["hostedCluster"]["namespace"] = json!(hc_namespace);
    obj["spec"]["hostedCluster"]["name"] = json!("blue");
    obj
}

struct Setup {
    fake: Fake,
    store: Store,
    built: Arc<AtomicUsize>,
    ctx: Arc<px_controller::Context>,
}

async fn setup(references: NamespaceReferences) -> Setup {
    let fake = Fake::start().await;
    let store = Store::default();
    mount(&fake, &store).await;
    let built = Arc::new(AtomicUsize::new(0));
    let connector = MockConnector {
        array: MockArray::builder().build(),
        built: built.clone(),
    };
    let ctx = px_controller::context(
        fake.client().await,
        ArrayPool::new(Box::new(connector), 4, Arc::new(Metrics::new())),
        support::fast_wait(2_000),
        Duration::from_secs(60),
        "test-replica",
        Duration::from_secs(15),
        references,
    );
    Setup {
        fake,
        store,
        built,
        ctx,
    }
}

impl Setup {
    async fn reconcile(&self) -> Outcome {
        let obj: DynamicObject = serde_json::from_value(self.store.get("tenant-full")).unwrap();
        reconcile(&obj, &self.ctx).await.unwrap()
    }

    /// Every request the fake saw that reaches into team-b.
    async fn requests_into_team_b(&self) -> Vec<String> {
        self.fake
            .server
            .received_requests()
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|r| format!("{} {}", r.method, r.url.path()))
            .filter(|r| r.contains("/namespaces/team-b/") || r.contains("team-b-blue"))
            .collect()
    }
}

#[tokio::test]
async fn team_a_cannot_make_the_controller_read_team_bs_secret_or_hosted_cluster() {
    for references in [
        NamespaceReferences::default(),
        NamespaceReferences::parse(&["team-a=clusters", "team-c=team-b"]).unwrap(),
    ] {
        let s = setup(references).await;
        s.store.put(team_a("team-b"));
        let outcome = s.reconcile().await;
        assert_eq!(outcome, Outcome::Waiting("NamespaceNotAllowed"));
        let status: TenantStatus = s.store.status("tenant-full");
        let valid = status.get(ConditionType::Valid).unwrap();
        assert_eq!(valid.status, ConditionStatus::False, "{valid:?}");
        assert_eq!(valid.reason, "NamespaceNotAllowed");
        assert!(
            valid.message.contains("spec.hostedCluster.namespace")
                && valid
                    .message
                    .contains("--allow-namespace-reference team-a=team-b"),
            "{}",
            valid.message
        );
        assert_eq!(s.requests_into_team_b().await, Vec::<String>::new());
        assert_eq!(s.built.load(Ordering::SeqCst), 0, "no array client built");
        assert!(
            s.store.get("tenant-full")["metadata"]["finalizers"].is_null(),
            "no finalizer on an object that was never admitted"
        );

        // Deleting it (with the finalizer an earlier, allowed run added) keeps the
        // finalizer and reads nothing of team-b's either.
        s.store.edit("tenant-full", |o| {
            o["metadata"]["finalizers"] = json!(["pxfa.io/tenant-storage"]);
            o["metadata"]["deletionTimestamp"] = json!("2026-12-02T10:00:00Z");
        });
        let outcome = s.reconcile().await;
        assert_eq!(outcome, Outcome::Waiting("SpecInvalid"));
        assert_eq!(
            s.store.get("tenant-full")["metadata"]["finalizers"],
            json!(["pxfa.io/tenant-storage"])
        );
        assert_eq!(s.requests_into_team_b().await, Vec::<String>::new());
        assert_eq!(s.built.load(Ordering::SeqCst), 0);
    }
}

/// In its own namespace team-a's object is admitted, and its credentials Secret
/// is read in team-a only: team-b's Secret of the same name is never read.
#[tokio::test]
async fn credentials_are_read_in_the_objects_own_namespace_only() {
    let s = setup(NamespaceReferences::default()).await;
    s.store.put(team_a("team-a"));
    let obj: DynamicObject = serde_json::from_value(s.store.get("tenant-full")).unwrap();
    let e = reconcile(&obj, &s.ctx).await.unwrap_err();
    assert!(
        e.message.contains("Secret team-a/fa1-creds"),
        "{}",
        e.message
    );
    let status = s.store.status("tenant-full");
    assert_eq!(
        status.get(ConditionType::Valid).unwrap().reason,
        "Valid",
        "{status:?}"
    );
    assert_eq!(s.requests_into_team_b().await, Vec::<String>::new());
    assert!(
        !s.fake
            .requests("GET", "/namespaces/team-a/secrets/fa1-creds")
            .await
            .is_empty(),
        "read in its own namespace"
    );
}
