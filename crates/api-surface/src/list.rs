//! The checked-in list (`public-api.txt` beside the crate's `Cargo.toml`) and the comparison.

use std::collections::BTreeSet;
use std::path::Path;

use crate::surface::public_paths;

/// Set to `1`, the check rewrites the list from the source instead of comparing.
pub const UPDATE_VAR: &str = "PXFA_UPDATE_API";

const LIST_FILE: &str = "public-api.txt";

/// Compares the public paths of the crate in `manifest_dir` (library `crate_name`, root
/// `src/lib.rs`) with its `public-api.txt`; with `PXFA_UPDATE_API=1` writes the list instead.
///
/// # Errors
/// The message a failing test prints: the lines added and removed, and how to accept them; or
/// why the source or the list could not be read.
pub fn check(manifest_dir: &Path, crate_name: &str) -> Result<(), String> {
    let update = std::env::var(UPDATE_VAR).is_ok_and(|v| v == "1");
    compare(manifest_dir, crate_name, update)
}

fn compare(manifest_dir: &Path, crate_name: &str, update: bool) -> Result<(), String> {
    let lines =
        public_paths(&manifest_dir.join("src/lib.rs"), crate_name).map_err(|e| e.to_string())?;
    let list_path = manifest_dir.join(LIST_FILE);
    if update {
        return std::fs::write(&list_path, render(crate_name, &lines))
            .map_err(|e| format!("cannot write {}: {e}", list_path.display()));
    }
    let checked_in = std::fs::read_to_string(&list_path).unwrap_or_default();
    let expected: BTreeSet<&str> = checked_in
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let actual: BTreeSet<&str> = lines.iter().map(String::as_str).collect();
    if expected == actual {
        return Ok(());
    }
    let mut message = format!(
        "the public API of {crate_name} differs from {}:\n",
        list_path.display()
    );
    for added in actual.difference(&expected) {
        message.push_str(&format!("+ {added}\n"));
    }
    for removed in expected.difference(&actual) {
        message.push_str(&format!("- {removed}\n"));
    }
    message.push_str(&format!(
        "If the change is meant, rewrite the list with {UPDATE_VAR}=1 and commit it \
         (cargo test -p <package> --test public_api)."
    ));
    Err(message)
}

/// [`check`] for a test: panics with its message.
///
/// ```no_run
/// api_surface::assert_public_api(env!("CARGO_MANIFEST_DIR"), "px_topology");
/// ```
///
/// # Panics
/// When [`check`] fails.
pub fn assert_public_api(manifest_dir: &str, crate_name: &str) {
    if let Err(message) = check(Path::new(manifest_dir), crate_name) {
        panic!("{message}");
    }
}

fn render(crate_name: &str, lines: &[String]) -> String {
    let mut text = format!(
        "# The public API of {crate_name}, checked by tests/public_api.rs (crates/api-surface).\n\
         # Rewrite with {UPDATE_VAR}=1 cargo test --test public_api; a change here is a change to the API.\n"
    );
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_dir() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo")
    }

    #[test]
    fn the_checked_in_fixture_list_matches() {
        compare(&fixture_dir(), "demo", false).unwrap();
    }

    #[test]
    fn a_mismatch_names_the_added_and_removed_lines_and_the_way_to_accept_them() {
        let dir = std::env::temp_dir().join(format!("api-surface-list-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("src/lib.rs"),
            "pub fn kept() {}\npub fn added() {}\n",
        )
        .unwrap();
        std::fs::write(dir.join(LIST_FILE), "# header\nfn x::kept\nfn x::removed\n").unwrap();
        let message = compare(&dir, "x", false).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(message.contains("+ fn x::added\n"), "{message}");
        assert!(message.contains("- fn x::removed\n"), "{message}");
        assert!(!message.contains("x::kept"), "{message}");
        assert!(message.contains(UPDATE_VAR), "{message}");
    }
}
