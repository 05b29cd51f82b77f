//! Which REST resource serves an `apiVersion`/`kind`, asked of the API server once per
//! kind (one `/api/v1` or `/apis/<group>/<version>` call) and remembered.

use std::collections::HashMap;

use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiCapabilities, ApiResource, Scope, pinned_kind};
use tokio::sync::Mutex;

use crate::error::{Error, Result};

/// Resolved kinds of one cluster.
pub(crate) struct Resources {
    client: Client,
    known: Mutex<HashMap<(String, String), (ApiResource, ApiCapabilities)>>,
}

impl Resources {
    /// An empty cache for `client`'s cluster.
    pub(crate) fn new(client: Client) -> Self {
        Resources {
            client,
            known: Mutex::new(HashMap::new()),
        }
    }

    /// The client this cache resolves against.
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// The resource serving `api_version` (`v1`, `apps/v1`) and `kind`.
    pub(crate) async fn resolve(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Result<(ApiResource, bool)> {
        let key = (api_version.to_string(), kind.to_string());
        let mut known = self.known.lock().await;
        if let Some((ar, caps)) = known.get(&key) {
            return Ok((ar.clone(), caps.scope == Scope::Namespaced));
        }
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let found = pinned_kind(&self.client, &gvk)
            .await
            .map_err(|source| Error::NotServed {
                api_version: api_version.to_string(),
                kind: kind.to_string(),
                source,
            })?;
        let namespaced = found.1.scope == Scope::Namespaced;
        known.insert(key, found.clone());
        Ok((found.0, namespaced))
    }

    /// The API for `kind` in `namespace` (ignored for cluster-scoped kinds).
    pub(crate) async fn api(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Api<DynamicObject>> {
        let (ar, namespaced) = self.resolve(api_version, kind).await?;
        Ok(match (namespaced, namespace) {
            (true, Some(ns)) => Api::namespaced_with(self.client.clone(), ns, &ar),
            (true, None) => Api::default_namespaced_with(self.client.clone(), &ar),
            (false, _) => Api::all_with(self.client.clone(), &ar),
        })
    }
}

/// `namespace/name` or `name`, for messages.
pub(crate) fn object_path(kind: &str, namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// The API server's status code of a kube error, if it answered.
pub(crate) fn status_code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}
