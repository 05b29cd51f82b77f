//! The one error type of px-cluster. Messages say what pxfa was doing and on which
//! object; the cause stays reachable through `source()`, so callers can classify
//! (kube, array, probe) without reading text. No variant ever holds a secret's value:
//! API server answers about credentials keep only their status.

/// A boxed cause from outside px-cluster (kubeconfig loading, a token probe).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a cluster operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The kubeconfig cannot be read, or its context cannot be used.
    #[error("{message}")]
    Kubeconfig {
        /// Which file and context.
        message: String,
        /// kube's reason.
        #[source]
        source: BoxError,
    },
    /// A request to the API server failed (or no client could be built).
    #[error("{context}")]
    Kube {
        /// What pxfa was doing, on which object.
        context: String,
        /// kube's error.
        #[source]
        source: kube::Error,
    },
    /// The API server refused a request about a credential; only the status is kept,
    /// because a validation message may quote field values.
    #[error("{context}: the API server answered {code} {reason}")]
    Refused {
        /// What pxfa was doing, on which object.
        context: String,
        /// HTTP status.
        code: u16,
        /// The status reason (`Invalid`, `Conflict`).
        reason: String,
    },
    /// The cluster does not serve a kind pxfa needs.
    #[error(
        "the cluster does not serve {kind} ({api_version}); is the operator that defines it installed?"
    )]
    NotServed {
        /// `apiVersion` asked for.
        api_version: String,
        /// Kind asked for.
        kind: String,
        /// kube's discovery error.
        #[source]
        source: kube::Error,
    },
    /// Applying one object failed.
    #[error("cannot apply {object}")]
    Apply {
        /// `Kind namespace/name`.
        object: String,
        /// Why the object could not be sent: its kind did not resolve on the cluster
        /// (typically [`Error::NotServed`]).
        #[source]
        source: Box<Error>,
    },
    /// A rendered manifest is not what the cluster layer can apply.
    #[error("{0}")]
    Manifest(String),
    /// The cluster holds something pxfa will not build on by itself; the message says
    /// what to fix.
    #[error("{0}")]
    State(String),
    /// The caller's options contradict each other or the spec; nothing was sent.
    #[error("{0}")]
    InvalidOptions(String),
    /// An array call (token rotation) failed.
    #[error("{context}")]
    Array {
        /// What pxfa was doing.
        context: String,
        /// The array's error.
        #[source]
        source: flasharray::Error,
    },
    /// A new token did not pass the probe.
    #[error("the new token of {user} does not log in")]
    Probe {
        /// The array user.
        user: String,
        /// The probe's reason.
        #[source]
        source: BoxError,
    },
}

impl Error {
    /// True when the caller's input was wrong and nothing was sent.
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, Error::InvalidOptions(_))
    }

    pub(crate) fn kube(context: impl Into<String>, source: kube::Error) -> Self {
        Error::Kube {
            context: context.into(),
            source,
        }
    }

    pub(crate) fn array(context: impl Into<String>, source: flasharray::Error) -> Self {
        Error::Array {
            context: context.into(),
            source,
        }
    }
}

/// Results of px-cluster.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `error: cause: cause`, the whole chain on one line (what `anyhow`'s `{:#}` shows),
/// for messages that embed an error as text.
pub(crate) fn chain_text(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}
