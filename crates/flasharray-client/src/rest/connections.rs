//! `/connections`: list, connect volumes to a host or host group, disconnect.

use reqwest::Method;

use crate::error::{Error, Result};
use crate::models::Connection;
use crate::name::VolumeName;
use crate::params::{ConnectionParams, ConnectionTarget};
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::reconcile::{Verdict, json, require, same_opt, split, strings};

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

/// Lost answer: volumes the target now sees are done; the others are connected again
/// (a LUN asked for is kept); a volume connected on another LUN is undecided.
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
    let body = &body;
    array
        .settle(
            "POST connections",
            strings(volumes),
            |pending| {
                Box::pin(async move {
                    array
                        .transport
                        .write(
                            Method::POST,
                            "connections",
                            query(target, &pending),
                            body.clone(),
                        )
                        .await?
                        .items()
                })
            },
            |pending| {
                Box::pin(async move {
                    let rows = connections_of(array, target, &pending).await?;
                    let mut done = Vec::new();
                    let mut rest = Vec::new();
                    for v in pending {
                        let mine: Vec<&Connection> = rows
                            .iter()
                            .filter(|c| is_connection(c, target, &v))
                            .collect();
                        if mine.is_empty() {
                            rest.push(v);
                        } else if lun.is_some_and(|l| mine.iter().any(|c| c.lun != Some(l))) {
                            return Ok(Verdict::Undecided(format!(
                                "volume {v} is connected to {target} on another LUN"
                            )));
                        } else {
                            done.extend(mine.into_iter().cloned());
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

/// Lost answer: volumes the target no longer sees are done.
pub(super) async fn delete(
    array: &RestArray,
    target: &ConnectionTarget,
    volumes: &[VolumeName],
) -> Result<()> {
    require("disconnect volumes", volumes)?;
    array
        .settle(
            "DELETE connections",
            strings(volumes),
            |pending| {
                Box::pin(async move {
                    array
                        .transport
                        .write(Method::DELETE, "connections", query(target, &pending), None)
                        .await
                        .map(|_| Vec::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let rows = connections_of(array, target, &pending).await?;
                    let (rest, done): (Vec<String>, Vec<String>) = pending
                        .into_iter()
                        .partition(|v| rows.iter().any(|c| is_connection(c, target, v)));
                    Ok(split(done.len(), rest))
                })
            },
        )
        .await
        .map(drop)
}

fn query(target: &ConnectionTarget, volumes: &[String]) -> Query {
    let q = match target {
        ConnectionTarget::Host(h) => Query::new().csv("host_names", &[h.as_str()]),
        ConnectionTarget::HostGroup(g) => Query::new().csv("host_group_names", &[g.as_str()]),
    };
    q.csv("volume_names", volumes)
}

/// The target's connections to `volumes`, for re-reads: every row of the target,
/// picked locally (a volume that is not connected must not fail the read).
async fn connections_of(
    array: &RestArray,
    target: &ConnectionTarget,
    volumes: &[String],
) -> Result<Vec<Connection>> {
    let rows: Vec<Connection> = array
        .transport
        .collect_pages(Pager::new(
            "connections",
            query(target, &[] as &[String]),
            None,
        ))
        .await?;
    Ok(rows
        .into_iter()
        .filter(|c| volumes.iter().any(|v| is_connection(c, target, v)))
        .collect())
}

/// Whether a `/connections` row is the connection of `volume` to `target`.
fn is_connection(c: &Connection, target: &ConnectionTarget, volume: &str) -> bool {
    let vol_ok = same_opt(c.volume.name.as_deref(), Some(volume));
    match target {
        ConnectionTarget::Host(h) => {
            vol_ok
                && same_opt(c.host.name.as_deref(), Some(h.as_str()))
                && c.host_group.name.is_none()
        }
        ConnectionTarget::HostGroup(g) => {
            vol_ok && same_opt(c.host_group.name.as_deref(), Some(g.as_str()))
        }
    }
}
