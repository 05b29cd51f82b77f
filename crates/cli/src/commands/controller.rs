//! `pxfa controller run`: the TenantStorage controller in the foreground. The work
//! is in [`px_controller`]; this is options, the shutdown signal and one line of
//! output.

use anyhow::{Context as _, Result};
use px_cluster::WaitOptions;
use px_controller::{
    ArrayPool, Backoff, Endpoints, LeaseConfig, Metrics, NamespaceReferences, Options,
    RestConnector,
};

use crate::args::ControllerRunArgs;
use crate::exit::Outcome;
use crate::output::Printer;

/// Runs until Ctrl-C or SIGTERM.
pub(crate) async fn run(a: &ControllerRunArgs, p: &Printer) -> Result<Outcome> {
    // Bad flags exit 2 before anything is contacted.
    let references = NamespaceReferences::parse(&a.allow_namespace_reference).map_err(|m| {
        crate::exit::InvalidInput::error(format!("--allow-namespace-reference: {m}"))
    })?;
    let identity = match &a.identity {
        Some(i) => i.clone(),
        None => hostname(),
    };
    let leader = if a.leader_elect {
        let lease = LeaseConfig {
            lease_duration: a.lease_duration,
            renew_deadline: a.renew_deadline,
            retry_period: a.retry_period,
            ..LeaseConfig::new(&a.lease_namespace, &a.lease_name, &identity)
        };
        lease.check().map_err(|m| {
            crate::exit::InvalidInput::error(format!(
                "--lease-duration/--renew-deadline/--retry-period: {m}"
            ))
        })?;
        Some(lease)
    } else {
        None
    };
    let client = px_controller::connect_management(a.kubeconfig.as_deref(), a.context.as_deref())
        .await
        .context("cannot connect to the management cluster")?;
    let metrics = std::sync::Arc::new(Metrics::new());
    let connector = RestConnector::with_page_size(a.listing_page_size);
    let ctx = px_controller::context(
        client,
        ArrayPool::new(Box::new(connector), a.per_array as usize, metrics)
            .with_listing_interval(a.listing_interval),
        WaitOptions {
            timeout: a.wait_timeout,
            ..WaitOptions::default()
        },
        a.drift_interval,
        &identity,
        a.lease_duration,
        references,
    );
    let endpoints = Endpoints::bind(a.metrics_address, ctx.health.clone(), ctx.metrics.clone())
        .await
        .with_context(|| format!("cannot listen on --metrics-address {}", a.metrics_address))?;
    let opts = Options {
        concurrency: a.concurrency,
        backoff: Backoff::default(),
        namespace: a.namespace.clone(),
        leader,
        orphan_counts: a.orphan_counts,
        ..Options::default()
    };
    p.info(format!(
        "controller {identity}: watching TenantStorage in {}{}; /healthz, /readyz, /metrics on {}",
        a.namespace.as_deref().unwrap_or("all namespaces"),
        if a.leader_elect {
            format!(
                " while holding Lease {}/{}",
                a.lease_namespace, a.lease_name
            )
        } else {
            String::new()
        },
        a.metrics_address
    ));
    let (stop_endpoints, endpoints_stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(endpoints.serve(async {
        let _ = endpoints_stopped.await;
    }));
    px_controller::run(ctx, opts, async {
        let why = super::sim::wait_for_shutdown()
            .await
            .unwrap_or("signal error");
        tracing::info!(why, "controller: shutting down");
    })
    .await;
    let _ = stop_endpoints.send(());
    let _ = server.await;
    Ok(Outcome::Success)
}

/// The host name (a pod's name when `POD_NAME` is not set), else `pxfa-controller`.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "pxfa-controller".to_string())
}
