//! Start-up benchmark: how soon a fresh `pxfa` process sends its first request, and
//! how long `pxfa --version` takes.
//!
//! An HTTPS simulator runs in this process; each run spawns `pxfa array info` against
//! it (`--ca-file`, a token file) and reads the simulator's request log: the first
//! request's arrival minus the spawn time is "first request". The TLS handshake, the
//! crypto provider's set-up and the process start are all inside that number. Median
//! and range of 11 runs each.
//!
//! Run: `cargo bench -p pxfa --bench startup`.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark binary reports its results on the terminal"
)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use flasharray_mock::MockArray;
use flasharray_sim::{SimConfig, Simulator};

const RUNS: usize = 11;
const TOKEN: &str = "startup-bench-token-9d2e";
/// The target for the first request, from issue #16.
const FIRST_REQUEST_TARGET: Duration = Duration::from_millis(15);

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn summary(mut v: Vec<Duration>) -> (Duration, Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn main() {
    let bin = env!("CARGO_BIN_EXE_pxfa");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let dir = std::env::temp_dir().join(format!("pxfa-startup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let token_file = dir.join("token");
    let cert_file = dir.join("cert.pem");
    std::fs::write(&token_file, format!("{TOKEN}\n")).expect("token file");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600))
            .expect("token file mode");
    }

    let mut version = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let out = Command::new(bin)
            .arg("--version")
            .output()
            .expect("pxfa runs");
        version.push(start.elapsed());
        assert!(out.status.success(), "pxfa --version failed");
    }

    let sim = rt
        .block_on(Simulator::start(
            MockArray::new(),
            SimConfig::new(TOKEN.into()),
        ))
        .expect("simulator");
    std::fs::write(&cert_file, sim.cert_pem()).expect("cert file");
    let url = sim.url();
    let mut first = Vec::new();
    let mut whole = Vec::new();
    for _ in 0..RUNS {
        sim.reset_stats();
        let spawned = SystemTime::now();
        let start = Instant::now();
        let status = Command::new(bin)
            .args(["--array", &url, "--ca-file"])
            .arg(&cert_file)
            .arg("--api-token-file")
            .arg(&token_file)
            .args(["array", "info"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("pxfa runs");
        whole.push(start.elapsed());
        assert!(status.success(), "pxfa array info failed");
        let log = sim.request_log();
        let arrival = log.iter().map(|r| r.start).min().expect("a request");
        first.push(arrival.duration_since(spawned).unwrap_or_default());
    }
    rt.block_on(sim.shutdown());
    let _ = std::fs::remove_dir_all(&dir);

    println!("start-up benchmark, {RUNS} runs each: median (min..max)");
    for (what, v) in [
        ("pxfa --version, whole process", version),
        ("pxfa array info: first request arrives", first.clone()),
        ("pxfa array info: whole process", whole),
    ] {
        let (med, lo, hi) = summary(v);
        println!(
            "{what:<42} {:>6.1} ms ({:.1}..{:.1})",
            ms(med),
            ms(lo),
            ms(hi)
        );
    }
    let (med, _, _) = summary(first);
    if med > FIRST_REQUEST_TARGET {
        println!(
            "MISS: first request at {:.1} ms, target {:.0} ms",
            ms(med),
            ms(FIRST_REQUEST_TARGET)
        );
    }
}
