//! The mock's state in a file: what `pxfa sim serve --state` and `pxfa --array sim
//! --sim-state` keep between runs, and what the simulator rewrites after every change
//! (`flasharray_sim::SimConfig::state_file`).
//!
//! The file is the JSON of [`MockArray::snapshot`] and holds the simulated admins'
//! API tokens, so it is written owner-only (mode 0600) and atomically: a temporary
//! file in the same folder, created 0600, written and synced, renamed over the old
//! one, and the folder synced, so that readers (and a restart after a crash) see
//! either the old state or the new one, never half a file.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{MockArray, MockState};

/// Saves `mock`'s state to `path` (see the module text) and returns the
/// [`MockArray::generation`] it holds: every write counted up to that number is in
/// the file (writes made while saving may be in it too).
pub fn save_state(mock: &MockArray, path: &Path) -> io::Result<u64> {
    // Read before the snapshot: a write is counted only once it is applied, so
    // everything counted so far is in the snapshot taken next.
    let generation = mock.generation();
    let json = serde_json::to_vec_pretty(&mock.snapshot()).map_err(io::Error::other)?;
    write_private(path, &json)?;
    Ok(generation)
}

/// Reads a state file written by [`save_state`]; `Ok(None)` when there is no file.
pub fn load_state(path: &Path) -> io::Result<Option<MockState>> {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    serde_json::from_slice(&text)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Writes `bytes` to `path`, readable by the owner only, atomically (see the module
/// text). An existing file's looser mode is not inherited: the file is replaced.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = temp_path(dir, path)?;
    let result = write_and_rename(&tmp, path, bytes).and_then(|()| sync_dir(dir));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// `.NAME.sim-tmp-PID-N` next to `path`: unique within the process (saves may
/// overlap) and apart from the CLI's own `.NAME.tmp-PID`.
fn temp_path(dir: &Path, path: &Path) -> io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a file path", path.display()),
        )
    })?;
    Ok(dir.join(format!(
        ".{}.sim-tmp-{}-{}",
        name.to_string_lossy(),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )))
}

fn write_and_rename(tmp: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(tmp, path)
}

/// The rename is durable only once the folder's entry is on disk.
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use flasharray::models::VolumePost;
    use flasharray::{FlashArray, ListParams, VolumeName};

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "flasharray-mock-{tag}-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[tokio::test]
    async fn saved_state_loads_back_owner_only_with_no_temp_file_left() {
        let dir = temp_dir("state-file");
        let path = dir.join("state.json");
        std::fs::write(&path, "old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let mock = MockArray::new();
        mock.create_volumes(
            &[VolumeName::new("v1").unwrap()],
            &VolumePost::default().with_provisioned(1 << 20),
        )
        .await
        .unwrap();
        let saved = save_state(&mock, &path).unwrap();
        assert_eq!(saved, mock.generation());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let back = MockArray::new();
        back.restore(load_state(&path).unwrap().unwrap());
        let names: Vec<String> = back
            .list_volumes(&ListParams::all())
            .await
            .unwrap()
            .into_iter()
            .map(|v| v.name)
            .collect();
        assert_eq!(names, ["v1"]);
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(load_state(&dir.join("none.json")).unwrap().is_none());
        std::fs::write(&path, "{").unwrap();
        assert_eq!(
            load_state(&path).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
