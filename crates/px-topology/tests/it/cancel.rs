//! `converge::Cancel`: a raised flag stops apply and destroy from starting more
//! operations; the ones in flight finish, and the next run carries on.

use px_topology::{ApplyOptions, Cancel, DestroyOptions, PlanOptions, ProgressEvent};

use crate::support::tenant::{apply, array, converge, destroy, planned, tenant_state};

/// Raises `cancel` when the first change ends.
fn cancel_after_first(cancel: &Cancel) -> impl Fn(ProgressEvent) {
    let cancel = cancel.clone();
    move |ev| {
        if matches!(ev, ProgressEvent::ChangeFinished { .. }) {
            cancel.cancel();
        }
    }
}

#[tokio::test]
async fn a_cancelled_destroy_starts_nothing_more_and_a_rerun_finishes() {
    let d = tenant_state();
    let a = array();
    let (_, r) = converge(&a, &d).await;
    assert!(r.is_success(), "{r:?}");
    let cancel = Cancel::new();
    let opts = DestroyOptions {
        concurrency: 1,
        cancel: cancel.clone(),
        ..DestroyOptions::default()
    };
    a.reset_stats();
    let report = destroy(&a, &d, &opts, &cancel_after_first(&cancel))
        .await
        .unwrap();
    assert!(report.interrupted, "{report:?}");
    assert!(!report.done.is_empty(), "{report:?}");
    assert!(report.failed.is_empty(), "{report:?}");
    assert!(
        report
            .skipped
            .iter()
            .all(|s| s.reason.contains("interrupted") || s.reason.contains("did not succeed")),
        "{report:?}"
    );
    // One operation ran: its writes only.
    assert_eq!(a.stats().writes, 1, "{report:?}");
    let again = destroy(&a, &d, &DestroyOptions::default(), &|_| {})
        .await
        .unwrap();
    assert!(again.is_success(), "{again:?}");
    assert!(!again.interrupted);
}

#[tokio::test]
async fn a_flag_raised_before_apply_writes_nothing() {
    let d = tenant_state();
    let a = array();
    let staged = planned(&a, &d, PlanOptions::default()).await;
    let p = staged.plan().clone();
    let cancel = Cancel::new();
    cancel.cancel();
    a.reset_stats();
    let opts = ApplyOptions {
        cancel,
        ..ApplyOptions::default()
    };
    let r = apply(staged, &opts, &|_| {}).await;
    assert!(r.interrupted);
    assert!(r.applied.is_empty(), "{r:?}");
    assert_eq!(r.skipped.len(), p.actionable().count(), "{r:?}");
    assert_eq!(a.stats().writes, 0);
    assert_eq!(r.calls, 0);
}
