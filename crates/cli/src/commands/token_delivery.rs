//! After the array part of `apply`: the manifests of `--out`, the clusters, the
//! dynamic drives found and tagged once their claims bind, and the tenant's API token
//! delivered from the report to a durable copy before the token journal
//! (`crate::token_journal`) lets go of it, or reported when the token user holds a
//! token pxfa has no copy of.

use std::convert::Infallible;
use std::path::Path;

use anyhow::{Context, Result};
use px_cluster::tenant_clusters::DriveTagging;
use px_cluster::{
    ClusterClients, FileBackedTokenJournal, TenantClusters, TenantClustersError,
    TenantClustersOptions, WaitOptions,
};
use px_topology::{Applied, ArrayFacts, DriveLocator, Tenant};

use super::render::{render_options, write_manifests};
use crate::args::ApplyArgs;
use crate::exit::Outcome;
use crate::output::Printer;
use crate::session::Session;
use crate::token_journal::{self, FileTokenJournal};

/// The token journal of this tenant on this array (none when the tenant has no
/// token): written to `--out DIR/.pxfa/` when given, else to the state folder; read
/// from both.
pub(super) fn journal(
    t: &Tenant,
    session: &Session,
    out: Option<&Path>,
    state_dir: Option<&Path>,
) -> Option<FileTokenJournal> {
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
    Some(FileTokenJournal::new(
        &session.array_key(),
        &t.desired.tenant,
        dirs,
    ))
}

/// `apply`'s cluster side of the pipeline ([`px_cluster::TenantClusters`], the same
/// the controller runs): with `--kubeconfig`, the manifests onto the clusters and
/// then the dynamic drives their claims bound, tagged. The token journal is a file,
/// durable by itself: no hooks around the array apply.
pub(super) type CliClusters<'a> = TenantClusters<'a, FileBackedTokenJournal>;

/// Where this apply keeps a token it creates: `--out DIR --include-secrets` or the
/// tenant cluster's px-pure-secret.
pub(super) fn keeps_token(a: &ApplyArgs) -> bool {
    (a.include_secrets && a.out.is_some()) || a.kube.clusters.tenant_kubeconfig.is_some()
}

/// The cluster side of `a`: `clients`, the clusters of `--kubeconfig` and
/// `--tenant-kubeconfig` (read once and checked before the first array write), the
/// switches, and the drive tagging on the session's array.
pub(super) fn cluster_side<'a>(
    a: &ApplyArgs,
    clients: Option<ClusterClients>,
    p: &'a Printer,
    session: &'a Session,
) -> CliClusters<'a> {
    let k = &a.kube;
    let options = TenantClustersOptions {
        wait: WaitOptions {
            timeout: k.wait_timeout,
            ..WaitOptions::default()
        },
        force_conflicts: k.force_conflicts,
        apply_node_config: k.apply_node_config,
        adopt_replaced_vms: k.adopt_replaced_vms,
        keeps_token_elsewhere: a.include_secrets && a.out.is_some(),
    };
    let side = TenantClusters::new(
        clients,
        options,
        FileBackedTokenJournal,
        super::cluster::notices(p),
    );
    side.tagging_drives(DriveTagging {
        array: session.array.as_ref(),
        concurrency: a.concurrency as usize,
    })
}

/// A run on the clusters that failed: a drive tagging that could not start as the
/// drive commands say it, the rest as it is.
fn cluster_side_error(e: TenantClustersError<Infallible>) -> anyhow::Error {
    match e {
        TenantClustersError::Drives(e) => super::drives::drive_tagging_error(e),
        e => anyhow::Error::new(e),
    }
}

/// What the array part of `apply` left for the rest of it.
pub(super) struct Done<'a, 'b> {
    /// The pipeline after the array.
    pub(super) applied: &'a Applied<'b>,
    /// The cluster side.
    pub(super) clusters: &'a CliClusters<'a>,
    /// The token journal, when the tenant has a token.
    pub(super) journal: Option<&'a FileTokenJournal>,
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
        journal,
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
        if let (Some(_), Some(user)) = (&journal, &token_user) {
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
    if report.is_success() && a.kube.clusters.kubeconfig.is_some() {
        let (delivery, journal) = applied
            .to_clusters(clusters)
            .await
            .map_err(cluster_side_error)?;
        if let Some(result) = journal {
            result?;
            let_go = true;
        }
        let on_clusters = super::cluster::clusters_outcome(p, &delivery.report.applied)?;
        let drives = super::drives::drives_outcome(p, delivery.report.drives.as_ref())?;
        outcome = worse(on_clusters, drives);
        if delivery.token_kept {
            delivered = true;
        } else if let Some(tenant) = clusters.tenant_cluster()
            && outcome == Outcome::Success
            && facts.api_token.is_none()
            && unknown
            && !copy
        {
            if px_cluster::token::pure_secret_holds_real_token(tenant, &t.spec).await? {
                copy = true;
            } else {
                without_copy.push("the tenant cluster's px-pure-secret".to_string());
            }
        }
    }
    if report.is_success() && a.kube.clusters.kubeconfig.is_none() {
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
    if let (Some(v), Some(user)) = (&journal, &token_user) {
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
