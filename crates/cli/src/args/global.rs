//! The options every command understands: which array, how to reach it, and how to
//! print.

use std::path::PathBuf;

use clap::{ArgAction, Args, ValueEnum};

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
    /// `usage`: comma-separated values with a header line; sizes in bytes.
    Csv,
}

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

/// When to colour output.
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

/// `--kube-deadline` of the commands that only read the clusters.
pub(crate) const KUBE_READ_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// A duration greater than zero (a zero timeout would end every request at once).
fn nonzero_duration(s: &str) -> Result<std::time::Duration, String> {
    match humantime::parse_duration(s) {
        Ok(d) if d.is_zero() => Err("must be greater than zero".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

/// The profile a command uses (`profiles::apply`), recorded so that the target's
/// resolution leaves the `PUREFA_*` environment aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProfileInEffect {
    /// Its name.
    pub(crate) name: String,
    /// The config file.
    pub(crate) file: PathBuf,
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

    /// A named profile of the pxfa config file (`pxfa config get-profiles`): its array
    /// and credential file. Default: `PXFA_PROFILE`, then the file's `current-profile`
    /// when no flag or `PUREFA_URL` names an array.
    #[arg(long, global = true, value_name = "NAME", help_heading = "Array")]
    pub(crate) profile: Option<String>,

    /// The profile applied to these options (`profiles::apply`), if any.
    #[arg(skip)]
    pub(crate) profile_in_effect: Option<ProfileInEffect>,

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

    /// Log in as an API client (OAuth2) instead of with an API token: the client's
    /// `id` on the array. Needs --key-id, --issuer, --username and
    /// --private-key-file. Default: `PUREFA_CLIENT_ID`.
    #[arg(long, global = true, value_name = "ID", help_heading = "API client")]
    pub(crate) client_id: Option<String>,

    /// The API client's `key_id`. Default: `PUREFA_KEY_ID`.
    #[arg(long, global = true, value_name = "ID", help_heading = "API client")]
    pub(crate) key_id: Option<String>,

    /// The API client's issuer. Default: `PUREFA_ISSUER`.
    #[arg(long, global = true, value_name = "NAME", help_heading = "API client")]
    pub(crate) issuer: Option<String>,

    /// The array user the API client acts as; its rights are the lesser of this
    /// user's role and the client's maximum role. Default: `PUREFA_USERNAME`.
    #[arg(long, global = true, value_name = "USER", help_heading = "API client")]
    pub(crate) username: Option<String>,

    /// PEM RSA private key of the API client (PKCS#8, encrypted PKCS#8 or PKCS#1).
    /// Default: `PUREFA_PRIVATE_KEY_FILE`.
    #[arg(long, global = true, value_name = "FILE", help_heading = "API client")]
    pub(crate) private_key_file: Option<PathBuf>,

    /// File whose first line is the password of an encrypted private key. Default:
    /// `PUREFA_PRIVATE_KEY_PASSWORD`. A password is never accepted as an argument value.
    #[arg(long, global = true, value_name = "FILE", help_heading = "API client")]
    pub(crate) private_key_password_file: Option<PathBuf>,

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

    /// Time limit of one Kubernetes API request, the answer's head and body (e.g.
    /// `30s`). A `Retry-After` longer than this is not waited for.
    #[arg(long, global = true, value_name = "DURATION", default_value = "30s",
          value_parser = nonzero_duration, help_heading = "Kubernetes")]
    pub(crate) kube_timeout: std::time::Duration,

    /// Every Kubernetes API request of this command over within this long from its
    /// start. Default: 2m for `doctor`, `status` and `orphans`; none for `apply` and
    /// `token rotate`, whose waits have `--wait-timeout`.
    #[arg(long, global = true, value_name = "DURATION",
          value_parser = nonzero_duration, help_heading = "Kubernetes")]
    pub(crate) kube_deadline: Option<std::time::Duration>,

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

    /// With `--array sim` or `sim serve`: the simulated array answers as one whose
    /// newest REST version is 2.N (2.0 to 2.39), so that what that version lacks is
    /// refused as on such an array (realms before 2.36). Default: every feature.
    #[arg(long, global = true, value_name = "2.N", help_heading = "Array",
          value_parser = flasharray_sim::parse_rest_version)]
    pub(crate) rest_version: Option<u32>,

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

impl GlobalArgs {
    /// The bounds of this command's Kubernetes requests: `--kube-timeout` each, and
    /// all within `--kube-deadline` (for a command that only reads, 2 minutes unless
    /// given), counted from now.
    pub(crate) fn kube_bounds(&self, reads_only: bool) -> px_cluster::KubeBounds {
        let bounds = px_cluster::KubeBounds::new(self.kube_timeout);
        let deadline = self
            .kube_deadline
            .or(reads_only.then_some(KUBE_READ_DEADLINE));
        match deadline {
            Some(d) => bounds.with_deadline(d),
            None => bounds,
        }
    }
}
