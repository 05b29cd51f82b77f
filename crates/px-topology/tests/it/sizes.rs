//! Issue #24 item 1, sizes never move by accident: the manual flow 3 → 4 → 3 → 4
//! workers as `pxfa apply` runs it without `--kubeconfig` (no `DriveLocator`: pxfa
//! cannot read the claims), on the brownfield array (MockArray and REST), with
//! dynamic and with import provisioning. For dynamic, the management Portworx
//! (`SimFada`) creates each drive when its claim binds and nobody tags it, as in the
//! README's walkthrough. Every claim pxfa renders and every drive on the array keeps
//! the size it had; the pod quota always covers the drives in the pod.

use std::collections::BTreeMap;

use flasharray::{FlashArray, ListParams};
use flasharray_mock::fada::SimClaim;
use flasharray_mock::{Seed, SimFada};
use px_topology::spec::TenantStorage;
use px_topology::{PlanOptions, Tenant};

use super::worlds::{World, apply_step, import_tenant, plan_step, world};
use crate::support;

/// The tenant's live volumes: name → provisioned bytes.
async fn volumes(a: &dyn FlashArray) -> BTreeMap<String, u64> {
    a.list_volumes(&ListParams::all())
        .await
        .unwrap()
        .into_iter()
        .filter(|v| v.name.starts_with("tenant-demo::") && !v.destroyed)
        .map(|v| (v.name, v.provisioned))
        .collect()
}

async fn quota(a: &dyn FlashArray) -> u64 {
    a.list_pods(&ListParams::names(["tenant-demo"]))
        .await
        .unwrap()[0]
        .quota_limit
        .unwrap()
}

/// The drive claims the tenant's manifests render: claim name → requested storage.
fn claims(t: &Tenant) -> BTreeMap<String, String> {
    t.manifests()
        .unwrap()
        .into_iter()
        .filter(|m| m.kind == "PersistentVolumeClaim" && m.name.starts_with("tenant-demo-w"))
        .map(|m| {
            let size = m.body["spec"]["resources"]["requests"]["storage"]
                .as_str()
                .unwrap()
                .to_string();
            (m.name, size)
        })
        .collect()
}

/// The management Portworx binds every claim of `t`: a volume for each claim that
/// has none, at the claim's size, untagged (no cluster access, nobody tags it).
async fn bind_claims(a: &dyn FlashArray, t: &Tenant) {
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

async fn scale_3_4_3_4(w: &World, mut spec: TenantStorage) {
    let a = w.array();
    let mut seen_claims: BTreeMap<String, String> = BTreeMap::new();
    let mut seen_volumes: BTreeMap<String, u64> = BTreeMap::new();
    for replicas in [3, 4, 3, 4] {
        spec.spec.hosted_cluster.replicas = replicas;
        apply_step(w, &spec, PlanOptions::default()).await;
        let (t, _) = plan_step(a, &spec, PlanOptions::default()).await;
        let c = claims(&t);
        assert_eq!(c.len(), 2 * replicas as usize, "{}: {c:?}", w.name);
        for (name, size) in &c {
            if let Some(was) = seen_claims.get(name) {
                assert_eq!(
                    size, was,
                    "{} at {replicas}: claim {name} kept its size",
                    w.name
                );
            }
        }
        let data: std::collections::BTreeSet<&String> = c
            .iter()
            .filter(|(n, _)| n.contains("-data"))
            .map(|(_, s)| s)
            .collect();
        assert_eq!(data.len(), 1, "{}: one data drive size: {c:?}", w.name);
        if !t.desired.drives.is_empty() {
            bind_claims(a, &t).await;
        }
        let v = volumes(a).await;
        assert!(v.len() >= 2 * replicas as usize, "{}: {v:?}", w.name);
        for (name, size) in &seen_volumes {
            assert_eq!(
                v.get(name),
                Some(size),
                "{} at {replicas}: drive {name}",
                w.name
            );
        }
        let held = v.values().sum::<u64>();
        assert!(
            quota(a).await >= held,
            "{} at {replicas}: the pod quota covers the drives",
            w.name
        );
        seen_claims.extend(c);
        seen_volumes.extend(v);
    }
}

async fn in_brownfield_worlds(spec: impl Fn() -> TenantStorage) {
    for over_rest in [false, true] {
        let w = world(Seed::brownfield(), over_rest).await;
        scale_3_4_3_4(&w, spec()).await;
        w.close().await;
    }
}

#[tokio::test]
async fn dynamic_scale_3_4_3_4_without_cluster_access_keeps_every_size() {
    in_brownfield_worlds(|| support::example("direct-access")).await;
}

#[tokio::test]
async fn import_scale_3_4_3_4_without_cluster_access_keeps_every_size() {
    in_brownfield_worlds(import_tenant).await;
}
