//! `/volumes`: list, stream, create (with creation tags), batch create (per-volume
//! sizes and tags), patch (resize, rename, move, destroy, recover) and eradicate.

use std::collections::BTreeMap;

use futures_util::future::try_join_all;
use futures_util::stream::BoxStream;
use reqwest::Method;

use crate::FlashArray;
use crate::error::Result;
use crate::ext::{FlashArrayExt, MAX_NAMES_PER_CALL, find};
use crate::models::{NameRef, Tag, Volume, VolumeBatchPost, VolumePatch, VolumePost};
use crate::name::VolumeName;
use crate::params::{ListParams, TagParams, TagResource};
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::reconcile::{Verdict, has_tags, json, require, strings};
// What a volume is called and shows after a patch: one rule, settle's.
use crate::rest::session::ApiVersion;
use crate::settle::{volume_matches as matches, volume_name_after as name_after};

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

/// Lost answer: names that now exist, live and of the asked size, are done; absent
/// names are created again; a same-named volume of another size or destroyed is
/// undecided.
pub(super) async fn create(
    array: &RestArray,
    names: &[VolumeName],
    body: &VolumePost,
) -> Result<Vec<Volume>> {
    require("create volumes", names)?;
    array
        .create_tagged(
            strings(names),
            &body.tags,
            |tags| {
                json(&VolumePost {
                    tags: tags.to_vec(),
                    ..body.clone()
                })
                .map(Some)
            },
            |v: &Volume| !v.destroyed && body.provisioned.is_none_or(|p| p == v.provisioned),
            "exists but is not the one asked for",
        )
        .await
}

/// `POST /volumes/batch` from REST 2.32 (chunks of [`MAX_NAMES_PER_CALL`] items, sent
/// one after another so that a refusal stops the rest), else [`create_grouped`].
///
/// Lost answer: an item whose volume now exists, live, of its size and with its
/// tags is done; absent items are sent again; anything else is undecided.
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
        let body = &json(chunk)?;
        let mut made = array
            .settle(
                "POST volumes/batch",
                chunk.to_vec(),
                |pending| {
                    Box::pin(async move {
                        let body = if pending.len() == chunk.len() {
                            body.clone()
                        } else {
                            json(&pending)?
                        };
                        array
                            .transport
                            .write(Method::POST, "volumes/batch", Query::new(), Some(body))
                            .await?
                            .items()
                    })
                },
                |pending| Box::pin(settled(array, pending)),
            )
            .await?;
        created.append(&mut made);
    }
    Ok(created)
}

/// Which items of a lost batch the array already shows complete.
async fn settled(
    array: &RestArray,
    pending: Vec<VolumeBatchPost>,
) -> Result<Verdict<VolumeBatchPost, Volume>> {
    let names: Vec<String> = pending.iter().map(|i| i.name.to_string()).collect();
    let found = array.lookup_volumes(&names).await?;
    let have = if found.is_empty() {
        Vec::new()
    } else {
        array
            .list_tags(
                TagResource::Volume,
                &TagParams {
                    resource_names: found.iter().map(|v| v.name.clone()).collect(),
                    ..Default::default()
                },
            )
            .await?
    };
    let mut done = Vec::new();
    let mut rest = Vec::new();
    for item in pending {
        match find(&found, item.name.as_str()) {
            Some(v)
                if !v.destroyed
                    && item.provisioned.is_none_or(|p| p == v.provisioned)
                    && has_tags(&have, &v.name, &item.tags) =>
            {
                done.push(v.clone())
            }
            Some(_) => {
                return Ok(Verdict::Undecided(format!(
                    "volume {} exists but is not the one asked for",
                    item.name
                )));
            }
            None => rest.push(item),
        }
    }
    Ok(Verdict::Known {
        done,
        pending: rest,
    })
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

/// Lost answer: a volume that shows every requested value (under its new name after
/// a rename or move) is done; one still unchanged under its old name is patched
/// again; anything else is undecided.
pub(super) async fn patch(
    array: &RestArray,
    names: &[VolumeName],
    patch: &VolumePatch,
    truncate: bool,
) -> Result<Vec<Volume>> {
    require("patch volumes", names)?;
    array
        .patch_renaming(
            strings(names),
            patch.name.is_some(),
            json(patch)?,
            truncate.then_some("truncate"),
            |n| name_after(n, patch),
            |v: &Volume| matches(v, patch),
        )
        .await
}

/// Lost answer: a volume that no longer exists is done; one still listed is
/// eradicated again.
pub(super) async fn eradicate(array: &RestArray, names: &[VolumeName]) -> Result<()> {
    require("eradicate volumes", names)?;
    array
        .delete_until_gone::<Volume>(strings(names), None)
        .await
}

/// `""` in a move means "out of any pod/group".
pub(super) fn target_ref(r: &NameRef) -> Option<&str> {
    r.name.as_deref().filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_after_renames_and_moves() {
        let p = |name: Option<&str>, pod: Option<&str>| VolumePatch {
            name: name.map(str::to_string),
            pod: pod.map(NameRef::new),
            ..Default::default()
        };
        assert_eq!(name_after("v1", &p(Some("v2"), None)), "v2");
        assert_eq!(name_after("pod1::v1", &p(Some("v2"), None)), "pod1::v2");
        assert_eq!(name_after("v1", &p(None, Some("pod2"))), "pod2::v1");
        assert_eq!(name_after("pod1::v1", &p(None, Some(""))), "v1");
        assert_eq!(name_after("pod1::v1", &p(None, None)), "pod1::v1");
    }
}
