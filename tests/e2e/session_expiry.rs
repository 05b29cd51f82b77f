//! Issue #13 §4: an array that ends sessions every few requests. A 16-worker
//! direct-access tenant is converged (cold, then again) at concurrency 8 through the
//! HTTPS simulator with `expire_sessions_every = N`; every expiry must cost exactly
//! one shared re-login, never one per refused call.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use flasharray::RestArray;
use flasharray_mock::MockArray;
use flasharray_sim::{SimConfig, Simulator};
use px_topology::{ApplyOptions, ArrayOnly, PlanOptions, Site, Tenant};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};

use crate::harness::direct_access_spec;

const TOKEN: &str = "pxfa-e2e-expiry-token";

/// Counts the client's debug events: logins made, and refusals whose reason is the
/// simulator's "Session expired." (the request the expiry fault hit).
#[derive(Default, Clone)]
struct Counts {
    logins: Arc<AtomicUsize>,
    expiries: Arc<AtomicUsize>,
    refusals: Arc<AtomicUsize>,
}

#[derive(Default)]
struct Fields {
    message: String,
    reason: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "reason" {
            self.reason = value.to_string();
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "reason" => self.reason = format!("{value:?}").trim_matches('"').to_string(),
            _ => {}
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Counts {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if !event.metadata().target().starts_with("flasharray") {
            return;
        }
        let mut f = Fields::default();
        event.record(&mut f);
        match f.message.as_str() {
            "logged in" => {
                self.logins.fetch_add(1, Ordering::SeqCst);
            }
            "session refused" => {
                self.refusals.fetch_add(1, Ordering::SeqCst);
                if f.reason == "Session expired." {
                    self.expiries.fetch_add(1, Ordering::SeqCst);
                }
            }
            _ => {}
        }
    }
}

fn tenant_with_workers(dir: &std::path::Path, workers: usize) -> Tenant {
    let spec = std::fs::read_to_string(direct_access_spec()).unwrap();
    let spec = spec.replace("    replicas: 3\n", &format!("    replicas: {workers}\n"));
    assert!(spec.contains(&format!("replicas: {workers}")));
    let path = dir.join("tenant.yaml");
    std::fs::write(&path, spec).unwrap();
    Tenant::load(&path).unwrap()
}

async fn converge_with_expiry_every(n: u64) {
    let counts = Counts::default();
    let subscriber = tracing_subscriber::registry()
        .with(counts.clone())
        .with(tracing_subscriber::filter::LevelFilter::DEBUG);
    // A current-thread runtime: every task of the test runs under this subscriber.
    let _guard = tracing::subscriber::set_default(subscriber);

    let dir = tempfile::tempdir().unwrap();
    let tenant = tenant_with_workers(dir.path(), 16);
    let mut mock = MockArray::builder();
    for user in tenant.token_users() {
        mock = mock.admin(user);
    }
    let mock = mock.build();
    mock.faults().set_latency(Duration::from_millis(20));
    let cfg = SimConfig {
        expire_sessions_every: Some(n),
        ..SimConfig::new(TOKEN.into())
    };
    let sim = Simulator::start(mock.clone(), cfg).await.unwrap();
    let array = RestArray::builder(sim.url())
        .api_token(TOKEN.into())
        .ca_pem(sim.cert_pem().as_bytes().to_vec())
        .build()
        .unwrap();
    let opts = ApplyOptions {
        concurrency: 8,
        ..ApplyOptions::default()
    };
    for run in ["cold", "again"] {
        let applied = tenant
            .observe(Site::array(&array))
            .await
            .unwrap_or_else(|e| panic!("N={n} {run}: observe failed: {e}"))
            .plan(&PlanOptions::default())
            .apply(&ArrayOnly, opts.clone(), &|_| {})
            .await
            .unwrap_or_else(|e| panic!("N={n} {run}: apply refused: {e}"));
        let report = applied.report();
        assert!(
            report.failed.is_empty() && report.skipped.is_empty(),
            "N={n} {run}: {} failed, {} skipped: {:?}",
            report.failed.len(),
            report.skipped.len(),
            report
                .failed
                .iter()
                .map(|f| f.error.as_str())
                .collect::<Vec<_>>()
        );
        if run == "cold" {
            assert!(
                !report.applied.is_empty(),
                "N={n}: the cold run changed nothing"
            );
        } else {
            assert!(
                report.applied.is_empty(),
                "N={n}: the second run changed things"
            );
        }
    }
    let logins = counts.logins.load(Ordering::SeqCst);
    let expiries = counts.expiries.load(Ordering::SeqCst);
    let refusals = counts.refusals.load(Ordering::SeqCst);
    assert!(expiries > 0, "N={n}: the fault never fired");
    assert!(
        logins <= expiries + 1,
        "N={n}: {logins} logins for {expiries} expiries ({refusals} refused calls): re-logins are not shared"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn expiry_every_2() {
    converge_with_expiry_every(2).await;
}

#[tokio::test]
async fn expiry_every_3() {
    converge_with_expiry_every(3).await;
}

#[tokio::test]
async fn expiry_every_4() {
    converge_with_expiry_every(4).await;
}
