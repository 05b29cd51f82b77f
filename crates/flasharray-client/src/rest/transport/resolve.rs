//! Name resolution with a verdict: whether a failure can pass by waiting.
//!
//! reqwest's default resolver reports every failure as the same opaque "dns error",
//! so a name that does not exist was retried like a refused connection (about 45 s
//! of backoff). This resolver runs the system lookup (`getaddrinfo`, through
//! `tokio::net::lookup_host`), retries a temporary failure (`EAI_AGAIN`) once after
//! 250 ms, and returns a typed [`DnsError`] that the transport finds in the cause
//! chain: a DNS failure is then final at once.

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Wait before the one retry of a temporary failure.
const TEMPORARY_RETRY_AFTER: Duration = Duration::from_millis(250);

/// A failed lookup of the array's name.
#[derive(Debug, thiserror::Error)]
#[error("cannot resolve {host}: {message}")]
pub(crate) struct DnsError {
    host: String,
    message: String,
    /// The name does not exist (NXDOMAIN, `EAI_NONAME`, `EAI_NODATA`) rather than
    /// the resolver being unreachable for a moment.
    pub(crate) permanent: bool,
}

/// The system resolver, with typed errors.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs = match lookup(&host).await {
                Err(e) if !e.permanent => {
                    tokio::time::sleep(TEMPORARY_RETRY_AFTER).await;
                    lookup(&host).await?
                }
                other => other?,
            };
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

async fn lookup(host: &str) -> Result<Vec<SocketAddr>, DnsError> {
    // The port is replaced by the connector; 0 is a placeholder.
    match tokio::net::lookup_host((host, 0)).await {
        Ok(it) => {
            let addrs: Vec<SocketAddr> = it.collect();
            if addrs.is_empty() {
                Err(DnsError {
                    host: host.to_string(),
                    message: "no address".into(),
                    permanent: true,
                })
            } else {
                Ok(addrs)
            }
        }
        Err(e) => {
            let message = e.to_string();
            Err(DnsError {
                host: host.to_string(),
                permanent: !is_temporary(&message),
                message,
            })
        }
    }
}

/// std reports `getaddrinfo` failures only as text (`gai_strerror`); `EAI_AGAIN` reads
/// "Temporary failure in name resolution" (glibc, musl) or "... try again" (BSD).
fn is_temporary(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("temporary failure") || m.contains("try again")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_and_permanent_messages() {
        assert!(is_temporary(
            "failed to lookup address information: Temporary failure in name resolution"
        ));
        assert!(!is_temporary(
            "failed to lookup address information: Name or service not known"
        ));
        assert!(!is_temporary(
            "failed to lookup address information: No address associated with hostname"
        ));
    }

    #[tokio::test]
    async fn loopback_resolves_and_invalid_tld_fails_typed() {
        let addrs = lookup("localhost").await.unwrap();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
        let e = lookup("no-such-name.invalid").await.unwrap_err();
        assert!(e.to_string().contains("no-such-name.invalid"), "{e}");
    }
}
