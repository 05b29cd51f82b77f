//! How the help reads: options that mean the same everywhere are listed once, and a
//! command's help shows only what it uses.
//!
//! clap repeats a global option in the help of every subcommand. The array options
//! (address, token, TLS, retries, simulator) and the API client's six would be half of
//! each command's help, so they are listed in full by `pxfa --help` and `pxfa help
//! array` (the `array` command), and every other command's help ends with a pointer
//! to them instead. `--yes` is shown only by the commands that ask for confirmation,
//! and `-o mermaid|dot` only by `plan` and `status`, the commands that draw. All of
//! them still work with every command: the hidden copies are the same global options.
//! Likewise the Kubernetes request options show only where a command reads clusters.

use clap::builder::{EnumValueParser, PossibleValue, TypedValueParser};
use clap::{Arg, Command, CommandFactory, ValueEnum};

use super::{Cli, OutputFormat};

/// The help headings of the options that say which array to reach and how: listed by
/// `pxfa help array`, hidden elsewhere.
const ARRAY_HEADINGS: &[&str] = &["Array", "API client"];

/// The commands (space-separated paths) that ask for confirmation, and so show `--yes`.
const CONFIRMING: &[&str] = &[
    "apply",
    "destroy",
    "claim",
    "orphans",
    "volume resize",
    "volume destroy",
    "volume eradicate",
    "host delete",
    "hostgroup delete",
    "hostgroup remove-host",
    "connection delete",
    "pod destroy",
    "pod eradicate",
    "token delete",
    "token rotate",
];

/// The commands that send Kubernetes requests, and so show `--kube-timeout` and
/// `--kube-deadline` (`plan` too: its cluster-side preview reads the clusters).
const KUBERNETES: &[&str] = &[
    "apply",
    "plan",
    "status",
    "doctor",
    "orphans",
    "token rotate",
];

/// The help heading of the Kubernetes request options.
const KUBERNETES_HEADING: &str = "Kubernetes";

/// The commands that draw the tenant (`-o mermaid|dot`).
const DRAWING: &[&str] = &["plan", "status"];

/// The output formats that are pictures.
const PICTURES: &[OutputFormat] = &[OutputFormat::Mermaid, OutputFormat::Dot];

/// The command whose help lists the array options.
const ARRAY_COMMAND: &str = "array";

/// Commands that never reach an array through these options (the controller takes its
/// credentials from each object's Secret), so their help gets no pointer.
const NO_POINTER: &[&str] = &["controller"];

/// An array option a command needs visible in its own help: `sim serve` requires the
/// token file.
const KEEP_VISIBLE: &[(&str, &str)] = &[("serve", "api_token_file")];

/// `sim serve`'s own help for the token file it requires: it serves the token, it does
/// not read `PUREFA_API` or a pure.json.
const SERVE_TOKEN_HELP: &str = "File with the token the simulator accepts (required): read if it \
exists, else a new random token is written there (mode 0600). PUREFA_API and pure.json are not read.";

/// The pointer at the end of a command's help.
const POINTER: &str = "Array options (--array, --profile, --api-token-file, --pure-json, --ca-file, --insecure, \
--retries, ...) work with every command: `pxfa help array` lists them. The address and token also \
come from PUREFA_URL and PUREFA_API.";

/// The `pxfa` command line, with the array options listed once.
pub(crate) fn command() -> Command {
    let cli = Cli::command();
    let shared = Shared {
        array: cli
            .get_arguments()
            .filter(|a| {
                a.get_help_heading()
                    .is_some_and(|h| ARRAY_HEADINGS.contains(&h))
            })
            .cloned()
            .collect(),
        kubernetes: cli
            .get_arguments()
            .filter(|a| a.get_help_heading() == Some(KUBERNETES_HEADING))
            .cloned()
            .collect(),
        yes: find(&cli, "yes"),
        output: find(&cli, "output"),
    };
    let names: Vec<String> = cli
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    names.iter().fold(cli, |cli, name| {
        cli.mut_subcommand(name, |sc| {
            let lists_them = name == ARRAY_COMMAND;
            let pointer = !lists_them && !NO_POINTER.contains(&name.as_str());
            shape(sc, name, &shared, !lists_them, pointer)
        })
    })
}

/// The global options each command gets its own copy of.
struct Shared {
    /// The array and API client options.
    array: Vec<Arg>,
    /// The Kubernetes request options.
    kubernetes: Vec<Arg>,
    /// `--yes`.
    yes: Option<Arg>,
    /// `-o`.
    output: Option<Arg>,
}

fn find(cli: &Command, id: &str) -> Option<Arg> {
    cli.get_arguments()
        .find(|a| a.get_id().as_str() == id)
        .cloned()
}

/// Gives `cmd` (at `path`) and its subcommands their own copy of the shared options:
/// the array options hidden when `hide` (clap then propagates nothing over them),
/// `--yes` only where it confirms, `-o` without the pictures where nothing draws; and
/// the pointer when `pointer`.
fn shape(cmd: Command, path: &str, shared: &Shared, hide: bool, pointer: bool) -> Command {
    let name = cmd.get_name().to_owned();
    let mut cmd = shared.array.iter().fold(cmd, |cmd, a| {
        let keep = KEEP_VISIBLE.contains(&(name.as_str(), a.get_id().as_str()));
        let mut a = a.clone().hide(hide && !keep);
        if keep && name == "serve" {
            a = a.help(SERVE_TOKEN_HELP);
        }
        cmd.arg(a)
    });
    for k in &shared.kubernetes {
        cmd = cmd.arg(k.clone().hide(!KUBERNETES.contains(&path)));
    }
    if let Some(yes) = &shared.yes {
        cmd = cmd.arg(yes.clone().hide(!CONFIRMING.contains(&path)));
    }
    if let Some(output) = &shared.output
        && !DRAWING.contains(&path)
    {
        cmd = cmd.arg(output.clone().value_parser(NoPictures));
    }
    if pointer {
        let text = match cmd.get_after_help() {
            Some(examples) => format!("{examples}\n\n{POINTER}"),
            None => POINTER.to_owned(),
        };
        cmd = cmd.after_help(text);
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    names.iter().fold(cmd, |cmd, sub| {
        let sub_path = format!("{path} {sub}");
        cmd.mut_subcommand(sub, |sc| {
            shape(sc, &sub_path, shared, true, pointer || !hide)
        })
    })
}

/// `-o`'s parser where nothing draws: the same formats, the pictures left out of the
/// help (a command that cannot draw refuses them with exit 2, naming the format).
#[derive(Clone)]
struct NoPictures;

impl TypedValueParser for NoPictures {
    type Value = OutputFormat;

    fn parse_ref(
        &self,
        cmd: &Command,
        arg: Option<&Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<OutputFormat, clap::Error> {
        EnumValueParser::<OutputFormat>::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(OutputFormat::value_variants().iter().filter_map(
            |f| f.to_possible_value().map(|v| v.hide(PICTURES.contains(f))),
        )))
    }
}
