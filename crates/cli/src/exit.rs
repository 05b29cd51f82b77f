//! Exit codes, decided in one place.
//!
//! Scripts branch on these, so they are a contract (docs/cli.md): 0 success, 1 error,
//! 2 usage or invalid input detected before anything was sent, 3 `plan
//! --detailed-exitcode` found changes, 4 `apply` finished with some changes failed.

use std::process::ExitCode;

/// How a command that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything done.
    Success,
    /// `plan --detailed-exitcode` found changes.
    Changes,
    /// `apply` finished, but some changes failed.
    PartialFailure,
}

impl Outcome {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Outcome::Success => 0,
            Outcome::Changes => 3,
            Outcome::PartialFailure => 4,
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
pub struct InvalidInput(pub String);

impl InvalidInput {
    /// An invalid-input error with this message.
    pub fn error(msg: impl Into<String>) -> anyhow::Error {
        anyhow::Error::new(InvalidInput(msg.into()))
    }
}

/// The exit code for a failed command: 2 when anything in the error chain says the
/// input was invalid before sending, else 1.
pub fn code_for(err: &anyhow::Error) -> u8 {
    for cause in err.chain() {
        if cause.is::<InvalidInput>()
            || cause.is::<flasharray::name::NameError>()
            || cause.is::<flasharray::size::SizeError>()
            || cause.is::<px_topology::spec::SpecError>()
            || cause.is::<px_topology::spec::SpecErrors>()
        {
            return 2;
        }
        if let Some(e) = cause.downcast_ref::<flasharray::Error>()
            && e.is_invalid_input()
        {
            return 2;
        }
    }
    1
}

/// A next step for errors whose fix is not obvious from the message.
pub fn hint_for(err: &anyhow::Error) -> Option<&'static str> {
    let text = format!("{err:#}").to_ascii_lowercase();
    if text.contains("certificate") || text.contains("unknownissuer") {
        return Some(
            "the array's TLS certificate is not trusted: pass --ca-file with the CA bundle that signed it \
             (for `pxfa sim serve`, the file written by --cert-out)",
        );
    }
    let unauthorized = err.chain().any(|c| {
        c.downcast_ref::<flasharray::Error>()
            .is_some_and(|e| e.kind() == flasharray::ErrorKind::Unauthorized)
    });
    if unauthorized {
        return Some(
            "the array refused the API token: check --api-token-file / PUREFA_API / pure.json, and that the token has not expired",
        );
    }
    if text.contains("connection refused")
        || text.contains("dns error")
        || text.contains("timed out")
    {
        return Some(
            "the array did not answer: check the address (--array, PUREFA_URL) and the network path",
        );
    }
    None
}

/// True when the error is only stdout being closed early (`pxfa volume list | head`),
/// which is not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
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

    #[test]
    fn hints() {
        let e = anyhow::anyhow!("GET /api/api_version: invalid peer certificate: UnknownIssuer");
        assert!(hint_for(&e).unwrap().contains("--ca-file"));
        let e = anyhow::Error::new(flasharray::Error::api(401, None, "Invalid credentials"));
        assert!(hint_for(&e).unwrap().contains("API token"));
        assert!(hint_for(&anyhow::anyhow!("volume v1 does not exist")).is_none());
    }

    #[test]
    fn outcomes() {
        assert_eq!(Outcome::Success.code(), 0);
        assert_eq!(Outcome::Changes.code(), 3);
        assert_eq!(Outcome::PartialFailure.code(), 4);
    }
}
