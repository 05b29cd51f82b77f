//! Removing a tenant's objects with MockArray: retained drives after the desired
//! state shrinks and their release, soft destroy that keeps shared objects, eradication and SafeMode.

use flasharray::{ConnectionParams, FlashArray, ListParams, Size};
use px_topology::{Action, ApplyOptions, DestroyError, DestroyOptions, Kind, PlanOptions};

use crate::support::tenant::{
    ADMIN, TENANT, apply, array, converge, desired, destroy, destroy_with, eradicating, plan_for,
    planned, preview_destroy, quiet, tenant_state,
};

#[tokio::test]
async fn scale_in_retains_until_release_flag() {
    let a = array();
    converge(&a, &desired(TENANT, 3, Size::gib(512))).await;
    let fewer = desired(TENANT, 2, Size::gib(512));

    // Scale-in: worker 2's drives are retained, not a change; nothing is written.
    let staged = planned(&a, &fewer, PlanOptions::default()).await;
    let p = staged.plan().clone();
    assert!(p.is_applicable());
    let retained: Vec<&str> = p
        .changes
        .iter()
        .filter(|c| c.action == Action::Retain)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(retained.len(), 3, "{}", p.to_text(true));
    assert!(retained.iter().all(|n| n.starts_with("t1::t1-w02-")));
    assert_eq!(p.summary.retain, 3);
    assert!(!p.has_changes(), "{}", p.to_text(true));
    let text = p.to_text(false);
    assert!(text.contains("! retain volume t1::t1-w02-data0"), "{text}");
    assert!(text.contains("--release-removed-workers"), "{text}");
    // #24: the retirement steps are the runbook's decommission (px/enabled=false).
    assert!(text.contains("px/enabled=false"), "{text}");
    a.reset_stats();
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    assert_eq!(a.stats().writes, 0, "retaining writes nothing");

    // Scaling back out reuses the retained drives: nothing is recreated.
    let p = plan_for(
        &a,
        &desired(TENANT, 3, Size::gib(512)),
        PlanOptions::default(),
    )
    .await;
    assert!(!p.has_changes(), "{}", p.to_text(true));

    // The release option soft-destroys the removed worker's drives (disconnecting
    // them first), and only those.
    let release = PlanOptions {
        release_removed_workers: true,
        ..PlanOptions::default()
    };
    let staged = planned(&a, &fewer, release).await;
    let p = staged.plan().clone();
    let deletes: Vec<(Kind, &str)> = p
        .changes
        .iter()
        .filter(|c| c.action == Action::Delete)
        .map(|c| (c.kind, c.name.as_str()))
        .collect();
    assert_eq!(
        deletes.iter().filter(|(k, _)| *k == Kind::Volume).count(),
        3,
        "{deletes:?}"
    );
    assert!(deletes.iter().all(|(_, n)| n.starts_with("t1::t1-w02-")));
    assert_eq!(
        deletes
            .iter()
            .filter(|(k, _)| *k == Kind::Connection)
            .count(),
        3,
        "{deletes:?}"
    );
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    let w2 = a
        .list_volumes(&ListParams::names(["t1::t1-w02-data0"]))
        .await
        .unwrap();
    assert!(w2[0].destroyed, "soft: destroyed, recoverable");
    let w1 = a
        .list_volumes(&ListParams::names(["t1::t1-w01-data0"]))
        .await
        .unwrap();
    assert!(!w1[0].destroyed);
    assert!(!plan_for(&a, &fewer, release).await.has_changes());
    // Growing back onto the released index is refused: its Portworx node was
    // probably decommissioned. The refusal names both ways out, and nothing is
    // written.
    let p = plan_for(
        &a,
        &desired(TENANT, 3, Size::gib(512)),
        PlanOptions::default(),
    )
    .await;
    assert!(!p.is_applicable());
    assert_eq!(p.refusals.len(), 3, "{}", p.to_text(true));
    for r in &p.refusals {
        assert!(r.name.starts_with("t1::t1-w02-"), "{r:?}");
        assert!(r.reason.contains("released"), "{r:?}");
        assert!(r.resolution.contains("--recover-released"), "{r:?}");
        assert!(r.resolution.contains("pxfa volume eradicate"), "{r:?}");
    }
    assert!(!p.changes.iter().any(|c| c.action == Action::Recover));
    assert!(
        !p.changes
            .iter()
            .any(|c| c.kind == Kind::Connection && c.name.starts_with("t1::t1-w02-")),
        "nothing is connected to a refused drive: {}",
        p.to_text(true)
    );
    // --recover-released recovers the destroyed volumes instead of creating new ones.
    let recover = PlanOptions {
        recover_released: true,
        ..PlanOptions::default()
    };
    let staged = planned(&a, &desired(TENANT, 3, Size::gib(512)), recover).await;
    let p = staged.plan().clone();
    assert!(p.is_applicable(), "{}", p.to_text(true));
    assert_eq!(
        p.changes
            .iter()
            .filter(|c| c.action == Action::Recover)
            .count(),
        3
    );
    assert_eq!(p.summary.create, 3, "connections only");
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    assert!(
        !plan_for(
            &a,
            &desired(TENANT, 3, Size::gib(512)),
            PlanOptions::default()
        )
        .await
        .has_changes()
    );
}

#[tokio::test]
async fn a_soft_destroyed_tenant_comes_back_without_the_flag() {
    // `destroy` takes every drive: nothing was released on its own, so applying the
    // spec again recovers the tenant as before.
    let a = array();
    let d = desired(TENANT, 2, Size::gib(64));
    converge(&a, &d).await;
    let r = destroy(&a, &d, &DestroyOptions::default(), &quiet)
        .await
        .unwrap();
    assert!(r.is_success(), "{r:?}");
    let p = plan_for(&a, &d, PlanOptions::default()).await;
    assert!(p.is_applicable(), "{}", p.to_text(true));
    assert!(p.changes.iter().any(|c| c.action == Action::Recover));
}

#[tokio::test]
async fn destroy_is_soft_keeps_shared_objects_and_refuses_empty_selection() {
    let a = array();
    let d = tenant_state();
    converge(&a, &d).await;
    let r = destroy_with(
        &a,
        &d,
        DestroyOptions {
            delete_token: true,
            ..Default::default()
        },
    )
    .await;
    assert!(r.is_success(), "{r:?}");
    assert!(r.pending_eradication.is_empty());
    let vols = a.list_volumes(&ListParams::all()).await.unwrap();
    assert_eq!(vols.len(), 9);
    assert!(
        vols.iter().all(|v| v.destroyed),
        "soft destroy keeps volumes recoverable"
    );
    let pods = a.list_pods(&ListParams::all()).await.unwrap();
    assert!(pods[0].destroyed);
    assert!(
        a.list_connections(&ConnectionParams::default())
            .await
            .unwrap()
            .is_empty()
    );
    // The shared management group and hosts stay, with their members.
    assert_eq!(
        a.list_host_groups(&ListParams::all()).await.unwrap().len(),
        1
    );
    assert_eq!(a.list_hosts(&ListParams::all()).await.unwrap().len(), 2);
    assert!(
        r.kept
            .iter()
            .any(|k| k.kind == Kind::HostGroup && k.reason.contains("shared"))
    );
    let tok = a
        .list_api_tokens(&[ADMIN.to_string()], false)
        .await
        .unwrap();
    assert!(
        tok.iter().all(|t| t.api_token.created_at.is_none()),
        "token deleted on request"
    );

    // Applying again recovers the tenant rather than duplicating it.
    let p = plan_for(&a, &d, PlanOptions::default()).await;
    assert_eq!(
        p.changes
            .iter()
            .filter(|c| c.action == Action::Recover)
            .count(),
        10,
        "{}",
        p.to_text(false)
    );

    let nobody = desired("nobody", 1, Size::gib(1));
    let mut nobody = nobody;
    nobody.host_groups.clear();
    nobody.hosts.clear();
    nobody.connections.clear();
    match destroy(&a, &nobody, &DestroyOptions::default(), &quiet).await {
        Err(DestroyError::NothingSelected { tenant }) => {
            assert_eq!(tenant.to_string(), "default/nobody");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn destroy_with_eradication_and_safemode() {
    let a = array();
    let d = tenant_state();
    converge(&a, &d).await;
    a.faults().set_safemode(true);
    let r = destroy_with(&a, &d, eradicating()).await;
    assert!(
        r.failed.is_empty(),
        "SafeMode refusals are pending, not failures: {:?}",
        r.failed
    );
    assert_eq!(
        r.pending_eradication.len(),
        9 + 1,
        "{:?}",
        r.pending_eradication
    );
    assert!(
        r.pending_eradication
            .iter()
            .all(|p| p.time_remaining_ms.is_some())
    );
    assert!(
        r.pending_eradication[0]
            .reason
            .to_ascii_lowercase()
            .contains("safemode")
            || r.pending_eradication[0].reason.contains("Cannot eradicate")
    );
    assert_eq!(a.list_volumes(&ListParams::all()).await.unwrap().len(), 9);

    a.faults().set_safemode(false);
    let r = destroy_with(&a, &d, eradicating()).await;
    assert!(r.is_success(), "{r:?}");
    assert!(a.list_volumes(&ListParams::all()).await.unwrap().is_empty());
    assert!(a.list_pods(&ListParams::all()).await.unwrap().is_empty());
}

#[tokio::test]
async fn the_preview_is_what_destroy_removes() {
    for eradicate in [false, true] {
        let a = array();
        let d = tenant_state();
        converge(&a, &d).await;
        let opts = DestroyOptions {
            eradicate,
            ..Default::default()
        };
        a.reset_stats();
        let preview = preview_destroy(&a, &d, &opts).await.unwrap();
        assert_eq!(a.stats().writes, 0, "the preview writes nothing");
        assert!(preview.changes.iter().all(|c| c.action == Action::Delete));
        let volumes_before = a.list_volumes(&ListParams::all()).await.unwrap();
        let listed: Vec<&str> = preview
            .changes
            .iter()
            .filter(|c| c.kind == Kind::Volume)
            .map(|c| c.name.as_str())
            .collect();
        for v in &volumes_before {
            assert!(
                listed.contains(&v.name.as_str()),
                "{} not previewed",
                v.name
            );
        }
        let plan = preview.to_plan();
        assert_eq!(plan.summary.delete, preview.changes.len());
        assert!(plan.is_applicable());

        let r = destroy(&a, &d, &opts, &quiet).await.unwrap();
        assert!(r.is_success(), "{r:?}");
        assert_eq!(
            r.changes, preview.changes,
            "destroy set out to do the preview"
        );
        assert_eq!(r.done, preview.changes, "and did exactly that");
        let after = a.list_volumes(&ListParams::all()).await.unwrap();
        if eradicate {
            assert!(after.is_empty(), "{after:?}");
        } else {
            assert!(after.iter().all(|v| v.destroyed));
        }
        // Gone from the array: a second preview selects nothing live to destroy.
        if eradicate {
            assert!(matches!(
                preview_destroy(&a, &d, &opts).await,
                Err(DestroyError::NothingSelected { .. })
            ));
        }
    }
}
