//! `/host-groups` and `/host-groups/hosts`: list, create (with creation tags),
//! delete, and membership.

use reqwest::Method;

use crate::error::{Error, Result};
use crate::models::{HostGroup, HostGroupPost, Member};
use crate::name::{HostGroupName, HostName};
use crate::params::{ListParams, MemberParams, TagResource};
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::writes::{json, require, strings};

/// `GET /host-groups`; host groups have no ids.
pub(super) async fn list(array: &RestArray, params: &ListParams) -> Result<Vec<HostGroup>> {
    if !params.ids.is_empty() {
        return Err(Error::InvalidRequest(
            "host groups have no ids; select by name".into(),
        ));
    }
    array
        .transport
        .collect_pages(Pager::for_list("host-groups", params))
        .await
}

/// `POST /host-groups?names=...`.
pub(super) async fn create(
    array: &RestArray,
    names: &[HostGroupName],
    body: &HostGroupPost,
) -> Result<Vec<HostGroup>> {
    require("create host groups", names)?;
    array
        .create_tagged(
            TagResource::HostGroup,
            &strings(names),
            &body.tags,
            // An empty body stays absent, as arrays before 2.39 expect.
            |tags| {
                if tags.is_empty() {
                    Ok(None)
                } else {
                    json(&HostGroupPost {
                        tags: tags.to_vec(),
                    })
                    .map(Some)
                }
            },
        )
        .await
}

/// `DELETE /host-groups?names=...`.
pub(super) async fn delete(array: &RestArray, names: &[HostGroupName]) -> Result<()> {
    require("delete host groups", names)?;
    array
        .named_write::<()>(Method::DELETE, "host-groups", &strings(names), None, None)
        .await
        .map(drop)
}

/// `GET /host-groups/hosts`.
pub(super) async fn list_members(array: &RestArray, params: &MemberParams) -> Result<Vec<Member>> {
    let q = Query::new()
        .csv("group_names", &params.group_names)
        .csv("member_names", &params.member_names);
    array
        .transport
        .collect_pages(Pager::new("host-groups/hosts", q, None))
        .await
}

fn member_query(group: &HostGroupName, hosts: &[HostName]) -> Query {
    Query::new()
        .csv("group_names", &[group.as_str()])
        .csv("member_names", hosts)
}

/// `POST /host-groups/hosts?group_names=...&member_names=...`.
pub(super) async fn add_members(
    array: &RestArray,
    group: &HostGroupName,
    hosts: &[HostName],
) -> Result<Vec<Member>> {
    require("add host group members", hosts)?;
    array
        .transport
        .write(
            Method::POST,
            "host-groups/hosts",
            member_query(group, hosts),
            None,
        )
        .await?
        .items()
}

/// `DELETE /host-groups/hosts?group_names=...&member_names=...`.
pub(super) async fn remove_members(
    array: &RestArray,
    group: &HostGroupName,
    hosts: &[HostName],
) -> Result<()> {
    require("remove host group members", hosts)?;
    array
        .transport
        .write(
            Method::DELETE,
            "host-groups/hosts",
            member_query(group, hosts),
            None,
        )
        .await
        .map(drop)
}
