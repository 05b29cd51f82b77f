//! The command line, as clap derive types and nothing else.
//!
//! Values are kept as the user typed them (names, sizes as strings) so that the
//! commands validate them with the library's own types and report errors with the
//! library's wording, before anything is sent to an array.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

/// Portworx on Pure Storage FlashArray for OpenShift hosted control plane tenants.
#[derive(Debug, Parser)]
#[command(name = "pxfa", version, propagate_version = true, max_term_width = 100)]
#[command(after_help = "Exit codes: 0 ok, 1 error, 2 usage or invalid input, \
3 `plan --detailed-exitcode` found changes, 4 `apply` finished with some changes failed.")]
pub struct Cli {
    /// Options every command understands.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum OutputFormat {
    /// Human-readable tables, sizes with units, local times.
    #[default]
    Table,
    /// JSON on stdout; sizes in bytes, times in ms since the epoch, as the array sends them.
    Json,
    /// YAML on stdout, same content as JSON.
    Yaml,
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ColorChoice {
    /// Only when writing to a terminal and `NO_COLOR` is unset.
    #[default]
    Auto,
    /// Always (still never when `NO_COLOR` is set).
    Always,
    /// Never.
    Never,
}

/// Options shared by every command.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// FlashArray management address (`https://host[:port]` or `host`), or `sim` for an
    /// embedded simulated array. Default: `PUREFA_URL`, then the pure.json entry.
    #[arg(long, global = true, value_name = "URL|sim", help_heading = "Array")]
    pub array: Option<String>,

    /// File holding the API token (first line). Default: `PUREFA_API`, then pure.json.
    /// A token is never accepted as an argument value.
    #[arg(long, global = true, value_name = "FILE", help_heading = "Array")]
    pub api_token_file: Option<PathBuf>,

    /// A px-pure-secret `pure.json` file to take the address and token from.
    #[arg(long, global = true, value_name = "FILE", help_heading = "Array")]
    pub pure_json: Option<PathBuf>,

    /// Which `FlashArrays[]` entry of pure.json to use (its `MgmtEndPoint`), when it
    /// lists several.
    #[arg(long, global = true, value_name = "NAME", help_heading = "Array")]
    pub array_name: Option<String>,

    /// PEM bundle of certificate authorities to trust for the array's certificate.
    #[arg(long, global = true, value_name = "FILE", help_heading = "Array")]
    pub ca_file: Option<PathBuf>,

    /// Do not verify the array's TLS certificate (exposes the token to anyone in the
    /// middle; prefer --ca-file).
    #[arg(long, global = true, help_heading = "Array")]
    pub insecure: bool,

    /// Retries of one REST call after 429, 503, busy or connection errors.
    #[arg(
        long,
        global = true,
        value_name = "N",
        default_value_t = 5,
        help_heading = "Array"
    )]
    pub retries: u32,

    /// Give up retrying one REST call after this long (e.g. `2m`, `30s`).
    #[arg(long, global = true, value_name = "DURATION", default_value = "2m",
          value_parser = humantime::parse_duration, help_heading = "Array")]
    pub retry_for: std::time::Duration,

    /// Connect timeout (e.g. `10s`).
    #[arg(long, global = true, value_name = "DURATION", default_value = "10s",
          value_parser = humantime::parse_duration, help_heading = "Array")]
    pub connect_timeout: std::time::Duration,

    /// With `--array sim`: load the simulated array's state from FILE (JSON) if it
    /// exists, and save it back when the command ends.
    #[arg(long, global = true, value_name = "FILE", help_heading = "Array")]
    pub sim_state: Option<PathBuf>,

    /// Output format of results on stdout.
    #[arg(
        short,
        long,
        global = true,
        value_enum,
        default_value_t,
        help_heading = "Output"
    )]
    pub output: OutputFormat,

    /// More log lines on stderr (-v: info, -vv: debug with request ids, -vvv: trace).
    #[arg(short, long, global = true, action = ArgAction::Count, conflicts_with = "quiet", help_heading = "Output")]
    pub verbose: u8,

    /// Only errors on stderr; no progress.
    #[arg(short, long, global = true, help_heading = "Output")]
    pub quiet: bool,

    /// Colours on stdout/stderr. `NO_COLOR` always wins.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t,
        value_name = "WHEN",
        help_heading = "Output"
    )]
    pub color: ColorChoice,

    /// Answer yes to confirmations; required for destructive commands when stdin is not
    /// a terminal.
    #[arg(short = 'y', long, global = true)]
    pub yes: bool,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Per-resource commands over the array's REST API.
    #[command(flatten)]
    Resource(ResourceCmd),
    /// Explain the Portworx pool sizing of a tenant spec.
    Size(SizeArgs),
    /// Write a tenant's manifests to a folder (no array access).
    Render(RenderArgs),
    /// Check tenant specs or manifests against pxfa's rules.
    Lint(LintArgs),
    /// Show what `apply` would change on the array.
    Plan(PlanArgs),
    /// Converge the array to a tenant spec.
    Apply(ApplyArgs),
    /// Remove what pxfa made on the array for a tenant.
    Destroy(DestroyArgs),
    /// One view of a tenant across the array and the clusters (-o json for machines).
    Status(crate::commands::cluster::StatusArgs),
    /// Print the TenantStorage CustomResourceDefinition (pxfa.io/v1alpha1).
    Crd,
    /// The whole flow for the example tenant on an embedded simulated array.
    Demo(DemoArgs),
    /// The HTTPS FlashArray simulator.
    #[command(subcommand)]
    Sim(SimCmd),
    /// Shell completion script on stdout.
    Completions(CompletionsArgs),
}

/// Commands that work on one kind of array object.
#[derive(Debug, Subcommand)]
pub enum ResourceCmd {
    /// Volumes: list, create, resize, rename, destroy, recover, eradicate, tag.
    #[command(subcommand)]
    Volume(VolumeCmd),
    /// Hosts and their initiators.
    #[command(subcommand)]
    Host(HostCmd),
    /// Host groups and their members.
    #[command(subcommand, name = "hostgroup", alias = "host-group")]
    HostGroup(HostGroupCmd),
    /// Connections of volumes to hosts or host groups.
    #[command(subcommand)]
    Connection(ConnectionCmd),
    /// Pods.
    #[command(subcommand)]
    Pod(PodCmd),
    /// API tokens of array admin users.
    #[command(subcommand)]
    Token(TokenCmd),
    /// The array itself.
    #[command(subcommand)]
    Array(ArrayCmd),
}

/// Selection shared by list commands.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Only these names (each must exist).
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// Array filter expression, e.g. `name='px-*'`.
    #[arg(long)]
    pub filter: Option<String>,
    /// Sort keys; a trailing `-` sorts descending (`provisioned-`).
    #[arg(long, value_delimiter = ',')]
    pub sort: Vec<String>,
    /// At most this many items.
    #[arg(long)]
    pub limit: Option<usize>,
}

/// Destroyed-state selection for volume and pod listings.
#[derive(Debug, Clone, Args)]
pub struct DestroyedArgs {
    /// Only destroyed objects (pending eradication).
    #[arg(long, conflicts_with = "live")]
    pub destroyed: bool,
    /// Only live objects.
    #[arg(long)]
    pub live: bool,
}

/// `volume` subcommands.
#[derive(Debug, Subcommand)]
pub enum VolumeCmd {
    /// List volumes.
    List {
        /// Selection.
        #[command(flatten)]
        list: ListArgs,
        /// Destroyed or live only.
        #[command(flatten)]
        destroyed: DestroyedArgs,
    },
    /// Show one volume.
    Get {
        /// Volume name (`pod::vol` inside a pod).
        name: String,
    },
    /// Create volumes, all in one call.
    Create {
        /// Volume names.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
        /// Size of each volume, e.g. `10GiB`, `2Ti`, `64G`.
        #[arg(long)]
        size: String,
    },
    /// Change the size of volumes.
    Resize {
        /// Volume names.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
        /// New size.
        #[arg(long)]
        size: String,
        /// Allow shrinking (data beyond the new size is lost).
        #[arg(long)]
        truncate: bool,
    },
    /// Rename a volume.
    Rename {
        /// Current name.
        name: String,
        /// New name.
        new_name: String,
    },
    /// Destroy volumes (recoverable until eradicated).
    Destroy {
        /// Volume names.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
    /// Recover destroyed volumes.
    Recover {
        /// Volume names.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
    /// Eradicate destroyed volumes (irreversible).
    Eradicate {
        /// Volume names.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
    /// Show, set or remove tags of volumes.
    Tag(TagArgs),
}

/// Tag changes.
#[derive(Debug, Clone, Args)]
pub struct TagArgs {
    /// Object names.
    #[arg(required = true, value_name = "NAME")]
    pub names: Vec<String>,
    /// Set a tag, `KEY=VALUE` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Remove a tag by key (repeatable).
    #[arg(long = "remove", value_name = "KEY")]
    pub remove: Vec<String>,
    /// Tag namespace.
    #[arg(long, default_value = "default")]
    pub namespace: String,
}

/// Initiators given on the command line.
#[derive(Debug, Clone, Default, Args)]
pub struct InitiatorArgs {
    /// FC WWN (`21:00:f4:c7:aa:00:27:06` or `2100F4C7AA002706`), repeatable.
    #[arg(long = "wwn", value_name = "WWN")]
    pub wwns: Vec<String>,
    /// iSCSI IQN, repeatable.
    #[arg(long = "iqn", value_name = "IQN")]
    pub iqns: Vec<String>,
    /// NVMe NQN, repeatable.
    #[arg(long = "nqn", value_name = "NQN")]
    pub nqns: Vec<String>,
}

/// `host` subcommands.
#[derive(Debug, Subcommand)]
pub enum HostCmd {
    /// List hosts.
    List {
        /// Selection.
        #[command(flatten)]
        list: ListArgs,
    },
    /// Show one host.
    Get {
        /// Host name.
        name: String,
    },
    /// Create a host.
    Create {
        /// Host name.
        name: String,
        /// Its initiators.
        #[command(flatten)]
        initiators: InitiatorArgs,
        /// Host personality (`aix`, `esxi`, ...); none for Linux.
        #[arg(long)]
        personality: Option<String>,
        /// Put the host into this host group.
        #[arg(long = "hostgroup", value_name = "GROUP")]
        host_group: Option<String>,
    },
    /// Delete hosts (refused by the array while they have connections).
    Delete {
        /// Host names.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
    /// Add initiators to a host.
    AddInitiator {
        /// Host name.
        name: String,
        /// Initiators to add.
        #[command(flatten)]
        initiators: InitiatorArgs,
    },
    /// Remove initiators from a host.
    RemoveInitiator {
        /// Host name.
        name: String,
        /// Initiators to remove.
        #[command(flatten)]
        initiators: InitiatorArgs,
    },
    /// Move a host into a host group, or out of its group with `--none`.
    SetGroup {
        /// Host name.
        name: String,
        /// Target host group.
        #[arg(required_unless_present = "none", conflicts_with = "none")]
        group: Option<String>,
        /// Take the host out of its host group.
        #[arg(long)]
        none: bool,
    },
}

/// `hostgroup` subcommands.
#[derive(Debug, Subcommand)]
pub enum HostGroupCmd {
    /// List host groups.
    List {
        /// Selection.
        #[command(flatten)]
        list: ListArgs,
    },
    /// Create host groups.
    Create {
        /// Group names.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
    /// Delete host groups (refused by the array while they have members or connections).
    Delete {
        /// Group names.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
    /// Add hosts to a group.
    AddHost {
        /// Group name.
        group: String,
        /// Host names.
        #[arg(required = true, value_name = "HOST")]
        hosts: Vec<String>,
    },
    /// Remove hosts from a group.
    RemoveHost {
        /// Group name.
        group: String,
        /// Host names.
        #[arg(required = true, value_name = "HOST")]
        hosts: Vec<String>,
    },
}

/// The host side of a connection.
#[derive(Debug, Clone, Args)]
#[group(required = true, multiple = false)]
pub struct TargetArgs {
    /// A host (private connection).
    #[arg(long)]
    pub host: Option<String>,
    /// A host group (shared connection).
    #[arg(long = "hostgroup", alias = "host-group", value_name = "GROUP")]
    pub host_group: Option<String>,
}

/// `connection` subcommands.
#[derive(Debug, Subcommand)]
pub enum ConnectionCmd {
    /// List connections (one row per host that sees a volume).
    List {
        /// Only connections seen by this host.
        #[arg(long)]
        host: Vec<String>,
        /// Only connections of this host group.
        #[arg(long = "hostgroup", alias = "host-group", value_name = "GROUP")]
        host_group: Vec<String>,
        /// Only connections of this volume.
        #[arg(long)]
        volume: Vec<String>,
    },
    /// Connect volumes to one host or host group, in one call.
    Create {
        /// Host or host group.
        #[command(flatten)]
        target: TargetArgs,
        /// Volume names.
        #[arg(required = true, value_name = "VOLUME")]
        volumes: Vec<String>,
        /// Fixed LUN (1–4095); only with a single volume.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4095))]
        lun: Option<u32>,
    },
    /// Disconnect volumes from a host or host group.
    Delete {
        /// Host or host group.
        #[command(flatten)]
        target: TargetArgs,
        /// Volume names.
        #[arg(required = true, value_name = "VOLUME")]
        volumes: Vec<String>,
    },
}

/// `pod` subcommands.
#[derive(Debug, Subcommand)]
pub enum PodCmd {
    /// List pods.
    List {
        /// Selection.
        #[command(flatten)]
        list: ListArgs,
        /// Destroyed or live only.
        #[command(flatten)]
        destroyed: DestroyedArgs,
    },
    /// Create pods.
    Create {
        /// Pod names.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
        /// Quota, e.g. `10TiB`.
        #[arg(long)]
        quota: Option<String>,
    },
    /// Destroy pods (refused by the array while not empty, unless --destroy-contents).
    Destroy {
        /// Pod names.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
        /// Destroy the pod's volumes too.
        #[arg(long)]
        destroy_contents: bool,
    },
    /// Recover destroyed pods.
    Recover {
        /// Pod names.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
    /// Eradicate destroyed pods (irreversible).
    Eradicate {
        /// Pod names.
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
        /// Eradicate the pod's destroyed volumes too.
        #[arg(long)]
        eradicate_contents: bool,
    },
}

/// `token` subcommands.
#[derive(Debug, Subcommand)]
pub enum TokenCmd {
    /// List admins' API tokens (never the token values).
    List {
        /// Admin user names; all when omitted.
        #[arg(value_name = "ADMIN")]
        admins: Vec<String>,
    },
    /// Create an API token for an admin user; shown once.
    Create {
        /// Admin user name.
        admin: String,
        /// Lifetime, e.g. `30d`, `12h`; never expires when omitted.
        #[arg(long, value_parser = humantime::parse_duration)]
        lifetime: Option<std::time::Duration>,
        /// Write the token to FILE (mode 0600) instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Delete an admin user's API token.
    Delete {
        /// Admin user name.
        admin: String,
    },
    /// Give a cloud-drive tenant a new API token in px-pure-secret, never leaving it
    /// without a working one (see docs/cluster.md).
    Rotate(crate::commands::cluster::TokenRotateArgs),
}

/// `array` subcommands.
#[derive(Debug, Subcommand)]
pub enum ArrayCmd {
    /// Name, Purity version, capacity, eradication settings.
    Info,
    /// Capacity and space use.
    Space,
}

/// `size`.
#[derive(Debug, Args)]
pub struct SizeArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub file: PathBuf,
}

/// `render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub file: PathBuf,
    /// Folder to write the manifests to (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Also write Secrets with credentials (px-pure-secret); off by default so that
    /// manifests can go to git.
    #[arg(long)]
    pub include_secrets: bool,
}

/// `lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// Spec or manifest files, or folders of them.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub file: PathBuf,
    /// Exit 3 when there are changes, 0 when none.
    #[arg(long)]
    pub detailed_exitcode: bool,
    /// Take over same-named objects that lack pxfa's tags.
    #[arg(long)]
    pub adopt: bool,
    /// Allow shrinking volumes.
    #[arg(long)]
    pub allow_shrink: bool,
}

/// `apply`.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub file: PathBuf,
    /// Also write the tenant's manifests to this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Take over same-named objects that lack pxfa's tags.
    #[arg(long)]
    pub adopt: bool,
    /// Allow shrinking volumes (data beyond the new size is lost).
    #[arg(long)]
    pub allow_shrink: bool,
    /// With --out: write Secrets with credentials (px-pure-secret) too.
    #[arg(long, requires = "out")]
    pub include_secrets: bool,
    /// Calls in flight at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub concurrency: u32,
    /// The clusters: with --kubeconfig, apply the manifests there after the array.
    #[command(flatten)]
    pub kube: crate::commands::cluster::KubeArgs,
}

/// `destroy`.
#[derive(Debug, Args)]
pub struct DestroyArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub file: PathBuf,
    /// Eradicate after destroying (irreversible; SafeMode may refuse).
    #[arg(long)]
    pub eradicate: bool,
    /// Also delete the token admin's API token (only for admins dedicated to this
    /// tenant: tokens carry no tags).
    #[arg(long)]
    pub delete_token: bool,
    /// Calls in flight at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub concurrency: u32,
}

/// `demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Folder for the manifests.
    #[arg(long, value_name = "DIR", default_value = "pxfa-demo-out")]
    pub out: PathBuf,
}

/// `sim` subcommands.
#[derive(Debug, Subcommand)]
pub enum SimCmd {
    /// Serve a simulated FlashArray over HTTPS until Ctrl-C or SIGTERM.
    Serve(SimServeArgs),
}

/// `sim serve`. The token file is the global `--api-token-file` (required here): read
/// if it exists, else a new token is generated and written with mode 0600.
#[derive(Debug, Args)]
pub struct SimServeArgs {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:8443")]
    pub listen: std::net::SocketAddr,
    /// Load state from FILE if it exists; save it there on shutdown.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Write the simulator's self-signed certificate (PEM) to FILE, for --ca-file.
    #[arg(long, value_name = "FILE")]
    pub cert_out: Option<PathBuf>,
    /// Latency added to every call, e.g. `20ms`.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub latency: Option<std::time::Duration>,
    /// Faults to inject (see docs/cli.md).
    #[arg(long, value_name = "SPEC")]
    pub faults: Option<String>,
    /// Create N volumes at start.
    #[arg(long, value_name = "N")]
    pub seed_volumes: Option<usize>,
}

/// `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// Shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
