//! Dynamic shell completion of object names (`COMPLETE=SHELL pxfa -- pxfa ...`, as the
//! shell glue of `source <(COMPLETE=bash pxfa)` runs it): the names come from the
//! array the config selects, and a failing or silent array completes no names,
//! prints nothing on stderr and ends within the bound.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::harness::{Sim, pxfa};

/// The candidates fish would get for the words (the last one is the word at the
/// cursor), one a line, without the options clap offers beside them.
fn names(cfg: &Path, env: &[(&str, &str)], words: &[&str]) -> (Vec<String>, String, Duration) {
    let mut c = pxfa();
    c.env("PXFA_CONFIG", cfg).env("COMPLETE", "fish");
    for (k, v) in env {
        c.env(k, v);
    }
    let start = Instant::now();
    let out = c.args(["--", "pxfa"]).args(words).output().unwrap();
    let took = start.elapsed();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let names = stdout
        .lines()
        .map(|l| l.split('\t').next().unwrap_or("").to_string())
        .filter(|l| !l.starts_with('-'))
        .collect();
    (
        names,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        took,
    )
}

#[test]
fn names_come_from_the_array_the_profile_selects() {
    let sim = Sim::start();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.yaml");
    std::fs::write(
        &cfg,
        format!(
            "current-profile: https\nprofiles:\n  https:\n    array: {}\n    api-token-file: {}\n    \
             ca-file: {}\n  lab:\n    array: sim\n    sim-state: lab.json\n",
            sim.url,
            sim.token_file.display(),
            sim.cert.display()
        ),
    )
    .unwrap();
    let setup = |args: &[&str]| {
        let out = sim.cmd().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    setup(&[
        "volume", "create", "alpha-1", "alpha-2", "beta-1", "--size", "1GiB",
    ]);
    setup(&["host", "create", "worker-a"]);
    setup(&["hostgroup", "create", "hg-1"]);
    setup(&["pod", "create", "tenant-pod"]);

    // current-profile: the HTTPS simulator, with its token file and CA.
    let (got, err, _) = names(&cfg, &[], &["volume", "get", ""]);
    assert_eq!(got, ["alpha-1", "alpha-2", "beta-1"], "{err}");
    assert!(err.is_empty(), "{err}");
    let (got, _, _) = names(&cfg, &[], &["volume", "destroy", "al"]);
    assert_eq!(got, ["alpha-1", "alpha-2"]);
    let (got, _, _) = names(&cfg, &[], &["connection", "create", "beta-1", "--host", ""]);
    assert_eq!(got, ["worker-a"]);
    let (got, _, _) = names(&cfg, &[], &["hostgroup", "delete", ""]);
    assert_eq!(got, ["hg-1"]);
    let (got, _, _) = names(&cfg, &[], &["pod", "destroy", ""]);
    assert_eq!(got, ["tenant-pod"]);
    // A new name is not completed.
    let (got, _, _) = names(&cfg, &[], &["volume", "create", ""]);
    assert!(got.is_empty(), "{got:?}");

    // PXFA_PROFILE picks another one: the embedded array of a state file, with the
    // tenants its pxfa.io tags name for --tenant.
    let out = pxfa()
        .current_dir(dir.path())
        .args([
            "--array",
            "sim",
            "--sim-state",
            "lab.json",
            "--sim-seed",
            "brownfield",
            "usage",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tenants: Vec<String> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["holder"]["kind"] == "tenant")
        .map(|r| {
            format!(
                "{}/{}",
                r["holder"]["namespace"].as_str().unwrap(),
                r["holder"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert!(!tenants.is_empty(), "{report}");
    let state_before = std::fs::read(dir.path().join("lab.json")).unwrap();
    let (got, err, _) = names(
        &cfg,
        &[("PXFA_PROFILE", "lab")],
        &["volume", "list", "--tenant", ""],
    );
    assert_eq!(got, tenants, "{err}");
    let (got, _, _) = names(&cfg, &[("PXFA_PROFILE", "lab")], &["usage", "--tenant", ""]);
    assert_eq!(got, tenants);
    assert_eq!(
        std::fs::read(dir.path().join("lab.json")).unwrap(),
        state_before,
        "completion never writes the state"
    );

    // The registration script for the shell, and the static scripts still.
    let out = pxfa().env("COMPLETE", "bash").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("COMPLETE=\"bash\""));
    let out = pxfa().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("_pxfa()"));
}

#[test]
fn a_failing_or_silent_array_completes_nothing_quickly_and_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.yaml");
    // An array that accepts connections and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "6f1e0c6a-9d3f-4d10-8bbf-2b8c3e1f0a11\n").unwrap();
    std::fs::write(
        &cfg,
        format!(
            "profiles:\n  silent:\n    array: https://{}\n    api-token-file: {}\n  \
             no-token:\n    array: https://127.0.0.1:1\n    api-token-file: missing.token\n",
            silent.local_addr().unwrap(),
            token.display()
        ),
    )
    .unwrap();
    for env in [
        vec![("PXFA_PROFILE", "silent")],
        vec![("PXFA_PROFILE", "no-token")],
        vec![("PXFA_PROFILE", "not-there")],
        vec![("PUREFA_URL", "https://127.0.0.1:1"), ("PUREFA_API", "t")],
    ] {
        let (got, err, took) = names(&cfg, &env, &["volume", "get", ""]);
        assert!(got.is_empty(), "{env:?}: {got:?}");
        assert!(err.is_empty(), "{env:?}: {err}");
        assert!(took < Duration::from_secs(6), "{env:?}: {took:?}");
    }
    // A malformed config file: the same.
    std::fs::write(&cfg, "profiles: [\n").unwrap();
    let (got, err, _) = names(&cfg, &[("PXFA_PROFILE", "x")], &["volume", "get", ""]);
    assert!(got.is_empty() && err.is_empty(), "{got:?} {err}");
    // COMPLETE set to something that is no shell is not a request: the command runs.
    let out = pxfa()
        .env("COMPLETE", "1")
        .args(["--array", "sim", "volume", "list", "-o", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
}
