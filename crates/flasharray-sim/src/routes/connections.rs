//! `/connections`: volumes seen by hosts (private LUNs) or host groups (shared
//! LUNs). One side of a write may list several names, the other exactly one, as on
//! the array.

use flasharray::{ConnectionParams, ConnectionTarget, HostGroupName, HostName, VolumeName};
use hyper::Method;
use serde::Deserialize;

use super::Call;
use crate::paging::{PAGING_PARAMS, PageRequest};
use crate::response::{Fail, Reply, bad_request};

/// `ConnectionPost`: only `lun` is modelled.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ConnectionPost {
    lun: Option<u32>,
}

pub(super) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.method {
        Method::GET => {
            let mut allowed = vec![
                "host_names",
                "host_group_names",
                "volume_names",
                "filter",
                "sort",
            ];
            allowed.extend_from_slice(PAGING_PARAMS);
            call.query.only(&allowed)?;
            let page = PageRequest::from_query("connections", &call.query)?;
            let params = ConnectionParams {
                host_names: call.query.csv("host_names"),
                host_group_names: call.query.csv("host_group_names"),
                volume_names: call.query.csv("volume_names"),
                filter: call.query.filter(),
                sort: call.query.sort(),
                page_size: None,
            };
            let rows = call.state.array.list_connections(&params).await?;
            Ok(page.reply(&rows, None))
        }
        Method::POST => {
            call.query
                .only(&["host_names", "host_group_names", "volume_names"])?;
            let body: ConnectionPost = call.body(&["lun"])?;
            let volumes: Vec<VolumeName> = call.required_names("volume_names")?;
            let targets = targets(call, volumes.len())?;
            let mut created = Vec::new();
            for target in &targets {
                created.extend(
                    call.state
                        .array
                        .create_connections(target, &volumes, body.lun)
                        .await?,
                );
            }
            Ok(Reply::items(&created))
        }
        Method::DELETE => {
            call.query
                .only(&["host_names", "host_group_names", "volume_names"])?;
            let volumes: Vec<VolumeName> = call.required_names("volume_names")?;
            for target in &targets(call, volumes.len())? {
                call.state
                    .array
                    .delete_connections(target, &volumes)
                    .await?;
            }
            Ok(Reply::empty())
        }
        _ => Err(call.method_not_allowed()),
    }
}

/// The host side: hosts or host groups (not both); several only with one volume.
fn targets(call: &Call<'_>, volume_count: usize) -> Result<Vec<ConnectionTarget>, Fail> {
    let hosts: Vec<HostName> = call.names("host_names")?;
    let groups: Vec<HostGroupName> = call.names("host_group_names")?;
    let targets: Vec<ConnectionTarget> = match (hosts.is_empty(), groups.is_empty()) {
        (false, true) => hosts.into_iter().map(ConnectionTarget::Host).collect(),
        (true, false) => groups
            .into_iter()
            .map(ConnectionTarget::HostGroup)
            .collect(),
        (false, false) => {
            return Err(bad_request(
                None,
                "Parameters \"host_names\" and \"host_group_names\" cannot be used together.",
            ));
        }
        (true, true) => {
            return Err(bad_request(
                Some("host_names"),
                "Parameter \"host_names\" or \"host_group_names\" is required.",
            ));
        }
    };
    if targets.len() > 1 && volume_count > 1 {
        return Err(bad_request(
            None,
            "Several volumes and several hosts or host groups cannot be given in one request.",
        ));
    }
    Ok(targets)
}
