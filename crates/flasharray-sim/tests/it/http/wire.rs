//! What the simulator records on the wire: requests, handshakes, HTTP versions and
//! the request log's depth; HTTP/2 by ALPN, HTTP/1.1 when asked.

use std::time::Duration;

use flasharray::{FlashArray, ListParams};
use flasharray_mock::MockArray;
use flasharray_sim::{FaultTrigger, HttpFault, HttpFaultKind, critical_path_depth};
use reqwest::Method;
use serde_json::json;

use crate::support::https::{V, start_with};

/// Version, login, then nine concurrent listings.
async fn cold_client_then_nine_reads(http1_only: bool) -> flasharray_sim::SimStats {
    let s = start_with(MockArray::new(), |c| {
        c.http1_only = http1_only;
        // Over HTTP/1.1 eight of the nine open new connections (TLS handshakes) as
        // they leave; a request longer than a handshake takes on a loaded machine
        // keeps them overlapping, so the depth counts rounds, not CPU contention.
        c.http_latency = Duration::from_millis(if http1_only { 150 } else { 20 });
    })
    .await;
    let rest = s.rest();
    rest.list_volumes(&ListParams::all()).await.unwrap();
    let all = ListParams::all();
    let reads = (0..9).map(|_| rest.list_hosts(&all));
    for r in futures_util::future::join_all(reads).await {
        r.unwrap();
    }
    let stats = s.sim.stats();
    let log = s.sim.request_log();
    assert_eq!(stats.requests as usize, log.len());
    assert_eq!(stats.logins, 1);
    assert_eq!(stats.per_path["GET /api/2.x/hosts"], 9);
    // version, login, the first listing, then the nine together.
    assert_eq!(critical_path_depth(&log), 4, "{log:#?}");
    stats
}

#[tokio::test]
async fn h2_carries_every_request_on_one_handshake() {
    let stats = cold_client_then_nine_reads(false).await;
    assert_eq!(stats.tls_handshakes, 1, "{stats:?}");
    assert_eq!(stats.connections, 1);
    assert_eq!(stats.http_versions.keys().collect::<Vec<_>>(), ["HTTP/2.0"]);
}

#[tokio::test]
async fn http1_only_opens_a_connection_per_concurrent_request() {
    let stats = cold_client_then_nine_reads(true).await;
    assert_eq!(stats.http_versions.keys().collect::<Vec<_>>(), ["HTTP/1.1"]);
    // The pool held one idle connection when the nine left together.
    assert!(stats.tls_handshakes > 1, "{stats:?}");
    assert_eq!(stats.tls_handshakes, stats.connections);
}

#[tokio::test]
async fn connect_latency_delays_each_new_connection() {
    let s = start_with(MockArray::new(), |c| {
        c.connect_latency = Duration::from_millis(60);
    })
    .await;
    let started = std::time::Instant::now();
    let sess = s.login().await;
    assert!(started.elapsed() >= Duration::from_millis(60));
    // The second request rides the same connection: no added delay.
    let again = std::time::Instant::now();
    s.get(&sess, "/volumes").await;
    assert!(
        again.elapsed() < Duration::from_millis(60),
        "{:?}",
        again.elapsed()
    );
    assert_eq!(s.sim.stats().tls_handshakes, 1);
}

/// A dropped request resets only its own stream: the request next to it on the same
/// HTTP/2 connection is answered.
#[tokio::test]
async fn a_dropped_write_under_h2_spares_the_other_streams() {
    for kind in [HttpFaultKind::DropWrite, HttpFaultKind::LoseAnswer] {
        let s = start_with(MockArray::new(), |c| {
            c.http_latency = Duration::from_millis(30);
            c.faults = vec![HttpFault {
                kind: kind.clone(),
                trigger: FaultTrigger::Nth(1),
            }];
        })
        .await;
        let sess = s.login().await;
        let (create, hosts) = (format!("{V}/volumes?names=v1"), format!("{V}/hosts"));
        let write = s.send(
            Method::POST,
            &create,
            Some(&sess),
            Some(json!({"provisioned": 1048576})),
        );
        let read = s.send(Method::GET, &hosts, Some(&sess), None);
        let (write, read) = tokio::join!(write, read);
        assert!(write.is_err(), "{kind:?}: the write was answered");
        assert_eq!(read.unwrap().status, 200, "{kind:?}");
        let stats = s.sim.stats();
        assert_eq!(stats.connections, 1, "{kind:?}: {stats:?}");
        assert_eq!(stats.http_versions.keys().collect::<Vec<_>>(), ["HTTP/2.0"]);
        s.sim.reset_stats();
        assert_eq!(s.sim.stats().requests, 0);
    }
}
