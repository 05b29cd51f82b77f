//! `/arrays`, `/arrays/space` and `/hardware` (which Ansible calls right after
//! login to check the connection).

use hyper::Method;
use serde_json::{Value, json};

use super::Call;
use crate::sim::paging::{PAGING_PARAMS, PageRequest};
use crate::filter::Filter;
use crate::sim::response::{Fail, Reply, bad_request};

fn read_only(call: &Call<'_>, extra: &[&'static str]) -> Result<PageRequest, Fail> {
    if call.method != Method::GET {
        return Err(call.method_not_allowed());
    }
    let mut allowed = extra.to_vec();
    allowed.extend_from_slice(PAGING_PARAMS);
    call.query.only(&allowed)?;
    PageRequest::from_query(&call.resource, &call.query)
}

pub(super) async fn arrays(call: &Call<'_>) -> Result<Reply, Fail> {
    let page = read_only(call, &[])?;
    let info = call.state.array.get_array().await?;
    Ok(page.reply(&[info], None))
}

pub(super) async fn space(call: &Call<'_>) -> Result<Reply, Fail> {
    let page = read_only(call, &[])?;
    let space = call.state.array.get_array_space().await?;
    Ok(page.reply(&[space], None))
}

/// A plausible, fixed inventory of a dual-controller chassis: two controllers,
/// the chassis, and two power supplies, all healthy.
pub(super) async fn hardware(call: &Call<'_>) -> Result<Reply, Fail> {
    let page = read_only(call, &["names", "filter"])?;
    let item = |name: &str, kind: &str, index: u32, model: Option<&str>| -> Value {
        json!({
            "name": name, "details": null, "identify_enabled": false, "index": index,
            "model": model, "serial": null, "slot": null, "speed": null,
            "status": "ok", "temperature": null, "type": kind, "voltage": null,
        })
    };
    let all = vec![
        item("CH0", "chassis", 0, Some("FA-X70R4")),
        item("CT0", "controller", 0, Some("FA-X70R4")),
        item("CT1", "controller", 1, Some("FA-X70R4")),
        item("CH0.PWR0", "power_supply", 0, None),
        item("CH0.PWR1", "power_supply", 1, None),
    ];
    let wanted = call.query.csv("names");
    let all: Vec<Value> = match call.query.one("filter")? {
        // The same filter language as every other list (Ansible asks for
        // `type='controller'` to tell Cloud Block Store from hardware).
        Some(expr) => {
            let filter = Filter::parse(&expr).map_err(|e| bad_request(Some("filter"), e))?;
            all.into_iter().filter(|h| filter.matches(h)).collect()
        }
        None => all,
    };
    let items: Vec<Value> = if wanted.is_empty() {
        all
    } else {
        all.into_iter()
            .filter(|h| {
                wanted.iter().any(|w| {
                    h["name"]
                        .as_str()
                        .is_some_and(|n| n.eq_ignore_ascii_case(w))
                })
            })
            .collect()
    };
    Ok(page.reply(&items, None))
}
