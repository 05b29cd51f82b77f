//! `/volumes`: list, stream, create (with creation tags), batch create (per-volume
//! sizes and tags), patch (resize, rename, move, destroy, recover) and eradicate.

use std::collections::BTreeMap;

use futures_util::future::try_join_all;
use futures_util::stream::BoxStream;
use reqwest::Method;

use crate::FlashArray;
use crate::error::Result;
use crate::ext::{MAX_NAMES_PER_CALL, find};
use crate::models::{Tag, Volume, VolumeBatchPost, VolumePatch, VolumePost};
use crate::name::VolumeName;
use crate::params::{ListParams, TagResource};
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::session::ApiVersion;
use crate::rest::writes::{json, one_if_renamed, require, strings};

/// `GET /volumes`.
pub(super) async fn list(array: &RestArray, params: &ListParams) -> Result<Vec<Volume>> {
    array
        .transport
        .collect_pages(Pager::for_list("volumes", params))
        .await
}

/// `GET /volumes`, one page in memory at a time.
pub(super) fn stream(array: &RestArray, params: ListParams) -> BoxStream<'_, Result<Volume>> {
    array
        .transport
        .page_stream(Pager::for_list("volumes", &params))
}

/// `POST /volumes?names=...`.
pub(super) async fn create(
    array: &RestArray,
    names: &[VolumeName],
    body: &VolumePost,
) -> Result<Vec<Volume>> {
    require("create volumes", names)?;
    array
        .create_tagged(TagResource::Volume, &strings(names), &body.tags, |tags| {
            json(&VolumePost {
                tags: tags.to_vec(),
                ..body.clone()
            })
            .map(Some)
        })
        .await
}

/// `POST /volumes/batch` from REST 2.32 (chunks of [`MAX_NAMES_PER_CALL`] items, sent
/// one after another so that a refusal stops the rest), else [`create_grouped`].
pub(super) async fn create_batch(
    array: &RestArray,
    items: &[VolumeBatchPost],
) -> Result<Vec<Volume>> {
    require("create volumes", items)?;
    if array.transport.session().await?.version < ApiVersion::VOLUME_BATCH {
        return create_grouped(array, items).await;
    }
    let mut created = Vec::with_capacity(items.len());
    for chunk in items.chunks(MAX_NAMES_PER_CALL) {
        let reply = array
            .transport
            .write(
                Method::POST,
                "volumes/batch",
                Query::new(),
                Some(json(chunk)?),
            )
            .await?;
        created.append(&mut reply.items()?);
    }
    Ok(created)
}

/// Before 2.32 (so before tags in create bodies too): one `POST /volumes` per size,
/// concurrently, then the items' tags in `PUT /volumes/tags/batch`. Same end state
/// as the batch in one more round; a process killed in between leaves untagged
/// volumes, which the next plan reports (see the module docs of `rest`).
async fn create_grouped(array: &RestArray, items: &[VolumeBatchPost]) -> Result<Vec<Volume>> {
    let mut groups: BTreeMap<Option<u64>, Vec<VolumeName>> = BTreeMap::new();
    for item in items {
        groups
            .entry(item.provisioned)
            .or_default()
            .push(item.name.clone());
    }
    let calls = groups.iter().map(|(provisioned, names)| async move {
        let body = VolumePost {
            provisioned: *provisioned,
            ..Default::default()
        };
        create(array, names, &body).await
    });
    let made: Vec<Volume> = try_join_all(calls).await?.into_iter().flatten().collect();
    let tags: Vec<Tag> = items
        .iter()
        .flat_map(|i| i.tags.iter().map(|t| t.on(i.name.to_string())))
        .collect();
    if !tags.is_empty() {
        array.set_tags(TagResource::Volume, &tags).await?;
    }
    // Answer in request order, as the batch does.
    Ok(items
        .iter()
        .filter_map(|i| find(&made, i.name.as_str()).cloned())
        .collect())
}

/// `PATCH /volumes?names=...[&truncate=true]`; a rename names one volume.
pub(super) async fn patch(
    array: &RestArray,
    names: &[VolumeName],
    patch: &VolumePatch,
    truncate: bool,
) -> Result<Vec<Volume>> {
    require("patch volumes", names)?;
    one_if_renamed("patch volumes", "volume", names, patch.name.is_some())?;
    array
        .named_write(
            Method::PATCH,
            "volumes",
            &strings(names),
            truncate.then_some("truncate"),
            Some(json(patch)?),
        )
        .await
}

/// `DELETE /volumes?names=...`.
pub(super) async fn eradicate(array: &RestArray, names: &[VolumeName]) -> Result<()> {
    require("eradicate volumes", names)?;
    array
        .named_write::<()>(Method::DELETE, "volumes", &strings(names), None, None)
        .await
        .map(drop)
}
