//! The state file ([`super::SimConfig::state_file`]): rewritten after every request
//! that changed the array and before that request is answered, so that a client
//! that got an answer to a write finds the write in the file even if the
//! simulator is killed right after (`kill -9`, a crash, a power cut: the file is
//! replaced atomically and synced, [`flasharray_mock::state_file`]).
//!
//! Saves are coalesced: [`MockArray::generation`] counts the writes, and a request
//! waits only until a save that began after its own write has finished, so
//! concurrent writers share one save instead of queueing one each. Saves run one at
//! a time on tokio's blocking threads, each snapshot newer than the last.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use hyper::{Method, StatusCode};
use serde_json::json;

use super::SimState;
use super::response::{Fail, Reply};
use flasharray_mock::MockArray;
use flasharray_mock::state_file::save_state;

/// Keeps the state file up to date.
#[derive(Debug)]
pub(crate) struct Persister {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    /// The generation the file holds (every write counted up to it is in it).
    saved: AtomicU64,
    /// One save at a time, held on the blocking thread that saves: a request that
    /// goes away mid-save (its client hung up) cannot let a second save overtake
    /// the first, whose older snapshot would then be renamed over the newer one.
    saving: Mutex<()>,
}

impl Persister {
    /// Writes the state once at start, so that a path that cannot be written is
    /// refused before the first client is served.
    pub(crate) fn start(path: &Path, mock: &MockArray) -> io::Result<Persister> {
        let saved = save_state(mock, path)?;
        Ok(Persister {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                saved: AtomicU64::new(saved),
                saving: Mutex::new(()),
            }),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Returns once the file holds every write counted up to `generation`, saving
    /// if no save has covered it yet.
    pub(crate) async fn save_through(&self, mock: &MockArray, generation: u64) -> io::Result<()> {
        if self.inner.saved.load(Ordering::SeqCst) >= generation {
            return Ok(());
        }
        let (inner, mock) = (self.inner.clone(), mock.clone());
        tokio::task::spawn_blocking(move || inner.save_through(&mock, generation))
            .await
            .map_err(io::Error::other)?
    }
}

impl Inner {
    fn save_through(&self, mock: &MockArray, generation: u64) -> io::Result<()> {
        let _one_at_a_time = self.saving.lock().unwrap_or_else(PoisonError::into_inner);
        // A save that ran while this one waited may have covered it.
        if self.saved.load(Ordering::SeqCst) >= generation {
            return Ok(());
        }
        let saved = save_state(mock, &self.path)?;
        self.saved.fetch_max(saved, Ordering::SeqCst);
        Ok(())
    }
}

/// After a request was handled and before it is answered: saves what it (or any
/// request before it) changed. A write whose change could not be saved is answered
/// `500` (the change is in memory, but would not survive a crash); a read, or a
/// request refused anyway, is answered as usual, the failure logged.
pub(crate) async fn settle(
    state: &SimState,
    method: &Method,
    answer: Result<Reply, Fail>,
) -> Result<Reply, Fail> {
    let Some(persister) = &state.persister else {
        return answer;
    };
    let generation = state.mock.generation();
    match persister.save_through(&state.mock, generation).await {
        Ok(()) => answer,
        Err(e) => {
            tracing::error!(error = %e, path = %persister.path().display(), "cannot save the simulator state");
            let read = *method == Method::GET || *method == Method::HEAD;
            if read || answer.is_err() {
                return answer;
            }
            Err(Fail::Reply(Reply::json(
                StatusCode::INTERNAL_SERVER_ERROR,
                &json!({ "errors": [{
                    "context": null,
                    "message": format!("The simulator could not save its state file: {e}"),
                }] }),
            )))
        }
    }
}

/// At shutdown: saves whatever the last requests (or direct calls on the mock)
/// changed.
pub(crate) async fn final_save(state: &SimState) {
    if let Some(persister) = &state.persister
        && let Err(e) = persister
            .save_through(&state.mock, state.mock.generation())
            .await
    {
        tracing::error!(error = %e, path = %persister.path().display(), "cannot save the simulator state");
    }
}
