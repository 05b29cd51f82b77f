//! `/arrays`, `/arrays/space` and `/hardware` (which Ansible calls right after
//! login to check the connection).

use hyper::Method;
use serde_json::{Value, json};

use super::Call;
use crate::paging::{PAGING_PARAMS, PageRequest};
use crate::response::{Fail, Reply, bad_request};
use flasharray_mock::ArraySettings;
use flasharray_mock::listing::parse_filter;

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
    Ok(page.reply(&[with_delays(call, &info)], None))
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

/// One day in ms: arrays round every eradication delay down to whole days.
const DAY_MS: u64 = 86_400_000;

/// `PATCH /arrays`: the name (`purefa_arrayname`) and the eradication delays
/// (`purefa_eradication`), as the SDK's `EradicationConfig` (REST 2.26) describes
/// them: `enabled_delay` (objects that can be eradicated by hand: the delay in
/// force, SafeMode being off) and `disabled_delay` (objects SafeMode protects) are
/// kept apart; the deprecated `eradication_delay` sets both, and is refused while
/// they differ; every value is rounded down to whole days (1 to 30).
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
        ..ArraySettings::default()
    };
    if let Some(config) = body.eradication_config {
        delays(call, &config, &mut settings)?;
    }
    call.state.mock.patch_array_settings(&settings)?;
    let info = call.state.array.get_array().await?;
    Ok(Reply::items(&[with_delays(call, &info)]))
}

/// The delays of one `eradication_config` into `settings`.
fn delays(call: &Call<'_>, config: &Value, settings: &mut ArraySettings) -> Result<(), Fail> {
    let Some(config) = config.as_object() else {
        return Err(bad_request(
            Some("eradication_config"),
            "Invalid eradication_config.",
        ));
    };
    let mut given = [None; 3];
    for (key, value) in config {
        let slot = match key.as_str() {
            "eradication_delay" => 0,
            "enabled_delay" => 1,
            "disabled_delay" => 2,
            other => {
                return Err(bad_request(
                    Some(other),
                    format!("Field {other:?} is not supported by the simulator for this request."),
                ));
            }
        };
        if value.is_null() {
            continue;
        }
        let ms = value
            .as_u64()
            .ok_or_else(|| bad_request(Some(key), format!("Invalid value for {key}.")))?;
        given[slot] = Some(ms / DAY_MS * DAY_MS);
    }
    let [both, enabled, disabled] = given;
    if let Some(both) = both {
        let (now_enabled, now_disabled) = call.state.mock.eradication_delays();
        if now_enabled != now_disabled {
            return Err(bad_request(
                Some("eradication_delay"),
                "eradication_delay cannot be set while disabled_delay and enabled_delay differ.",
            ));
        }
        settings.eradication_delay_ms = Some(both);
        settings.disabled_delay_ms = Some(both);
    }
    settings.eradication_delay_ms = enabled.or(settings.eradication_delay_ms);
    settings.disabled_delay_ms = disabled.or(settings.disabled_delay_ms);
    Ok(())
}

/// The array as JSON with both eradication delays (our model carries only the one
/// in force; `fields.rs` would copy it into both).
fn with_delays(call: &Call<'_>, info: &flasharray::models::ArrayInfo) -> Value {
    let mut value = serde_json::to_value(info).unwrap_or(Value::Null);
    let (enabled, disabled) = call.state.mock.eradication_delays();
    if let Some(config) = value
        .get_mut("eradication_config")
        .and_then(Value::as_object_mut)
    {
        config.insert("enabled_delay".into(), enabled.into());
        config.insert("disabled_delay".into(), disabled.into());
    }
    value
}
