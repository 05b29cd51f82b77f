//! `pxfa sim serve`: the HTTPS FlashArray simulator as a foreground process.
//!
//! Prints exactly one readiness line on stdout once the port is bound (scripts and
//! tests wait for it), serves until Ctrl-C or SIGTERM, then shuts down cleanly and
//! saves the array's state if `--state` was given.

use anyhow::{Context, Result};
use flasharray_mock::MockArray;
use flasharray_sim::{SimConfig, Simulator, parse_faults};
use secrecy::SecretString;

use crate::args::{GlobalArgs, OutputFormat, SimServeArgs};
use crate::exit::{InvalidInput, Outcome};
use crate::output::Printer;
use crate::session::{SIM_ADMINS, load_sim, lock_sim_state};

/// Runs the simulator until a shutdown signal.
pub(crate) async fn serve(a: &SimServeArgs, g: &GlobalArgs, p: &Printer) -> Result<Outcome> {
    let token_file = g.api_token_file.as_ref().ok_or_else(|| {
        InvalidInput::error(
            "sim serve needs --api-token-file FILE (read if it exists, else a new token is written there)",
        )
    })?;
    if g.array.is_some() || g.pure_json.is_some() {
        p.warn("sim serve serves an array; --array and --pure-json are ignored");
    }
    let faults = match &a.faults {
        Some(s) => parse_faults(s).map_err(|e| InvalidInput::error(format!("--faults: {e}")))?,
        None => Vec::new(),
    };
    let admin_password = a
        .admin_password_file
        .as_deref()
        .map(|f| read_admin_password(f, p))
        .transpose()?;

    let token = if token_file.exists() {
        crate::config::read_token_file(token_file, &mut |w| p.warn(w))?
    } else {
        let t = uuid::Uuid::new_v4().to_string();
        crate::secret_file::write_private(token_file, format!("{t}\n").as_bytes())
            .with_context(|| format!("cannot write the API token to {}", token_file.display()))?;
        p.info(format!(
            "generated a new API token in {} (mode 0600)",
            token_file.display()
        ));
        SecretString::from(t)
    };

    // Held while serving: `--array sim --sim-state` on the same file waits for it.
    let state = a.state.as_deref().map(|s| (s, "--state"));
    let _lock = lock_sim_state(state, p)?;
    let state_exists = a.state.as_ref().is_some_and(|s| s.exists());
    let mock = if state_exists {
        if a.seed_volumes.is_some() {
            p.warn("--seed-volumes is ignored: the array comes from the --state file");
        }
        load_sim(state, a.seed.seed(), p)?
    } else {
        let mut b = MockArray::builder().seed(a.seed.seed());
        for admin in SIM_ADMINS {
            b = b.admin(*admin);
        }
        if let Some(n) = a.seed_volumes {
            b = b.seed_volumes(n);
        }
        b.build()
    };
    if let Some(d) = a.latency {
        mock.faults().set_latency(d);
    }
    if let Some(minor) = g.rest_version {
        mock.set_rest_version(minor);
    }

    // Saved after every change, before the answer: a killed simulator loses nothing.
    let cfg = SimConfig {
        listen: a.listen,
        faults,
        state_file: a.state.clone(),
        admin_password,
        ..SimConfig::new(token)
    };
    let sim = Simulator::start(mock.clone(), cfg)
        .await
        .context("cannot start the simulator")?;
    if let Some(path) = &a.cert_out {
        crate::secret_file::write_replacing(path, sim.cert_pem().as_bytes(), 0o644)
            .with_context(|| format!("cannot write the certificate to {}", path.display()))?;
    }
    let url = sim.url();
    match p.format {
        OutputFormat::Table => p.stdout(&format!("pxfa simulator listening on {url}"))?,
        _ => p.stdout(&serde_json::json!({ "url": url, "ready": true }).to_string())?,
    }
    if let Some(path) = &a.cert_out {
        p.info(format!(
            "certificate in {}; use --array {url} --ca-file {} --api-token-file {}",
            path.display(),
            path.display(),
            token_file.display()
        ));
    }

    let why = wait_for_shutdown().await?;
    p.info(format!("{why}: shutting down"));
    // The shutdown saves the state file one last time.
    sim.shutdown().await;
    if let Some(path) = &a.state {
        p.info(format!("state saved to {}", path.display()));
    }
    Ok(Outcome::Success)
}

/// `pureuser`'s password: the first line of `path`, which must not be empty (an
/// empty password would be a login anyone can make). Read before the simulator
/// starts, so a bad file exits 2 with nothing served and no token file written.
fn read_admin_password(path: &std::path::Path, p: &Printer) -> Result<SecretString> {
    crate::credential_source::warn_if_shared(path, &mut |w| p.warn(w));
    let text = std::fs::read_to_string(path).map_err(|e| {
        InvalidInput::error(format!(
            "--admin-password-file: cannot read {}: {e}",
            path.display()
        ))
    })?;
    let first = text
        .lines()
        .next()
        .unwrap_or_default()
        .trim_end_matches('\r');
    if first.is_empty() {
        return Err(InvalidInput::error(format!(
            "--admin-password-file: the first line of {} is empty; write pureuser's password there",
            path.display()
        )));
    }
    Ok(SecretString::from(first.to_string()))
}

#[cfg(unix)]
pub(crate) async fn wait_for_shutdown() -> Result<&'static str> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => { r.context("cannot listen for Ctrl-C")?; Ok("interrupted") }
        _ = term.recv() => Ok("SIGTERM"),
    }
}

#[cfg(not(unix))]
pub(crate) async fn wait_for_shutdown() -> Result<&'static str> {
    tokio::signal::ctrl_c()
        .await
        .context("cannot listen for Ctrl-C")?;
    Ok("interrupted")
}
