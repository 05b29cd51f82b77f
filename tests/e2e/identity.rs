//! A tenant is its namespace and its name (issue #34): through the binary on the
//! embedded simulated array, a same-named tenant of another namespace is never
//! planned, changed or destroyed, and an earlier pxfa's objects (tagged without a
//! namespace) are nobody's until `pxfa claim` takes them for one namespace.

use std::path::{Path, PathBuf};

use crate::harness::{direct_access_spec, import_host_group_spec, pxfa, streams};

/// `spec` as the tenant `namespace/name`: every `tenant-demo` renamed, the
/// namespace set, written into `dir`.
fn as_tenant(spec: &Path, namespace: &str, name: &str, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(spec).unwrap();
    let text = text.replace("tenant-demo", name).replacen(
        &format!("metadata:\n  name: {name}\n"),
        &format!("metadata:\n  name: {name}\n  namespace: {namespace}\n"),
        1,
    );
    assert!(
        text.contains(&format!("namespace: {namespace}\n")),
        "{text}"
    );
    let path = dir.join(format!("{namespace}-{name}.yaml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `pxfa --array sim --sim-state STATE [--sim-seed SEED] ARGS`.
struct Embedded {
    state: PathBuf,
    seed: &'static str,
}

impl Embedded {
    fn run(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let out = pxfa()
            .args(["--array", "sim", "--sim-seed", self.seed, "--sim-state"])
            .arg(&self.state)
            .args(args)
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&out);
        (out.status.code(), stdout, stderr)
    }

    fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        let (code, stdout, stderr) = self.run(&all);
        assert_eq!(code, Some(0), "pxfa {args:?}: {stderr}");
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}\n{stdout}"))
    }

    /// Every volume, pod and host with what a destroy or an apply would change.
    fn objects(&self) -> Vec<String> {
        let mut rows = Vec::new();
        for kind in ["volume", "pod", "host"] {
            for o in self.json(&[kind, "list"]).as_array().unwrap() {
                rows.push(format!(
                    "{kind} {} destroyed={} size={} quota={} connections={} group={}",
                    o["name"],
                    o["destroyed"],
                    o["provisioned"],
                    o["quota_limit"],
                    o["connection_count"],
                    o["host_group"]
                ));
            }
        }
        rows.sort();
        rows
    }
}

#[test]
fn the_brownfield_tenant_blue_is_never_planned_or_destroyed_for_another_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let sim = Embedded {
        state: dir.path().join("state.json"),
        seed: "brownfield",
    };
    let spec = as_tenant(&direct_access_spec(), "team-a", "tenant-blue", dir.path());
    let spec = spec.to_str().unwrap();
    let before = sim.objects();
    assert!(before.iter().any(|o| o.starts_with("pod \"tenant-blue\"")));
    let blue: Vec<&String> = before
        .iter()
        .filter(|o| o.contains("tenant-blue::"))
        .collect();
    assert_eq!(blue.len(), 6, "the seed's drives: {before:#?}");

    // plan --destroy: nothing of team-blue's is planned; the pod is kept, by name.
    // An empty preview, exit 0, as `destroy` of nothing succeeds (#37).
    let (code, stdout, stderr) = sim.run(&["plan", "--destroy", "-f", spec]);
    assert_eq!(code, Some(0), "nothing is team-a's: {stdout}");
    assert!(
        stderr.contains("nothing on the array is tagged for tenant team-a/tenant-blue"),
        "{stderr}"
    );
    assert!(!stdout.contains("tenant-blue::"), "{stdout}");

    // destroy --yes: nothing destroyed, every object as before.
    let (code, stdout, stderr) =
        sim.run(&["destroy", "--yes", "--allow-endpoint-mismatch", "-f", spec]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("Destroyed 0 of 0 object(s) of tenant team-a/tenant-blue"),
        "{stdout}"
    );
    assert_eq!(sim.objects(), before, "destroy of team-a changed the array");

    // The plan for team-a names the conflict and its owner, and writes nothing.
    let (code, stdout, stderr) =
        sim.run(&["apply", "--yes", "--allow-endpoint-mismatch", "-f", spec]);
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("tagged for tenant team-blue/tenant-blue"),
        "{stderr}"
    );
    assert_eq!(sim.objects(), before, "a refused apply changed the array");
}

#[test]
fn a_same_named_tenant_of_another_namespace_is_refused_before_any_write_and_never_destroyed() {
    let dir = tempfile::tempdir().unwrap();
    let sim = Embedded {
        state: dir.path().join("state.json"),
        seed: "empty",
    };
    let base = import_host_group_spec(dir.path());
    let team_b = as_tenant(&base, "team-b", "tenant-blue", dir.path());
    let team_a = as_tenant(&base, "team-a", "tenant-blue", dir.path());
    let (team_a, team_b) = (team_a.to_str().unwrap(), team_b.to_str().unwrap());

    let (code, _, stderr) = sim.run(&["apply", "--yes", "--allow-endpoint-mismatch", "-f", team_b]);
    assert_eq!(code, Some(0), "{stderr}");
    let before = sim.objects();
    let drives: Vec<&String> = before
        .iter()
        .filter(|o| o.starts_with("volume \"tenant-blue::"))
        .collect();
    assert_eq!(drives.len(), 6, "{before:#?}");

    // team-a's plan: a conflict naming team-b, before any write (exit 1).
    let plan = sim.run(&["plan", "-f", team_a, "-o", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&plan.1).unwrap();
    assert_eq!(doc["tenant"], "team-a/tenant-blue");
    let conflicts = doc["conflicts"].as_array().unwrap();
    assert!(
        conflicts
            .iter()
            .any(|c| c["kind"] == "pod"
                && c["reason"].as_str().unwrap().contains("team-b/tenant-blue")),
        "{doc:#}"
    );
    let (code, _, stderr) = sim.run(&["apply", "--yes", "--allow-endpoint-mismatch", "-f", team_a]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("nothing was changed"), "{stderr}");
    assert!(stderr.contains("team-b/tenant-blue"), "{stderr}");
    assert_eq!(sim.objects(), before, "team-a's refused apply wrote");

    // team-a's destroy: plans nothing of team-b's, and leaves its pod and drives live.
    let (code, _, stderr) = sim.run(&["plan", "--destroy", "-f", team_a]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("team-a/tenant-blue"), "{stderr}");
    let (code, stdout, stderr) = sim.run(&[
        "destroy",
        "--yes",
        "--allow-endpoint-mismatch",
        "-f",
        team_a,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("Destroyed 0 of 0"), "{stdout}");
    assert_eq!(
        sim.objects(),
        before,
        "team-a's destroy changed team-b's objects"
    );

    // team-b's own destroy still takes its objects.
    let preview = sim.json(&["plan", "--destroy", "-f", team_b]);
    assert_eq!(preview["tenant"], "team-b/tenant-blue");
    let deletes = preview["changes"].as_array().unwrap();
    assert!(
        deletes
            .iter()
            .any(|c| c["kind"] == "pod" && c["name"] == "tenant-blue"),
        "{preview:#}"
    );
}

#[test]
fn an_earlier_pxfas_tenant_is_left_alone_until_claimed_for_one_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let sim = Embedded {
        state: dir.path().join("state.json"),
        seed: "brownfield",
    };
    let spec = as_tenant(
        &direct_access_spec(),
        "team-gray",
        "tenant-gray",
        dir.path(),
    );
    let spec = spec.to_str().unwrap();
    let before = sim.objects();

    // Unclaimed: destroy keeps the pod and says why; status says why too.
    let (code, stdout, stderr) =
        sim.run(&["destroy", "--yes", "--allow-endpoint-mismatch", "-f", spec]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("Destroyed 0 of 0"), "{stdout}");
    assert_eq!(sim.objects(), before);
    let (_, stdout, _) = sim.run(&["status", "-f", spec]);
    assert!(stdout.contains("tenant team-gray/tenant-gray"), "{stdout}");
    assert!(stdout.contains("pod tenant-gray"), "{stdout}");
    assert!(stdout.contains("earlier pxfa"), "{stdout}");
    assert!(stdout.contains("pxfa claim"), "{stdout}");

    // claim --dry-run lists it and writes nothing; claim --yes takes it.
    let (code, stdout, stderr) = sim.run(&["claim", "--dry-run", "-f", spec]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("pod tenant-gray"), "{stdout}");
    // Still unclaimed: an empty destroy preview, exit 0 (#37).
    let planned = sim.run(&["plan", "--destroy", "-f", spec]);
    assert_eq!(planned.0, Some(0), "{}", planned.2);
    assert!(
        !planned.1.contains("destroy pod tenant-gray"),
        "still unclaimed: {}",
        planned.1
    );
    let claimed = sim.json(&["claim", "--yes", "-f", spec]);
    assert_eq!(claimed["tenant"], "team-gray/tenant-gray");
    assert_eq!(claimed["objects"][0]["name"], "tenant-gray");
    assert_eq!(sim.objects(), before, "a claim changes tags only");

    // Claimed: the destroy preview takes the pod; nothing else is claimable.
    let preview = sim.json(&["plan", "--destroy", "-f", spec]);
    assert!(
        preview["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["kind"] == "pod" && c["name"] == "tenant-gray"),
        "{preview:#}"
    );
    let (code, stdout, _) = sim.run(&["claim", "--yes", "-f", spec]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("nothing to claim"), "{stdout}");
}

/// An empty simulated array in `dir` with its own state home (token journal) for
/// the token-user tests: every command, its exit code and streams; a user's token
/// creation time; and `apply --out DIR --include-secrets` of a spec.
struct TokenSite<'a> {
    dir: &'a Path,
}

impl TokenSite<'_> {
    fn run(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let out = pxfa()
            .env("XDG_STATE_HOME", self.dir.join("xdg"))
            .args(["--array", "sim", "--sim-seed", "empty", "--sim-state"])
            .arg(self.dir.join("state.json"))
            .args(args)
            .output()
            .unwrap();
        let (stdout, stderr) = streams(&out);
        (out.status.code(), stdout, stderr)
    }

    fn created_at(&self, user: &str) -> Option<u64> {
        let (code, stdout, stderr) = self.run(&["token", "list", user, "-o", "json"]);
        assert_eq!(code, Some(0), "{stderr}");
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        v[0]["api_token"]["created_at"].as_u64()
    }

    fn apply(&self, spec: &Path, out: &str) -> (Option<i32>, String, String) {
        let out = self.dir.join(out);
        self.run(&[
            "apply",
            "--yes",
            "--allow-endpoint-mismatch",
            "-f",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--include-secrets",
        ])
    }
}

/// The cloud-drive example as the tenant `namespace/dev` with its own pod, and a
/// token user of its own when `token_user` is given.
fn cloud_drive_dev(dir: &Path, namespace: &str, pod: &str, token_user: Option<&str>) -> PathBuf {
    let text = std::fs::read_to_string(crate::harness::example("tenant-cloud-drive.yaml")).unwrap();
    let user = token_user.map_or(String::new(), |u| format!("tokenUser: {u}"));
    let text = text
        .replacen(
            "metadata:\n  name: tenant-cd\n",
            &format!("metadata:\n  name: dev\n  namespace: {namespace}\n"),
            1,
        )
        .replace("    pod: tenant-cd", &format!("    pod: {pod}"))
        .replace("tokenUser: pxfa-tenant-cd", &user);
    assert!(text.contains(&format!("pod: {pod}")), "{text}");
    let path = dir.join(format!("{namespace}-dev.yaml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Issue #34: the token user and the token journal are the tenant's (namespace and
/// name). team-a/dev and team-b/dev with different pods: team-b's default token user
/// (`pxfa-dev`, from the name alone) is refused before any write; with a user of its
/// own, team-b applies, and its `destroy --delete-token` leaves team-a's token user,
/// token and journal entry alone. team-b's pod records its own user (`token-user`
/// tag), so team-a's own destroy then deletes `pxfa-dev`'s token: no other tenant
/// may use it. `token rotate` of a tenant whose default user another tenant may use
/// is refused.
#[test]
fn a_same_named_tenant_never_takes_rotates_or_deletes_the_others_token_user() {
    let dir = tempfile::tempdir().unwrap();
    let site = TokenSite { dir: dir.path() };
    let run = |args: &[&str]| site.run(args);
    let created_at = |user: &str| site.created_at(user);
    let apply = |spec: &Path, out: &str| site.apply(spec, out);
    let team_a = cloud_drive_dev(dir.path(), "team-a", "dev-a", None);
    let (code, _, stderr) = apply(&team_a, "out-a");
    assert_eq!(code, Some(0), "{stderr}");
    let token_a = created_at("pxfa-dev").expect("team-a's token");

    // team-b/dev with the default user: refused before any write, naming the owner.
    let team_b = cloud_drive_dev(dir.path(), "team-b", "dev-b", None);
    let (code, stdout, stderr) = apply(&team_b, "out-b");
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("pxfa-dev is the default token user of tenant team-a/dev"),
        "{stderr}"
    );
    assert!(stderr.contains("pxfa-team-b-dev"), "the fix: {stderr}");
    let (_, pods, _) = run(&["pod", "list", "-o", "json"]);
    assert!(!pods.contains("dev-b"), "a refused apply wrote: {pods}");
    // Nor may team-b rotate it.
    let (code, _, stderr) = run(&[
        "token",
        "rotate",
        "-f",
        team_b.to_str().unwrap(),
        "--out",
        dir.path().join("out-b").to_str().unwrap(),
        "--yes",
    ]);
    assert_ne!(code, Some(0), "{stderr}");
    assert!(stderr.contains("refused: array user pxfa-dev"), "{stderr}");
    assert_eq!(created_at("pxfa-dev"), Some(token_a));

    // A journal entry of team-a's (what a killed apply leaves in the state folder).
    let journal = dir.path().join("xdg").join("pxfa");
    std::fs::create_dir_all(&journal).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let entry = journal.join("pxfa-token-sim-team-a_dev-pxfa-dev.json");
    std::fs::write(
        &entry,
        serde_json::json!({"v": 1, "array": "sim", "tenant": "team-a/dev", "user": "pxfa-dev",
            "state": "creating", "intent_at_ms": 1})
        .to_string(),
    )
    .unwrap();

    // team-b with a user of its own applies, and its destroy --delete-token takes only that.
    let team_b = cloud_drive_dev(dir.path(), "team-b", "dev-b", Some("pxfa-team-b-dev"));
    let (code, _, stderr) = apply(&team_b, "out-b");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(created_at("pxfa-team-b-dev").is_some());
    let (code, stdout, stderr) = run(&[
        "destroy",
        "--yes",
        "--allow-endpoint-mismatch",
        "--delete-token",
        "-f",
        team_b.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let said = format!("{stdout}{stderr}");
    assert!(
        said.contains("delete api token of pxfa-team-b-dev"),
        "{said}"
    );
    assert_eq!(created_at("pxfa-team-b-dev"), None);
    assert_eq!(
        created_at("pxfa-dev"),
        Some(token_a),
        "team-a's token changed"
    );
    assert!(entry.exists(), "team-a's journal entry went");

    // team-b's (destroyed, recoverable) pod names its own user, not pxfa-dev: team-a's
    // destroy takes its token.
    let (code, stdout, stderr) = run(&[
        "destroy",
        "--yes",
        "--allow-endpoint-mismatch",
        "--delete-token",
        "-f",
        team_a.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let said = format!("{stdout}{stderr}");
    assert!(!said.contains("kept: array user pxfa-dev"), "{said}");
    assert!(said.contains("delete api token of pxfa-dev"), "{said}");
    assert_eq!(created_at("pxfa-dev"), None);
}

/// Issue #34: an explicit `spec.array.tokenUser` is recorded on the tenant's pod
/// (`pxfa.io token-user`), so another tenant naming the same user (any name, any
/// namespace) is refused before any write, naming the owner, and cannot rotate that
/// user's token. Without the record, an explicit user was invisible: only default
/// names (`pxfa-<name>`) were checked. With a user of its own the other applies, and
/// the owner's `destroy --delete-token` takes only the owner's token.
#[test]
fn an_explicit_token_user_another_tenants_pod_names_is_never_taken() {
    let dir = tempfile::tempdir().unwrap();
    let site = TokenSite { dir: dir.path() };
    let run = |args: &[&str]| site.run(args);
    let created_at = |user: &str| site.created_at(user);
    let apply = |spec: &Path, out: &str| site.apply(spec, out);
    // team-a/dev with the user `px-shared`; team-b/dev (its own pod) names it too.
    let team_a = cloud_drive_dev(dir.path(), "team-a", "dev-a", Some("px-shared"));
    let (code, _, stderr) = apply(&team_a, "out-a");
    assert_eq!(code, Some(0), "{stderr}");
    let token_a = created_at("px-shared").expect("team-a's token");

    let team_b = cloud_drive_dev(dir.path(), "team-b", "dev-b", Some("px-shared"));
    let (code, stdout, stderr) = apply(&team_b, "out-b");
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "px-shared is the token user of tenant team-a/dev (its pod's pxfa.io token-user tag)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("spec.array.tokenUser"), "the fix: {stderr}");
    let (_, pods, _) = run(&["pod", "list", "-o", "json"]);
    assert!(!pods.contains("dev-b"), "a refused apply wrote: {pods}");
    let (code, _, stderr) = run(&[
        "token",
        "rotate",
        "-f",
        team_b.to_str().unwrap(),
        "--out",
        dir.path().join("out-b").to_str().unwrap(),
        "--yes",
    ]);
    assert_ne!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("refused: array user px-shared is the token user of tenant team-a/dev"),
        "{stderr}"
    );
    assert_eq!(created_at("px-shared"), Some(token_a));

    // A user of its own: team-b applies; team-a's destroy still keeps nothing of
    // team-b's, and deletes its own token (no other pod names px-shared).
    let team_b = cloud_drive_dev(dir.path(), "team-b", "dev-b", Some("px-team-b"));
    let (code, _, stderr) = apply(&team_b, "out-b");
    assert_eq!(code, Some(0), "{stderr}");
    let token_b = created_at("px-team-b").expect("team-b's token");
    let (code, stdout, stderr) = run(&[
        "destroy",
        "--yes",
        "--allow-endpoint-mismatch",
        "--delete-token",
        "-f",
        team_a.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let said = format!("{stdout}{stderr}");
    assert!(said.contains("delete api token of px-shared"), "{said}");
    assert_eq!(created_at("px-shared"), None);
    assert_eq!(
        created_at("px-team-b"),
        Some(token_b),
        "team-b's token changed"
    );
}
