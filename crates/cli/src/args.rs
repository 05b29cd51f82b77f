//! The command line, as clap derive types and nothing else.
//!
//! Values are kept as the user typed them (names, sizes as strings) so that the
//! commands validate them with the library's own types and report errors with the
//! library's wording, before anything is sent to an array.

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

/// Portworx on Pure Storage FlashArray for OpenShift hosted control plane tenants.
#[derive(Debug, Parser)]
#[command(name = "pxfa", version, propagate_version = true, max_term_width = 100)]
#[command(after_help = "Exit codes: 0 ok, 1 error, 2 usage or invalid input, \
3 `plan --detailed-exitcode` found changes, 4 `apply` finished with some changes failed.")]
pub(crate) struct Cli {
    /// Options every command understands.
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub(crate) enum OutputFormat {
    /// Human-readable tables, sizes with units, local times.
    #[default]
    Table,
    /// JSON on stdout; sizes in bytes, times in ms since the epoch, as the array sends them.
    Json,
    /// YAML on stdout, same content as JSON.
    Yaml,
    /// Tables with more columns (ids, pods, QoS, port connectivity).
    Wide,
    /// `kind/name`, one a line, for lists (`pxfa volume list -o name | xargs ...`).
    Name,
    /// `plan` and `status`: the tenant as a Mermaid flowchart.
    Mermaid,
    /// `plan` and `status`: the tenant as a Graphviz digraph (`| dot -Tsvg`).
    Dot,
}

/// When to colour output.
/// What a new simulated array starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub(crate) enum SimSeed {
    /// Nothing but the admins.
    #[default]
    Empty,
    /// A shared production array: the management Portworx's hosts and drives, another
    /// tenant, foreign pods and hosts, well filled, SafeMode on.
    Brownfield,
}

impl SimSeed {
    /// The mock's seed.
    pub(crate) fn seed(self) -> flasharray_mock::Seed {
        match self {
            SimSeed::Empty => flasharray_mock::Seed::Empty,
            SimSeed::Brownfield => flasharray_mock::Seed::brownfield(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub(crate) enum ColorChoice {
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
pub(crate) struct GlobalArgs {
    /// FlashArray management address (`https://host[:port]` or `host`), or `sim` for an
    /// embedded simulated array. Default: `PUREFA_URL`, then the pure.json entry.
    #[arg(long, global = true, value_name = "URL|sim", help_heading = "Array")]
    pub(crate) array: Option<String>,

    /// File holding the API token (first line). Default: `PUREFA_API`, then pure.json.
    /// A token is never accepted as an argument value.
    #[arg(long, global = true, value_name = "FILE", help_heading = "Array")]
    pub(crate) api_token_file: Option<PathBuf>,

    /// A px-pure-secret `pure.json` file to take the address and token from.
    #[arg(long, global = true, value_name = "FILE", help_heading = "Array")]
    pub(crate) pure_json: Option<PathBuf>,

    /// Which `FlashArrays[]` entry of pure.json to use (its `MgmtEndPoint`), when it
    /// lists several.
    #[arg(long, global = true, value_name = "NAME", help_heading = "Array")]
    pub(crate) array_name: Option<String>,

    /// PEM bundle of certificate authorities to trust for the array's certificate.
    #[arg(long, global = true, value_name = "FILE", help_heading = "Array")]
    pub(crate) ca_file: Option<PathBuf>,

    /// Do not verify the array's TLS certificate (exposes the token to anyone in the
    /// middle; prefer --ca-file).
    #[arg(long, global = true, help_heading = "Array")]
    pub(crate) insecure: bool,

    /// Retries of one REST call after 429, 503, busy or connection errors.
    #[arg(
        long,
        global = true,
        value_name = "N",
        default_value_t = 5,
        help_heading = "Array"
    )]
    pub(crate) retries: u32,

    /// Give up retrying one REST call after this long (e.g. `2m`, `30s`).
    #[arg(long, global = true, value_name = "DURATION", default_value = "2m",
          value_parser = humantime::parse_duration, help_heading = "Array")]
    pub(crate) retry_for: std::time::Duration,

    /// Connect timeout (e.g. `10s`).
    #[arg(long, global = true, value_name = "DURATION", default_value = "10s",
          value_parser = humantime::parse_duration, help_heading = "Array")]
    pub(crate) connect_timeout: std::time::Duration,

    /// With `--array sim`: load the simulated array's state from FILE (JSON) if it
    /// exists, and save it back when a command changed the array (also on Ctrl-C).
    #[arg(long, global = true, value_name = "FILE", help_heading = "Array")]
    pub(crate) sim_state: Option<PathBuf>,

    /// With `--array sim`: what a new simulated array starts with (ignored when
    /// --sim-state loads an existing file).
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "SEED",
        default_value = "empty",
        help_heading = "Array"
    )]
    pub(crate) sim_seed: SimSeed,

    /// With `--array sim`: delay every call to the embedded array (tests of Ctrl-C).
    #[arg(long, global = true, hide = true, value_name = "DURATION",
          value_parser = humantime::parse_duration)]
    pub(crate) sim_latency: Option<std::time::Duration>,

    /// Output format of results on stdout.
    #[arg(
        short,
        long,
        global = true,
        value_enum,
        default_value_t,
        help_heading = "Output"
    )]
    pub(crate) output: OutputFormat,

    /// Tables without their header line.
    #[arg(long, global = true, help_heading = "Output")]
    pub(crate) no_headers: bool,

    /// More log lines on stderr (-v: info, -vv: debug with request ids, -vvv: trace).
    #[arg(short, long, global = true, action = ArgAction::Count, conflicts_with = "quiet", help_heading = "Output")]
    pub(crate) verbose: u8,

    /// Only errors on stderr; no progress.
    #[arg(short, long, global = true, help_heading = "Output")]
    pub(crate) quiet: bool,

    /// Colours on stdout/stderr. `NO_COLOR` always wins.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t,
        value_name = "WHEN",
        help_heading = "Output"
    )]
    pub(crate) color: ColorChoice,

    /// Answer yes to confirmations; required for destructive commands when stdin is not
    /// a terminal.
    #[arg(short = 'y', long, global = true)]
    pub(crate) yes: bool,
}

/// The pointer below every command's help to where the array options are explained
/// (a macro: `concat!` takes literals only).
macro_rules! array_pointer {
    () => {
        "The array options (--array, --api-token-file, --pure-json, --ca-file, --insecure, --retries, ...) \
         work with every command and are explained in docs/cli.md; the address and token also come from \
         PUREFA_URL and PUREFA_API."
    };
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Per-resource commands over the array's REST API.
    #[command(flatten)]
    Resource(ResourceCmd),
    /// Explain the Portworx pool sizing of a tenant spec.
    #[command(after_help = concat!("Examples:\n  ", "pxfa size -f examples/tenant-direct-access.yaml\n  pxfa size -f examples/tenant-direct-access.yaml --array sim   # with the array's headroom\n  pxfa size -f SPEC -o json | jq .pools", "\n\n", array_pointer!()))]
    Size(SizeArgs),
    /// Write a tenant's manifests to a folder (no array access).
    #[command(after_help = concat!("Examples:\n  ", "pxfa render -f examples/tenant-kubevirt-csi.yaml --out out-c/\n  pxfa render -f SPEC --out out/ -o json | jq -r '.files[]'", "\n\n", array_pointer!()))]
    Render(RenderArgs),
    /// Check tenant specs or manifests against pxfa's rules.
    #[command(after_help = concat!("Examples:\n  ", "pxfa lint -f examples/tenant-direct-access.yaml\n  pxfa lint out/management/ out/tenant/\n  pxfa lint -f SPEC -o json | jq '.[] | select(.severity == \"error\")'", "\n\n", array_pointer!()))]
    Lint(LintArgs),
    /// Show what `apply` (or, with --destroy, `destroy`) would change on the array.
    #[command(after_help = concat!("Examples:\n  ", "pxfa --array sim plan -f examples/tenant-direct-access.yaml\n  pxfa plan --destroy -f SPEC              # what destroy -f SPEC would remove; nothing is written\n  pxfa plan -f SPEC --detailed-exitcode; echo $?          # 3: changes pending\n  pxfa plan -f SPEC -o json | jq '.summary'\n  pxfa plan -f SPEC -o dot | dot -Tsvg > plan.svg", "\n\n", array_pointer!()))]
    Plan(PlanArgs),
    /// Converge the array to a tenant spec.
    #[command(after_help = concat!("Examples:\n  ", "pxfa --array sim apply -f examples/tenant-direct-access.yaml --yes --out out/\n  pxfa apply -f SPEC --yes --kubeconfig mgmt.kubeconfig --tenant-kubeconfig tenant.kubeconfig", "\n\n", array_pointer!()))]
    Apply(ApplyArgs),
    /// Remove what pxfa made on the array for a tenant.
    #[command(after_help = concat!("Examples:\n  ", "pxfa --array sim destroy -f examples/tenant-direct-access.yaml --yes\n  pxfa destroy -f SPEC --yes --eradicate   # irreversible; SafeMode may keep volumes pending", "\n\n", array_pointer!()))]
    Destroy(DestroyArgs),
    /// One view of a tenant across the array and the clusters (-o json for machines).
    #[command(after_help = concat!("Examples:\n  ", "pxfa --array sim status -f examples/tenant-direct-access.yaml\n  pxfa status -f SPEC --kubeconfig mgmt.kubeconfig -o json | jq .healthy\n  pxfa status -f SPEC -o mermaid > tenant.mmd", "\n\n", array_pointer!()))]
    Status(StatusArgs),
    /// Print the TenantStorage CustomResourceDefinition (pxfa.io/v1alpha1).
    #[command(after_help = concat!("Examples:\n  ", "pxfa crd | oc apply -f -", "\n\n", array_pointer!()))]
    Crd,
    /// The whole flow for the example tenant on an embedded simulated array.
    #[command(after_help = concat!("Examples:\n  ", "pxfa demo\n  pxfa demo --out /tmp/demo-out", "\n\n", array_pointer!()))]
    Demo(DemoArgs),
    /// The HTTPS FlashArray simulator.
    #[command(subcommand)]
    Sim(SimCmd),
    /// The TenantStorage controller for the management cluster.
    #[command(subcommand)]
    Controller(ControllerCmd),
    /// Shell completion script on stdout.
    #[command(after_help = concat!("Examples:\n  ", "pxfa completions bash > ~/.local/share/bash-completion/completions/pxfa\n  pxfa completions zsh > \"${fpath[1]}/_pxfa\"\n  pxfa completions fish > ~/.config/fish/completions/pxfa.fish", "\n\n", array_pointer!()))]
    Completions(CompletionsArgs),
}

/// Commands that work on one kind of array object.
#[derive(Debug, Subcommand)]
pub(crate) enum ResourceCmd {
    /// Volumes: list, create, resize, rename, destroy, recover, eradicate, tag.
    #[command(subcommand)]
    #[command(after_help = concat!("Examples:\n  ", "pxfa volume list --filter \"name='px-*'\" --sort provisioned- -o wide\n  pxfa volume list -o name --no-headers\n  pxfa volume create v1 v2 --size 100GiB\n  pxfa volume resize v1 --size 200GiB", "\n\n", array_pointer!()))]
    Volume(VolumeCmd),
    /// Hosts and their initiators.
    #[command(subcommand)]
    #[command(after_help = concat!("Examples:\n  ", "pxfa host list -o wide\n  pxfa host create w1 --wwn 21:00:f4:c7:aa:00:27:06 --hostgroup hcp-mgmt", "\n\n", array_pointer!()))]
    Host(HostCmd),
    /// Host groups and their members.
    #[command(subcommand, name = "hostgroup", alias = "host-group")]
    HostGroup(HostGroupCmd),
    /// Connections of volumes to hosts or host groups.
    #[command(subcommand)]
    #[command(after_help = concat!("Examples:\n  ", "pxfa connection list --volume v1\n  pxfa connection create --hostgroup hcp-mgmt v1 v2", "\n\n", array_pointer!()))]
    Connection(ConnectionCmd),
    /// Pods.
    #[command(subcommand)]
    #[command(after_help = concat!("Examples:\n  ", "pxfa pod list --destroyed\n  pxfa pod create tenant-a --quota 10TiB", "\n\n", array_pointer!()))]
    Pod(PodCmd),
    /// API tokens of array admin users.
    #[command(subcommand)]
    Token(TokenCmd),
    /// The array itself.
    #[command(subcommand)]
    #[command(after_help = concat!("Examples:\n  ", "pxfa array info\n  pxfa array space -o json | jq .capacity", "\n\n", array_pointer!()))]
    Array(ArrayCmd),
}

/// Selection shared by list commands.
#[derive(Debug, Clone, Args)]
pub(crate) struct ListArgs {
    /// Only these names (each must exist).
    #[arg(value_name = "NAME")]
    pub(crate) names: Vec<String>,
    /// Array filter expression, e.g. `name='px-*'`.
    #[arg(long)]
    pub(crate) filter: Option<String>,
    /// Sort keys; a trailing `-` sorts descending (`provisioned-`).
    #[arg(long, value_delimiter = ',')]
    pub(crate) sort: Vec<String>,
    /// At most this many items.
    #[arg(long)]
    pub(crate) limit: Option<usize>,
}

/// Destroyed-state selection for volume and pod listings.
#[derive(Debug, Clone, Args)]
pub(crate) struct DestroyedArgs {
    /// Only destroyed objects (pending eradication).
    #[arg(long, conflicts_with = "live")]
    pub(crate) destroyed: bool,
    /// Only live objects.
    #[arg(long)]
    pub(crate) live: bool,
}

/// `volume` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum VolumeCmd {
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
pub(crate) struct TagArgs {
    /// Object names.
    #[arg(required = true, value_name = "NAME")]
    pub(crate) names: Vec<String>,
    /// Set a tag, `KEY=VALUE` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Remove a tag by key (repeatable).
    #[arg(long = "remove", value_name = "KEY")]
    pub(crate) remove: Vec<String>,
    /// Tag namespace.
    #[arg(long, default_value = "default")]
    pub(crate) namespace: String,
}

/// Initiators given on the command line.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct InitiatorArgs {
    /// FC WWN (`21:00:f4:c7:aa:00:27:06` or `2100F4C7AA002706`), repeatable.
    #[arg(long = "wwn", value_name = "WWN")]
    pub(crate) wwns: Vec<String>,
    /// iSCSI IQN, repeatable.
    #[arg(long = "iqn", value_name = "IQN")]
    pub(crate) iqns: Vec<String>,
    /// NVMe NQN, repeatable.
    #[arg(long = "nqn", value_name = "NQN")]
    pub(crate) nqns: Vec<String>,
}

/// `host` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum HostCmd {
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
pub(crate) enum HostGroupCmd {
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
pub(crate) struct TargetArgs {
    /// A host (private connection).
    #[arg(long)]
    pub(crate) host: Option<String>,
    /// A host group (shared connection).
    #[arg(long = "hostgroup", alias = "host-group", value_name = "GROUP")]
    pub(crate) host_group: Option<String>,
}

/// `connection` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum ConnectionCmd {
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
pub(crate) enum PodCmd {
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
pub(crate) enum TokenCmd {
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
    Rotate(TokenRotateArgs),
}

/// `array` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum ArrayCmd {
    /// Name, Purity version, capacity, eradication settings.
    Info,
    /// Capacity and space use.
    Space,
}

/// `size`.
#[derive(Debug, Args)]
pub(crate) struct SizeArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
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
pub(crate) struct PlanArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
    /// Exit 3 when there are changes, 0 when none.
    #[arg(long)]
    pub(crate) detailed_exitcode: bool,
    /// Take over same-named objects that lack pxfa's tags.
    #[arg(long)]
    pub(crate) adopt: bool,
    /// Allow shrinking volumes.
    #[arg(long)]
    pub(crate) allow_shrink: bool,
    /// Soft-destroy the retained drives of workers removed from the spec (after the
    /// Portworx decommission steps the plan lists); recoverable for the eradication
    /// delay.
    #[arg(long)]
    pub(crate) release_removed_workers: bool,
    /// Show what `destroy -f SPEC` would remove instead (nothing is written).
    #[arg(long, conflicts_with_all = ["adopt", "allow_shrink", "release_removed_workers"])]
    pub(crate) destroy: bool,
    /// With --destroy: as `destroy --eradicate` would.
    #[arg(long, requires = "destroy")]
    pub(crate) eradicate: bool,
    /// With --destroy: as `destroy --delete-token` would.
    #[arg(long, requires = "destroy")]
    pub(crate) delete_token: bool,
}

/// `apply`.
#[derive(Debug, Args)]
pub(crate) struct ApplyArgs {
    /// Tenant spec (YAML).
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
    /// Also write the tenant's manifests to this folder.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
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
    /// The clusters: with --kubeconfig, apply the manifests there after the array.
    #[command(flatten)]
    pub(crate) kube: KubeArgs,
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
    /// Go on when spec.array.endpoint names another host than the array being
    /// written, because both name the same array.
    #[arg(long)]
    pub(crate) allow_endpoint_mismatch: bool,
    /// Calls in flight at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) concurrency: u32,
}

/// `demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Folder for the manifests.
    #[arg(long, value_name = "DIR", default_value = "pxfa-demo-out")]
    pub(crate) out: PathBuf,
}

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
    /// Most TenantStorage objects reconciled at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) concurrency: u16,
    /// Most tenants working on one array at once (they share its session).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) per_array: u16,
    /// How often a converged object is checked for drift.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    pub(crate) drift_interval: std::time::Duration,
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

/// `completions`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// Shell.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// Cluster options of `apply`. Without `--kubeconfig` nothing touches a cluster.
#[derive(Debug, Clone, Args)]
pub(crate) struct KubeArgs {
    /// Management cluster kubeconfig: after the array, apply the management manifests
    /// there (server-side apply, field manager `pxfa`), wait for them and attach the
    /// worker disks.
    #[arg(long, value_name = "FILE")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Context in the management kubeconfig (default: its current context).
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    pub(crate) context: Option<String>,
    /// Tenant (hosted) cluster kubeconfig: apply the tenant manifests there too.
    #[arg(long, value_name = "FILE", requires = "kubeconfig")]
    pub(crate) tenant_kubeconfig: Option<PathBuf>,
    /// Context in the tenant kubeconfig.
    #[arg(long, value_name = "NAME", requires = "tenant_kubeconfig")]
    pub(crate) tenant_context: Option<String>,
    /// Take over fields another field manager owns instead of stopping at the conflict.
    #[arg(long, requires = "kubeconfig")]
    pub(crate) force_conflicts: bool,
    /// How long to wait for each step (NNCP available, PVCs bound, VMs created,
    /// StorageCluster online).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = humantime::parse_duration)]
    pub(crate) wait_timeout: Duration,
    /// Give a new VM the disks of a worker whose recorded VM no longer exists (make
    /// sure the old VM is gone for good: two VMs must never share a worker's disks).
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
}

/// `token rotate`.
#[derive(Debug, Args)]
pub(crate) struct TokenRotateArgs {
    /// Tenant spec (YAML); cloud-drive only.
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
    /// Tenant cluster kubeconfig (holds px-pure-secret).
    #[arg(long, value_name = "FILE")]
    pub(crate) tenant_kubeconfig: PathBuf,
    /// Context in the tenant kubeconfig.
    #[arg(long, value_name = "NAME")]
    pub(crate) tenant_context: Option<String>,
    /// The second array user the rotation bridges through (same role as the token
    /// user); default `<tokenUser>-alt`.
    #[arg(long, value_name = "ADMIN")]
    pub(crate) alternate_user: Option<String>,
    /// Lifetime of the new token, e.g. `90d`; never expires when omitted.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub(crate) lifetime: Option<Duration>,
    /// Wait between writing a new token and deleting the old one (Portworx re-reads
    /// px-pure-secret about every five minutes).
    #[arg(long, value_name = "DURATION", default_value = "6m", value_parser = humantime::parse_duration)]
    pub(crate) grace: Duration,
}
