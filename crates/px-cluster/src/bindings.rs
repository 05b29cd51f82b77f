//! Which of a tenant's drive claims are bound, and to which PersistentVolume: the
//! management cluster's side of px-topology's [`DriveLocator`] seam. With dynamic
//! provisioning the management Portworx creates each drive's array volume when its
//! claim binds; the bound PV's name (the claim's `spec.volumeName`) is what the plan
//! finds the array volume by (`px_topology::is_fada_volume_for`).

use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::Client;
use kube::api::Api;
use px_topology::{Binding, DriveClaim, DriveLocator, LocateError};
use tokio::time::Instant;

use crate::readiness::WaitOptions;

/// Reads the claims on the management cluster.
#[derive(Clone)]
pub struct ClaimBindings {
    client: Client,
}

impl std::fmt::Debug for ClaimBindings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClaimBindings")
    }
}

impl ClaimBindings {
    /// The locator over the management cluster `client` reaches.
    pub fn new(client: Client) -> Self {
        ClaimBindings { client }
    }
}

/// The PV a claim is bound to: its `spec.volumeName` once `status.phase` is
/// `Bound`; `None` before (a claim can name a volume while still `Pending`).
pub(crate) fn bound_volume(pvc: &PersistentVolumeClaim) -> Option<String> {
    let phase = pvc.status.as_ref()?.phase.as_deref()?;
    if phase != "Bound" {
        return None;
    }
    pvc.spec
        .as_ref()?
        .volume_name
        .clone()
        .filter(|v| !v.is_empty())
}

#[async_trait]
impl DriveLocator for ClaimBindings {
    async fn bound(&self, claims: &[DriveClaim]) -> Result<Vec<Binding>, LocateError> {
        let mut out = Vec::new();
        for c in claims {
            let api: Api<PersistentVolumeClaim> =
                Api::namespaced(self.client.clone(), &c.namespace);
            let pvc = api
                .get_opt(&c.name)
                .await
                .map_err(|e| format!("cannot read PersistentVolumeClaim {c}: {e}"))?;
            if let Some(pv) = pvc.as_ref().and_then(bound_volume) {
                out.push(Binding {
                    claim: c.clone(),
                    volume_name: pv,
                });
            }
        }
        Ok(out)
    }
}

/// The outcome of `wait_for_bindings`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BindingWait {
    /// The claims bound when the wait ended.
    pub bound: Vec<Binding>,
    /// The claims still unbound at the deadline.
    pub unbound: Vec<DriveClaim>,
    /// How long the wait took.
    pub waited: Duration,
}

/// Asks `locator` until every claim is bound or `wait.timeout` has passed (one
/// round of reads per `wait.interval`); unbound claims at the deadline are
/// reported, not an error: their drives stay pending and the next apply tags them.
pub(crate) async fn wait_for_bindings(
    locator: &dyn DriveLocator,
    claims: &[DriveClaim],
    wait: WaitOptions,
) -> Result<BindingWait, LocateError> {
    let start = Instant::now();
    loop {
        let bound = locator.bound(claims).await?;
        let unbound: Vec<DriveClaim> = claims
            .iter()
            .filter(|c| !bound.iter().any(|b| &b.claim == *c))
            .cloned()
            .collect();
        let waited = start.elapsed();
        if unbound.is_empty() || waited >= wait.timeout {
            return Ok(BindingWait {
                bound,
                unbound,
                waited,
            });
        }
        tokio::time::sleep(wait.interval.min(wait.timeout.saturating_sub(waited))).await;
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{PersistentVolumeClaimSpec, PersistentVolumeClaimStatus};

    use super::*;

    fn pvc(phase: Option<&str>, volume: Option<&str>) -> PersistentVolumeClaim {
        PersistentVolumeClaim {
            spec: Some(PersistentVolumeClaimSpec {
                volume_name: volume.map(str::to_string),
                ..Default::default()
            }),
            status: phase.map(|p| PersistentVolumeClaimStatus {
                phase: Some(p.to_string()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn bound_claims_map_to_pv_names() {
        assert_eq!(
            bound_volume(&pvc(Some("Bound"), Some("pvc-1"))).as_deref(),
            Some("pvc-1")
        );
        assert_eq!(bound_volume(&pvc(Some("Pending"), Some("pvc-1"))), None);
        assert_eq!(bound_volume(&pvc(Some("Bound"), None)), None);
        assert_eq!(bound_volume(&pvc(Some("Bound"), Some(""))), None);
        assert_eq!(bound_volume(&pvc(None, Some("pvc-1"))), None);
    }

    /// Binds one more claim per call.
    struct Slow(std::sync::Mutex<usize>);

    #[async_trait]
    impl DriveLocator for Slow {
        async fn bound(&self, claims: &[DriveClaim]) -> Result<Vec<Binding>, LocateError> {
            let mut n = self.0.lock().unwrap();
            *n += 1;
            Ok(claims
                .iter()
                .take(*n)
                .map(|c| Binding {
                    claim: c.clone(),
                    volume_name: format!("pvc-{}", c.name),
                })
                .collect())
        }
    }

    fn claims(n: usize) -> Vec<DriveClaim> {
        (0..n)
            .map(|i| DriveClaim {
                namespace: "ns".into(),
                name: format!("c{i}"),
            })
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn the_wait_ends_when_all_bind_or_at_the_deadline() {
        let wait = WaitOptions {
            timeout: Duration::from_secs(60),
            interval: Duration::from_secs(5),
        };
        let done = wait_for_bindings(&Slow(Default::default()), &claims(3), wait)
            .await
            .unwrap();
        assert_eq!((done.bound.len(), done.unbound.len()), (3, 0));
        assert_eq!(done.waited, Duration::from_secs(10));
        let short = WaitOptions {
            timeout: Duration::from_secs(7),
            ..wait
        };
        let part = wait_for_bindings(&Slow(Default::default()), &claims(5), short)
            .await
            .unwrap();
        assert_eq!(part.bound.len(), 3, "reads at 0, 5 and 7 s");
        assert_eq!(part.unbound, claims(5)[3..].to_vec());
    }
}
