//! `/{kind}/tags`: list, set in batches, delete.
//!
//! Each kind's tags arrived with their own REST version ([`tags_since`]). An array
//! older than that has no such tags at all, so a listing there is empty without
//! asking (the path would be 404), and a write is refused before anything is sent.

use std::collections::BTreeSet;

use futures_util::stream::{self, StreamExt};
use reqwest::Method;

use crate::error::{Error, Result};
use crate::models::Tag;
use crate::params::{TagParams, TagResource};
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::session::ApiVersion;
use crate::rest::writes::{json, require};

/// Most tags one `PUT /{kind}/tags/batch` may carry.
pub(crate) const MAX_TAGS_PER_BATCH: usize = 30;

/// Tag batches sent at the same time when a call holds more than one.
const TAG_BATCHES_IN_FLIGHT: usize = 8;

/// The first REST version with `/{kind}/tags`, from py-pure-client's per-version
/// clients (`FA_2_N/api`: `VolumesApi.api_volumes_tags_get` from `FA_2_2`,
/// hosts and host groups from `FA_2_34`, pods from `FA_2_39`; the simulator's
/// `sim/versions.rs` holds the whole table, checked against the SDK).
pub(crate) fn tags_since(kind: TagResource) -> ApiVersion {
    let minor = match kind {
        TagResource::Volume => 2,
        TagResource::Host | TagResource::HostGroup => 34,
        TagResource::Pod => 39,
    };
    ApiVersion { minor }
}

/// First version whose tag listings take `namespaces`.
const NAMESPACES_SINCE: ApiVersion = ApiVersion { minor: 3 };

/// Whether this session's array has `kind`'s tags.
async fn has_tags(array: &RestArray, kind: TagResource) -> Result<bool> {
    Ok(array.transport.session().await?.version >= tags_since(kind))
}

/// Refuses a tag write the array's version cannot take (nothing is sent).
async fn require_tags(array: &RestArray, kind: TagResource) -> Result<()> {
    if has_tags(array, kind).await? {
        return Ok(());
    }
    let version = array.transport.session().await?.version;
    Err(Error::Version(format!(
        "{} tags need REST {} or later; this array's session is at REST {version}",
        kind.collection(),
        tags_since(kind)
    )))
}

/// `GET /{kind}/tags`; empty, unasked, on an array older than [`tags_since`] (it
/// cannot hold such tags).
pub(super) async fn list(
    array: &RestArray,
    kind: TagResource,
    params: &TagParams,
) -> Result<Vec<Tag>> {
    if !has_tags(array, kind).await? {
        return Ok(Vec::new());
    }
    // `namespaces` came with REST 2.3 (the SDK's `FA_2_3` tag listings; `FA_2_2`
    // has none): below it every namespace is listed and the wanted ones are kept
    // here.
    let by_array = array.transport.session().await?.version >= NAMESPACES_SINCE;
    let mut q = Query::new()
        .csv("resource_names", &params.resource_names)
        .opt_flag("resource_destroyed", params.resource_destroyed);
    if by_array {
        q = q.csv("namespaces", &params.namespaces);
    }
    let tags: Vec<Tag> = array
        .transport
        .collect_pages(Pager::new(format!("{}/tags", kind.collection()), q, None))
        .await?;
    if by_array || params.namespaces.is_empty() {
        return Ok(tags);
    }
    Ok(tags
        .into_iter()
        .filter(|t| {
            t.namespace
                .as_ref()
                .is_some_and(|ns| params.namespaces.contains(ns))
        })
        .collect())
}

/// `PUT /{kind}/tags/batch`, in batches.
pub(super) async fn set(array: &RestArray, kind: TagResource, tags: &[Tag]) -> Result<Vec<Tag>> {
    require("set tags", tags)?;
    require_tags(array, kind).await?;
    // The array takes at most 30 tags per batch (Pure's SDK declares the body as
    // `conlist(Tag, max_items=30)`); larger sets go as several batches, a few at a
    // time.
    let batches: Vec<Vec<Tag>> = tags
        .chunks(MAX_TAGS_PER_BATCH)
        .map(<[Tag]>::to_vec)
        .collect();
    let answers: Vec<Result<Vec<Tag>>> = stream::iter(batches)
        .map(|batch| put_batch(array, kind, batch))
        .buffered(TAG_BATCHES_IN_FLIGHT)
        .collect()
        .await;
    let mut set = Vec::with_capacity(tags.len());
    for answer in answers {
        set.extend(answer?);
    }
    Ok(set)
}

/// `DELETE /{kind}/tags?resource_names=...&keys=...&namespaces=...`.
pub(super) async fn delete(
    array: &RestArray,
    kind: TagResource,
    resource_names: &[String],
    keys: &[String],
    namespaces: &[String],
) -> Result<()> {
    require("delete tags", resource_names)?;
    require("delete tags (keys)", keys)?;
    // An array without this kind's tags holds none to delete.
    if !has_tags(array, kind).await? {
        return Ok(());
    }
    let q = Query::new()
        .csv("resource_names", resource_names)
        .csv("keys", keys)
        .csv("namespaces", namespaces);
    array
        .transport
        .write(
            Method::DELETE,
            &format!("{}/tags", kind.collection()),
            q,
            None,
        )
        .await
        .map(drop)
}

/// One `PUT /{kind}/tags/batch` of at most [`MAX_TAGS_PER_BATCH`] tags.
async fn put_batch(array: &RestArray, kind: TagResource, tags: Vec<Tag>) -> Result<Vec<Tag>> {
    let resource = |t: &Tag| t.resource.name.clone().unwrap_or_default();
    if let Some(t) = tags.iter().find(|t| resource(t).is_empty()) {
        return Err(Error::InvalidRequest(format!(
            "set tags: tag {:?} names no object",
            t.key
        )));
    }
    let resources: BTreeSet<String> = tags.iter().map(resource).collect();
    let body: Vec<serde_json::Value> = tags
        .iter()
        .map(|t| {
            let mut o = serde_json::json!({
                "key": t.key,
                "value": t.value,
                "resource": {"name": resource(t)},
            });
            if let Some(ns) = &t.namespace {
                o["namespace"] = ns.clone().into();
            }
            if let Some(c) = t.copyable {
                o["copyable"] = c.into();
            }
            o
        })
        .collect();
    let resources: Vec<String> = resources.into_iter().collect();
    array
        .transport
        .write(
            Method::PUT,
            &format!("{}/tags/batch", kind.collection()),
            Query::new().csv("resource_names", &resources),
            Some(json(&body)?),
        )
        .await?
        .items()
}
