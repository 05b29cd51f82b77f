//! The per-array observation cache under the tenant pipeline: every tenant's
//! observation equals one of the array itself while the array reads stay one listing
//! per kind whatever the number of tenants; writes through the cache are seen by the
//! next observation; a change by someone else shows after the interval, and a plan
//! that would write from a stale listing is made again from the array.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use flasharray::models::Tag;
use flasharray::{FlashArray, ListParams, TagParams, TagResource};
use flasharray_mock::{MockArray, Op};
use k8s_openapi::api::core::v1::Secret;
use px_controller::ObservationCache;
use px_controller::Outcome;
use px_controller::credentials_from_secret;
use px_topology::{
    ApplyOptions, ArrayFacts, ClusterSide, Delivery, PlanOptions, Site, TAG_NAMESPACE, TAG_TENANT,
    Tenant, parse_valid_spec,
};

use serde_json::json;

use crate::fake::{NAME, NS, TOKEN, World, tenant_object};
use crate::objects::secret;

const INTERVAL: Duration = Duration::from_secs(60);

/// A cluster side that keeps a new token (the tenants here are made with one).
struct Keeper;

#[async_trait]
impl ClusterSide for Keeper {
    type Error = std::convert::Infallible;
    type Report = ();

    fn keeps_new_token(&self) -> bool {
        true
    }

    async fn apply_manifests(
        &self,
        _tenant: &Tenant,
        _facts: &ArrayFacts,
    ) -> Result<Delivery<()>, Self::Error> {
        Ok(Delivery {
            report: (),
            token_kept: true,
            complete: true,
        })
    }
}

/// Tenant `t{i}`: the valid-full fixture renamed (its management hosts and host
/// group are shared by every tenant).
fn tenant(i: usize) -> Tenant {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/tenants/valid-full.yaml"
    ))
    .unwrap()
    .replace("tenant-full", &format!("t{i:02}"));
    Tenant::from_spec(parse_valid_spec(&text).unwrap(), Path::new("t.yaml")).unwrap()
}

/// `n` tenants applied through the cache's writes on a fresh array.
async fn fleet(n: usize) -> (MockArray, Arc<ObservationCache>, Vec<Tenant>) {
    let mut builder = MockArray::builder();
    for i in 0..n {
        builder = builder.admin(format!("pxfa-t{i:02}"));
    }
    let mock = builder.build();
    let cache = ObservationCache::new(Arc::new(mock.clone()), INTERVAL);
    let tenants: Vec<Tenant> = (0..n).map(tenant).collect();
    let fresh = cache.fresh();
    for t in &tenants {
        let applied = t
            .observe(Site::array(fresh.as_ref()))
            .await
            .unwrap()
            .plan(&PlanOptions::default())
            .apply(&Keeper, ApplyOptions::default(), &|_| {})
            .await
            .unwrap();
        assert!(applied.report().is_success(), "{:?}", applied.report());
    }
    (mock, cache, tenants)
}

/// Every tenant observed through `array`: what was read and whether the plan changes
/// anything.
async fn observe_all(array: &dyn FlashArray, tenants: &[Tenant]) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for t in tenants {
        let planned = t
            .observe(Site::array(array))
            .await
            .unwrap()
            .plan(&PlanOptions::default());
        out.push((
            format!("{:?}", planned.observed()),
            planned.plan().has_changes(),
        ));
    }
    out
}

#[tokio::test]
async fn every_tenant_observes_from_one_listing_per_kind_whatever_their_number() {
    let mut reads = Vec::new();
    for n in [3, 12] {
        let (mock, cache, tenants) = fleet(n).await;
        cache.expire();
        mock.reset_stats();
        let cached = observe_all(cache.cached().as_ref(), &tenants).await;
        reads.push(mock.stats().reads);
        let direct = observe_all(&mock, &tenants).await;
        assert_eq!(
            cached, direct,
            "{n} tenants: the listings answer as the array"
        );
        assert!(cached.iter().all(|(_, changes)| !changes), "converged");
    }
    assert_eq!(
        reads[0], reads[1],
        "array reads for 3 and for 12 tenants: {reads:?}"
    );
    assert!(reads[0] <= 12, "one listing per kind: {reads:?}");
}

/// pxfa's tags of volume `name`.
async fn tags_of(array: &dyn FlashArray, name: &str) -> Vec<Tag> {
    let params = TagParams {
        resource_names: vec![name.to_string()],
        namespaces: vec![TAG_NAMESPACE.to_string()],
        resource_destroyed: None,
    };
    array.list_tags(TagResource::Volume, &params).await.unwrap()
}

/// Someone removes pxfa's tenant tag from volume `name`: drift.
async fn untag(array: &dyn FlashArray, name: &str) {
    let (names, keys) = ([name.to_string()], [TAG_TENANT.to_string()]);
    let namespaces = [TAG_NAMESPACE.to_string()];
    array
        .delete_tags(TagResource::Volume, &names, &keys, &namespaces)
        .await
        .unwrap();
}

async fn a_volume_of(array: &dyn FlashArray, tenant: &str) -> String {
    let all = array.list_volumes(&ListParams::all()).await.unwrap();
    let tenant = tenant.to_string();
    all.into_iter()
        .map(|v| v.name)
        .find(|n| n.contains(&tenant))
        .unwrap_or_else(|| panic!("no volume of {tenant}"))
}

#[tokio::test]
async fn a_write_through_the_cache_is_seen_by_the_next_observation() {
    let (mock, cache, tenants) = fleet(2).await;
    let cached = cache.cached();
    let before = observe_all(cached.as_ref(), &tenants).await;
    let volume = a_volume_of(&mock, "t00").await;
    untag(cache.fresh().as_ref(), &volume).await;
    let seen = observe_all(cached.as_ref(), &tenants).await;
    assert_eq!(seen, observe_all(&mock, &tenants).await);
    assert!(seen[0] != before[0], "t00 is seen without the tag");
}

#[tokio::test]
async fn a_change_by_someone_else_shows_after_the_interval() {
    let (mock, cache, tenants) = fleet(2).await;
    let cached = cache.cached();
    let before = observe_all(cached.as_ref(), &tenants).await;
    let volume = a_volume_of(&mock, "t01").await;
    untag(&mock, &volume).await;
    let stale = observe_all(cached.as_ref(), &tenants).await;
    assert_eq!(stale, before, "within the interval the listing answers");
    cache.expire();
    let seen = observe_all(cached.as_ref(), &tenants).await;
    assert_eq!(seen, observe_all(&mock, &tenants).await);
    assert!(seen[1] != before[1], "a new interval sees the missing tag");
}

#[tokio::test]
async fn a_zero_interval_reads_the_array_and_token_values_never_come_from_a_listing() {
    let (mock, cache, tenants) = fleet(1).await;
    let off = ObservationCache::new(Arc::new(mock.clone()), Duration::ZERO);
    mock.reset_stats();
    observe_all(&mock, &tenants).await;
    let direct = mock.stats().reads;
    mock.reset_stats();
    observe_all(off.cached().as_ref(), &tenants).await;
    assert_eq!(
        mock.stats().reads,
        direct,
        "no listing: the tenant's own reads"
    );

    let cached = cache.cached();
    mock.reset_stats();
    let user = ["pxfa-t00".to_string()];
    let listed = cached.list_api_tokens(&user, false).await.unwrap();
    assert_eq!(mock.stats().op(Op::ListApiTokens), 1, "the listing");
    let again = cached.list_api_tokens(&user, false).await.unwrap();
    assert_eq!(again.len(), listed.len());
    assert_eq!(mock.stats().op(Op::ListApiTokens), 1, "from the listing");
    let exposed = cached.list_api_tokens(&user, true).await.unwrap();
    assert_eq!(
        mock.stats().op(Op::ListApiTokens),
        2,
        "values: from the array"
    );
    assert_eq!(listed.len(), exposed.len());
}

#[tokio::test]
async fn a_plan_that_would_write_from_a_stale_listing_reads_the_array_first() {
    let w = World::start(tenant_object()).await;
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Converged);
    // Someone removes a tag of the tenant's, the controller lists the tags, and
    // the tag is put back before the next reconcile.
    let volume = a_volume_of(&w.array, "tenant-full").await;
    let tags = tags_of(&w.array, &volume).await;
    untag(&w.array, &volume).await;
    w.ctx.arrays.expire_listings();
    let pure =
        json!({"FlashArrays": [{"MgmtEndPoint": "fa1-mgmt.example.net", "APIToken": TOKEN}]});
    let secret: Secret = serde_json::from_value(secret(
        NS,
        "fa1-creds",
        &[],
        &[("pure.json", &pure.to_string())],
    ))
    .unwrap();
    let reference = serde_json::from_value(json!({"name": "fa1-creds"})).unwrap();
    let creds = credentials_from_secret(&secret, NS, &reference, None).unwrap();
    let lease = w.ctx.arrays.acquire(&creds).await.unwrap();
    let listed = tags_of(lease.array.as_ref(), &volume).await;
    assert!(listed.len() < tags.len(), "the listing misses the tag");
    drop(lease);
    w.array.set_tags(TagResource::Volume, &tags).await.unwrap();

    w.array.reset_stats();
    assert_eq!(w.reconcile().await.unwrap(), Outcome::Converged);
    assert_eq!(
        w.array.stats().writes,
        0,
        "the listing said tag; the array said nothing to do"
    );
    assert!(
        !w.store
            .status(NAME)
            .is_true(px_controller::ConditionType::Drifted)
    );
}
