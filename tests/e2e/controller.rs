//! `pxfa controller run`: bad election timings and namespace reference rules exit
//! 2 before any cluster is contacted (the kubeconfig points at a port nothing
//! listens on, or at nothing).

use predicates::str::contains;

use crate::harness::pxfa;

#[test]
fn bad_lease_timings_exit_2_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:9\"}\n\
         users:\n- name: u\n  user: {token: not-a-real-token}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\n\
         current-context: c\n",
    )
    .unwrap();
    let k = kubeconfig.to_str().unwrap();
    pxfa()
        .args(["controller", "run", "--kubeconfig", k])
        .args(["--lease-duration", "10s", "--renew-deadline", "10s"])
        .assert()
        .code(2)
        .stderr(contains(
            "renew deadline must be shorter than the lease duration",
        ));
    pxfa()
        .args([
            "controller",
            "run",
            "--kubeconfig",
            k,
            "--retry-period",
            "12s",
        ])
        .assert()
        .code(2)
        .stderr(contains("retry period"));
    pxfa()
        .args([
            "controller",
            "run",
            "--kubeconfig",
            k,
            "--log-format",
            "xml",
        ])
        .assert()
        .code(2);
}

/// A `--allow-namespace-reference` rule that is not `FROM=TO` exits 2 naming the
/// flag and the rule, before any cluster is contacted.
#[test]
fn a_bad_namespace_reference_rule_exits_2_before_connecting() {
    pxfa()
        .args([
            "controller",
            "run",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
        ])
        .args(["--allow-namespace-reference", "team-a=clusters"])
        .args(["--allow-namespace-reference", "team-a"])
        .assert()
        .code(2)
        .stderr(contains(
            "--allow-namespace-reference: \"team-a\" is not FROM=TO",
        ));
}
