//! The tenant pipeline (`Tenant::observe` → `Observation` → `Planned` → `Applied`)
//! with a fake cluster side: the stages run in order, the journal's durable-copy
//! hooks come around the apply, a token goes to the clusters and the journal lets go of it, and a token
//! nobody would keep is refused before any write.

use crate::support as examples;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use flasharray_mock::MockArray;
use px_topology::token_journal::{JournalError, MemTokenJournal, TokenJournal};
use px_topology::{
    ApplyError, ApplyOptions, ArrayFacts, ClusterSide, Delivery, PlanOptions, Site, Tenant,
};

/// What the pipeline asked of the clusters and of the journal's durable copy, in
/// order.
type Calls = Arc<Mutex<Vec<String>>>;

fn note(calls: &Calls, s: impl Into<String>) {
    calls.lock().unwrap().push(s.into());
}

/// Records what the pipeline asked of the clusters.
#[derive(Default)]
struct FakeClusters {
    keeps: bool,
    calls: Calls,
}

impl FakeClusters {
    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }
}

#[async_trait]
impl ClusterSide for FakeClusters {
    type Error = String;
    type Report = usize;

    fn keeps_new_token(&self) -> bool {
        self.keeps
    }

    async fn apply_manifests(
        &self,
        tenant: &Tenant,
        facts: &ArrayFacts,
    ) -> Result<Delivery<usize>, String> {
        let n = tenant.manifests().map_err(|e| e.to_string())?.len();
        note(
            &self.calls,
            format!("manifests token={}", facts.api_token.is_some()),
        );
        Ok(Delivery {
            report: n,
            token_kept: facts.api_token.is_some(),
            complete: true,
        })
    }
}

/// A journal in memory whose durable copy's hooks are recorded, as a journal
/// copied elsewhere (the controller's Secret) would get them.
#[derive(Debug, Default)]
struct RecordingJournal {
    entries: MemTokenJournal,
    drops_stale: bool,
    calls: Calls,
}

#[async_trait]
impl TokenJournal for RecordingJournal {
    fn memory(&self) -> Option<&MemTokenJournal> {
        Some(&self.entries)
    }
    async fn persist_intent(&self, user: &str) -> Result<(), JournalError> {
        note(&self.calls, format!("persist_intent {user}"));
        Ok(())
    }
    async fn persist_token(&self, user: &str) -> Result<(), JournalError> {
        note(&self.calls, format!("persist_token {user}"));
        Ok(())
    }
    async fn persist_delivered(&self, user: &str) -> Result<(), JournalError> {
        note(&self.calls, format!("persist_delivered {user}"));
        Ok(())
    }
    fn drops_stale_entries(&self) -> bool {
        self.drops_stale
    }
}

fn cloud_drive() -> (Tenant, MockArray) {
    let spec = examples::example("cloud-drive");
    let tenant = Tenant::from_spec(spec, "cloud-drive".as_ref()).unwrap();
    let array = MockArray::builder()
        .admin(tenant.token_users()[0].clone())
        .build();
    (tenant, array)
}

#[tokio::test]
async fn a_tenant_goes_through_every_stage_and_its_token_reaches_the_clusters() {
    let (tenant, array) = cloud_drive();
    let token_journal = MemTokenJournal::new();
    let clusters = FakeClusters {
        keeps: true,
        ..FakeClusters::default()
    };
    let journal: Arc<dyn TokenJournal> = Arc::new(RecordingJournal {
        entries: token_journal.clone(),
        calls: clusters.calls.clone(),
        ..RecordingJournal::default()
    });
    let site = Site {
        array: &array,
        claims: None,
        journal: Some(journal.clone()),
    };
    let planned = tenant
        .observe(site.clone())
        .await
        .unwrap()
        .plan(&PlanOptions::default());
    assert!(planned.plan().is_applicable() && planned.writes_array());
    let applied = planned
        .apply(&clusters, ApplyOptions::default(), &|_| {})
        .await
        .unwrap();
    assert!(
        applied.report().is_success(),
        "{:?}",
        applied.report().failed
    );
    assert!(applied.facts().api_token.is_some());
    let user = tenant.token_users()[0].clone();
    assert!(
        token_journal.load(&user).unwrap().is_some(),
        "journaled until delivered"
    );
    let (delivery, journal_error) = applied.to_clusters(&clusters).await.unwrap();
    assert!(matches!(journal_error, Some(Ok(()))), "the journal let go");
    assert!(delivery.token_kept && delivery.report > 0);
    assert_eq!(
        clusters.calls(),
        [
            format!("persist_intent {user}"),
            format!("persist_token {user}"),
            "manifests token=true".to_string(),
            format!("persist_delivered {user}"),
        ]
    );
    assert!(
        token_journal.load(&user).unwrap().is_none(),
        "the journal let go"
    );
    // Nothing left to do.
    let again = tenant
        .observe(site)
        .await
        .unwrap()
        .plan(&PlanOptions::default());
    assert!(!again.plan().has_changes() && !again.writes_array());
}

/// Issue #34: the pod records the tenant's token user (`pxfa.io token-user`), from
/// its creation on. A pod an earlier pxfa made without it gets the tag as drift:
/// one tag update on the pod, nothing re-created, and the next plan is empty.
#[tokio::test]
async fn the_pod_records_the_token_user_and_drift_adds_it_as_a_tag() {
    use flasharray::{FlashArray, TagParams, TagResource};
    let (tenant, array) = cloud_drive();
    let pod = tenant.desired.pod.as_ref().unwrap().name.to_string();
    let user = tenant.token_users()[0].clone();
    let clusters = FakeClusters {
        keeps: true,
        ..FakeClusters::default()
    };
    let site = Site::array(&array);
    let applied = tenant
        .observe(site.clone())
        .await
        .unwrap()
        .plan(&PlanOptions::default())
        .apply(&clusters, ApplyOptions::default(), &|_| {})
        .await
        .unwrap();
    assert!(
        applied.report().is_success(),
        "{:?}",
        applied.report().failed
    );
    let token_user_tag = || async {
        let params = TagParams {
            resource_names: vec![pod.clone()],
            namespaces: vec!["pxfa.io".into()],
            resource_destroyed: None,
        };
        (array.list_tags(TagResource::Pod, &params).await.unwrap())
            .into_iter()
            .find(|t| t.key == "token-user")
            .map(|t| t.value)
    };
    assert_eq!(token_user_tag().await.as_deref(), Some(user.as_str()));

    // As an earlier pxfa left it: no token-user tag.
    array
        .delete_tags(
            TagResource::Pod,
            std::slice::from_ref(&pod),
            &["token-user".to_string()],
            &["pxfa.io".to_string()],
        )
        .await
        .unwrap();
    let planned = tenant
        .observe(site.clone())
        .await
        .unwrap()
        .plan(&PlanOptions::default());
    let plan = planned.plan();
    assert!(plan.is_applicable(), "{}", plan.to_text(false));
    let changed: Vec<_> = plan
        .actionable()
        .map(|c| (c.action, c.kind, c.name.clone()))
        .collect();
    assert_eq!(
        changed,
        [(
            px_topology::Action::Update,
            px_topology::Kind::Tag,
            pod.clone()
        )],
        "{}",
        plan.to_text(false)
    );
    let tag = plan.actionable().next().unwrap();
    assert!(tag.reason.contains("token-user"), "{tag:?}");
    let applied = planned
        .apply(&clusters, ApplyOptions::default(), &|_| {})
        .await
        .unwrap();
    assert!(
        applied.report().is_success(),
        "{:?}",
        applied.report().failed
    );
    assert_eq!(token_user_tag().await.as_deref(), Some(user.as_str()));
    let again = tenant
        .observe(site)
        .await
        .unwrap()
        .plan(&PlanOptions::default());
    assert!(
        !again.plan().has_changes(),
        "{}",
        again.plan().to_text(false)
    );
}

#[tokio::test]
async fn a_token_nobody_would_keep_is_refused_before_any_write() {
    let (tenant, array) = cloud_drive();
    let clusters = FakeClusters::default();
    let planned = tenant
        .observe(Site::array(&array))
        .await
        .unwrap()
        .plan(&PlanOptions::default());
    let Err(ApplyError::TokenWouldBeLost(lost)) = planned
        .apply(&clusters, ApplyOptions::default(), &|_| {})
        .await
    else {
        panic!("the apply must be refused");
    };
    assert_eq!(lost.user, tenant.token_users()[0]);
    assert!(clusters.calls().is_empty(), "{:?}", clusters.calls());
    let after = tenant
        .observe(Site::array(&array))
        .await
        .unwrap()
        .plan(&PlanOptions::default());
    assert!(after.plan().has_changes(), "nothing was written");
}

#[tokio::test]
async fn a_token_nobody_would_keep_yet_is_held_and_the_rest_applies() {
    let (tenant, array) = cloud_drive();
    let clusters = FakeClusters::default();
    let why = "HostedCluster clusters/tenant-cd does not exist";
    let planned = tenant
        .observe(Site::array(&array))
        .await
        .unwrap()
        .plan(&PlanOptions::default())
        .holding_a_new_token(false, why);
    let plan = planned.plan();
    let held: Vec<_> = plan
        .changes
        .iter()
        .filter(|c| c.kind == px_topology::Kind::ApiToken)
        .collect();
    assert_eq!(held.len(), 1, "{}", plan.to_text(true));
    assert_eq!(held[0].action, px_topology::Action::Pending);
    assert!(held[0].reason.contains(why), "{:?}", held[0]);
    assert!(held[0].to_line().contains(why), "{}", held[0].to_line());
    assert_eq!((plan.summary.create > 0, plan.summary.pending), (true, 1));
    let applied = planned
        .apply(&clusters, ApplyOptions::default(), &|_| {})
        .await
        .expect("the rest applies");
    assert!(
        applied.report().is_success(),
        "{:?}",
        applied.report().failed
    );
    assert!(applied.facts().api_token.is_none(), "no token created");
    // A later run with somewhere to keep it creates it; the rest is done.
    let later = tenant
        .observe(Site::array(&array))
        .await
        .unwrap()
        .plan(&PlanOptions::default())
        .holding_a_new_token(true, why);
    let actionable: Vec<_> = later
        .plan()
        .actionable()
        .map(|c| (c.action, c.kind))
        .collect();
    assert_eq!(
        actionable,
        [(px_topology::Action::Create, px_topology::Kind::ApiToken)],
        "{}",
        later.plan().to_text(false)
    );
}

#[tokio::test]
async fn a_complete_run_with_nothing_pending_lets_go_only_where_the_journal_asks() {
    let spec = examples::example("direct-access");
    let tenant = Tenant::from_spec(spec, "direct-access".as_ref()).unwrap();
    let array = MockArray::new();
    for drops_stale in [false, true] {
        let clusters = FakeClusters::default();
        let journal = RecordingJournal {
            drops_stale,
            ..RecordingJournal::default()
        };
        let site = Site {
            journal: Some(Arc::new(journal)),
            ..Site::array(&array)
        };
        let applied = tenant
            .observe(site)
            .await
            .unwrap()
            .plan(&PlanOptions::default())
            .apply(&clusters, ApplyOptions::default(), &|_| {})
            .await
            .unwrap();
        assert!(applied.nothing_pending());
        let (delivery, journal) = applied.to_clusters(&clusters).await.unwrap();
        assert!(delivery.complete && !delivery.token_kept);
        assert_eq!(
            journal.is_some(),
            drops_stale,
            "drops_stale_entries {drops_stale}"
        );
    }
}
