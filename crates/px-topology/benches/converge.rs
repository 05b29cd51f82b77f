//! Converge benchmark: provisioning a direct-access-like tenant on MockArray with a
//! fixed injected round-trip latency, pxfa's batched rounds against the naive way
//! (one call per object, sequentially), in the same run.
//!
//! Two modes, both by default: `mock` hands the `MockArray` itself to the engine,
//! with the latency injected per call; `sim` serves the same `MockArray` through the
//! HTTPS simulator with the latency on *every* HTTP request (version and login too)
//! and once more on each new connection, and hands the engine a `RestArray` talking
//! to it, so every call goes through the real client, TLS, HTTP/2 and the
//! simulator's routes. In `sim` mode the simulator's request log gives the rounds on
//! the wire; the bench exits non-zero when a cold apply needs more than
//! [`MAX_FRESH_DEPTH`] or a repeat more than [`MAX_AGAIN_DEPTH`].
//!
//! Run: `cargo bench -p px-topology --bench converge` (add `-- --latency-ms 5` to
//! change the latency, `-- --workers 3,16` to change the sizes, `-- --mode sim`
//! for one mode only: `mock`, `sim` or `both`).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark binary reports its results on the terminal"
)]

use std::time::{Duration, Instant};

use flasharray::RestArray;
use flasharray::models::{HostPost, PodPost, Tag, VolumePost};
use flasharray::{FlashArray, ListParams, Size, TagResource};
use flasharray_mock::MockArray;
use flasharray_sim::{RunningSim, SimConfig, Simulator, critical_path_depth};
use px_topology::{
    ApplyOptions, ApplyReport, ArrayOnly, DesiredState, PlanOptions, Site, TAG_NAMESPACE,
};

// The tenant the integration tests provision; the bench uses only part of the file.
#[allow(dead_code)]
#[path = "../tests/it/support/tenant.rs"]
mod tenant;

/// Wire rounds allowed for a cold apply, logout excluded (the bench does not log
/// out): version, login, one read round, three write rounds.
const MAX_FRESH_DEPTH: usize = 6;
/// Wire rounds allowed for a repeat with nothing to do, on a logged-in client: the
/// read round (a fresh process adds version, login and logout: 4).
const MAX_AGAIN_DEPTH: usize = 1;
const MGMT_HOSTS: u32 = 3;
const ADMIN: &str = "px-bench";
/// The API token the simulator accepts at `POST /login` (a local, throwaway value).
const SIM_TOKEN: &str = "px-bench-sim-token";

/// `workers` worker VMs x 2 data disks + 1 metadata disk in the tenant pod, shared
/// management hosts in one host group, every volume connected to the group: the
/// integration tests' tenant, shared by path.
fn direct_access(workers: usize) -> DesiredState {
    let workers = u32::try_from(workers).expect("worker count");
    tenant::direct_access_like("bench", ADMIN, workers, MGMT_HOSTS, Size::gib(512))
}

fn tags(name: &str, t: &std::collections::BTreeMap<String, String>) -> Vec<Tag> {
    t.iter()
        .map(|(k, v)| Tag::new(name, TAG_NAMESPACE, k, v))
        .collect()
}

/// Whether an object exists, the naive way: one GET per name.
fn exists<T>(r: flasharray::Result<Vec<T>>) -> bool {
    r.map(|v| !v.is_empty()).unwrap_or(false)
}

/// The naive applier: for each object in dependency order, one GET to see whether it
/// exists, then one call to create it, one call to tag it; one call per membership and
/// per connection. Sequential, as a simple script would do it.
async fn naive_apply(array: &dyn FlashArray, d: &DesiredState) -> Result<(), flasharray::Error> {
    if let Some(p) = &d.pod {
        if !exists(array.list_pods(&ListParams::names([p.name.as_str()])).await) {
            array
                .create_pods(std::slice::from_ref(&p.name), &PodPost::default())
                .await?;
        }
        array
            .set_tags(TagResource::Pod, &tags(p.name.as_str(), &p.tags))
            .await?;
    }
    for g in &d.host_groups {
        if !exists(
            array
                .list_host_groups(&ListParams::names([g.name.as_str()]))
                .await,
        ) {
            array
                .create_host_groups(std::slice::from_ref(&g.name), &Default::default())
                .await?;
        }
        array
            .set_tags(TagResource::HostGroup, &tags(g.name.as_str(), &g.tags))
            .await?;
    }
    for h in &d.hosts {
        if !exists(
            array
                .list_hosts(&ListParams::names([h.name.as_str()]))
                .await,
        ) {
            let post = HostPost::default().with_wwns(h.wwns.clone());
            array
                .create_hosts(std::slice::from_ref(&h.name), &post)
                .await?;
        }
        array
            .set_tags(TagResource::Host, &tags(h.name.as_str(), &h.tags))
            .await?;
        if let Some(g) = &h.host_group {
            array
                .add_host_group_members(g, std::slice::from_ref(&h.name))
                .await?;
        }
    }
    for v in &d.volumes {
        if !exists(
            array
                .list_volumes(&ListParams::names([v.name.as_str()]))
                .await,
        ) {
            let body = VolumePost::default().with_provisioned(v.size.as_u64());
            array
                .create_volumes(std::slice::from_ref(&v.name), &body)
                .await?;
        }
        array
            .set_tags(TagResource::Volume, &tags(v.name.as_str(), &v.tags))
            .await?;
    }
    for c in &d.connections {
        array
            .create_connections(&c.target, std::slice::from_ref(&c.volume), c.lun)
            .await?;
    }
    if let Some(t) = &d.api_token {
        array.create_api_token(&t.admin, t.lifetime).await?;
    }
    Ok(())
}

/// Where the engine's calls go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The `MockArray` itself, as `&dyn FlashArray`.
    Mock,
    /// A `RestArray` over HTTPS to the simulator serving the `MockArray`.
    Sim,
}

impl Mode {
    fn label(self) -> &'static str {
        match self {
            Mode::Mock => "mock",
            Mode::Sim => "sim",
        }
    }
}

/// A fresh array with the latency injected, and how the engine reaches it. Calls are
/// counted on the `MockArray` in both modes; in `sim` mode that misses the client's
/// `GET /api/api_version` and `POST /login`, which the simulator answers itself
/// (2 HTTP requests per client, without injected latency).
struct Target {
    mock: MockArray,
    rest: Option<(RunningSim, RestArray)>,
}

impl Target {
    async fn new(mode: Mode, latency: Duration) -> Target {
        let mock = MockArray::builder().admin(ADMIN).build();
        let rest = match mode {
            Mode::Mock => {
                mock.faults().set_latency(latency);
                None
            }
            Mode::Sim => {
                let cfg = SimConfig {
                    tls: true,
                    http_latency: latency,
                    connect_latency: latency,
                    ..SimConfig::new(SIM_TOKEN.into())
                };
                let sim = Simulator::start(mock.clone(), cfg)
                    .await
                    .expect("simulator starts");
                let client = RestArray::builder(sim.url())
                    .api_token(SIM_TOKEN.into())
                    .ca_pem(sim.cert_pem().as_bytes().to_vec())
                    .build()
                    .expect("REST client");
                Some((sim, client))
            }
        };
        Target { mock, rest }
    }

    /// Requests, wire depth and TLS handshakes since the last call; `None` in mock mode.
    fn wire(&self) -> Option<Wire> {
        let (sim, _) = self.rest.as_ref()?;
        let log = sim.request_log();
        let stats = sim.stats();
        sim.reset_stats();
        Some(Wire {
            requests: stats.requests,
            depth: critical_path_depth(&log),
            handshakes: stats.tls_handshakes,
            h2: stats.http_versions.keys().all(|v| v == "HTTP/2.0"),
        })
    }

    fn array(&self) -> &dyn FlashArray {
        match &self.rest {
            Some((_, client)) => client,
            None => &self.mock,
        }
    }

    async fn shutdown(self) {
        if let Some((sim, _)) = self.rest {
            sim.shutdown().await;
        }
    }
}

/// What the simulator saw of one run.
#[derive(Clone, Copy)]
struct Wire {
    requests: u64,
    depth: usize,
    handshakes: u64,
    h2: bool,
}

/// The repeat run on an array that already holds the tenant.
struct Again {
    wall: Duration,
    calls: u64,
    writes: u64,
    wire: Option<Wire>,
}

struct Row {
    mode: Mode,
    workers: usize,
    objects: usize,
    wall: Duration,
    calls: u64,
    rounds: usize,
    floor: Duration,
    wire: Option<Wire>,
    /// `None` when the first apply failed (then the repeat is not run).
    again: Option<Again>,
    /// Why the first apply failed: how many changes, and the first error.
    failure: Option<String>,
    naive_wall: Duration,
    naive_calls: u64,
    naive_failure: Option<String>,
}

/// One pxfa run through the pipeline's door for a hand-built state: observe, plan,
/// apply (no clusters; the bench holds a new token, as an adapter's copy would).
/// Returns the observation's rounds and the apply's report.
async fn pipeline_run(a: &dyn FlashArray, d: &DesiredState) -> (usize, ApplyReport) {
    let planned = d
        .observe(Site::array(a))
        .await
        .expect("observe")
        .plan(&PlanOptions::default());
    let rounds = planned.observed().rounds;
    let applied = planned
        .with_token_copy(true)
        .apply(&ArrayOnly, ApplyOptions::default(), &|_| {})
        .await
        .expect("apply");
    (rounds, applied.report().clone())
}

async fn measure(mode: Mode, workers: usize, latency: Duration) -> Row {
    let d = direct_access(workers);
    let objects = 1 + d.host_groups.len() + d.hosts.len() * 2 + d.volumes.len() * 2 + 1;

    // The cold run includes the REST client's version negotiation, login and TLS
    // handshakes in `sim` mode: a fresh client, as a fresh `pxfa apply` would be.
    let t = Target::new(mode, latency).await;
    let a = t.array();
    let start = Instant::now();
    let (obs_rounds, r) = pipeline_run(a, &d).await;
    let wall = start.elapsed();
    let calls = t.mock.stats().calls;
    let wire = t.wire();
    // Engine rounds in mock mode; on the wire (version and login included) in sim
    // mode, plus one latency for the first connection.
    let (rounds, floor_units) = match wire {
        Some(w) => (w.depth, w.depth + 1),
        None => (obs_rounds + r.rounds, obs_rounds + r.rounds),
    };
    let floor = latency * u32::try_from(floor_units).expect("few rounds");
    let failure = (!r.is_success()).then(|| {
        format!(
            "{} failed, {} skipped, {} applied; first error: {}",
            r.failed.len(),
            r.skipped.len(),
            r.applied.len(),
            r.failed.first().map_or("-", |f| f.error.as_str())
        )
    });

    let again = if failure.is_none() {
        t.mock.reset_stats();
        let start = Instant::now();
        let (_, r) = pipeline_run(a, &d).await;
        let wall = start.elapsed();
        assert!(
            r.is_success() && r.applied.is_empty(),
            "second apply changed things"
        );
        let s = t.mock.stats();
        Some(Again {
            wall,
            calls: s.calls,
            writes: s.writes,
            wire: t.wire(),
        })
    } else {
        None
    };
    t.shutdown().await;

    let n = Target::new(mode, latency).await;
    let start = Instant::now();
    let naive = naive_apply(n.array(), &d).await;
    let naive_wall = start.elapsed();
    let naive_calls = n.mock.stats().calls;
    n.shutdown().await;

    Row {
        mode,
        workers,
        objects,
        wall,
        calls,
        rounds,
        floor,
        wire,
        again,
        failure,
        naive_wall,
        naive_calls,
        naive_failure: naive.err().map(|e| e.to_string()),
    }
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let latency = Duration::from_millis(
        arg("--latency-ms")
            .and_then(|s| s.parse().ok())
            .unwrap_or(20),
    );
    let sizes: Vec<usize> = arg("--workers")
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![3, 16, 64]);
    let modes = match arg("--mode").as_deref() {
        None | Some("both") => vec![Mode::Mock, Mode::Sim],
        Some("mock") => vec![Mode::Mock],
        Some("sim") => vec![Mode::Sim],
        Some(other) => panic!("--mode {other:?}: expected mock, sim or both"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    println!(
        "converge benchmark: {} ms latency per call (mock: MockArray faults; sim: every HTTP request and each new connection), concurrency {}",
        latency.as_millis(),
        ApplyOptions::default().concurrency
    );
    println!(
        "modes: mock = MockArray as &dyn FlashArray, rounds = engine rounds; sim = RestArray over \
         HTTPS to the simulator serving that MockArray, rounds = wire depth (version and login \
         included, logout excluded), floor = (rounds + 1 connection) x latency; calls = array \
         calls (MockArray), reqs = HTTP requests, hs = TLS handshakes"
    );
    println!(
        "{:>4} {:>7} {:>7} | {:>9} {:>6} {:>5} {:>3} {:>6} {:>8} {:>6} | {:>9} {:>6} {:>6} {:>6} | {:>9} {:>6} {:>7}",
        "mode",
        "workers",
        "objects",
        "pxfa ms",
        "calls",
        "reqs",
        "hs",
        "rounds",
        "floor ms",
        "ratio",
        "again ms",
        "calls",
        "writes",
        "rounds",
        "naive ms",
        "calls",
        "speedup"
    );
    let mut failures = 0;
    for mode in modes {
        for &w in &sizes {
            let r = rt.block_on(measure(mode, w, latency));
            let ms = |d: Duration| d.as_secs_f64() * 1000.0;
            let (again_ms, again_calls, again_writes, again_rounds) = match &r.again {
                Some(g) => (
                    format!("{:.0}", ms(g.wall)),
                    g.calls.to_string(),
                    g.writes.to_string(),
                    g.wire.map_or("-".into(), |w| w.depth.to_string()),
                ),
                None => ("-".into(), "-".into(), "-".into(), "-".into()),
            };
            let (reqs, hs) = r.wire.map_or(("-".into(), "-".into()), |w| {
                (w.requests.to_string(), w.handshakes.to_string())
            });
            println!(
                "{:>4} {:>7} {:>7} | {:>9.0} {:>6} {:>5} {:>3} {:>6} {:>8.0} {:>6.2} | {:>9} {:>6} {:>6} {:>6} | {:>9.0} {:>6} {:>6.1}x",
                r.mode.label(),
                r.workers,
                r.objects,
                ms(r.wall),
                r.calls,
                reqs,
                hs,
                r.rounds,
                ms(r.floor),
                ms(r.wall) / ms(r.floor),
                again_ms,
                again_calls,
                again_writes,
                again_rounds,
                ms(r.naive_wall),
                r.naive_calls,
                ms(r.naive_wall) / ms(r.wall)
            );
            if let Some(w) = r.wire
                && (w.depth > MAX_FRESH_DEPTH || !w.h2)
            {
                println!(
                    "     ^ MISS: cold apply {} wire rounds (at most {MAX_FRESH_DEPTH}), HTTP/2 {}",
                    w.depth, w.h2
                );
                failures += 1;
            }
            if let Some(w) = r.again.as_ref().and_then(|g| g.wire)
                && w.depth > MAX_AGAIN_DEPTH
            {
                println!(
                    "     ^ MISS: repeat {} wire rounds (at most {MAX_AGAIN_DEPTH})",
                    w.depth
                );
                failures += 1;
            }
            if let Some(f) = &r.failure {
                println!("     ^ pxfa apply FAILED: {}", shorten(f));
                failures += 1;
            }
            if let Some(f) = &r.naive_failure {
                println!("     ^ naive apply FAILED: {}", shorten(f));
                failures += 1;
            }
        }
    }
    if failures > 0 {
        eprintln!("{failures} run(s) failed (see the rows marked FAILED)");
        std::process::exit(1);
    }
}

/// One line, at most 300 characters.
fn shorten(s: &str) -> String {
    let line = s.replace('\n', " ");
    match line.char_indices().nth(300) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line,
    }
}
