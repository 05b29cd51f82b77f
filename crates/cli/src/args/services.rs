//! The long-running commands: the HTTPS simulator and the TenantStorage controller.

use std::path::PathBuf;

use clap::{ArgAction, Args, Subcommand, ValueEnum};

use super::global::SimSeed;

/// `sim` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum SimCmd {
    /// Serve a simulated FlashArray over HTTPS until Ctrl-C or SIGTERM.
    Serve(SimServeArgs),
}

/// `sim serve`. The token file is the global `--api-token-file` (required here): read
/// if it exists, else a new token is generated and written with mode 0600.
#[derive(Debug, Args)]
pub(crate) struct SimServeArgs {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:8443")]
    pub(crate) listen: std::net::SocketAddr,
    /// Load state from FILE if it exists; save it there on shutdown.
    #[arg(long, value_name = "FILE")]
    pub(crate) state: Option<PathBuf>,
    /// Write the simulator's self-signed certificate (PEM) to FILE, for --ca-file.
    #[arg(long, value_name = "FILE")]
    pub(crate) cert_out: Option<PathBuf>,
    /// Latency added to every call, e.g. `20ms`.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub(crate) latency: Option<std::time::Duration>,
    /// Faults to inject (see docs/cli.md).
    #[arg(long, value_name = "SPEC")]
    pub(crate) faults: Option<String>,
    /// Create N volumes at start.
    #[arg(long, value_name = "N")]
    pub(crate) seed_volumes: Option<usize>,
    /// What the array starts with (ignored when --state loads an existing file).
    #[arg(long, value_enum, value_name = "SEED", default_value = "empty")]
    pub(crate) seed: SimSeed,
    /// Give `pureuser` the password in FILE (its first line), so that password logins
    /// (REST 1.x `auth/apitoken`, as Pure's `purefa_token` makes them) work; without
    /// it `pureuser` has no password. Never an argument: a password in argv is seen
    /// by every user of the machine.
    #[arg(long, value_name = "FILE")]
    pub(crate) admin_password_file: Option<PathBuf>,
}

/// `controller` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum ControllerCmd {
    /// Reconcile TenantStorage objects until Ctrl-C or SIGTERM. Array credentials
    /// come from the Secret each object names (spec.credentialsSecret), never from
    /// flags or the environment.
    Run(ControllerRunArgs),
}

/// `controller run`.
#[derive(Debug, Args)]
pub(crate) struct ControllerRunArgs {
    /// Kubeconfig of the management cluster; default: in-cluster, then $KUBECONFIG.
    #[arg(long, value_name = "FILE")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Context in the kubeconfig.
    #[arg(long)]
    pub(crate) context: Option<String>,
    /// Watch only this namespace (default: all).
    #[arg(long)]
    pub(crate) namespace: Option<String>,
    /// Let a TenantStorage in namespace FROM (`*`: any) refer to namespace TO
    /// (repeatable). By default a TenantStorage refers only to its own namespace:
    /// its spec.hostedCluster.namespace (the HostedCluster, its kubeconfig, pull
    /// secret and SSH key Secrets) must be the object's namespace, or the object is
    /// Valid=False (NamespaceNotAllowed) and nothing there is read.
    #[arg(long, value_name = "FROM=TO")]
    pub(crate) allow_namespace_reference: Vec<String>,
    /// Most TenantStorage objects reconciled at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) concurrency: u16,
    /// Most tenants working on one array at once (they share its session).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) per_array: u16,
    /// How often a converged object is checked for drift.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    pub(crate) drift_interval: std::time::Duration,
    /// How long an array's listings answer the drift checks before they are read
    /// again (the per-array observation cache); 0s: every read goes to the array.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub(crate) listing_interval: std::time::Duration,
    /// Items per page of those listings; lower it for an array that caps pages
    /// below the default (the array's largest page is not documented).
    #[arg(long, default_value_t = px_controller::LISTING_PAGE_SIZE,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) listing_page_size: u32,
    /// Count what pxfa made that no tenant accounts for, per array every drift
    /// interval, as metrics and Warning Events (read-only; see `pxfa orphans`).
    #[arg(long, default_value_t = true, action = ArgAction::Set, value_name = "BOOL")]
    pub(crate) orphan_counts: bool,
    /// How long one reconcile waits for cluster objects to become ready.
    #[arg(long, default_value = "2m", value_parser = humantime::parse_duration)]
    pub(crate) wait_timeout: std::time::Duration,
    /// Reconcile only while holding the coordination.k8s.io Lease, so that several
    /// replicas never reconcile at once. Off: this must be the only replica.
    #[arg(long, default_value_t = true, action = ArgAction::Set, value_name = "BOOL")]
    pub(crate) leader_elect: bool,
    /// Namespace of the leader Lease (in a pod: its own namespace).
    #[arg(long, env = "POD_NAMESPACE", default_value = "pxfa-system")]
    pub(crate) lease_namespace: String,
    /// Name of the leader Lease.
    #[arg(long, default_value = "pxfa-controller")]
    pub(crate) lease_name: String,
    /// This replica's identity in the Lease and in Events (in a pod: its name).
    #[arg(long, env = "POD_NAME", value_name = "NAME")]
    pub(crate) identity: Option<String>,
    /// How long a Lease holds without renewal before a standby takes over.
    #[arg(long, default_value = "15s", value_parser = humantime::parse_duration)]
    pub(crate) lease_duration: std::time::Duration,
    /// How long the leader keeps reconciling without renewing (< --lease-duration).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub(crate) renew_deadline: std::time::Duration,
    /// How often the leader renews and a standby retries (< --renew-deadline).
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    pub(crate) retry_period: std::time::Duration,
    /// Address of /healthz, /readyz and /metrics.
    #[arg(long, default_value = "0.0.0.0:8080", value_name = "ADDR")]
    pub(crate) metrics_address: std::net::SocketAddr,
    /// Log line format on stderr.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) log_format: LogFormat,
}

/// `controller run --log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line (timestamp, level, target, message, fields, spans).
    Json,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::args::{Cli, Command};

    fn run_args(extra: &[&str]) -> super::ControllerRunArgs {
        let argv = [&["pxfa", "controller", "run"][..], extra].concat();
        match Cli::try_parse_from(argv).expect("parses").command {
            Command::Controller(super::ControllerCmd::Run(a)) => a,
            _ => panic!("not controller run"),
        }
    }

    #[test]
    fn cache_and_orphan_counts_have_documented_defaults_and_switches() {
        let d = run_args(&[]);
        assert_eq!(d.listing_interval, std::time::Duration::from_secs(60));
        assert!(d.orphan_counts);
        assert_eq!(d.listing_page_size, 20_000);
        let a = run_args(&["--listing-interval", "0s", "--orphan-counts", "false"]);
        assert_eq!(a.listing_interval, std::time::Duration::ZERO);
        assert!(!a.orphan_counts);
        assert_eq!(
            run_args(&["--listing-page-size", "500"]).listing_page_size,
            500
        );
        let zero = ["pxfa", "controller", "run", "--listing-page-size", "0"];
        assert!(Cli::try_parse_from(zero).is_err());
    }
}
