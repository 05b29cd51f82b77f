//! The controller's one error: a [`Reason`] (the condition reason written to status)
//! and a message naming the object and, for array failures, the request id.

/// Why a reconcile stopped; the spelling is the condition `reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// `spec.credentialsSecret` is unset or names no Secret.
    CredentialsMissing,
    /// The Secret has no usable pure.json or CA.
    CredentialsInvalid,
    /// The array did not answer a read.
    ArrayUnreachable,
    /// The array refused or lost a write.
    ArrayWriteFailed,
    /// An object pxfa does not own is in the way (array or cluster).
    Conflict,
    /// The HostedCluster or its admin kubeconfig Secret is missing.
    TenantKubeconfigMissing,
    /// A Kubernetes read or write failed.
    ClusterApplyFailed,
    /// A bug or a poisoned lock.
    Internal,
}

impl Reason {
    /// The CamelCase condition reason.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::CredentialsMissing => "CredentialsMissing",
            Reason::CredentialsInvalid => "CredentialsInvalid",
            Reason::ArrayUnreachable => "ArrayUnreachable",
            Reason::ArrayWriteFailed => "ArrayWriteFailed",
            Reason::Conflict => "Conflict",
            Reason::TenantKubeconfigMissing => "TenantKubeconfigMissing",
            Reason::ClusterApplyFailed => "ClusterApplyFailed",
            Reason::Internal => "Internal",
        }
    }
}

/// A failed reconcile; retried with exponential backoff by the controller.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}: {message}", reason.as_str())]
pub struct Error {
    /// Why.
    pub reason: Reason,
    /// What, naming the object (and request id where the array gave one).
    pub message: String,
}

impl Error {
    /// An error with `reason`.
    pub fn new(reason: Reason, message: impl Into<String>) -> Self {
        Error {
            reason,
            message: message.into(),
        }
    }

    /// An array error, with its request id when it has one.
    pub fn array(reason: Reason, context: &str, e: &flasharray::Error) -> Self {
        Error::new(
            reason,
            with_request_id(&format!("{context}: {e}"), e.request_id()),
        )
    }

    /// A change the array refused or lost (`ArrayWriteFailed`): `context: <change>
    /// failed: <error>`, with its request id.
    pub fn write_failed(context: &str, f: &px_topology::FailedChange) -> Self {
        Error::new(
            Reason::ArrayWriteFailed,
            with_request_id(
                &format!("{context}: {} failed: {}", f.change.to_line(), f.error),
                f.request_id.as_deref(),
            ),
        )
    }
}

/// `message (request id X)` unless the message already names it.
pub(crate) fn with_request_id(message: &str, request_id: Option<&str>) -> String {
    match request_id {
        Some(id) if !message.contains(id) => format!("{message} (request id {id})"),
        _ => message.to_string(),
    }
}
