//! `/host-groups` and `/host-groups/hosts`: list, create (with creation tags),
//! delete, and membership.

use reqwest::Method;

use crate::error::{Error, Result};
use crate::models::{HostGroup, HostGroupPost, Member};
use crate::name::{HostGroupName, HostName};
use crate::params::{ListParams, MemberParams};
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::reconcile::{Verdict, json, require, same_opt, split, strings};

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

/// Lost answer: a group that now exists (with the asked tags, when they went in the
/// body) is done; one without them is undecided.
pub(super) async fn create(
    array: &RestArray,
    names: &[HostGroupName],
    body: &HostGroupPost,
) -> Result<Vec<HostGroup>> {
    require("create host groups", names)?;
    array
        .create_tagged(
            strings(names),
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
            |_: &HostGroup| true,
            "exists",
        )
        .await
}

/// Lost answer: a group that no longer exists is done.
pub(super) async fn delete(array: &RestArray, names: &[HostGroupName]) -> Result<()> {
    require("delete host groups", names)?;
    array
        .delete_until_gone::<HostGroup>(strings(names), None)
        .await
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

/// Every member of `group`, for re-reads.
async fn members_of(array: &RestArray, group: &HostGroupName) -> Result<Vec<Member>> {
    list_members(
        array,
        &MemberParams {
            group_names: vec![group.to_string()],
            member_names: Vec::new(),
        },
    )
    .await
}

fn member_query(group: &HostGroupName, hosts: &[String]) -> Query {
    Query::new()
        .csv("group_names", &[group.as_str()])
        .csv("member_names", hosts)
}

/// Lost answer: hosts now listed in the group are done; the others are added again.
pub(super) async fn add_members(
    array: &RestArray,
    group: &HostGroupName,
    hosts: &[HostName],
) -> Result<Vec<Member>> {
    require("add host group members", hosts)?;
    array
        .settle(
            "POST host-groups/hosts",
            strings(hosts),
            |pending| {
                Box::pin(async move {
                    array
                        .transport
                        .write(
                            Method::POST,
                            "host-groups/hosts",
                            member_query(group, &pending),
                            None,
                        )
                        .await?
                        .items()
                })
            },
            |pending| {
                Box::pin(async move {
                    let members = members_of(array, group).await?;
                    let mut done = Vec::new();
                    let mut rest = Vec::new();
                    for n in pending {
                        match members
                            .iter()
                            .find(|m| same_opt(m.member.name.as_deref(), Some(&n)))
                        {
                            Some(m) => done.push(m.clone()),
                            None => rest.push(n),
                        }
                    }
                    Ok(Verdict::Known {
                        done,
                        pending: rest,
                    })
                })
            },
        )
        .await
}

/// Lost answer: hosts no longer in the group are done.
pub(super) async fn remove_members(
    array: &RestArray,
    group: &HostGroupName,
    hosts: &[HostName],
) -> Result<()> {
    require("remove host group members", hosts)?;
    array
        .settle(
            "DELETE host-groups/hosts",
            strings(hosts),
            |pending| {
                Box::pin(async move {
                    array
                        .transport
                        .write(
                            Method::DELETE,
                            "host-groups/hosts",
                            member_query(group, &pending),
                            None,
                        )
                        .await
                        .map(|_| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let members = members_of(array, group).await?;
                    let (rest, done): (Vec<String>, Vec<String>) =
                        pending.into_iter().partition(|n| {
                            members
                                .iter()
                                .any(|m| same_opt(m.member.name.as_deref(), Some(n)))
                        });
                    Ok(split(done.len(), rest))
                })
            },
        )
        .await
        .map(drop)
}
