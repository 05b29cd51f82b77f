//! Requests per second through the simulator on loopback.
//!
//! A few concurrent keep-alive clients (one connection each) hammer the simulator
//! for a fixed time with the simplest requests: GET one volume by name, and POST one
//! new volume. Latency injection is off, so this measures the HTTP + TLS + routing +
//! mock cost. Client and server share the machine, so the numbers are a floor.
//!
//! ```text
//! cargo bench -p flasharray-sim --bench sim_rps
//! SIM_RPS_SECS=5 SIM_RPS_CLIENTS=8 cargo bench -p flasharray-sim --bench sim_rps
//! ```

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark: its report is its output"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use flasharray_mock::MockArray;
use flasharray_sim::{SimConfig, Simulator};

const TOKEN: &str = "bench-token-not-a-secret";

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[derive(Clone, Copy)]
enum Workload {
    GetByName,
    CreateOne,
}

impl Workload {
    fn label(self) -> &'static str {
        match self {
            Workload::GetByName => "GET /volumes?names=<one>",
            Workload::CreateOne => "POST /volumes?names=<new>",
        }
    }
}

struct Outcome {
    requests: u64,
    elapsed: Duration,
    p50: Duration,
    p99: Duration,
}

async fn login(http: &reqwest::Client, url: &str) -> String {
    let resp = http
        .post(format!("{url}/api/2.39/login"))
        .header("api-token", TOKEN)
        .send()
        .await
        .expect("login");
    assert_eq!(resp.status(), 200, "login failed");
    resp.headers()["x-auth-token"]
        .to_str()
        .expect("session header")
        .to_string()
}

async fn run(tls: bool, workload: Workload, clients: u64, secs: u64) -> Outcome {
    let array = MockArray::builder().seed_volumes(1000).build();
    let mut cfg = SimConfig::new(TOKEN.into());
    cfg.tls = tls;
    let sim = Simulator::start(array, cfg).await.expect("simulator");
    let url = sim.url();
    let counter = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut tasks = Vec::new();
    flasharray::rest::install_crypto_provider();
    for worker in 0..clients {
        let mut builder = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .http1_only();
        if tls {
            let cert = reqwest::Certificate::from_pem(sim.cert_pem().as_bytes()).expect("cert");
            builder = builder.tls_certs_only([cert]);
        }
        let http = builder.build().expect("client");
        let url = url.clone();
        let counter = counter.clone();
        tasks.push(tokio::spawn(async move {
            let session = login(&http, &url).await;
            // Warm the connection before timing.
            let _ = http.get(format!("{url}/api/api_version")).send().await;
            let mut latencies = Vec::new();
            let mut n = 0u64;
            while Instant::now() < deadline {
                let started = Instant::now();
                let req = match workload {
                    Workload::GetByName => http.get(format!(
                        "{url}/api/2.39/volumes?names=seed-vol-{:05}",
                        n % 1000 + 1
                    )),
                    Workload::CreateOne => http
                        .post(format!("{url}/api/2.39/volumes?names=b{worker}-{n}"))
                        .json(&serde_json::json!({"provisioned": 1048576})),
                };
                let resp = req
                    .header("x-auth-token", &session)
                    .send()
                    .await
                    .expect("request");
                assert_eq!(resp.status(), 200, "unexpected answer");
                let _ = resp.bytes().await.expect("body");
                latencies.push(started.elapsed());
                n += 1;
            }
            counter.fetch_add(n, Ordering::Relaxed);
            latencies
        }));
    }
    let started = Instant::now();
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.expect("worker"));
    }
    let elapsed = started.elapsed();
    sim.shutdown().await;
    latencies.sort();
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    Outcome {
        requests: counter.load(Ordering::Relaxed),
        elapsed,
        p50: pct(0.50),
        p99: pct(0.99),
    }
}

fn main() {
    let secs = env_or("SIM_RPS_SECS", 3);
    let clients = env_or("SIM_RPS_CLIENTS", 4);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "sim_rps: {clients} keep-alive clients, {secs} s per case, {} CPUs, latency injection off",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:<6} {:<28} {:>10} {:>10} {:>10} {:>10}",
        "scheme", "request", "requests", "req/s", "p50", "p99"
    );
    for tls in [true, false] {
        for workload in [Workload::GetByName, Workload::CreateOne] {
            let o = runtime.block_on(run(tls, workload, clients, secs));
            println!(
                "{:<6} {:<28} {:>10} {:>10.0} {:>10.2?} {:>10.2?}",
                if tls { "https" } else { "http" },
                workload.label(),
                o.requests,
                o.requests as f64 / o.elapsed.as_secs_f64(),
                o.p50,
                o.p99
            );
        }
    }
}
