//! Issue #24, the retained-drive quota case: a scale-in retains the removed worker's
//! drives in the pod, so the pod quota a later plan asks for must still cover them.
//! Dynamic provisioning without cluster access (nobody tags the drives, so the plan
//! sizes from the sizing recorded on the pod): 3 → 4 workers, bound, then 3, then a
//! capacity growth. The planned quota covers the 3 workers' grown claims plus the
//! retained worker's drives; before the fix it covered the 3 workers only.

use flasharray::{FlashArray, ListParams};
use flasharray_mock::fada::SimClaim;
use flasharray_mock::{Seed, SimFada};
use px_topology::spec::TenantStorage;
use px_topology::{PlanOptions, Tenant};

use super::worlds::{apply_step, plan_step, world};
use crate::support;

/// The management Portworx binds every claim of `t` (untagged volumes).
async fn bind(a: &dyn FlashArray, t: &Tenant) {
    let claims: Vec<SimClaim> = t
        .desired
        .drives
        .iter()
        .map(|d| SimClaim {
            namespace: d.claim.namespace.clone(),
            name: d.claim.name.clone(),
            size: d.size,
        })
        .collect();
    let pod = t.desired.drives.first().and_then(|d| d.pod.clone());
    SimFada::new()
        .provision(a, pod.as_ref(), &claims)
        .await
        .unwrap();
}

/// The bytes the pod's volumes of worker `index` provision (by claim name).
async fn worker_bytes(a: &dyn FlashArray, t: &Tenant, index: u32) -> u64 {
    let names: Vec<String> = t
        .desired
        .drives
        .iter()
        .filter(|d| d.claim.name.contains(&format!("-w{index:02}-")))
        .map(|d| d.claim.name.clone())
        .collect();
    assert!(!names.is_empty());
    let fada = SimFada::new();
    let pod = t.desired.drives.first().and_then(|d| d.pod.clone());
    let want: Vec<String> = names
        .iter()
        .map(|n| fada.volume_name(pod.as_ref(), &t.spec.hcp_namespace(), n))
        .collect();
    a.list_volumes(&ListParams::all())
        .await
        .unwrap()
        .into_iter()
        .filter(|v| want.iter().any(|w| w.eq_ignore_ascii_case(&v.name)))
        .map(|v| v.provisioned)
        .sum()
}

#[tokio::test]
async fn a_growth_after_a_scale_in_keeps_the_retained_drives_under_the_quota() {
    let w = world(Seed::Empty, false).await;
    let a = w.array();
    let mut spec: TenantStorage = support::example("direct-access");
    spec.spec.hosted_cluster.replicas = 3;
    apply_step(&w, &spec, PlanOptions::default()).await;
    let (t3, _) = plan_step(a, &spec, PlanOptions::default()).await;
    bind(a, &t3).await;
    spec.spec.hosted_cluster.replicas = 4;
    apply_step(&w, &spec, PlanOptions::default()).await;
    let (t4, _) = plan_step(a, &spec, PlanOptions::default()).await;
    bind(a, &t4).await;
    let retained = worker_bytes(a, &t4, 3).await;
    assert!(retained > 0);

    spec.spec.hosted_cluster.replicas = 3;
    apply_step(&w, &spec, PlanOptions::default()).await;
    spec.spec.storage.capacity = flasharray::Size::bytes(spec.spec.storage.capacity.as_u64() * 2);
    let (grown, plan) = plan_step(a, &spec, PlanOptions::default()).await;
    assert!(plan.is_applicable(), "{}", plan.to_text(true));
    let workers = grown.sizing.total_provisioned.as_u64();
    assert!(
        grown.sizing.pod_quota.as_u64() >= workers + retained,
        "quota {} must cover the 3 workers' {} and the retained {}\n{}",
        grown.sizing.pod_quota,
        workers,
        retained,
        grown.sizing.explain().join("\n")
    );
    assert!(
        grown
            .sizing
            .explain()
            .join("\n")
            .contains("retained drives"),
        "{}",
        grown.sizing.explain().join("\n")
    );
    w.close().await;
}
