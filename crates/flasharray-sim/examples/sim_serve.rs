//! Runs the HTTPS simulator on a fresh `MockArray` until SIGINT/SIGTERM.
//!
//! Used by `tests/sdk_compat/run.sh` so that the Python SDK suite does not depend on
//! the `pxfa` CLI. A random API token is written to `--token-file` (mode 0600);
//! the token never appears on stdout. The URL is printed as `PXFA_SIM_URL=...` and,
//! with `--url-file`, written there once the simulator accepts connections.
//!
//! ```text
//! cargo run -p flasharray-sim --example sim_serve -- --port 0 --token-file /tmp/t \
//!     [--url-file /tmp/u] [--faults 429:every=10] [--session-ttl-secs 60] [--plain] \
//!     [--array-name NAME] [--http-latency-ms 20] [--connect-latency-ms 20] [--admin NAME]... \
//!     [--stats-file /tmp/stats.json] [--cert-out /tmp/cert.pem] [--state /tmp/state.json] \
//!     [--admin-password-file /tmp/pw] [--rest-version 2.36]
//! ```
//!
//! `--rest-version 2.N` makes the simulator answer as an array whose newest REST
//! version is 2.N (`MockArrayBuilder::rest_version`): it advertises 1.17-1.19 and
//! 2.0-2.N, and serves each endpoint and model field only from the version that
//! introduced it (docs/simulator.md). Default: the simulator's newest.
//!
//! `--admin-password-file` gives `pureuser` the password in that file (first line),
//! as every real array's `pureuser` has one, so that REST 1.x password logins
//! (Pure's `purefa_token`, whose examples all use `username: pureuser`) work as
//! pureuser too; without it pureuser has no password (`SimConfig::admin_password`).
//!
//! `--array-name` names the simulated array (two simulators with distinct names can
//! be connected to each other through `/array-connections`). `--stats-file` gets the
//! wire statistics and the request log at shutdown
//! (`flasharray_sim::stats_json`), for `bench/sdk_side_by_side.py`.
//! `--state` loads the array from that file if it exists and keeps the file up to
//! date after every change (`SimConfig::state_file`), so a killed simulator
//! restarts with every write it answered.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line program: it prints the URL and its usage errors"
)]

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use flasharray_mock::MockArray;
use flasharray_mock::state_file::load_state;
use flasharray_sim::{SimConfig, Simulator, parse_faults, parse_rest_version, stats_json};

struct Args {
    port: u16,
    token_file: PathBuf,
    url_file: Option<PathBuf>,
    faults: String,
    session_ttl: Option<Duration>,
    plain: bool,
    array_name: Option<String>,
    http_latency: Duration,
    connect_latency: Duration,
    admins: Vec<String>,
    stats_file: Option<PathBuf>,
    cert_out: Option<PathBuf>,
    state: Option<PathBuf>,
    admin_password_file: Option<PathBuf>,
    rest_version: Option<u32>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        port: 0,
        token_file: PathBuf::new(),
        url_file: None,
        faults: String::new(),
        session_ttl: None,
        plain: false,
        array_name: None,
        http_latency: Duration::ZERO,
        connect_latency: Duration::ZERO,
        admins: Vec::new(),
        stats_file: None,
        cert_out: None,
        state: None,
        admin_password_file: None,
        rest_version: None,
    };
    let ms = |flag: &str, v: String| -> Result<Duration, String> {
        v.parse()
            .map(Duration::from_millis)
            .map_err(|e| format!("{flag}: {e}"))
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--port" => args.port = value()?.parse().map_err(|e| format!("--port: {e}"))?,
            "--token-file" => args.token_file = PathBuf::from(value()?),
            "--url-file" => args.url_file = Some(PathBuf::from(value()?)),
            "--faults" => args.faults = value()?,
            "--session-ttl-secs" => {
                let secs: u64 = value()?
                    .parse()
                    .map_err(|e| format!("--session-ttl-secs: {e}"))?;
                args.session_ttl = Some(Duration::from_secs(secs));
            }
            "--plain" => args.plain = true,
            "--array-name" => args.array_name = Some(value()?),
            "--http-latency-ms" => args.http_latency = ms(&flag, value()?)?,
            "--connect-latency-ms" => args.connect_latency = ms(&flag, value()?)?,
            "--admin" => args.admins.push(value()?),
            "--stats-file" => args.stats_file = Some(PathBuf::from(value()?)),
            "--cert-out" => args.cert_out = Some(PathBuf::from(value()?)),
            "--state" => args.state = Some(PathBuf::from(value()?)),
            "--rest-version" => {
                args.rest_version = Some(
                    parse_rest_version(&value()?).map_err(|e| format!("--rest-version: {e}"))?,
                );
            }
            "--admin-password-file" => args.admin_password_file = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if args.token_file.as_os_str().is_empty() {
        return Err("--token-file is required".into());
    }
    Ok(args)
}

fn write_private(path: &PathBuf, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(contents.as_bytes())
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("sim_serve: {e}");
            std::process::exit(2);
        }
    };
    let faults = match parse_faults(&args.faults) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("sim_serve: --faults: {e}");
            std::process::exit(2);
        }
    };
    let token = uuid::Uuid::new_v4().to_string();
    if let Err(e) = write_private(&args.token_file, &token) {
        eprintln!("sim_serve: cannot write {}: {e}", args.token_file.display());
        std::process::exit(1);
    }
    let mut cfg = SimConfig::new(token.into());
    cfg.listen = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    cfg.tls = !args.plain;
    cfg.faults = faults;
    cfg.session_ttl = args.session_ttl;
    cfg.http_latency = args.http_latency;
    cfg.connect_latency = args.connect_latency;
    if let Some(path) = &args.admin_password_file {
        match std::fs::read_to_string(path) {
            Ok(text) => cfg.admin_password = Some(text.lines().next().unwrap_or("").into()),
            Err(e) => {
                eprintln!("sim_serve: cannot read {}: {e}", path.display());
                std::process::exit(1);
            }
        }
    }
    let mut array = MockArray::builder();
    if let Some(name) = &args.array_name {
        array = array.name(name.clone());
    }
    for admin in &args.admins {
        array = array.admin(admin);
    }
    if let Some(minor) = args.rest_version {
        array = array.rest_version(minor);
    }
    let array = array.build();
    if let Some(path) = &args.state {
        match load_state(path) {
            Ok(Some(saved)) => array.restore(saved),
            Ok(None) => {}
            Err(e) => {
                eprintln!("sim_serve: cannot load {}: {e}", path.display());
                std::process::exit(1);
            }
        }
        for admin in &args.admins {
            array.add_admin(admin);
        }
    }
    cfg.state_file = args.state.clone();
    let sim = match Simulator::start(array, cfg).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sim_serve: {e}");
            std::process::exit(1);
        }
    };
    if let Some(path) = &args.cert_out
        && let Err(e) = std::fs::write(path, sim.cert_pem())
    {
        eprintln!("sim_serve: cannot write {}: {e}", path.display());
        std::process::exit(1);
    }
    println!("PXFA_SIM_URL={}", sim.url());
    if let Some(path) = &args.url_file
        && let Err(e) = std::fs::write(path, sim.url())
    {
        eprintln!("sim_serve: cannot write {}: {e}", path.display());
        std::process::exit(1);
    }
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sim_serve: cannot watch SIGTERM: {e}");
            std::process::exit(1);
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    if let Some(path) = &args.stats_file {
        let stats = stats_json(&sim.stats(), &sim.request_log());
        if let Err(e) = std::fs::write(path, stats.to_string()) {
            eprintln!("sim_serve: cannot write {}: {e}", path.display());
        }
    }
    sim.shutdown().await;
}
