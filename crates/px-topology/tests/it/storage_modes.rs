//! The storage mode is an extension point: outside a few exhaustive tables, code asks
//! a mode what it does (`mode.needs_token()`, `spec/mode.rs`) and never compares it
//! with a variant, so that a fourth mode is a compile error everywhere it matters
//! instead of silently taking the `else` branch.
//!
//! The workspace's non-test sources (every crate's `src/`, comment lines, inline
//! `#[cfg(test)] mod … {}` blocks and `#[cfg(test)] mod …;` files left out), read as
//! text: a `StorageMode` variant (also through a `use … StorageMode as X` alias) may
//! be named only in [`ALLOWED`], and never in a comparison (`==`, `!=`, `matches!`,
//! `if let`) or a glob or braced import of the variants. docs/architecture.md
//! ("Storage modes") counts the same files.

use std::path::{Path, PathBuf};

/// The files that may name a variant, each an exhaustive `match` (no wildcard over
/// the mode), and why the match lives there.
const ALLOWED: &[(&str, &str)] = &[
    (
        "px-topology/src/spec/mode.rs",
        "the capabilities: what each mode does",
    ),
    (
        "px-topology/src/driver/mod.rs",
        "driver_for: the one arm per mode that picks its driver",
    ),
    (
        "px-topology/src/runbook/mod.rs",
        "the day-2 procedures per operation and mode (pieces, unconfirmed)",
    ),
    (
        "px-cluster/src/status/runbook_checks.rs",
        "the checks of those procedures per mode",
    ),
];

const VARIANTS: [&str; 3] = ["CloudDrive", "DirectAccess", "KubevirtCsi"];

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crates/")
        .to_path_buf()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The folder a module file's children live in: `a/mod.rs`, `lib.rs`, `main.rs`
/// keep theirs, `a/b.rs` has `a/b/`.
fn children_dir(file: &Path) -> PathBuf {
    let dir = file.parent().expect("a file has a folder");
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib" | "main") => dir.to_path_buf(),
        Some(stem) => dir.join(stem),
        None => dir.to_path_buf(),
    }
}

/// The files of `#[cfg(test)] mod name;` declarations in `text`.
fn test_module_files(file: &Path, text: &str) -> Vec<PathBuf> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let dir = children_dir(file);
    lines
        .windows(2)
        .filter(|w| w[0] == "#[cfg(test)]")
        .filter_map(|w| w[1].strip_prefix("mod ")?.strip_suffix(';'))
        .flat_map(|name| {
            [
                dir.join(format!("{name}.rs")),
                dir.join(name).join("mod.rs"),
            ]
        })
        .collect()
}

/// The code lines with their 1-based numbers: no comment lines, and nothing from an
/// inline `#[cfg(test)] mod … {` on (by convention a file's last item).
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        let next = lines.get(i + 1).map_or("", |n| n.trim());
        if t == "#[cfg(test)]" && next.starts_with("mod ") && next.ends_with('{') {
            break;
        }
        if !t.starts_with("//") {
            out.push((i + 1, *line));
        }
    }
    out
}

/// `name` in `line` as a whole word followed by `::`.
fn path_uses(line: &str, name: &str) -> Vec<usize> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(&format!("{name}::"))
        .filter(|(at, _)| !line[..*at].ends_with(word))
        .map(|(at, _)| at + name.len() + 2)
        .collect()
}

/// The names `StorageMode` goes by in `lines`: itself and its `as` aliases.
fn mode_names(lines: &[(usize, &str)]) -> Vec<String> {
    let mut names = vec!["StorageMode".to_string()];
    for (_, line) in lines {
        if let Some((_, rest)) = line.split_once("StorageMode as ") {
            let alias: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.push(alias);
        }
    }
    names
}

/// Whether `line` imports the variants (`StorageMode::*`, `StorageMode::{..}`).
fn imports_variants(line: &str, names: &[String]) -> bool {
    names.iter().any(|name| {
        path_uses(line, name)
            .into_iter()
            .any(|after| line[after..].starts_with(['*', '{']))
    })
}

/// Whether `line` names a variant (`StorageMode::CloudDrive`, `S::CloudDrive`).
fn names_variant(line: &str, names: &[String]) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    names.iter().any(|name| {
        path_uses(line, name).into_iter().any(|after| {
            VARIANTS.iter().any(|v| {
                line[after..]
                    .strip_prefix(v)
                    .is_some_and(|r| !r.starts_with(word))
            })
        })
    })
}

/// What is wrong with `line` (`None`: nothing), given whether its file may name
/// variants.
fn problem(line: &str, names: &[String], allowed: bool) -> Option<&'static str> {
    if imports_variants(line, names) {
        return Some("imports the variants: ask a capability of spec/mode.rs");
    }
    if !names_variant(line, names) {
        return None;
    }
    let compares = ["==", "!=", "matches!", "if let ", "while let "]
        .iter()
        .any(|op| line.contains(op));
    if compares {
        Some("compares the mode with a variant: ask a capability of spec/mode.rs")
    } else if !allowed {
        Some("names a mode outside the exhaustive tables: ask a capability of spec/mode.rs")
    } else {
        None
    }
}

#[test]
fn storage_modes_are_asked_never_compared() {
    let root = crates_dir();
    let mut files = Vec::new();
    for krate in std::fs::read_dir(&root).expect("crates/ is readable") {
        walk(&krate.expect("a crate").path().join("src"), &mut files);
    }
    files.sort();
    let texts: Vec<(PathBuf, String)> = files
        .iter()
        .map(|f| (f.clone(), std::fs::read_to_string(f).expect("readable")))
        .collect();
    let test_only: Vec<PathBuf> = texts
        .iter()
        .flat_map(|(f, t)| test_module_files(f, t))
        .collect();
    let mut found = Vec::new();
    let mut naming = Vec::new();
    for (file, text) in texts.iter().filter(|(f, _)| !test_only.contains(f)) {
        let rel = file
            .strip_prefix(&root)
            .expect("under crates/")
            .to_string_lossy()
            .replace('\\', "/");
        let allowed = ALLOWED.iter().any(|(a, _)| *a == rel);
        let lines = code_lines(text);
        let names = mode_names(&lines);
        let mut named = false;
        for (n, line) in &lines {
            named |= names_variant(line, &names);
            if let Some(why) = problem(line, &names, allowed) {
                found.push(format!("crates/{rel}:{n}: {why}\n    {}", line.trim()));
            }
        }
        if named {
            naming.push(rel);
        }
    }
    assert!(
        found.is_empty(),
        "a storage mode compared or named outside spec/mode.rs and the tables of ALLOWED:\n{}",
        found.join("\n")
    );
    let allowed: Vec<String> = ALLOWED.iter().map(|(a, _)| a.to_string()).collect();
    let mut expected = allowed.clone();
    expected.sort();
    assert_eq!(
        naming, expected,
        "ALLOWED (and docs/architecture.md's count) is exactly the files that name a variant"
    );
}

#[test]
fn the_scan_sees_comparisons_aliases_and_imports() {
    let names = mode_names(&[(1, "    use StorageMode as S;")]);
    assert_eq!(names, ["StorageMode", "S"]);
    let flagged = |line: &str, allowed: bool| problem(line, &names, allowed).is_some();
    assert!(flagged("if spec.mode() == StorageMode::CloudDrive {", true));
    assert!(flagged(
        "if mode != crate::spec::StorageMode::DirectAccess {",
        true
    ));
    assert!(flagged("matches!(self, StorageMode::KubevirtCsi)", true));
    assert!(flagged("if let S::DirectAccess = mode {", true));
    assert!(flagged("use px_topology::spec::StorageMode::*;", true));
    assert!(flagged("(O::Grow, S::CloudDrive) => vec![CD_GROW],", false));
    assert!(!flagged("(O::Grow, S::CloudDrive) => vec![CD_GROW],", true));
    assert!(!flagged("if spec.mode().needs_token() {", false));
    assert!(!flagged("fn f(mode: StorageMode) -> bool {", false));
    assert!(!flagged("let x = MyStorageMode::CloudDrive;", false));
}
