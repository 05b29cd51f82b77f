//! `SimConfig::state_file`: every answered write is in the file before its answer
//! leaves, so a simulator killed right after loses nothing (issue #28).

use std::path::{Path, PathBuf};

use flasharray::{FlashArray, ListParams};
use flasharray_mock::MockArray;
use flasharray_mock::state_file::load_state;
use flasharray_sim::{SimConfig, SimError, Simulator};
use serde_json::json;

use crate::support::https::{Sim, start_with};

/// A fresh folder under the system's temp folder, removed by the test.
fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pxfa-sim-state-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The array a restart would come back with: a fresh mock restored from the file.
fn reloaded(path: &Path) -> MockArray {
    let mock = MockArray::new();
    mock.restore(load_state(path).unwrap().expect("the state file exists"));
    mock
}

async fn volume_names(mock: &MockArray) -> Vec<String> {
    let mut names: Vec<String> = mock
        .list_volumes(&ListParams::all())
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.name)
        .collect();
    names.sort();
    names
}

async fn with_state(path: &Path) -> Sim {
    let path = path.to_path_buf();
    start_with(MockArray::new(), move |c| c.state_file = Some(path)).await
}

#[tokio::test]
async fn every_answered_write_is_in_the_file_while_the_simulator_runs() {
    let dir = temp_dir();
    let path = dir.join("state.json");
    let s = with_state(&path).await;
    // Written at start, owner-only (it holds API tokens).
    assert!(volume_names(&reloaded(&path)).await.is_empty());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    let t = s.login().await;
    s.post_ok(&t, "/volumes?names=v1", json!({"provisioned": 1 << 20}))
        .await;
    // Read while the simulator still runs: the answer came, so the file has it.
    assert_eq!(volume_names(&reloaded(&path)).await, ["v1"]);

    // Writes that bypass the FlashArray trait (array settings, local admins) too.
    let r = s
        .patch(&t, "/arrays", json!({"name": "renamed-array"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let r = s
        .post(
            &t,
            "/admins?names=alice",
            json!({"role": {"name": "readonly"}, "password": "pw-alice-1"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let saved = std::fs::read_to_string(&path).unwrap();
    assert!(saved.contains("renamed-array"), "array name not saved");
    assert!(saved.contains("alice"), "admin not saved");
    assert!(
        !saved.contains("pw-alice-1"),
        "a password reached the state file"
    );

    // Concurrent writers: each answer implies its write is saved.
    let creates = (0..12).map(|i| {
        let (s, t) = (&s, &t);
        async move {
            s.post_ok(
                t,
                &format!("/volumes?names=c{i:02}"),
                json!({"provisioned": 1 << 20}),
            )
            .await;
        }
    });
    futures_util::future::join_all(creates).await;
    let names = volume_names(&reloaded(&path)).await;
    assert_eq!(names.len(), 13, "{names:?}");

    // A refused write changes nothing, and reads do not rewrite the file.
    let before = std::fs::metadata(&path).unwrap().modified().unwrap();
    let r = s
        .post(&t, "/volumes?names=v1", json!({"provisioned": 1 << 20}))
        .await;
    assert_eq!(r.status, 400, "{}", r.raw);
    assert_eq!(s.get(&t, "/volumes").await.status, 200);
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        before
    );

    // Stopped without a clean shutdown (no final save): nothing is lost, and no
    // temporary file is left beside it.
    drop(s);
    assert_eq!(volume_names(&reloaded(&path)).await.len(), 13);
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files, ["state.json"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn shutdown_saves_changes_made_outside_requests() {
    let dir = temp_dir();
    let path = dir.join("state.json");
    let s = with_state(&path).await;
    s.array.add_admin("bob");
    s.array
        .create_volumes(
            &[flasharray::VolumeName::new("direct").unwrap()],
            &flasharray::models::VolumePost::default().with_provisioned(1 << 20),
        )
        .await
        .unwrap();
    s.sim.shutdown().await;
    assert_eq!(volume_names(&reloaded(&path)).await, ["direct"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_write_that_cannot_be_saved_is_not_answered_as_done() {
    let dir = temp_dir();
    let path = dir.join("state.json");
    let s = with_state(&path).await;
    let t = s.login().await;
    // The folder goes away (root ignores permissions, so remove it).
    std::fs::remove_dir_all(&dir).unwrap();
    let r = s
        .post(&t, "/volumes?names=v1", json!({"provisioned": 1 << 20}))
        .await;
    assert_eq!(r.status, 500, "{}", r.raw);
    let message = r.body["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("could not save its state file"),
        "{message}"
    );
    // Reads are still answered.
    assert_eq!(s.get(&t, "/volumes").await.status, 200);
    // Once the folder is back, the next request saves everything.
    std::fs::create_dir_all(&dir).unwrap();
    assert_eq!(s.get(&t, "/volumes").await.status, 200);
    assert_eq!(volume_names(&reloaded(&path)).await, ["v1"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn an_unwritable_state_file_is_refused_at_start() {
    let dir = temp_dir();
    let path = dir.join("missing-folder").join("state.json");
    let mut cfg = SimConfig::new("tok-for-state-test".into());
    cfg.state_file = Some(path.clone());
    let e = Simulator::start(MockArray::new(), cfg).await.unwrap_err();
    assert!(
        matches!(&e, SimError::StateFile { path: p, .. } if *p == path),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
