//! `pxfa man --out DIR`: a page per command through the binary (the unit test in
//! commands/man.rs checks every page against the clap definitions).

use crate::harness::{pxfa, streams};

#[test]
fn man_writes_a_page_per_command_naming_its_flags() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("man1");
    let out = pxfa()
        .args(["man", "-o", "json", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let pages: Vec<&str> = doc["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    let files = std::fs::read_dir(&out_dir).unwrap().count();
    assert_eq!(files, pages.len());
    for page in [
        "pxfa.1",
        "pxfa-usage.1",
        "pxfa-volume-list.1",
        "pxfa-plan.1",
        "pxfa-man.1",
    ] {
        assert!(pages.contains(&page), "{page} in {pages:?}");
    }
    assert!(!pages.iter().any(|p| p.contains("help")), "{pages:?}");
    let read = |name: &str| {
        std::fs::read_to_string(out_dir.join(name))
            .unwrap()
            .replace("\\-", "-")
    };
    let usage = read("pxfa-usage.1");
    assert!(usage.contains(".TH") && usage.contains("--tenant") && usage.contains("--workers"));
    assert!(read("pxfa-volume-list.1").contains("--tenant"));
    assert!(read("pxfa-sim-serve.1").contains("--admin-password-file"));
}
