//! The Kubernetes half against a real kube-apiserver with etcd (design: test tier 4):
//! the server `scripts/kube-apiserver.sh` builds from pinned Go modules, with the
//! upstream CRDs of `../shared/schemas` (and `more/`), pxfa's own CRD and the
//! KubeVirt stand-in loaded, RBAC and the default admission chain on. One server for
//! this test binary (see `harness`); the tests skip loudly without Go.

mod controller;
mod crd;
mod examples;
mod harness;
mod olm;
mod orphans;
mod plan;
mod restart;
mod site;
mod status;
mod token_restart;

// Its own `#![allow(dead_code)]`: this binary uses part of it.
#[allow(unreachable_pub)]
#[path = "../fake_sites/mod.rs"]
mod fake_sites;
