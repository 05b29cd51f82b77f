//! Reconcile tests: a stateful fake API server (the TenantStorage object with its
//! status subresource, finalizers and deletionTimestamp; credentials and kubeconfig
//! Secrets; the HostedCluster; every management and tenant kind ready at once) with
//! MockArray behind the array pool.

#[path = "../../../px-cluster/tests/it/support.rs"]
#[allow(dead_code)]
mod support;

mod api_client;
mod deploy;
mod election;
mod fake;
mod faults;
mod lease;
mod lifecycle;
mod merge_patch;
mod objects;
mod observations;
mod observability;
mod reconcile;
mod token_journal;
