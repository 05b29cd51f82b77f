//! px-cluster against an in-process fake Kubernetes API server, one binary.
// A test scenario reads top to bottom; the 120-line rule is for library code.
#![allow(clippy::too_many_lines)]

mod fake_site;
mod support;

mod apply;
mod bindings;
mod bounds;
mod crd_rbac;
mod operator_wait;
mod orphans;
mod runbook_checks;
mod site;
mod status;
mod tenant;
mod tenant_clusters;
mod token;
mod vms;
