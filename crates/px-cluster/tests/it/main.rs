//! px-cluster against an in-process fake Kubernetes API server, one binary.

mod fake_site;
mod support;

mod apply;
mod bindings;
mod crd_rbac;
mod orphans;
mod runbook_checks;
mod site;
mod status;
mod tenant;
mod token;
mod vms;
