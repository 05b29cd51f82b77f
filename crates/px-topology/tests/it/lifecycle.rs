//! A tenant's life through the pipeline the CLI runs, in every world of
//! [`super::worlds`] (empty and brownfield arrays, `MockArray` and REST over HTTPS):
//! scale 3 → 4 → 3 → release → 4 (refused until `--recover-released`), a capacity
//! raise by resize with the quota before it, a decrease refused before any write;
//! and an honest report for a change done in part.

use std::collections::BTreeMap;

use flasharray::{FlashArray, ListParams, Size};
use px_topology::{Action, ApplyOptions, Kind, PlanOptions, ProgressEvent};

use super::worlds::{World, apply_step, import_tenant, in_every_world, refused_step};
use crate::support::tenant::apply;

/// The tenant's volumes: name → (provisioned, destroyed).
async fn drives(a: &dyn FlashArray) -> BTreeMap<String, (u64, bool)> {
    a.list_volumes(&ListParams::all())
        .await
        .unwrap()
        .into_iter()
        .filter(|v| v.name.starts_with("tenant-demo::"))
        .map(|v| (v.name, (v.provisioned, v.destroyed)))
        .collect()
}

async fn quota(a: &dyn FlashArray) -> u64 {
    a.list_pods(&ListParams::names(["tenant-demo"]))
        .await
        .unwrap()[0]
        .quota_limit
        .unwrap()
}

const W00: &str = "tenant-demo::tenant-demo-w00-data0";
const W03: &str = "tenant-demo::tenant-demo-w03-data0";

async fn walk(w: &World) {
    let a = w.array();
    let mut spec = import_tenant();
    apply_step(w, &spec, PlanOptions::default()).await;
    let drive = drives(a).await[W00].0;

    // 3 -> 4: the new worker gets the size in use, the quota rises first.
    spec.spec.hosted_cluster.replicas = 4;
    let s = apply_step(w, &spec, PlanOptions::default()).await;
    let d = drives(a).await;
    assert_eq!(
        (d[W00], d[W03]),
        ((drive, false), (drive, false)),
        "{}",
        w.name
    );
    assert!(
        s.plan
            .changes
            .iter()
            .all(|c| !(c.kind == Kind::Volume && c.action == Action::Update)),
        "{}: nothing existing is resized",
        w.name
    );
    assert!(
        s.report.writes.quota == 1,
        "{}: {:?}",
        w.name,
        s.report.writes
    );

    // 4 -> 3: retained, not a change.
    spec.spec.hosted_cluster.replicas = 3;
    let s = apply_step(w, &spec, PlanOptions::default()).await;
    assert_eq!(s.plan.summary.retain, 2, "{}", w.name);
    assert_eq!(s.report.writes.total(), 0, "{}", w.name);

    // Released on request only; then 3 -> 4 is refused until --recover-released.
    let release = PlanOptions {
        release_removed_workers: true,
        ..PlanOptions::default()
    };
    apply_step(w, &spec, release).await;
    assert_eq!(drives(a).await[W03], (drive, true), "{}", w.name);
    spec.spec.hosted_cluster.replicas = 4;
    w.mock.reset_stats();
    let p = refused_step(w, &spec, PlanOptions::default()).await;
    assert!(
        p.refusals
            .iter()
            .all(|r| r.resolution.contains("--recover-released")),
        "{}: {:?}",
        w.name,
        p.refusals
    );
    assert_eq!(w.mock.stats().writes, 0, "{}", w.name);
    let recover = PlanOptions {
        recover_released: true,
        ..PlanOptions::default()
    };
    apply_step(w, &spec, recover).await;
    assert_eq!(drives(a).await[W03], (drive, false), "{}", w.name);

    // 4Ti -> 6Ti at 4 workers: every drive grows to 4.5 TiB (resize), quota first.
    let q = quota(a).await;
    spec.spec.storage.capacity = Size::tib(6);
    let s = apply_step(w, &spec, PlanOptions::default()).await;
    assert!(
        s.plan
            .notes
            .iter()
            .any(|n| n.contains("capacity growth: resize")),
        "{}: {:?}",
        w.name,
        s.plan.notes
    );
    assert!(
        s.plan
            .next_steps
            .iter()
            .any(|n| n.contains("4608 GiB per data drive")),
        "{}: {:?}",
        w.name,
        s.plan.next_steps
    );
    let d = drives(a).await;
    for (name, (size, destroyed)) in &d {
        if name.contains("-data") {
            assert_eq!(
                (*size, *destroyed),
                (4608 << 30, false),
                "{}: {name}",
                w.name
            );
        }
    }
    assert!(quota(a).await > q, "{}", w.name);

    // A decrease is refused, naming --allow-shrink, and writes nothing.
    spec.spec.storage.capacity = Size::tib(5);
    w.mock.reset_stats();
    let p = refused_step(w, &spec, PlanOptions::default()).await;
    assert!(
        p.refusals
            .iter()
            .any(|r| r.resolution.contains("--allow-shrink")),
        "{}: {:?}",
        w.name,
        p.refusals
    );
    assert_eq!(w.mock.stats().writes, 0, "{}", w.name);
    assert_eq!(drives(a).await, d, "{}: nothing shrunk", w.name);
}

#[tokio::test]
async fn scale_3_4_3_4_grow_and_refuse_in_every_world() {
    in_every_world(walk).await;
}

#[tokio::test]
async fn dynamic_tenant_raise_changes_only_the_pod_in_every_world() {
    // Dynamic (3.6.2): the array holds only the pod; a raise never PATCHes a volume
    // (the claims grow), and the quota and the recorded capacity follow.
    in_every_world(async |w: &World| {
        let mut spec = super::worlds::import_tenant();
        spec.spec.portworx.version = px_topology::spec::Version::new(3, 6, 2);
        spec.spec.management.fa_fb_driver = false;
        spec.spec.storage.provisioning = px_topology::spec::Provisioning::Auto;
        spec.spec.storage.attach = px_topology::spec::Attach::Fada;
        apply_step(w, &spec, PlanOptions::default()).await;
        spec.spec.storage.capacity = Size::tib(6);
        let s = apply_step(w, &spec, PlanOptions::default()).await;
        assert!(
            s.plan
                .actionable()
                .all(|c| matches!(c.kind, Kind::Pod | Kind::Tag)),
            "{}: {}",
            w.name,
            s.plan.to_text(true)
        );
        assert_eq!(s.report.writes.updated, 0, "{}: no volume PATCH", w.name);
        // Back down: refused through the pod's recorded capacity.
        spec.spec.storage.capacity = Size::tib(4);
        let p = refused_step(w, &spec, PlanOptions::default()).await;
        assert!(
            p.refusals[0].resolution.contains("--allow-shrink"),
            "{}",
            w.name
        );
    })
    .await;
}

#[tokio::test]
async fn report_counts_a_created_pod_whose_tagging_failed_as_partial() {
    // Volumes are born with all their tags (`POST /volumes/batch`), but a pod's
    // detail tags (the capacity it was sized for) follow its create in the next
    // round: a create that worked and a tagging that failed is `partial`.
    let m = crate::support::tenant::array();
    let mut d = crate::support::tenant::desired("t1", 1, Size::gib(64));
    if let Some(pod) = d.pod.as_mut() {
        pod.tags
            .insert(px_topology::TAG_CAPACITY.into(), "1".into());
    }
    let staged = crate::support::tenant::planned(&m, &d, PlanOptions::default()).await;
    // Every call after the first round (pod, group, hosts, token) fails with 503.
    let faults = m.clone();
    let after_round_1 = move |ev: ProgressEvent| {
        if let ProgressEvent::RoundFinished { round: 1, .. } = ev {
            faults.faults().unavailable_next(1000);
        }
    };
    let r = apply(staged, &ApplyOptions::default(), &after_round_1).await;
    m.faults().clear();
    assert!(!r.is_success());
    let created: Vec<&str> = r
        .partial
        .iter()
        .filter(|c| c.change.kind == Kind::Pod && c.change.action == Action::Create)
        .map(|c| c.change.name.as_str())
        .collect();
    assert_eq!(created, ["t1"], "{r:#?}");
    assert!(
        r.skipped
            .iter()
            .all(|s| !(s.change.kind == Kind::Pod && s.change.action == Action::Create)),
        "a created pod is never reported skipped: {r:#?}"
    );
    for c in &r.partial {
        assert!(c.done.iter().any(|d| d.starts_with("create pod")), "{c:?}");
        assert!(!c.failed.is_empty(), "{c:?}");
    }
    // The pod, group, hosts and token are on the array; the report's counts say so.
    assert!(r.writes.created >= 3, "{:?}", r.writes);
    let line = r.writes_line();
    assert!(
        line.starts_with(&format!("Wrote {} objects", r.writes.total())),
        "{line}"
    );
    assert!(
        line.ends_with(&format!("; {} failed.", r.failures())),
        "{line}"
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["partial"].as_array().unwrap().len(), r.partial.len());
    assert!(json["writes"]["created"].as_u64().unwrap() >= 3);
    // A re-apply finishes the tagging and the rest.
    let staged = crate::support::tenant::planned(
        &m,
        &d,
        PlanOptions {
            adopt: true,
            ..PlanOptions::default()
        },
    )
    .await;
    let r = apply(
        staged,
        &ApplyOptions::default(),
        &crate::support::tenant::quiet,
    )
    .await;
    assert!(r.is_success(), "{r:?}");
}
