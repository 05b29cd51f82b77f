//! `config`: the named array profiles of the pxfa config file.

use clap::{Args, Subcommand};

/// `config`: one subcommand per operation, as kubectl's `config`.
#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCmd {
    /// List the profiles: name, array and credential file (`*` marks the current
    /// one); the file holds no secret, so neither does this list.
    #[command(
        after_help = "Examples:\n  pxfa config get-profiles\n  pxfa config get-profiles -o json | jq -r '.[].name'"
    )]
    GetProfiles,
    /// Print the name of the current profile (`current-profile`).
    CurrentProfile,
    /// Make NAME the current profile (rewrites only the file's `current-profile` line).
    #[command(after_help = "Examples:\n  pxfa config use-profile prod-east")]
    UseProfile(UseProfileArgs),
}

/// `config use-profile`.
#[derive(Debug, Args)]
pub(crate) struct UseProfileArgs {
    /// The profile.
    pub(crate) name: String,
}
