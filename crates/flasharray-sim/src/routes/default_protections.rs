//! `/container-default-protections`: the protection groups new volumes of a pod
//! (or of the array) join. The simulator has no protection groups, so every
//! container's list is empty; `purefa_pod` reads it after creating a pod and
//! clears it when asked. Setting a non-empty list is refused as naming a protection
//! group that does not exist.

use flasharray::ListParams;
use hyper::Method;
use serde_json::{Value, json};

use super::Call;
use crate::paging::{PAGING_PARAMS, PageRequest};
use crate::response::{Fail, Reply, bad_request};

/// The containers named in `names` (pods, or the array by its own name); all of
/// them when none are named.
async fn containers(call: &Call<'_>) -> Result<Vec<Value>, Fail> {
    let array = call.state.array.get_array().await?;
    let context = json!({"id": array.id, "name": array.name});
    let item = |id: &Option<String>, name: &str, kind: &str| json!({"id": id, "name": name, "type": kind, "default_protections": [], "context": context});
    let mut names = call.query.csv("names");
    let mut out = Vec::new();
    let array_named = names.iter().any(|n| n.eq_ignore_ascii_case(&array.name));
    if names.is_empty() || array_named {
        out.push(item(&array.id, &array.name, "array"));
    }
    names.retain(|n| !n.eq_ignore_ascii_case(&array.name));
    if !names.is_empty() || out.len() == 1 && call.query.csv("names").is_empty() {
        let pods = call
            .state
            .array
            .list_pods(&ListParams {
                names,
                ..ListParams::default()
            })
            .await?;
        out.extend(pods.iter().map(|p| item(&p.id, &p.name, "pod")));
    }
    Ok(out)
}

pub(super) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.method {
        Method::GET => {
            let mut allowed = vec!["names", "ids", "filter", "sort"];
            allowed.extend_from_slice(PAGING_PARAMS);
            call.query.only(&allowed)?;
            call.no_ids("ids")?;
            let page = PageRequest::from_query("container-default-protections", &call.query)?;
            Ok(page.reply(&containers(call).await?, None))
        }
        Method::PATCH => {
            call.query.only(&["names"])?;
            #[derive(serde::Deserialize, Default)]
            struct Patch {
                #[serde(default)]
                default_protections: Vec<Value>,
            }
            let patch: Patch = call.body(&["default_protections"])?;
            if let Some(pg) = patch.default_protections.first() {
                let name = pg.get("name").and_then(Value::as_str).unwrap_or_default();
                return Err(bad_request(Some(name), "Protection group does not exist."));
            }
            Ok(Reply::items(&containers(call).await?))
        }
        _ => Err(call.method_not_allowed()),
    }
}
