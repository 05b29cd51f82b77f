//! Consistency at the HTTP level: list parameters split alike on every endpoint,
//! oversized requests answered in the array's error shape, and timeouts for idle,
//! half-sent and slow connections.

use std::time::{Duration, Instant};

use flasharray_mock::MockArray;
use reqwest::Method;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::https::{Sim, names, start, start_with};

#[tokio::test]
async fn encoded_and_raw_commas_split_alike_on_every_endpoint() {
    let s = start().await;
    let t = s.login().await;
    for v in ["lv1", "lv2"] {
        let r = s
            .call(
                &t,
                Method::POST,
                &format!("/volumes?names={v}"),
                Some(json!({"provisioned": 1 << 20})),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.raw);
    }
    for h in ["lh1", "lh2"] {
        assert_eq!(
            s.call(&t, Method::POST, &format!("/hosts?names={h}"), None)
                .await
                .status,
            200
        );
    }
    for (path, want) in [
        ("/volumes?names=lv1{sep}lv2", vec!["lv1", "lv2"]),
        ("/hosts?names=lh1{sep}lh2", vec!["lh1", "lh2"]),
        ("/controllers?names=CT0{sep}CT1", vec!["CT0", "CT1"]),
        ("/admins?names=pureuser{sep}pureuser", vec!["pureuser"]),
    ] {
        for sep in [",", "%2C", "%2c"] {
            let r = s.get(&t, &path.replace("{sep}", sep)).await;
            assert_eq!(r.status, 200, "{path} with {sep}: {}", r.raw);
            assert_eq!(names(&r.body), want, "{path} with {sep}");
        }
    }
    // Sort lists too.
    let r = s
        .get(&t, "/volumes?names=lv1%2Clv2&sort=name-%2Cprovisioned")
        .await;
    assert_eq!(names(&r.body), ["lv2", "lv1"], "{}", r.raw);
}

#[tokio::test]
async fn oversized_requests_get_flasharray_shaped_errors() {
    let s = start().await;
    let t = s.login().await;
    // Over hyper's 64 KiB request-line limit (too long for reqwest to send, so
    // raw, on a plain-HTTP simulator).
    let p = plain(|_| {}).await;
    let mut tcp = TcpStream::connect(addr(&p)).await.unwrap();
    let line = format!(
        "GET /api/2.39/volumes?names={} HTTP/1.1\r\nhost: x\r\n\r\n",
        "a".repeat(100 * 1024)
    );
    tcp.write_all(line.as_bytes()).await.unwrap();
    let (sent, _) = until_closed(tcp).await;
    assert!(
        sent.starts_with("HTTP/1.1 414 URI Too Long\r\n"),
        "{:.200}",
        sent
    );
    assert!(
        sent.contains("content-type: application/json\r\n"),
        "{:.200}",
        sent
    );
    assert!(
        sent.ends_with(r#"{"errors":[{"context":null,"message":"The request URI is too long."}]}"#),
        "{:.300}",
        sent
    );
    // A long URL within the limit reaches the array, which judges the name.
    let r = s
        .get(&t, &format!("/volumes?names={}", "a".repeat(30 * 1024)))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["errors"][0]["message"].is_string(), "{:.200}", r.raw);
    // A head over hyper's buffer: 431, same shape.
    let mut tcp = TcpStream::connect(addr(&p)).await.unwrap();
    let head = format!(
        "GET /api/api_version HTTP/1.1\r\nhost: x\r\nx-filler: {}\r\n\r\n",
        "b".repeat(600 * 1024)
    );
    let _ = tcp.write_all(head.as_bytes()).await;
    let (sent, _) = until_closed(tcp).await;
    assert!(sent.starts_with("HTTP/1.1 431 "), "{:.200}", sent);
    assert!(
        sent.ends_with(r#""message":"The request headers are too large."}]}"#),
        "{:.300}",
        sent
    );
}

async fn plain(edit: impl FnOnce(&mut flasharray_sim::SimConfig)) -> Sim {
    start_with(MockArray::new(), |c| {
        c.tls = false;
        c.header_timeout = Some(Duration::from_millis(300));
        c.body_timeout = Some(Duration::from_millis(300));
        c.idle_timeout = Some(Duration::from_millis(500));
        edit(c);
    })
    .await
}

/// Reads until the server closes; what it sent, and how long that took.
async fn until_closed(mut tcp: TcpStream) -> (String, Duration) {
    let start = Instant::now();
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut out)).await;
    assert!(read.is_ok(), "the server kept the connection open");
    (String::from_utf8_lossy(&out).into_owned(), start.elapsed())
}

fn addr(s: &Sim) -> std::net::SocketAddr {
    s.sim.local_addr()
}

#[tokio::test]
async fn idle_connections_are_closed() {
    let s = plain(|_| {}).await;
    let tcp = TcpStream::connect(addr(&s)).await.unwrap();
    let (sent, took) = until_closed(tcp).await;
    assert!(sent.is_empty(), "{sent}");
    assert!(took >= Duration::from_millis(250), "{took:?}");

    // After a request, a kept-alive connection that stays silent is closed too.
    let mut tcp = TcpStream::connect(addr(&s)).await.unwrap();
    tcp.write_all(b"GET /api/api_version HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let (sent, _) = until_closed(tcp).await;
    assert!(sent.starts_with("HTTP/1.1 200"), "{sent}");
}

#[tokio::test]
async fn half_sent_heads_time_out() {
    let s = plain(|c| c.idle_timeout = None).await;
    let mut tcp = TcpStream::connect(addr(&s)).await.unwrap();
    tcp.write_all(b"GET /api/api_version HTTP/1.1\r\nhost: x\r\n")
        .await
        .unwrap();
    // Trickle header bytes (slowloris): the head must still be complete in time.
    let trickle = async {
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if tcp.write_all(b"x-a: b\r\n").await.is_err() {
                break;
            }
        }
    };
    let started = Instant::now();
    trickle.await;
    let (sent, _) = until_closed(tcp).await;
    assert!(!sent.starts_with("HTTP/1.1 200"), "{sent}");
    assert!(started.elapsed() < Duration::from_secs(4));

    // TLS: a client that never starts its handshake is dropped as well.
    let tls = start_with(MockArray::new(), |c| {
        c.header_timeout = Some(Duration::from_millis(300));
        c.idle_timeout = None;
    })
    .await;
    let (sent, took) = until_closed(TcpStream::connect(tls.sim.local_addr()).await.unwrap()).await;
    assert!(sent.is_empty() && took < Duration::from_secs(3), "{took:?}");
}

#[tokio::test]
async fn slow_bodies_get_408_in_the_array_shape() {
    let s = plain(|_| {}).await;
    let session = s.login().await;
    let mut tcp = TcpStream::connect(addr(&s)).await.unwrap();
    let head = format!(
        "POST /api/2.39/volumes?names=slow HTTP/1.1\r\nhost: x\r\nx-auth-token: {session}\r\n\
         content-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"provisioned\""
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let (sent, _) = until_closed(tcp).await;
    assert!(sent.starts_with("HTTP/1.1 408"), "{sent}");
    assert!(
        sent.ends_with(
            r#"{"errors":[{"context":null,"message":"The request body did not arrive in time."}]}"#
        ),
        "{sent}"
    );
    // Nothing was created, and ordinary requests are unaffected.
    let t = s.login().await;
    assert_eq!(s.get(&t, "/volumes?names=slow").await.status, 400);
}
