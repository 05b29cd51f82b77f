//! `pxfa`: Portworx on FlashArray for OpenShift hosted control plane tenants.
//!
//! A thin layer of clap commands over the `flasharray` client, the `flasharray-mock`
//! simulator, `px-topology` and `px-cluster`. [`main`] parses arguments, sets up
//! logging, runs one command on a tokio runtime and turns the result into an exit code
//! ([`exit`]). Nothing here holds business rules: names and sizes are validated by the
//! library types, plans come from px-topology, cluster work from px-cluster.

mod api_client;
mod args;
mod commands;
mod config;
mod confirm;
mod credential_source;
mod exit;
mod graph;
mod output;
mod preflight;
mod profiles;
mod secret_file;
mod session;
mod token_journal;
mod version;

use std::process::ExitCode;

use clap::FromArgMatches;

use crate::args::Cli;
use crate::output::Printer;

/// jemalloc instead of glibc malloc: `pxfa controller run` is a long-lived, many-threaded
/// process, and glibc's per-thread arenas kept most of what it freed (at 250 tenants
/// a 28 MiB live heap in 93-98 MiB RSS; 247 MiB RSS at 1,000; docs/benchmarks.md, #26), as kube-rs users
/// report for controllers, mitigated with jemalloc
/// (<https://kube.rs/blog/2024/06/11/watcher-memory-improvements/>). Its tuning is
/// `_RJEM_MALLOC_CONF` in deploy/controller/controller.yaml. The px-controller bench
/// sets the same allocator and that variable, so it measures what ships.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Runs the command line and returns the process exit code.
fn main() -> ExitCode {
    // `COMPLETE=SHELL pxfa ...`: the shell asks for completions; nothing else runs.
    match commands::completions::complete_from_env() {
        commands::completions::Completion::NotAsked => {}
        commands::completions::Completion::Done => return ExitCode::SUCCESS,
        commands::completions::Completion::Failed => return ExitCode::from(1),
    }
    // The long version is built at run time (it names the REST and Portworx versions
    // the libraries know); clap keeps it for the life of the process.
    let long_version: &'static str = version::long().leak();
    let parsed = args::help::command()
        .long_version(long_version)
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            // Help and version go to stdout with 0; usage errors to stderr with 2.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let printer = Printer::from_args(&cli.global);
    let json_logs = matches!(
        &cli.command,
        args::Command::Controller(args::ControllerCmd::Run(a)) if a.log_format == args::LogFormat::Json
    );
    init_tracing(&cli.global, printer.color_err, json_logs);

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            printer.error(&anyhow::Error::new(e).context("cannot start the async runtime"));
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(commands::run(cli, &printer));
    // Let a simulator or client finish in the background for at most a moment.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match result {
        Ok(outcome) => outcome.into(),
        Err(e) if exit::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            printer.error(&e);
            ExitCode::from(exit::code_for(&e))
        }
    }
}

/// Log lines go to stderr. `-v` shows what pxfa does, `-vv` the REST calls with their
/// request ids, `-vvv` everything pxfa's crates trace. HTTP and TLS libraries stay at
/// `warn` whatever the verbosity: their debug output could include headers, and the
/// `api-token` and `x-auth-token` headers are secrets. kube's client stays at `error`:
/// at `warn` it logs an answer it cannot decode whole (a Secret's too); px-cluster's
/// `bounds` reports such an answer by its first bytes instead.
fn init_tracing(global: &args::GlobalArgs, color: bool, json: bool) {
    let ours = match (global.quiet, global.verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, 2) => "debug",
        (false, _) => "trace",
    };
    let filter = format!(
        "warn,kube_client=error,pxfa={ours},flasharray={ours},flasharray_mock={ours},flasharray_sim={ours},px_topology={ours},px_cluster={ours},px_controller={ours}"
    );
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = if json {
        // `controller run --log-format json`: px-controller's JSON lines.
        builder.event_format(px_controller::JsonLines).try_init()
    } else {
        builder
            .with_ansi(color)
            .with_target(global.verbose >= 2)
            .without_time()
            .try_init()
    };
}
