//! Exit codes, decided in one place.
//!
//! Scripts branch on these, so they are a contract, the same for every command
//! (docs/cli.md, "Exit codes"): 0 success, 1 error, 2 usage or invalid input detected
//! before anything was sent, 3 the command looked and found something (`status`
//! problems, `doctor` warnings, `plan --detailed-exitcode` changes), 4 `apply` (or
//! `destroy`, `orphans --cleanup`) finished with some changes failed, 130 interrupted
//! by Ctrl-C.

use std::process::ExitCode;

/// How a command that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Everything done.
    Success,
    /// The command looked and found something: `status` problems, `doctor` warnings
    /// or unknowns, `plan --detailed-exitcode` changes.
    Found,
    /// `apply` finished, but some changes failed.
    PartialFailure,
    /// Ctrl-C ended the command (128 + SIGINT, as shells report it).
    Interrupted,
}

impl Outcome {
    /// The process exit code.
    pub(crate) fn code(self) -> u8 {
        match self {
            Outcome::Success => 0,
            Outcome::Found => 3,
            Outcome::PartialFailure => 4,
            Outcome::Interrupted => 130,
        }
    }
}

impl From<Outcome> for ExitCode {
    fn from(o: Outcome) -> Self {
        ExitCode::from(o.code())
    }
}

/// The user's input is wrong (a name, a size, a flag combination, a spec field), and
/// nothing was sent to the array. Exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct InvalidInput(pub(crate) String);

impl InvalidInput {
    /// An invalid-input error with this message.
    pub(crate) fn error(msg: impl Into<String>) -> anyhow::Error {
        anyhow::Error::new(InvalidInput(msg.into()))
    }
}

/// The exit code for a failed command: 2 when an error in the chain is typed as the
/// user's input being invalid before anything was sent, else 1.
pub(crate) fn code_for(err: &anyhow::Error) -> u8 {
    let invalid = err.chain().any(|cause| {
        cause.is::<InvalidInput>()
            || cause.is::<flasharray::name::NameError>()
            || cause.is::<flasharray::size::SizeError>()
            || cause.is::<px_topology::spec::SpecError>()
            || cause.is::<px_topology::spec::SpecErrors>()
            || cause.is::<px_topology::TenantError>()
            || cause.is::<px_topology::LintError>()
            || cause
                .downcast_ref::<px_topology::RenderError>()
                .is_some_and(px_topology::RenderError::is_invalid_input)
            || cause
                .downcast_ref::<flasharray::Error>()
                .is_some_and(flasharray::Error::is_invalid_input)
            || cause
                .downcast_ref::<px_cluster::Error>()
                .is_some_and(px_cluster::Error::is_invalid_input)
    });
    if invalid { 2 } else { 1 }
}

/// A next step for errors whose fix is not obvious from the message. Only the
/// array's own errors get array hints: a Kubernetes API server that does not answer
/// is not the array.
pub(crate) fn hint_for(err: &anyhow::Error) -> Option<&'static str> {
    let array_errors = || {
        err.chain()
            .filter_map(|c| c.downcast_ref::<flasharray::Error>())
    };
    use flasharray::TransportErrorKind as K;
    let transport_kind = array_errors().find_map(|e| match last_attempt(e) {
        flasharray::Error::Transport(t) => Some(t.kind),
        _ => None,
    });
    if transport_kind == Some(K::UntrustedCertificate) {
        return Some(
            "the array's TLS certificate is not trusted: pass --ca-file with the CA bundle that signed it \
             (for `pxfa sim serve`, the file written by --cert-out)",
        );
    }
    if array_errors().any(|e| e.kind() == flasharray::ErrorKind::Unauthorized) {
        return Some(
            "the array refused the credential: check the API token (--api-token-file / PUREFA_API / pure.json) and that it has not expired, or the API client (--client-id, --key-id, --issuer, --username, the key; enabled on the array)",
        );
    }
    if array_errors().any(|e| e.kind() == flasharray::ErrorKind::AlreadyExists) {
        return Some(
            "an object of that name is already on the array (names are case-insensitive; a destroyed \
             volume or pod counts until eradicated): choose another name, or look at it with \
             `pxfa KIND list NAME` (--destroyed for a destroyed one) and change or recover it instead",
        );
    }
    if transport_kind == Some(K::Dns) {
        return Some(
            "the array's name does not resolve: check --array / PUREFA_URL and the DNS settings",
        );
    }
    if matches!(transport_kind, Some(K::Timeout | K::Connect)) {
        return Some(
            "the array did not answer: check the address (--array, PUREFA_URL) and the network path",
        );
    }
    None
}

/// The error of the last attempt, when the client gave up retrying.
fn last_attempt(e: &flasharray::Error) -> &flasharray::Error {
    match e {
        flasharray::Error::RetriesExhausted { last, .. } => last_attempt(last),
        other => other,
    }
}

/// True when the error is only stdout being closed early (`pxfa volume list | head`),
/// which is not a failure.
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_names_and_sizes_exit_2() {
        let e = anyhow::Error::new("a b".parse::<flasharray::VolumeName>().unwrap_err());
        assert_eq!(code_for(&e.context("creating volumes")), 2);
        let e = anyhow::Error::new(flasharray::Size::parse_volume("10 parsecs").unwrap_err());
        assert_eq!(code_for(&e), 2);
        assert_eq!(code_for(&InvalidInput::error("bad")), 2);
    }

    #[test]
    fn array_errors_exit_1() {
        let e = anyhow::Error::new(flasharray::Error::api(
            400,
            Some("v1"),
            "Volume already exists.",
        ));
        assert_eq!(code_for(&e), 1);
        assert_eq!(code_for(&anyhow::anyhow!("connection refused")), 1);
    }

    fn transport(message: &str, kind: flasharray::TransportErrorKind) -> anyhow::Error {
        anyhow::Error::new(flasharray::Error::from(flasharray::error::TransportError {
            operation: "GET /api/api_version".into(),
            request_id: None,
            message: message.into(),
            maybe_applied: false,
            kind,
        }))
        .context("cannot open the array")
    }

    #[test]
    fn hints() {
        use flasharray::TransportErrorKind as K;
        let e = transport(
            "invalid peer certificate: UnknownIssuer",
            K::UntrustedCertificate,
        );
        assert!(hint_for(&e).unwrap().contains("--ca-file"));
        let e = anyhow::Error::new(flasharray::Error::api(401, None, "Invalid credentials"));
        assert!(hint_for(&e).unwrap().contains("API token"));
        let e = transport("tcp connect error: Connection refused", K::Connect);
        assert!(hint_for(&e).unwrap().contains("did not answer"));
        assert!(hint_for(&transport("operation timed out", K::Timeout)).is_some());
        let dns = hint_for(&transport("dns error: no such host", K::Dns)).unwrap();
        assert!(
            dns.contains("does not resolve") && dns.contains("PUREFA_URL"),
            "{dns}"
        );
        // A connection that broke mid-answer is no addressing problem.
        assert!(hint_for(&transport("connection reset", K::Io)).is_none());
        assert!(hint_for(&anyhow::anyhow!("volume v1 does not exist")).is_none());
        // A Kubernetes API server that does not answer is not the array.
        assert!(hint_for(&anyhow::anyhow!("kube: connection refused")).is_none());
    }

    #[test]
    fn typed_library_errors_choose_the_code() {
        let e = anyhow::Error::new(px_cluster::Error::InvalidOptions("same user".into()));
        assert_eq!(code_for(&e), 2);
        let e = anyhow::Error::new(px_cluster::Error::State("VMs disagree".into()));
        assert_eq!(code_for(&e), 1);
        let e =
            px_topology::Tenant::load(std::path::Path::new("/nonexistent/spec.yaml")).unwrap_err();
        assert_eq!(code_for(&anyhow::Error::new(e)), 2);
    }

    #[test]
    fn outcomes() {
        assert_eq!(Outcome::Success.code(), 0);
        assert_eq!(Outcome::Found.code(), 3);
        assert_eq!(Outcome::PartialFailure.code(), 4);
    }
}
