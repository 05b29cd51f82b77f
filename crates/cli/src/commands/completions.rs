//! `pxfa completions bash|zsh|fish`.

use anyhow::Result;
use clap::CommandFactory;

use crate::args::{Cli, CompletionsArgs};
use crate::exit::Outcome;

/// Writes the completion script for the shell to stdout.
pub fn run(a: &CompletionsArgs) -> Result<Outcome> {
    let mut cmd = Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(a.shell, &mut cmd, "pxfa", &mut out);
    Ok(Outcome::Success)
}
