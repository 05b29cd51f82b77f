//! `/host-groups`: list, create, delete. Renaming (PATCH) is not part of the
//! trait, so it is refused with a 400 that says so.

use flasharray::HostGroupName;
use flasharray::models::HostGroupPost;
use hyper::Method;

use super::Call;
use super::volumes::{list_params, list_query_params};
use crate::paging::PageRequest;
use crate::response::{Fail, Reply, bad_request};

pub(super) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.method {
        Method::GET => {
            call.query.only(&list_query_params())?;
            call.no_ids("ids")?;
            let page = PageRequest::from_query("host-groups", &call.query)?;
            let groups = call
                .state
                .array
                .list_host_groups(&list_params(call)?)
                .await?;
            Ok(page.reply(&groups, None))
        }
        Method::POST => {
            call.query.only(&["names"])?;
            let names: Vec<HostGroupName> = call.required_names("names")?;
            // The real HostGroupPost also has qos, which is not modelled.
            let body: HostGroupPost = call.body(&["tags"])?;
            Ok(Reply::items(
                &call.state.array.create_host_groups(&names, &body).await?,
            ))
        }
        Method::DELETE => {
            call.query.only(&["names"])?;
            let names: Vec<HostGroupName> = call.required_names("names")?;
            call.state.array.delete_host_groups(&names).await?;
            Ok(Reply::empty())
        }
        Method::PATCH => Err(bad_request(
            None,
            "Changing host groups (PATCH /host-groups) is not supported by the simulator.",
        )),
        _ => Err(call.method_not_allowed()),
    }
}
