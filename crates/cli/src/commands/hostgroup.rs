//! `pxfa hostgroup ...`.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use flasharray::MemberParams;
use flasharray::models::HostGroupPost;
use serde::Serialize;

use super::{Ctx, describe, host_group_names, host_names, list_params};
use crate::args::{HostGroupCmd, ListArgs};
use crate::confirm::{check_selection, confirm};
use crate::exit::Outcome;
use crate::output::list_or_dash;

/// A host group with its member hosts, for listing.
#[derive(Serialize)]
struct GroupRow {
    #[serde(flatten)]
    group: flasharray::models::HostGroup,
    hosts: Vec<String>,
}

/// `hostgroup list`: each group with its member hosts (one members listing).
async fn list_groups(ctx: &Ctx<'_>, list: &ListArgs) -> Result<()> {
    let array = ctx.array();
    let p = ctx.printer;
    host_group_names(&list.names)?;
    let groups = array
        .list_host_groups(&list_params(list, None)?)
        .await
        .context("cannot list host groups")?;
    let members = if groups.is_empty() {
        Vec::new()
    } else {
        array
            .list_host_group_members(&MemberParams {
                group_names: groups.iter().map(|g| g.name.clone()).collect(),
                member_names: Vec::new(),
            })
            .await
            .context("cannot list host group members")?
    };
    let mut by_group: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for m in members {
        if let (Some(g), Some(h)) = (m.group.name, m.member.name) {
            by_group.entry(g.to_ascii_lowercase()).or_default().push(h);
        }
    }
    let rows: Vec<GroupRow> = groups
        .into_iter()
        .map(|g| GroupRow {
            hosts: by_group
                .remove(&g.name.to_ascii_lowercase())
                .unwrap_or_default(),
            group: g,
        })
        .collect();
    p.emit_list(
        "hostgroup",
        &rows,
        |r| r.group.name.clone(),
        || {
            let mut t = p.table(&["NAME", "HOSTS", "CONNECTIONS"]);
            for r in &rows {
                t.add_row(vec![
                    r.group.name.clone(),
                    list_or_dash(&r.hosts),
                    r.group
                        .connection_count
                        .map_or_else(|| "-".into(), |c| c.to_string()),
                ]);
            }
            t
        },
    )
}

/// Runs a `hostgroup` subcommand.
pub(crate) async fn run(cmd: HostGroupCmd, ctx: &Ctx<'_>) -> Result<Outcome> {
    let array = ctx.array();
    let p = ctx.printer;
    match cmd {
        HostGroupCmd::List { list } => list_groups(ctx, &list).await?,
        HostGroupCmd::Create { names } => {
            let gnames = host_group_names(&names)?;
            let out = array
                .create_host_groups(&gnames, &HostGroupPost::default())
                .await
                .with_context(|| format!("cannot create {}", describe("host group", &names)))?;
            p.done(format!("created {}", describe("host group", &names)));
            p.emit(&out, || {
                let mut t = p.table(&["NAME"]);
                for g in &out {
                    t.add_row(vec![g.name.clone()]);
                }
                t
            })?;
        }
        HostGroupCmd::Delete { names } => {
            check_selection("hostgroup delete", &names)?;
            let gnames = host_group_names(&names)?;
            confirm(
                ctx.yes,
                &format!("delete {}", describe("host group", &names)),
            )?;
            array
                .delete_host_groups(&gnames)
                .await
                .with_context(|| format!("cannot delete {}", describe("host group", &names)))?;
            p.done(format!("deleted {}", describe("host group", &names)));
            p.emit(&serde_json::json!({ "deleted": names }), || {
                let mut t = p.table(&["DELETED"]);
                for n in &names {
                    t.add_row(vec![n.clone()]);
                }
                t
            })?;
        }
        HostGroupCmd::AddHost { group, hosts } => {
            let g = host_group_names(std::slice::from_ref(&group))?;
            let h = host_names(&hosts)?;
            let out = array
                .add_host_group_members(&g[0], &h)
                .await
                .with_context(|| {
                    format!(
                        "cannot add {} to host group {group}",
                        describe("host", &hosts)
                    )
                })?;
            p.done(format!(
                "added {} to host group {group}",
                describe("host", &hosts)
            ));
            p.emit(&out, || member_table(p, &out))?;
        }
        HostGroupCmd::RemoveHost { group, hosts } => {
            check_selection("hostgroup remove-host", &hosts)?;
            let g = host_group_names(std::slice::from_ref(&group))?;
            let h = host_names(&hosts)?;
            confirm(
                ctx.yes,
                &format!(
                    "remove {} from host group {group} (they lose the group's connections)",
                    describe("host", &hosts)
                ),
            )?;
            array
                .remove_host_group_members(&g[0], &h)
                .await
                .with_context(|| {
                    format!(
                        "cannot remove {} from host group {group}",
                        describe("host", &hosts)
                    )
                })?;
            p.done(format!(
                "removed {} from host group {group}",
                describe("host", &hosts)
            ));
            p.emit(
                &serde_json::json!({ "group": group, "removed": hosts }),
                || {
                    let mut t = p.table(&["GROUP", "REMOVED"]);
                    for h in &hosts {
                        t.add_row(vec![group.clone(), h.clone()]);
                    }
                    t
                },
            )?;
        }
    }
    Ok(Outcome::Success)
}

fn member_table(
    p: &crate::output::Printer,
    members: &[flasharray::models::Member],
) -> comfy_table::Table {
    let mut t = p.table(&["GROUP", "HOST"]);
    for m in members {
        t.add_row(vec![
            m.group.name.clone().unwrap_or_default(),
            m.member.name.clone().unwrap_or_default(),
        ]);
    }
    t
}
