//! Random sequences of spec edits (workers ±1 within 3..=6, capacity +0/10/50 %) on
//! the empty and the brownfield array, on `MockArray` and over HTTPS, through the CLI
//! pipeline
//! ([`super::worlds::plan_step`]): no flag is ever given, so nothing may shrink or be
//! destroyed; every applicable plan converges, a second apply writes nothing, and the
//! foreign objects never change. A raise past the pool ceiling is the one refusal
//! allowed (it names `capacityGrowth: add-pool`); the edit is then undone, as an
//! admin would.

use std::collections::BTreeMap;

use flasharray::{FlashArray, ListParams, Size};
use flasharray_mock::Seed;
use flasharray_mock::foreign::ForeignView;
use proptest::prelude::*;
use px_topology::{ApplyOptions, PlanOptions};

use super::worlds::{World, import_tenant, planned_step, world};
use crate::support::tenant::{apply, quiet};

#[derive(Debug, Clone, Copy)]
enum Edit {
    Workers(i8),
    CapacityPercent(u64),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        prop_oneof![Just(1i8), Just(-1i8)].prop_map(Edit::Workers),
        prop_oneof![Just(0u64), Just(10), Just(50)].prop_map(Edit::CapacityPercent),
    ]
}

async fn tenant_volumes(a: &dyn FlashArray) -> BTreeMap<String, (u64, bool)> {
    a.list_volumes(&ListParams::all())
        .await
        .unwrap()
        .into_iter()
        .filter(|v| v.name.starts_with("tenant-demo::"))
        .map(|v| (v.name, (v.provisioned, v.destroyed)))
        .collect()
}

async fn run(brownfield: bool, over_rest: bool, edits: Vec<Edit>) -> Result<(), TestCaseError> {
    let seed = if brownfield {
        Seed::brownfield()
    } else {
        Seed::Empty
    };
    let w = world(seed, over_rest).await;
    let result = walk(&w, edits).await;
    w.close().await;
    result
}

async fn walk(w: &World, edits: Vec<Edit>) -> Result<(), TestCaseError> {
    let (m, a) = (&w.mock, w.array());
    let foreign = ForeignView::read(a, "tenant-demo").await.unwrap();
    let mut spec = import_tenant();
    let opts = PlanOptions::default();
    let mut seen: BTreeMap<String, (u64, bool)> = BTreeMap::new();
    for e in std::iter::once(Edit::CapacityPercent(0)).chain(edits) {
        let before = spec.clone();
        match e {
            Edit::Workers(d) => {
                let n = spec.spec.hosted_cluster.replicas as i64 + i64::from(d);
                spec.spec.hosted_cluster.replicas = n.clamp(3, 6) as u32;
            }
            Edit::CapacityPercent(p) => {
                let c = spec.spec.storage.capacity.as_u64();
                spec.spec.storage.capacity = Size::bytes(c + c / 100 * p);
            }
        }
        let plan_staged = planned_step(a, &spec, opts).await;
        let plan = plan_staged.plan().clone();
        if !plan.is_applicable() {
            prop_assert!(plan.conflicts.is_empty(), "{}", plan.to_text(true));
            prop_assert!(
                plan.refusals
                    .iter()
                    .all(|r| r.resolution.contains("capacityGrowth: add-pool")),
                "only a raise past the ceiling may be refused: {}",
                plan.to_text(true)
            );
            spec = before;
            continue;
        }
        let r = apply(plan_staged, &ApplyOptions::default(), &quiet).await;
        prop_assert!(r.is_success(), "{}, {e:?}: {r:?}", w.name);
        let now = tenant_volumes(a).await;
        for (name, (size, destroyed)) in &seen {
            let (s, d) = now.get(name).copied().unwrap_or((0, true));
            prop_assert!(s >= *size, "{name} shrank {size} -> {s} after {e:?}");
            prop_assert!(!d || *destroyed, "{name} destroyed after {e:?}");
        }
        seen = now;
        let again_staged = planned_step(a, &spec, opts).await;
        let again = again_staged.plan().clone();
        prop_assert!(!again.has_changes(), "{e:?}: {}", again.to_text(true));
        m.reset_stats();
        let r = apply(again_staged, &ApplyOptions::default(), &quiet).await;
        prop_assert!(r.is_success(), "{r:?}");
        prop_assert_eq!(m.stats().writes, 0, "second apply after {:?} wrote", e);
        let after = ForeignView::read(a, "tenant-demo").await.unwrap();
        prop_assert_eq!(after.changes_since(&foreign), Vec::<String>::new());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 16,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_spec_edits_never_shrink_or_destroy_without_flags(
        brownfield in any::<bool>(),
        over_rest in any::<bool>(),
        edits in proptest::collection::vec(edit(), 1..=8),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(run(brownfield, over_rest, edits))?;
    }
}

/// The first case the property found: a raise after a scale-in must size the pod
/// quota for the retained drives too, or the array refuses the resize on quota.
#[tokio::test]
async fn raise_after_scale_in_fits_the_quota() {
    for brownfield in [false, true] {
        let edits = vec![
            Edit::Workers(1),
            Edit::Workers(-1),
            Edit::CapacityPercent(50),
        ];
        run(brownfield, false, edits).await.unwrap();
    }
}
