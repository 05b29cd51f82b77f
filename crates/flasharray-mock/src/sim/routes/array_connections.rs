//! `/array-connections`: replication links to other arrays. The simulated array is
//! stand-alone, so the list is empty; `purefa_pod` and `purefa_host` list it before
//! touching pods and hosts, and `purefa_info` reports it. Creating a connection is
//! refused with the error an array gives when the remote cannot be reached, rather
//! than pretending to have linked.

use hyper::Method;
use serde_json::Value;

use super::Call;
use crate::sim::paging::{PAGING_PARAMS, PageRequest};
use crate::sim::response::{Fail, Reply, bad_request};

pub(super) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.method {
        Method::GET => {
            let mut allowed = vec![
                "names",
                "ids",
                "filter",
                "sort",
                "remote_names",
                "remote_ids",
            ];
            allowed.extend_from_slice(PAGING_PARAMS);
            call.query.only(&allowed)?;
            let page = PageRequest::from_query("array-connections", &call.query)?;
            let wanted = call.query.csv("names");
            if let Some(name) = wanted.first() {
                // Named lookups of connections that do not exist fail as on an array.
                return Err(bad_request(Some(name), "Array connection does not exist."));
            }
            Ok(page.reply::<Value>(&[], None))
        }
        Method::POST => Err(bad_request(
            None,
            "Unable to connect to the remote array: the simulator has no replication network.",
        )),
        Method::DELETE | Method::PATCH => {
            let name = call.query.csv("remote_names").into_iter().next();
            Err(bad_request(
                name.as_deref(),
                "Array connection does not exist.",
            ))
        }
        _ => Err(call.method_not_allowed()),
    }
}

/// `GET /array-connections/connection-key`: the key a remote array would present
/// to connect to this one. It is made once per process, as an array keeps its key
/// until regenerated; nothing accepts it, since connecting is refused.
pub(super) async fn connection_key(call: &Call<'_>) -> Result<Reply, Fail> {
    static KEY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if call.method != Method::GET {
        return Err(call.method_not_allowed());
    }
    call.query.only(PAGING_PARAMS)?;
    let page = PageRequest::from_query(&call.resource, &call.query)?;
    let key = KEY.get_or_init(|| uuid::Uuid::new_v4().to_string());
    Ok(page.reply(&[serde_json::json!({ "connection_key": key })], None))
}
