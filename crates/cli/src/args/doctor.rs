//! `doctor`: the site's prerequisites for one tenant, read only.

use std::path::PathBuf;

use clap::Args;

/// `doctor`.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
    /// Management cluster kubeconfig (default `$KUBECONFIG`, which may list files
    /// separated by `:`, as for `oc`); without one the management checks are unknown.
    #[arg(long, value_name = "FILE", env = "KUBECONFIG")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Context in the management kubeconfig.
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    pub(crate) context: Option<String>,
    /// Tenant (hosted) cluster kubeconfig: also check the tenant's Portworx.
    #[arg(long, value_name = "FILE")]
    pub(crate) tenant_kubeconfig: Option<PathBuf>,
    /// Context in the tenant kubeconfig.
    #[arg(long, value_name = "NAME", requires = "tenant_kubeconfig")]
    pub(crate) tenant_context: Option<String>,
}
