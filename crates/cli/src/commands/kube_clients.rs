//! `apply`'s clusters as `--kubeconfig` and `--tenant-kubeconfig` name them: each
//! file is read once, at the start, and the clients are passed on to the site facts,
//! the drive claims, the preflight and the cluster side. A kubeconfig that can be
//! read only once (`--kubeconfig <(vault read ...)`, a pipe) works like a file, and
//! the clusters apply writes to are the ones its preflight checked.

use anyhow::{Result, anyhow};
use px_cluster::{Client, ClusterClients};

use crate::args::ClusterArgs;
use crate::exit::InvalidInput;
use crate::preflight::Findings;

/// One kubeconfig flag's client, or why its file and context gave none.
struct Loaded {
    flag: &'static str,
    client: Result<Client>,
}

impl Loaded {
    fn client(&self) -> Result<Client> {
        match &self.client {
            Ok(c) => Ok(c.clone()),
            Err(e) => Err(anyhow!("{}: {e:#}", self.flag)),
        }
    }
}

/// The clients of `apply`'s kubeconfig flags, each file read once.
pub(crate) struct KubeClients {
    management: Option<Loaded>,
    tenant: Option<Loaded>,
}

impl KubeClients {
    /// Reads the kubeconfigs `k` names (none without `--kubeconfig`) and builds their
    /// clients, whose requests stay within `bounds`; no cluster is contacted.
    pub(crate) async fn load(k: &ClusterArgs, bounds: px_cluster::KubeBounds) -> Self {
        KubeClients {
            management: load(
                "--kubeconfig",
                k.kubeconfig.as_deref(),
                k.context.as_deref(),
                bounds,
            )
            .await,
            tenant: load(
                "--tenant-kubeconfig",
                k.tenant_kubeconfig.as_deref(),
                k.tenant_context.as_deref(),
                bounds,
            )
            .await,
        }
    }

    /// The management cluster's client, when its kubeconfig loaded.
    pub(crate) fn management(&self) -> Option<&Client> {
        self.management.as_ref()?.client.as_ref().ok()
    }

    /// Preflight: a kubeconfig that does not read or parse, or a context it does
    /// not have, is wrong input (exit 2), reported before the first array write.
    pub(crate) fn check(&self, f: &mut Findings) {
        for loaded in [&self.management, &self.tenant].into_iter().flatten() {
            if let Err(e) = loaded.client() {
                f.input(format!("{e:#}"));
            }
        }
    }

    /// The clients the cluster side runs with: none without `--kubeconfig`. An
    /// unloadable kubeconfig is an error here too, for a caller that skipped
    /// [`Self::check`].
    pub(crate) fn cluster_clients(&self) -> Result<Option<ClusterClients>> {
        let Some(management) = &self.management else {
            return Ok(None);
        };
        let tenant = match &self.tenant {
            Some(t) => Some(t.client()?),
            None => None,
        };
        Ok(Some(ClusterClients {
            management: management.client()?,
            tenant,
        }))
    }
}

async fn load(
    flag: &'static str,
    path: Option<&std::path::Path>,
    context: Option<&str>,
    bounds: px_cluster::KubeBounds,
) -> Option<Loaded> {
    let path = path?;
    let client = px_cluster::connect(path, context, bounds)
        .await
        .map_err(anyhow::Error::new);
    Some(Loaded { flag, client })
}

/// The client of the kubeconfig a read-only command's `flag` names (`None` without
/// one). Loading contacts no cluster, so a file or context that does not load is bad
/// input (exit 2): the command calls this before anything is sent anywhere.
pub(crate) async fn connect(
    flag: &str,
    path: Option<&std::path::Path>,
    context: Option<&str>,
    bounds: px_cluster::KubeBounds,
) -> Result<Option<Client>> {
    let Some(path) = path else {
        return Ok(None);
    };
    px_cluster::connect(path, context, bounds)
        .await
        .map(Some)
        .map_err(|e| InvalidInput::error(format!("{flag}: {:#}", anyhow::Error::new(e))))
}
