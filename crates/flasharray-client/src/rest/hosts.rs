//! `/hosts`: list, create (with creation tags), patch (initiators, host group,
//! personality, rename) and delete.

use reqwest::Method;

use crate::error::{Error, Result};
use crate::models::{Host, HostPatch, HostPost};
use crate::name::HostName;
use crate::params::{ListParams, TagResource};
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::writes::{json, one_if_renamed, require, strings};

/// `GET /hosts`; hosts have no ids.
pub(super) async fn list(array: &RestArray, params: &ListParams) -> Result<Vec<Host>> {
    if !params.ids.is_empty() {
        return Err(Error::InvalidRequest(
            "hosts have no ids; select by name".into(),
        ));
    }
    array
        .transport
        .collect_pages(Pager::for_list("hosts", params))
        .await
}

/// `POST /hosts?names=...`.
pub(super) async fn create(
    array: &RestArray,
    names: &[HostName],
    body: &HostPost,
) -> Result<Vec<Host>> {
    require("create hosts", names)?;
    array
        .create_tagged(TagResource::Host, &strings(names), &body.tags, |tags| {
            json(&HostPost {
                tags: tags.to_vec(),
                ..body.clone()
            })
            .map(Some)
        })
        .await
}

/// `PATCH /hosts?names=...`; a rename names one host.
pub(super) async fn patch(
    array: &RestArray,
    names: &[HostName],
    patch: &HostPatch,
) -> Result<Vec<Host>> {
    require("patch hosts", names)?;
    one_if_renamed("patch hosts", "host", names, patch.name.is_some())?;
    array
        .named_write(
            Method::PATCH,
            "hosts",
            &strings(names),
            None,
            Some(json(patch)?),
        )
        .await
}

/// `DELETE /hosts?names=...`.
pub(super) async fn delete(array: &RestArray, names: &[HostName]) -> Result<()> {
    require("delete hosts", names)?;
    array
        .named_write::<()>(Method::DELETE, "hosts", &strings(names), None, None)
        .await
        .map(drop)
}
