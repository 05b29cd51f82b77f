//! An array client that counts its calls by outcome for `/metrics`
//! (`pxfa_controller_array_calls_total{array, outcome}`): every [`FlashArray`] method
//! forwards to the wrapped client and records `ok` or the error's kind
//! (`not_found`, `rate_limited`, `transport`, ...). Nothing else changes: the
//! wrapped client keeps its own session, paging and retries.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use flasharray::models::*;
use flasharray::params::*;
use flasharray::{FlashArray, HostGroupName, HostName, PodName, RealmName, Result, VolumeName};

use crate::metrics::Metrics;

/// A counted array client.
#[derive(Debug)]
pub struct Metered {
    inner: Arc<dyn FlashArray>,
    endpoint: String,
    metrics: Arc<Metrics>,
}

impl Metered {
    /// Wraps `inner`, counting into `metrics` under the label `endpoint`.
    pub fn new(inner: Arc<dyn FlashArray>, endpoint: &str, metrics: Arc<Metrics>) -> Self {
        Metered {
            inner,
            endpoint: endpoint.to_string(),
            metrics,
        }
    }

    fn count<T>(&self, r: Result<T>) -> Result<T> {
        let outcome = match &r {
            Ok(_) => "ok".to_string(),
            Err(e) => outcome_of(e),
        };
        self.metrics.array_call(&self.endpoint, &outcome);
        r
    }
}

/// The outcome label of an error: its kind in snake case, or `transport` for
/// failures that never got an answer.
fn outcome_of(e: &flasharray::Error) -> String {
    match e {
        flasharray::Error::Transport(_) => "transport".to_string(),
        flasharray::Error::RetriesExhausted { .. } => "retries_exhausted".to_string(),
        _ => {
            let kind = format!("{:?}", e.kind());
            let mut out = String::new();
            for (i, ch) in kind.chars().enumerate() {
                if ch.is_ascii_uppercase() && i > 0 {
                    out.push('_');
                }
                out.push(ch.to_ascii_lowercase());
            }
            out
        }
    }
}

macro_rules! metered {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        #[async_trait]
        impl FlashArray for Metered {
            $(
                async fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
                    self.count(self.inner.$name($($arg),*).await)
                }
            )*
            async fn close(&self) -> Result<()> {
                self.inner.close().await
            }
            async fn rest_minor_version(&self) -> Result<Option<u32>> {
                self.inner.rest_minor_version().await
            }
        }
    };
}

metered! {
    list_volumes(params: &ListParams) -> Vec<Volume>;
    create_volumes(names: &[VolumeName], body: &VolumePost) -> Vec<Volume>;
    create_volumes_batch(items: &[VolumeBatchPost]) -> Vec<Volume>;
    patch_volumes(names: &[VolumeName], patch: &VolumePatch, truncate: bool) -> Vec<Volume>;
    eradicate_volumes(names: &[VolumeName]) -> ();
    list_tags(kind: TagResource, params: &TagParams) -> Vec<Tag>;
    set_tags(kind: TagResource, tags: &[Tag]) -> Vec<Tag>;
    delete_tags(kind: TagResource, resource_names: &[String], keys: &[String], namespaces: &[String]) -> ();
    list_hosts(params: &ListParams) -> Vec<Host>;
    create_hosts(names: &[HostName], body: &HostPost) -> Vec<Host>;
    patch_hosts(names: &[HostName], patch: &HostPatch) -> Vec<Host>;
    delete_hosts(names: &[HostName]) -> ();
    list_host_groups(params: &ListParams) -> Vec<HostGroup>;
    create_host_groups(names: &[HostGroupName], body: &HostGroupPost) -> Vec<HostGroup>;
    delete_host_groups(names: &[HostGroupName]) -> ();
    list_host_group_members(params: &MemberParams) -> Vec<Member>;
    add_host_group_members(group: &HostGroupName, hosts: &[HostName]) -> Vec<Member>;
    remove_host_group_members(group: &HostGroupName, hosts: &[HostName]) -> ();
    list_connections(params: &ConnectionParams) -> Vec<Connection>;
    create_connections(target: &ConnectionTarget, volumes: &[VolumeName], lun: Option<u32>) -> Vec<Connection>;
    delete_connections(target: &ConnectionTarget, volumes: &[VolumeName]) -> ();
    list_pods(params: &ListParams) -> Vec<Pod>;
    create_pods(names: &[PodName], body: &PodPost) -> Vec<Pod>;
    patch_pods(names: &[PodName], patch: &PodPatch, destroy_contents: bool) -> Vec<Pod>;
    eradicate_pods(names: &[PodName], eradicate_contents: bool) -> ();
    list_pod_arrays(pods: &[PodName]) -> Vec<Member>;
    get_array() -> ArrayInfo;
    get_array_space() -> ArraySpace;
    list_api_tokens(admins: &[String], expose: bool) -> Vec<AdminApiToken>;
    create_api_token(admin: &str, timeout: Option<Duration>) -> AdminApiToken;
    delete_api_token(admin: &str) -> ();
    list_realms(params: &ListParams) -> Vec<Realm>;
    create_realms(names: &[RealmName], body: &RealmPost) -> Vec<Realm>;
    patch_realms(names: &[RealmName], patch: &RealmPatch, destroy_contents: bool) -> Vec<Realm>;
    eradicate_realms(names: &[RealmName], eradicate_contents: bool) -> ();
    list_management_access_policies(names: &[String]) -> Vec<ManagementAccessPolicy>;
    create_management_access_policies(names: &[String], body: &ManagementAccessPolicyPost) -> Vec<ManagementAccessPolicy>;
    delete_management_access_policies(names: &[String]) -> ();
    list_admins(names: &[String]) -> Vec<Admin>;
    create_admins(names: &[String], body: &AdminPost) -> Vec<Admin>;
    delete_admins(names: &[String]) -> ();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_kinds_become_snake_case_labels() {
        let e = flasharray::Error::api(404, None, "no such volume");
        assert_eq!(outcome_of(&e), "not_found");
        let e = flasharray::Error::api(429, None, "slow down");
        assert_eq!(outcome_of(&e), "rate_limited");
    }
}
