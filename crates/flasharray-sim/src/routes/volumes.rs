//! `/volumes`: list, create, patch (resize, rename, destroy, recover, move, QoS),
//! eradicate; `/volumes/batch` (REST 2.32+): create with per-volume sizes and tags.

use flasharray::models::{TagBody, Volume, VolumeBatchPost, VolumePatch, VolumePost};
use flasharray::{ListParams, VolumeName};
use hyper::Method;
use serde_json::{Value, json};

use super::Call;
use crate::paging::{PAGING_PARAMS, PageRequest};
use crate::response::{Fail, Reply, bad_request, not_found};

/// The first REST version with `/volumes/batch` (Pure's SDK: `post_volumes_batch`
/// and `VolumeBatchPost` appear in the 2.32 client).
const BATCH_MINOR: u32 = 32;

/// The item fields of `/volumes/batch` the simulator models; any other field
/// (`qos`, `source`, `add_to_protection_groups`, ...) is a 400 naming it.
const BATCH_ITEM_FIELDS: &[&str] = &["name", "provisioned", "tags"];

pub(super) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.method {
        Method::GET => list(call).await,
        Method::POST => create(call).await,
        Method::PATCH => patch(call).await,
        Method::DELETE => eradicate(call).await,
        _ => Err(call.method_not_allowed()),
    }
}

/// The list parameters of `GET /volumes` and `GET /pods`.
pub(super) fn list_params(call: &Call<'_>) -> Result<ListParams, Fail> {
    Ok(ListParams {
        names: call.query.csv("names"),
        ids: call.query.csv("ids"),
        filter: call.query.filter(),
        sort: call.query.sort(),
        destroyed: call.query.bool("destroyed")?,
        limit: None,
        page_size: None,
    })
}

/// The accepted parameters of list calls that map onto [`ListParams`].
pub(super) fn list_query_params() -> Vec<&'static str> {
    let mut v = vec!["names", "ids", "filter", "sort", "destroyed"];
    v.extend_from_slice(PAGING_PARAMS);
    v
}

async fn list(call: &Call<'_>) -> Result<Reply, Fail> {
    call.query.only(&list_query_params())?;
    let page = PageRequest::from_query("volumes", &call.query)?;
    let volumes = call.state.array.list_volumes(&list_params(call)?).await?;
    Ok(page.reply(&volumes, Some(total(&volumes))))
}

/// The aggregate row real arrays send in `total`: sums where they make sense,
/// `null` elsewhere.
fn total(volumes: &[Volume]) -> Value {
    let provisioned: u64 = volumes.iter().map(|v| v.provisioned).sum();
    let sum = |f: fn(&Volume) -> Option<u64>| -> u64 { volumes.iter().filter_map(f).sum() };
    json!({
        "id": null, "name": null, "connection_count": null, "created": null,
        "destroyed": null, "host_encryption_key_status": null,
        "provisioned": provisioned,
        "qos": {"bandwidth_limit": null, "iops_limit": null},
        "serial": null,
        "space": {
            "data_reduction": null, "shared": null, "snapshots": sum(|v| v.space.snapshots),
            "system": null, "thin_provisioning": null,
            "total_physical": sum(|v| v.space.total_physical),
            "total_provisioned": sum(|v| v.space.total_provisioned),
            "total_reduction": null, "unique": sum(|v| v.space.unique),
            "virtual": sum(|v| v.space.r#virtual),
            "total_used": sum(|v| v.space.total_used),
            "used_provisioned": sum(|v| v.space.used_provisioned),
        },
        "time_remaining": null,
        "pod": {"id": null, "name": null},
        "source": {"id": null, "name": null},
        "subtype": null,
        "volume_group": {"id": null, "name": null},
        "promotion_status": null, "requested_promotion_state": null, "priority": null,
        "priority_adjustment": {"priority_adjustment_operator": null, "priority_adjustment_value": null},
    })
}

async fn create(call: &Call<'_>) -> Result<Reply, Fail> {
    call.query.only(&["names", "overwrite"])?;
    if call.query.bool("overwrite")? == Some(true) {
        return Err(bad_request(
            Some("overwrite"),
            "overwrite=true is not supported by the simulator.",
        ));
    }
    let names: Vec<VolumeName> = call.required_names("names")?;
    let body: VolumePost = call.body(&["provisioned", "source", "tags", "subtype"])?;
    refuse_protocol_endpoint(call)?;
    let created = call.state.array.create_volumes(&names, &body).await?;
    Ok(Reply::items(&created))
}

/// `POST /volumes/batch`: a JSON list of `VolumeBatchPost`; created in request
/// order, or not at all when one item is refused.
pub(super) async fn batch(call: &Call<'_>) -> Result<Reply, Fail> {
    if call.minor < BATCH_MINOR {
        return Err(not_found(&format!("/api/2.{}/volumes/batch", call.minor)));
    }
    if call.method != Method::POST {
        return Err(call.method_not_allowed());
    }
    call.query.only(&["overwrite"])?;
    if call.query.bool("overwrite")? == Some(true) {
        return Err(bad_request(
            Some("overwrite"),
            "overwrite=true is not supported by the simulator.",
        ));
    }
    let raw: Vec<Value> = call.body_list()?;
    let items = raw
        .into_iter()
        .map(batch_item)
        .collect::<Result<Vec<_>, Fail>>()?;
    let created = call.state.array.create_volumes_batch(&items).await?;
    Ok(Reply::items(&created))
}

/// One item of the batch body, its fields checked one by one so that the error
/// names the field (or the volume) at fault.
fn batch_item(value: Value) -> Result<VolumeBatchPost, Fail> {
    let Value::Object(mut item) = value else {
        return Err(bad_request(
            None,
            "Each volume of the batch must be a JSON object.",
        ));
    };
    if let Some(key) = item
        .keys()
        .find(|k| !BATCH_ITEM_FIELDS.contains(&k.as_str()))
    {
        return Err(bad_request(
            Some(key),
            format!("Field {key:?} is not supported by the simulator for this request."),
        ));
    }
    let name = match item.remove("name") {
        Some(Value::String(n)) => n,
        _ => {
            return Err(bad_request(
                Some("name"),
                "Each volume of the batch needs a name.",
            ));
        }
    };
    let name = VolumeName::new(&name).map_err(|e| bad_request(Some(&name), e.to_string()))?;
    let provisioned = match item.remove("provisioned") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_u64().ok_or_else(|| {
            bad_request(
                Some(name.as_str()),
                "Invalid value for provisioned: expected bytes.",
            )
        })?),
    };
    let tags: Vec<TagBody> = match item.remove("tags") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => serde_json::from_value(v)
            .map_err(|e| bad_request(Some(name.as_str()), format!("Invalid tags: {e}")))?,
    };
    let mut post = VolumeBatchPost::new(name, 0);
    post.provisioned = provisioned;
    post.tags = tags;
    Ok(post)
}

/// Names from `names`, or the names of the volumes listed in `ids`.
async fn targets(call: &Call<'_>) -> Result<Vec<VolumeName>, Fail> {
    let ids = call.query.csv("ids");
    match (call.query.has("names"), ids.is_empty()) {
        (true, false) => Err(bad_request(
            None,
            "Parameters \"ids\" and \"names\" cannot be used together.",
        )),
        (true, true) => call.required_names("names"),
        (false, false) => {
            let found = call
                .state
                .array
                .list_volumes(&ListParams {
                    ids,
                    ..ListParams::default()
                })
                .await?;
            found
                .into_iter()
                .map(|v| VolumeName::new(v.name).map_err(|e| bad_request(None, e.to_string())))
                .collect()
        }
        (false, true) => Err(bad_request(
            Some("names"),
            "Parameter \"ids\" or \"names\" is required.",
        )),
    }
}

async fn patch(call: &Call<'_>) -> Result<Reply, Fail> {
    call.query.only(&["names", "ids", "truncate"])?;
    let truncate = call.query.bool("truncate")?.unwrap_or(false);
    let patch: VolumePatch = call.body(&["name", "provisioned", "destroyed", "pod", "qos"])?;
    let names = targets(call).await?;
    let changed = call
        .state
        .array
        .patch_volumes(&names, &patch, truncate)
        .await?;
    Ok(Reply::items(&changed))
}

async fn eradicate(call: &Call<'_>) -> Result<Reply, Fail> {
    call.query.only(&["names", "ids"])?;
    let names = targets(call).await?;
    call.state.array.eradicate_volumes(&names).await?;
    Ok(Reply::empty())
}

/// `subtype` (sent by Ansible at REST 2.16+) is accepted as `regular`, the only
/// kind of volume the simulator makes; protocol endpoints (vVols) are refused.
fn refuse_protocol_endpoint(call: &Call<'_>) -> Result<(), Fail> {
    let body: Value = serde_json::from_slice(&call.body).unwrap_or(Value::Null);
    match body.get("subtype").and_then(Value::as_str) {
        None | Some("regular") => Ok(()),
        Some(other) => Err(bad_request(
            Some("subtype"),
            format!("Volume subtype {other:?} is not supported by the simulator; use \"regular\"."),
        )),
    }
}
