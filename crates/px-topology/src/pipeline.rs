//! "Make this tenant true": the one sequence every adapter (the CLI's `plan` and
//! `apply`, the controller's reconcile) runs, as types that can only be used in
//! order.
//!
//! ```text
//! Tenant::observe(Site) -> Observation -> .plan(opts) -> Planned -> .apply(clusters, ..) -> Applied -> .to_clusters(clusters)
//! ```
//!
//! * [`Tenant::observe`]: the realm version gate, one read of the array
//!   ([`crate::plan::observe`]), the token journal's entry
//!   ([`crate::token_journal::read_journal`]), the dynamic drives found through their claims
//!   ([`crate::plan::locate_drives`]) and the tenant re-sized so that the drives in
//!   use keep their size (`Tenant::keeping_drives_in_use`): an [`Observation`].
//! * [`Observation::plan`]: the diff plus the sizing's refusals and notes
//!   ([`Tenant::plan`]), blockers included: a [`Planned`], which also answers the
//!   preflight and the token-loss rule.
//! * [`Planned::apply`]: refuses to create a token nobody would keep (neither the
//!   [`ClusterSide`]'s tenant cluster nor the adapter's [copy](Planned::with_token_copy));
//!   an adapter that would rather wait holds the creation back first
//!   ([`Planned::holding_a_new_token`]: a pending step, the rest applies),
//!   has the journal make its intent durable, converges the array with the journal
//!   of the observation, and has the journal make the token durable after:
//!   [`Applied`].
//! * [`Applied::to_clusters`]: the manifests with the array's facts onto the
//!   clusters, and the journal let go once the tenant holds the token (or nothing
//!   was pending); [`Applied::token_delivered`] lets it go once the adapter's copy
//!   holds it.
//!
//! The token has one owner: the journal the [`Site`] carries
//! ([`crate::token_journal::TokenJournal`], entries and their durable copy). The
//! cluster side only delivers the token to the tenant cluster and says so
//! ([`Delivery::token_kept`]).
//!
//! Destroying a tenant is the same first stage and its own two after it:
//!
//! ```text
//! Tenant::observe(Site) -> Observation -> .plan_destroy(scope) -> DestroyPlanned -> .destroy(opts, ..) -> DestroyReport
//! ```
//!
//! * [`Observation::plan_destroy`]: what removing the tenant takes
//!   ([`crate::plan::plan_destroy`]: only what is tagged for it), refused when
//!   nothing is: a [`DestroyPlanned`], which the CLI shows and asks about.
//! * [`DestroyPlanned::destroy`]: exactly the calls of that plan ([`converge::destroy_planned`]).
//!
//! The adapters add only what is theirs: printing, prompts and exit codes (CLI),
//! conditions, approval and events (controller).
//!
//! ```
//! use flasharray_mock::MockArray;
//! use px_topology::{ApplyOptions, ArrayOnly, PlanOptions, Site, Tenant, parse_valid_spec};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let yaml = include_str!("../../../examples/tenant-direct-access.yaml");
//! let tenant = Tenant::from_spec(parse_valid_spec(yaml)?, "tenant-direct-access.yaml".as_ref())?;
//! let array = MockArray::new();
//!
//! let planned = tenant.observe(Site::array(&array)).await?.plan(&PlanOptions::default());
//! assert!(planned.plan().is_applicable() && planned.writes_array());
//! // No clusters here: `ArrayOnly` (a plan creating an API token would be refused).
//! let applied = planned.apply(&ArrayOnly, ApplyOptions::default(), &|_| {}).await?;
//! assert!(applied.report().is_success());
//!
//! let again = tenant.observe(Site::array(&array)).await?.plan(&PlanOptions::default());
//! assert!(!again.plan().has_changes());
//! # Ok(()) }
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use flasharray::FlashArray;

use crate::converge::{
    self, ApplyOptions, ApplyReport, DestroyOptions, DestroyReport, ProgressEvent,
};
use crate::desired::DesiredState;
use crate::driver::ArrayFacts;
use crate::plan::{
    self, Action, DestroyError, DestroyPlan, DestroyScope, DriveLocator, JournalVerdict, Kind,
    LocateError, Observed, Plan, PlanOptions, RealmGateError, TokenClaimants, TokenState,
};
use crate::preflight::{self, PreflightFinding, PreflightOptions};
use crate::sizing::ArraySpaceInfo;
use crate::tenant::{NewTokenWouldBeLost, Tenant, TenantError, refuse_losing_a_new_token};
use crate::token_journal::{JournalEntry, JournalError, TokenJournal, classify, read_journal};

/// Where a tenant is made true: the array, and who can say more than the array.
#[derive(Clone)]
pub struct Site<'a> {
    /// The array the tenant's objects are read from and written to, wrapped once in
    /// `flasharray::Settling` (the CLI's session and the controller's pool do it) so
    /// that a write whose answer was lost is settled, not failed or sent twice.
    pub array: &'a dyn FlashArray,
    /// Who says which drive claims are bound (the management cluster, or a
    /// simulated management Portworx); without one, untagged dynamic drives stay
    /// pending.
    pub claims: Option<&'a dyn DriveLocator>,
    /// The token journal (see [`crate::token_journal`]): read by the observation, written by
    /// the apply, made durable around it and let go of after the delivery.
    pub journal: Option<Arc<dyn TokenJournal>>,
}

impl<'a> Site<'a> {
    /// The array alone: no claims, no journal.
    pub fn array(array: &'a dyn FlashArray) -> Self {
        Site {
            array,
            claims: None,
            journal: None,
        }
    }
}

/// Why a tenant could not be observed; nothing was written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ObserveError {
    /// The realm gate: the array cannot hold the spec's realm
    /// ([`RealmGateError::Unsupported`], bad input), or its version could not be read.
    #[error(transparent)]
    Realm(RealmGateError),
    /// The array did not answer a read.
    #[error("cannot read the array state of tenant {tenant}")]
    Array {
        /// The tenant.
        tenant: String,
        /// The array's error.
        #[source]
        source: flasharray::Error,
    },
    /// The token journal could not be read.
    #[error(transparent)]
    Journal(JournalError),
    /// The tenant could not be re-sized to the drives in use.
    #[error(transparent)]
    Tenant(TenantError),
}

/// What the pipeline makes true: a [`Tenant`] loaded from its spec (every adapter),
/// or a [`DesiredState`] taken as it is, with no spec behind it (the converge
/// benchmark, and the crate's tests of array states no spec makes). Sealed: these
/// two are all there is.
pub trait Subject: Clone + Send + Sync + sealed::Stages {}

impl Subject for Tenant {}
impl Subject for DesiredState {}

mod sealed {
    use super::{DesiredState, Observed, Plan, PlanOptions, Tenant, TenantError};

    /// What the stages ask of their subject.
    pub trait Stages: Sized {
        /// The array objects it needs.
        fn desired(&self) -> &DesiredState;
        /// Itself, re-sized so that the drives in use keep their size; `None` when
        /// nothing changes.
        fn keeping_drives_in_use(&self, observed: &Observed) -> Result<Option<Self>, TenantError>;
        /// The plan against what was observed.
        fn plan(&self, observed: &Observed, opts: &PlanOptions) -> Plan;
    }

    impl Stages for Tenant {
        fn desired(&self) -> &DesiredState {
            &self.desired
        }
        fn keeping_drives_in_use(&self, observed: &Observed) -> Result<Option<Self>, TenantError> {
            Tenant::keeping_drives_in_use(self, observed)
        }
        fn plan(&self, observed: &Observed, opts: &PlanOptions) -> Plan {
            Tenant::plan(self, observed, opts)
        }
    }

    /// No spec, so no sizing: the state is planned as it is.
    impl Stages for DesiredState {
        fn desired(&self) -> &DesiredState {
            self
        }
        fn keeping_drives_in_use(&self, _: &Observed) -> Result<Option<Self>, TenantError> {
            Ok(None)
        }
        fn plan(&self, observed: &Observed, opts: &PlanOptions) -> Plan {
            crate::plan::plan(self, observed, opts)
        }
    }
}

impl Tenant {
    /// The first stage: what `site` holds of this tenant, with the journal read, the
    /// dynamic drives located and the tenant re-sized to the drives in use. Reads
    /// only.
    pub async fn observe<'a>(&self, site: Site<'a>) -> Result<Observation<'a>, ObserveError> {
        observe(self, site).await
    }
}

/// The token user's two questions that come outside a run of the stages: the
/// controller's finalizer and `pxfa token rotate` ask them without observing the
/// whole tenant.
impl Tenant {
    /// What a token journal's `entry` for this tenant's token user means for the
    /// token the array holds now ([`crate::token_journal::classify`]); one read.
    pub async fn token_verdict(
        &self,
        array: &dyn FlashArray,
        entry: &JournalEntry,
    ) -> flasharray::Result<JournalVerdict> {
        let (state, created_at) = plan::read_token_state(array, &self.desired).await?;
        Ok(classify(Some(entry), state, created_at))
    }

    /// The other tenants on the array that may use this tenant's token user (see
    /// `crate::TagIndex::note_token_claimants`): what rotating or deleting its
    /// token would take from them. Empty when the tenant has no token.
    pub async fn token_user_claimants(
        &self,
        array: &dyn FlashArray,
    ) -> flasharray::Result<TokenClaimants> {
        plan::token_user_claimants(array, &self.desired).await
    }
}

impl DesiredState {
    /// The first stage for array objects built by hand rather than loaded from a
    /// spec: the same gate, read, journal and claims as [`Tenant::observe`], and no
    /// re-sizing (there is no spec to size). The converge benchmark's way in; an
    /// adapter starts from a [`Tenant`].
    pub async fn observe<'a>(
        &self,
        site: Site<'a>,
    ) -> Result<Observation<'a, DesiredState>, ObserveError> {
        observe(self, site).await
    }
}

/// The first stage, for either subject.
async fn observe<'a, S: Subject>(
    subject: &S,
    site: Site<'a>,
) -> Result<Observation<'a, S>, ObserveError> {
    let desired = subject.desired();
    plan::require_realm_support(site.array, desired)
        .await
        .map_err(ObserveError::Realm)?;
    let mut observed =
        plan::observe(site.array, desired)
            .await
            .map_err(|source| ObserveError::Array {
                tenant: desired.tenant.to_string(),
                source,
            })?;
    // The token journal of an earlier, interrupted run.
    if let Some(v) = &site.journal {
        read_journal(v.as_ref(), desired, &mut observed).map_err(ObserveError::Journal)?;
    }
    // Dynamic drives not found by their tags: through their claims (drive names
    // do not depend on sizes, so this may come before the re-sizing).
    let mut claims_unreadable = None;
    if let Some(l) = site.claims.filter(|_| !desired.drives.is_empty())
        && let Err(e) = plan::locate_drives(site.array, desired, &mut observed, l).await
    {
        claims_unreadable = Some(e);
    }
    // The drives on the array keep their size: new workers get it too, and the
    // claims rendered later ask for it.
    let subject = subject
        .keeping_drives_in_use(&observed)
        .map_err(ObserveError::Tenant)?
        .unwrap_or_else(|| subject.clone());
    Ok(Observation {
        site,
        subject,
        observed,
        claims_unreadable,
    })
}

/// What the array holds of a tenant: the stage before the plan.
pub struct Observation<'a, S = Tenant> {
    site: Site<'a>,
    subject: S,
    observed: Observed,
    claims_unreadable: Option<LocateError>,
}

impl Observation<'_> {
    /// The tenant as it will be planned: re-sized to the drives in use.
    pub fn tenant(&self) -> &Tenant {
        &self.subject
    }
}

impl<'a, S: Subject> Observation<'a, S> {
    /// What was read.
    pub fn observed(&self) -> &Observed {
        &self.observed
    }

    /// Why the claims could not be read (their drives stay pending), if they could
    /// not: a warning, not a failure.
    pub fn claims_unreadable(&self) -> Option<&LocateError> {
        self.claims_unreadable.as_ref()
    }

    /// The second stage for a tenant about to be destroyed: only the first tagging
    /// of the drives found through their bound claims
    /// (`crate::plan::plan_drive_adoption`), so that the destroy, which goes by
    /// tags, takes them with the pod.
    pub fn plan_drive_adoption(self) -> Planned<'a, S> {
        let plan = plan::plan_drive_adoption(self.subject.desired(), &self.observed);
        Planned {
            site: self.site,
            subject: self.subject,
            observed: self.observed,
            plan,
            token_copy: false,
        }
    }

    /// The second stage of a destroy: what removing the tenant takes, from what
    /// was read; [`DestroyError::NothingSelected`] when nothing on the array is
    /// tagged for the tenant.
    pub fn plan_destroy(
        self,
        scope: impl Into<DestroyScope>,
    ) -> Result<DestroyPlanned<'a>, DestroyError> {
        let plan = plan::plan_destroy(&self.observed, self.subject.desired(), scope)?;
        Ok(DestroyPlanned {
            site: self.site,
            plan,
        })
    }

    /// The second stage: the plan, blockers included.
    pub fn plan(self, opts: &PlanOptions) -> Planned<'a, S> {
        let plan = self.subject.plan(&self.observed, opts);
        Planned {
            site: self.site,
            subject: self.subject,
            observed: self.observed,
            plan,
            token_copy: false,
        }
    }
}

/// A plan and what it was made from: the stage before the apply.
pub struct Planned<'a, S = Tenant> {
    site: Site<'a>,
    subject: S,
    observed: Observed,
    plan: Plan,
    token_copy: bool,
}

/// Why an apply did not start, or stopped after the array; see [`Planned::apply`].
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The plan creates a token and nothing would keep it; nothing was written.
    #[error(transparent)]
    TokenWouldBeLost(NewTokenWouldBeLost),
    /// The journal's durable copy could not be written (before the apply: nothing
    /// was written; after it: the token stays in the journal's memory).
    #[error(transparent)]
    Journal(JournalError),
}

impl Planned<'_> {
    /// The tenant the plan is for (re-sized to the drives in use).
    pub fn tenant(&self) -> &Tenant {
        &self.subject
    }

    /// The tenant (re-sized), what was observed and the plan, for a caller that
    /// only plans.
    pub fn into_parts(self) -> (Tenant, Observed, Plan) {
        (self.subject, self.observed, self.plan)
    }
}

impl<'a, S: Subject> Planned<'a, S> {
    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// What the plan was made from.
    pub fn observed(&self) -> &Observed {
        &self.observed
    }

    /// What the manifests need from the array as it is before the apply: the
    /// serials of the volumes it holds (no token: a plan creates none). A preview of
    /// the clusters renders with these.
    pub fn facts(&self) -> ArrayFacts {
        ArrayFacts {
            volume_serials: self.plan.serials.clone(),
            api_token: None,
        }
    }

    /// The checks before the first write (space and quotas); `space` is `None` when
    /// the array's space was not read.
    pub fn preflight(
        &self,
        space: Option<&ArraySpaceInfo>,
        opts: PreflightOptions,
    ) -> Vec<PreflightFinding> {
        preflight::preflight(&self.plan, &self.observed, space, opts)
    }

    /// When `copy`, the adapter writes a copy of a token this run creates outside
    /// the clusters after the apply (the CLI's `--out DIR --include-secrets`), so a
    /// new token is kept without a tenant cluster; the adapter says when the copy
    /// holds it with [`Applied::token_delivered`].
    #[must_use]
    pub fn with_token_copy(mut self, copy: bool) -> Self {
        self.token_copy = copy;
        self
    }

    /// The plan creates an API token that neither the clusters (`kept_by_clusters`)
    /// nor the adapter's [copy](Planned::with_token_copy) would keep: it would be lost.
    pub fn refuse_losing_a_new_token(
        &self,
        kept_by_clusters: bool,
    ) -> Result<(), NewTokenWouldBeLost> {
        refuse_losing_a_new_token(&self.plan, kept_by_clusters || self.token_copy)
    }

    /// The same rule as [`Planned::refuse_losing_a_new_token`], answered by waiting
    /// instead of refusing: a token the plan creates that nothing would keep
    /// (neither the clusters, `kept_by_clusters`, nor the adapter's copy) is held
    /// back. Its creation becomes a pending step saying `why`, the rest of the plan
    /// applies (the clusters' objects too: the tenant cluster may be among them), and
    /// a later run, with somewhere to keep the token, creates it. The controller's
    /// answer, and `apply --kubeconfig` without a tenant cluster; array only, the
    /// CLI refuses.
    #[must_use]
    pub fn holding_a_new_token(mut self, kept_by_clusters: bool, why: &str) -> Self {
        if self.refuse_losing_a_new_token(kept_by_clusters).is_err() {
            self.plan = plan::hold_new_token(self.plan, why);
        }
        self
    }

    /// The site's journal and the token user, when the tenant has a token.
    fn journal(&self) -> Option<(&dyn TokenJournal, &str)> {
        journal_of(&self.site, self.subject.desired())
    }

    /// Whether the plan writes on the array. Delivering a journaled token writes
    /// nothing there: it is neither drift nor anything to approve.
    pub fn writes_array(&self) -> bool {
        self.plan
            .actionable()
            .any(|c| !(c.kind == Kind::ApiToken && c.action == Action::Update))
    }

    /// The third stage: refuses a new token nothing would keep (`clusters`, or the
    /// adapter's copy), has the journal make the intent of a token the plan creates
    /// durable, applies the plan on the array (journaling into the site's journal;
    /// `opts.journal` is replaced by it) and has the journal make a created token
    /// durable, however the apply ended.
    pub async fn apply<C: ClusterSide + ?Sized>(
        self,
        clusters: &C,
        mut opts: ApplyOptions,
        progress: &(dyn Fn(ProgressEvent) + Send + Sync),
    ) -> Result<Applied<'a, S>, ApplyError> {
        self.refuse_losing_a_new_token(clusters.keeps_new_token())
            .map_err(ApplyError::TokenWouldBeLost)?;
        if let Some((journal, user)) = self.journal()
            && creates_token(&self.plan)
        {
            journal
                .persist_intent(user)
                .await
                .map_err(ApplyError::Journal)?;
        }
        opts.journal = self.site.journal.clone();
        let report = converge::apply(
            self.site.array,
            self.subject.desired(),
            &self.plan,
            &opts,
            progress,
        )
        .await;
        if let Some((journal, user)) = self.journal() {
            journal
                .persist_token(user)
                .await
                .map_err(ApplyError::Journal)?;
        }
        Ok(Applied {
            site: self.site,
            subject: self.subject,
            observed: self.observed,
            plan: self.plan,
            report,
            let_go: AtomicBool::new(false),
        })
    }
}

/// What the clusters made of the manifests, as [`ClusterSide::apply_manifests`]
/// reports it.
#[derive(Debug, Clone)]
pub struct Delivery<R> {
    /// The adapter's own report.
    pub report: R,
    /// The tenant cluster holds the px-pure-secret with the token of this run.
    pub token_kept: bool,
    /// Both clusters hold everything.
    pub complete: bool,
}

/// The clusters' part of the pipeline: the manifests with the array's facts, and
/// with them the token's delivery to the tenant cluster. Only that: the token's
/// journal, its durable copy and when it lets go are the [`Site`]'s journal's.
/// Implemented by the adapters over px-cluster; a fake in tests.
#[async_trait]
pub trait ClusterSide: Send + Sync {
    /// The adapter's error.
    type Error: Send;
    /// The adapter's report of a manifest apply.
    type Report: Send;

    /// Whether a token the apply creates reaches a tenant cluster.
    fn keeps_new_token(&self) -> bool;

    /// Renders and applies the tenant's manifests with the array's facts.
    async fn apply_manifests(
        &self,
        tenant: &Tenant,
        facts: &ArrayFacts,
    ) -> Result<Delivery<Self::Report>, Self::Error>;
}

/// The array part alone: no clusters, and nowhere to keep a new token (a plan that
/// creates one is refused). For tagging found drives, and for tests.
#[derive(Debug, Clone, Copy, Default)]
pub struct ArrayOnly;

#[async_trait]
impl ClusterSide for ArrayOnly {
    type Error = std::convert::Infallible;
    type Report = ();

    fn keeps_new_token(&self) -> bool {
        false
    }

    async fn apply_manifests(
        &self,
        _tenant: &Tenant,
        _facts: &ArrayFacts,
    ) -> Result<Delivery<()>, Self::Error> {
        Ok(Delivery {
            report: (),
            token_kept: false,
            complete: false,
        })
    }
}

/// An applied plan: the last stage, before the clusters.
pub struct Applied<'a, S = Tenant> {
    site: Site<'a>,
    subject: S,
    observed: Observed,
    plan: Plan,
    report: ApplyReport,
    /// The journal let go of the tenant's token already.
    let_go: AtomicBool,
}

impl<S: Subject> Applied<'_, S> {
    /// The converge report.
    pub fn report(&self) -> &ApplyReport {
        &self.report
    }

    /// The plan that was applied.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// What the plan was made from.
    pub fn observed(&self) -> &Observed {
        &self.observed
    }

    /// What the manifests need from the array: serials and the token.
    pub fn facts(&self) -> ArrayFacts {
        ArrayFacts {
            volume_serials: self.report.facts.volume_serials.clone(),
            api_token: self.report.facts.api_token.clone(),
        }
    }

    /// The token user holds a token this run has no value of and the journal does
    /// not account for (a journaled one is finished by the next run): whoever has
    /// a copy must be asked.
    pub fn token_unknown(&self) -> bool {
        self.observed.token == TokenState::HasToken
            && self.report.facts.api_token.is_none()
            && matches!(
                self.observed.token_journal,
                JournalVerdict::None | JournalVerdict::Stale
            )
    }

    /// Whether the journal may let go without a delivery: it held nothing this run
    /// acted on (no entry, or a stale one) and the plan created no token. An intent
    /// whose token the apply created without an answer must stay: it is the only
    /// evidence that the token is pxfa's and nobody has it.
    pub fn nothing_pending(&self) -> bool {
        !creates_token(&self.plan)
            && matches!(
                self.observed.token_journal,
                JournalVerdict::None | JournalVerdict::Stale
            )
    }

    /// The journal lets go of the tenant's token (its entry, then the entry's
    /// durable copy): it is durable elsewhere now (the tenant cluster, the
    /// adapter's [copy](Planned::with_token_copy)). Once: a second call does nothing.
    pub async fn token_delivered(&self) -> Result<(), JournalError> {
        let Some((journal, user)) = journal_of(&self.site, self.subject.desired()) else {
            return Ok(());
        };
        if self.let_go.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let kept = journal.delivered(user);
        let copy = journal.persist_delivered(user).await;
        kept.and(copy)
    }
}

impl Applied<'_> {
    /// The tenant (re-sized to the drives in use).
    pub fn tenant(&self) -> &Tenant {
        &self.subject
    }

    /// The last stage: the manifests with the array's facts onto the clusters; the
    /// journal lets go once the tenant holds the token, or (for a journal that
    /// [drops stale entries](TokenJournal::drops_stale_entries)) when both clusters
    /// are done and nothing was pending. The second value is `None` when the journal
    /// kept its entry, else whether letting go worked (when it did not, the token is
    /// delivered all the same and the next run delivers the same token again).
    pub async fn to_clusters<C: ClusterSide + ?Sized>(
        &self,
        clusters: &C,
    ) -> Result<(Delivery<C::Report>, Option<Result<(), JournalError>>), C::Error> {
        let delivery = clusters
            .apply_manifests(&self.subject, &self.facts())
            .await?;
        let drops_stale = self
            .site
            .journal
            .as_ref()
            .is_some_and(|j| j.drops_stale_entries());
        let nothing_pending = drops_stale && delivery.complete && self.nothing_pending();
        let journal = if delivery.token_kept || nothing_pending {
            Some(self.token_delivered().await)
        } else {
            None
        };
        Ok((delivery, journal))
    }
}

/// The site's journal and the tenant's token user, when the tenant has a token
/// and the site a journal.
fn journal_of<'s>(
    site: &'s Site<'_>,
    desired: &'s DesiredState,
) -> Option<(&'s dyn TokenJournal, &'s str)> {
    let user = desired.api_token.as_ref()?.admin.as_str();
    Some((site.journal.as_deref()?, user))
}

/// Whether `plan` creates an API token.
fn creates_token(plan: &Plan) -> bool {
    plan.changes
        .iter()
        .any(|c| c.action == Action::Create && c.kind == Kind::ApiToken)
}

/// A tenant about to be destroyed: the destroy plan and the array it is for.
pub struct DestroyPlanned<'a> {
    site: Site<'a>,
    plan: DestroyPlan,
}

impl DestroyPlanned<'_> {
    /// What goes, in order, and what is kept.
    pub fn plan(&self) -> &DestroyPlan {
        &self.plan
    }

    /// The destroy plan, for a caller that only previews it.
    pub fn into_plan(self) -> DestroyPlan {
        self.plan
    }

    /// The last stage of a destroy: exactly the plan's calls, in dependent rounds
    /// (`opts` says how many at once and when to stop starting more; what goes was
    /// decided with the plan).
    pub async fn destroy(
        self,
        opts: &DestroyOptions,
        progress: &(dyn Fn(ProgressEvent) + Send + Sync),
    ) -> DestroyReport {
        converge::destroy_planned(self.site.array, &self.plan, opts, progress).await
    }
}
