//! `/arrays`, `/arrays/space` and `/hardware` (which Ansible calls right after
//! login to check the connection).

use hyper::Method;
use serde_json::{Value, json};

use super::Call;
use crate::array_settings::ArraySettings;
use crate::listing::parse_filter;
use crate::sim::paging::{PAGING_PARAMS, PageRequest};
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
    if call.method == Method::PATCH {
        return patch(call).await;
    }
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
    // The same filter language, limits and 400 answer as every other list (Ansible
    // asks for `type='controller'` to tell Cloud Block Store from hardware).
    let all: Vec<Value> = match parse_filter(call.query.one("filter")?.as_deref())? {
        Some(filter) => all.into_iter().filter(|h| filter.matches(h)).collect(),
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

/// `PATCH /arrays`: the name (`purefa_arrayname`) and the eradication delay
/// (`purefa_eradication`). The simulator has SafeMode off, so `disabled_delay` is
/// the delay in force and the same as `eradication_delay`; `enabled_delay` (the
/// delay under SafeMode) can only be given as that same value.
async fn patch(call: &Call<'_>) -> Result<Reply, Fail> {
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Body {
        name: Option<String>,
        eradication_config: Option<Value>,
    }
    call.query.only(&[])?;
    let body: Body = call.body(&["name", "eradication_config"])?;
    let mut settings = ArraySettings {
        name: body.name,
        eradication_delay_ms: None,
    };
    if let Some(config) = body.eradication_config {
        let Some(config) = config.as_object() else {
            return Err(bad_request(
                Some("eradication_config"),
                "Invalid eradication_config.",
            ));
        };
        let mut delays = Vec::new();
        for (key, value) in config {
            match (key.as_str(), value) {
                (_, Value::Null) => {}
                ("eradication_delay" | "disabled_delay", v) => delays.push((key, v.as_u64())),
                ("enabled_delay", v) => delays.push((key, v.as_u64())),
                (other, _) => {
                    return Err(bad_request(
                        Some(other),
                        format!(
                            "Field {other:?} is not supported by the simulator for this request."
                        ),
                    ));
                }
            }
        }
        for (key, delay) in &delays {
            let Some(delay) = delay else {
                return Err(bad_request(Some(key), format!("Invalid value for {key}.")));
            };
            if *key != "enabled_delay" {
                settings.eradication_delay_ms = Some(*delay);
            }
        }
        let current = call
            .state
            .array
            .get_array()
            .await?
            .eradication_config
            .eradication_delay;
        let effective = settings.eradication_delay_ms.or(current);
        if let Some((_, Some(enabled))) = delays.iter().find(|(k, _)| *k == "enabled_delay")
            && Some(*enabled) != effective
        {
            return Err(bad_request(
                Some("enabled_delay"),
                "enabled_delay is not supported by the simulator unless it equals the eradication delay (SafeMode is off).",
            ));
        }
    }
    call.state.mock.patch_array_settings(&settings)?;
    let info = call.state.array.get_array().await?;
    Ok(Reply::items(&[info]))
}
