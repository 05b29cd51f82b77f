//! The controller's cluster side of the tenant pipeline
//! ([`px_topology::pipeline::ClusterSide`]): the token journal's Secret around the
//! array apply, the manifests server-side applied to the management cluster and
//! (through the HostedCluster's kubeconfig) the tenant cluster.

use async_trait::async_trait;
use px_cluster::{ApplyOptions as ClusterApplyOptions, ApplyReport, WaitOptions, apply_manifests};
use px_topology::Tenant;
use px_topology::driver::ArrayFacts;
use px_topology::manifests::{RenderOptions, render};
use px_topology::pipeline::{ApplyError, ClusterSide, Delivery};
use px_topology::plan::Plan;
use px_topology::render::Cluster;
use tokio::sync::Mutex;

use crate::error::{Error, Reason};
use crate::journal::ReconcileJournal;

/// One reconcile's clusters and token journal.
pub(crate) struct Clusters<'a> {
    /// The management cluster.
    pub(crate) management: &'a kube::Client,
    /// The tenant cluster, or why there is none yet.
    pub(crate) tenant: Result<kube::Client, Error>,
    /// How long readiness waits may take.
    pub(crate) wait: WaitOptions,
    /// The object's token journal.
    pub(crate) journal: Mutex<ReconcileJournal>,
    /// `TenantStorage ns/name`, for messages.
    pub(crate) id: &'a str,
}

impl Clusters<'_> {
    /// The reconcile's error for a refused or failed apply.
    pub(crate) fn apply_error(&self, e: ApplyError<Error>) -> Error {
        match e {
            ApplyError::TokenWouldBeLost(lost) => {
                let why = self
                    .tenant
                    .as_ref()
                    .err()
                    .map(|e| e.message.clone())
                    .unwrap_or_default();
                Error::new(Reason::TenantKubeconfigMissing, format!("{lost}: {why}"))
            }
            ApplyError::Journal(e) => e,
        }
    }
}

#[async_trait]
impl ClusterSide for Clusters<'_> {
    type Error = Error;
    type Report = ApplyReport;

    // The tenant cluster is where a new API token is kept.
    fn keeps_new_token(&self) -> bool {
        self.tenant.is_ok()
    }

    // The journal Secret of a tenant with nothing pending goes too.
    fn drops_stale_entries(&self) -> bool {
        true
    }

    async fn before_apply(&self, plan: &Plan) -> Result<(), Error> {
        self.journal.lock().await.before_apply(plan).await
    }

    async fn after_apply(&self) -> Result<(), Error> {
        self.journal.lock().await.after_apply(self.id).await
    }

    async fn apply_manifests(
        &self,
        tenant: &Tenant,
        facts: &ArrayFacts,
    ) -> Result<Delivery<ApplyReport>, Error> {
        let manifests = render(
            &tenant.spec,
            &tenant.sizing,
            facts,
            RenderOptions {
                include_secrets: true,
                ..RenderOptions::default()
            },
        )
        .map_err(|e| {
            Error::new(
                Reason::Internal,
                format!("cannot render the manifests: {e}"),
            )
        })?;
        // The pull-secret template and the rebooting management MachineConfig stay
        // with the admin, as in the CLI without --apply-node-config.
        let (manifests, skipped) = px_cluster::cluster_bundle(&tenant.spec, manifests, false);
        for s in &skipped {
            tracing::info!(tenant = %self.id, "not applied: {s}");
        }
        let tenant_client = self.tenant.as_ref().ok();
        let opts = ClusterApplyOptions {
            force_conflicts: false,
            wait: self.wait,
            apply_secrets: facts.api_token.is_some(),
            adopt_replaced_vms: false,
        };
        let applied = apply_manifests(
            &tenant.spec,
            &manifests,
            self.management,
            tenant_client,
            &opts,
        )
        .await
        .map_err(|e| Error::new(Reason::ClusterApplyFailed, e.to_string()))?;
        // A conflict stops the reconcile before the journal may let go.
        let clear = applied.conflicts.is_empty();
        // The tenant's px-pure-secret holds the token now (even if the tenant is
        // not ready yet).
        let tenant_secrets: Vec<_> = manifests
            .iter()
            .filter(|m| m.secret && m.cluster == Cluster::Tenant)
            .collect();
        let token_kept = clear
            && tenant_client.is_some()
            && facts.api_token.is_some()
            && !tenant_secrets.is_empty()
            && tenant_secrets.iter().all(|m| applied.was_applied(m));
        let complete = clear && tenant_client.is_some() && applied.complete();
        Ok(Delivery {
            report: applied,
            token_kept,
            complete,
        })
    }

    async fn token_delivered(&self, _user: &str) {
        self.journal.lock().await.let_go(self.id).await;
    }
}
