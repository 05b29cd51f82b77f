//! Listing 100,000 volumes, collected (`list_volumes`) versus streamed
//! (`volume_stream`), against a local plain-HTTP array serving pages of 1,000.
//!
//! ```text
//! cargo bench -p flasharray --bench list_volumes
//! ```
//!
//! The parent process serves the pages; each measurement runs the client in a fresh
//! child process, so that its peak resident memory (`VmHWM` in /proc/self/status)
//! belongs to that one listing alone and not to the server or an earlier run.
#![allow(
    clippy::print_stdout,
    reason = "a benchmark reports its measurements on stdout"
)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use flasharray::models::{Reference, Volume};
use flasharray::{FlashArray, ListParams, RestArray};
use futures_util::StreamExt;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use secrecy::SecretString;
use tokio::net::TcpListener;

const VOLUMES: usize = 100_000;
const PAGE: usize = 1_000;
const RUNS: usize = 3;

fn volume(i: usize) -> Volume {
    let mut volume = Volume::default();
    volume.id = Some(format!("0b1e6f9a-3c55-4f0e-9d7e-{i:012x}"));
    volume.name = format!("px-tenant-{:03}-node{:02}-disk{i:06}", i / 1000, i % 7);
    volume.connection_count = Some(1);
    volume.created = Some(1_700_000_000_000 + i as u64);
    volume.host_encryption_key_status = Some("none".into());
    volume.provisioned = 107_374_182_400;
    volume.serial = Some(format!("1A2B3C4D5E6F7081{i:08X}"));
    volume.subtype = Some("regular".into());
    volume.promotion_status = Some("promoted".into());
    volume.requested_promotion_state = Some("promoted".into());
    volume.priority = Some(0);
    volume.pod = if i.is_multiple_of(2) {
        Reference::new("7c9d0000-1111-2222-3333-444455556666", "tenant")
    } else {
        Reference::default()
    };
    volume
}

/// Pre-rendered pages: page `n` answers `continuation_token=p{n}`.
fn pages() -> Vec<Bytes> {
    let count = VOLUMES.div_ceil(PAGE);
    (0..count)
        .map(|n| {
            let items: Vec<Volume> = (n * PAGE..((n + 1) * PAGE).min(VOLUMES))
                .map(volume)
                .collect();
            let last = n + 1 == count;
            let body = serde_json::json!({
                "continuation_token": if last { None } else { Some(format!("p{}", n + 1)) },
                "more_items_remaining": !last,
                "total_item_count": null,
                "items": items,
            });
            Bytes::from(serde_json::to_vec(&body).unwrap())
        })
        .collect()
}

async fn serve(pages: Arc<Vec<Bytes>>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let pages = pages.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req: Request<Incoming>| {
                    let pages = pages.clone();
                    async move { Ok::<_, Infallible>(answer(&req, &pages)) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), svc)
                    .await;
            });
        }
    });
    addr
}

fn answer(req: &Request<Incoming>, pages: &[Bytes]) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    let json = |b: Bytes| {
        Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(b))
            .unwrap()
    };
    if path == "/api/api_version" {
        return json(Bytes::from_static(br#"{"version":["1.19","2.0","2.26"]}"#));
    }
    if path == "/api/2.26/login" {
        let mut r = json(Bytes::from_static(br#"{"items":[{"username":"bench"}]}"#));
        r.headers_mut()
            .insert("x-auth-token", "bench-session".parse().unwrap());
        return r;
    }
    if path == "/api/2.26/volumes" {
        let page = req
            .uri()
            .query()
            .unwrap_or("")
            .split('&')
            .find_map(|kv| kv.strip_prefix("continuation_token=p"))
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0);
        if let Some(b) = pages.get(page) {
            return json(b.clone());
        }
    }
    Response::builder()
        .status(404)
        .body(Full::new(Bytes::from_static(
            br#"{"errors":[{"context":null,"message":"Not found"}]}"#,
        )))
        .unwrap()
}

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Child: one listing, then one line `mode wall_ms peak_kib base_kib count`.
fn client(mode: &str, addr: &str) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let array = RestArray::builder(format!("http://{addr}"))
            .allow_http(true)
            .api_token(SecretString::from("bench-token"))
            .build()
            .unwrap();
        // Log in before measuring, so that only the listing is timed: any
        // authenticated call does, and this server answers the probe with a 404.
        let probe = array.get_json("login-probe", &[]).await;
        assert!(probe.is_err_and(|e| e.kind() == flasharray::ErrorKind::NotFound));
        let base = status_kib("VmRSS:");
        let t = Instant::now();
        let count = match mode {
            "collect" => {
                let all = array
                    .list_volumes(&ListParams::all().page_size(PAGE as u32))
                    .await
                    .unwrap();
                all.iter().filter(|v| v.provisioned > 0).count()
            }
            "stream" => {
                let mut n = 0;
                let mut s = array.volume_stream(ListParams::all().page_size(PAGE as u32));
                while let Some(v) = s.next().await {
                    if v.unwrap().provisioned > 0 {
                        n += 1;
                    }
                }
                n
            }
            other => panic!("unknown mode {other}"),
        };
        let wall = t.elapsed();
        let peak = status_kib("VmHWM:");
        assert_eq!(count, VOLUMES);
        println!("{mode} {} {peak} {base} {count}", wall.as_millis());
    });
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--client") {
        client(&args[i + 1], &args[i + 2]);
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let t = Instant::now();
    let pages = Arc::new(pages());
    let page_bytes: usize = pages.iter().map(|p| p.len()).sum();
    let addr = rt.block_on(serve(pages));
    println!(
        "served: {VOLUMES} volumes in pages of {PAGE}, {:.1} MiB of JSON (rendered in {:?})",
        page_bytes as f64 / (1 << 20) as f64,
        t.elapsed()
    );
    println!(
        "{:<8} {:>8} {:>14} {:>14}",
        "mode", "wall ms", "peak RSS MiB", "growth MiB"
    );
    let exe = std::env::current_exe().unwrap();
    for mode in ["collect", "stream"] {
        let mut runs = Vec::new();
        for _ in 0..RUNS {
            let out = Command::new(&exe)
                .args(["--client", mode, &addr.to_string()])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let line = String::from_utf8(out.stdout).unwrap();
            let f: Vec<u64> = line
                .split_whitespace()
                .skip(1)
                .map(|x| x.parse().unwrap())
                .collect();
            runs.push((f[0], f[1], f[2]));
        }
        runs.sort();
        let (wall, peak, base) = runs[RUNS / 2];
        println!(
            "{mode:<8} {wall:>8} {:>14.1} {:>14.1}",
            peak as f64 / 1024.0,
            peak.saturating_sub(base) as f64 / 1024.0
        );
    }
    // The server runs on `rt`, which lives until here.
    drop(rt);
}
