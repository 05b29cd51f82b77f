//! The mock's fault injection and call statistics.

use std::time::Duration;

use flasharray::params::*;
use flasharray::size::GIB;
use flasharray::{ErrorKind, FlashArray};
use flasharray_mock::Op;
use flasharray_mock::conformance::shorthand::*;

use crate::support::mock;

#[tokio::test]
async fn pre_call_faults_and_stats() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    m.faults().rate_limit_next(1, Duration::from_secs(2));
    let e = a.create_volumes(&vs(&["f"]), &size(GIB)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RateLimited);
    assert_eq!(e.as_api().unwrap().status, 429);
    assert_eq!(
        e.as_api().unwrap().retry_after,
        Some(Duration::from_secs(2))
    );
    m.faults().busy_next(1);
    let e = a.list_volumes(&ListParams::all()).await.unwrap_err();
    assert_eq!(
        (e.as_api().unwrap().status, e.kind()),
        (500, ErrorKind::Busy)
    );
    m.faults().unavailable_next(1);
    let e = a.list_volumes(&ListParams::all()).await.unwrap_err();
    assert_eq!(
        (e.as_api().unwrap().status, e.kind()),
        (503, ErrorKind::Busy)
    );
    // Nothing was created by the refused write.
    assert!(a.list_volumes(&ListParams::all()).await.unwrap().is_empty());
    let s = m.stats();
    assert_eq!((s.calls, s.reads, s.writes), (4, 3, 1));
    assert_eq!(s.op(Op::ListVolumes), 3);
    m.reset_stats();
    assert_eq!(m.stats().calls, 0);
}

#[tokio::test]
async fn lost_answers_and_dropped_writes() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    m.faults().fail_write_after_effect(1);
    let e = a
        .create_volumes(&vs(&["applied"]), &size(GIB))
        .await
        .unwrap_err();
    assert!(e.maybe_applied(), "{e}");
    assert_eq!(vol(a, "applied").await.name, "applied");
    m.faults().drop_write(2);
    a.create_volumes(&vs(&["first"]), &size(GIB)).await.unwrap();
    let e = a
        .create_volumes(&vs(&["dropped"]), &size(GIB))
        .await
        .unwrap_err();
    assert!(e.maybe_applied());
    assert!(
        a.list_volumes(&ListParams::names(["dropped"]))
            .await
            .is_err()
    );
    a.create_volumes(&vs(&["dropped"]), &size(GIB))
        .await
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn latency_applies_to_every_call() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    m.faults().set_latency(Duration::from_millis(40));
    let t = tokio::time::Instant::now();
    a.list_volumes(&ListParams::all()).await.unwrap();
    a.create_volumes(&vs(&["l"]), &size(GIB)).await.unwrap();
    assert_eq!(t.elapsed(), Duration::from_millis(80));
    m.faults().clear();
    let t = tokio::time::Instant::now();
    a.list_volumes(&ListParams::all()).await.unwrap();
    assert_eq!(t.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_held_operation_waits_before_its_effect_until_released() {
    let m = mock();
    m.faults().hold(Op::CreateVolumes);
    let array = m.clone();
    let call = tokio::spawn(async move {
        let a: &dyn FlashArray = &array;
        a.create_volumes(&vs(&["held"]), &size(GIB)).await
    });
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(!call.is_finished(), "answered while held");
    assert_eq!(m.stats().op(Op::CreateVolumes), 1, "counted");
    let a: &dyn FlashArray = &m;
    let none = a.list_volumes(&ListParams::all()).await.unwrap();
    assert!(none.is_empty(), "no effect while held: {none:?}");
    m.faults().release(Op::CreateVolumes);
    call.await.unwrap().unwrap();
    assert_eq!(a.list_volumes(&ListParams::all()).await.unwrap().len(), 1);
}

#[tokio::test]
async fn errors_name_the_operation() {
    let m = mock();
    let a: &dyn FlashArray = &m;
    let e = a.eradicate_volumes(&vs(&["ghost"])).await.unwrap_err();
    let api = e.as_api().unwrap();
    assert_eq!(api.operation, "DELETE /volumes");
    assert_eq!(api.message(), "Volume does not exist.");
}

#[tokio::test(start_paused = true)]
async fn a_stalled_array_applies_the_write_then_never_answers() {
    let a = mock();
    a.faults().stall_after_write(1);
    let hung = tokio::time::timeout(
        Duration::from_secs(5),
        a.create_volumes(&vs(&["a"]), &size(GIB)),
    )
    .await;
    assert!(hung.is_err(), "the write never answers");
    assert!(a.faults().stalled());
    let read =
        tokio::time::timeout(Duration::from_secs(5), a.list_volumes(&ListParams::all())).await;
    assert!(read.is_err(), "later calls hang too");
    a.faults().clear();
    let vols = a.list_volumes(&ListParams::all()).await.unwrap();
    assert_eq!(vols.len(), 1, "the stalled write took effect");
}
