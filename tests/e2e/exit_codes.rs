//! One exit-code table for every command (docs/cli.md, "Exit codes"): 0 ok, 1 error,
//! 2 usage or invalid input with nothing sent, 3 looked and found something, 4 some
//! changes failed. Each command's codes through the binary, and the cases where
//! commands used to disagree.

use std::path::{Path, PathBuf};

use crate::harness::{Sim, direct_access_spec, example, import_host_group_spec, pxfa, streams};

/// `pxfa --array sim --sim-state STATE ARGS`: the exit code and both streams.
fn sim(state: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(state)
        .args(args)
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    (out.status.code(), stdout, stderr)
}

/// Asserts `pxfa --array sim ... ARGS` exits `code`; returns stdout and stderr.
#[track_caller]
fn expect(state: &Path, args: &[&str], code: i32) -> (String, String) {
    let (got, stdout, stderr) = sim(state, args);
    assert_eq!(
        got,
        Some(code),
        "pxfa {args:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    (stdout, stderr)
}

/// `pxfa ARGS` against an address where nothing answers, with no retries: a command
/// that sends anything fails with 1 ("did not answer"); 2 proves it sent nothing.
fn unreachable(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let token = dir.join("token");
    std::fs::write(&token, "not-a-real-token\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let out = pxfa()
        .args(["--array", "https://127.0.0.1:1", "--retries", "0"])
        .arg("--api-token-file")
        .arg(&token)
        .args(args)
        .output()
        .unwrap();
    let (_, stderr) = streams(&out);
    (out.status.code(), stderr)
}

fn spec() -> String {
    direct_access_spec().to_str().unwrap().to_string()
}

#[test]
fn resource_commands() {
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("state.json");
    let s = st.as_path();
    // volume: ok, a bare decimal unit refused with both readings, already exists.
    expect(s, &["volume", "create", "v1", "--size", "10GiB"], 0);
    let (_, err) = expect(s, &["volume", "create", "v2", "--size", "10G"], 2);
    assert!(err.contains("10GiB") && err.contains("10GB"), "{err}");
    let (_, err) = expect(s, &["volume", "resize", "v1", "--size", "4T"], 2);
    assert!(err.contains("4TiB") && err.contains("4TB"), "{err}");
    let (_, err) = expect(s, &["volume", "create", "v1", "--size", "1GiB"], 1);
    assert!(
        err.contains("already exists") && err.contains("hint:"),
        "{err}"
    );
    expect(s, &["volume", "list", "--filter", "name='v*'"], 0);
    expect(s, &["volume", "destroy", "v1"], 2); // no terminal, no --yes
    // pod: the quota is a size flag too.
    let (_, err) = expect(s, &["pod", "create", "p1", "--quota", "1T"], 2);
    assert!(err.contains("1TiB"), "{err}");
    expect(s, &["pod", "create", "p1", "--quota", "1TiB"], 0);
    // host and hostgroup.
    expect(s, &["hostgroup", "create", "g1"], 0);
    expect(s, &["hostgroup", "create", "bad name"], 2);
    expect(s, &["host", "create", "h1", "--wwn", "2100F4C7AA002706"], 0);
    expect(s, &["host", "create", "h 2"], 2);
    // connection.
    expect(s, &["connection", "create", "--host", "h1", "v1"], 0);
    expect(s, &["connection", "delete", "--host", "h1", "v1"], 2);
    expect(s, &["connection", "create", "--host", "h1", "v1"], 1);
    // token, array.
    expect(s, &["token", "list"], 0);
    expect(s, &["token", "delete", "pxfa-*"], 2);
    let (out, _) = expect(s, &["array", "info"], 0);
    assert!(out.contains("SafeMode"), "{out}");
    expect(s, &["array", "space", "-o", "name"], 2);
    // Unknown flags are usage errors.
    expect(s, &["volume", "list", "--no-such-flag"], 2);
}

#[test]
fn a_bad_filter_is_refused_before_the_array_is_called() {
    let dir = tempfile::tempdir().unwrap();
    for list in ["volume", "host", "hostgroup", "pod"] {
        let (code, err) = unreachable(dir.path(), &[list, "list", "--filter", "name=("]);
        assert_eq!(code, Some(2), "{list}: {err}");
        assert!(
            err.contains("--filter") && err.contains("Nothing was sent"),
            "{err}"
        );
    }
    // A good filter is sent (and here fails to arrive: 1).
    let (code, err) = unreachable(dir.path(), &["volume", "list", "--filter", "name='a*'"]);
    assert_eq!(code, Some(1), "{err}");
}

#[test]
fn host_create_checks_the_group_first() {
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("state.json");
    let s = st.as_path();
    let (_, err) = expect(s, &["host", "create", "h1", "--hostgroup", "missing"], 2);
    assert!(
        err.contains("host group missing does not exist") && err.contains("hostgroup create"),
        "{err}"
    );
    let (out, _) = expect(s, &["host", "list", "-o", "json"], 0);
    assert_eq!(out.trim(), "[]", "nothing may be created");
    expect(s, &["hostgroup", "create", "g1"], 0);
    expect(s, &["host", "create", "h1", "--hostgroup", "g1"], 0);
    let (_, err) = expect(s, &["host", "create", "h1"], 1);
    assert!(
        err.contains("cannot create host h1") && err.contains("pxfa host get h1"),
        "{err}"
    );
}

#[test]
fn spec_commands() {
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("state.json");
    let s = st.as_path();
    let spec = spec();
    let missing = dir.path().join("missing.yaml");
    let missing = missing.to_str().unwrap();
    let out_dir = dir.path().join("out");
    let out_dir = out_dir.to_str().unwrap();
    expect(s, &["size", "-f", &spec], 0);
    expect(s, &["size", "-f", missing], 2);
    expect(s, &["render", "-f", &spec, "--out", out_dir], 0);
    expect(s, &["render", "-f", missing, "--out", out_dir], 2);
    expect(s, &["lint", "-f", &spec], 0);
    expect(s, &["runbook", "grow", "-f", &spec], 0);
    expect(
        s,
        &[
            "runbook",
            "grow",
            "-f",
            example("tenant-kubevirt-csi.yaml").to_str().unwrap(),
        ],
        2,
    );
    expect(s, &["crd"], 0);
    expect(s, &["completions", "bash"], 0);
    expect(s, &["completions", "nosh"], 2);
}

#[test]
fn tenant_lifecycle() {
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("state.json");
    let s = st.as_path();
    let spec = spec();
    // Nothing applied yet: plan --destroy agrees with destroy (0, nothing to do).
    let (_, err) = expect(s, &["plan", "--destroy", "-f", &spec], 0);
    assert!(err.contains("nothing on"), "{err}");
    expect(
        s,
        &["plan", "--destroy", "-f", &spec, "--detailed-exitcode"],
        0,
    );
    expect(s, &["destroy", "-f", &spec, "--yes"], 0);
    // plan: 3 with changes, 0 without.
    expect(s, &["plan", "-f", &spec], 0);
    expect(s, &["plan", "-f", &spec, "--detailed-exitcode"], 3);
    // status before the apply: problems, 3.
    let (out, _) = expect(s, &["status", "-f", &spec], 3);
    assert!(out.contains("problems found"), "{out}");
    expect(s, &["apply", "-f", &spec], 2); // no terminal, no --yes
    let (_, err) = expect(s, &["apply", "-f", &spec, "--yes"], 0);
    assert!(err.contains("array only"), "{err}");
    expect(s, &["plan", "-f", &spec, "--detailed-exitcode"], 0);
    let (out, _) = expect(s, &["status", "-f", &spec], 0);
    assert!(out.trim_end().ends_with("healthy"), "{out}");
    expect(s, &["claim", "-f", &spec, "--dry-run"], 0);
    expect(s, &["orphans", "-f", &spec], 0);
    // A destroyed drive: status finds it (3), plan sees the change (3).
    let (vols, _) = expect(s, &["volume", "list", "-o", "name"], 0);
    let drive = vols
        .lines()
        .find_map(|l| l.strip_prefix("volume/"))
        .unwrap()
        .to_string();
    expect(s, &["volume", "destroy", &drive, "--yes"], 0);
    let (out, _) = expect(s, &["status", "-f", &spec], 3);
    assert!(
        out.contains("!!") && out.contains("problems found"),
        "{out}"
    );
    expect(s, &["plan", "-f", &spec, "--detailed-exitcode"], 3);
    expect(
        s,
        &[
            "plan",
            "--destroy",
            "--destroy-dynamic-drives",
            "-f",
            &spec,
            "--detailed-exitcode",
        ],
        3,
    );
    expect(
        s,
        &["destroy", "--destroy-dynamic-drives", "-f", &spec, "--yes"],
        0,
    );
}

/// A kubeconfig that does not load is bad input, 2, in every command that reads one,
/// and it is found before anything is sent: the array is never called.
#[test]
fn a_bad_kubeconfig_is_2_with_nothing_sent() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.kubeconfig");
    std::fs::write(&bad, "this: [is not a kubeconfig\n").unwrap();
    let bad = bad.to_str().unwrap();
    let spec = spec();
    for args in [
        vec!["status", "-f", &spec, "--kubeconfig", bad],
        vec!["orphans", "-f", &spec, "--kubeconfig", bad],
        vec!["doctor", "-f", &spec, "--kubeconfig", bad],
        vec!["apply", "-f", &spec, "--yes", "--kubeconfig", bad],
        vec!["plan", "-f", &spec, "--kubeconfig", bad],
    ] {
        let (code, err) = unreachable(dir.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("bad.kubeconfig"), "{args:?}: {err}");
    }
}

/// `apply` reads `$KUBECONFIG` as status, doctor and orphans do.
#[test]
fn apply_takes_kubeconfig_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let missing: PathBuf = dir.path().join("env.kubeconfig");
    let out = pxfa()
        .env("KUBECONFIG", &missing)
        .args(["--array", "sim", "--sim-state"])
        .arg(&state)
        .args(["apply", "--yes", "-f", &spec()])
        .output()
        .unwrap();
    let (_, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("env.kubeconfig"), "{stderr}");
    assert!(!state.exists(), "nothing may change");
}

/// `apply --dry-run` (a kubectl habit) is refused with a pointer to `plan
/// --kubeconfig`, exit 2, before anything is sent; `--dry-run=server` too.
#[test]
fn apply_dry_run_points_to_plan() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec();
    for flag in ["--dry-run", "--dry-run=server", "--dry-run=client"] {
        let args = ["apply", "-f", &spec, "--yes", flag];
        let (code, err) = unreachable(dir.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains("apply has no --dry-run: use `pxfa plan -f")
                && err.contains("--kubeconfig"),
            "{args:?}: {err}"
        );
        assert!(
            !err.contains("did not answer"),
            "nothing may be sent: {err}"
        );
    }
}

#[test]
fn doctor_passes_the_shipped_example_on_the_array() {
    let sim = Sim::start();
    let out = sim
        .cmd()
        .args(["doctor", "-f", &spec(), "-o", "json"])
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    // The management layer is unknown without a kubeconfig: 3, never 1.
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let array: Vec<&serde_json::Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["layer"] == "array")
        .collect();
    assert!(array.len() >= 5, "{stdout}");
    for c in &array {
        assert_eq!(c["status"], "ok", "{c}");
    }
    let hosts = array
        .iter()
        .find(|c| c["name"] == "management-initiators")
        .unwrap();
    assert!(
        hosts["found"].as_str().unwrap().contains("plans no hosts"),
        "{hosts}"
    );
}

/// The embedded array (`--array sim`) says its REST version as the served simulator
/// does: the demo's doctor has one unknown (no kubeconfig), not two (#37).
#[test]
fn doctor_on_the_embedded_array_knows_its_rest_version() {
    let out = pxfa()
        .args(["--array", "sim", "doctor", "-f", &spec(), "-o", "json"])
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let checks = report["checks"].as_array().unwrap();
    let rest = checks.iter().find(|c| c["name"] == "rest-version").unwrap();
    assert_eq!(rest["status"], "ok", "{rest}");
    assert!(
        rest["found"].as_str().unwrap().starts_with("REST 2."),
        "{rest}"
    );
    let unknown: Vec<_> = checks.iter().filter(|c| c["status"] == "unknown").collect();
    assert_eq!(unknown.len(), 1, "only the kubeconfig: {unknown:#?}");
}

#[test]
fn safemode_is_said_once_and_shown_by_array_info() {
    let sim = Sim::start_with(&["--seed", "brownfield"]);
    let run = |args: &[&str]| {
        let out = sim.cmd().args(args).output().unwrap();
        let (stdout, stderr) = streams(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        format!("{stdout}\n{stderr}")
    };
    let info = run(&["array", "info"]);
    let line = info.lines().find(|l| l.contains("SafeMode")).unwrap();
    assert!(line.contains(" on"), "{info}");
    // Volumes pxfa creates (import through the host group), so that one batch
    // eradication of six volumes meets SafeMode.
    let dir = tempfile::tempdir().unwrap();
    let spec = import_host_group_spec(dir.path());
    let spec = spec.to_str().unwrap();
    run(&["apply", "-f", spec, "--yes", "--allow-endpoint-mismatch"]);
    let text = run(&[
        "destroy",
        "-f",
        spec,
        "--yes",
        "--eradicate",
        "--allow-endpoint-mismatch",
    ]);
    // The array's refusal: once in the progress, once in the report.
    assert_eq!(text.matches("Cannot eradicate").count(), 2, "{text}");
    assert_eq!(text.matches("the same error as [").count(), 5, "{text}");
    let objects = text
        .lines()
        .filter(|l| l.starts_with("    volume ") && l.contains("eradicated by the array in"))
        .count();
    assert_eq!(objects, 6, "one line per volume:\n{text}");
    assert!(text.contains("the refusal above"), "{text}");
}

/// `--array-name` (and `--array`) match the pure.json entry by host and port: the
/// entry of 127.0.0.1:1 (another array, another token) listed first is not taken for
/// the simulator's 127.0.0.1:PORT.
#[test]
fn array_name_matches_host_and_port() {
    let sim = Sim::start();
    let port = sim.url.rsplit(':').next().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let pj = dir.path().join("pure.json");
    std::fs::write(
        &pj,
        format!(
            r#"{{"FlashArrays":[{{"MgmtEndPoint":"127.0.0.1:1","APIToken":"not-this-one"}},{{"MgmtEndPoint":"127.0.0.1:{port}","APIToken":"{}"}}]}}"#,
            sim.token()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pj, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let with_pure_json = |args: &[&str]| {
        let out = pxfa()
            .arg("--pure-json")
            .arg(&pj)
            .arg("--ca-file")
            .arg(&sim.cert)
            .args(["--retries", "0"])
            .args(args)
            .args(["array", "info"])
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&out);
        sim.assert_no_token(&stdout, &stderr);
        (out.status.code(), stderr)
    };
    let name = format!("127.0.0.1:{port}");
    let (code, err) = with_pure_json(&["--array-name", &name]);
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = with_pure_json(&["--array", &sim.url]);
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = with_pure_json(&["--array-name", "127.0.0.1:3"]);
    assert_eq!(code, Some(2), "{err}");
}

/// A dynamic tenant on a real array without a kubeconfig: its drives stay pending
/// (nothing here reads the claims), which is no change a drift check should alarm on.
#[test]
fn pending_drives_nobody_here_can_progress_are_not_changes() {
    let sim = Sim::start();
    let spec = spec();
    let plan = || {
        let out = sim
            .cmd()
            .args(["plan", "-f", &spec, "--detailed-exitcode"])
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&out);
        (out.status.code(), stdout, stderr)
    };
    let (code, _, stderr) = plan();
    assert_eq!(code, Some(3), "the pod is to be created: {stderr}");
    sim.cmd()
        .args(["apply", "-f", &spec, "--yes", "--allow-endpoint-mismatch"])
        .assert()
        .success();
    let (code, stdout, stderr) = plan();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("No array changes; 6 drive(s) pending"),
        "{stdout}"
    );
    assert!(
        stderr.contains("not a change pxfa can make from here"),
        "{stderr}"
    );
    // status: the pending drives are shown with why, and are not problems (exit 0).
    let out = sim.cmd().args(["status", "-f", &spec]).output().unwrap();
    let (stdout, stderr) = streams(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("?? volume for claim clusters-tenant-demo/tenant-demo-w00-data0: pending: created by the management Portworx when claim"),
        "{stdout}"
    );
    assert!(
        stdout
            .trim_end()
            .ends_with("healthy; 6 drive(s) pending (marked ??): not a problem, see why above"),
        "{stdout}"
    );
    let out = sim
        .cmd()
        .args(["status", "-f", &spec, "-o", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["healthy"], true, "{v:#}");
}

/// Shared options are listed once (`pxfa help array`), `--yes` where a command
/// confirms, `-o mermaid|dot` where it draws, and `sim serve`'s token file as it
/// behaves.
#[test]
fn help_shows_each_option_where_it_means_something() {
    let help = |args: &[&str]| {
        let out = pxfa().args(args).arg("--help").output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let list = help(&["volume", "list"]);
    for hidden in [
        "--client-id",
        "--private-key-file",
        "--api-token-file",
        "--yes",
        "mermaid",
        "--kube-timeout",
    ] {
        assert!(
            !shows(&list, hidden),
            "volume list --help shows {hidden}:\n{list}"
        );
    }
    assert!(list.contains("pxfa help array"), "{list}");
    for confirming in [
        &["volume", "destroy"][..],
        &["apply"],
        &["destroy"],
        &["host", "delete"],
    ] {
        assert!(shows(&help(confirming), "--yes"), "{confirming:?}");
    }
    for drawing in ["plan", "status"] {
        let h = help(&[drawing]);
        assert!(
            h.contains("mermaid") && h.contains("dot"),
            "{drawing}:\n{h}"
        );
        assert!(h.contains("--kube-timeout"), "{drawing}:\n{h}");
    }
    let array = help(&["array"]);
    for shown in [
        "--client-id",
        "--api-token-file",
        "--rest-version",
        "--retries",
    ] {
        assert!(shows(&array, shown), "pxfa array --help lacks {shown}");
    }
    let serve = help(&["sim", "serve"]);
    assert!(shows(&serve, "--api-token-file"), "{serve}");
    assert!(
        serve.contains("PUREFA_API and pure.json are not read"),
        "{serve}"
    );
    // It behaves so: without the file, exit 2.
    pxfa()
        .args(["sim", "serve", "--listen", "127.0.0.1:0"])
        .assert()
        .code(2);
    // Hidden options still work everywhere.
    pxfa()
        .args(["--array", "sim", "volume", "list", "-o", "mermaid"])
        .assert()
        .code(2);
}

/// Whether a help text lists `option` (an option's line, or a possible value's).
fn shows(help: &str, option: &str) -> bool {
    help.lines().map(str::trim_start).any(|l| {
        l.starts_with(&format!("{option} "))
            || l.starts_with(&format!("-y, {option}"))
            || l.starts_with(&format!("-o, {option}"))
            || l.starts_with(&format!("- {option}:"))
    })
}

/// The commands the per-command table lists last: `usage`, `man` and `config`.
#[test]
fn usage_man_and_config() {
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("state.json");
    let s = st.as_path();
    expect(s, &["usage"], 0);
    expect(s, &["usage", "--tenant", "a/b/c"], 2);
    expect(s, &["usage", "-o", "name"], 2);
    let man = dir.path().join("man");
    expect(s, &["man", "--out", man.to_str().unwrap()], 0);
    // The harness's config file does not exist: no profiles, none current.
    let (out, _) = expect(s, &["config", "get-profiles", "-o", "json"], 0);
    assert_eq!(out.trim(), "[]");
    expect(s, &["config", "current-profile"], 1);
    expect(s, &["config", "use-profile", "prod"], 2);
    expect(s, &["--profile", "prod", "volume", "list"], 2);
}
