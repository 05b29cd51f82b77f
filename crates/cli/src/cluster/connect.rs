//! Building a kube client from a kubeconfig file and context.

use std::path::Path;

use anyhow::{Context, Result};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

/// A client for the cluster of `context` (default: the kubeconfig's current context)
/// in the kubeconfig at `path`.
pub async fn connect(path: &Path, context: Option<&str>) -> Result<Client> {
    let kubeconfig = Kubeconfig::read_from(path)
        .with_context(|| format!("cannot read kubeconfig {}", path.display()))?;
    let options = KubeConfigOptions {
        context: context.map(str::to_string),
        ..Default::default()
    };
    let config = Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .with_context(|| match context {
            Some(c) => format!("kubeconfig {}: cannot use context {c}", path.display()),
            None => format!(
                "kubeconfig {}: cannot use the current context",
                path.display()
            ),
        })?;
    client_from_config(config)
}

/// A client from a ready config. kube is built with aws-lc-rs only (the same rustls
/// provider as reqwest), so building the TLS stack cannot hit rustls's "cannot
/// determine the process-level CryptoProvider" panic; tests check that.
pub fn client_from_config(config: Config) -> Result<Client> {
    let url = config.cluster_url.to_string();
    Client::try_from(config).with_context(|| format!("cannot build a Kubernetes client for {url}"))
}
