//! Everything `apply` (and `destroy`) checks before the first write, reported all at
//! once: the kubeconfigs and contexts, the spec's `array.endpoint` against the array
//! being written, where a new token would go, and (from px-topology's
//! [`px_topology::preflight`]) free space and pod quotas.
//!
//! Findings about the input exit 2, findings about the array exit 1; either way
//! nothing was changed.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Result;
use url::Url;

use crate::exit::InvalidInput;

/// How long `apply --kubeconfig` waits for the site's facts.
const SITE_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// How long resolving the two endpoint names may take together.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(3);

/// The findings of one preflight.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    /// Wrong input (a file, a context, a flag): exit 2.
    input: Vec<String>,
    /// The array cannot take the plan: exit 1.
    array: Vec<String>,
}

impl Findings {
    /// Adds a finding about the input.
    pub(crate) fn input(&mut self, msg: impl Into<String>) {
        self.input.push(msg.into());
    }

    /// Adds a finding about the array.
    pub(crate) fn array(&mut self, msg: impl Into<String>) {
        self.array.push(msg.into());
    }

    /// Every finding, input first (for `plan`, which only warns).
    pub(crate) fn messages(self) -> Vec<String> {
        self.input.into_iter().chain(self.array).collect()
    }

    /// `Ok` when there is nothing to report; else one error naming every finding,
    /// typed as invalid input when any finding is about the input.
    pub(crate) fn refuse(self) -> Result<()> {
        let all: Vec<&String> = self.input.iter().chain(&self.array).collect();
        if all.is_empty() {
            return Ok(());
        }
        let list = all
            .iter()
            .map(|m| format!("  - {m}"))
            .collect::<Vec<_>>()
            .join("\n");
        let msg = format!(
            "preflight found {} problem(s); nothing was changed:\n{list}",
            all.len()
        );
        if self.input.is_empty() {
            Err(anyhow::anyhow!(msg))
        } else {
            Err(InvalidInput::error(msg))
        }
    }
}

/// `apply --kubeconfig`: the tenant with the management cluster's site facts in
/// place of the spec's unstated defaults (`px_topology::site::resolve`), read before
/// the array is opened; a spec field the site contradicts is refused here (exit 2),
/// so nothing is written. `management` is the client of `--kubeconfig` when it loaded;
/// one that did not is refused by the preflight with the precise reason
/// (`commands::kube_clients`).
pub(crate) async fn site_resolved(
    t: px_topology::Tenant,
    management: Option<&px_cluster::Client>,
    spec_path: &std::path::Path,
    p: &crate::output::Printer,
) -> Result<px_topology::Tenant> {
    let Some(client) = management else {
        return Ok(t);
    };
    // A cluster that does not answer leaves the spec's statements in place; the apply
    // itself then reports the cluster.
    let Ok(facts) = tokio::time::timeout(
        SITE_READ_TIMEOUT,
        px_cluster::read_site_facts(client, &t.spec),
    )
    .await
    else {
        p.warn(format!(
            "the management cluster did not answer within {} s: the spec's statements about the site are used",
            SITE_READ_TIMEOUT.as_secs()
        ));
        return Ok(t);
    };
    let resolved = px_topology::site::resolve_tenant(&t, &facts, spec_path)
        .map_err(|e| InvalidInput::error(format!("{e}; nothing was changed")))?;
    let m = &resolved.spec.spec.management;
    p.info(format!(
        "site facts from the management cluster: hotplug gate {:?}, FA/FB driver {}, uplink MTU {}, whereabouts reconciler {}",
        m.hotplug_gate,
        facts.fa_fb_driver.map_or("unknown".to_string(), |d| d.to_string()),
        facts.uplink_mtu.map_or("unknown".to_string(), |d| d.to_string()),
        facts.whereabouts_reconciler.map_or("unknown".to_string(), |d| d.to_string()),
    ));
    Ok(resolved)
}

/// Compares the spec's `array.endpoint` (what Portworx will use) with the array
/// being written. Same host and port pass; different names on the same port pass when
/// they resolve to a shared address. Returns a note to show when they matched through resolution.
pub(crate) async fn endpoint(
    spec_endpoint: Option<&str>,
    target: Option<&Url>,
    allow_mismatch: bool,
    f: &mut Findings,
) -> Option<String> {
    let (Some(ep), Some(target)) = (spec_endpoint, target) else {
        tracing::debug!("no spec array.endpoint or no REST target: endpoint not compared");
        return None;
    };
    let shown = format!(
        "https://{}:{}",
        target.host_str().unwrap_or_default(),
        target.port_or_known_default().unwrap_or(443)
    );
    let Some((want_host, want_port)) = host_port(ep) else {
        f.input(format!(
            "spec array.endpoint {ep:?} is not a host[:port] (what Portworx will use)"
        ));
        return None;
    };
    let (Some(host), Some(port)) = (
        target.host_str().map(str::to_ascii_lowercase),
        target.port_or_known_default(),
    ) else {
        return None;
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    if want_host == host && want_port == port {
        return None;
    }
    if want_port == port
        && let Some(true) = same_addresses(&want_host, &host, port).await
    {
        return Some(format!(
            "spec array.endpoint {ep} and {shown} resolve to the same addresses"
        ));
    }
    if allow_mismatch {
        return Some(format!(
            "spec array.endpoint {ep} (what Portworx will use) is not {shown}; going on (--allow-endpoint-mismatch)"
        ));
    }
    f.input(format!(
        "spec array.endpoint {ep} (what Portworx will use) is not the array being written ({shown}); \
         pass --allow-endpoint-mismatch if both name the same array"
    ));
    None
}

/// `host[:port]`, with or without `https://`, lower-cased; port 443 by default.
fn host_port(endpoint: &str) -> Option<(String, u16)> {
    let text = if endpoint.contains("://") {
        endpoint.to_string()
    } else {
        format!("https://{endpoint}")
    };
    let u = Url::parse(&text).ok()?;
    let host = u
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    Some((host, u.port_or_known_default().unwrap_or(443)))
}

/// Whether the two names share an address (`localhost` is `127.0.0.1` and `::1`);
/// `None` when either does not resolve in time.
async fn same_addresses(a: &str, b: &str, port: u16) -> Option<bool> {
    let resolve = |h: String| async move {
        tokio::net::lookup_host((h.as_str(), port))
            .await
            .ok()
            .map(|addrs| addrs.map(|s: SocketAddr| s.ip()).collect::<BTreeSet<_>>())
    };
    let both = tokio::time::timeout(RESOLVE_TIMEOUT, async {
        tokio::join!(resolve(a.to_string()), resolve(b.to_string()))
    })
    .await
    .ok()?;
    match both {
        (Some(x), Some(y)) => Some(!x.is_disjoint(&y)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_with_default_port() {
        assert_eq!(host_port("FA1.example"), Some(("fa1.example".into(), 443)));
        assert_eq!(host_port("https://fa1:8443"), Some(("fa1".into(), 8443)));
        assert_eq!(host_port("10.0.0.5"), Some(("10.0.0.5".into(), 443)));
        assert_eq!(host_port("[::1]:444"), Some(("::1".into(), 444)));
    }

    #[tokio::test]
    async fn mismatch_is_refused_unless_allowed() {
        let target = Url::parse("https://127.0.0.1:8443").unwrap();
        let mut f = Findings::default();
        assert!(
            endpoint(Some("127.0.0.1:8443"), Some(&target), false, &mut f)
                .await
                .is_none()
        );
        assert!(f.input.is_empty());
        endpoint(Some("fa-other.invalid"), Some(&target), false, &mut f).await;
        assert_eq!(f.input.len(), 1);
        assert!(
            f.input[0].contains("--allow-endpoint-mismatch"),
            "{}",
            f.input[0]
        );
        let e = f.refuse().unwrap_err();
        assert_eq!(crate::exit::code_for(&e), 2);

        let mut f = Findings::default();
        let note = endpoint(Some("fa-other.invalid"), Some(&target), true, &mut f).await;
        assert!(f.input.is_empty() && note.is_some());
        // Another port on the same host is another array.
        endpoint(Some("127.0.0.1"), Some(&target), false, &mut f).await;
        assert_eq!(f.input.len(), 1);
    }

    #[tokio::test]
    async fn the_same_addresses_pass() {
        let target = Url::parse("https://127.0.0.1:8443").unwrap();
        let mut f = Findings::default();
        let note = endpoint(Some("localhost:8443"), Some(&target), false, &mut f).await;
        assert!(f.input.is_empty(), "{:?}", f.input);
        assert!(note.unwrap().contains("same addresses"));
    }

    #[test]
    fn array_findings_exit_1_and_input_findings_2() {
        let mut f = Findings::default();
        f.array("too big");
        let e = f.refuse().unwrap_err();
        assert_eq!(crate::exit::code_for(&e), 1);
        assert!(e.to_string().contains("nothing was changed"));
        let mut f = Findings::default();
        f.array("too big");
        f.input("no such context");
        let e = f.refuse().unwrap_err();
        assert_eq!(crate::exit::code_for(&e), 2);
        assert!(e.to_string().contains("too big") && e.to_string().contains("no such context"));
        assert!(Findings::default().refuse().is_ok());
    }
}
