//! `pxfa controller run`: the TenantStorage controller in the foreground. The work
//! is in [`px_controller`]; this is options, the shutdown signal and one line of
//! output.

use anyhow::{Context as _, Result};
use px_cluster::WaitOptions;
use px_controller::{ArrayPool, Backoff, Options, RestConnector};

use crate::args::ControllerRunArgs;
use crate::exit::Outcome;
use crate::output::Printer;

/// Runs until Ctrl-C or SIGTERM.
pub(crate) async fn run(a: &ControllerRunArgs, p: &Printer) -> Result<Outcome> {
    let client = px_controller::controller::connect_management(
        a.kubeconfig.as_deref(),
        a.context.as_deref(),
    )
    .await
    .context("cannot connect to the management cluster")?;
    let ctx = px_controller::reconcile::context(
        client,
        ArrayPool::new(Box::new(RestConnector), a.per_array as usize),
        WaitOptions {
            timeout: a.wait_timeout,
            ..WaitOptions::default()
        },
        a.drift_interval,
    );
    let opts = Options {
        concurrency: a.concurrency,
        backoff: Backoff::default(),
        namespace: a.namespace.clone(),
        ..Options::default()
    };
    p.info(format!(
        "controller: watching TenantStorage in {}",
        a.namespace.as_deref().unwrap_or("all namespaces")
    ));
    px_controller::run(ctx, opts, async {
        let why = super::sim::wait_for_shutdown()
            .await
            .unwrap_or("signal error");
        tracing::info!(why, "controller: shutting down");
    })
    .await;
    Ok(Outcome::Success)
}
