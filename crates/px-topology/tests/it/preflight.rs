//! The apply preflight: free space (with the `==` edge and the override), pod quota
//! (exceeded, and raised by the plan).

use flasharray::models::PodPost;
use flasharray::{FlashArray, PodName, Size};
use flasharray_mock::MockArray;
use px_topology::{ArraySpaceInfo, PlanOptions, PreflightOptions, new_bytes};

use crate::support::tenant::{ADMIN, TENANT, observe, tenant_state};

/// 3 workers x (2 x 512 GiB + 64 GiB).
const TENANT_GIB: u64 = 3 * (2 * 512 + 64);

fn space(capacity_gib: u64, used_gib: u64) -> ArraySpaceInfo {
    ArraySpaceInfo {
        name: "fa-test".into(),
        capacity: Size::gib(capacity_gib),
        used: Size::gib(used_gib),
        provisioned: None,
    }
}

async fn checks(
    array: &MockArray,
    d: &px_topology::DesiredState,
    sp: Option<&ArraySpaceInfo>,
    opts: PreflightOptions,
) -> Vec<px_topology::PreflightFinding> {
    let staged = observe(array, d).await.plan(&PlanOptions::default());
    assert_eq!(
        new_bytes(staged.plan(), staged.observed()),
        Size::gib(TENANT_GIB).as_u64()
    );
    staged.preflight(sp, opts)
}

#[tokio::test]
async fn space_over_exact_and_overridden() {
    let array = MockArray::builder().admin(ADMIN).build();
    let d = tenant_state();
    let over = checks(
        &array,
        &d,
        Some(&space(TENANT_GIB + 99, 100)),
        PreflightOptions::default(),
    )
    .await;
    assert_eq!(over.len(), 1, "{over:?}");
    assert_eq!(over[0].check, "space");
    assert!(
        over[0].message.contains("--allow-overcommit"),
        "{}",
        over[0].message
    );

    let exact = checks(
        &array,
        &d,
        Some(&space(TENANT_GIB + 100, 100)),
        PreflightOptions::default(),
    )
    .await;
    assert!(exact.is_empty(), "exactly the free space fits: {exact:?}");

    let allowed = checks(
        &array,
        &d,
        Some(&space(1024, 0)),
        PreflightOptions {
            allow_overcommit: true,
        },
    )
    .await;
    assert!(allowed.is_empty(), "{allowed:?}");
    assert!(
        checks(&array, &d, None, PreflightOptions::default())
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn pod_quota_exceeded_and_raised_by_the_plan() {
    let array = MockArray::builder().admin(ADMIN).build();
    let mut d = tenant_state();
    d.pod.as_mut().unwrap().quota = Some(Size::gib(TENANT_GIB - 1));
    let f = checks(&array, &d, None, PreflightOptions::default()).await;
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].check, "pod-quota");
    assert!(f[0].message.contains(TENANT), "{}", f[0].message);

    d.pod.as_mut().unwrap().quota = Some(Size::gib(TENANT_GIB));
    let f = checks(&array, &d, None, PreflightOptions::default()).await;
    assert!(f.is_empty(), "a quota exactly as large fits: {f:?}");

    // The pod exists with a small quota; the plan raises it before the creates.
    let a: &dyn FlashArray = &array;
    a.create_pods(
        &[PodName::new(TENANT).unwrap()],
        &PodPost::default().with_quota_limit(Size::gib(100).as_u64()),
    )
    .await
    .unwrap();
    let mut adopt = d.clone();
    adopt.pod.as_mut().unwrap().quota = Some(Size::gib(4096));
    let staged = observe(&array, &adopt).await.plan(&PlanOptions {
        adopt: true,
        ..PlanOptions::default()
    });
    let p = staged.plan();
    let f: Vec<_> = staged
        .preflight(None, PreflightOptions::default())
        .into_iter()
        .filter(|f| f.check == "pod-quota")
        .collect();
    assert!(
        f.is_empty(),
        "the plan raises the quota: {f:?}\n{}",
        p.to_text(true)
    );
    // Without the raise, the observed quota counts.
    let mut keep = d.clone();
    keep.pod.as_mut().unwrap().quota = None;
    let staged = observe(&array, &keep).await.plan(&PlanOptions {
        adopt: true,
        ..PlanOptions::default()
    });
    let f = staged.preflight(None, PreflightOptions::default());
    assert!(f.iter().any(|f| f.check == "pod-quota"), "{f:?}");
}
