//! Issue #16: the logout is off the critical path. `apply` starts it as soon as the
//! converge returned (before the report and the manifests), and the process exits at
//! most about a quarter second after its work even when the array never answers the
//! logout. The simulator runs in this process so that its request log can be read.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use flasharray_mock::MockArray;
use flasharray_sim::{RequestRecord, RunningSim, SimConfig, Simulator};

use crate::harness::{direct_access_spec, pxfa};

const TOKEN: &str = "pxfa-e2e-logout-token-7c1a";

async fn sim(logout_latency: Duration, dir: &Path) -> RunningSim {
    let cfg = SimConfig {
        // Every request costs a little, so that requests in flight overlap visibly.
        http_latency: Duration::from_millis(20),
        logout_latency,
        ..SimConfig::new(TOKEN.into())
    };
    let mock = MockArray::builder().admin("pxfa-tenant-demo").build();
    let sim = Simulator::start(mock, cfg).await.unwrap();
    std::fs::write(dir.join("cert.pem"), sim.cert_pem()).unwrap();
    std::fs::write(dir.join("token"), format!("{TOKEN}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.join("token"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
    }
    sim
}

/// `pxfa apply --yes --out DIR/out -vv` against `sim`, timed.
async fn apply(sim: &RunningSim, dir: &Path) -> (Output, Duration) {
    let mut cmd = pxfa();
    cmd.arg("--array")
        .arg(sim.url())
        .arg("--ca-file")
        .arg(dir.join("cert.pem"))
        .arg("--api-token-file")
        .arg(dir.join("token"))
        .args(["--yes", "-vv", "apply", "-f"])
        .arg(direct_access_spec())
        .arg("--allow-endpoint-mismatch")
        .arg("--out")
        .arg(dir.join("out"));
    let started = Instant::now();
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "apply failed:\n{stderr}");
    assert!(!stderr.contains(TOKEN), "the token leaked:\n{stderr}");
    (out, took)
}

fn is_logout(r: &RequestRecord) -> bool {
    r.method == "POST" && r.path.ends_with("/logout")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_logs_out_after_its_last_array_call_and_before_the_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim(Duration::ZERO, dir.path()).await;
    let (out, _) = apply(&sim, dir.path()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);

    let log = sim.request_log();
    let logouts: Vec<&RequestRecord> = log.iter().filter(|r| is_logout(r)).collect();
    assert_eq!(logouts.len(), 1, "{log:#?}");
    let last_call = log
        .iter()
        .filter(|r| !is_logout(r))
        .map(|r| r.end)
        .max()
        .unwrap();
    assert!(
        logouts[0].start >= last_call,
        "the logout overlapped an array call: {log:#?}"
    );
    // The client started the logout before it wrote the manifests (its own log
    // order), and the array saw it while the process was still running.
    let begun = stderr
        .find("logging out in the background")
        .unwrap_or_else(|| panic!("no background logout in:\n{stderr}"));
    let wrote = stderr
        .find("manifest file(s) to")
        .unwrap_or_else(|| panic!("no manifests written:\n{stderr}"));
    assert!(begun < wrote, "logout began after the manifests:\n{stderr}");
    assert!(dir.path().join("out").read_dir().unwrap().next().is_some());
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_logout_delays_the_exit_by_a_quarter_second_at_most() {
    let dir = tempfile::tempdir().unwrap();
    // The same apply against an array that answers logouts at once, for the
    // baseline, and against one that holds every logout answer for 5 s.
    let quick = sim(Duration::ZERO, dir.path()).await;
    let (_, baseline) = apply(&quick, dir.path()).await;
    quick.shutdown().await;
    std::fs::remove_dir_all(dir.path().join("out")).unwrap();

    let stalled = sim(Duration::from_secs(5), dir.path()).await;
    let (out, took) = apply(&stalled, dir.path()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("logout still under way at exit"),
        "the stalled logout was not left behind:\n{stderr}"
    );
    // 250 ms of waiting, plus this loaded machine's noise; waiting for the answer
    // would take 5 s.
    assert!(
        took < baseline + Duration::from_millis(1500),
        "exit took {took:?} against {baseline:?} without the stall"
    );
    assert_eq!(stalled.stats().logouts, 0, "no logout was answered yet");
    stalled.shutdown().await;
}
