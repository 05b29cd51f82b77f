//! `/pods` and `/pods/arrays`: list, create (with creation tags), patch (destroy,
//! recover, quota, rename), eradicate.

use crate::error::Result;
use crate::models::{Member, Pod, PodPatch, PodPost};
use crate::name::PodName;
use crate::params::ListParams;
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::reconcile::{json, require, strings};

/// `GET /pods`.
pub(super) async fn list(array: &RestArray, params: &ListParams) -> Result<Vec<Pod>> {
    array
        .transport
        .collect_pages(Pager::for_list("pods", params))
        .await
}

/// Lost answer: a live pod with the asked quota is done; an absent one is created
/// again; anything else is undecided.
pub(super) async fn create(
    array: &RestArray,
    names: &[PodName],
    body: &PodPost,
) -> Result<Vec<Pod>> {
    require("create pods", names)?;
    array
        .create_tagged(
            strings(names),
            &body.tags,
            |tags| {
                json(&PodPost {
                    tags: tags.to_vec(),
                    ..body.clone()
                })
                .map(Some)
            },
            |p: &Pod| !p.destroyed && body.quota_limit.is_none_or(|q| p.quota_limit == Some(q)),
            "exists but is not the one asked for",
        )
        .await
}

/// Lost answer: a pod showing the requested values (under its new name after a
/// rename) is done; an unchanged one is patched again.
pub(super) async fn patch(
    array: &RestArray,
    names: &[PodName],
    patch: &PodPatch,
    destroy_contents: bool,
) -> Result<Vec<Pod>> {
    require("patch pods", names)?;
    array
        .patch_renaming(
            strings(names),
            patch.name.is_some(),
            json(patch)?,
            destroy_contents.then_some("destroy_contents"),
            |n| patch.name.clone().unwrap_or_else(|| n.to_string()),
            |p: &Pod| {
                patch.destroyed.is_none_or(|d| d == p.destroyed)
                    && patch.quota_limit.is_none_or(|q| p.quota_limit == Some(q))
            },
        )
        .await
}

/// Lost answer: a pod that no longer exists is done.
pub(super) async fn eradicate(
    array: &RestArray,
    names: &[PodName],
    eradicate_contents: bool,
) -> Result<()> {
    require("eradicate pods", names)?;
    array
        .delete_until_gone::<Pod>(
            strings(names),
            eradicate_contents.then_some("eradicate_contents"),
        )
        .await
}

/// `GET /pods/arrays`.
pub(super) async fn list_arrays(array: &RestArray, pods: &[PodName]) -> Result<Vec<Member>> {
    let q = Query::new().csv("group_names", &strings(pods));
    array
        .transport
        .collect_pages(Pager::new("pods/arrays", q, None))
        .await
}
