//! The drives the management Portworx provisions (dynamic provisioning): who says
//! which claims are bound, and the step of `apply` (and `demo`) that tags the drives
//! once their claims are.
//!
//! With `--kubeconfig` the claims are read on the management cluster
//! ([`px_cluster::ClaimBindings`]) after its manifests are applied, within
//! `--wait-timeout`, by the cluster side ([`px_cluster::TenantClusters`]). With `--array sim` there is no cluster: a simulated management
//! Portworx ([`flasharray_mock::SimFada`]) binds the claims and creates the volumes
//! as Portworx would, so the flow converges; the output says so. Claims that are not
//! bound stay pending, and the next apply tags their drives.

use std::sync::Arc;

use anyhow::{Context, Result};
use async_trait::async_trait;
use flasharray::{FlashArray, PodName};
use flasharray_mock::SimFada;
use flasharray_mock::fada::SimClaim;
use px_cluster::tenant_clusters::{DriveTagging, DriveTaggingError, tag_bound_drives};
use px_topology::{ApplyReport, Binding, DriveClaim, DriveLocator, LocateError, Tenant};

use super::pipeline::{observe_error, report_text};
use crate::args::OutputFormat;
use crate::exit::Outcome;
use crate::output::Printer;
use crate::session::Session;

/// The simulated management Portworx as a locator: a claim is bound once its
/// volume exists in the tenant's pod.
struct SimLocator {
    array: Arc<dyn FlashArray>,
    pod: Option<PodName>,
}

#[async_trait]
impl DriveLocator for SimLocator {
    async fn bound(&self, claims: &[DriveClaim]) -> Result<Vec<Binding>, LocateError> {
        let keys: Vec<(String, String)> = claims
            .iter()
            .map(|c| (c.namespace.clone(), c.name.clone()))
            .collect();
        let found = SimFada::new()
            .bound(self.array.as_ref(), self.pod.as_ref(), &keys)
            .await?;
        Ok(found
            .into_iter()
            .map(|b| Binding {
                claim: DriveClaim {
                    namespace: b.namespace,
                    name: b.name,
                },
                volume_name: b.pv,
            })
            .collect())
    }
}

fn drive_pod(t: &Tenant) -> Option<PodName> {
    t.desired.drives.first().and_then(|d| d.pod.clone())
}

/// Who can say which of the tenant's claims are bound: the management cluster when
/// apply has its client (`management`), the simulated Portworx on `--array sim`,
/// else nobody (untagged drives are then pending). `None` as well for tenants
/// without dynamic drives.
pub(crate) fn locator_for(
    session: &Session,
    t: &Tenant,
    management: Option<&px_cluster::Client>,
) -> Option<Box<dyn DriveLocator>> {
    if t.desired.drives.is_empty() {
        return None;
    }
    if let Some(client) = management {
        return Some(Box::new(px_cluster::ClaimBindings::new(client.clone())));
    }
    if session.is_simulated() {
        return Some(Box::new(SimLocator {
            array: session.array.clone(),
            pod: drive_pod(t),
        }));
    }
    None
}

/// `--array sim`: the simulated management Portworx binds every claim, creating the
/// volumes it does not have yet (none on a re-apply).
pub(crate) async fn simulate_management_portworx(
    session: &Session,
    t: &Tenant,
    p: &Printer,
) -> Result<()> {
    let claims: Vec<SimClaim> = t
        .desired
        .drives
        .iter()
        .map(|d| SimClaim {
            namespace: d.claim.namespace.clone(),
            name: d.claim.name.clone(),
            size: d.size,
        })
        .collect();
    let pod = drive_pod(t);
    let done = SimFada::new()
        .provision(session.array.as_ref(), pod.as_ref(), &claims)
        .await
        .context("the simulated management Portworx could not provision the drive claims")?;
    let place = pod.map_or("at the array's top level".to_string(), |p| {
        format!("in pod {p}")
    });
    p.info(format!(
        "no cluster (--array sim): a simulated management Portworx bound the {} drive claim(s) and created {} volume(s) {place}, as Portworx does when a claim binds",
        claims.len(),
        done.created.len()
    ));
    Ok(())
}

/// After the claims had their chance to bind: the pipeline again, with `locator`
/// and no journal, to tag the drives found
/// ([`px_cluster::tenant_clusters::tag_bound_drives`]). Nothing to tag is success; a
/// plan that cannot be applied (a claim matching several volumes) is the error that
/// names the blocker.
pub(crate) async fn tag_found_drives(
    session: &Session,
    t: &Tenant,
    locator: &dyn DriveLocator,
    concurrency: usize,
    p: &Printer,
) -> Result<Outcome> {
    let drives = DriveTagging {
        array: session.array.as_ref(),
        concurrency,
    };
    let notices = super::cluster_notices::notices(p);
    let tagged = tag_bound_drives(drives, t, locator, &*notices)
        .await
        .map_err(drive_tagging_error)?;
    drives_outcome(p, tagged.as_ref())
}

/// What the drive tagging did, when it wrote: `Drives found: ...`.
pub(crate) fn drives_outcome(p: &Printer, report: Option<&ApplyReport>) -> Result<Outcome> {
    let Some(report) = report else {
        return Ok(Outcome::Success);
    };
    let text = format!("Drives found: {}", report_text(report));
    if matches!(p.format, OutputFormat::Table | OutputFormat::Wide) {
        p.stdout(&text)?;
    } else {
        p.info(text);
    }
    Ok(if report.is_success() {
        Outcome::Success
    } else {
        Outcome::PartialFailure
    })
}

/// A drive tagging that did not start: a realm the array cannot have is bad input
/// (exit 2), a blocked plan names its blockers.
pub(crate) fn drive_tagging_error(e: DriveTaggingError) -> anyhow::Error {
    match e {
        DriveTaggingError::Observe(e) => observe_error(e),
        DriveTaggingError::Blocked(plan) => super::pipeline::blocked_error(&plan),
        e => anyhow::Error::new(e),
    }
}
