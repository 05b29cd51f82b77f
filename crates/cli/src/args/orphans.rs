//! `orphans`: what pxfa made or manages that no tenant accounts for.

use std::path::PathBuf;

use clap::Args;

/// `orphans`.
#[derive(Debug, Args)]
pub(crate) struct OrphansArgs {
    /// The tenants that exist: tenant specs (YAML) or folders of them (every
    /// `.yaml`/`.yml` inside; repeatable). Without it, the TenantStorage objects of
    /// the management cluster (--kubeconfig). A tenant on the array left out is not
    /// gone: with the management cluster, it is gone only when neither its
    /// TenantStorage nor its HostedCluster exists; without it, it is listed as not
    /// accounted for and never cleaned up (unless --all-tenants-given).
    #[arg(short = 'f', long = "file", value_name = "SPEC|DIR")]
    pub(crate) files: Vec<PathBuf>,
    /// State that the specs given with -f are every tenant on the array: a tenant
    /// the tags name that no spec names is then taken as gone, and --cleanup
    /// soft-destroys its objects (the confirmation names each such tenant with its
    /// object count). Only without the management cluster: its TenantStorage
    /// objects and HostedClusters are the evidence when it is read.
    #[arg(long, requires = "files", conflicts_with = "kubeconfig")]
    pub(crate) all_tenants_given: bool,
    /// A drive younger than this (by the array's creation time) is never an
    /// unbound drive: its claim may not be made or bound yet.
    #[arg(long, value_name = "DURATION", default_value = "1h",
          value_parser = humantime::parse_duration)]
    pub(crate) drive_grace: std::time::Duration,
    /// Management cluster kubeconfig: the cluster kinds (claims, PVs, VM disks,
    /// hotplug pods), the evidence that a tenant is gone (TenantStorage objects and
    /// HostedClusters) and, without -f, the tenants. Without --cleanup (and without
    /// --all-tenants-given) `$KUBECONFIG` is used when the flag is not given (as for
    /// `oc`); a cleanup changes the cluster only when it is named here.
    #[arg(long, value_name = "FILE")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Context in the management kubeconfig.
    #[arg(long, value_name = "NAME")]
    pub(crate) context: Option<String>,
    /// After confirmation (or --yes), soft-destroy the array orphans (never
    /// eradicated: recoverable for the eradication delay, longer under SafeMode),
    /// delete the orphaned hosts and connections, and delete or detach the
    /// Kubernetes leftovers.
    #[arg(long)]
    pub(crate) cleanup: bool,
}
