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
//! The engine and the verdicts are [`crate::settle`]'s, the one layer for every array
//! ([`crate::Settling`]). The probes below are the REST client's own until its
//! resource modules send single writes and leave lost answers to `Settling`; until
//! then `RestArray` answers [`FlashArray::settles_lost_answers`] with `true`, so that
//! no write is settled twice.
//!
//! The three write shapes that recur are written once here: creating with creation
//! tags (`create_tagged`), patching with a possible rename
//! (`patch_renaming`) and deleting until gone
//! (`delete_until_gone`). Re-reads of named objects use the one lookup
//! rule of [`crate::ext`].
//!
//! What counts as "already done", per operation:
//!
//! | operation | done when the re-read shows | undecided when |
//! |---|---|---|
//! | `create_volumes` | the name, live, of the asked size (with the asked tags at 2.39+) | same name, other size, destroyed or without the tags |
//! | `create_volumes_batch` | per item: the name, live, of its size, with its tags | same name, other size, destroyed or without its tags |
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

use reqwest::Method;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::array::FlashArray;
use crate::error::{Error, Result};
use crate::ext::{FlashArrayExt, Named, find};
use crate::models::{Host, HostGroup, Pod, Tag, TagBody, Volume};
use crate::name::same_name;
use crate::params::{TagParams, TagResource};
use crate::rest::RestArray;
use crate::rest::query::Query;
use crate::rest::session::ApiVersion;

pub use crate::settle::WRITE_ROUNDS;

pub(crate) type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub(crate) use crate::settle::{Verdict, has_tags, same_opt, split};

/// The four named collections with creation tags, renames and deletes.
pub(crate) trait Collection:
    Named + DeserializeOwned + Clone + Send + Sync + 'static
{
    /// The tag kind, which also names the collection's path.
    const KIND: TagResource;
    /// The object's name in messages.
    const NOUN: &'static str;
    /// The named objects that exist (see [`crate::ext`] for the rule).
    fn lookup<'a>(array: &'a RestArray, names: &'a [String]) -> BoxFut<'a, Result<Vec<Self>>>;
}

impl Collection for Volume {
    const KIND: TagResource = TagResource::Volume;
    const NOUN: &'static str = "volume";
    fn lookup<'a>(array: &'a RestArray, names: &'a [String]) -> BoxFut<'a, Result<Vec<Self>>> {
        array.lookup_volumes(names)
    }
}

impl Collection for Host {
    const KIND: TagResource = TagResource::Host;
    const NOUN: &'static str = "host";
    fn lookup<'a>(array: &'a RestArray, names: &'a [String]) -> BoxFut<'a, Result<Vec<Self>>> {
        array.lookup_hosts(names)
    }
}

impl Collection for HostGroup {
    const KIND: TagResource = TagResource::HostGroup;
    const NOUN: &'static str = "host group";
    fn lookup<'a>(array: &'a RestArray, names: &'a [String]) -> BoxFut<'a, Result<Vec<Self>>> {
        array.lookup_host_groups(names)
    }
}

impl Collection for Pod {
    const KIND: TagResource = TagResource::Pod;
    const NOUN: &'static str = "pod";
    fn lookup<'a>(array: &'a RestArray, names: &'a [String]) -> BoxFut<'a, Result<Vec<Self>>> {
        array.lookup_pods(names)
    }
}

/// Names as strings, for queries and re-reads.
pub(crate) fn strings<N: AsRef<str>>(names: &[N]) -> Vec<String> {
    names.iter().map(|n| n.as_ref().to_string()).collect()
}

/// Refuses a write that names nothing, before anything is sent.
pub(crate) fn require<N>(what: &str, names: &[N]) -> Result<()> {
    if names.is_empty() {
        return Err(Error::InvalidRequest(format!("{what}: no names given")));
    }
    Ok(())
}

/// A request body as JSON.
pub(crate) fn json<T: Serialize + ?Sized>(body: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(body).map_err(|e| Error::InvalidRequest(format!("cannot encode body: {e}")))
}

impl RestArray {
    /// Sends `write` for `names`; after an ambiguous failure asks `probe` which
    /// names already took effect and re-sends only the rest (the engine of
    /// [`crate::settle`]).
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
        crate::settle::rounds(what, names, write, probe).await
    }

    /// `POST /{collection}?names=...` with creation tags (see the `rest` module
    /// docs): from 2.39 the tags travel in the body that `encode` makes from them;
    /// before, the body goes without them and the objects are tagged in a second call.
    ///
    /// Lost answer: names that now exist and pass `is_asked` (and carry the tags when
    /// they went in the body) are done; absent names are created again; a same-named
    /// object that fails `is_asked` (`"{noun} {name} {mismatch}"`) or lacks the tags
    /// is undecided.
    pub(crate) async fn create_tagged<T: Collection>(
        &self,
        names: Vec<String>,
        tags: &[TagBody],
        encode: impl FnOnce(&[TagBody]) -> Result<Option<Vec<u8>>>,
        is_asked: impl Fn(&T) -> bool + Sync,
        mismatch: &str,
    ) -> Result<Vec<T>> {
        let kind = T::KIND;
        let inline = self.tags_in_create(tags).await?;
        let sent_tags: &[TagBody] = if inline { tags } else { &[] };
        let bytes = encode(sent_tags)?;
        let (bytes, is_asked) = (&bytes, &is_asked);
        let created = self
            .settle(
                &format!("POST {}", kind.collection()),
                names.clone(),
                |pending| {
                    Box::pin(async move {
                        self.transport
                            .write(
                                Method::POST,
                                kind.collection(),
                                Query::new().csv("names", &pending),
                                bytes.clone(),
                            )
                            .await?
                            .items()
                    })
                },
                |pending| {
                    Box::pin(async move {
                        let found = T::lookup(self, &pending).await?;
                        let mut done = Vec::new();
                        let mut rest = Vec::new();
                        for n in pending {
                            match find(&found, &n) {
                                Some(o) if is_asked(o) => done.push(o.clone()),
                                Some(_) => {
                                    return Ok(Verdict::Undecided(format!(
                                        "{} {n} {mismatch}",
                                        T::NOUN
                                    )));
                                }
                                None => rest.push(n),
                            }
                        }
                        let made: Vec<String> =
                            done.iter().map(|o| o.object_name().to_string()).collect();
                        if let Some(n) = self.lacking_tags(kind, &made, sent_tags).await? {
                            return Ok(Verdict::Undecided(format!(
                                "{} {n} exists without the tags asked for",
                                T::NOUN
                            )));
                        }
                        Ok(Verdict::Known {
                            done,
                            pending: rest,
                        })
                    })
                },
            )
            .await?;
        if !inline {
            self.tag_created(kind, &names, tags).await?;
        }
        Ok(created)
    }

    /// `PATCH /{collection}?names=...[&flag=true]` with `body`; `name_after` is the
    /// name an object has after the patch (a rename or move changes it), `matches`
    /// whether an object shows every asked value. A rename names exactly one object.
    ///
    /// Lost answer: an object showing every asked value under its name after the
    /// patch is done; one still unchanged under its old name is patched again;
    /// anything else is undecided.
    pub(crate) async fn patch_renaming<T: Collection>(
        &self,
        names: Vec<String>,
        renames: bool,
        body: Vec<u8>,
        flag: Option<&str>,
        name_after: impl Fn(&str) -> String + Sync,
        matches: impl Fn(&T) -> bool + Sync,
    ) -> Result<Vec<T>> {
        let collection = T::KIND.collection();
        if renames && names.len() > 1 {
            return Err(Error::InvalidRequest(format!(
                "patch {collection}: a rename names exactly one {}",
                T::NOUN
            )));
        }
        let (body, name_after, matches) = (&body, &name_after, &matches);
        self.settle(
            &format!("PATCH {collection}"),
            names,
            |pending| {
                Box::pin(async move {
                    let mut q = Query::new().csv("names", &pending);
                    if let Some(f) = flag {
                        q = q.flag(f, true);
                    }
                    self.transport
                        .write(Method::PATCH, collection, q, Some(body.clone()))
                        .await?
                        .items()
                })
            },
            |pending| {
                Box::pin(async move {
                    let mut lookup_names = pending.clone();
                    for n in &pending {
                        let after = name_after(n);
                        if !same_name(&after, n) {
                            lookup_names.push(after);
                        }
                    }
                    let found = T::lookup(self, &lookup_names).await?;
                    let mut done = Vec::new();
                    let mut rest = Vec::new();
                    for n in pending {
                        let after = name_after(&n);
                        let renamed = !same_name(&after, &n);
                        match (find(&found, &n), find(&found, &after)) {
                            (_, Some(o)) if !renamed && o.object_name() == after && matches(o) => {
                                done.push(o.clone())
                            }
                            (None, Some(o)) if renamed && matches(o) => done.push(o.clone()),
                            (Some(_), None) if renamed => rest.push(n),
                            (Some(_), _) if !renamed => rest.push(n),
                            _ => {
                                return Ok(Verdict::Undecided(format!(
                                    "{} {n} is neither unchanged nor patched",
                                    T::NOUN
                                )));
                            }
                        }
                    }
                    Ok(Verdict::Known {
                        done,
                        pending: rest,
                    })
                })
            },
        )
        .await
    }

    /// `DELETE /{collection}?names=...[&flag=true]`.
    ///
    /// Lost answer: an object that no longer exists is done; one still listed is
    /// deleted again.
    pub(crate) async fn delete_until_gone<T: Collection>(
        &self,
        names: Vec<String>,
        flag: Option<&str>,
    ) -> Result<()> {
        let collection = T::KIND.collection();
        self.settle(
            &format!("DELETE {collection}"),
            names,
            |pending| {
                Box::pin(async move {
                    let mut q = Query::new().csv("names", &pending);
                    if let Some(f) = flag {
                        q = q.flag(f, true);
                    }
                    self.transport
                        .write(Method::DELETE, collection, q, None)
                        .await
                        .map(|_| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let found = T::lookup(self, &pending).await?;
                    let (still, gone): (Vec<String>, Vec<String>) =
                        pending.into_iter().partition(|n| find(&found, n).is_some());
                    Ok(split(gone.len(), still))
                })
            },
        )
        .await
        .map(drop)
    }

    /// Whether a create may carry `tags` in its body: nothing to carry, or the
    /// negotiated version is 2.39 or newer.
    async fn tags_in_create(&self, tags: &[TagBody]) -> Result<bool> {
        if tags.is_empty() {
            return Ok(true);
        }
        Ok(self.transport.session().await?.version >= ApiVersion::TAGS_IN_CREATE)
    }

    /// Before 2.39: tags the just-created objects in a second call. A process killed
    /// between the two calls leaves the objects untagged; see the `rest` module docs.
    async fn tag_created(
        &self,
        kind: TagResource,
        names: &[String],
        tags: &[TagBody],
    ) -> Result<()> {
        let all: Vec<Tag> = names
            .iter()
            .flat_map(|n| tags.iter().map(move |t| t.on(n.clone())))
            .collect();
        self.set_tags(kind, &all).await.map(drop)
    }

    /// After a lost create with tags in its body: the first of `names` that exists
    /// without every asked tag, i.e. an object this call did not create.
    async fn lacking_tags(
        &self,
        kind: TagResource,
        names: &[String],
        tags: &[TagBody],
    ) -> Result<Option<String>> {
        if names.is_empty() || tags.is_empty() {
            return Ok(None);
        }
        let have = self
            .list_tags(
                kind,
                &TagParams {
                    resource_names: names.to_vec(),
                    ..Default::default()
                },
            )
            .await?;
        Ok(names.iter().find(|n| !has_tags(&have, n, tags)).cloned())
    }
}
