//! Files pxfa writes outside an output folder: secrets (API tokens) created with
//! mode 0600 before any byte is written, and the simulator's certificate; each replaced
//! atomically through a new temporary file, never written through a link.

use std::path::Path;

use anyhow::{Context, Result};

/// Writes `bytes` to `path` readable by the owner only. The data goes to a temporary
/// file in the same folder first and is then renamed over `path`, so readers never see
/// half a file and an existing file's looser mode is not inherited.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    write_replacing(path, bytes, 0o600)
}

/// Writes `bytes` to `path` with `mode` the same way: through a new temporary file
/// (never through a link) renamed over `path`, which replaces a link at `path`
/// instead of writing to its target.
pub(crate) fn write_replacing(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    px_topology::files::write_replacing(path, bytes, mode, true)
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn owner_only_even_over_a_readable_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("token");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp file left"
        );
    }
}
