//! Dependent rounds on the wire: `observe` and `apply` through the REST client and
//! the HTTPS simulator, counted by the simulator's request log
//! ([`flasharray_mock::sim::critical_path_depth`]).

use std::time::Duration;

use flasharray::Size;
use flasharray::rest::RestArray;
use flasharray_mock::MockArray;
use flasharray_mock::sim::{RunningSim, SimConfig, Simulator, critical_path_depth};
use px_topology::plan::{PlanOptions, observe, plan};

use crate::support::tenant::{TENANT, array, converge, desired, tenant_state};

const TOKEN: &str = "wire-test-token-4f1c";

async fn serve(mock: &MockArray) -> (RunningSim, RestArray) {
    let mut cfg = SimConfig::new(TOKEN.into());
    // Overlapping requests must overlap in time for the depth to see them as one round.
    cfg.http_latency = Duration::from_millis(5);
    let sim = Simulator::start(mock.clone(), cfg).await.unwrap();
    let rest = RestArray::builder(sim.url())
        .api_token(TOKEN.into())
        .ca_pem(sim.cert_pem().as_bytes().to_vec())
        .build()
        .unwrap();
    (sim, rest)
}

#[tokio::test]
async fn fresh_observe_is_one_round_after_version_and_login() {
    let mock = array();
    let (sim, rest) = serve(&mock).await;
    let d = tenant_state();
    let obs = observe(&rest, &d).await.unwrap();
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
    observe(&rest, &d).await.unwrap();
    sim.reset_stats();
    let obs = observe(&rest, &d).await.unwrap();
    assert_eq!(obs.rounds, 1);
    assert!(!obs.connections.is_empty());
    assert_eq!(critical_path_depth(&sim.request_log()), 1);
    let p = plan(&d, &obs, &PlanOptions::default());
    assert!(!p.has_changes(), "{}", p.to_text(false));
}

#[tokio::test]
async fn orphans_cost_one_more_round() {
    let mock = array();
    converge(&mock, &desired(TENANT, 3, Size::gib(512))).await;
    let (sim, rest) = serve(&mock).await;
    let smaller = desired(TENANT, 2, Size::gib(512));
    observe(&rest, &smaller).await.unwrap();
    sim.reset_stats();
    let obs = observe(&rest, &smaller).await.unwrap();
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
