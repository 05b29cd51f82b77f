//! `/pods`: list, create (quota), patch (destroy, recover, quota, rename),
//! eradicate.

use flasharray::models::{PodPatch, PodPost};
use flasharray::{ListParams, PodName};
use hyper::Method;
use serde_json::{Value, json};

use super::Call;
use super::volumes::{list_params, list_query_params};
use crate::paging::PageRequest;
use crate::response::{Fail, Reply, bad_request};

pub(super) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.method {
        Method::GET => {
            call.query.only(&list_query_params())?;
            let page = PageRequest::from_query("pods", &call.query)?;
            let pods = call.state.array.list_pods(&list_params(call)?).await?;
            let total = total(pods.iter().filter_map(|p| p.space.total_provisioned).sum());
            Ok(page.reply(&pods, Some(total)))
        }
        Method::POST => {
            // `allow_throttle` lets I/O be throttled at the quota instead of failing;
            // the simulator does no I/O, so it has no effect here.
            call.query.only(&["names", "allow_throttle"])?;
            let names: Vec<PodName> = call.required_names("names")?;
            let body: PodPost = call.body(&["quota_limit", "tags"])?;
            Ok(Reply::items(
                &call.state.array.create_pods(&names, &body).await?,
            ))
        }
        Method::PATCH => {
            call.query
                .only(&["names", "ids", "destroy_contents", "allow_throttle"])?;
            let destroy_contents = call.query.bool("destroy_contents")?.unwrap_or(false);
            let patch: PodPatch =
                call.body(&["name", "destroyed", "quota_limit", "ignore_usage"])?;
            refuse_ignore_usage(call)?;
            let names = targets(call).await?;
            Ok(Reply::items(
                &call
                    .state
                    .array
                    .patch_pods(&names, &patch, destroy_contents)
                    .await?,
            ))
        }
        Method::DELETE => {
            call.query.only(&["names", "ids", "eradicate_contents"])?;
            let eradicate_contents = call.query.bool("eradicate_contents")?.unwrap_or(false);
            let names = targets(call).await?;
            call.state
                .array
                .eradicate_pods(&names, eradicate_contents)
                .await?;
            Ok(Reply::empty())
        }
        _ => Err(call.method_not_allowed()),
    }
}

/// Names from `names`, or the names of the pods listed in `ids`.
async fn targets(call: &Call<'_>) -> Result<Vec<PodName>, Fail> {
    let ids = call.query.csv("ids");
    if ids.is_empty() {
        return call.required_names("names");
    }
    if call.query.has("names") {
        return Err(bad_request(
            None,
            "Parameters \"ids\" and \"names\" cannot be used together.",
        ));
    }
    let pods = call
        .state
        .array
        .list_pods(&ListParams {
            ids,
            ..ListParams::default()
        })
        .await?;
    pods.into_iter()
        .map(|p| PodName::new(p.name).map_err(|e| bad_request(None, e.to_string())))
        .collect()
}

/// The aggregate row of `GET /pods`.
fn total(provisioned: u64) -> Value {
    json!({
        "id": null, "name": null, "arrays": [], "destroyed": null,
        "failover_preferences": [], "footprint": null, "mediator": null,
        "mediator_version": null, "source": {"id": null, "name": null},
        "space": {
            "data_reduction": null, "shared": null, "snapshots": null, "system": null,
            "thin_provisioning": null, "total_physical": null,
            "total_provisioned": provisioned, "total_reduction": null, "unique": null,
            "virtual": null, "total_used": null, "used_provisioned": null, "replication": null,
        },
        "time_remaining": null, "link_source_count": null, "link_target_count": null,
        "promotion_status": null, "requested_promotion_state": null, "array_count": null,
        "eradication_config": {"manual_eradication": null}, "quota_limit": null,
    })
}

/// `ignore_usage` (Ansible sends `false` by default) is accepted when false; a quota
/// below the pod's usage is always refused, so `true` is refused rather than ignored.
fn refuse_ignore_usage(call: &Call<'_>) -> Result<(), Fail> {
    let body: Value = serde_json::from_slice(&call.body).unwrap_or(Value::Null);
    if body.get("ignore_usage").and_then(Value::as_bool) == Some(true) {
        return Err(bad_request(
            Some("ignore_usage"),
            "ignore_usage=true is not supported by the simulator.",
        ));
    }
    Ok(())
}
