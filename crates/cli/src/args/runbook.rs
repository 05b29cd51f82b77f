//! `runbook`: the day-2 steps for one tenant.

use std::path::PathBuf;

use clap::Args;
use clap::builder::PossibleValuesParser;

/// `runbook`.
#[derive(Debug, Args)]
pub(crate) struct RunbookArgs {
    /// The operation.
    #[arg(value_name = "OPERATION", value_parser = PossibleValuesParser::new(px_topology::runbook::Operation::names()))]
    pub(crate) operation: String,
    /// Tenant spec (YAML), as it is before the edit the runbook asks for.
    #[arg(short = 'f', long = "file", value_name = "SPEC")]
    pub(crate) file: PathBuf,
    /// Worker index the per-worker steps are for (direct-access; repeatable).
    /// scale-in: the highest indexes (default the last); replace-vm: exactly one;
    /// grow and add-pool: default every worker.
    #[arg(long = "worker", value_name = "N")]
    pub(crate) workers: Vec<u32>,
    /// The spec after the edit (grow: the raised capacity): sizes print old -> new
    /// from it. Without it, grow's new drive size is a word to read off `pxfa size`.
    #[arg(long, value_name = "EDITED_SPEC")]
    pub(crate) edited: Option<PathBuf>,
}
