//! Leader election on a `coordination.k8s.io/v1` Lease, as client-go does it: so that
//! two replicas never reconcile at once.
//!
//! Every write carries the Lease's `resourceVersion`, so of two replicas racing for
//! the same Lease the API server lets exactly one win (the other gets 409). A
//! candidate takes a Lease over only when its record (holder, renew time, version)
//! has not changed for `leaseDurationSeconds` *as measured on the candidate's own
//! clock* since it first saw that record, so clock skew between nodes cannot shorten
//! a lease. The leader renews every `retry_period` and gives up (stops reconciling)
//! once it could not renew for `renew_deadline`, which is shorter than the lease
//! duration: it stops before anyone else may start.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};

/// Where the Lease is and how long it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseConfig {
    /// Namespace of the Lease (the controller's own).
    pub namespace: String,
    /// Name of the Lease.
    pub name: String,
    /// This replica's identity (its pod name).
    pub identity: String,
    /// How long a lease holds without renewal before another replica may take it.
    pub lease_duration: Duration,
    /// How long the leader keeps reconciling without a successful renewal.
    pub renew_deadline: Duration,
    /// How often the leader renews and a standby retries.
    pub retry_period: Duration,
}

impl LeaseConfig {
    /// client-go's defaults (15 s / 10 s / 2 s) for `identity`.
    pub fn new(namespace: &str, name: &str, identity: &str) -> Self {
        LeaseConfig {
            namespace: namespace.to_string(),
            name: name.to_string(),
            identity: identity.to_string(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }

    /// The first problem with the durations, if any: the leader must give up before
    /// its lease can expire, and retry several times within the deadline.
    pub fn check(&self) -> Result<(), String> {
        if self.renew_deadline >= self.lease_duration {
            return Err("the renew deadline must be shorter than the lease duration".into());
        }
        if self.retry_period >= self.renew_deadline {
            return Err("the retry period must be shorter than the renew deadline".into());
        }
        if self.lease_duration.as_secs() < 1 {
            return Err("the lease duration must be at least 1s".into());
        }
        Ok(())
    }
}

/// What one attempt found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// This replica holds the Lease (acquired or renewed just now).
    Leading,
    /// Another replica holds it (its identity).
    Standby(String),
}

/// The record a candidate watches for change.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    holder: String,
    renew: Option<String>,
    version: Option<String>,
}

/// One replica's view of the Lease.
pub(crate) struct Elector {
    api: Api<Lease>,
    cfg: LeaseConfig,
    observed: Option<(Record, Instant)>,
}

fn micro_now() -> MicroTime {
    MicroTime(Timestamp::now())
}

fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

impl Elector {
    /// An elector for `cfg` through `client`.
    pub(crate) fn new(client: kube::Client, cfg: LeaseConfig) -> Self {
        Elector {
            api: Api::namespaced(client, &cfg.namespace),
            cfg,
            observed: None,
        }
    }

    /// The configuration.
    pub(crate) fn config(&self) -> &LeaseConfig {
        &self.cfg
    }

    fn duration_secs(&self) -> i32 {
        i32::try_from(self.cfg.lease_duration.as_secs().max(1)).unwrap_or(i32::MAX)
    }

    /// Acquires, renews or observes the Lease once. A lost write race is `Standby`,
    /// not an error; errors are the API server's (the caller decides from its
    /// deadline whether they cost the lease).
    pub(crate) async fn try_acquire_or_renew(&mut self) -> Result<Attempt, kube::Error> {
        let me = self.cfg.identity.clone();
        let Some(lease) = self.api.get_opt(&self.cfg.name).await? else {
            let now = micro_now();
            let fresh = Lease {
                metadata: ObjectMeta {
                    name: Some(self.cfg.name.clone()),
                    namespace: Some(self.cfg.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(me.clone()),
                    lease_duration_seconds: Some(self.duration_secs()),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return match self.api.create(&PostParams::default(), &fresh).await {
                Ok(_) => Ok(Attempt::Leading),
                Err(e) if is_conflict(&e) => Ok(Attempt::Standby(String::new())),
                Err(e) => Err(e),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().unwrap_or_default();
        let record = Record {
            holder: holder.clone(),
            renew: spec.renew_time.as_ref().map(|t| t.0.to_string()),
            version: lease.metadata.resource_version.clone(),
        };
        if holder != me && !holder.is_empty() {
            let seen_at = match &self.observed {
                Some((r, at)) if *r == record => *at,
                _ => {
                    self.observed = Some((record, Instant::now()));
                    Instant::now()
                }
            };
            let their = spec
                .lease_duration_seconds
                .and_then(|s| u64::try_from(s).ok())
                .map(Duration::from_secs)
                .unwrap_or(self.cfg.lease_duration);
            if seen_at.elapsed() < their {
                return Ok(Attempt::Standby(holder));
            }
        }
        let now = micro_now();
        let taking_over = holder != me;
        let mut next = lease;
        let s = next.spec.get_or_insert_with(LeaseSpec::default);
        s.lease_duration_seconds = Some(self.duration_secs());
        s.renew_time = Some(now.clone());
        if taking_over {
            s.holder_identity = Some(me);
            s.acquire_time = Some(now);
            s.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
        }
        match self
            .api
            .replace(&self.cfg.name, &PostParams::default(), &next)
            .await
        {
            Ok(_) => {
                self.observed = None;
                Ok(Attempt::Leading)
            }
            Err(e) if is_conflict(&e) => Ok(Attempt::Standby(holder)),
            Err(e) => Err(e),
        }
    }

    /// Gives the Lease up (empty holder) so a standby takes over at once instead of
    /// after the lease duration. Only if this replica still holds it.
    pub(crate) async fn release(&self) -> Result<(), kube::Error> {
        let Some(mut lease) = self.api.get_opt(&self.cfg.name).await? else {
            return Ok(());
        };
        let s = lease.spec.get_or_insert_with(LeaseSpec::default);
        if s.holder_identity.as_deref() != Some(self.cfg.identity.as_str()) {
            return Ok(());
        }
        s.holder_identity = None;
        s.lease_duration_seconds = Some(1);
        s.renew_time = Some(micro_now());
        match self
            .api
            .replace(&self.cfg.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if is_conflict(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_must_nest() {
        let mut c = LeaseConfig::new("ns", "l", "me");
        assert_eq!(c.check(), Ok(()));
        c.renew_deadline = c.lease_duration;
        assert!(c.check().is_err());
        c.renew_deadline = Duration::from_secs(5);
        c.retry_period = Duration::from_secs(5);
        assert!(c.check().is_err());
    }
}
