//! The tenant commands: `size`, `render`, `lint`, `plan`, `apply`, `destroy`, `status`,
//! `demo` and `token rotate`, each over a tenant spec.

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Args};
use px_topology::PlanOptions;

/// `size`.
#[derive(Debug, Args)]
pub(crate) struct SizeArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
    /// Read the tenant's drives in use and the array's space (reads only), so that
    /// the sizing shows what a scale-out or a capacity change does to the drives
    /// already there.
    #[arg(long)]
    pub(crate) on_array: bool,
}

/// `render`.
#[derive(Debug, Args)]
pub(crate) struct RenderArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
    /// Folder to write the manifests to (created if missing).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Also write Secrets with credentials (px-pure-secret); off by default so that
    /// manifests can go to git.
    #[arg(long)]
    pub(crate) include_secrets: bool,
    /// With --include-secrets: fill the HostedCluster's pull secret from FILE (the
    /// pull secret JSON from console.redhat.com).
    #[arg(long, value_name = "FILE", requires = "include_secrets")]
    pub(crate) pull_secret_file: Option<PathBuf>,
    /// The site's facts from a `pxfa doctor -o yaml` report: render as `apply
    /// --kubeconfig` would for that site (a spec field it contradicts exits 2).
    #[arg(long, value_name = "SITE_REPORT")]
    pub(crate) site: Option<PathBuf>,
    /// Render even when the spec has error-level lint findings (they are printed as
    /// warnings); without it such a spec exits 2 and nothing is written.
    #[arg(long)]
    pub(crate) force: bool,
}

/// `lint`.
#[derive(Debug, Args)]
pub(crate) struct LintArgs {
    /// Spec or manifest files, or folders of them.
    #[arg(value_name = "FILE", required_unless_present = "file")]
    pub(crate) files: Vec<PathBuf>,
    /// A spec or manifest file or folder, like every other command's `-f`
    /// (repeatable; adds to the positional files).
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub(crate) file: Vec<PathBuf>,
}

impl LintArgs {
    /// The files from `-f` and the positional arguments.
    pub(crate) fn all_files(&self) -> impl Iterator<Item = &PathBuf> {
        self.file.iter().chain(&self.files)
    }
}

/// `plan`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("releases").args(["destroy", "release_removed_workers"]).multiple(true)))]
pub(crate) struct PlanArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
    /// Exit 3 when there are changes, 0 when none.
    #[arg(long)]
    pub(crate) detailed_exitcode: bool,
    /// What the plan may do beyond the spec.
    #[command(flatten)]
    pub(crate) plan: PlanFlags,
    /// Show what `destroy -f SPEC` would remove instead (nothing is written).
    #[arg(long, conflicts_with_all = ["adopt", "allow_shrink", "release_removed_workers", "recover_released"])]
    pub(crate) destroy: bool,
    /// With --destroy: as `destroy --eradicate` would.
    #[arg(long, requires = "destroy")]
    pub(crate) eradicate: bool,
    /// With --destroy: as `destroy --delete-token` would.
    #[arg(long, requires = "destroy")]
    pub(crate) delete_token: bool,
    /// The clusters: with --kubeconfig, also what `apply` would change on them.
    #[command(flatten)]
    pub(crate) clusters: ClusterArgs,
    /// Preview as `apply --force-conflicts` would apply: fields another field manager
    /// owns are taken over instead of shown as conflicts.
    #[arg(long, requires = "kubeconfig")]
    pub(crate) force_conflicts: bool,
    /// Preview the management MachineConfig too, as `apply --apply-node-config`
    /// would apply it.
    #[arg(long, requires = "kubeconfig")]
    pub(crate) apply_node_config: bool,
}

/// The flags `plan` and `apply` share: what the plan may do beyond the spec. They
/// become the pipeline's [`PlanOptions`] in one place, [`PlanFlags::to_options`].
#[derive(Debug, Clone, Args)]
pub(crate) struct PlanFlags {
    /// Take over same-named objects that lack pxfa's tags.
    #[arg(long)]
    pub(crate) adopt: bool,
    /// Allow shrinking volumes (data beyond the new size is lost).
    #[arg(long)]
    pub(crate) allow_shrink: bool,
    /// Soft-destroy the retained drives of workers removed from the spec (after the
    /// Portworx decommission steps the plan lists); recoverable for the eradication
    /// delay.
    #[arg(long)]
    pub(crate) release_removed_workers: bool,
    /// Recover the destroyed drives of a released worker index that the spec has
    /// again (only if its Portworx node was never decommissioned).
    #[arg(long)]
    pub(crate) recover_released: bool,
    /// With --release-removed-workers (or plan --destroy): also destroy on the array
    /// the drives the management Portworx created (dynamic provisioning). Without it
    /// they are kept for Portworx to release (PV reclaim policy Delete, claim
    /// deleted: `pxfa runbook scale-in`); an array-side destroy leaves Portworx's
    /// volume records and the PVs stale. For a management Portworx that is gone.
    #[arg(long, requires = "releases")]
    pub(crate) destroy_dynamic_drives: bool,
}

impl PlanFlags {
    /// The plan's options: the flags, once.
    pub(crate) fn to_options(&self) -> PlanOptions {
        PlanOptions {
            adopt: self.adopt,
            allow_shrink: self.allow_shrink,
            release_removed_workers: self.release_removed_workers,
            recover_released: self.recover_released,
            destroy_dynamic_drives: self.destroy_dynamic_drives,
        }
    }
}

/// `apply`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("releases").args(["release_removed_workers"])))]
pub(crate) struct ApplyArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
    /// Also write the tenant's manifests to this folder.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// What the plan may do beyond the spec.
    #[command(flatten)]
    pub(crate) plan: PlanFlags,
    /// With --out: write Secrets with credentials (px-pure-secret) too.
    #[arg(long, requires = "out")]
    pub(crate) include_secrets: bool,
    /// Go on when spec.array.endpoint (what Portworx will use) names another host
    /// than the array being written, because both name the same array.
    #[arg(long)]
    pub(crate) allow_endpoint_mismatch: bool,
    /// Provision more than the array has free (it is thin-provisioned).
    #[arg(long)]
    pub(crate) allow_overcommit: bool,
    /// With --include-secrets: fill the HostedCluster's pull secret from FILE.
    #[arg(long, value_name = "FILE", requires = "include_secrets")]
    pub(crate) pull_secret_file: Option<PathBuf>,
    /// Calls in flight at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) concurrency: u32,
    /// Folder of the token journal when there is no --out (default
    /// $XDG_STATE_HOME/pxfa or ~/.local/state/pxfa).
    #[arg(long, value_name = "DIR")]
    pub(crate) state_dir: Option<PathBuf>,
    /// The clusters: with --kubeconfig, apply the manifests there after the array.
    #[command(flatten)]
    pub(crate) kube: KubeArgs,
    /// Refused with a pointer to `plan` (which previews the array and, with
    /// --kubeconfig, the clusters); hidden: apply has no dry run of its own, and
    /// `kubectl apply --dry-run[=server]` habits should land on the command that has.
    #[arg(
        long,
        hide = true,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "server",
        value_name = "MODE"
    )]
    pub(crate) dry_run: Option<String>,
}

/// `destroy`.
#[derive(Debug, Args)]
pub(crate) struct DestroyArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
    /// Eradicate after destroying (irreversible; SafeMode may refuse).
    #[arg(long)]
    pub(crate) eradicate: bool,
    /// Also delete the token admin's API token (only for admins dedicated to this
    /// tenant: tokens carry no tags).
    #[arg(long)]
    pub(crate) delete_token: bool,
    /// Also destroy on the array the live drives the management Portworx created
    /// (dynamic provisioning). Without it they are kept, for Portworx to release
    /// (PV reclaim policy Delete, claim deleted: `pxfa runbook delete`); an
    /// array-side destroy leaves Portworx's volume records and the PVs stale. For a
    /// management Portworx that is gone.
    #[arg(long)]
    pub(crate) destroy_dynamic_drives: bool,
    /// Go on when spec.array.endpoint names another host than the array being
    /// written, because both name the same array.
    #[arg(long)]
    pub(crate) allow_endpoint_mismatch: bool,
    /// Calls in flight at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) concurrency: u32,
}

/// `claim`.
#[derive(Debug, Args)]
pub(crate) struct ClaimArgs {
    /// Tenant spec (YAML): its metadata.namespace and metadata.name.
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
    /// List what would be claimed; change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

/// `demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Folder for the manifests.
    #[arg(long, value_name = "DIR", default_value = "pxfa-demo-out")]
    pub(crate) out: PathBuf,
}

/// The clusters of `apply` and `plan`: which kubeconfigs and contexts. Without
/// `--kubeconfig` (or `$KUBECONFIG`) no cluster is contacted.
#[derive(Debug, Clone, Args)]
pub(crate) struct ClusterArgs {
    /// Management cluster kubeconfig. `apply` applies the management manifests there
    /// after the array (server-side apply, field manager `pxfa`), waits for them and
    /// attaches the worker disks; `plan` previews that as a server-side apply dry run
    /// (writes nothing). Default `$KUBECONFIG` (a `:` list, as for `oc`), as `status`,
    /// `doctor` and `orphans` read it; without either, array only.
    #[arg(long, value_name = "FILE", env = "KUBECONFIG")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Context in the management kubeconfig (default: its current context).
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    pub(crate) context: Option<String>,
    /// Tenant (hosted) cluster kubeconfig: the tenant manifests there too.
    #[arg(long, value_name = "FILE", requires = "kubeconfig")]
    pub(crate) tenant_kubeconfig: Option<PathBuf>,
    /// Context in the tenant kubeconfig.
    #[arg(long, value_name = "NAME", requires = "tenant_kubeconfig")]
    pub(crate) tenant_context: Option<String>,
}

/// Cluster options of `apply`. Without `--kubeconfig` nothing touches a cluster.
#[derive(Debug, Clone, Args)]
pub(crate) struct KubeArgs {
    /// Which clusters.
    #[command(flatten)]
    pub(crate) clusters: ClusterArgs,
    /// Take over fields another field manager owns instead of stopping at the conflict.
    #[arg(long, requires = "kubeconfig")]
    pub(crate) force_conflicts: bool,
    /// How long to wait for each step (NNCP available, PVCs bound, VMs created,
    /// StorageCluster online).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = humantime::parse_duration)]
    pub(crate) wait_timeout: Duration,
    /// Give a new VM the disks of a worker whose recorded VM no longer exists. Off by
    /// default: make sure the old VM is gone for good (two VMs must never share a
    /// worker's disks), decommission its Portworx node first and wipe the disks before
    /// Portworx starts on the new VM (`pxfa runbook replace-vm`). That Portworx takes
    /// the new VM as the old node from the disks as they are is [L].
    #[arg(long, requires = "kubeconfig")]
    pub(crate) adopt_replaced_vms: bool,
    /// Also apply the management MachineConfig (multipath, udev). The Machine Config
    /// Operator then reboots the management workers one by one; without this flag the
    /// file is only written with --out.
    #[arg(long, requires = "kubeconfig")]
    pub(crate) apply_node_config: bool,
}

/// `status`.
#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
    /// Management cluster kubeconfig (default `$KUBECONFIG`, which may list files
    /// separated by `:`, as for `oc`); without one only the array layer is shown.
    #[arg(long, value_name = "FILE", env = "KUBECONFIG")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Context in the management kubeconfig.
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    pub(crate) context: Option<String>,
    /// Tenant cluster kubeconfig, for the StorageCluster and StorageNodes.
    #[arg(long, value_name = "FILE", requires = "kubeconfig")]
    pub(crate) tenant_kubeconfig: Option<PathBuf>,
    /// Context in the tenant kubeconfig.
    #[arg(long, value_name = "NAME", requires = "tenant_kubeconfig")]
    pub(crate) tenant_context: Option<String>,
    /// The tenant's API token is a problem (exit 3, naming `pxfa token rotate`) when
    /// it expires within this long; `0s`: only once it has expired.
    #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = humantime::parse_duration)]
    pub(crate) token_expiry_warning: Duration,
}

/// `token rotate`.
#[derive(Debug, Args)]
pub(crate) struct TokenRotateArgs {
    /// Tenant spec (YAML); cloud-drive only.
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
    /// Tenant cluster kubeconfig (holds px-pure-secret).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "out",
        conflicts_with = "out"
    )]
    pub(crate) tenant_kubeconfig: Option<PathBuf>,
    /// Context in the tenant kubeconfig.
    #[arg(long, value_name = "NAME", requires = "tenant_kubeconfig")]
    pub(crate) tenant_context: Option<String>,
    /// Without access to the tenant cluster: rotate through the px-pure-secret file
    /// of this `apply --out` folder, one step per run (you apply the file in between).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// The second array user the rotation bridges through (same role as the token
    /// user); default `<tokenUser>-alt`.
    #[arg(long, value_name = "ADMIN")]
    pub(crate) alternate_user: Option<String>,
    /// Lifetime of the new token, e.g. `90d`; default the spec's
    /// `spec.array.tokenLifetime` (absent: `365d`; `never`: no expiry).
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub(crate) lifetime: Option<Duration>,
    /// Wait between writing a new token and deleting the old one (Portworx re-reads
    /// px-pure-secret about every five minutes).
    #[arg(long, value_name = "DURATION", default_value = "6m", value_parser = humantime::parse_duration)]
    pub(crate) grace: Duration,
}
