//! Commands that work on one kind of array object: volumes, hosts, host groups,
//! connections, pods, API tokens and the array itself.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::tenant::TokenRotateArgs;

/// Commands that work on one kind of array object.
#[derive(Debug, Subcommand)]
pub(crate) enum ResourceCmd {
    /// Volumes: list, create, resize, rename, destroy, recover, eradicate, tag.
    #[command(subcommand)]
    #[command(
        after_help = "Examples:\n  pxfa volume list --filter \"name='px-*'\" --sort provisioned- -o wide\n  pxfa volume list --tenant team-blue/tenant-blue -o wide   # TENANT and WORKER columns\n  pxfa volume list -o name --no-headers\n  pxfa volume create v1 v2 --size 100GiB\n  pxfa volume resize v1 --size 200GiB"
    )]
    Volume(VolumeCmd),
    /// Hosts and their initiators.
    #[command(subcommand)]
    #[command(
        after_help = "Examples:\n  pxfa host list -o wide\n  pxfa host create w1 --wwn 21:00:f4:c7:aa:00:27:06 --hostgroup hcp-mgmt"
    )]
    Host(HostCmd),
    /// Host groups and their members.
    #[command(subcommand, name = "hostgroup", alias = "host-group")]
    HostGroup(HostGroupCmd),
    /// Connections of volumes to hosts or host groups.
    #[command(subcommand)]
    #[command(
        after_help = "Examples:\n  pxfa connection list --volume v1\n  pxfa connection create --hostgroup hcp-mgmt v1 v2"
    )]
    Connection(ConnectionCmd),
    /// Pods.
    #[command(subcommand)]
    #[command(
        after_help = "Examples:\n  pxfa pod list --destroyed\n  pxfa pod create tenant-a --quota 10TiB"
    )]
    Pod(PodCmd),
    /// API tokens of array admin users.
    #[command(subcommand)]
    Token(TokenCmd),
    /// The array itself; its help (`pxfa help array`) lists the options that reach an array.
    #[command(subcommand)]
    #[command(
        after_help = "The options under \"Array\" work with every command (docs/cli.md explains \
them); the address and token also come from PUREFA_URL and PUREFA_API.\n\n\
Examples:\n  pxfa array info\n  pxfa array space -o json | jq .capacity"
    )]
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
        /// Only this tenant's volumes, by their pxfa.io tags (or their pod's):
        /// `NAMESPACE/NAME`, or a bare NAME for that name in any namespace.
        #[arg(long, value_name = "NS/NAME")]
        tenant: Option<String>,
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
