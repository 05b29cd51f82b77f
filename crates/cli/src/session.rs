//! Opening the array a command talks to: the REST client, or an embedded simulated
//! array for `--array sim`.
//!
//! The embedded array lives only as long as the process; `--sim-state FILE` carries
//! its state from one command to the next: loaded at start if the file exists, and
//! saved at the end only when some write changed the array (so `plan`, a refused
//! `apply` or `volume list` leave the file alone), even when the command failed half
//! way or was interrupted: a session dropped without [`Session::close`] (Ctrl-C drops
//! the command's future) saves too.
//!
//! Logging out is off the critical path: a command calls [`Session::end_array_work`]
//! as soon as its last array call has returned (`apply` after converging, before
//! writing manifests or touching clusters; `plan` after observing). That starts
//! `POST /logout` in the background, bounded by [`LOGOUT_BOUND`]; [`Session::close`]
//! at the very end waits for it at most [`LOGOUT_WAIT`], so a slow or stalled array
//! delays the exit by a quarter second at worst, never the work.
//!
//! Either array is handed out inside [`Settling`], the one layer that settles a write
//! whose answer was lost: the session is where a command's array is built, and
//! every write a command makes (converge's, the orphan clean-up's, the token
//! rotation's, the resource commands') goes through it. Nothing below adds a second
//! layer (converge writes through the array it is given), so a write is settled once.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use flasharray::rest::{RestArray, RetryConfig};
use flasharray::{FlashArray, Settling};
use flasharray_mock::MockArray;

use crate::args::GlobalArgs;
use crate::config::{self, RestTarget, Target};
use crate::exit::InvalidInput;
use crate::output::Printer;
use px_topology::files::{self, FileLock, InputKind, LockError};

/// Admin users of the embedded simulated array: the array's default admin and the
/// token owners of the example tenants in `examples/`.
pub(crate) const SIM_ADMINS: &[&str] = &[
    "pureuser",
    "pxfa-tenant-demo",
    "pxfa-tenant-cd",
    "pxfa-tenant-kv",
];

/// The longest a background logout may take before it is given up.
pub(crate) const LOGOUT_BOUND: Duration = Duration::from_secs(2);

/// The longest the process waits for a background logout at exit.
pub(crate) const LOGOUT_WAIT: Duration = Duration::from_millis(250);

/// An open array.
#[derive(Debug)]
pub(crate) struct Session {
    /// The array, real or simulated, inside [`Settling`], so that every write a
    /// command sends (the pipeline's and the resource commands' alike) is settled
    /// once after a lost answer.
    pub(crate) array: Arc<dyn FlashArray>,
    /// What to show in messages (`https://fa1.example` or `embedded simulator`).
    pub(crate) label: String,
    /// The REST array's address; `None` for the embedded simulated array.
    pub(crate) url: Option<url::Url>,
    sim: Option<SimSession>,
    /// The background logout, once [`Session::end_array_work`] started it.
    logout: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

#[derive(Debug)]
struct SimSession {
    mock: MockArray,
    state_file: Option<PathBuf>,
    /// [`MockArray::generation`] when the state was loaded.
    loaded: u64,
    /// Held from the load to the save, so that two processes on one state file
    /// never lose each other's writes. Dropped after the save.
    _lock: Option<FileLock>,
}

impl SimSession {
    /// Saves the state when a write changed the array since it was loaded.
    fn save_if_changed(&self) -> Result<()> {
        match &self.state_file {
            Some(path) if self.mock.generation() != self.loaded => save_sim_state(&self.mock, path),
            _ => Ok(()),
        }
    }
}

impl Session {
    /// Opens the array the global options name. `extra_admins` are added to an
    /// embedded simulated array (tenant commands add the tenant's token user).
    pub(crate) fn open(
        global: &GlobalArgs,
        printer: &Printer,
        extra_admins: &[String],
    ) -> Result<Session> {
        let env = |k: &str| std::env::var(k).ok();
        let target = config::resolve(global, &env, &mut |w| printer.warn(w))?;
        match target {
            Target::Sim => {
                let state = global.sim_state.as_deref().map(|p| (p, "--sim-state"));
                let lock = lock_sim_state(state, printer)?;
                let mock = load_sim(state, global.sim_seed.seed(), printer)?;
                // A new seeded array is a change in itself: keep it even when this
                // first command only reads.
                if global.sim_seed != crate::args::SimSeed::Empty
                    && let Some(path) = global.sim_state.as_deref()
                    && !path.exists()
                {
                    save_sim_state(&mock, path)?;
                }
                for a in extra_admins {
                    mock.add_admin(a);
                }
                if let Some(d) = global.sim_latency {
                    mock.faults().set_latency(d);
                }
                // The embedded array answers as the simulator's newest REST version
                // unless told otherwise, and says which (doctor's rest-version check).
                let newest = flasharray_sim::parse_rest_version(flasharray_sim::TOP_REST_VERSION);
                if let Some(minor) = global.rest_version.or(newest.ok()) {
                    mock.set_rest_version(minor);
                }
                let mut session = Session::simulated(mock, global.sim_state.clone());
                if let Some(sim) = session.sim.as_mut() {
                    sim._lock = lock;
                }
                Ok(session)
            }
            Target::Rest(t) => {
                if global.sim_state.is_some() {
                    printer.warn("--sim-state only applies to --array sim; ignored");
                }
                let url = t.url.clone();
                let array = rest_client(t, global)?;
                Ok(Session {
                    array: settled(array),
                    label: url.as_str().trim_end_matches('/').to_string(),
                    url: Some(url),
                    sim: None,
                    logout: Mutex::new(None),
                })
            }
        }
    }

    /// Names the array in the token journal's file names: `sim` for the embedded
    /// array, else the address's host and port.
    pub(crate) fn array_key(&self) -> String {
        match &self.url {
            None => "sim".to_string(),
            Some(u) => format!(
                "{}_{}",
                u.host_str().unwrap_or("array"),
                u.port_or_known_default().unwrap_or(443)
            ),
        }
    }

    /// A session over an in-process simulated array.
    pub(crate) fn simulated(mock: MockArray, state_file: Option<PathBuf>) -> Session {
        let loaded = mock.generation();
        Session {
            array: settled(mock.clone()),
            label: "embedded simulated array".to_string(),
            url: None,
            sim: Some(SimSession {
                mock,
                state_file,
                loaded,
                _lock: None,
            }),
            logout: Mutex::new(None),
        }
    }

    /// True for the embedded simulated array (`--array sim`), where no cluster
    /// exists and a simulated management Portworx stands in for it.
    pub(crate) fn is_simulated(&self) -> bool {
        self.sim.is_some()
    }

    /// Starts ending the array session in the background (REST: `POST /logout`,
    /// bounded by [`LOGOUT_BOUND`], failures logged at debug): call it when the
    /// command's last array call has returned. A second call does nothing; an array
    /// call made after it would simply log in again.
    pub(crate) fn end_array_work(&self) {
        let mut slot = self.logout.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_some() {
            return;
        }
        let array = Arc::clone(&self.array);
        tracing::debug!("array work done; logging out in the background");
        *slot = Some(tokio::spawn(async move {
            match tokio::time::timeout(LOGOUT_BOUND, array.close()).await {
                Ok(Ok(())) => tracing::debug!("logged out"),
                Ok(Err(e)) => tracing::debug!("logout failed: {e}"),
                Err(_) => tracing::debug!("logout unanswered after {LOGOUT_BOUND:?}; given up"),
            }
        }));
    }

    /// Ends the session: saves a simulated array's state if it changed, and waits
    /// at most [`LOGOUT_WAIT`] for the logout (started here if the command did not).
    pub(crate) async fn close(mut self) -> Result<()> {
        self.end_array_work();
        if let Some(sim) = self.sim.take() {
            sim.save_if_changed()?;
        }
        let pending = self.logout.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(handle) = pending
            && tokio::time::timeout(LOGOUT_WAIT, handle).await.is_err()
        {
            tracing::debug!("logout still under way at exit; not waiting longer");
        }
        Ok(())
    }
}

/// The one [`Settling`] layer, around whichever array a session opens.
fn settled(array: impl FlashArray + 'static) -> Arc<dyn FlashArray> {
    Arc::new(Settling::new(array))
}

impl Drop for Session {
    /// A session dropped without [`Session::close`] (the command was interrupted)
    /// still saves what changed: the embedded array is in process, so the save is
    /// synchronous and the state it writes is whole (every write is one locked step).
    fn drop(&mut self) {
        if let Some(sim) = self.sim.take()
            && let Err(e) = sim.save_if_changed()
        {
            tracing::error!("{e:#}");
        }
    }
}

/// Locks `--sim-state` for the whole command (see [`FileLock`]): a second process
/// waits, saying so, and gives up after [`files::LOCK_WAIT`]. A state file in a
/// folder that does not exist is refused here, before anything changes.
pub(crate) fn lock_sim_state(
    state: Option<(&Path, &str)>,
    printer: &Printer,
) -> Result<Option<FileLock>> {
    let Some((path, flag)) = state else {
        return Ok(None);
    };
    let lock = FileLock::acquire(path, files::LOCK_WAIT, &mut |lock| {
        printer.warn(format!(
            "waiting for another pxfa process using {flag} {} (lock {})",
            path.display(),
            lock.display()
        ));
    });
    match lock {
        Ok(l) => Ok(Some(l)),
        Err(e @ LockError::Open(..)) => Err(InvalidInput::error(format!("{flag}: {e}"))),
        Err(e) => Err(anyhow::Error::new(e).context(format!("{flag} {}", path.display()))),
    }
}

/// A fresh embedded array with [`SIM_ADMINS`], or the one saved in `state`. The
/// file is read as an input ([`files::read_input`]); one that is no state file, or a
/// FIFO, a device or a huge file, is refused naming the flag (exit 2).
pub(crate) fn load_sim(
    state: Option<(&Path, &str)>,
    seed: flasharray_mock::Seed,
    printer: &Printer,
) -> Result<MockArray> {
    load_sim_warning(state, seed, &mut |w| printer.warn(w))
}

/// [`load_sim`] with the warnings to `warn` (shell completion shows none).
pub(crate) fn load_sim_warning(
    state: Option<(&Path, &str)>,
    seed: flasharray_mock::Seed,
    warn: &mut dyn FnMut(String),
) -> Result<MockArray> {
    let mock = MockArray::builder().seed(seed).build();
    if let Some((path, flag)) = state
        && path.exists()
    {
        for w in files::loose_permissions(path) {
            warn(format!(
                "{flag} (it holds the simulated admins' API tokens): {w}"
            ));
        }
        let bytes = files::read_input(path, InputKind::SimState).map_err(|e| {
            InvalidInput::error(format!("{flag}: cannot read {}: {e}", path.display()))
        })?;
        let st = serde_json::from_slice(&bytes).map_err(|e| {
            InvalidInput::error(format!(
                "{flag}: {} is not a simulator state file (line {}, column {})",
                path.display(),
                e.line(),
                e.column()
            ))
        })?;
        mock.restore(st);
    }
    for a in SIM_ADMINS {
        mock.add_admin(a);
    }
    Ok(mock)
}

/// The REST client of a resolved target, with the global options' retries and
/// connect timeout.
pub(crate) fn rest_client(t: RestTarget, global: &GlobalArgs) -> Result<RestArray> {
    tracing::debug!(url = %t.url, url_source = %t.url_source, token_source = %t.token_source, "connecting");
    let retry = RetryConfig {
        max_retries: global.retries,
        max_elapsed: global.retry_for,
        ..RetryConfig::default()
    };
    let b = RestArray::builder(t.url.as_str());
    let mut b = match t.api_client {
        Some(client) => b.api_client(*client),
        None => b.api_token(t.token),
    }
    .insecure(t.insecure)
    .connect_timeout(global.connect_timeout)
    .retry(retry);
    if let Some(ca) = &t.ca_file {
        b = b.ca_file(ca.clone());
    }
    b.build()
        .with_context(|| format!("cannot set up the client for {}", t.url))
}

/// Writes the simulated array's state as JSON, owner-only (it holds the simulated
/// admins' API tokens) and atomically, so an interrupted save never leaves half a file.
pub(crate) fn save_sim_state(mock: &MockArray, path: &Path) -> Result<()> {
    flasharray_mock::state_file::save_state(mock, path)
        .map(|_| ())
        .with_context(|| format!("cannot save simulator state {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flasharray::PodName;
    use flasharray::models::PodPost;
    use flasharray::settle::WRITE_ROUNDS;

    /// Drops every send of a pod's creation (more than two layers could make) and
    /// creates it through the session: how often it went out, and the outcome.
    async fn create_with_sends_dropped(drops: u64) -> (u64, flasharray::Result<()>) {
        let mock = MockArray::new();
        let session = Session::simulated(mock.clone(), None);
        for nth in 1..=drops {
            mock.faults().drop_write(nth);
        }
        let pod = PodName::new("pod1").unwrap();
        let r = session
            .array
            .create_pods(&[pod], &PodPost::default())
            .await
            .map(|_| ());
        (mock.stats().op(flasharray_mock::Op::CreatePods), r)
    }

    /// A dropped create is settled (sent again) by the session's layer.
    #[tokio::test]
    async fn a_lost_write_through_the_session_is_settled() {
        let (sends, r) = create_with_sends_dropped(1).await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(sends, 2);
    }

    /// One layer, not two: with every send dropped the create goes out
    /// `WRITE_ROUNDS` times, not their square.
    #[tokio::test]
    async fn the_session_settles_once() {
        let (sends, r) = create_with_sends_dropped(u64::from(WRITE_ROUNDS * WRITE_ROUNDS)).await;
        assert!(r.unwrap_err().maybe_applied());
        assert_eq!(sends, u64::from(WRITE_ROUNDS));
    }
}
