//! `pxfa array info|space`.

use anyhow::{Context, Result};
use flasharray::models::ManualEradication;

use super::Ctx;
use crate::args::ArrayCmd;
use crate::exit::Outcome;
use crate::output::{human_ms, human_size, human_size_opt, local_time_opt, or_dash};

/// Runs an `array` subcommand.
pub(crate) async fn run(cmd: ArrayCmd, ctx: &Ctx<'_>) -> Result<Outcome> {
    let array = ctx.array();
    let p = ctx.printer;
    match cmd {
        ArrayCmd::Info => {
            let info = array.get_array().await.context("cannot read the array")?;
            p.emit(&info, || {
                p.kv_table(vec![
                    ("name", info.name.clone()),
                    ("id", or_dash(info.id.as_deref())),
                    (
                        "os",
                        format!(
                            "{} {}",
                            info.os.as_deref().unwrap_or("Purity//FA"),
                            info.version.as_deref().unwrap_or("?")
                        ),
                    ),
                    ("capacity", human_size_opt(info.capacity)),
                    (
                        "eradication delay",
                        info.eradication_config
                            .eradication_delay
                            .map_or_else(|| "-".into(), human_ms),
                    ),
                    (
                        "SafeMode",
                        safemode(info.eradication_config.manual_eradication.as_ref()),
                    ),
                    ("address", ctx.session.label.clone()),
                ])
            })?;
        }
        ArrayCmd::Space => {
            let s = array
                .get_array_space()
                .await
                .context("cannot read the array's space")?;
            let used = s.space.total_used.or(s.space.total_physical);
            let free = used.map(|u| s.capacity.saturating_sub(u));
            let pct = used.filter(|_| s.capacity > 0).map_or_else(
                || "-".into(),
                |u| format!("{:.1}%", u as f64 * 100.0 / s.capacity as f64),
            );
            p.emit(&s, || {
                p.kv_table(vec![
                    ("name", s.name.clone()),
                    ("capacity", human_size(s.capacity)),
                    ("used", human_size_opt(used)),
                    ("used %", pct.clone()),
                    (
                        "",
                        used.map_or_else(
                            || "-".into(),
                            |u| crate::output::capacity_bar(u, s.capacity),
                        ),
                    ),
                    ("free", human_size_opt(free)),
                    ("provisioned", human_size_opt(s.space.total_provisioned)),
                    (
                        "data reduction",
                        s.space
                            .data_reduction
                            .map_or_else(|| "-".into(), |r| format!("{r:.1}:1")),
                    ),
                    ("sampled", local_time_opt(s.time)),
                ])
            })?;
        }
    }
    Ok(Outcome::Success)
}

/// SafeMode as the array reports it (`eradication_config.manual_eradication`):
/// whether destroyed objects may be eradicated by hand.
fn safemode(m: Option<&ManualEradication>) -> String {
    match m {
        None => "-".to_string(),
        Some(ManualEradication::AllEnabled) => "off (manual eradication all-enabled)".to_string(),
        Some(ManualEradication::PartiallyDisabled) => {
            "on for some objects (manual eradication partially-disabled)".to_string()
        }
        Some(ManualEradication::AllDisabled) => "on: destroyed objects are eradicated only by \
            the array, after the eradication delay (manual eradication all-disabled)"
            .to_string(),
        Some(other) => format!("manual eradication {}", other.as_str()),
    }
}
