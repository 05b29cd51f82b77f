//! `/pods` and `/pods/arrays`: list, create (with creation tags), patch (destroy,
//! recover, quota, rename), eradicate.

use reqwest::Method;

use crate::error::Result;
use crate::models::{Member, Pod, PodPatch, PodPost};
use crate::name::PodName;
use crate::params::{ListParams, TagResource};
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::writes::{json, one_if_renamed, require, strings};

/// `GET /pods`.
pub(super) async fn list(array: &RestArray, params: &ListParams) -> Result<Vec<Pod>> {
    array
        .transport
        .collect_pages(Pager::for_list("pods", params))
        .await
}

/// `POST /pods?names=...`.
pub(super) async fn create(
    array: &RestArray,
    names: &[PodName],
    body: &PodPost,
) -> Result<Vec<Pod>> {
    require("create pods", names)?;
    array
        .create_tagged(TagResource::Pod, &strings(names), &body.tags, |tags| {
            json(&PodPost {
                tags: tags.to_vec(),
                ..body.clone()
            })
            .map(Some)
        })
        .await
}

/// `PATCH /pods?names=...[&destroy_contents=true]`; a rename names one pod.
pub(super) async fn patch(
    array: &RestArray,
    names: &[PodName],
    patch: &PodPatch,
    destroy_contents: bool,
) -> Result<Vec<Pod>> {
    require("patch pods", names)?;
    one_if_renamed("patch pods", "pod", names, patch.name.is_some())?;
    array
        .named_write(
            Method::PATCH,
            "pods",
            &strings(names),
            destroy_contents.then_some("destroy_contents"),
            Some(json(patch)?),
        )
        .await
}

/// `DELETE /pods?names=...[&eradicate_contents=true]`.
pub(super) async fn eradicate(
    array: &RestArray,
    names: &[PodName],
    eradicate_contents: bool,
) -> Result<()> {
    require("eradicate pods", names)?;
    array
        .named_write::<()>(
            Method::DELETE,
            "pods",
            &strings(names),
            eradicate_contents.then_some("eradicate_contents"),
            None,
        )
        .await
        .map(drop)
}

/// `GET /pods/arrays`.
pub(super) async fn list_arrays(array: &RestArray, pods: &[PodName]) -> Result<Vec<Member>> {
    let q = Query::new().csv("group_names", &strings(pods));
    array
        .transport
        .collect_pages(Pager::new("pods/arrays", q, None))
        .await
}
