//! Building a kube client from a kubeconfig file and context. Every client sends
//! through [`crate::bounds`]: its answers capped, its requests timed and retried
//! within the caller's [`KubeBounds`].

use std::path::Path;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use crate::bounds::{Bounded, KubeBounds};
use crate::error::{Error, Result};

/// A client for the cluster of `context` (default: the kubeconfig's current context)
/// in the kubeconfig at `path`. Like `oc` with `$KUBECONFIG`, `path` may list several
/// files separated by `:`; they are merged and the first file to set a value wins.
pub async fn connect(path: &Path, context: Option<&str>, bounds: KubeBounds) -> Result<Client> {
    client_from_config(load(path, context).await?, bounds)
}

async fn load(path: &Path, context: Option<&str>) -> Result<Config> {
    let kubeconfig = read_kubeconfigs(path)?;
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
    Ok(config)
}

/// The namespace of the current context of the kubeconfig at `path` (`a:b:c`
/// merged as for [`connect`]), if it names one: where `oc apply` puts an object that
/// names no namespace.
pub fn current_context_namespace(path: &Path) -> Result<Option<String>> {
    let kubeconfig = read_kubeconfigs(path)?;
    let Some(current) = kubeconfig.current_context.as_deref() else {
        return Ok(None);
    };
    Ok(kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == current)
        .and_then(|c| c.context.as_ref()?.namespace.clone()))
}

/// The kubeconfig files in `paths` (`a:b:c`), merged in order; empty entries are
/// skipped, as `oc` does.
fn read_kubeconfigs(paths: &Path) -> Result<Kubeconfig> {
    let mut merged: Option<Kubeconfig> = None;
    for path in std::env::split_paths(paths.as_os_str()).filter(|p| !p.as_os_str().is_empty()) {
        // Read as an input (bounded, never blocking on a FIFO), then parsed.
        let text =
            px_topology::files::read_input_text(&path, px_topology::files::InputKind::Kubeconfig)
                .map_err(|e| Error::Kubeconfig {
                message: format!("cannot read kubeconfig {}", path.display()),
                source: Box::new(e),
            })?;
        // A regular file is parsed by kube itself, which makes the certificate and
        // token paths in it relative to the file's folder; a pipe only once.
        let parsed = if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            Kubeconfig::read_from(&path)
        } else {
            Kubeconfig::from_yaml(&text)
        };
        let next = parsed.map_err(|e| Error::Kubeconfig {
            message: format!("cannot read kubeconfig {}", path.display()),
            source: Box::new(e),
        })?;
        merged = Some(match merged {
            None => next,
            Some(m) => m.merge(next).map_err(|e| Error::Kubeconfig {
                message: format!("cannot merge kubeconfig {}", path.display()),
                source: Box::new(e),
            })?,
        });
    }
    merged.ok_or_else(|| Error::Kubeconfig {
        message: format!("no kubeconfig file in {:?}", paths.display().to_string()),
        source: "empty path list".into(),
    })
}

/// A client from a ready config. kube is built with ring only (the workspace's one
/// rustls provider, which reqwest uses too), so building the TLS stack cannot hit
/// rustls's "cannot determine the process-level CryptoProvider" panic; tests check
/// that. kube's own retry layer is left out: it waits whatever `Retry-After` asks
/// (an hour, if a server says so); `Bounded` retries within `bounds` instead.
pub fn client_from_config(mut config: Config, bounds: KubeBounds) -> Result<Client> {
    let url = config.cluster_url.to_string();
    let namespace = config.default_namespace.clone();
    config.default_retry = false;
    let inner = Client::try_from(config)
        .map_err(|e| Error::kube(format!("cannot build a Kubernetes client for {url}"), e))?;
    Ok(Client::new(Bounded { inner, bounds }, namespace))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(name: &str, current: bool) -> String {
        format!(
            "apiVersion: v1\nkind: Config\n{}clusters:\n- name: {name}\n  cluster:\n    server: https://{name}.example:6443\ncontexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\nusers:\n- name: {name}\n  user: {{}}\n",
            if current {
                format!("current-context: {name}\n")
            } else {
                String::new()
            }
        )
    }

    #[test]
    fn colon_separated_kubeconfigs_merge_first_wins() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::write(&a, kubeconfig("mgmt", true)).unwrap();
        std::fs::write(&b, kubeconfig("other", true)).unwrap();
        let list = std::env::join_paths([&a, &b]).unwrap();
        let merged = read_kubeconfigs(Path::new(&list)).unwrap();
        let names: Vec<&str> = merged.contexts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["mgmt", "other"]);
        assert_eq!(merged.current_context.as_deref(), Some("mgmt"));
        let err = read_kubeconfigs(Path::new("")).unwrap_err();
        assert!(err.to_string().contains("no kubeconfig"), "{err}");
        assert!(read_kubeconfigs(&dir.path().join("missing")).is_err());
    }
}
