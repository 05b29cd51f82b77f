//! The tenant workflow: `size`, `render`, `lint`, `plan`, `apply`, `destroy`.
//!
//! All of them start from one spec file. An invalid spec exits 2 with the field path
//! before any array is contacted.

use std::sync::Arc;

use anyhow::{Context, Result};
use px_cluster::{ClusterClients, ClusterPreview};
use px_topology::token_journal::TokenJournal;
use px_topology::{
    ApplyOptions, ApplyReport, ArrayFacts, ArraySpaceInfo, Cancel, DestroyError, DestroyOptions,
    DestroyPlan, DestroyPlanned, DestroyReport, DestroyScope, Manifest, Observation, ObserveError,
    Plan, PlanOptions, Planned, PreflightOptions, RenderOptions, Site, Tenant, render,
};
use serde::Serialize;

use crate::args::{
    ApplyArgs, ClaimArgs, ClusterArgs, DestroyArgs, GlobalArgs, LintArgs, OutputFormat, PlanArgs,
};
use crate::confirm::confirm;
use crate::exit::{InvalidInput, Outcome};
use crate::graph::{Graph, Verdicts};
use crate::output::{Printer, to_json, to_yaml};
use crate::preflight::{self, Findings};
use crate::session::Session;
use crate::token_journal::FileTokenJournal;

use super::kube_clients::KubeClients;
use super::pipeline::{
    blocked_error, load_tenant, observe_error, report_text, run_destroy, run_planned, warn_offline,
    with_request_id,
};

/// `lint`: findings per file; exit 1 when any is an error.
pub(crate) fn lint(a: &LintArgs, g: &GlobalArgs, p: &Printer) -> Result<Outcome> {
    warn_offline("lint", g, p);
    let mut all = Vec::new();
    for f in a.all_files() {
        let findings =
            px_topology::lint_path(f).with_context(|| format!("cannot lint {}", f.display()))?;
        all.extend(findings);
    }
    let errors = all
        .iter()
        .filter(|f| f.severity == px_topology::Severity::Error)
        .count();
    let text = if all.is_empty() {
        "no findings".to_string()
    } else {
        all.iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    p.emit_text(&all, &text)?;
    if errors > 0 {
        anyhow::bail!("{errors} lint error(s)");
    }
    Ok(Outcome::Success)
}

/// The plan for people; on a terminal with colours, `+` green, `~` yellow, `-` red,
/// `x` and `!` bold red (NO_COLOR and `--color never` turn this off).
pub(crate) fn plan_text(plan: &Plan, p: &Printer) -> String {
    let mut text = plan.to_text(p.verbose > 0);
    if !plan.has_changes() && !plan.is_blocked() {
        text.push_str(&match plan.summary.pending {
            0 => "No changes: the array already matches the spec.\n".to_string(),
            n => format!("No array changes; {n} drive(s) pending (see above).\n"),
        });
    }
    text.trim_end()
        .lines()
        .map(|l| match l.chars().next() {
            Some('+') => p.paint_out("32", l),
            Some('~') => p.paint_out("33", l),
            Some('-') => p.paint_out("31", l),
            Some('x' | '!') if l.as_bytes().get(1) == Some(&b' ') => p.paint_out("31;1", l),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The manifests a picture needs (no secrets, no array facts).
fn picture_manifests(t: &Tenant) -> Result<Vec<Manifest>> {
    render(
        &t.spec,
        &t.sizing,
        &ArrayFacts::default(),
        RenderOptions::default(),
    )
    .with_context(|| format!("cannot render the manifests of {}", t.spec.tenant_name()))
}

/// The pipeline's first two stages (observe, with the token journal and the drive
/// claims of `site`, then plan), with the array's space read alongside the
/// observation so that the preflight costs no extra round. A space that cannot be
/// read is a warning: the free-space check is then skipped.
async fn plan_with_space<'a>(
    session: &Session,
    t: &Tenant,
    site: Site<'a>,
    opts: PlanOptions,
    p: &Printer,
) -> Result<(Planned<'a>, Option<ArraySpaceInfo>)> {
    let (observed, space) = tokio::join!(t.observe(site), session.array.get_array_space());
    let observation = observed.map_err(observe_error)?;
    if let Some(e) = observation.claims_unreadable() {
        p.warn(format!(
            "cannot read which drive claims are bound, their drives stay pending: {e}"
        ));
    }
    let planned = observation.plan(&opts);
    let space = match space {
        Ok(s) => Some(ArraySpaceInfo::from(&s)),
        Err(e) => {
            p.warn(format!(
                "cannot read the array's space, the free-space check is skipped: {e}"
            ));
            None
        }
    };
    Ok((planned, space))
}

/// Where this apply keeps a token it creates: `--out DIR --include-secrets` or the
/// tenant cluster's px-pure-secret. Without either, px-topology's rule refuses.
fn keep_new_token(planned: &Planned<'_>, a: &ApplyArgs, f: &mut Findings) {
    // `--out DIR --include-secrets` is the planned apply's copy already.
    if let Err(lost) =
        planned.refuse_losing_a_new_token(a.kube.clusters.tenant_kubeconfig.is_some())
    {
        f.input(format!(
            "{lost}. Re-run with --out DIR --include-secrets (px-pure-secret is written with mode 0600), \
             or with --tenant-kubeconfig to write it into the tenant cluster, \
             or create the token yourself first (pxfa token create {user} --out FILE)",
            user = lost.user
        ));
    }
}

/// Every check before the first write of `apply` (see [`crate::preflight`]); one
/// error naming all findings, or `Ok`.
async fn apply_preflight(
    a: &ApplyArgs,
    kube: &KubeClients,
    p: &Printer,
    session: &Session,
    planned: &Planned<'_>,
    space: Option<ArraySpaceInfo>,
) -> Result<()> {
    let t = planned.tenant();
    let mut f = Findings::default();
    kube.check(&mut f);

    if let Some(note) = preflight::endpoint(
        t.spec.spec.array.endpoint.as_deref(),
        session.url.as_ref(),
        a.allow_endpoint_mismatch,
        &mut f,
    )
    .await
    {
        p.info(note);
    }
    keep_new_token(planned, a, &mut f);
    let opts = PreflightOptions {
        allow_overcommit: a.allow_overcommit,
    };
    for finding in planned.preflight(space.as_ref(), opts) {
        f.array(finding.message);
    }
    f.refuse()
}

pub(crate) async fn plan(a: &PlanArgs, g: &GlobalArgs, p: &Printer) -> Result<Outcome> {
    if a.destroy {
        return plan_destroy(a, g, p).await;
    }
    let t = load_tenant(&a.file)?;
    // The kubeconfigs load before the array is opened: one that does not is bad
    // input (exit 2), with nothing sent anywhere.
    let clusters = super::cluster_preview::clients(&a.clusters, g).await?;
    let management = clusters.as_ref().map(|c| &c.management);
    // The site's facts as apply reads them, so the preview renders what apply would.
    let t = preflight::site_resolved(t, management, &a.file, p).await?;
    let session = Session::open(g, p, &t.token_users())?;
    let locator = super::drives::locator_for(&session, &t, management);
    let token_journal = super::token_delivery::journal(&t, &session, None, None)
        .map(|v| Arc::new(FileTokenJournal::read_only(v)) as Arc<dyn TokenJournal>);
    let site = Site {
        array: session.array.as_ref(),
        claims: locator.as_deref(),
        journal: token_journal,
    };
    let result = plan_with_space(&session, &t, site, a.plan.to_options(), p)
        .await
        .map(|(planned, space)| (hold_new_token(planned, &a.clusters), space));
    // Observing was the last array call.
    session.end_array_work();
    let url = session.url.clone();
    let seen = Seen {
        url: url.as_ref(),
        // Only the simulated management Portworx binds pending claims in an apply.
        apply_binds_claims: session.is_simulated() && management.is_none(),
    };
    let outcome = plan_outcome(a, p, result, clusters, seen).await;
    session.close().await?;
    outcome
}

/// What `plan_outcome` needs to know of the session.
struct Seen<'u> {
    url: Option<&'u url::Url>,
    /// An apply from here makes pending drives' claims bind (`--array sim`).
    apply_binds_claims: bool,
}

/// Prints the plan (and, with clusters, what apply would change on them) and what
/// apply's preflight would refuse; the exit code is the plan's.
async fn plan_outcome(
    a: &PlanArgs,
    p: &Printer,
    result: Result<(Planned<'_>, Option<ArraySpaceInfo>)>,
    clusters: Option<ClusterClients>,
    seen: Seen<'_>,
) -> Result<Outcome> {
    let (planned, space) = result?;
    let (t, plan) = (planned.tenant(), planned.plan());
    // A cluster that cannot be read fails the command after the array plan is shown.
    let (preview, unread) = match clusters {
        Some(c) if plan.is_applicable() => {
            match super::cluster_preview::preview(a, c, &planned, p).await {
                Ok(preview) => (Some(preview), None),
                Err(e) => (None, Some(e)),
            }
        }
        _ => (None, None),
    };
    print_plan_with(plan, t, preview.as_ref(), p)?;
    let mut f = Findings::default();
    if let Some(note) = preflight::endpoint(
        t.spec.spec.array.endpoint.as_deref(),
        seen.url,
        false,
        &mut f,
    )
    .await
    {
        p.info(note);
    }
    for finding in planned.preflight(space.as_ref(), PreflightOptions::default()) {
        f.array(finding.message);
    }
    for m in f.messages() {
        p.warn(format!("apply would refuse: {m}"));
    }
    if !plan.is_applicable() {
        return Err(blocked_error(plan));
    }
    if let Some(e) = unread {
        return Err(e);
    }
    let pending_counts = pending_counts(planned.observed().drives.located, &seen, plan, p);
    let clusters_change = preview.as_ref().is_some_and(ClusterPreview::has_changes);
    if a.detailed_exitcode && (plan.has_changes() || pending_counts || clusters_change) {
        return Ok(Outcome::Found);
    }
    Ok(Outcome::Success)
}

/// Whether the plan's pending drives count as changes for `--detailed-exitcode`:
/// only when an apply from here makes their claims bind (`--array sim`'s simulated
/// Portworx). Otherwise no apply from here progresses them (their claims bind when
/// the management Portworx provisions them), and a drift check would alarm forever:
/// stderr says why they do not count.
fn pending_counts(located: bool, seen: &Seen<'_>, plan: &Plan, p: &Printer) -> bool {
    let pending = plan.summary.pending;
    if pending == 0 {
        return false;
    }
    if seen.apply_binds_claims {
        return true;
    }
    let why = if located {
        "their claims are not bound yet (the management Portworx creates the volumes when they \
         bind; `pxfa apply --kubeconfig` then tags them)"
    } else {
        "on claims this plan cannot read: `pxfa apply --kubeconfig` tags them once bound"
    };
    p.info(format!(
        "{pending} drive(s) pending, {why}; not a change pxfa can make from here, \
         --detailed-exitcode does not count them"
    ));
    false
}

/// What `apply -o json` prints.
#[derive(Serialize)]
struct ApplyOut<'a> {
    plan: px_topology::PlanDocument<'a>,
    report: &'a ApplyReport,
}

/// `apply`; `cancel` is raised by the first Ctrl-C.
pub(crate) async fn apply(
    a: &ApplyArgs,
    g: &GlobalArgs,
    p: &Printer,
    cancel: &Cancel,
) -> Result<Outcome> {
    if a.dry_run.is_some() {
        return Err(InvalidInput::error(format!(
            "apply has no --dry-run: use `pxfa plan -f {} --kubeconfig FILE` (what apply would \
             change on the array and, as a server-side apply dry run, on the clusters; it writes \
             nothing); nothing was sent",
            a.file.display()
        )));
    }
    let t = load_tenant(&a.file)?;
    if a.kube.clusters.kubeconfig.is_none() {
        p.info(
            "array only: no --kubeconfig or $KUBECONFIG, so no cluster is touched (the manifests \
             are for you to apply; --out DIR writes them)",
        );
    }
    // Each kubeconfig is read once, here; one that did not load is refused before the
    // array is opened (exit 2, nothing sent), as status, doctor and orphans do.
    let kube = KubeClients::load(&a.kube.clusters, g.kube_bounds(false)).await;
    let mut unloaded = Findings::default();
    kube.check(&mut unloaded);
    unloaded.refuse()?;
    // The site's facts (with --kubeconfig) before anything else: a contradiction exits 2.
    let t = preflight::site_resolved(t, kube.management(), &a.file, p).await?;
    // The output folder is checked before the array is even opened: a link, a file
    // or another user's folder there must not surface after the array changed.
    if let Some(out) = &a.out {
        px_topology::check_out_dir(out, &[crate::token_journal::OUT_SUBDIR])
            .map_err(|e| InvalidInput::error(format!("--out: {e}")))?;
    }
    let session = Session::open(g, p, &t.token_users())?;
    let result = apply_in(a, &kube, g, p, &t, &session, cancel).await;
    let closed = session.close().await;
    let outcome = result?;
    closed?;
    Ok(outcome)
}

async fn apply_in(
    a: &ApplyArgs,
    kube: &KubeClients,
    g: &GlobalArgs,
    p: &Printer,
    t: &Tenant,
    session: &Session,
    cancel: &Cancel,
) -> Result<Outcome> {
    // A kubeconfig that did not load gives no locator here: the preflight below
    // refuses it (exit 2, before any write) with the precise reason.
    let locator = super::drives::locator_for(session, t, kube.management());
    let token_journal: Option<Arc<FileTokenJournal>> =
        super::token_delivery::journal(t, session, a.out.as_deref(), a.state_dir.as_deref())
            .map(Arc::new);
    if let Some(v) = &token_journal {
        v.check().map_err(|e| InvalidInput::error(e.to_string()))?;
    }
    let site = Site {
        array: session.array.as_ref(),
        claims: locator.as_deref(),
        journal: token_journal.clone().map(|v| v as Arc<dyn TokenJournal>),
    };
    let (planned, space) = plan_with_space(session, t, site, a.plan.to_options(), p).await?;
    let planned = planned.with_token_copy(super::token_delivery::copies_token(a));
    let planned = hold_new_token(planned, &a.kube.clusters);
    approve(a, kube, g, p, session, &planned, space).await?;
    let opts = ApplyOptions {
        concurrency: a.concurrency as usize,
        cancel: cancel.clone(),
        ..ApplyOptions::default()
    };
    let clusters = super::token_delivery::cluster_side(a, kube.cluster_clients()?, p, session);
    let applied = run_planned(planned, &clusters, opts, p).await?;
    let report = applied.report();
    // The last array call has returned: the logout runs while the report, the
    // manifests and the clusters are dealt with. Not yet when the dynamic drives
    // are to be tagged once the claims bind on the cluster: that needs the array.
    if a.kube.clusters.kubeconfig.is_none() || t.desired.drives.is_empty() || session.is_simulated()
    {
        session.end_array_work();
    }
    print_report(applied.plan(), report, p)?;
    // A Ctrl-C that came after the last call started still stops before the clusters.
    let interrupted = report.interrupted || cancel.is_cancelled();
    let done = super::token_delivery::Done {
        applied: &applied,
        clusters: &clusters,
        journal: token_journal.as_deref(),
        interrupted,
    };
    let outcome =
        super::token_delivery::after_apply(a, p, session, locator.as_deref(), done).await?;
    Ok(warn_held_token(applied.plan(), outcome, p))
}

/// With the management cluster and no tenant cluster (nor `--out DIR
/// --include-secrets`), a token the plan creates has nowhere to go yet, while the
/// HostedCluster this apply makes is where the tenant cluster comes from: the
/// token's creation is held (the plan shows it) and the rest applies; `apply` with
/// `--tenant-kubeconfig` then creates and delivers it, as the controller's next
/// reconcile does. Array only, [`keep_new_token`]'s refusal stands.
fn hold_new_token<'a>(planned: Planned<'a>, k: &ClusterArgs) -> Planned<'a> {
    if k.kubeconfig.is_none() {
        return planned;
    }
    planned.holding_a_new_token(
        k.tenant_kubeconfig.is_some(),
        "no tenant cluster given (--tenant-kubeconfig)",
    )
}

/// A token held back ([`hold_new_token`]) is said with what to do next; the apply
/// is then not complete (exit 4).
fn warn_held_token(plan: &Plan, outcome: Outcome, p: &Printer) -> Outcome {
    let Some(held) = plan.held_token() else {
        return outcome;
    };
    p.warn(format!(
        "the API token of array user {} is not created yet: {}. Run apply again with \
         --tenant-kubeconfig (the HostedCluster's admin kubeconfig) once the tenant cluster is up",
        held.name, held.reason
    ));
    if outcome == Outcome::Success {
        Outcome::PartialFailure
    } else {
        outcome
    }
}

/// Everything between the plan and the first write: the plan printed, a blocked
/// plan refused, the preflight, the refusals left out, the prompt.
async fn approve(
    a: &ApplyArgs,
    kube: &KubeClients,
    g: &GlobalArgs,
    p: &Printer,
    session: &Session,
    planned: &Planned<'_>,
    space: Option<ArraySpaceInfo>,
) -> Result<()> {
    let plan = planned.plan();
    let text = plan_text(plan, p);
    if matches!(p.format, OutputFormat::Table | OutputFormat::Wide) {
        p.stdout(&text)?;
    } else {
        p.info(&text);
    }
    if !plan.is_applicable() {
        return Err(blocked_error(plan));
    }
    apply_preflight(a, kube, p, session, planned, space).await?;
    if !plan.refusals.is_empty() {
        p.warn(format!(
            "{} change(s) refused and left out (see `x refused` above); --allow-shrink allows shrinking volumes",
            plan.refusals.len()
        ));
    }
    if plan.has_changes() {
        confirm(
            g.yes,
            &format!(
                "apply {} change(s) to {} for tenant {}",
                plan.actionable().count(),
                session.label,
                plan.tenant
            ),
        )?;
    }
    Ok(())
}

/// Prints the apply report: the text, and with `-o json|yaml` the plan and the
/// report as one document.
fn print_report(plan: &Plan, report: &ApplyReport, p: &Printer) -> Result<()> {
    match p.format {
        OutputFormat::Table | OutputFormat::Wide => p.stdout(&report_text(report)),
        f @ (OutputFormat::Name | OutputFormat::Mermaid | OutputFormat::Dot) => {
            Err(crate::output::unsupported(f))
        }
        f => {
            p.info(report_text(report));
            let out = ApplyOut {
                plan: plan.document(),
                report,
            };
            p.stdout(&if f == OutputFormat::Json {
                to_json(&out)?
            } else {
                to_yaml(&out)?
            })
        }
    }
}

/// Prints a plan (a real one or a destroy preview) in the chosen format.
fn print_plan(plan: &Plan, t: &Tenant, p: &Printer) -> Result<()> {
    print_plan_with(plan, t, None, p)
}

/// What `plan -o json|yaml` prints: the plan document, and with `--kubeconfig` the
/// clusters' preview under `clusters`.
#[derive(Serialize)]
struct PlanOut<'a> {
    #[serde(flatten)]
    plan: px_topology::PlanDocument<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clusters: Option<&'a ClusterPreview>,
}

/// [`print_plan`] with the clusters' preview, when there is one.
fn print_plan_with(
    plan: &Plan,
    t: &Tenant,
    clusters: Option<&ClusterPreview>,
    p: &Printer,
) -> Result<()> {
    let doc = || PlanOut {
        plan: plan.document(),
        clusters,
    };
    match p.format {
        OutputFormat::Table | OutputFormat::Wide => {
            let mut text = plan_text(plan, p);
            if let Some(c) = clusters {
                text.push('\n');
                text.push_str(&super::cluster_preview::text(c, p));
            }
            p.stdout(&text)
        }
        OutputFormat::Json => p.stdout(&to_json(&doc())?),
        OutputFormat::Yaml => p.stdout(&to_yaml(&doc())?),
        OutputFormat::Mermaid | OutputFormat::Dot => {
            let g = Graph::tenant(plan, &picture_manifests(t)?, &Verdicts::Plan);
            p.stdout(&if p.format == OutputFormat::Dot {
                g.to_dot()
            } else {
                g.to_mermaid()
            })
        }
        f @ (OutputFormat::Name | OutputFormat::Csv) => Err(crate::output::unsupported(f)),
    }
}

/// `plan --destroy`: what `destroy -f SPEC` would remove; reads only.
async fn plan_destroy(a: &PlanArgs, g: &GlobalArgs, p: &Printer) -> Result<Outcome> {
    let t = load_tenant(&a.file)?;
    let session = Session::open(g, p, &t.token_users())?;
    let scope = DestroyScope {
        eradicate: a.eradicate,
        delete_token: a.delete_token,
        destroy_dynamic_drives: a.plan.destroy_dynamic_drives,
    };
    // Nothing tagged for the tenant is an empty preview, exit 0, as the destroy
    // itself succeeds then with nothing to do (`nothing_to_destroy`).
    let observation = t
        .observe(Site::array(session.array.as_ref()))
        .await
        .map_err(observe_error);
    let result = observation
        .and_then(|o| destroy_planned(o, scope))
        .map(|planned| {
            planned.map_or_else(
                || Plan::empty(&t.desired.tenant),
                |planned| planned.plan().to_plan(),
            )
        });
    let label = session.label.clone();
    session.close().await?;
    let plan =
        result.with_context(|| format!("cannot plan destroying tenant {}", t.desired.tenant))?;
    if plan.changes.is_empty() && plan.notes.is_empty() {
        p.warn(format!(
            "nothing on the array is tagged for tenant {} ({label}): nothing to destroy",
            t.desired.tenant
        ));
    }
    print_plan(&plan, &t, p)?;
    if a.detailed_exitcode && plan.has_changes() {
        return Ok(Outcome::Found);
    }
    Ok(Outcome::Success)
}

/// How long destroyed objects stay recoverable, from the array's eradication delay
/// when it reports one.
async fn recoverable_until(session: &Session) -> String {
    match session.array.get_array().await {
        Ok(info) => match info.eradication_config.eradication_delay {
            Some(ms) => {
                let until = jiff::Timestamp::now()
                    .checked_add(jiff::SignedDuration::from_millis(
                        i64::try_from(ms).unwrap_or(i64::MAX),
                    ))
                    .map(|ts| ts.strftime("%Y-%m-%d %H:%M UTC").to_string())
                    .unwrap_or_else(|_| "later".to_string());
                format!(
                    "recoverable until about {until} (the array's eradication delay, {})",
                    crate::output::human_ms(ms)
                )
            }
            None => "recoverable for the array's eradication delay (24 h by default)".to_string(),
        },
        Err(_) => "recoverable for the array's eradication delay (24 h by default)".to_string(),
    }
}

/// `destroy`; `cancel` is raised by the first Ctrl-C.
pub(crate) async fn destroy(
    a: &DestroyArgs,
    g: &GlobalArgs,
    p: &Printer,
    cancel: &Cancel,
) -> Result<Outcome> {
    let t = load_tenant(&a.file)?;
    let session = Session::open(g, p, &t.token_users())?;
    let result = destroy_in(a, g, p, &t, &session, cancel).await;
    let closed = session.close().await;
    let outcome = result?;
    closed?;
    Ok(outcome)
}

async fn destroy_in(
    a: &DestroyArgs,
    g: &GlobalArgs,
    p: &Printer,
    t: &Tenant,
    session: &Session,
    cancel: &Cancel,
) -> Result<Outcome> {
    // Bad input first: a realm the array cannot have (the observation's realm gate,
    // the one check of it), an endpoint of another array.
    let observation = observe_for_destroy(session, t).await?;
    let mut f = Findings::default();
    if let Some(note) = preflight::endpoint(
        t.spec.spec.array.endpoint.as_deref(),
        session.url.as_ref(),
        a.allow_endpoint_mismatch,
        &mut f,
    )
    .await
    {
        p.info(note);
    }
    f.refuse()?;
    let opts = DestroyOptions {
        eradicate: a.eradicate,
        delete_token: a.delete_token,
        destroy_dynamic_drives: a.destroy_dynamic_drives,
        concurrency: a.concurrency as usize,
        cancel: cancel.clone(),
    };
    // What goes, computed once: the prompt lists it and the destroy runs exactly it.
    let planned = destroy_planned(observation, DestroyScope::from(&opts))
        .with_context(|| format!("cannot destroy tenant {}", t.desired.tenant))?;
    let Some(planned) = planned else {
        return nothing_to_destroy(t, session, p);
    };
    confirm(
        g.yes,
        &destroy_question(a, t, session, planned.plan()).await,
    )?;
    let report = run_destroy(planned, &opts, p).await;
    p.emit_text(&report, &destroy_text(&report))?;
    if report.interrupted {
        p.warn(format!(
            "interrupted: {} destroyed; run destroy again to continue (the calls in flight finished)",
            report.done.len()
        ));
        return Ok(Outcome::Interrupted);
    }
    if !t.desired.drives.is_empty() && !report.done.is_empty() {
        p.info(format!(
            "the drive claims' PersistentVolumes on the management cluster are Released (reclaimPolicy Retain) and still name the destroyed volumes: once nothing needs recovering, delete the claims in {} and their Released PVs (`oc get pv | grep Released`), then the class {}",
            t.spec.hcp_namespace(),
            t.spec.fada_storage_class()
        ));
    }
    if report.is_success() {
        Ok(Outcome::Success)
    } else {
        Ok(Outcome::PartialFailure)
    }
}

/// The pipeline's observation of `t` on the session's array for a destroy: the
/// realm gate (a realm the array cannot have is bad input, exit 2, without more
/// context) and one read of the array.
async fn observe_for_destroy<'a>(session: &'a Session, t: &Tenant) -> Result<Observation<'a>> {
    t.observe(Site::array(session.array.as_ref()))
        .await
        .map_err(|e| match e {
            ObserveError::Realm(_) => observe_error(e),
            e => observe_error(e).context(format!("cannot destroy tenant {}", t.desired.tenant)),
        })
}

/// What removing the tenant takes, from its observation; `None` when nothing on
/// the array is tagged for the tenant.
fn destroy_planned(
    observation: Observation<'_>,
    scope: DestroyScope,
) -> Result<Option<DestroyPlanned<'_>>> {
    match observation.plan_destroy(scope) {
        Ok(planned) => Ok(Some(planned)),
        Err(DestroyError::NothingSelected { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// `destroy` with nothing on the array tagged for the tenant: there is nothing to
/// remove, so the tenant is as destroy leaves it and the command succeeds with an
/// empty report, as a second destroy of a tenant does (an idempotent destroy, like
/// `kubectl delete --ignore-not-found`). Stderr says why, since a wrong array or
/// tenant name looks the same from here.
fn nothing_to_destroy(t: &Tenant, session: &Session, p: &Printer) -> Result<Outcome> {
    let report = DestroyReport {
        tenant: t.desired.tenant.to_string(),
        ..DestroyReport::default()
    };
    p.emit_text(&report, &destroy_text(&report))?;
    let tenant = &t.desired.tenant;
    if t.desired.is_empty() {
        p.info(format!(
            "tenant {tenant} puts nothing on the array ({} mode): nothing to destroy on {}",
            t.spec.mode(),
            session.label
        ));
    } else {
        p.warn(format!(
            "nothing on {} is tagged for tenant {tenant}: nothing to destroy (already destroyed and eradicated, or never applied to this array)",
            session.label
        ));
    }
    Ok(Outcome::Success)
}

/// The confirmation prompt: what goes, how long it stays recoverable, what is kept.
async fn destroy_question(
    a: &DestroyArgs,
    t: &Tenant,
    session: &Session,
    preview: &DestroyPlan,
) -> String {
    let until = if a.eradicate {
        "; ERADICATED: irreversible".to_string()
    } else {
        format!("; they stay {}", recoverable_until(session).await)
    };
    let mut question = format!(
        "destroy {} object(s) pxfa made for tenant {} on {}{until}:",
        preview.changes.len(),
        t.desired.tenant,
        session.label
    );
    for c in &preview.changes {
        question.push_str(&format!("\n  {}", c.to_line()));
    }
    for k in &preview.kept {
        question.push_str(&format!(
            "\n  kept {} {}: {}",
            k.kind.label(),
            k.name,
            k.reason
        ));
    }
    question.push_str("\nproceed");
    question
}

/// `claim`: the objects an earlier pxfa tagged for the tenant's name without a
/// namespace become the spec's tenant's (`tenant-namespace` added; nothing else
/// changes). Asks first; `--dry-run` only lists them.
pub(crate) async fn claim(a: &ClaimArgs, g: &GlobalArgs, p: &Printer) -> Result<Outcome> {
    let t = load_tenant(&a.file)?;
    let session = Session::open(g, p, &t.token_users())?;
    let result = claim_in(a, g, p, &t, &session).await;
    let closed = session.close().await;
    let outcome = result?;
    closed?;
    Ok(outcome)
}

async fn claim_in(
    a: &ClaimArgs,
    g: &GlobalArgs,
    p: &Printer,
    t: &Tenant,
    session: &Session,
) -> Result<Outcome> {
    let id = &t.desired.tenant;
    let found = px_topology::find_unclaimed(session.array.as_ref(), id)
        .await
        .with_context(|| format!("cannot read the array's pxfa tags for tenant {id}"))?;
    let list: String = (found.objects.iter())
        .map(|o| format!("\n  {} {}", o.kind, o.name))
        .collect();
    if found.objects.is_empty() {
        p.emit_text(
            &found,
            &format!(
                "nothing on {} is tagged for a tenant named {:?} without a namespace: nothing to claim",
                session.label, id.name
            ),
        )?;
        return Ok(Outcome::Success);
    }
    if a.dry_run {
        p.emit_text(
            &found,
            &format!(
                "would claim {} object(s) on {} for tenant {id}:{list}",
                found.objects.len(),
                session.label
            ),
        )?;
        return Ok(Outcome::Success);
    }
    confirm(
        g.yes,
        &format!(
            "claim {} object(s) an earlier pxfa tagged for {:?} on {} for tenant {id} (another namespace's tenant of that name would lose them):{list}\nproceed",
            found.objects.len(),
            id.name,
            session.label
        ),
    )?;
    found
        .take(session.array.as_ref())
        .await
        .with_context(|| format!("cannot claim the objects for tenant {id}; run claim again"))?;
    p.emit_text(
        &found,
        &format!(
            "claimed {} object(s) for tenant {id}:{list}",
            found.objects.len()
        ),
    )?;
    Ok(Outcome::Success)
}

/// The destroy report for humans: what went, what failed (with request ids), what
/// stays pending eradication, and what was kept because pxfa does not own it.
pub(crate) fn destroy_text(r: &DestroyReport) -> String {
    let mut s = format!(
        "Destroyed {} of {} object(s) of tenant {} in {} round(s) with {} call(s); {} failed, {} skipped.",
        r.done.len(),
        r.changes.len(),
        r.tenant,
        r.rounds,
        r.calls,
        r.failed.len(),
        r.skipped.len()
    );
    for f in &r.failed {
        s.push_str(&format!(
            "\n  FAILED {}: {}",
            f.change.to_line(),
            with_request_id(&f.error, f.request_id.as_deref())
        ));
    }
    for k in &r.skipped {
        s.push_str(&format!("\n  skipped {}: {}", k.change.to_line(), k.reason));
    }
    // One batch refusal (SafeMode) is every object's reason: said once, then one
    // line per object.
    let mut reasons: Vec<&str> = Vec::new();
    for e in &r.pending_eradication {
        if !reasons.contains(&e.reason.as_str()) {
            reasons.push(&e.reason);
        }
    }
    for (i, reason) in reasons.iter().enumerate() {
        // A later refusal quoting an earlier one (the pod's, whose volumes stayed)
        // points at it instead of repeating it.
        let shown = reasons[..i].iter().fold(reason.to_string(), |r, earlier| {
            r.replace(earlier, "the refusal above")
        });
        s.push_str(&format!("\n  pending eradication: {shown}"));
        for e in r.pending_eradication.iter().filter(|e| e.reason == *reason) {
            let when = e.time_remaining_ms.map_or_else(String::new, |ms| {
                format!(
                    ", eradicated by the array in {}",
                    crate::output::human_ms(ms)
                )
            });
            s.push_str(&format!("\n    {} {}{when}", e.kind.label(), e.name));
        }
    }
    for k in &r.kept {
        s.push_str(&format!(
            "\n  kept {} {}: {}",
            k.kind.label(),
            k.name,
            k.reason
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_id_shown_once() {
        assert_eq!(
            with_request_id("boom (request id r1)", Some("r1")),
            "boom (request id r1)"
        );
        assert_eq!(with_request_id("boom", Some("r1")), "boom (request id r1)");
        assert_eq!(with_request_id("boom", None), "boom");
    }
}
