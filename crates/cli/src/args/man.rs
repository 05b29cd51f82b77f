//! `man`: manual pages from the command line's own definitions.

use std::path::PathBuf;

use clap::Args;

/// `man`.
#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// Folder to write the pages to (created if missing); existing pages of the
    /// same names are replaced.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,
}
