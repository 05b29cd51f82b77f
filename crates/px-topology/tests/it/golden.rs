//! Rendering each example spec must give exactly the reviewed files in
//! `fixtures/golden/<mode>/`. After an intended change, regenerate with
//! `PXFA_UPDATE_GOLDEN=1 cargo test -p px-topology --test it golden` and review the diff.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use px_topology::{ArrayFacts, RenderOptions, render, write_dir};

fn golden_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/golden")
}

/// Every file under `dir`, relative path -> bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    let a = String::from_utf8_lossy(a);
    let b = String::from_utf8_lossy(b);
    for (i, (la, lb)) in a.lines().zip(b.lines()).enumerate() {
        if la != lb {
            return format!("line {}:\n  rendered: {la}\n  golden:   {lb}", i + 1);
        }
    }
    format!(
        "lengths differ ({} vs {} lines)",
        a.lines().count(),
        b.lines().count()
    )
}

#[test]
fn examples_match_golden_files() {
    let update = std::env::var("PXFA_UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let mut problems = Vec::new();
    for (mode, spec) in support::example_specs() {
        let manifests = support::rendered(&spec);
        let tmp = tempfile::tempdir().unwrap();
        write_dir(&manifests, tmp.path()).unwrap();
        let got = tree(tmp.path());
        let golden_dir = golden_root().join(mode);
        if update {
            if golden_dir.exists() {
                std::fs::remove_dir_all(&golden_dir).unwrap();
            }
            for (rel, bytes) in &got {
                let p = golden_dir.join(rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, bytes).unwrap();
            }
            continue;
        }
        let want = tree(&golden_dir);
        if want.is_empty() {
            problems.push(format!(
                "{mode}: no golden files in {}; run with PXFA_UPDATE_GOLDEN=1",
                golden_dir.display()
            ));
            continue;
        }
        for rel in want.keys().filter(|k| !got.contains_key(*k)) {
            problems.push(format!("{mode}: {rel} is golden but no longer rendered"));
        }
        for (rel, bytes) in &got {
            match want.get(rel) {
                None => problems.push(format!("{mode}: {rel} is rendered but not golden")),
                Some(w) if w != bytes => problems.push(format!(
                    "{mode}: {rel} differs, {}",
                    first_difference(bytes, w)
                )),
                Some(_) => {}
            }
        }
    }
    assert!(
        problems.is_empty(),
        "rendered output differs from fixtures/golden (PXFA_UPDATE_GOLDEN=1 to accept):\n{}",
        problems.join("\n")
    );
}

#[test]
fn rendering_twice_gives_the_same_bytes() {
    for (mode, spec) in support::example_specs() {
        let sizing = support::sizing(&spec);
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let m1 = render(
            &spec,
            &sizing,
            &ArrayFacts::default(),
            RenderOptions::default(),
        )
        .unwrap();
        let m2 = render(
            &spec,
            &sizing,
            &ArrayFacts::default(),
            RenderOptions::default(),
        )
        .unwrap();
        write_dir(&m1, a.path()).unwrap();
        write_dir(&m2, b.path()).unwrap();
        assert_eq!(tree(a.path()), tree(b.path()), "{mode}");
    }
}

#[test]
fn every_written_file_parses_back_to_its_manifest() {
    for (mode, spec) in support::example_specs() {
        let manifests = support::rendered(&spec);
        let tmp = tempfile::tempdir().unwrap();
        write_dir(&manifests, tmp.path()).unwrap();
        for m in &manifests {
            let path = tmp.path().join(m.cluster.dir_name()).join(&m.file_name);
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.starts_with("# Apply to: "),
                "{mode}: {}",
                path.display()
            );
            let back: serde_json::Value = serde_saphyr::from_str(&text)
                .unwrap_or_else(|e| panic!("{mode}: {} does not parse: {e}", path.display()));
            assert_eq!(
                back,
                m.body,
                "{mode}: {} does not round-trip",
                path.display()
            );
        }
    }
}
