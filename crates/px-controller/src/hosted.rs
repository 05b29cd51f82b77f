//! The tenant (hosted) cluster: a client built from the HostedCluster's admin
//! kubeconfig Secret, which HyperShift names in `status.kubeconfig.name` (key
//! `kubeconfig`). Every failure is `TenantKubeconfigMissing`, naming what is missing.

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
use px_topology::Tenant;

use crate::error::{Error, Reason};

/// A client for the tenant cluster from the HostedCluster's admin kubeconfig
/// Secret (`status.kubeconfig.name`, key `kubeconfig`).
pub(crate) async fn tenant_cluster(
    client: &kube::Client,
    tenant: &Tenant,
) -> Result<kube::Client, Error> {
    let hc = &tenant.spec.spec.hosted_cluster;
    let missing = |m: String| Error::new(Reason::TenantKubeconfigMissing, m);
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("hypershift.openshift.io", "v1beta1", "HostedCluster"),
        "hostedclusters",
    );
    let hcs: Api<DynamicObject> = Api::namespaced_with(client.clone(), &hc.namespace, &ar);
    let found = hcs
        .get_opt(&hc.name)
        .await
        .map_err(|e| {
            missing(format!(
                "cannot read HostedCluster {}/{}: {e}",
                hc.namespace, hc.name
            ))
        })?
        .ok_or_else(|| {
            missing(format!(
                "HostedCluster {}/{} does not exist",
                hc.namespace, hc.name
            ))
        })?;
    let secret_name = found.data["status"]["kubeconfig"]["name"]
        .as_str()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            missing(format!(
                "HostedCluster {}/{} has no status.kubeconfig yet",
                hc.namespace, hc.name
            ))
        })?
        .to_string();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &hc.namespace);
    let secret = secrets
        .get_opt(&secret_name)
        .await
        .map_err(|e| {
            missing(format!(
                "cannot read Secret {}/{secret_name}: {e}",
                hc.namespace
            ))
        })?
        .ok_or_else(|| {
            missing(format!(
                "Secret {}/{secret_name} does not exist",
                hc.namespace
            ))
        })?;
    let bytes = secret
        .data
        .as_ref()
        .and_then(|d| d.get("kubeconfig"))
        .ok_or_else(|| {
            missing(format!(
                "Secret {}/{secret_name} has no key kubeconfig",
                hc.namespace
            ))
        })?;
    let text = String::from_utf8(bytes.0.clone()).map_err(|_| {
        missing(format!(
            "Secret {}/{secret_name}: kubeconfig is not UTF-8",
            hc.namespace
        ))
    })?;
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&text).map_err(|e| {
        missing(format!(
            "Secret {}/{secret_name}: kubeconfig: {e}",
            hc.namespace
        ))
    })?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .map_err(|e| {
            missing(format!(
                "Secret {}/{secret_name}: kubeconfig: {e}",
                hc.namespace
            ))
        })?;
    px_cluster::client_from_config(config, px_cluster::KubeBounds::default())
        .map_err(|e| missing(e.to_string()))
}
