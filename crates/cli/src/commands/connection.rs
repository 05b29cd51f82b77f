//! `pxfa connection ...`: volumes seen by hosts, privately or through a host group.

use anyhow::{Context, Result};
use comfy_table::Table;
use flasharray::models::Connection;
use flasharray::{ConnectionParams, ConnectionTarget};

use super::{Ctx, describe, host_group_names, host_names, volume_names};
use crate::args::{ConnectionCmd, TargetArgs};
use crate::confirm::{check_selection, confirm};
use crate::exit::{InvalidInput, Outcome};
use crate::output::{Printer, or_dash};

fn target(t: &TargetArgs) -> Result<ConnectionTarget> {
    match (&t.host, &t.host_group) {
        (Some(h), None) => Ok(ConnectionTarget::Host(
            host_names(std::slice::from_ref(h))?.remove(0),
        )),
        (None, Some(g)) => Ok(ConnectionTarget::HostGroup(
            host_group_names(std::slice::from_ref(g))?.remove(0),
        )),
        _ => Err(InvalidInput::error(
            "give exactly one of --host or --hostgroup",
        )),
    }
}

/// Runs a `connection` subcommand.
pub(crate) async fn run(cmd: ConnectionCmd, ctx: &Ctx<'_>) -> Result<Outcome> {
    let array = ctx.array();
    let p = ctx.printer;
    match cmd {
        ConnectionCmd::List {
            host,
            host_group,
            volume,
        } => {
            host_names(&host)?;
            host_group_names(&host_group)?;
            volume_names(&volume)?;
            let params = ConnectionParams {
                host_names: host,
                host_group_names: host_group,
                volume_names: volume,
                ..Default::default()
            };
            let conns = array
                .list_connections(&params)
                .await
                .context("cannot list connections")?;
            p.emit_list(
                "connection",
                &conns,
                |c| {
                    format!(
                        "{}:{}",
                        or_dash(c.volume.name.as_deref()),
                        or_dash(c.host.name.as_deref())
                    )
                },
                || table(p, &conns),
            )?;
        }
        ConnectionCmd::Create {
            target: t,
            volumes,
            lun,
        } => {
            let target = target(&t)?;
            let vnames = volume_names(&volumes)?;
            if lun.is_some() && vnames.len() != 1 {
                return Err(InvalidInput::error(
                    "--lun only makes sense with a single volume (each volume needs its own LUN)",
                ));
            }
            let out = array
                .create_connections(&target, &vnames, lun)
                .await
                .with_context(|| {
                    format!(
                        "cannot connect {} to {target}",
                        describe("volume", &volumes)
                    )
                })?;
            p.done(format!(
                "connected {} to {target}",
                describe("volume", &volumes)
            ));
            p.emit(&out, || table(p, &out))?;
        }
        ConnectionCmd::Delete { target: t, volumes } => {
            check_selection("connection delete", &volumes)?;
            let target = target(&t)?;
            let vnames = volume_names(&volumes)?;
            confirm(
                ctx.yes,
                &format!(
                    "disconnect {} from {target} (hosts lose access at once)",
                    describe("volume", &volumes)
                ),
            )?;
            array
                .delete_connections(&target, &vnames)
                .await
                .with_context(|| {
                    format!(
                        "cannot disconnect {} from {target}",
                        describe("volume", &volumes)
                    )
                })?;
            p.done(format!(
                "disconnected {} from {target}",
                describe("volume", &volumes)
            ));
            p.emit(
                &serde_json::json!({ "disconnected": volumes, "from": target.name() }),
                || {
                    let mut t = p.table(&["VOLUME", "DISCONNECTED FROM"]);
                    for v in &volumes {
                        t.add_row(vec![v.clone(), target.to_string()]);
                    }
                    t
                },
            )?;
        }
    }
    Ok(Outcome::Success)
}

/// The connection table.
pub(crate) fn table(p: &Printer, conns: &[Connection]) -> Table {
    let mut t = p.table(&["VOLUME", "HOST", "HOST GROUP", "LUN"]);
    for c in conns {
        t.add_row(vec![
            or_dash(c.volume.name.as_deref()),
            or_dash(c.host.name.as_deref()),
            or_dash(c.host_group.name.as_deref()),
            c.lun.map_or_else(|| "-".into(), |l| l.to_string()),
        ]);
    }
    t
}
