//! `pxfa demo`: the whole flow for the example direct-access tenant on an embedded
//! simulated array, so that an admin can see what pxfa does before pointing it at
//! a real array. `--sim-seed brownfield` runs it on a shared production-like array
//! (the management Portworx's hosts and drives, another tenant): the plan is the
//! same tenant pod, and nothing foreign changes.

use std::path::Path;

use anyhow::{Context, Result};
use flasharray::{ConnectionParams, ListParams};
use px_topology::{ApplyOptions, ArrayOnly, PlanOptions, Planned, Site, Tenant};

use super::pipeline::{observe_error, report_text, run_planned};
use crate::args::{DemoArgs, GlobalArgs};
use crate::exit::Outcome;
use crate::output::Printer;
use crate::session::{Session, load_sim};

/// The example tenant the demo provisions (`examples/tenant-direct-access.yaml`).
const EXAMPLE_SPEC: &str = include_str!("../../../../examples/tenant-direct-access.yaml");

/// Runs the demo.
pub(crate) async fn run(a: &DemoArgs, g: &GlobalArgs, p: &Printer) -> Result<Outcome> {
    let spec = px_topology::spec::parse_valid_spec(EXAMPLE_SPEC)
        .map_err(|e| anyhow::anyhow!("the built-in example spec is invalid:\n{e}"))?;
    let t = Tenant::from_spec(spec, Path::new("examples/tenant-direct-access.yaml"))?;
    let mock = load_sim(None, g.sim_seed.seed(), p)?;
    for admin in t.token_users() {
        mock.add_admin(&admin);
    }
    let session = Session::simulated(mock, None);
    let result = demo(a, p, &t, &session).await;
    session.close().await?;
    result
}

/// The pipeline's first two stages on the simulated array (no clusters, no journal).
async fn plan<'a>(t: &Tenant, session: &'a Session) -> Result<Planned<'a>> {
    let observation = t
        .observe(Site::array(session.array.as_ref()))
        .await
        .map_err(observe_error)?;
    Ok(observation.plan(&PlanOptions::default()))
}

fn heading(p: &Printer, n: u32, title: &str) -> Result<()> {
    p.stdout(&format!(
        "\n{}",
        p.paint_out("1", &format!("== {n}. {title}"))
    ))
}

async fn demo(a: &DemoArgs, p: &Printer, t: &Tenant, session: &Session) -> Result<Outcome> {
    let array = session.array.as_ref();
    p.stdout(&format!(
        "pxfa demo: tenant {} ({}) on an {}.",
        t.spec.tenant_name(),
        t.spec.mode(),
        session.label
    ))?;

    heading(p, 1, "Sizing")?;
    p.stdout(&t.sizing.explain().join("\n"))?;

    heading(p, 2, "Plan")?;
    let planned = plan(t, session)
        .await
        .context("cannot read the simulated array")?;
    p.stdout(planned.plan().to_text(false).trim_end())?;
    if !planned.plan().is_applicable() {
        anyhow::bail!(
            "the demo plan is blocked on this array; this is a bug in pxfa, please report it"
        );
    }

    heading(p, 3, "Apply")?;
    let applied = run_planned(planned, &ArrayOnly, ApplyOptions::default(), p).await?;
    let report = applied.report();
    p.stdout(&report_text(report))?;
    if !report.is_success() {
        anyhow::bail!("the demo apply failed; this is a bug in pxfa, please report it");
    }
    // Dynamic provisioning: the management Portworx creates the drives when the
    // claims bind; here a simulated one does, and pxfa finds and tags them.
    if let Some(locator) = super::drives::locator_for(session, t, None) {
        super::drives::simulate_management_portworx(session, t, p).await?;
        if super::drives::tag_found_drives(session, t, locator.as_ref(), 8, p).await?
            != Outcome::Success
        {
            anyhow::bail!(
                "the demo could not tag the drives; this is a bug in pxfa, please report it"
            );
        }
    }

    heading(p, 4, "Array state")?;
    let vols = array.list_volumes(&ListParams::all()).await?;
    p.stdout(&super::volume::table(p, &vols, &[]).to_string())?;
    p.stdout("")?;
    let hosts = array.list_hosts(&ListParams::all()).await?;
    p.stdout(&super::host::table(p, &hosts).to_string())?;
    p.stdout("")?;
    let conns = array.list_connections(&ConnectionParams::default()).await?;
    if conns.is_empty() {
        p.stdout(
            "No connections: with direct access, the management cluster's Portworx connects each volume when a worker VM starts.",
        )?;
    } else {
        p.stdout(&super::connection::table(p, &conns).to_string())?;
    }

    heading(p, 5, "Apply again")?;
    let again = plan(t, session).await?;
    let changes = again.plan().actionable().count();
    let second = run_planned(again, &ArrayOnly, ApplyOptions::default(), p).await?;
    p.stdout(&format!(
        "{changes} change(s) the second time: the array already matches the spec. ({})",
        report_text(second.report())
    ))?;

    heading(p, 6, "Manifests")?;
    let facts = px_topology::ArrayFacts {
        volume_serials: report.facts.volume_serials.clone(),
        api_token: None,
    };
    let manifests = px_topology::render(
        &t.spec,
        &t.sizing,
        &facts,
        px_topology::RenderOptions::default(),
    )?;
    let files = px_topology::write_dir(&manifests, &a.out)
        .with_context(|| format!("cannot write manifests to {}", a.out.display()))?
        .written;
    let shown = std::fs::canonicalize(&a.out).unwrap_or_else(|_| a.out.clone());
    p.stdout(&format!(
        "Wrote {} file(s) to {}. Start with its README; apply the management-cluster folder first.",
        files.len(),
        shown.display()
    ))?;
    Ok(Outcome::Success)
}
