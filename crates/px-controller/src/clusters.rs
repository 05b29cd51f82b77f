//! The controller's adapter over the tenant pipeline's cluster side
//! ([`px_cluster::TenantClusters`], the same the CLI's `apply` runs): the
//! management cluster and (through the HostedCluster's kubeconfig) the tenant
//! cluster, notices as log lines and failures as the reconcile's errors. The drives
//! are not tagged here: the array lease ends before the clusters, and the next
//! reconcile's observation tags the drives whose claims bound. The token journal's
//! Secret is not here: the pipeline's site carries it
//! ([`crate::token_journal::ControllerTokenJournal`]).

use px_cluster::{
    ClusterClients, Notice, TenantClusters, TenantClustersError, TenantClustersOptions, WaitOptions,
};
use px_topology::ApplyError;
use px_topology::token_journal::JournalError;

use crate::error::{Error, Reason};

/// One reconcile's clusters.
pub(crate) struct Clusters<'a> {
    /// The pipeline's cluster side.
    pub(crate) side: TenantClusters<'a>,
    /// Why there is no tenant cluster yet, if there is none.
    pub(crate) tenant_missing: Option<Error>,
}

impl<'a> Clusters<'a> {
    /// The cluster side of `TenantStorage` `id`: the pull-secret template and the
    /// rebooting management MachineConfig stay with the admin (as in the CLI without
    /// `--apply-node-config`), and a field another manager owns is a conflict.
    pub(crate) fn new(
        management: &kube::Client,
        tenant: Result<kube::Client, Error>,
        wait: WaitOptions,
        id: &'a str,
    ) -> Self {
        let (tenant, tenant_missing) = match tenant {
            Ok(c) => (Some(c), None),
            Err(e) => (None, Some(e)),
        };
        let clients = ClusterClients {
            management: management.clone(),
            tenant,
        };
        let options = TenantClustersOptions {
            wait,
            ..TenantClustersOptions::default()
        };
        let side = TenantClusters::new(
            Some(clients),
            options,
            Box::new(move |n| log_notice(id, &n)),
        );
        Clusters {
            side,
            tenant_missing,
        }
    }

    /// The reconcile's error for a refused or failed apply.
    pub(crate) fn apply_error(&self, e: ApplyError) -> Error {
        match e {
            ApplyError::TokenWouldBeLost(lost) => {
                let why = self
                    .tenant_missing
                    .as_ref()
                    .map(|e| e.message.clone())
                    .unwrap_or_default();
                Error::new(Reason::TenantKubeconfigMissing, format!("{lost}: {why}"))
            }
            ApplyError::Journal(e) => journal_error(e),
        }
    }
}

/// The reconcile's error for a failed write of the token journal: the Secret's own
/// error (its reason and message) as it is.
pub(crate) fn journal_error(e: JournalError) -> Error {
    e.downcast::<Error>()
        .unwrap_or_else(|e| Error::new(Reason::Internal, e.to_string()))
}

/// The reconcile's error for a failed run on the clusters.
pub(crate) fn cluster_error(e: TenantClustersError) -> Error {
    match e {
        TenantClustersError::Render(e) => Error::new(
            Reason::Internal,
            format!("cannot render the manifests: {e}"),
        ),
        TenantClustersError::Clusters(e) => Error::new(Reason::ClusterApplyFailed, e.to_string()),
        other => Error::new(Reason::Internal, other.to_string()),
    }
}

/// What the cluster side reports, as log lines of the object.
fn log_notice(id: &str, n: &Notice<'_>) {
    match n {
        Notice::NotApplied(s) => tracing::info!(tenant = %id, "not applied: {s}"),
        Notice::GuestInterfaceReplaced { specified, found } => tracing::warn!(
            tenant = %id,
            "the worker VMs name the storage interface {found}, not {specified} (spec.network.guestInterface); using {found}"
        ),
        Notice::GuestInterfaceUnknown { specified, error } => tracing::warn!(
            tenant = %id,
            "cannot discover the guest storage interface, using {specified}: {error}"
        ),
        other => tracing::debug!(tenant = %id, "{other:?}"),
    }
}
