//! `pxfa completions bash|zsh|fish`.

use std::io::Write;

use anyhow::Result;
use clap::CommandFactory;

use crate::args::{Cli, CompletionsArgs};
use crate::exit::Outcome;

/// Writes the completion script for the shell to stdout. The script is generated into
/// memory first: the generator panics on write errors, and a closed pipe
/// (`pxfa completions bash | head`) must not be a crash.
pub(crate) fn run(a: &CompletionsArgs) -> Result<Outcome> {
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "pxfa", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(Outcome::Success)
}
