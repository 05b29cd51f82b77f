//! `orphans`: what pxfa made or manages that no tenant accounts for.

use std::path::PathBuf;

use clap::Args;

/// `orphans`.
#[derive(Debug, Args)]
pub(crate) struct OrphansArgs {
    /// The tenants that exist: tenant specs (YAML) or folders of them (every
    /// `.yaml`/`.yml` inside; repeatable). Without it, the TenantStorage objects of
    /// the management cluster (--kubeconfig). Give every tenant: objects of a tenant
    /// left out are listed as orphans.
    #[arg(short = 'f', long = "file", value_name = "SPEC|DIR")]
    pub(crate) files: Vec<PathBuf>,
    /// Management cluster kubeconfig: the cluster kinds (claims, PVs, VM disks,
    /// hotplug pods) and, without -f, the TenantStorage objects. Without --cleanup
    /// `$KUBECONFIG` is used when the flag is not given (as for `oc`); a cleanup
    /// changes the cluster only when it is named here.
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
