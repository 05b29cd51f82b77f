//! Layers that nest settle once: the outermost [`Settling`](super::Settling) whose
//! write is being polled settles it; any layer below passes it through.
//!
//! A future runs only while it is polled, and everything it awaits is polled inside
//! that call on the same thread. So a per-thread count of the settling writes being
//! polled right now tells a layer below whether one above is settling this very
//! write (the way a task-local works, without needing a runtime). Other tasks polled
//! on the thread in between see the count back at zero.

use std::cell::Cell;
use std::future::Future;
use std::pin::pin;

thread_local! {
    /// Settling writes being polled on this thread right now.
    static POLLING: Cell<u32> = const { Cell::new(0) };
}

/// Whether this call is part of a write an outer layer is settling.
pub(super) fn inside_a_settling_write() -> bool {
    POLLING.with(|n| n.get() > 0)
}

/// Runs `write`, a layer's settling of one write, marked for the layers below.
pub(super) async fn settling_write<F: Future>(write: F) -> F::Output {
    let mut write = pin!(write);
    std::future::poll_fn(|cx| {
        let _mark = Mark::enter();
        write.as_mut().poll(cx)
    })
    .await
}

/// Counts one settling write as polled until dropped (a panic included).
struct Mark;

impl Mark {
    fn enter() -> Mark {
        POLLING.with(|n| n.set(n.get() + 1));
        Mark
    }
}

impl Drop for Mark {
    fn drop(&mut self) {
        POLLING.with(|n| n.set(n.get().saturating_sub(1)));
    }
}
