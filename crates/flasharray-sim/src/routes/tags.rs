//! `/{volumes,hosts,host-groups,pods}/tags` and `.../tags/batch`.

use flasharray::models::{Reference, Tag};
use flasharray::{TagParams, TagResource};
use hyper::Method;

use super::Call;
use crate::paging::{PAGING_PARAMS, PageRequest};
use crate::response::{Fail, Reply, bad_request};

/// Tags per batch, as Pure's SDK enforces (`max_items=30`).
const MAX_BATCH: usize = 30;

pub(super) async fn tags(call: &Call<'_>, kind: TagResource) -> Result<Reply, Fail> {
    call.no_ids("resource_ids")?;
    match call.method {
        Method::GET => {
            let mut allowed = vec!["resource_names", "namespaces", "resource_destroyed"];
            allowed.extend_from_slice(PAGING_PARAMS);
            call.query.only(&allowed)?;
            let page =
                PageRequest::from_query(&format!("{}/tags", kind.collection()), &call.query)?;
            let params = TagParams {
                resource_names: call.query.csv("resource_names"),
                namespaces: call.query.csv("namespaces"),
                resource_destroyed: call.query.bool("resource_destroyed")?,
            };
            let tags = call.state.array.list_tags(kind, &params).await?;
            Ok(page.reply(&tags, None))
        }
        Method::DELETE => {
            call.query.only(&["resource_names", "keys", "namespaces"])?;
            let resources = call.query.csv("resource_names");
            if resources.is_empty() {
                return Err(bad_request(
                    Some("resource_names"),
                    "Parameter \"resource_names\" is required.",
                ));
            }
            let keys = call.query.csv("keys");
            if keys.is_empty() {
                return Err(bad_request(Some("keys"), "Parameter \"keys\" is required."));
            }
            call.state
                .array
                .delete_tags(kind, &resources, &keys, &call.query.csv("namespaces"))
                .await?;
            Ok(Reply::empty())
        }
        _ => Err(call.method_not_allowed()),
    }
}

pub(super) async fn batch(call: &Call<'_>, kind: TagResource) -> Result<Reply, Fail> {
    call.no_ids("resource_ids")?;
    if call.method != Method::PUT {
        return Err(call.method_not_allowed());
    }
    call.query.only(&["resource_names"])?;
    let resources = call.query.csv("resource_names");
    let body: Vec<Tag> = call.body_list()?;
    if body.is_empty() || body.len() > MAX_BATCH {
        return Err(bad_request(
            None,
            format!("A tag batch must hold 1 to {MAX_BATCH} tags."),
        ));
    }
    let mut tags = Vec::new();
    for tag in body {
        if tag.key.is_empty() {
            return Err(bad_request(Some("key"), "Every tag needs a key."));
        }
        match (&tag.resource.name, resources.is_empty()) {
            (Some(_), _) => tags.push(tag),
            (None, false) => {
                for name in &resources {
                    tags.push({
                        let mut tag_model = tag.clone();
                        tag_model.resource = Reference::named(name.clone());
                        tag_model
                    });
                }
            }
            (None, true) => {
                return Err(bad_request(
                    Some("resource_names"),
                    format!(
                        "Tag {:?} names no resource: give resource_names or resource.name.",
                        tag.key
                    ),
                ));
            }
        }
    }
    Ok(Reply::items(&call.state.array.set_tags(kind, &tags).await?))
}
