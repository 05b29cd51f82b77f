//! `pxfa host ...`.

use anyhow::{Context, Result};
use comfy_table::Table;
use flasharray::models::{Host, HostPatch, HostPersonality, HostPost, NameRef, normalize_wwn};
use flasharray::{HostName, ListParams};

use super::{Ctx, describe, host_group_names, host_names, list_params};
use crate::args::{HostCmd, InitiatorArgs};
use crate::confirm::{check_selection, confirm};
use crate::exit::{InvalidInput, Outcome};
use crate::output::{Printer, list_or_dash, or_dash};

/// Initiators after validation: WWNs in the array's form.
struct Initiators {
    wwns: Vec<String>,
    iqns: Vec<String>,
    nqns: Vec<String>,
}

impl Initiators {
    fn parse(a: &InitiatorArgs) -> Result<Self> {
        let wwns = a
            .wwns
            .iter()
            .map(|w| normalize_wwn(w).map_err(|e| InvalidInput::error(format!("--wwn: {e}"))))
            .collect::<Result<Vec<_>>>()?;
        let checks: [(&str, &Vec<String>, &[&str]); 2] = [
            ("--iqn", &a.iqns, &["iqn.", "eui."]),
            ("--nqn", &a.nqns, &["nqn."]),
        ];
        for (flag, list, prefixes) in checks {
            let bad = list.iter().find(|i| {
                let l = i.to_ascii_lowercase();
                !prefixes.iter().any(|p| l.starts_with(p))
            });
            if let Some(bad) = bad {
                return Err(InvalidInput::error(format!(
                    "{flag} {bad:?}: expected a name starting with {}",
                    prefixes.join(" or ")
                )));
            }
        }
        Ok(Initiators {
            wwns,
            iqns: a.iqns.clone(),
            nqns: a.nqns.clone(),
        })
    }

    fn is_empty(&self) -> bool {
        self.wwns.is_empty() && self.iqns.is_empty() && self.nqns.is_empty()
    }

    fn describe(&self) -> String {
        self.wwns
            .iter()
            .chain(&self.iqns)
            .chain(&self.nqns)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Runs a `host` subcommand.
pub(crate) async fn run(cmd: HostCmd, ctx: &Ctx<'_>) -> Result<Outcome> {
    let array = ctx.array();
    let p = ctx.printer;
    match cmd {
        HostCmd::List { list } => {
            host_names(&list.names)?;
            let hosts = array
                .list_hosts(&list_params(&list, None)?)
                .await
                .context("cannot list hosts")?;
            p.emit_list("host", &hosts, |h| h.name.clone(), || table(p, &hosts))?;
        }
        HostCmd::Get { name } => {
            let names = host_names(std::slice::from_ref(&name))?;
            let h = array
                .list_hosts(&ListParams::names(&names))
                .await
                .with_context(|| format!("cannot read host {name}"))?
                .into_iter()
                .next()
                .with_context(|| format!("host {name} does not exist"))?;
            p.emit(&h, || detail(p, &h))?;
        }
        HostCmd::Create {
            name,
            initiators,
            personality,
            host_group,
        } => create(ctx, &name, &initiators, personality, host_group.as_deref()).await?,
        HostCmd::Delete { names } => {
            check_selection("host delete", &names)?;
            let hnames = host_names(&names)?;
            confirm(ctx.yes, &format!("delete {}", describe("host", &names)))?;
            array
                .delete_hosts(&hnames)
                .await
                .with_context(|| format!("cannot delete {}", describe("host", &names)))?;
            p.done(format!("deleted {}", describe("host", &names)));
            p.emit(&serde_json::json!({ "deleted": names }), || {
                let mut t = p.table(&["DELETED"]);
                for n in &names {
                    t.add_row(vec![n.clone()]);
                }
                t
            })?;
        }
        HostCmd::AddInitiator { name, initiators } => {
            let (names, ini) = one_host_with_initiators(&name, &initiators)?;
            let what = ini.describe();
            let patch = HostPatch::default()
                .with_add_wwns(ini.wwns)
                .with_add_iqns(ini.iqns)
                .with_add_nqns(ini.nqns);
            let out = array
                .patch_hosts(&names, &patch)
                .await
                .with_context(|| format!("cannot add {what} to host {name}"))?;
            p.done(format!("added {what} to host {name}"));
            p.emit(&out, || table(p, &out))?;
        }
        HostCmd::RemoveInitiator { name, initiators } => {
            let (names, ini) = one_host_with_initiators(&name, &initiators)?;
            let what = ini.describe();
            let patch = HostPatch::default()
                .with_remove_wwns(ini.wwns)
                .with_remove_iqns(ini.iqns)
                .with_remove_nqns(ini.nqns);
            let out = array
                .patch_hosts(&names, &patch)
                .await
                .with_context(|| format!("cannot remove {what} from host {name}"))?;
            p.done(format!("removed {what} from host {name}"));
            p.emit(&out, || table(p, &out))?;
        }
        HostCmd::SetGroup { name, group, none } => set_group(ctx, &name, group, none).await?,
    }
    Ok(Outcome::Success)
}

/// `host create`: the host with its initiators, then (when asked) its group.
async fn create(
    ctx: &Ctx<'_>,
    name: &str,
    initiators: &InitiatorArgs,
    personality: Option<String>,
    host_group: Option<&str>,
) -> Result<()> {
    let array = ctx.array();
    let p = ctx.printer;
    let names = host_names(&[name.to_string()])?;
    let ini = Initiators::parse(initiators)?;
    let group = host_group
        .map(|g| host_group_names(&[g.to_string()]))
        .transpose()?;
    let mut body = HostPost::default()
        .with_wwns(ini.wwns)
        .with_iqns(ini.iqns)
        .with_nqns(ini.nqns);
    body.personality = personality.map(HostPersonality::from);
    // The group first: a host created into a group that does not exist would be
    // left behind, and the rerun would fail on the host.
    if let Some(g) = &group {
        group_must_exist(array, &g[0]).await?;
    }
    let mut out = array.create_hosts(&names, &body).await.map_err(|e| {
        let exists = e.kind() == flasharray::ErrorKind::AlreadyExists;
        let fix = if exists {
            format!(
                " (`pxfa host get {name}` shows it; `pxfa host set-group {name} GROUP` and \
                 `pxfa host add-initiator {name}` change it)"
            )
        } else {
            String::new()
        };
        anyhow::Error::new(e).context(format!("cannot create host {name}{fix}"))
    })?;
    if let Some(g) = group {
        let patch = HostPatch::default().with_host_group(NameRef::new(g[0].as_str()));
        out = array.patch_hosts(&names, &patch).await.with_context(|| {
            format!(
                "host {name} was created, but cannot be put into host group {}",
                g[0]
            )
        })?;
    }
    p.done(format!("created host {name}"));
    p.emit(&out, || table(p, &out))
}

/// Refuses (exit 2) a host group that is not on the array, before anything is created.
async fn group_must_exist(
    array: &dyn flasharray::FlashArray,
    group: &flasharray::HostGroupName,
) -> Result<()> {
    let found = match array
        .list_host_groups(&ListParams::names([group.as_str()]))
        .await
    {
        Ok(groups) => !groups.is_empty(),
        Err(e) if e.kind() == flasharray::ErrorKind::NotFound => false,
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!("cannot read host group {group}")));
        }
    };
    if found {
        return Ok(());
    }
    Err(InvalidInput::error(format!(
        "host group {group} does not exist: nothing was created; create it first \
         (`pxfa hostgroup create {group}`) or leave out --hostgroup"
    )))
}

/// `host set-group`: into `group`, or out of any with `none`.
async fn set_group(ctx: &Ctx<'_>, name: &str, group: Option<String>, none: bool) -> Result<()> {
    let p = ctx.printer;
    let names = host_names(&[name.to_string()])?;
    let target = match (group, none) {
        (Some(g), false) => host_group_names(std::slice::from_ref(&g))?[0]
            .as_str()
            .to_string(),
        (None, true) => String::new(),
        _ => return Err(InvalidInput::error("give a host group, or --none")),
    };
    let patch = HostPatch::default().with_host_group(NameRef::new(target.clone()));
    let out = ctx
        .array()
        .patch_hosts(&names, &patch)
        .await
        .with_context(|| format!("cannot change the host group of host {name}"))?;
    if target.is_empty() {
        p.done(format!("host {name} is in no host group now"));
    } else {
        p.done(format!("host {name} is in host group {target} now"));
    }
    p.emit(&out, || table(p, &out))
}

/// The host list table.
pub(crate) fn table(p: &Printer, hosts: &[Host]) -> Table {
    let mut headers = vec![
        "NAME",
        "HOST GROUP",
        "WWNS",
        "IQNS",
        "NQNS",
        "PERSONALITY",
        "CONNECTIONS",
    ];
    if p.wide() {
        headers.push("PORT CONNECTIVITY");
    }
    let mut t = p.table(&headers);
    for h in hosts {
        let mut row = vec![
            h.name.clone(),
            or_dash(h.host_group.name.as_deref()),
            list_or_dash(&colon_wwns(&h.wwns)),
            list_or_dash(&h.iqns),
            list_or_dash(&h.nqns),
            or_dash(h.personality.as_ref().map(HostPersonality::as_str)),
            h.connection_count
                .map_or_else(|| "-".into(), |c| c.to_string()),
        ];
        if p.wide() {
            row.push(or_dash(h.port_connectivity.status.as_deref()));
        }
        t.add_row(row);
    }
    t
}

/// WWNs as admins and FC switches write them (`21:00:f4:c7:aa:00:27:06`); a value
/// the array sent that is not a WWN is shown as it came.
fn colon_wwns(wwns: &[String]) -> Vec<String> {
    wwns.iter()
        .map(|w| flasharray::Wwn::new(w).map_or_else(|_| w.clone(), |w| w.to_string()))
        .collect()
}

fn detail(p: &Printer, h: &Host) -> Table {
    p.kv_table(vec![
        ("name", h.name.clone()),
        ("host group", or_dash(h.host_group.name.as_deref())),
        ("wwns", list_or_dash(&colon_wwns(&h.wwns))),
        ("iqns", list_or_dash(&h.iqns)),
        ("nqns", list_or_dash(&h.nqns)),
        (
            "personality",
            or_dash(h.personality.as_ref().map(HostPersonality::as_str)),
        ),
        (
            "connections",
            h.connection_count
                .map_or_else(|| "-".into(), |c| c.to_string()),
        ),
        (
            "port connectivity",
            or_dash(h.port_connectivity.status.as_deref()),
        ),
    ])
}

/// The host of `add-initiator` / `remove-initiator` and the initiators to change,
/// validated; at least one initiator must be given.
fn one_host_with_initiators(
    name: &str,
    initiators: &InitiatorArgs,
) -> Result<(Vec<HostName>, Initiators)> {
    let names = host_names(&[name.to_string()])?;
    let ini = Initiators::parse(initiators)?;
    if ini.is_empty() {
        return Err(InvalidInput::error(
            "give at least one --wwn, --iqn or --nqn",
        ));
    }
    Ok((names, ini))
}

#[cfg(test)]
mod tests {
    #[test]
    fn wwns_are_shown_with_colons() {
        assert_eq!(
            super::colon_wwns(&["2100F4C7AA002706".into(), "odd".into()]),
            vec!["21:00:f4:c7:aa:00:27:06".to_string(), "odd".to_string()]
        );
    }
}
