//! Writes whose answer was lost, settled in one layer over any array.
//!
//! When a write fails in a way that means "it may have been applied" (the connection
//! broke after sending, the answer timed out, a gateway answered 502/504; see
//! [`crate::Error::maybe_applied`]), sending it again could create a second token,
//! fail with "already exists" on a create that worked, or move something twice.
//! [`Settling`] wraps any [`FlashArray`] (as `object_store`'s `LimitStore` wraps any
//! store) and, after such a failure, reads the affected objects back and decides, per
//! object:
//!
//! * **settled**: the array already shows the requested outcome; nothing is sent;
//! * **pending**: the array shows no trace of it; it is sent again (only those objects);
//! * **undecided**: the array shows something else (a same-named object that does not
//!   look like the one asked for): the original error is returned, flagged
//!   `maybe_applied`, and nothing more is sent.
//!
//! This happens at most [`WRITE_ROUNDS`] times per call. If the read itself fails,
//! the original error is returned. Reads pass through untouched.
//!
//! This is the only place where a lost answer is settled: the arrays themselves
//! (`rest::RestArray`, the mock) send each write once and report a lost answer as
//! an error, and nothing above (px-topology's converge, its orphan clean-up, the
//! token rotation) settles again: they write through the array they are given.
//! So the layer goes on exactly once, where an array is built: pxfa's CLI session
//! and the controller's array pool, which every write of a command or a reconcile
//! goes through. Wrap an array once: each layer settles on its own, so a
//! `Settling` inside another would send a write up to [`WRITE_ROUNDS`] squared
//! times.
//!
//! What counts as "already done", per operation:
//!
//! | operation | done when the re-read shows | undecided when |
//! |---|---|---|
//! | `create_volumes` | the name, live, of the asked size, with the asked tags (†) | same name, other size, destroyed or without the tags (†) |
//! | `create_volumes_batch` | per item: the name, live, of its size, with its tags (‡) | same name, other size, destroyed or without its tags (‡) |
//! | `patch_volumes` | every asked value, under the new name after rename/move | neither old nor new state |
//! | `eradicate_volumes`, `delete_hosts`, `delete_host_groups`, `eradicate_pods` | the name is gone | – |
//! | `set_tags` | the tag with the asked value | – |
//! | `delete_tags` | no asked key left on the object | – |
//! | `create_hosts` | the name with exactly the asked initiators and tags (†) | same name, other initiators or without the tags (†) |
//! | `patch_hosts`, `patch_pods` | every asked value (new name after a rename) | neither old nor new state |
//! | `create_host_groups` | the name exists with the asked tags (†) | same name without the tags (†) |
//! | `add_host_group_members` / `remove_…` | the host is / is not listed in the group | – |
//! | `create_connections` | the target sees the volume (on the asked LUN) | connected on another LUN |
//! | `delete_connections` | the target no longer sees the volume | – |
//! | `create_pods` | the name, live, with the asked quota and tags (†) | same name, other quota, destroyed or without the tags (†) |
//! | `create_api_token` | the admin holds a token: it is read back (exposed) and returned, without its value when the array shows it only once | – |
//! | `delete_api_token` | the admin holds no token | – |
//! | `create_realms` | a live realm of the name | – |
//! | `patch_realms` | the realm (new name after a rename) in the asked `destroyed` state | – |
//! | `eradicate_realms`, `delete_management_access_policies`, `delete_admins` | the name is gone | – |
//! | `create_management_access_policies`, `create_admins` | the name exists | – |
//!
//! A same-named object without the creation tags is someone else's: pxfa never takes
//! it over, and the caller hears the original error. (†) That holds where the tags
//! travel in the create call itself: arrays without a REST version (in memory) and
//! REST 2.39 on (`rest::ApiVersion::TAGS_IN_CREATE`; ‡ `POST /volumes/batch`, from
//! 2.32, `rest::ApiVersion::VOLUME_BATCH`). Below that the REST client creates, then
//! tags in a second call, so the answer lost may be either call's: an object found
//! without its tags counts as done, and its tags are put here (settled like
//! `set_tags`).
//!
//! Token creation rests on a belief of low confidence: that an array refuses a
//! second token while an admin holds one, so a token found after a lost answer is
//! the one this call created.

use futures_util::future::BoxFuture;

use crate::array::signature::*;
use crate::error::Error;

mod links;
mod named;
mod tenancy;

/// Attempts per write call: the first, plus re-sends after re-reading.
pub const WRITE_ROUNDS: u32 = 3;

/// An array whose writes are settled after a lost answer (see the module text).
#[derive(Debug, Clone)]
pub struct Settling<A> {
    inner: A,
}

impl<A: FlashArray> Settling<A> {
    /// Wraps `inner`.
    pub fn new(inner: A) -> Self {
        Settling { inner }
    }

    /// The wrapped array.
    pub fn inner(&self) -> &A {
        &self.inner
    }

    /// Unwraps the array.
    pub fn into_inner(self) -> A {
        self.inner
    }
}

/// What a re-read found.
pub(crate) enum Verdict<N, T> {
    /// `done` already took effect; `pending` must still be sent.
    Known { done: Vec<T>, pending: Vec<N> },
    /// The array shows something the write cannot explain.
    Undecided(String),
}

/// A verdict for writes that produce nothing: `done` of them, `pending` the rest.
pub(crate) fn split<N>(done: usize, pending: Vec<N>) -> Verdict<N, ()> {
    Verdict::Known {
        done: vec![(); done],
        pending,
    }
}

/// Sends `write` for `names`; after an ambiguous failure asks `probe` which names
/// already took effect and re-sends only the rest, at most [`WRITE_ROUNDS`] sends.
pub(crate) async fn rounds<'f, N, T>(
    what: &str,
    names: Vec<N>,
    write: impl Fn(Vec<N>) -> BoxFuture<'f, Result<Vec<T>>>,
    probe: impl Fn(Vec<N>) -> BoxFuture<'f, Result<Verdict<N, T>>>,
) -> Result<Vec<T>>
where
    N: Clone,
{
    let mut pending = names;
    let mut done = Vec::new();
    let mut round = 1;
    loop {
        let err = match write(pending.clone()).await {
            Ok(mut v) => {
                done.append(&mut v);
                return Ok(done);
            }
            Err(e) if e.maybe_applied() => e,
            Err(e) => return Err(e),
        };
        log::lost(what, round, &err);
        match probe(pending.clone()).await {
            Ok(Verdict::Known {
                done: mut d,
                pending: p,
            }) => {
                done.append(&mut d);
                pending = p;
                if pending.is_empty() {
                    log::settled(what);
                    return Ok(done);
                }
            }
            Ok(Verdict::Undecided(why)) => {
                log::undecided(what, &why);
                return Err(err);
            }
            Err(read_err) => {
                log::unread(what, &read_err);
                return Err(err);
            }
        }
        if round >= WRITE_ROUNDS {
            return Err(err);
        }
        round += 1;
    }
}

/// One write of a single answer (a token), settled as a one-name write.
pub(crate) fn single<T>(mut v: Vec<T>, what: &str) -> Result<T> {
    v.pop().ok_or_else(|| Error::Decode {
        operation: what.into(),
        path: "items".into(),
        message: "the array answered with nothing".into(),
    })
}

/// The warnings a settled write leaves in the log (with the `rest` feature, which
/// brings `tracing`).
mod log {
    use crate::error::Error;

    #[cfg(feature = "rest")]
    pub(super) fn lost(what: &str, round: u32, err: &Error) {
        tracing::warn!(
            operation = what,
            round,
            request_id = err.request_id().unwrap_or("-"),
            error = %err,
            "write outcome unknown; reading the array before sending anything again"
        );
    }

    #[cfg(feature = "rest")]
    pub(super) fn settled(what: &str) {
        tracing::info!(operation = what, "the lost write had taken effect");
    }

    #[cfg(feature = "rest")]
    pub(super) fn undecided(what: &str, why: &str) {
        tracing::warn!(operation = what, reason = %why, "cannot tell whether the write took effect");
    }

    #[cfg(feature = "rest")]
    pub(super) fn unread(what: &str, err: &Error) {
        tracing::warn!(operation = what, error = %err, "re-reading after a lost write failed");
    }

    #[cfg(not(feature = "rest"))]
    pub(super) fn lost(_: &str, _: u32, _: &Error) {}

    #[cfg(not(feature = "rest"))]
    pub(super) fn settled(_: &str) {}

    #[cfg(not(feature = "rest"))]
    pub(super) fn undecided(_: &str, _: &str) {}

    #[cfg(not(feature = "rest"))]
    pub(super) fn unread(_: &str, _: &Error) {}
}

/// A read: passed through.
macro_rules! read {
    ($settling:ident, $name:ident($($arg:ident),*)) => {
        $settling.inner.$name($($arg),*).await
    };
}

/// A write: settled here.
macro_rules! write {
    ($settling:ident, $name:ident($($arg:ident),*)) => {
        $settling.$name($($arg),*).await
    };
}

/// Expands the method table: reads and the provided methods pass through, writes
/// go to the inherent method of the same name (in `named`, `links` and `tenancy`).
macro_rules! settling {
    (
        []
        calls { $($(#[$cm:meta])* $kind:ident $op:ident $request:literal
            fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)* }
        streams { $($(#[$sm:meta])* fn $sname:ident(&$sself:ident $(, $sarg:ident: $sty:ty)* $(,)?)
            -> $sret:ty $sbody:block)* }
        session { $($(#[$pm:meta])* fn $pname:ident(&$pself:ident) -> $pret:ty $pbody:block)* }
    ) => {
        #[async_trait::async_trait]
        impl<A: FlashArray> FlashArray for Settling<A> {
            $( async fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
                let settling = self;
                $kind!(settling, $name($($arg),*))
            } )*
            $( fn $sname(&self, $($sarg: $sty),*) -> ItemStream<'_, $sret> {
                self.inner.$sname($($sarg),*)
            } )*
            $( async fn $pname(&self) -> Result<$pret> {
                self.inner.$pname().await
            } )*
        }
    };
}

crate::for_each_method!(settling);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_reaches_the_wrapped_array_once() {
        let missed =
            futures_util::FutureExt::now_or_never(crate::forwarding::unforwarded(Settling::new))
                .expect("ready at once");
        assert!(missed.is_empty(), "not forwarded: {missed:?}");
    }

    #[test]
    fn a_write_is_sent_at_most_write_rounds_times() {
        let sends = std::sync::atomic::AtomicU32::new(0);
        let lost = || Error::api(504, None, "Gateway Timeout");
        let r = futures_util::FutureExt::now_or_never(rounds::<String, ()>(
            "test",
            vec!["a".into()],
            |_| {
                sends.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Box::pin(async { Err(lost()) })
            },
            |pending| Box::pin(async move { Ok(split(0, pending)) }),
        ))
        .expect("ready at once");
        assert!(r.unwrap_err().maybe_applied());
        assert_eq!(sends.into_inner(), WRITE_ROUNDS);
    }
}
