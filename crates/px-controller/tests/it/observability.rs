//! What an operator sees: `/healthz`, `/readyz` and `/metrics` over HTTP, an Event
//! for every change, and JSON log lines without secrets.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use px_controller::{ConditionType as C, Endpoints, JsonLines, Options};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::fake::{NAME, TOKEN, World, cloud_drive_object, tenant_object};

/// `GET path` over plain HTTP/1.1: (status code, content type, body).
async fn get(addr: SocketAddr, path: &str) -> (u16, String, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).await.unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let code = head.split(' ').nth(1).unwrap().parse().unwrap();
    let content_type = head
        .lines()
        .find_map(|l| l.strip_prefix("content-type: "))
        .unwrap_or_default()
        .to_string();
    (code, content_type, body.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_readiness_and_metrics_over_http() {
    let w = World::start(tenant_object()).await;
    let ctx = w.replica("replica-a", Duration::from_secs(2)).await;
    let endpoints = Endpoints::bind(
        "127.0.0.1:0".parse().unwrap(),
        ctx.health.clone(),
        ctx.metrics.clone(),
    )
    .await
    .unwrap();
    let addr = endpoints.local_addr().unwrap();
    let server = tokio::spawn(endpoints.serve(std::future::pending()));

    assert_eq!(get(addr, "/healthz").await.0, 200);
    let (code, _, body) = get(addr, "/readyz").await;
    assert_eq!(code, 503, "not ready before the Lease was read: {body}");

    let (stop, run) = crate::election::start(&ctx, "replica-a");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !w.store.status(NAME).is_true(C::Ready) {
        assert!(Instant::now() < deadline, "not Ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut ready = get(addr, "/readyz").await;
    for _ in 0..100 {
        if ready.0 == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        ready = get(addr, "/readyz").await;
    }
    assert_eq!((ready.0, ready.2.as_str()), (200, "ok: leader\n"));
    // The reconcile counts itself when it returns, just after its status write
    // made the tenant Ready: wait for that count.
    let mut metrics = get(addr, "/metrics").await;
    for _ in 0..100 {
        if metrics
            .2
            .contains("pxfa_controller_reconciles_total{outcome=\"converged\"} ")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        metrics = get(addr, "/metrics").await;
    }
    let (code, content_type, text) = metrics;
    assert_eq!(code, 200);
    assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
    assert!(
        text.contains("# TYPE pxfa_controller_reconciles_total counter"),
        "{text}"
    );
    assert!(
        text.contains("pxfa_controller_reconciles_total{outcome=\"converged\"} "),
        "{text}"
    );
    assert!(text.contains("pxfa_controller_reconcile_duration_seconds_count "));
    let ok_calls = text
        .lines()
        .find_map(|l| {
            l.strip_prefix(
                "pxfa_controller_array_calls_total{array=\"fa1-mgmt.example.net\",outcome=\"ok\"} ",
            )
        })
        .unwrap_or_else(|| panic!("no array call counter in {text}"));
    assert_eq!(
        ok_calls.parse::<u64>().unwrap(),
        w.array.stats().calls,
        "every array call is counted"
    );
    assert!(text.lines().any(|l| l == "pxfa_controller_leader 1"));
    assert!(text.contains("pxfa_controller_events_total{type=\"Normal\"} "));
    assert!(!text.contains(TOKEN));
    assert_eq!(get(addr, "/nothing").await.0, 404);

    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .unwrap()
        .unwrap();
    assert!(
        get(addr, "/metrics")
            .await
            .2
            .contains("pxfa_controller_leader 0")
    );
    server.abort();
}

fn event<'a>(events: &'a [Value], reason: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["reason"] == reason)
        .unwrap_or_else(|| panic!("no {reason} event in {events:#?}"))
}

#[tokio::test]
async fn every_change_is_an_event_on_the_object() {
    let w = World::start(tenant_object()).await;
    w.reconcile().await.unwrap();
    let events = w.events.0.lock().unwrap().clone();
    for reason in ["FinalizerAdded", "ArrayChangesApplied", "Converged"] {
        let e = event(&events, reason);
        assert_eq!(e["type"], "Normal");
        assert_eq!(e["regarding"]["kind"], "TenantStorage");
        assert_eq!(e["regarding"]["name"], NAME);
        assert_eq!(e["regarding"]["namespace"], "pxfa");
        assert_eq!(e["reportingController"], "pxfa.io/controller");
        assert_eq!(e["reportingInstance"], "test-replica");
        assert!(e["action"].is_string());
    }
    let applied = event(&events, "ArrayChangesApplied")["note"]
        .as_str()
        .unwrap();
    assert!(applied.contains("fa1-mgmt.example.net"), "{applied}");
    assert!(applied.contains("change(s) applied"), "{applied}");

    // A resync with nothing to change publishes nothing new.
    let before = w.events.reasons().len();
    w.reconcile().await.unwrap();
    assert_eq!(w.events.reasons().len(), before, "{:?}", w.events.reasons());

    // A failure is a Warning with the reason.
    w.array.faults().unavailable_next(1_000);
    w.reconcile().await.expect_err("array down");
    w.array.faults().clear();
    let events = w.events.0.lock().unwrap().clone();
    let e = event(&events, "ArrayUnreachable");
    assert_eq!(e["type"], "Warning");
    assert!(
        e["note"]
            .as_str()
            .unwrap()
            .contains("TenantStorage pxfa/tenant-full")
    );

    w.reconcile().await.unwrap();
    w.store.edit(NAME, |o| {
        o["metadata"]["deletionTimestamp"] = json!("2026-12-01T11:00:00Z")
    });
    w.reconcile().await.unwrap();
    let reasons = w.events.reasons();
    for reason in ["Destroyed", "FinalizerRemoved"] {
        assert!(reasons.iter().any(|r| r == reason), "{reason}: {reasons:?}");
    }
    let all = serde_json::to_string(&*w.events.0.lock().unwrap()).unwrap();
    assert!(!all.contains(TOKEN), "no token in any Event");
}

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The controller loop at the CLI's most verbose level (`-vvv`: pxfa's crates at
/// trace, HTTP libraries at warn), in JSON, for a cloud-drive tenant (the controller
/// creates, journals and delivers its API token): every line parses, and neither the
/// array token, the pure.json it came in, nor the tenant's new token appears.
#[tokio::test]
async fn json_logs_parse_and_hold_no_secret() {
    let w = World::start(cloud_drive_object()).await;
    let buf = Buf::default();
    let sink = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(
            "warn,px_controller=trace,px_cluster=trace,px_topology=trace,flasharray=trace,flasharray_mock=trace,flasharray_sim=trace",
        ))
        .event_format(JsonLines)
        .with_writer(move || sink.clone())
        .finish();
    // Global, not scoped: a scoped subscriber misses callsites other tests of this
    // binary registered first. Other tests' lines land here too: more to check.
    tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(px_controller::run(
        w.ctx.clone(),
        Options::default(),
        async {
            let _ = stopped.await;
        },
    ));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !w.store.status(NAME).is_true(C::Ready) {
        assert!(Instant::now() < deadline, "not Ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .unwrap()
        .unwrap();

    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let reconciled = lines
        .iter()
        .find(|l| l["message"] == "reconciled")
        .unwrap_or_else(|| panic!("no reconciled line in {text}"));
    assert_eq!(reconciled["level"], "INFO");
    assert_eq!(reconciled["target"], "px_controller::controller");
    assert_eq!(reconciled["fields"]["object"], "pxfa/tenant-full");
    assert!(reconciled["fields"]["elapsed_ms"].is_u64());

    assert!(!text.contains(TOKEN), "the array token is not logged");
    let tenant_token = crate::token_journal::delivered(&w)
        .await
        .expect("the tenant got its token");
    assert!(
        !text.contains(&tenant_token),
        "the tenant's new token is not logged"
    );
    // Nor in the base64 the journal Secret and px-pure-secret carry it in.
    let wire = serde_json::to_value(k8s_openapi::ByteString(tenant_token.into_bytes())).unwrap();
    assert!(!text.contains(wire.as_str().unwrap()), "nor its base64");
    assert!(!text.contains("APIToken"), "nor the pure.json it came in");
    assert!(
        lines.iter().any(|l| l["target"]
            .as_str()
            .is_some_and(|t| t.starts_with("px_cluster") || t.starts_with("flasharray"))),
        "the libraries' trace lines were captured too"
    );
}
