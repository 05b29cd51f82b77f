//! Named array profiles (`--profile`, `PXFA_PROFILE`, `current-profile`, `pxfa config
//! ...`) through the binary: against the HTTPS simulator with a token file, and the
//! embedded array with a state file; bad input exits 2 with nothing sent or written.

use std::path::{Path, PathBuf};

use crate::harness::{Sim, pxfa};

/// A config file in `dir` with a `lab` (embedded array, state file) profile, a
/// `sim-https` one for `sim` (its URL, CA and token file) and `current-profile: lab`.
fn config(dir: &Path, sim: &Sim) -> PathBuf {
    let path = dir.join("config.yaml");
    let text = format!(
        "# the arrays of this test\ncurrent-profile: lab\nprofiles:\n  lab:\n    array: sim\n    \
         sim-state: lab.json\n  sim-https:\n    array: {}\n    api-token-file: {}\n    ca-file: \
         {}\n",
        sim.url,
        sim.token_file.display(),
        sim.cert.display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn with_config(path: &Path) -> assert_cmd::Command {
    let mut c = pxfa();
    c.env("PXFA_CONFIG", path);
    c
}

fn stdout(c: &mut assert_cmd::Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_profile_names_the_array_and_its_token_file() {
    let sim = Sim::start();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &sim);
    let token = sim.token();

    // --profile: the HTTPS simulator, its token from the file the profile names.
    let out = with_config(&cfg)
        .args([
            "--profile",
            "sim-https",
            "volume",
            "create",
            "east-v1",
            "--size",
            "1GiB",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed =
        stdout(with_config(&cfg).args(["--profile", "sim-https", "volume", "list", "-o", "name"]));
    assert!(listed.contains("volume/east-v1"), "{listed}");
    // PXFA_PROFILE names it too; PUREFA_URL beside it is not read, and says so.
    let out = with_config(&cfg)
        .env("PXFA_PROFILE", "sim-https")
        .env("PUREFA_URL", "https://127.0.0.1:1")
        .args(["volume", "list", "-o", "name"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("volume/east-v1"));
    assert!(
        err.contains("profile `sim-https` is in effect: PUREFA_URL not read"),
        "{err}"
    );

    // current-profile (lab: the embedded array with its state file) when nothing
    // names an array; a flag still wins over it.
    let out = stdout(with_config(&cfg).args(["volume", "create", "lab-v1", "--size", "1GiB"]));
    assert!(out.is_empty() || !out.contains(&token), "{out}");
    assert!(
        dir.path().join("lab.json").exists(),
        "the profile's sim-state"
    );
    let lab = stdout(with_config(&cfg).args(["volume", "list", "-o", "name"]));
    assert!(
        lab.contains("volume/lab-v1") && !lab.contains("east-v1"),
        "{lab}"
    );
    let flag = stdout(with_config(&cfg).args(["--array", "sim", "volume", "list", "-o", "name"]));
    assert!(
        !flag.contains("lab-v1"),
        "--array beats current-profile: {flag}"
    );

    // The listing shows names, arrays and the token file's path; never a token.
    let before = std::fs::read(&cfg).unwrap();
    let listed = stdout(with_config(&cfg).args(["config", "get-profiles"]));
    assert!(listed.contains("*") && listed.contains("lab"), "{listed}");
    assert!(listed.contains(&sim.url), "{listed}");
    assert!(
        listed.contains(&format!("api-token-file {}", sim.token_file.display())),
        "{listed}"
    );
    assert!(!listed.contains(&token), "{listed}");
    let json: serde_json::Value = serde_json::from_str(&stdout(with_config(&cfg).args([
        "config",
        "get-profiles",
        "-o",
        "json",
    ])))
    .unwrap();
    assert_eq!(json[0]["name"], "lab");
    assert_eq!(json[0]["current"], true);
    assert_eq!(json[1]["api-token-file"], sim.token_file.to_str().unwrap());
    assert_eq!(
        stdout(with_config(&cfg).args(["config", "current-profile"])).trim(),
        "lab"
    );
    assert_eq!(
        std::fs::read(&cfg).unwrap(),
        before,
        "read-only commands never write it"
    );

    // use-profile rewrites only the current-profile line.
    let out = with_config(&cfg)
        .args(["config", "use-profile", "sim-https"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = std::fs::read_to_string(&cfg).unwrap();
    assert!(
        after.starts_with("# the arrays of this test\ncurrent-profile: sim-https\n"),
        "{after}"
    );
    let listed = stdout(with_config(&cfg).args(["volume", "list", "-o", "name"]));
    assert!(listed.contains("volume/east-v1"), "{listed}");
}

#[test]
fn bad_profiles_exit_2_naming_them_with_nothing_sent_or_written() {
    let sim = Sim::start();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &sim);
    let before = std::fs::read(&cfg).unwrap();
    let fails = |c: &mut assert_cmd::Command, want: &str| {
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "want {want:?}: {err}");
        assert!(!err.contains(&sim.token()), "{err}");
    };
    fails(
        with_config(&cfg).args(["--profile", "prod-west", "volume", "list"]),
        "no profile `prod-west` in the pxfa config file",
    );
    fails(
        with_config(&cfg)
            .env("PXFA_PROFILE", "nope")
            .args(["usage"]),
        "(it has: lab, sim-https)",
    );
    fails(
        with_config(&cfg).args(["config", "use-profile", "prod-west"]),
        "no profile `prod-west`",
    );
    fails(
        with_config(&cfg).args(["--profile", "lab", "--array", "sim", "volume", "list"]),
        "both name an array",
    );
    fails(
        pxfa()
            .env("PXFA_CONFIG", dir.path().join("missing.yaml"))
            .args(["--profile", "lab", "volume", "list"]),
        "does not exist",
    );
    assert_eq!(std::fs::read(&cfg).unwrap(), before, "nothing written");
    assert!(
        !dir.path().join("lab.json").exists(),
        "the array was never opened"
    );

    // A malformed file names the key; a token in it is refused by name, never shown.
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        format!(
            "profiles:\n  east:\n    array: {}\n    api-token: {}\n",
            sim.url,
            sim.token()
        ),
    )
    .unwrap();
    fails(
        with_config(&bad).args(["--profile", "east", "volume", "list"]),
        "profiles.east.api-token: a secret is never kept in the config file",
    );
    fails(
        with_config(&bad).args(["config", "get-profiles"]),
        "profiles.east.api-token",
    );
    // A token file the profile names that does not read: the profile is named.
    std::fs::write(
        &bad,
        format!(
            "profiles:\n  east:\n    array: {}\n    api-token-file: gone.token\n",
            sim.url
        ),
    )
    .unwrap();
    fails(
        with_config(&bad).args(["--profile", "east", "volume", "list"]),
        "profile `east` of",
    );
}
