//! `/hosts`: list, create (initiators, personality), patch (initiators, host
//! group, rename), delete.

use flasharray::HostName;
use flasharray::models::{HostPatch, HostPost};
use hyper::Method;

use super::Call;
use super::volumes::{list_params, list_query_params};
use crate::paging::PageRequest;
use crate::response::{Fail, Reply};

pub(super) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.method {
        Method::GET => {
            call.query.only(&list_query_params())?;
            call.no_ids("ids")?;
            let page = PageRequest::from_query("hosts", &call.query)?;
            let hosts = call.state.array.list_hosts(&list_params(call)?).await?;
            Ok(page.reply(&hosts, None))
        }
        Method::POST => {
            call.query.only(&["names"])?;
            let names: Vec<HostName> = call.required_names("names")?;
            let body: HostPost = call.body(&["iqns", "nqns", "wwns", "personality", "tags"])?;
            Ok(Reply::items(
                &call.state.array.create_hosts(&names, &body).await?,
            ))
        }
        Method::PATCH => {
            call.query.only(&["names"])?;
            let names: Vec<HostName> = call.required_names("names")?;
            let patch: HostPatch = call.body(&[
                "name",
                "iqns",
                "nqns",
                "wwns",
                "add_iqns",
                "add_nqns",
                "add_wwns",
                "remove_iqns",
                "remove_nqns",
                "remove_wwns",
                "host_group",
                "personality",
            ])?;
            Ok(Reply::items(
                &call.state.array.patch_hosts(&names, &patch).await?,
            ))
        }
        Method::DELETE => {
            call.query.only(&["names"])?;
            let names: Vec<HostName> = call.required_names("names")?;
            call.state.array.delete_hosts(&names).await?;
            Ok(Reply::empty())
        }
        _ => Err(call.method_not_allowed()),
    }
}
