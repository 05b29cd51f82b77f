//! Membership endpoints: `/host-groups/hosts` (also reachable as
//! `/hosts/host-groups`, as on the array) and `/pods/arrays`.

use flasharray::{HostGroupName, HostName, MemberParams, PodName};
use hyper::Method;

use super::Call;
use crate::paging::{PAGING_PARAMS, PageRequest};
use crate::response::{Fail, Reply, bad_request};

fn member_query_params() -> Vec<&'static str> {
    let mut v = vec!["group_names", "member_names"];
    v.extend_from_slice(PAGING_PARAMS);
    v
}

pub(super) async fn host_group_hosts(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.method {
        Method::GET => {
            call.query.only(&member_query_params())?;
            let page = PageRequest::from_query("host-groups/hosts", &call.query)?;
            let params = MemberParams {
                group_names: call.query.csv("group_names"),
                member_names: call.query.csv("member_names"),
            };
            let members = call.state.array.list_host_group_members(&params).await?;
            Ok(page.reply(&members, None))
        }
        Method::POST => {
            call.query.only(&["group_names", "member_names"])?;
            let group: HostGroupName = call.single_name("group_names")?;
            let hosts: Vec<HostName> = call.required_names("member_names")?;
            Ok(Reply::items(
                &call
                    .state
                    .array
                    .add_host_group_members(&group, &hosts)
                    .await?,
            ))
        }
        Method::DELETE => {
            call.query.only(&["group_names", "member_names"])?;
            let group: HostGroupName = call.single_name("group_names")?;
            let hosts: Vec<HostName> = call.required_names("member_names")?;
            call.state
                .array
                .remove_host_group_members(&group, &hosts)
                .await?;
            Ok(Reply::empty())
        }
        _ => Err(call.method_not_allowed()),
    }
}

pub(super) async fn pod_arrays(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.method {
        Method::GET => {
            call.query.only(&member_query_params())?;
            if call.query.has("member_names") {
                return Err(bad_request(
                    Some("member_names"),
                    "Filtering /pods/arrays by member_names is not supported by the simulator.",
                ));
            }
            let page = PageRequest::from_query("pods/arrays", &call.query)?;
            let pods: Vec<PodName> = call.names("group_names")?;
            let members = call.state.array.list_pod_arrays(&pods).await?;
            Ok(page.reply(&members, None))
        }
        Method::POST | Method::DELETE => Err(bad_request(
            None,
            "Stretching and unstretching pods is not supported by the simulator (single array).",
        )),
        _ => Err(call.method_not_allowed()),
    }
}
