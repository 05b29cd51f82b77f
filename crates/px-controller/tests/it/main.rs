//! Reconcile tests: a stateful fake API server (the TenantStorage object with its
//! status subresource, finalizers and deletionTimestamp; credentials and kubeconfig
//! Secrets; the HostedCluster; every management and tenant kind ready at once) with
//! MockArray behind the array pool.
// A test scenario reads top to bottom; the 120-line rule is for library code.
#![allow(clippy::too_many_lines)]

#[path = "../../../px-cluster/tests/it/support.rs"]
#[allow(dead_code)]
mod support;

mod api_client;
mod deploy;
mod election;
mod fake;
mod faults;
mod identity;
mod lease;
mod lifecycle;
mod merge_patch;
mod namespaces;
mod objects;
mod observability;
mod observations;
mod orphans;
mod reconcile;
mod token_journal;
