//! Writes whose answer was lost.
//!
//! When a write fails in a way that means "it may have been applied" (the connection
//! broke after sending, the answer timed out, a gateway answered 502/504; see
//! [`crate::Error::maybe_applied`]), sending it again could create a second token,
//! fail with "already exists" on a create that worked, or move something twice. So the
//! client reads the affected objects back and decides, per object:
//!
//! * **settled**: the array already shows the requested outcome; nothing is sent;
//! * **pending**: the array shows no trace of it; it is sent again (only those objects);
//! * **undecided**: the array shows something else (a same-named object that does not
//!   look like the one asked for): the original error is returned, flagged
//!   `maybe_applied`, and nothing more is sent.
//!
//! This happens at most [`WRITE_ROUNDS`] times per call. If the read itself fails,
//! the original error is returned.
//!
//! What counts as "already done", per operation:
//!
//! | operation | done when the re-read shows | undecided when |
//! |---|---|---|
//! | `create_volumes` | the name, live, of the asked size (with the asked tags at 2.39+) | same name, other size, destroyed or without the tags |
//! | `patch_volumes` | every asked value, under the new name after rename/move | neither old nor new state |
//! | `eradicate_volumes`, `delete_hosts`, `delete_host_groups`, `eradicate_pods` | the name is gone | – |
//! | `set_tags` | the tag with the asked value | – |
//! | `delete_tags` | no asked key left on the object | – |
//! | `create_hosts` | the name with exactly the asked initiators (and tags at 2.39+) | same name, other initiators or without the tags |
//! | `patch_hosts`, `patch_pods` | every asked value (new name after a rename) | neither old nor new state |
//! | `create_host_groups` | the name exists (with the asked tags at 2.39+) | same name without the tags |
//! | `add_host_group_members` / `remove_…` | the host is / is not listed in the group | – |
//! | `create_connections` | the target sees the volume (on the asked LUN) | connected on another LUN |
//! | `delete_connections` | the target no longer sees the volume | – |
//! | `create_pods` | the name, live, with the asked quota (and tags at 2.39+) | same name, other quota, destroyed or without the tags |
//! | `create_api_token` | the admin holds a token: it is read back (exposed) and returned | – |
//! | `delete_api_token` | the admin holds no token | – |

use std::future::Future;
use std::pin::Pin;

use serde::de::DeserializeOwned;

use crate::error::{ErrorKind, Result};
use crate::models::{Host, HostGroup, Pod, Volume};
use crate::params::ListParams;
use crate::rest::RestArray;
use crate::rest::paging::Pager;

/// Attempts per write call: the first, plus re-sends after re-reading.
pub const WRITE_ROUNDS: u32 = 3;

pub(crate) type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a re-read found.
pub(crate) enum Verdict<N, T> {
    /// `done` already took effect; `pending` must still be sent.
    Known { done: Vec<T>, pending: Vec<N> },
    /// The array shows something the write cannot explain.
    Undecided(String),
}

/// Objects with a name, for existence checks.
pub(crate) trait Named {
    fn object_name(&self) -> &str;
}

impl Named for Volume {
    fn object_name(&self) -> &str {
        &self.name
    }
}
impl Named for Host {
    fn object_name(&self) -> &str {
        &self.name
    }
}
impl Named for HostGroup {
    fn object_name(&self) -> &str {
        &self.name
    }
}
impl Named for Pod {
    fn object_name(&self) -> &str {
        &self.name
    }
}

impl RestArray {
    /// Sends `write` for `names`; after an ambiguous failure asks `probe` which
    /// names already took effect and re-sends only the rest.
    pub(crate) async fn settle<'f, N, T>(
        &self,
        what: &str,
        names: Vec<N>,
        write: impl Fn(Vec<N>) -> BoxFut<'f, Result<Vec<T>>>,
        probe: impl Fn(Vec<N>) -> BoxFut<'f, Result<Verdict<N, T>>>,
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
            tracing::warn!(
                operation = what,
                round,
                request_id = err.request_id().unwrap_or("-"),
                error = %err,
                "write outcome unknown; reading the array before sending anything again"
            );
            match probe(pending.clone()).await {
                Ok(Verdict::Known {
                    done: mut d,
                    pending: p,
                }) => {
                    done.append(&mut d);
                    pending = p;
                    if pending.is_empty() {
                        tracing::info!(operation = what, "the lost write had taken effect");
                        return Ok(done);
                    }
                }
                Ok(Verdict::Undecided(why)) => {
                    tracing::warn!(operation = what, reason = %why, "cannot tell whether the write took effect");
                    return Err(err);
                }
                Err(read_err) => {
                    tracing::warn!(operation = what, error = %read_err, "re-reading after a lost write failed");
                    return Err(err);
                }
            }
            if round >= WRITE_ROUNDS {
                return Err(err);
            }
            round += 1;
        }
    }

    /// The objects among `names` that exist (live or destroyed). Unlike a plain
    /// `GET ?names=`, a missing name is not an error: after a "does not exist"
    /// answer each name is looked up on its own.
    pub(crate) async fn lookup<T: DeserializeOwned + Named>(
        &self,
        collection: &str,
        names: &[String],
    ) -> Result<Vec<T>> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let all = self
            .collect_pages(Pager::for_list(collection, &ListParams::names(names)))
            .await;
        match all {
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            other => return other,
        }
        let mut found = Vec::new();
        for name in names {
            match self
                .collect_pages::<T>(Pager::for_list(collection, &ListParams::names([name])))
                .await
            {
                Ok(mut v) => found.append(&mut v),
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(found)
    }
}

/// Finds `name` among `items`, ignoring case as the array does.
pub(crate) fn find<'a, T: Named>(items: &'a [T], name: &str) -> Option<&'a T> {
    items
        .iter()
        .find(|i| crate::name::same_name(i.object_name(), name))
}
