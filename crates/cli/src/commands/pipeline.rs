//! The steps the tenant commands share (plan, apply, status, destroy, the drive
//! tagging after the claims bind, demo) around px-topology's tenant pipeline: its
//! errors as exit codes (the realm gate), its apply stage with progress, the report
//! and blocked-plan texts. Below every command module, so that none of them needs
//! another.

use std::path::{Path, PathBuf};

use anyhow::Result;
use px_topology::{
    Applied, ApplyError, ApplyOptions, ApplyReport, ClusterSide, DEFAULT_TENANT_NAMESPACE,
    DestroyOptions, DestroyPlanned, DestroyReport, ObserveError, Plan, Planned, Tenant,
};

use crate::args::GlobalArgs;
use crate::exit::InvalidInput;
use crate::output::{ChangeProgress, Printer};

/// The tenant of a spec file, for a command that acts on the array as that tenant.
/// An absent `metadata.namespace` is where `oc apply` would put the object, so that
/// the CLI and the controller see one tenant: the current context's namespace in
/// the kubeconfig `oc` reads (`$KUBECONFIG`, else `~/.kube/config`), else
/// `default`. The identity shows in every plan, status and destroy.
pub(crate) fn load_tenant(path: &Path) -> Result<Tenant> {
    Ok(Tenant::load_in_namespace(path, oc_namespace)?)
}

/// The namespace `oc apply` gives an object that names none.
fn oc_namespace() -> std::result::Result<String, String> {
    let kubeconfig = std::env::var_os("KUBECONFIG")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            let home = PathBuf::from(std::env::var_os("HOME")?);
            let default = home.join(".kube").join("config");
            default.exists().then_some(default)
        });
    let Some(kubeconfig) = kubeconfig else {
        return Ok(DEFAULT_TENANT_NAMESPACE.to_string());
    };
    match px_cluster::connect::current_context_namespace(&kubeconfig) {
        Ok(ns) => Ok(ns.unwrap_or_else(|| DEFAULT_TENANT_NAMESPACE.to_string())),
        Err(e) => Err(format!(
            "absent, and the namespace `oc apply` would give it cannot be told: {e}; set metadata.namespace"
        )),
    }
}

/// `size`, `render` and `lint` work from the spec alone and never contact an array,
/// even with `PUREFA_URL` exported; an explicit array option gets one warning so that
/// nobody mistakes the output for a check against the array.
pub(crate) fn warn_offline(command: &str, g: &GlobalArgs, p: &Printer) {
    if g.array.is_some()
        || g.pure_json.is_some()
        || g.api_token_file.is_some()
        || g.profile.is_some()
    {
        p.warn(format!(
            "{command} does not contact the array; --array, --profile, --pure-json and --api-token-file are ignored \
             (`pxfa plan` reads the array)"
        ));
    }
}

/// A failed observation: a realm the array cannot have is bad input (exit 2).
pub(crate) fn observe_error(e: ObserveError) -> anyhow::Error {
    match e {
        ObserveError::Realm(e) if e.is_unsupported() => InvalidInput::error(e.to_string()),
        ObserveError::Realm(e) => anyhow::Error::new(e),
        e => anyhow::Error::new(e),
    }
}

/// `error (request id X)` unless the error text already names the request id.
pub(crate) fn with_request_id(error: &str, request_id: Option<&str>) -> String {
    match request_id {
        Some(id) if !error.contains(id) => format!("{error} (request id {id})"),
        _ => error.to_string(),
    }
}

/// The error of a plan with conflicts or refusals: each with its resolution; exit 1,
/// nothing changed.
pub(crate) fn blocked_error(plan: &Plan) -> anyhow::Error {
    let line = |what: &str, b: &px_topology::Blocker| {
        let mut l = format!("{what} {} {}: {}", b.kind.label(), b.name, b.reason);
        if !b.resolution.is_empty() {
            l.push_str(&format!(" (to resolve: {})", b.resolution));
        }
        l
    };
    let list: Vec<String> = plan
        .conflicts
        .iter()
        .map(|c| line("conflict:", c))
        .chain(plan.refusals.iter().map(|r| line("refused:", r)))
        .collect();
    anyhow::anyhow!(
        "the plan cannot be applied as is: {} conflict(s), {} refusal(s); nothing was changed:\n  {}",
        plan.conflicts.len(),
        plan.refusals.len(),
        list.join("\n  ")
    )
}

/// The pipeline's apply stage with progress on stderr: `apply` and the drive tagging
/// after the claims bind.
pub(crate) async fn run_planned<'a, C>(
    planned: Planned<'a>,
    clusters: &C,
    opts: ApplyOptions,
    p: &Printer,
) -> Result<Applied<'a>>
where
    C: ClusterSide,
{
    let total = planned.plan().actionable().count();
    let progress = ChangeProgress::new(p, total);
    let applied = planned
        .apply(clusters, opts, &|ev| progress.event(ev))
        .await;
    progress.finish();
    applied.map_err(|e| match e {
        ApplyError::TokenWouldBeLost(lost) => anyhow::Error::new(lost),
        ApplyError::Journal(e) => anyhow::Error::new(e),
    })
}

/// The pipeline's destroy stage with progress on stderr: `destroy`.
pub(crate) async fn run_destroy(
    planned: DestroyPlanned<'_>,
    opts: &DestroyOptions,
    p: &Printer,
) -> DestroyReport {
    let progress = ChangeProgress::new(p, 0);
    let report = planned.destroy(opts, &|ev| progress.event(ev)).await;
    progress.finish();
    report
}

/// One line per failed or skipped change, with the array's message and request id.
pub(crate) fn report_text(report: &ApplyReport) -> String {
    let mut s = format!(
        "Applied {} change(s) in {} round(s) with {} call(s); {} failed, {} partial, {} skipped.\n{}",
        report.applied.len(),
        report.rounds,
        report.calls,
        report.failed.len(),
        report.partial.len(),
        report.skipped.len(),
        report.writes_line()
    );
    for f in &report.failed {
        s.push_str(&format!(
            "\n  FAILED {}: {}",
            f.change.to_line(),
            with_request_id(&f.error, f.request_id.as_deref())
        ));
    }
    for k in &report.partial {
        s.push_str(&format!(
            "\n  PARTIAL {}: done: {}; not done: {}",
            k.change.to_line(),
            k.done.join("; "),
            with_request_id(&k.failed, k.request_id.as_deref())
        ));
    }
    for k in &report.skipped {
        s.push_str(&format!("\n  skipped {}: {}", k.change.to_line(), k.reason));
    }
    s
}
