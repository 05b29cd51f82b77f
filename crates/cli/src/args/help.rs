//! How the help reads: the array options are listed once, not in every command.
//!
//! clap repeats a global option in the help of every subcommand. The dozen array
//! options (address, token, TLS, retries, simulator) would be half of each command's
//! help, so they are listed in full by `pxfa --help` and `pxfa help array` (the `array`
//! command), and every other command's help ends with a pointer to them instead. They
//! still work with every command: the hidden copies are the same global options.

use clap::{Arg, Command, CommandFactory};

use super::Cli;

/// The help heading of the options that say which array to reach and how.
const ARRAY_HEADING: &str = "Array";

/// The command whose help lists the array options.
const ARRAY_COMMAND: &str = "array";

/// Commands that never reach an array through these options (the controller takes its
/// credentials from each object's Secret), so their help gets no pointer.
const NO_POINTER: &[&str] = &["controller"];

/// An array option a command needs visible in its own help: `sim serve` requires the
/// token file.
const KEEP_VISIBLE: &[(&str, &str)] = &[("serve", "api_token_file")];

/// The pointer at the end of a command's help.
const POINTER: &str = "Array options (--array, --api-token-file, --pure-json, --ca-file, --insecure, \
--retries, ...) work with every command: `pxfa help array` lists them. The address and token also \
come from PUREFA_URL and PUREFA_API.";

/// The `pxfa` command line, with the array options listed once.
pub(crate) fn command() -> Command {
    let cli = Cli::command();
    let array_args: Vec<Arg> = cli
        .get_arguments()
        .filter(|a| a.get_help_heading() == Some(ARRAY_HEADING))
        .cloned()
        .collect();
    let names: Vec<String> = cli
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    names.iter().fold(cli, |cli, name| {
        cli.mut_subcommand(name, |sc| {
            let lists_them = name == ARRAY_COMMAND;
            let pointer = !lists_them && !NO_POINTER.contains(&name.as_str());
            shape(sc, &array_args, !lists_them, pointer)
        })
    })
}

/// Gives `cmd` and its subcommands their own copy of the array options, hidden when
/// `hide` (clap then propagates nothing over them), and the pointer when `pointer`.
fn shape(cmd: Command, array_args: &[Arg], hide: bool, pointer: bool) -> Command {
    let name = cmd.get_name().to_owned();
    let mut cmd = array_args.iter().fold(cmd, |cmd, a| {
        let keep = KEEP_VISIBLE.contains(&(name.as_str(), a.get_id().as_str()));
        cmd.arg(a.clone().hide(hide && !keep))
    });
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
        cmd.mut_subcommand(sub, |sc| shape(sc, array_args, true, pointer || !hide))
    })
}
