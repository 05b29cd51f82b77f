//! Building a kube client from a kubeconfig file and context.

use std::path::Path;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use crate::error::{Error, Result};

/// A client for the cluster of `context` (default: the kubeconfig's current context)
/// in the kubeconfig at `path`.
pub async fn connect(path: &Path, context: Option<&str>) -> Result<Client> {
    let kubeconfig = Kubeconfig::read_from(path).map_err(|e| Error::Kubeconfig {
        message: format!("cannot read kubeconfig {}", path.display()),
        source: Box::new(e),
    })?;
    let options = KubeConfigOptions {
        context: context.map(str::to_string),
        ..Default::default()
    };
    let config = Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| Error::Kubeconfig {
            message: match context {
                Some(c) => format!("kubeconfig {}: cannot use context {c}", path.display()),
                None => format!(
                    "kubeconfig {}: cannot use the current context",
                    path.display()
                ),
            },
            source: Box::new(e),
        })?;
    client_from_config(config)
}

/// A client from a ready config. kube is built with ring only (the workspace's one
/// rustls provider, which reqwest uses too), so building the TLS stack cannot hit
/// rustls's "cannot determine the process-level CryptoProvider" panic; tests check
/// that.
pub fn client_from_config(config: Config) -> Result<Client> {
    let url = config.cluster_url.to_string();
    Client::try_from(config)
        .map_err(|e| Error::kube(format!("cannot build a Kubernetes client for {url}"), e))
}
