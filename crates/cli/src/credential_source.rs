//! Where a credential came from (a flag, an environment variable, a pure.json),
//! for messages, and the warning for a credential file others can read: what the
//! array target (`config`) and the API-client credential (`api_client`) share.

use std::fmt;
use std::path::{Path, PathBuf};

use px_topology::files;

/// Where a setting came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// A command-line flag.
    Flag,
    /// An environment variable.
    Env(&'static str),
    /// A pure.json file.
    PureJson(PathBuf),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag => f.write_str("command line"),
            Source::Env(v) => write!(f, "environment variable {v}"),
            Source::PureJson(p) => write!(f, "{}", p.display()),
        }
    }
}

/// Warns when a credential file can be read by group or others, or its folder
/// written by them.
pub(crate) fn warn_if_shared(path: &Path, warn: &mut dyn FnMut(String)) {
    for w in files::loose_permissions(path) {
        warn(w);
    }
}
