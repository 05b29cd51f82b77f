//! The controller at scale: N TenantStorage objects (default 200) spread over A
//! arrays (default 2), each array an HTTPS simulator adding a fixed latency (default
//! 20 ms) to every HTTP request and to each new connection; the management cluster
//! is an in-process fake API server where every applied object is ready at once.
//! The controller runs in a process of its own (this binary again, with
//! `--controller-process`), as in production (`px_controller::run` with leader
//! election, the REST connector, one shared client and observation cache per
//! array), so that its memory is its own. The bench reports:
//!
//! - time until every object is `Ready`, reconciles and errors;
//! - array requests and sessions (logins; nothing logs out, so this is also the peak
//!   of live sessions) per array;
//! - one resync pass with nothing to change (the drift check of every object, 8 at
//!   a time as the controller runs them, from a new listing interval, as a drift
//!   check a drift interval after the convergence sees it): the line
//!   `resync: N tenants, A arrays, R requests per array` (R: the most HTTP requests
//!   any array served), array writes (must be 0) and the wall time of the pass;
//! - `controller peak RSS: M MiB`: the peak resident set of the controller's process,
//!   after the line `controller allocator: ...` that says which jemalloc options it
//!   ran with (compiled in, and `_RJEM_MALLOC_CONF` from the bench's environment or
//!   the Deployment's, if set).
//!
//! Run: `cargo bench -p px-controller -- --tenants 1000 --arrays 4` (`--latency-ms 5
//! --drift-interval-s 30` to change the latency and the deadline).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark binary reports its results on the terminal"
)]

#[path = "../../px-cluster/tests/it/support.rs"]
#[allow(dead_code)]
mod support;

#[path = "../tests/it/merge_patch.rs"]
mod merge_patch;
use merge_patch::merge;
#[path = "../tests/it/objects.rs"]
mod objects;
use objects::{mount_empty_orphan_lists, secret};

#[path = "../tests/it/lease.rs"]
#[allow(dead_code)]
mod lease;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flasharray_mock::MockArray;
use flasharray_sim::{RunningSim, SimConfig, Simulator};
use futures_util::StreamExt;
use kube::api::{Api, DynamicObject, ListParams};
use px_controller::{
    ArrayPool, ConditionType, LeaseConfig, Metrics, NamespaceReferences, Options, RestConnector,
    TenantStatus, context, tenant_storage_resource,
};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The shipped `pxfa` binary's allocator (crates/cli/src/main.rs). The controller's
/// process is this bench binary again, so it must allocate as `pxfa controller run`
/// does for its peak RSS to be the shipped one.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const NS: &str = "pxfa";
const SIM_TOKEN: &str = "bench-array-token-0000";

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The TenantStorage objects by name, with merge patches on the object and its
/// status subresource, resourceVersion checks, and a watch that sends every object
/// changed since the version asked for (as the API server does, a patch that
/// changes nothing keeps the version and sends no event).
#[derive(Clone, Default)]
struct Store(Arc<Mutex<BTreeMap<String, Value>>>, Arc<AtomicU64>);

fn version_of(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

impl Respond for Store {
    fn respond(&self, r: &Request) -> ResponseTemplate {
        let segments: Vec<&str> = r.url.path().split('/').collect();
        let i = segments
            .iter()
            .position(|s| *s == "tenantstorages")
            .unwrap();
        let mut all = self.0.lock().unwrap();
        let Some(name) = segments.get(i + 1) else {
            if r.url
                .query_pairs()
                .any(|(k, v)| k == "watch" && v == "true")
            {
                let since: u64 = r
                    .url
                    .query_pairs()
                    .find(|(k, _)| k == "resourceVersion")
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(0);
                let mut changed: Vec<&Value> =
                    all.values().filter(|o| version_of(o) > since).collect();
                changed.sort_by_key(|o| version_of(o));
                let lines: Vec<String> = changed
                    .iter()
                    .map(|o| json!({"type": "MODIFIED", "object": o}).to_string())
                    .collect();
                return ResponseTemplate::new(200)
                    .set_delay(Duration::from_millis(if lines.is_empty() {
                        300
                    } else {
                        0
                    }))
                    .set_body_string(lines.join("\n"));
            }
            let items: Vec<Value> = all.values().cloned().collect();
            return ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": "pxfa.io/v1alpha1", "kind": "TenantStorageList",
                "metadata": {"resourceVersion": self.1.load(Ordering::SeqCst).to_string()},
                "items": items}));
        };
        let Some(obj) = all.get_mut(*name) else {
            return ResponseTemplate::new(404).set_body_json(
                json!({"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404}),
            );
        };
        if r.method.as_str() == "PATCH" {
            let mut patch: Value = r.body_json().unwrap();
            if segments.get(i + 2) == Some(&"status") {
                patch = json!({"status": patch["status"].clone()});
            } else if let Some(m) = patch["metadata"].as_object_mut()
                && let Some(rv) = m.remove("resourceVersion")
                && rv != obj["metadata"]["resourceVersion"]
            {
                return ResponseTemplate::new(409).set_body_json(json!({
                    "kind": "Status", "status": "Failure", "reason": "Conflict", "code": 409}));
            }
            let before = obj.clone();
            merge(obj, &patch);
            if *obj != before {
                let rv = self.1.fetch_add(1, Ordering::SeqCst) + 1;
                obj["metadata"]["resourceVersion"] = json!(rv.to_string());
            }
        }
        ResponseTemplate::new(200).set_body_json(obj.clone())
    }
}

/// Tenant `i`: the valid-full fixture renamed, on array `i % arrays`.
fn tenant(template: &str, i: usize, endpoint: &str, creds: &str) -> Value {
    let name = format!("t{i:03}");
    let text = template.replace("tenant-full", &name);
    let mut obj: Value = serde_saphyr::from_str(&text).unwrap();
    obj["metadata"]["uid"] = json!(format!("00000000-0000-4000-8000-{i:012}"));
    obj["metadata"]["generation"] = json!(1);
    obj["metadata"]["resourceVersion"] = json!("1");
    obj["metadata"]["creationTimestamp"] = json!("2026-12-01T10:00:00Z");
    obj["spec"]["array"]["endpoint"] = json!(endpoint);
    obj["spec"]["credentialsSecret"] = json!({"name": creds, "caKey": "ca.crt"});
    obj
}

/// Every tenant cluster answers through the same fake server: HostedClusters name
/// their kubeconfig Secret, which points back here.
async fn mount_clusters(server: &MockServer, kubeconfig: String) {
    Mock::given(method("GET"))
        .and(path_regex(
            r"^/apis/hypershift\.openshift\.io/v1beta1/namespaces/clusters/hostedclusters/[^/]+$",
        ))
        .respond_with(|r: &Request| {
            let name = r.url.path().rsplit('/').next().unwrap().to_string();
            ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
                "metadata": {"name": name, "namespace": "clusters"},
                "status": {"kubeconfig": {"name": format!("{name}-admin-kubeconfig")}}}))
        })
        .with_priority(1)
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(
            r"^/api/v1/namespaces/clusters/secrets/[^/]+-admin-kubeconfig$",
        ))
        .respond_with(move |r: &Request| {
            let name = r.url.path().rsplit('/').next().unwrap().to_string();
            ResponseTemplate::new(200).set_body_json(secret(
                "clusters",
                &name,
                &[],
                &[("kubeconfig", &kubeconfig)],
            ))
        })
        .with_priority(1)
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(r"/storageclusters/[^/]+$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "core.libopenstorage.org/v1", "kind": "StorageCluster",
            "metadata": {"name": "px", "namespace": "portworx"},
            "status": {"phase": "Online"}})))
        .with_priority(1)
        .mount(server)
        .await;
    objects::mount_installed_operator(server).await;
    // The worker VMs of each tenant's NodePool.
    Mock::given(method("GET"))
        .and(path_regex(
            r"^/apis/kubevirt\.io/v1/namespaces/clusters-[^/]+/virtualmachines$",
        ))
        .respond_with(|r: &Request| {
            let ns = r.url.path().split('/').nth(5).unwrap().to_string();
            let tenant = ns.trim_start_matches("clusters-").to_string();
            let vms: Vec<Value> = (0..4)
                .map(|i| {
                    support::vm_json(
                        &format!("{tenant}-workers-{i}"),
                        &format!("2026-01-0{}T00:00:00Z", i + 1),
                        None,
                        json!([]),
                    )
                })
                .collect();
            ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineList",
                "metadata": {}, "items": vms}))
        })
        .with_priority(1)
        .mount(server)
        .await;
}

/// Peak and current resident set of this process, in KiB.
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

struct Array {
    mock: MockArray,
    sim: RunningSim,
    endpoint: String,
    creds: String,
}

fn ready_count(store: &Store) -> usize {
    store
        .0
        .lock()
        .unwrap()
        .values()
        .filter(|o| TenantStatus::from_object(o).is_true(ConditionType::Ready))
        .count()
}

/// The management cluster and the arrays, with every tenant stored.
struct World {
    server: MockServer,
    _dir: tempfile::TempDir,
    kubeconfig: std::path::PathBuf,
    fleet: Vec<Array>,
    store: Store,
    events: lease::Events,
}

async fn start_array(
    server: &MockServer,
    a: usize,
    arrays: usize,
    tenants: usize,
    latency: Duration,
) -> Array {
    let mut builder = MockArray::builder();
    for i in (0..tenants).filter(|i| i % arrays == a) {
        builder = builder.admin(format!("pxfa-t{i:03}"));
    }
    let mock = builder.build();
    let sim = Simulator::start(
        mock.clone(),
        SimConfig {
            tls: true,
            http_latency: latency,
            connect_latency: latency,
            ..SimConfig::new(SIM_TOKEN.into())
        },
    )
    .await
    .expect("simulator starts");
    let endpoint = sim.url().trim_start_matches("https://").to_string();
    let creds = format!("fa{a}-creds");
    let pure =
        json!({"FlashArrays": [{"MgmtEndPoint": endpoint, "APIToken": SIM_TOKEN}]}).to_string();
    Mock::given(method("GET"))
        .and(path(format!("/api/v1/namespaces/{NS}/secrets/{creds}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(secret(
            NS,
            &creds,
            &[],
            &[("pure.json", &pure), ("ca.crt", sim.cert_pem())],
        )))
        .with_priority(1)
        .mount(server)
        .await;
    Array {
        mock,
        sim,
        endpoint,
        creds,
    }
}

async fn world(tenants: usize, arrays: usize, latency: Duration) -> World {
    let template = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/tenants/valid-full.yaml"
    ))
    .unwrap();
    // The fake API server keeps no request log: its memory stays flat.
    let server = MockServer::builder()
        .disable_request_recording()
        .start()
        .await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig_path = dir.path().join("kubeconfig");
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster: {{server: \"{}\"}}\n\
         users:\n- name: admin\n  user: {{token: not-a-real-token}}\n\
         contexts:\n- name: fake\n  context: {{cluster: fake, user: admin, namespace: default}}\n\
         current-context: fake\n",
        server.uri()
    );
    std::fs::write(&kubeconfig_path, &kubeconfig).unwrap();
    let mut fleet = Vec::new();
    for a in 0..arrays {
        fleet.push(start_array(&server, a, arrays, tenants, latency).await);
    }
    let store = Store::default();
    store.1.store(1, Ordering::SeqCst);
    for i in 0..tenants {
        let a = &fleet[i % arrays];
        let obj = tenant(&template, i, &a.endpoint, &a.creds);
        store
            .0
            .lock()
            .unwrap()
            .insert(obj["metadata"]["name"].as_str().unwrap().to_string(), obj);
    }
    Mock::given(path_regex(
        r"^/apis/pxfa\.io/v1alpha1(/namespaces/[^/]+)?/tenantstorages(/[^/]+(/status)?)?$",
    ))
    .respond_with(store.clone())
    .with_priority(1)
    .mount(&server)
    .await;
    lease::Leases::default().mount(&server).await;
    let events = lease::Events::default();
    events.mount(&server).await;
    mount_clusters(&server, kubeconfig).await;
    mount_empty_orphan_lists(&server).await;
    support::mount_ready_management(&server, &support::rendered(&support::direct_access_spec()))
        .await;
    World {
        server,
        _dir: dir,
        kubeconfig: kubeconfig_path,
        fleet,
        store,
        events,
    }
}

/// jemalloc's settings as this build of it reads them at run time (tikv-jemalloc-sys
/// prefixes its symbols and its `MALLOC_CONF` with `_rjem_`); they override the
/// compiled-in ones option by option.
const MALLOC_CONF: &str = "_RJEM_MALLOC_CONF";

/// jemalloc's compiled-in options, as the build gave them to tikv-jemalloc-sys
/// (`[env]` in .cargo/config.toml): the same for this binary and `pxfa`.
const COMPILED_MALLOC_CONF: Option<&str> = option_env!("JEMALLOC_SYS_WITH_MALLOC_CONF");

/// The allocator configuration the controller's process runs with, said on the
/// terminal: the compiled-in options and the run-time override, if any (the bench's
/// own environment first, to try other settings; else the Deployment's `env`).
/// Returns the override for the process's environment.
fn allocator_configuration() -> Option<String> {
    let compiled = COMPILED_MALLOC_CONF.map_or_else(
        || "none (jemalloc's defaults)".to_string(),
        |c| format!("{c} (.cargo/config.toml)"),
    );
    let set = std::env::var(MALLOC_CONF)
        .ok()
        .map(|c| (c, "the bench's environment"))
        .or_else(|| shipped_env(MALLOC_CONF).map(|c| (c, "deploy/controller/controller.yaml")));
    let runtime = set.as_ref().map_or_else(
        || format!("{MALLOC_CONF} unset"),
        |(c, from)| format!("{MALLOC_CONF}={c} ({from})"),
    );
    eprintln!("controller allocator: jemalloc, compiled-in {compiled}; {runtime}");
    set.map(|(c, _)| c)
}

/// The value of `name` in the controller container's `env` in
/// deploy/controller/controller.yaml, so that the bench's controller process runs
/// as the Deployment runs it.
fn shipped_env(name: &str) -> Option<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/controller/controller.yaml"
    );
    let text = std::fs::read_to_string(path).expect("deploy/controller/controller.yaml reads");
    text.split("\n---\n")
        .filter_map(|d| serde_saphyr::from_str::<Value>(d).ok())
        .filter(|d| d["kind"] == "Deployment")
        .flat_map(|d| {
            d["spec"]["template"]["spec"]["containers"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|c| c["name"] == "controller")
        .flat_map(|c| c["env"].as_array().cloned().unwrap_or_default())
        .find(|e| e["name"] == name)
        .and_then(|e| e["value"].as_str().map(str::to_owned))
}

/// The controller's process, driven over its standard input and output.
struct ControllerProcess {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl ControllerProcess {
    /// `PXFA_BENCH_CONTROLLER_WRAPPER` (e.g. `heaptrack -o /tmp/ctl`) runs the
    /// controller's process under that command, to profile it alone.
    fn spawn(kubeconfig: &Path, drift: Duration) -> Self {
        let exe = std::env::current_exe().unwrap();
        let wrapper = std::env::var("PXFA_BENCH_CONTROLLER_WRAPPER").unwrap_or_default();
        let mut words = wrapper.split_whitespace();
        let mut command = match words.next() {
            Some(program) => {
                let mut c = Command::new(program);
                c.args(words).arg(exe);
                c
            }
            None => Command::new(exe),
        };
        // As shipped: the compiled-in options and the Deployment's override, if it
        // has one, unless the bench's own environment sets one (to try others).
        if let Some(conf) = allocator_configuration() {
            command.env(MALLOC_CONF, conf);
        }
        let mut child = command
            .arg("--controller-process")
            .arg(kubeconfig)
            .arg("--drift-interval-s")
            .arg(drift.as_secs().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the controller process starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        ControllerProcess {
            child,
            input,
            output,
        }
    }

    /// Sends `command` and returns the lines answered up to `done`.
    fn ask(&mut self, command: &str) -> Vec<String> {
        writeln!(self.input, "{command}").unwrap();
        self.input.flush().unwrap();
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            if self.output.read_line(&mut line).unwrap() == 0 {
                panic!("the controller process ended while answering {command}: {lines:?}");
            }
            let line = line.trim_end().to_string();
            if line == "done" {
                return lines;
            }
            lines.push(line);
        }
    }
}

/// Waits for every object to be Ready (at most `deadline`), printing progress.
async fn converge(store: &Store, tenants: usize, deadline: Duration) -> (bool, Duration) {
    let started = Instant::now();
    let mut next_mark = started + Duration::from_secs(30);
    while ready_count(store) < tenants {
        if Instant::now() >= next_mark {
            println!(
                "  {}s: {} Ready",
                (next_mark - started).as_secs(),
                ready_count(store)
            );
            next_mark += Duration::from_secs(30);
        }
        if started.elapsed() > deadline {
            let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
            for o in store.0.lock().unwrap().values() {
                let s = TenantStatus::from_object(o);
                let why = s
                    .get(ConditionType::Degraded)
                    .filter(|c| c.status == px_controller::ConditionStatus::True)
                    .or(s.get(ConditionType::Ready))
                    .map(|c| c.reason.clone())
                    .unwrap_or_else(|| "not reconciled yet".into());
                *reasons.entry(why).or_insert(0) += 1;
            }
            println!(
                "INCOMPLETE: {}/{tenants} Ready after {deadline:?} (by Ready/Degraded reason: {reasons:?})",
                ready_count(store)
            );
            return (false, started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (true, started.elapsed())
}

fn field<'a>(lines: &'a [String], key: &str) -> Vec<&'a str> {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(key))
        .map(|v| v.split_whitespace().collect())
        .unwrap_or_default()
}

async fn bench(tenants: usize, arrays: usize, latency: Duration, drift: Duration) {
    let w = world(tenants, arrays, latency).await;
    let mut controller = ControllerProcess::spawn(&w.kubeconfig, drift);
    let (complete, took) = converge(&w.store, tenants, drift).await;
    // The last reconciles wrote Ready before they returned to be counted.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stopped = controller.ask("stop");
    println!(
        "converge: {tenants} TenantStorage over {arrays} arrays, {} ms latency: {}/{tenants} Ready after {:.1} s, {} Events{}",
        latency.as_millis(),
        ready_count(&w.store),
        took.as_secs_f64(),
        w.events.reasons().len(),
        if complete {
            ""
        } else {
            " [INCOMPLETE: see above]"
        }
    );
    for line in stopped.iter().filter(|l| l.starts_with("pxfa_controller_")) {
        println!("  {line}");
    }
    for a in &w.fleet {
        let stats = a.sim.stats();
        println!(
            "  array {}: {} tenants, {} HTTP requests ({} writes on the array), {} sessions opened, {} TLS handshakes",
            a.endpoint,
            tenants / arrays,
            stats.requests,
            a.mock.stats().writes,
            stats.logins,
            stats.tls_handshakes
        );
    }
    if !complete {
        std::process::exit(1);
    }
    for a in &w.fleet {
        a.sim.reset_stats();
        a.mock.reset_stats();
    }
    let pass = controller.ask("resync");
    let per_array: Vec<u64> = w.fleet.iter().map(|a| a.sim.stats().requests).collect();
    let writes: u64 = w.fleet.iter().map(|a| a.mock.stats().writes).sum();
    let outcome = field(&pass, "resync ");
    let converged: usize = outcome.first().and_then(|v| v.parse().ok()).unwrap_or(0);
    println!(
        "resync: {tenants} tenants, {arrays} arrays, {} requests per array",
        per_array.iter().max().copied().unwrap_or(0)
    );
    println!(
        "  the pass: {converged}/{tenants} converged in {} s at concurrency 8, {} FlashArray calls, HTTP requests by array {per_array:?}, {writes} writes",
        outcome.get(1).unwrap_or(&"?"),
        outcome.get(2).unwrap_or(&"?"),
    );
    let rss = field(&pass, "rss ");
    let kib = |i: usize| {
        rss.get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    println!("controller peak RSS: {:.0} MiB", kib(0) / 1024.0);
    println!(
        "  the controller's process now {:.0} MiB; the bench's own process (simulators, fake API server, {tenants} stored objects) peak {:.0} MiB",
        kib(1) / 1024.0,
        memory_kib().0 as f64 / 1024.0
    );
    let _ = controller.child.wait();
    for a in w.fleet {
        a.sim.shutdown().await;
    }
    drop(w.server);
    if writes != 0 || converged != tenants {
        eprintln!("FAIL: a resync with nothing to change wrote to an array or did not converge");
        std::process::exit(1);
    }
}

/// The controller's process: runs the controller until `stop`, then one resync pass
/// on `resync`, answering on standard output.
async fn controller_process(kubeconfig: &Path, drift: Duration) {
    let metrics = Arc::new(Metrics::new());
    let ctx = context(
        px_cluster::connect(kubeconfig, Some("fake"), px_cluster::KubeBounds::default())
            .await
            .expect("client"),
        ArrayPool::new(Box::new(RestConnector::default()), 4, metrics.clone()),
        support::fast_wait(10_000),
        drift,
        "bench",
        Duration::from_secs(15),
        // The tenants are in NS, their HostedClusters in `clusters`.
        NamespaceReferences::parse(&[format!("{NS}=clusters")]).expect("rule"),
    );
    let opts = Options {
        leader: Some(LeaseConfig::new("pxfa-system", "pxfa-controller", "bench")),
        ..Options::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(px_controller::run(ctx.clone(), opts, async {
        let _ = stopped.await;
    }));
    let command = || {
        tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
        })
    };
    let _ = command().await;
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(15), run).await;
    for l in metrics.render().lines().filter(|l| {
        l.starts_with("pxfa_controller_reconcile_errors_total{")
            || l.starts_with("pxfa_controller_reconciles_total{")
    }) {
        println!("{l}");
    }
    println!("done");
    let _ = command().await;
    // A drift check comes a drift interval after the convergence: a new listing
    // interval by then.
    ctx.arrays.expire_listings();
    let calls_before = metrics.array_calls_total();
    let api: Api<DynamicObject> = Api::all_with(ctx.client.clone(), &tenant_storage_resource());
    let objects = api.list(&ListParams::default()).await.expect("list").items;
    let started = Instant::now();
    let outcomes: Vec<_> = futures_util::stream::iter(objects.iter())
        .map(|o| px_controller::reconcile(o, &ctx))
        .buffer_unordered(8)
        .collect()
        .await;
    let converged = outcomes
        .iter()
        .filter(|o| matches!(o, Ok(px_controller::Outcome::Converged)))
        .count();
    println!(
        "resync {converged} {:.1} {}",
        started.elapsed().as_secs_f64(),
        metrics.array_calls_total() - calls_before
    );
    let (peak, now) = memory_kib();
    println!("rss {peak} {now}");
    println!("done");
}

fn main() {
    // `RUST_LOG=px_controller=info` shows every reconcile.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let number = |name: &str, default: u64| {
        arg(name)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(default)
    };
    // Also the deadline for the first convergence.
    let drift = Duration::from_secs(number("--drift-interval-s", 300));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if let Some(kubeconfig) = arg("--controller-process") {
        rt.block_on(controller_process(Path::new(&kubeconfig), drift));
        return;
    }
    let tenants = number("--tenants", 200) as usize;
    let arrays = number("--arrays", 2).max(1) as usize;
    let latency = Duration::from_millis(number("--latency-ms", 20));
    rt.block_on(bench(tenants, arrays, latency, drift));
}
