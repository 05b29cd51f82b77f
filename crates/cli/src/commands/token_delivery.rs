//! After the array part of `apply`: the manifests of `--out`, the clusters, the
//! dynamic drives found and tagged once their claims bind, and the tenant's API token
//! delivered from the report to a durable copy before the token journal
//! (`crate::token_journal`) lets go of it, or reported when the token user holds a
//! token pxfa has no copy of.

use std::path::Path;

use anyhow::{Context, Result};
use px_cluster::tenant_clusters::DriveTagging;
use px_cluster::{
    ClusterClients, TenantClusters, TenantClustersError, TenantClustersOptions, WaitOptions,
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
/// then the dynamic drives their claims bound, tagged. The token journal is the
/// site's (a file, durable by itself).
pub(super) type CliClusters<'a> = TenantClusters<'a>;

/// Whether this apply writes a copy of a token it creates outside the clusters:
/// `--out DIR --include-secrets` (the pipeline's [`px_topology::Planned::with_token_copy`]).
pub(super) fn copies_token(a: &ApplyArgs) -> bool {
    a.include_secrets && a.out.is_some()
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
    };
    let side = TenantClusters::new(clients, options, super::cluster_notices::notices(p));
    side.tagging_drives(DriveTagging {
        array: session.array.as_ref(),
        concurrency: a.concurrency as usize,
    })
}

/// A run on the clusters that failed: a drive tagging that could not start as the
/// drive commands say it, the rest as it is.
fn cluster_side_error(e: TenantClustersError) -> anyhow::Error {
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
/// drives whose claims bound, and has the journal let go of the token once a copy
/// holds it; the apply's outcome.
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
    let report = applied.report();
    // The token user holds a token this run has no value of: look for copies.
    // (A token the journal accounts for is finished by the next apply instead.)
    let unknown = applied.token_unknown();
    let mut copies = write_out(a, p, applied.tenant(), &applied.facts(), unknown)?;
    if interrupted {
        let waits = " (the clusters were skipped); the token journal keeps it and the next apply delivers it";
        settle_token(p, applied, copies.delivered, waits).await?;
        p.warn(format!(
            "interrupted: {} applied; run apply again to continue (the calls in flight finished)",
            report.applied.len()
        ));
        return Ok(Outcome::Interrupted);
    }
    let mut outcome = array_outcome(p, report);
    if report.is_success() && a.kube.clusters.kubeconfig.is_some() {
        outcome = on_clusters(p, applied, clusters, unknown, &mut copies).await?;
    } else if report.is_success() {
        outcome = drives_without_clusters(a, p, session, locator, applied).await?;
    }
    let dir = journal.and_then(FileTokenJournal::dir);
    let waits = format!(
        "; the token journal in {} keeps it and the next apply with --out DIR --include-secrets or --tenant-kubeconfig delivers it",
        dir.map_or_else(|| "(none)".to_string(), |d| d.display().to_string())
    );
    settle_token(p, applied, copies.delivered, &waits).await?;
    if warn_unknown_token(a, p, applied.tenant(), &copies) {
        outcome = Outcome::PartialFailure;
    }
    Ok(outcome)
}

/// The array's part of the outcome: a partial failure is said with what to do.
fn array_outcome(p: &Printer, report: &px_topology::ApplyReport) -> Outcome {
    if report.is_success() {
        return Outcome::Success;
    }
    p.warn(format!(
        "{} change(s) failed, {} were done in part and {} were skipped; run apply again after fixing the cause: it continues where this one stopped",
        report.failed.len(),
        report.partial.len(),
        report.skipped.len()
    ));
    Outcome::PartialFailure
}

/// `--kubeconfig`: the manifests onto the clusters (the pipeline lets the journal go
/// once the tenant holds the token) and the drives whose claims bound, tagged; for
/// a token pxfa has no value of, whether the tenant's px-pure-secret is a copy.
async fn on_clusters(
    p: &Printer,
    applied: &Applied<'_>,
    clusters: &CliClusters<'_>,
    unknown: bool,
    copies: &mut Copies,
) -> Result<Outcome> {
    let (delivery, journal) = applied
        .to_clusters(clusters)
        .await
        .map_err(cluster_side_error)?;
    if let Some(result) = journal {
        result?;
    }
    let on_clusters = super::cluster::clusters_outcome(p, &delivery.report.applied)?;
    let drives = super::drives::drives_outcome(p, delivery.report.drives.as_ref())?;
    let outcome = worse(on_clusters, drives);
    if delivery.token_kept {
        copies.delivered = true;
    } else if let Some(tenant) = clusters.tenant_cluster()
        && outcome == Outcome::Success
        && applied.facts().api_token.is_none()
        && unknown
        && !copies.copy
    {
        if px_cluster::token::pure_secret_holds_real_token(tenant, &applied.tenant().spec).await? {
            copies.copy = true;
        } else {
            copies
                .without_copy
                .push("the tenant cluster's px-pure-secret".to_string());
        }
    }
    Ok(outcome)
}

/// Without `--kubeconfig`: with `--array sim`, its simulated management Portworx
/// binds the claims and their drives are tagged; else the pending drives are said.
async fn drives_without_clusters(
    a: &ApplyArgs,
    p: &Printer,
    session: &Session,
    locator: Option<&dyn DriveLocator>,
    applied: &Applied<'_>,
) -> Result<Outcome> {
    let t = applied.tenant();
    if let Some(l) = locator.filter(|_| session.is_simulated()) {
        super::drives::simulate_management_portworx(session, t, p).await?;
        return super::drives::tag_found_drives(session, t, l, a.concurrency as usize, p).await;
    }
    let pending = applied.plan().summary.pending;
    if pending > 0 {
        p.info(format!(
            "{pending} drive(s) pending: apply the management manifests; the management Portworx creates the volumes when the claims bind, and `pxfa apply --kubeconfig` (or the next apply that can read the claims) tags them"
        ));
    }
    Ok(Outcome::Success)
}

/// The journal lets go of this run's token once a copy holds it (`delivered`);
/// else a token this run created is said to wait in the journal (`waits`).
async fn settle_token(
    p: &Printer,
    applied: &Applied<'_>,
    delivered: bool,
    waits: &str,
) -> Result<()> {
    let Some(token) = &applied.tenant().desired.api_token else {
        return Ok(());
    };
    if delivered {
        applied.token_delivered().await?;
    } else if applied.facts().api_token.is_some() {
        p.warn(format!(
            "the API token of array user {} is not delivered yet{waits}",
            token.admin
        ));
    }
    Ok(())
}

/// A token pxfa has no value of that no place looked at holds: said, with the way
/// to a token pxfa knows; true when said (the apply is then a partial failure).
fn warn_unknown_token(a: &ApplyArgs, p: &Printer, t: &Tenant, copies: &Copies) -> bool {
    let Some(token) = &t.desired.api_token else {
        return false;
    };
    if copies.copy || copies.without_copy.is_empty() {
        return false;
    }
    p.warn(format!(
        "array user {user} has an API token pxfa has no copy of: {} holds no token. \
         pxfa does not replace the token on its own (something may use it); \
         to give the tenant a token pxfa knows without a gap, run `pxfa token rotate -f {spec} --out {out}` \
         (through the file, one step per run) or `pxfa token rotate -f {spec} --tenant-kubeconfig FILE`",
        copies.without_copy.join(" and "),
        user = token.admin,
        spec = a.file.display(),
        out = a.out.as_deref().unwrap_or(Path::new("DIR")).display()
    ));
    true
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
