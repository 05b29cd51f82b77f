//! Dependent rounds on the wire: `observe` and `apply` through the REST client and
//! the HTTPS simulator, counted by the simulator's request log
//! ([`flasharray_sim::critical_path_depth`]).

use std::time::Duration;

use flasharray::Size;
use flasharray::rest::RestArray;
use flasharray_mock::MockArray;
use flasharray_sim::{RunningSim, SimConfig, Simulator, critical_path_depth};
use px_topology::{ApplyOptions, PlanOptions, RealmGateError};

use crate::support::tenant::{
    TENANT, apply, array, converge, desired, observe, quiet, realm_gate, tenant_state,
};

const TOKEN: &str = "wire-test-token-4f1c";

async fn serve(mock: &MockArray) -> (RunningSim, RestArray) {
    serve_at(mock, None).await
}

/// [`serve`], with the client pinned to a REST version.
async fn serve_at(mock: &MockArray, version: Option<&str>) -> (RunningSim, RestArray) {
    let mut cfg = SimConfig::new(TOKEN.into());
    // Overlapping requests must overlap in time for the depth to see them as one round.
    cfg.http_latency = Duration::from_millis(5);
    let sim = Simulator::start(mock.clone(), cfg).await.unwrap();
    let mut builder = RestArray::builder(sim.url())
        .api_token(TOKEN.into())
        .ca_pem(sim.cert_pem().as_bytes().to_vec());
    if let Some(v) = version {
        builder = builder.api_version(v);
    }
    (sim, builder.build().unwrap())
}

#[tokio::test]
async fn fresh_observe_is_one_round_after_version_and_login() {
    let mock = array();
    let (sim, rest) = serve(&mock).await;
    let d = tenant_state();
    let observation = observe(&rest, &d).await;
    let obs = observation.observed();
    assert_eq!(obs.rounds, 1);
    let log = sim.request_log();
    // version, login, then every read at once: no second try for missing names.
    assert_eq!(critical_path_depth(&log), 3, "{log:#?}");
    assert!(log.iter().all(|r| r.status == 200), "{log:#?}");
}

#[tokio::test]
async fn converged_observe_is_one_round() {
    let mock = array();
    let d = tenant_state();
    converge(&mock, &d).await;
    let (sim, rest) = serve(&mock).await;
    observe(&rest, &d).await;
    sim.reset_stats();
    let observation = observe(&rest, &d).await;
    let obs = observation.observed();
    assert_eq!(obs.rounds, 1);
    assert!(!obs.connections.is_empty());
    assert_eq!(critical_path_depth(&sim.request_log()), 1);
    let staged = observation.plan(&PlanOptions::default());
    let p = staged.plan();
    assert!(!p.has_changes(), "{}", p.to_text(false));
}

#[tokio::test]
async fn orphans_cost_one_more_round() {
    let mock = array();
    converge(&mock, &desired(TENANT, 3, Size::gib(512))).await;
    let (sim, rest) = serve(&mock).await;
    let smaller = desired(TENANT, 2, Size::gib(512));
    observe(&rest, &smaller).await;
    sim.reset_stats();
    let observation = observe(&rest, &smaller).await;
    let obs = observation.observed();
    assert_eq!(obs.rounds, 2);
    assert_eq!(obs.orphans.volumes.len(), 3);
    // The orphans' connections come in the same round as the orphans.
    let orphan = obs.orphans.volumes[0].to_ascii_lowercase();
    assert!(
        obs.connections
            .iter()
            .any(|c| c.volume.name.as_deref().map(str::to_ascii_lowercase) == Some(orphan.clone())),
        "{:?}",
        obs.connections
    );
    assert_eq!(critical_path_depth(&sim.request_log()), 2);
}

/// A fresh apply through the client and simulator; returns the request log as
/// `METHOD path` lines and the depth of the log.
async fn fresh_apply_at(version: Option<&str>, mock: &MockArray) -> (Vec<String>, usize) {
    let (sim, rest) = serve_at(mock, version).await;
    let d = tenant_state();
    let staged = observe(&rest, &d).await.plan(&PlanOptions::default());
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    let log = sim.request_log();
    let depth = critical_path_depth(&log);
    let lines = log
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    // Converged whatever the path: nothing left to do.
    let again = observe(&rest, &d).await.plan(&PlanOptions::default());
    let again = again.plan();
    assert!(!again.has_changes(), "{}", again.to_text(false));
    (lines, depth)
}

#[tokio::test]
async fn fresh_apply_creates_volumes_with_their_tags_in_one_batch() {
    let mock = array();
    let (lines, depth) = fresh_apply_at(None, &mock).await;
    let batches = lines
        .iter()
        .filter(|l| l.ends_with("/volumes/batch"))
        .count();
    assert_eq!(batches, 1, "{lines:#?}");
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("PUT") && l.contains("/volumes/tags")),
        "no volume tag round: {lines:#?}"
    );
    // version, login, read, pod/hosts, volumes/members, connections.
    assert_eq!(depth, 6, "{lines:#?}");
}

#[tokio::test]
async fn below_2_39_a_tenant_pod_is_refused_before_anything_is_written() {
    // pxfa marks its pod with tags, which arrays have from REST 2.39 (`/pods/tags`
    // is in py-pure-client's FA_2_39 client, not FA_2_38): at 2.31 the tenant is
    // refused before any read of its objects or any write. The per-size volume
    // creation below 2.32 is the client's (flasharray-mock tests/it/http/versions.rs).
    let mock = array();
    let (sim, rest) = serve_at(&mock, Some("2.31")).await;
    let d = tenant_state();
    let e = realm_gate(&rest, &d).await.unwrap_err();
    assert!(
        matches!(
            e,
            RealmGateError::TagsUnsupported {
                kind: "pods",
                need: 39,
                found: 31
            }
        ),
        "{e:?}"
    );
    let log = sim.request_log();
    assert!(
        log.iter()
            .all(|r| r.method == "GET" || r.path.ends_with("/login")),
        "{log:#?}"
    );
    assert!(log.iter().all(|r| !r.path.contains("/pods")), "{log:#?}");
}
