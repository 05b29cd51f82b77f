//! How the resource modules send a write: once.
//!
//! A write whose answer was lost (see [`crate::Error::maybe_applied`]) comes back as
//! that error; settling it (re-reading, sending only what is missing) is
//! [`crate::Settling`]'s, the one layer for every array, whose rules are the table in
//! [`crate::settle`]. What the transport retries is no lost answer: a 429 or 503
//! says the array did nothing (see [`crate::rest::retry`]).
//!
//! The shapes that recur are written once here: a write naming objects
//! (`?names=...[&flag=true]`, [`RestArray::named_write`]) and a create with creation
//! tags ([`RestArray::create_tagged`]).

use reqwest::Method;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::FlashArray;
use crate::error::{Error, Result};
use crate::models::{Tag, TagBody};
use crate::params::TagResource;
use crate::rest::RestArray;
use crate::rest::query::Query;
use crate::rest::session::ApiVersion;

/// Names as strings, for queries.
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

/// Refuses a patch that renames more than one object, before anything is sent.
pub(crate) fn one_if_renamed<N>(what: &str, noun: &str, names: &[N], renames: bool) -> Result<()> {
    if renames && names.len() > 1 {
        return Err(Error::InvalidRequest(format!(
            "{what}: a rename names exactly one {noun}"
        )));
    }
    Ok(())
}

impl RestArray {
    /// `{method} /{path}?names=...[&{flag}=true]` with `body`; the answer's items
    /// (none for a `DELETE`, which answers without them).
    pub(crate) async fn named_write<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        names: &[String],
        flag: Option<&str>,
        body: Option<Vec<u8>>,
    ) -> Result<Vec<T>> {
        let mut q = Query::new().csv("names", names);
        if let Some(f) = flag {
            q = q.flag(f, true);
        }
        let deletes = method == Method::DELETE;
        let reply = self.transport.write(method, path, q, body).await?;
        if deletes {
            return Ok(Vec::new());
        }
        reply.items()
    }

    /// `POST /{collection}?names=...` with creation tags (see the `rest` module
    /// docs): from 2.39 the tags travel in the body that `encode` makes from them;
    /// before, the body goes without them and the objects are tagged in a second call.
    pub(crate) async fn create_tagged<T: DeserializeOwned>(
        &self,
        kind: TagResource,
        names: &[String],
        tags: &[TagBody],
        encode: impl FnOnce(&[TagBody]) -> Result<Option<Vec<u8>>>,
    ) -> Result<Vec<T>> {
        let inline = self.tags_in_create(tags).await?;
        let body = encode(if inline { tags } else { &[] })?;
        let created = self
            .named_write(Method::POST, kind.collection(), names, None, body)
            .await?;
        if !inline {
            self.tag_created(kind, names, tags).await?;
        }
        Ok(created)
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
}
