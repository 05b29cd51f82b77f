//! `/{kind}/tags`: list, set in batches, delete.

use std::collections::BTreeSet;

use futures_util::stream::{self, StreamExt};
use reqwest::Method;

use crate::error::{Error, Result};
use crate::models::Tag;
use crate::params::{TagParams, TagResource};
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::reconcile::{Verdict, json, require, same_opt, split};

/// Most tags one `PUT /{kind}/tags/batch` may carry.
pub const MAX_TAGS_PER_BATCH: usize = 30;

/// Tag batches sent at the same time when a call holds more than one.
const TAG_BATCHES_IN_FLIGHT: usize = 8;

/// `GET /{kind}/tags`.
pub(super) async fn list(
    array: &RestArray,
    kind: TagResource,
    params: &TagParams,
) -> Result<Vec<Tag>> {
    let q = Query::new()
        .csv("resource_names", &params.resource_names)
        .csv("namespaces", &params.namespaces)
        .opt_flag("resource_destroyed", params.resource_destroyed);
    array
        .transport
        .collect_pages(Pager::new(format!("{}/tags", kind.collection()), q, None))
        .await
}

/// Lost answer: tags the array now shows with the asked value are done; the others
/// are put again (a tag put is an overwrite, so this cannot double up).
pub(super) async fn set(array: &RestArray, kind: TagResource, tags: &[Tag]) -> Result<Vec<Tag>> {
    require("set tags", tags)?;
    // The array takes at most 30 tags per batch (Pure's SDK declares the body as
    // `conlist(Tag, max_items=30)`); larger sets go as several batches, a few at a
    // time. Tags are upserts, so a batch that fails can simply be sent again.
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

/// Lost answer: objects that no longer carry any of the keys are done; the others
/// are sent again.
pub(super) async fn delete(
    array: &RestArray,
    kind: TagResource,
    resource_names: &[String],
    keys: &[String],
    namespaces: &[String],
) -> Result<()> {
    require("delete tags", resource_names)?;
    require("delete tags (keys)", keys)?;
    let path = format!("{}/tags", kind.collection());
    let path = &path;
    array
        .settle(
            "DELETE tags",
            resource_names.to_vec(),
            |pending| {
                Box::pin(async move {
                    array
                        .transport
                        .write(
                            Method::DELETE,
                            path,
                            Query::new()
                                .csv("resource_names", &pending)
                                .csv("keys", keys)
                                .csv("namespaces", namespaces),
                            None,
                        )
                        .await
                        .map(|_| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let existing = list(
                        array,
                        kind,
                        &TagParams {
                            resource_names: pending.clone(),
                            namespaces: namespaces.to_vec(),
                            ..Default::default()
                        },
                    )
                    .await?;
                    let (rest, done): (Vec<String>, Vec<String>) =
                        pending.into_iter().partition(|r| {
                            existing.iter().any(|e| {
                                same_opt(e.resource.name.as_deref(), Some(r))
                                    && keys.contains(&e.key)
                            })
                        });
                    Ok(split(done.len(), rest))
                })
            },
        )
        .await
        .map(drop)
}

/// One `PUT /{kind}/tags/batch` of at most [`MAX_TAGS_PER_BATCH`] tags.
async fn put_batch(array: &RestArray, kind: TagResource, tags: Vec<Tag>) -> Result<Vec<Tag>> {
    let path = format!("{}/tags/batch", kind.collection());
    let path = &path;
    let resource = |t: &Tag| t.resource.name.clone().unwrap_or_default();
    if let Some(t) = tags.iter().find(|t| resource(t).is_empty()) {
        return Err(Error::InvalidRequest(format!(
            "set tags: tag {:?} names no object",
            t.key
        )));
    }
    array
        .settle(
            "PUT tags",
            tags,
            |pending| {
                Box::pin(async move {
                    let resources: BTreeSet<String> = pending.iter().map(resource).collect();
                    let body: Vec<serde_json::Value> = pending
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
                            path,
                            Query::new().csv("resource_names", &resources),
                            Some(json(&body)?),
                        )
                        .await?
                        .items()
                })
            },
            |pending| {
                Box::pin(async move {
                    let resources: BTreeSet<String> = pending.iter().map(resource).collect();
                    let existing = list(
                        array,
                        kind,
                        &TagParams {
                            resource_names: resources.into_iter().collect(),
                            ..Default::default()
                        },
                    )
                    .await?;
                    let (done, rest): (Vec<Tag>, Vec<Tag>) = pending.into_iter().partition(|t| {
                        existing.iter().any(|e| {
                            same_opt(e.resource.name.as_deref(), t.resource.name.as_deref())
                                && e.namespace == t.namespace
                                && e.key == t.key
                                && e.value == t.value
                        })
                    });
                    Ok(Verdict::Known {
                        done,
                        pending: rest,
                    })
                })
            },
        )
        .await
}
