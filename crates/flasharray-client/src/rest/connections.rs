//! `/connections`: list, connect volumes to a host or host group, disconnect.

use reqwest::Method;

use crate::error::{Error, Result};
use crate::models::Connection;
use crate::name::VolumeName;
use crate::params::{ConnectionParams, ConnectionTarget};
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::writes::{json, require};

/// `GET /connections`.
pub(super) async fn list(array: &RestArray, params: &ConnectionParams) -> Result<Vec<Connection>> {
    let q = Query::new()
        .csv("host_names", &params.host_names)
        .csv("host_group_names", &params.host_group_names)
        .csv("volume_names", &params.volume_names)
        .opt("filter", params.filter.as_deref())
        .csv("sort", &params.sort);
    array
        .transport
        .collect_pages(Pager::new("connections", q, params.page_size))
        .await
}

/// `POST /connections?host_names=...|host_group_names=...&volume_names=...`, with
/// `{"lun": N}` when a LUN is asked for (one volume only, 1-4095).
pub(super) async fn create(
    array: &RestArray,
    target: &ConnectionTarget,
    volumes: &[VolumeName],
    lun: Option<u32>,
) -> Result<Vec<Connection>> {
    require("connect volumes", volumes)?;
    if let Some(l) = lun {
        if volumes.len() > 1 {
            return Err(Error::InvalidRequest(format!(
                "connect volumes to {target}: a LUN can only be given for one volume"
            )));
        }
        if !(1..=4095).contains(&l) {
            return Err(Error::InvalidRequest(format!(
                "connect volumes to {target}: LUN {l} is outside 1-4095"
            )));
        }
    }
    let body = match lun {
        Some(l) => Some(json(&serde_json::json!({ "lun": l }))?),
        None => None,
    };
    array
        .transport
        .write(Method::POST, "connections", query(target, volumes), body)
        .await?
        .items()
}

/// `DELETE /connections?...`: the target no longer sees the volumes.
pub(super) async fn delete(
    array: &RestArray,
    target: &ConnectionTarget,
    volumes: &[VolumeName],
) -> Result<()> {
    require("disconnect volumes", volumes)?;
    array
        .transport
        .write(Method::DELETE, "connections", query(target, volumes), None)
        .await
        .map(drop)
}

fn query(target: &ConnectionTarget, volumes: &[VolumeName]) -> Query {
    let q = match target {
        ConnectionTarget::Host(h) => Query::new().csv("host_names", &[h.as_str()]),
        ConnectionTarget::HostGroup(g) => Query::new().csv("host_group_names", &[g.as_str()]),
    };
    q.csv("volume_names", volumes)
}
