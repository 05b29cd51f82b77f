//! The tenant pipeline's cluster side ([`px_topology::ClusterSide`]),
//! written once for the CLI's `apply` and the controller's reconcile: the manifests
//! rendered with the array's facts, the part of the bundle pxfa applies
//! ([`crate::cluster_bundle`]) server-side applied to the management cluster and, when
//! there is one, the tenant cluster (with the readiness waits), the dynamic drives
//! whose claims bound tagged, and the one rule that says whether the token reached
//! the tenant and whether the clusters are done ([`Delivery`]).
//!
//! The token journal is not here: the pipeline's site carries it, with its durable
//! copy ([`px_topology::token_journal::TokenJournal`]); this side only delivers the
//! token to the tenant cluster and says whether it did.
//!
//! What differs between the callers is injected, not written twice: the switches of
//! [`TenantClustersOptions`]
//! (`--apply-node-config`, `--force-conflicts`, `--adopt-replaced-vms`, the waits),
//! whether the drives are tagged in the same run ([`TenantClusters::tagging_drives`]:
//! the CLI does; the controller's array lease ends before the clusters, and its next
//! reconcile's observation tags them), and how progress is shown ([`Notice`]).

use async_trait::async_trait;
use flasharray::FlashArray;
use px_topology::{
    ApplyError, ArrayFacts, ArrayOnly, Cluster, ClusterSide, Delivery, DriveClaim, DriveLocator,
    LocateError, Manifest, ObserveError, Plan, PlanOptions, ProgressEvent, RenderError,
    RenderOptions, Site, Tenant, TenantStorage, render,
};

use crate::apply::{ApplyOptions, ApplyReport, Skipped, apply_manifests, bundle, left_out_text};
use crate::bindings::{BindingWait, ClaimBindings, wait_for_bindings};
use crate::error::Error;
use crate::preview::{ClusterPreview, preview_manifests};
use crate::readiness::WaitOptions;
use crate::vms::{GuestInterface, resolve_guest_interface};

/// The clusters a tenant's manifests go to.
#[derive(Clone)]
pub struct ClusterClients {
    /// The management cluster (the hosted control plane's).
    pub management: kube::Client,
    /// The tenant (hosted) cluster, when it can be reached; without it the tenant's
    /// manifests are reported as skipped and a new token has nowhere to go.
    pub tenant: Option<kube::Client>,
}

/// The switches of one run on the clusters.
#[derive(Debug, Clone, Default)]
pub struct TenantClustersOptions {
    /// Readiness and claim-binding waits.
    pub wait: WaitOptions,
    /// Take over fields another field manager owns instead of reporting the conflict.
    pub force_conflicts: bool,
    /// Apply the management MachineConfigs, which reboot every management worker
    /// (the admin's explicit yes; see [`crate::cluster_bundle`]).
    pub apply_node_config: bool,
    /// Give the disks of a worker whose VM is gone to a new VM (see [`crate::vms`]).
    pub adopt_replaced_vms: bool,
}

/// What happens while the clusters are worked on, for the caller to show (the CLI
/// prints, the controller logs). Nothing here holds a secret.
#[derive(Debug)]
#[non_exhaustive]
pub enum Notice<'n> {
    /// The worker VMs name the storage NIC differently from the spec; their name
    /// is rendered.
    GuestInterfaceReplaced {
        /// What the spec said.
        specified: &'n str,
        /// What the VMs report.
        found: &'n str,
    },
    /// The VMs could not be asked for the storage NIC; the spec's name is rendered.
    GuestInterfaceUnknown {
        /// What the spec says.
        specified: &'n str,
        /// The error reading the VMs.
        error: &'n Error,
    },
    /// A manifest of the bundle left to the admin, with the reason.
    NotApplied(&'n str),
    /// Drive claims still unbound when the binding wait ended.
    ClaimsUnbound(&'n BindingWait),
    /// The binding wait could not read the claims.
    BindingsUnreadable(&'n LocateError),
    /// The drive tagging's observation could not read the claims: their drives stay
    /// pending.
    ClaimsUnreadable(&'n LocateError),
    /// Drives whose claims are not bound yet: the next run tags them.
    DrivesPending(usize),
    /// The drive tagging writes on the array: `changes` changes.
    DrivesTagging {
        /// The plan's actionable changes (tags to put or remove), counted before the
        /// first write.
        changes: usize,
    },
    /// The drive tagging's progress on the array.
    DriveProgress(&'n ProgressEvent),
}

/// Shows notices; `Box::new(|_| {})` shows none.
pub type Notices<'a> = Box<dyn Fn(Notice<'_>) + Send + Sync + 'a>;

/// The drives found through their bound claims, tagged on `array`.
#[derive(Clone, Copy)]
pub struct DriveTagging<'a> {
    /// The array the drives are on.
    pub array: &'a dyn FlashArray,
    /// Most calls in flight at once.
    pub concurrency: usize,
}

/// What one run did on the clusters.
#[derive(Debug, Clone, Default)]
pub struct ClustersReport {
    /// The server-side apply of the manifests.
    pub applied: ApplyReport,
    /// The tagging of the drives found through their bound claims, when it wrote.
    pub drives: Option<px_topology::ApplyReport>,
}

/// Why tagging the drives of bound claims stopped; nothing was written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriveTaggingError {
    /// The tenant could not be observed on the array.
    #[error(transparent)]
    Observe(ObserveError),
    /// The tagging plan is blocked (a claim matching several volumes): the plan
    /// names the blockers.
    #[error("the drive tagging plan cannot be applied: {} conflict(s), {} refusal(s)", .0.conflicts.len(), .0.refusals.len())]
    Blocked(Box<Plan>),
    /// The tagging apply did not start (never: its plan only tags, so it creates
    /// no API token, and its site has no token journal).
    #[error(transparent)]
    Apply(ApplyError),
}

/// Why the cluster side stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TenantClustersError {
    /// The manifests could not be rendered.
    #[error("cannot render the manifests")]
    Render(#[source] RenderError),
    /// A request to a cluster failed.
    #[error(transparent)]
    Clusters(Error),
    /// The drives of bound claims could not be tagged.
    #[error(transparent)]
    Drives(DriveTaggingError),
}

/// The tenant's clusters as the pipeline's cluster side.
pub struct TenantClusters<'a> {
    clients: Option<ClusterClients>,
    options: TenantClustersOptions,
    drives: Option<DriveTagging<'a>>,
    notices: Notices<'a>,
}

impl<'a> TenantClusters<'a> {
    /// The cluster side over `clients` (`None`: no cluster was given; a token the
    /// apply creates then goes only to the adapter's copy, see
    /// [`px_topology::Planned::with_token_copy`], and nothing is applied).
    pub fn new(
        clients: Option<ClusterClients>,
        options: TenantClustersOptions,
        notices: Notices<'a>,
    ) -> Self {
        TenantClusters {
            clients,
            options,
            drives: None,
            notices,
        }
    }

    /// After the manifests, waits (within the options' wait) for the tenant's drive
    /// claims to bind on the management cluster and tags their drives on `drives.array`.
    pub fn tagging_drives(mut self, drives: DriveTagging<'a>) -> Self {
        self.drives = Some(drives);
        self
    }

    /// The tenant cluster, when there is one.
    pub fn tenant_cluster(&self) -> Option<&kube::Client> {
        self.clients.as_ref().and_then(|c| c.tenant.as_ref())
    }

    /// What [`ClusterSide::apply_manifests`] would do on the clusters after an array
    /// apply giving `facts`, asked of the API servers as dry runs
    /// ([`preview_manifests`]): the same spec (the storage NIC the VMs report), bundle
    /// and switches. Rendered without credentials whatever `facts` holds: a Secret
    /// that carries one is listed as skipped, so no credential is sent or shown.
    /// `None` without clusters.
    pub async fn preview(
        &self,
        t: &Tenant,
        facts: &ArrayFacts,
    ) -> Result<Option<ClusterPreview>, TenantClustersError> {
        let Some(clients) = &self.clients else {
            return Ok(None);
        };
        let facts = ArrayFacts {
            volume_serials: facts.volume_serials.clone(),
            api_token: None,
        };
        let (_, manifests, left_out) = self.bundle(&clients.management, t, &facts, false).await?;
        let mut preview = preview_manifests(
            &manifests,
            &clients.management,
            clients.tenant.as_ref(),
            false,
            self.options.force_conflicts,
        )
        .await
        .map_err(TenantClustersError::Clusters)?;
        preview.skipped.splice(0..0, left_out);
        Ok(Some(preview))
    }

    /// What apply sends and preview asks about, made once: the spec with the storage
    /// NIC the VMs report, rendered (with the credentials `facts` holds only when
    /// `include_secrets`), and the objects left out of the bundle.
    async fn bundle(
        &self,
        management: &kube::Client,
        t: &Tenant,
        facts: &ArrayFacts,
        include_secrets: bool,
    ) -> Result<(TenantStorage, Vec<Manifest>, Vec<Skipped>), TenantClustersError> {
        let spec = self.resolved_spec(management, t).await;
        let options = RenderOptions {
            include_secrets,
            ..RenderOptions::default()
        };
        let rendered =
            render(&spec, &t.sizing, facts, options).map_err(TenantClustersError::Render)?;
        let (manifests, left_out) = bundle(&spec, rendered, self.options.apply_node_config);
        Ok((spec, manifests, left_out))
    }

    /// The tenant's spec with the storage NIC the worker VMs report (a failure to
    /// ask is a notice, not an error).
    async fn resolved_spec(&self, management: &kube::Client, t: &Tenant) -> TenantStorage {
        let mut spec = t.spec.clone();
        let specified = spec
            .spec
            .network
            .as_ref()
            .map(|n| n.guest_interface.clone())
            .unwrap_or_default();
        match resolve_guest_interface(management, &mut spec).await {
            Ok(GuestInterface::Replaced { specified, found }) => {
                (self.notices)(Notice::GuestInterfaceReplaced {
                    specified: &specified,
                    found: &found,
                });
            }
            Ok(_) => {}
            Err(error) => (self.notices)(Notice::GuestInterfaceUnknown {
                specified: &specified,
                error: &error,
            }),
        }
        spec
    }

    /// Waits for the claims to bind, then tags the drives found.
    async fn tag_after_binding(
        &self,
        d: DriveTagging<'_>,
        management: &kube::Client,
        t: &Tenant,
    ) -> Result<Option<px_topology::ApplyReport>, DriveTaggingError> {
        if t.desired.drives.is_empty() {
            return Ok(None);
        }
        let locator = ClaimBindings::new(management.clone());
        let claims: Vec<DriveClaim> = t.desired.drives.iter().map(|d| d.claim.clone()).collect();
        match wait_for_bindings(&locator, &claims, self.options.wait).await {
            Ok(w) if !w.unbound.is_empty() => (self.notices)(Notice::ClaimsUnbound(&w)),
            Ok(_) => {}
            Err(e) => (self.notices)(Notice::BindingsUnreadable(&e)),
        }
        tag_bound_drives(d, t, &locator, &*self.notices).await
    }
}

/// The pipeline once more with `locator` and no token journal, to tag the drives
/// whose claims are bound: `None` when nothing needed tagging, else the report.
/// A plan that cannot be applied (a claim matching several volumes) is the error
/// naming its blockers. For the CLI's simulated management Portworx as well.
pub async fn tag_bound_drives(
    d: DriveTagging<'_>,
    t: &Tenant,
    locator: &dyn DriveLocator,
    notices: &(dyn Fn(Notice<'_>) + Send + Sync),
) -> Result<Option<px_topology::ApplyReport>, DriveTaggingError> {
    let site = Site {
        claims: Some(locator),
        ..Site::array(d.array)
    };
    let observation = t.observe(site).await.map_err(DriveTaggingError::Observe)?;
    if let Some(e) = observation.claims_unreadable() {
        notices(Notice::ClaimsUnreadable(e));
    }
    let planned = observation.plan(&PlanOptions::default());
    let plan = planned.plan();
    if !plan.is_applicable() {
        return Err(DriveTaggingError::Blocked(Box::new(plan.clone())));
    }
    if plan.summary.pending > 0 {
        notices(Notice::DrivesPending(plan.summary.pending));
    }
    if !plan.has_changes() {
        return Ok(None);
    }
    notices(Notice::DrivesTagging {
        changes: plan.actionable().count(),
    });
    let opts = px_topology::ApplyOptions {
        concurrency: d.concurrency,
        ..Default::default()
    };
    let applied = planned
        .apply(&ArrayOnly, opts, &|ev| notices(Notice::DriveProgress(&ev)))
        .await
        .map_err(DriveTaggingError::Apply)?;
    Ok(Some(applied.report().clone()))
}

/// The one rule for what a run on the clusters achieved. The token is kept once
/// the tenant cluster accepted every px-pure-secret of the bundle (durable in its
/// API server, even while other objects still wait), and never when a conflict
/// stopped the run. The clusters are done when a tenant cluster was given, every
/// step ran with nothing pending, and the drive tagging (when it ran) succeeded.
pub fn delivery(
    manifests: &[Manifest],
    report: ClustersReport,
    tenant_given: bool,
    facts: &ArrayFacts,
) -> Delivery<ClustersReport> {
    let applied = &report.applied;
    let tenant_secrets: Vec<&Manifest> = manifests
        .iter()
        .filter(|m| m.secret && m.cluster == Cluster::Tenant)
        .collect();
    let token_kept = applied.conflicts.is_empty()
        && tenant_given
        && facts.api_token.is_some()
        && !tenant_secrets.is_empty()
        && tenant_secrets.iter().all(|m| applied.was_applied(m));
    let drives_done = report
        .drives
        .as_ref()
        .is_none_or(px_topology::ApplyReport::is_success);
    let complete = tenant_given && applied.complete() && drives_done;
    Delivery {
        report,
        token_kept,
        complete,
    }
}

#[async_trait]
impl ClusterSide for TenantClusters<'_> {
    type Error = TenantClustersError;
    type Report = ClustersReport;

    fn keeps_new_token(&self) -> bool {
        self.tenant_cluster().is_some()
    }

    async fn apply_manifests(
        &self,
        t: &Tenant,
        facts: &ArrayFacts,
    ) -> Result<Delivery<ClustersReport>, Self::Error> {
        let Some(clients) = &self.clients else {
            return Ok(delivery(&[], ClustersReport::default(), false, facts));
        };
        // The token goes only to the API servers (TLS), never to a file or the output.
        let (spec, manifests, skipped) = self.bundle(&clients.management, t, facts, true).await?;
        for s in &skipped {
            (self.notices)(Notice::NotApplied(&left_out_text(s)));
        }
        let opts = ApplyOptions {
            force_conflicts: self.options.force_conflicts,
            wait: self.options.wait,
            // A rendered secret without the token is a placeholder.
            apply_secrets: facts.api_token.is_some(),
            adopt_replaced_vms: self.options.adopt_replaced_vms,
        };
        let applied = apply_manifests(
            &spec,
            &manifests,
            &clients.management,
            clients.tenant.as_ref(),
            &opts,
        )
        .await
        .map_err(TenantClustersError::Clusters)?;
        let drives = match self.drives {
            Some(d) => self
                .tag_after_binding(d, &clients.management, t)
                .await
                .map_err(TenantClustersError::Drives)?,
            None => None,
        };
        let report = ClustersReport { applied, drives };
        Ok(delivery(
            &manifests,
            report,
            clients.tenant.is_some(),
            facts,
        ))
    }
}
