//! After the array part of `apply`: the manifests of `--out`, the clusters, the
//! dynamic drives found and tagged once their claims bind, and the tenant's API token
//! delivered from the report to a durable copy before the token journal
//! (`crate::token_journal`) lets go of it, or reported when the token user holds a
//! token pxfa has no copy of.

use std::path::Path;

use anyhow::{Context, Result};
use async_trait::async_trait;
use px_topology::Tenant;
use px_topology::driver::ArrayFacts;
use px_topology::pipeline::{Applied, ClusterSide, Delivery};
use px_topology::plan::DriveLocator;

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

/// `apply`'s cluster side of the pipeline: with `--kubeconfig`, the manifests onto
/// the clusters and then the dynamic drives their claims bound, tagged. The token
/// journal is a file, durable by itself: no hooks around the array apply.
pub(super) struct CliClusters<'a> {
    a: &'a ApplyArgs,
    p: &'a Printer,
    session: &'a Session,
}

impl<'a> CliClusters<'a> {
    pub(super) fn new(a: &'a ApplyArgs, p: &'a Printer, session: &'a Session) -> Self {
        CliClusters { a, p, session }
    }

    /// Where this apply keeps a token it creates: `--out DIR --include-secrets` or
    /// the tenant cluster's px-pure-secret.
    pub(super) fn keeps_token(a: &ApplyArgs) -> bool {
        (a.include_secrets && a.out.is_some()) || a.kube.tenant_kubeconfig.is_some()
    }
}

#[async_trait]
impl ClusterSide for CliClusters<'_> {
    type Error = anyhow::Error;
    type Report = Outcome;

    fn keeps_new_token(&self) -> bool {
        Self::keeps_token(self.a)
    }

    async fn apply_manifests(&self, t: &Tenant, facts: &ArrayFacts) -> Result<Delivery<Outcome>> {
        let a = self.a;
        let clusters = super::cluster::apply_to_clusters(&a.kube, self.p, t, facts).await?;
        // The claims were applied and waited for: tag the drives they bound.
        let drives = super::drives::tag_after_binding(
            self.session,
            t,
            &a.kube,
            a.concurrency as usize,
            self.p,
        )
        .await?;
        let outcome = worse(clusters, drives);
        let tenant_done = a.kube.tenant_kubeconfig.is_some() && outcome == Outcome::Success;
        Ok(Delivery {
            report: outcome,
            token_kept: tenant_done && facts.api_token.is_some(),
            complete: tenant_done,
        })
    }
}

/// What the array part of `apply` left for the rest of it.
pub(super) struct Done<'a, 'b> {
    /// The pipeline after the array.
    pub(super) applied: &'a Applied<'b>,
    /// The cluster side.
    pub(super) clusters: &'a CliClusters<'a>,
    /// The token journal, when the tenant has a token.
    pub(super) vault: Option<&'a FileVault>,
    /// A Ctrl-C stopped the run: the clusters are skipped.
    pub(super) interrupted: bool,
}

/// Writes `--out`, applies to the clusters (not when interrupted), tags the dynamic
/// drives whose claims bound, delivers the token and settles the journal; the
/// apply's outcome.
pub(super) async fn after_apply(
    a: &ApplyArgs,
    p: &Printer,
    session: &Session,
    locator: Option<&dyn DriveLocator>,
    done: Done<'_, '_>,
) -> Result<Outcome> {
    let Done {
        applied,
        clusters,
        vault,
        interrupted,
    } = done;
    let (t, report) = (applied.tenant(), applied.report());
    let facts = applied.facts();
    let token_user = t.desired.api_token.as_ref().map(|d| d.admin.clone());
    // The token user holds a token this run has no value of: look for copies.
    // (A token the journal accounts for is finished by the next apply instead.)
    let unknown = applied.token_unknown();
    let Copies {
        mut delivered,
        mut copy,
        mut without_copy,
    } = write_out(a, p, t, &facts, unknown)?;
    if interrupted {
        if let (Some(_), Some(user)) = (&vault, &token_user) {
            if delivered {
                applied.token_delivered(clusters).await?;
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
    // Whether the pipeline let the journal go already.
    let mut let_go = false;
    if report.is_success() && a.kube.kubeconfig.is_some() {
        let (delivery, journal) = applied.to_clusters(clusters).await?;
        if let Some(result) = journal {
            result?;
            let_go = true;
        }
        outcome = delivery.report;
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
        } else if applied.plan().summary.pending > 0 {
            p.info(format!(
                "{} drive(s) pending: apply the management manifests; the management Portworx creates the volumes when the claims bind, and `pxfa apply --kubeconfig` (or the next apply that can read the claims) tags them",
                applied.plan().summary.pending
            ));
        }
    }
    if let (Some(v), Some(user)) = (&vault, &token_user) {
        if delivered {
            if !let_go {
                applied.token_delivered(clusters).await?;
            }
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

/// Where the token went and where copies of an unknown token were looked for.
#[derive(Default)]
struct Copies {
    /// The token of this run is in a durable place.
    delivered: bool,
    /// Some place holds a copy of the token pxfa does not know.
    copy: bool,
    /// Places checked that hold no copy.
    without_copy: Vec<String>,
}

/// `--out DIR`: the manifests, with the token when `--include-secrets` (then
/// delivered); for a token pxfa has no value of (`unknown`), whether the kept
/// px-pure-secret is a copy.
fn write_out(
    a: &ApplyArgs,
    p: &Printer,
    t: &Tenant,
    facts: &ArrayFacts,
    unknown: bool,
) -> Result<Copies> {
    let mut c = Copies::default();
    let Some(dir) = &a.out else {
        return Ok(c);
    };
    let opts = render_options(a.include_secrets, a.pull_secret_file.as_deref())?;
    let kept = write_manifests(t, facts, dir, opts, p)?;
    if a.include_secrets {
        if facts.api_token.is_some() {
            // The secret file is fsynced; its folder entry must be too before the
            // journal lets go of the token.
            sync_dir(&dir.join("tenant"))?;
            c.delivered = true;
        } else if unknown && kept.is_empty() {
            c.without_copy.push(format!(
                "the px-pure-secret in {}",
                dir.join("tenant").display()
            ));
        } else if unknown {
            c.copy = true;
        }
    }
    Ok(c)
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
