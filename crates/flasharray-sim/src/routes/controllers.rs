//! `/controllers`: the two controllers of the simulated chassis. Ansible's
//! `purefa_host` reads the first controller's model to tell Cloud Block Store from
//! a hardware array, and `purefa_info` lists them: collection 1.43's `minimum`
//! subset asks for `filter=type='array_controller'` (its controller uptimes), so
//! `filter` is served with the same language, limits and 400 answer as every list.

use hyper::Method;
use serde_json::{Value, json};

use super::Call;
use crate::paging::{PAGING_PARAMS, PageRequest};
use crate::response::{Fail, Reply};
use flasharray_mock::listing::parse_filter;

/// The model the simulated chassis reports (as `/hardware` does).
pub(super) const MODEL: &str = "FA-X70R4";

pub(super) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    if call.method != Method::GET {
        return Err(call.method_not_allowed());
    }
    let mut allowed = vec!["names", "filter"];
    allowed.extend_from_slice(PAGING_PARAMS);
    call.query.only(&allowed)?;
    let page = PageRequest::from_query("controllers", &call.query)?;
    let info = call.state.array.get_array().await?;
    let item = |name: &str, mode: &str| -> Value {
        json!({
            "name": name, "mode": mode, "mode_since": 0, "model": MODEL,
            "status": "ready", "type": "array_controller", "version": info.version,
        })
    };
    let wanted = call.query.csv("names");
    let filter = parse_filter(call.query.one("filter")?.as_deref())?;
    let items: Vec<Value> = [item("CT0", "primary"), item("CT1", "secondary")]
        .into_iter()
        .filter(|c| filter.as_ref().is_none_or(|f| f.matches(c)))
        .filter(|c| {
            wanted.is_empty()
                || wanted.iter().any(|w| {
                    c["name"]
                        .as_str()
                        .is_some_and(|n| n.eq_ignore_ascii_case(w))
                })
        })
        .collect();
    Ok(page.reply(&items, None))
}
