//! After the array part of `apply`: the manifests of `--out`, the clusters, the
//! dynamic drives found and tagged once their claims bind, and the tenant's API token
//! delivered from the report to a durable copy before the token journal
//! (`crate::token_journal`) lets go of it, or reported when the token user holds a
//! token pxfa has no copy of.

use std::path::Path;

use anyhow::{Context, Result};
use px_topology::Tenant;
use px_topology::converge::ApplyReport;
use px_topology::driver::ArrayFacts;
use px_topology::plan::{DriveLocator, Observed, TokenJournal, TokenState};
use px_topology::vault::TokenVault;

use super::render::{render_options, write_manifests};
use crate::args::ApplyArgs;
use crate::exit::Outcome;
use crate::output::Printer;
use crate::session::Session;
use crate::token_journal::{self, FileVault};

/// The token journal of this tenant on this array (none when the tenant has no
/// token): written to `--out DIR/.pxfa/` when given, else to the state folder; read
/// from both.
pub(super) fn journal(
    t: &Tenant,
    session: &Session,
    out: Option<&Path>,
    state_dir: Option<&Path>,
) -> Option<FileVault> {
    t.desired.api_token.as_ref()?;
    let env = |k: &str| std::env::var(k).ok();
    let state = state_dir
        .map(Path::to_path_buf)
        .or_else(|| token_journal::default_state_dir(&env));
    let dirs = out
        .map(|o| o.join(token_journal::OUT_SUBDIR))
        .into_iter()
        .chain(state)
        .collect();
    Some(FileVault::new(&session.array_key(), dirs))
}

/// What the array part of `apply` left for the rest of it.
pub(super) struct Applied<'a> {
    /// What the plan observed (the token state and journal).
    pub(super) observed: &'a Observed,
    /// The converge report.
    pub(super) report: &'a ApplyReport,
    /// The token journal, when the tenant has a token.
    pub(super) vault: Option<&'a FileVault>,
    /// A Ctrl-C stopped the run: the clusters are skipped.
    pub(super) interrupted: bool,
    /// Dynamic drives whose claims were not bound when planned.
    pub(super) pending_drives: usize,
}

/// Writes `--out`, applies to the clusters (not when interrupted), tags the dynamic
/// drives whose claims bound, delivers the token and settles the journal; the
/// apply's outcome.
pub(super) async fn after_apply(
    a: &ApplyArgs,
    p: &Printer,
    t: &Tenant,
    session: &Session,
    locator: Option<&dyn DriveLocator>,
    done: Applied<'_>,
) -> Result<Outcome> {
    let Applied {
        observed,
        report,
        vault,
        interrupted,
        pending_drives,
    } = done;
    let facts = ArrayFacts {
        volume_serials: report.facts.volume_serials.clone(),
        api_token: report.facts.api_token.clone(),
    };
    let token_user = t.desired.api_token.as_ref().map(|d| d.admin.clone());
    let mut delivered = false;
    // The token user holds a token this run has no value of: look for copies.
    // (A token the journal accounts for is finished by the next apply instead.)
    let unknown = observed.token == TokenState::HasToken
        && facts.api_token.is_none()
        && matches!(
            observed.token_journal,
            TokenJournal::None | TokenJournal::Stale
        );
    // Places checked that hold no copy, and whether any place holds one.
    let mut without_copy = Vec::new();
    let mut copy = false;
    if let Some(dir) = &a.out {
        let opts = render_options(a.include_secrets, a.pull_secret_file.as_deref())?;
        let kept = write_manifests(t, &facts, dir, opts, p)?;
        if a.include_secrets {
            if facts.api_token.is_some() {
                // The secret file is fsynced; its folder entry must be too before the
                // journal lets go of the token.
                sync_dir(&dir.join("tenant"))?;
                delivered = true;
            } else if unknown && kept.is_empty() {
                without_copy.push(format!(
                    "the px-pure-secret in {}",
                    dir.join("tenant").display()
                ));
            } else if unknown {
                copy = true;
            }
        }
    }
    if interrupted {
        if let (Some(v), Some(user)) = (&vault, &token_user) {
            if delivered {
                v.delivered(user)?;
            } else if facts.api_token.is_some() {
                p.warn(format!(
                    "the API token of array user {user} is not delivered yet (the clusters were skipped); \
                     the token journal keeps it and the next apply delivers it"
                ));
            }
        }
        p.warn(format!(
            "interrupted: {} applied; run apply again to continue (the calls in flight finished)",
            report.applied.len()
        ));
        return Ok(Outcome::Interrupted);
    }
    let mut outcome = if report.is_success() {
        Outcome::Success
    } else {
        p.warn(format!(
            "{} change(s) failed, {} were done in part and {} were skipped; run apply again after fixing the cause: it continues where this one stopped",
            report.failed.len(),
            report.partial.len(),
            report.skipped.len()
        ));
        Outcome::PartialFailure
    };
    if report.is_success() && a.kube.kubeconfig.is_some() {
        let clusters = super::cluster::apply_to_clusters(&a.kube, p, t, &facts).await?;
        // The claims were applied and waited for: tag the drives they bound.
        let drives =
            super::drives::tag_after_binding(session, t, &a.kube, a.concurrency as usize, p)
                .await?;
        outcome = worse(clusters, drives);
        if let Some(kubeconfig) = &a.kube.tenant_kubeconfig
            && outcome == Outcome::Success
        {
            if facts.api_token.is_some() {
                delivered = true;
            } else if unknown && !copy {
                let tenant =
                    px_cluster::connect(kubeconfig, a.kube.tenant_context.as_deref()).await?;
                if px_cluster::token::pure_secret_holds_real_token(&tenant, &t.spec).await? {
                    copy = true;
                } else {
                    without_copy.push("the tenant cluster's px-pure-secret".to_string());
                }
            }
        }
    }
    if report.is_success() && a.kube.kubeconfig.is_none() {
        if let Some(l) = locator.filter(|_| session.is_simulated()) {
            super::drives::simulate_management_portworx(session, t, p).await?;
            let drives =
                super::drives::tag_found_drives(session, t, l, a.concurrency as usize, p).await?;
            outcome = worse(outcome, drives);
        } else if pending_drives > 0 {
            p.info(format!(
                "{pending_drives} drive(s) pending: apply the management manifests; the management Portworx creates the volumes when the claims bind, and `pxfa apply --kubeconfig` (or the next apply that can read the claims) tags them"
            ));
        }
    }
    if let (Some(v), Some(user)) = (&vault, &token_user) {
        if delivered {
            v.delivered(user)?;
        } else if facts.api_token.is_some() {
            p.warn(format!(
                "the API token of array user {user} is not delivered yet; the token journal in {} keeps it \
                 and the next apply with --out DIR --include-secrets or --tenant-kubeconfig delivers it",
                v.dir().map_or_else(|| "(none)".to_string(), |d| d.display().to_string())
            ));
        }
    }
    if let (false, false, Some(user)) = (copy, without_copy.is_empty(), &token_user) {
        p.warn(format!(
            "array user {user} has an API token pxfa has no copy of: {} holds no token. \
             pxfa does not replace the token on its own (something may use it); \
             to give the tenant a token pxfa knows without a gap, run `pxfa token rotate -f {spec} --out {out}` \
             (through the file, one step per run) or `pxfa token rotate -f {spec} --tenant-kubeconfig FILE`",
            without_copy.join(" and "),
            spec = a.file.display(),
            out = a.out.as_deref().unwrap_or(Path::new("DIR")).display()
        ));
        outcome = Outcome::PartialFailure;
    }
    Ok(outcome)
}

/// The outcome that asks more of the admin: a partial failure over a success.
fn worse(a: Outcome, b: Outcome) -> Outcome {
    if a == Outcome::Success { b } else { a }
}

/// Makes a folder's entries durable (a renamed file is on disk only once its folder
/// is).
fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("cannot sync {}", dir.display()))?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}
