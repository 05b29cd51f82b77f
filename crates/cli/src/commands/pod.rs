//! `pxfa pod ...`.

use anyhow::{Context, Result};
use comfy_table::Table;
use flasharray::Size;
use flasharray::models::{Pod, PodPatch, PodPost};

use super::{Ctx, describe, destroyed_filter, list_params, pod_names};
use crate::args::PodCmd;
use crate::confirm::{check_selection, confirm};
use crate::exit::Outcome;
use crate::output::{Printer, destroyed_state, human_size_opt};

/// Runs a `pod` subcommand.
pub(crate) async fn run(cmd: PodCmd, ctx: &Ctx<'_>) -> Result<Outcome> {
    let array = ctx.array();
    let p = ctx.printer;
    match cmd {
        PodCmd::List { list, destroyed } => {
            pod_names(&list.names)?;
            let pods = array
                .list_pods(&list_params(&list, destroyed_filter(&destroyed))?)
                .await
                .context("cannot list pods")?;
            p.emit_list("pod", &pods, |x| x.name.clone(), || table(p, &pods))?;
        }
        PodCmd::Create { names, quota } => {
            let pnames = pod_names(&names)?;
            let quota = quota.as_deref().map(Size::parse_flag).transpose()?;
            let mut body = PodPost::default();
            body.quota_limit = quota.map(Size::as_u64);
            let out = array
                .create_pods(&pnames, &body)
                .await
                .with_context(|| format!("cannot create {}", describe("pod", &names)))?;
            p.done(format!("created {}", describe("pod", &names)));
            p.emit(&out, || table(p, &out))?;
        }
        PodCmd::Destroy {
            names,
            destroy_contents,
        } => {
            check_selection("pod destroy", &names)?;
            let pnames = pod_names(&names)?;
            let extra = if destroy_contents {
                " and every volume in them"
            } else {
                ""
            };
            confirm(
                ctx.yes,
                &format!(
                    "destroy {}{extra} (recoverable until eradicated)",
                    describe("pod", &names)
                ),
            )?;
            let patch = PodPatch::destroy();
            let out = array
                .patch_pods(&pnames, &patch, destroy_contents)
                .await
                .with_context(|| format!("cannot destroy {}", describe("pod", &names)))?;
            p.done(format!("destroyed {}", describe("pod", &names)));
            p.emit(&out, || table(p, &out))?;
        }
        PodCmd::Recover { names } => {
            let pnames = pod_names(&names)?;
            let patch = PodPatch::recover();
            let out = array
                .patch_pods(&pnames, &patch, false)
                .await
                .with_context(|| format!("cannot recover {}", describe("pod", &names)))?;
            p.done(format!("recovered {}", describe("pod", &names)));
            p.emit(&out, || table(p, &out))?;
        }
        PodCmd::Eradicate {
            names,
            eradicate_contents,
        } => {
            check_selection("pod eradicate", &names)?;
            let pnames = pod_names(&names)?;
            confirm(
                ctx.yes,
                &format!("eradicate {} (irreversible)", describe("pod", &names)),
            )?;
            array
                .eradicate_pods(&pnames, eradicate_contents)
                .await
                .with_context(|| format!("cannot eradicate {}", describe("pod", &names)))?;
            p.done(format!("eradicated {}", describe("pod", &names)));
            p.emit(&serde_json::json!({ "eradicated": names }), || {
                let mut t = p.table(&["ERADICATED"]);
                for n in &names {
                    t.add_row(vec![n.clone()]);
                }
                t
            })?;
        }
    }
    Ok(Outcome::Success)
}

/// The pod table.
pub(crate) fn table(p: &Printer, pods: &[Pod]) -> Table {
    let mut headers = vec!["NAME", "ARRAYS", "USED", "QUOTA", "STATE"];
    if p.wide() {
        headers.push("QUOTA USED");
    }
    let mut t = p.table(&headers);
    for pod in pods {
        let arrays: Vec<String> = pod.arrays.iter().filter_map(|a| a.name.clone()).collect();
        let mut row = vec![
            pod.name.clone(),
            crate::output::list_or_dash(&arrays),
            human_size_opt(pod.space.total_used.or(pod.space.total_physical)),
            pod.quota_limit
                .map_or_else(|| "unlimited".into(), crate::output::human_size),
            destroyed_state(pod.destroyed, pod.time_remaining),
        ];
        if p.wide() {
            let used = pod.space.total_used.or(pod.space.total_physical);
            row.push(match (used, pod.quota_limit) {
                (Some(u), Some(q)) => crate::output::capacity_bar(u, q),
                _ => "-".into(),
            });
        }
        t.add_row(row);
    }
    t
}
