//! What the `pxfa` binary's tests against fake sites share: px-cluster's fake
//! Kubernetes API server and fake management site (its test support, compiled here
//! by path rather than copied), the binary run with a clean environment, a tenant
//! applied to the embedded simulated array's state file, and what the fake server
//! saw written. Each test binary uses part of it.
#![allow(dead_code)]

#[allow(dead_code, unreachable_pub)]
#[path = "../../../px-cluster/tests/it/support.rs"]
pub(crate) mod support;

// Its one site-mounting function reads top to bottom, past the 120-line rule.
#[allow(dead_code, unreachable_pub, clippy::too_many_lines)]
#[path = "../../../px-cluster/tests/it/fake_site.rs"]
pub(crate) mod fake_site;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use wiremock::ResponseTemplate;

use self::support::Fake;

/// `pxfa ARGS` without an array, a token or a kubeconfig from the environment, and
/// without colours.
pub(crate) fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pxfa"));
    c.args(args)
        .env_remove("PUREFA_URL")
        .env_remove("PUREFA_API")
        .env_remove("KUBECONFIG")
        .env_remove("PXFA_PROFILE")
        .env("PXFA_CONFIG", "/nonexistent/pxfa-config.yaml")
        .env("NO_COLOR", "1");
    c
}

/// Runs [`command`].
pub(crate) fn pxfa(args: &[&str]) -> Output {
    command(args).output().expect("run pxfa")
}

/// Runs [`command`] with `$KUBECONFIG` set.
pub(crate) fn pxfa_with_kubeconfig_env(args: &[&str], kubeconfig: &Path) -> Output {
    command(args)
        .env("KUBECONFIG", kubeconfig)
        .output()
        .expect("run pxfa")
}

/// `examples/tenant-{mode}.yaml`.
pub(crate) fn example(mode: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/../../examples/tenant-{mode}.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
}

/// `fixtures/tenants/{name}`.
pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/../../fixtures/tenants/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
}

/// The spec at `path`, parsed and valid.
pub(crate) fn spec_of(path: &Path) -> px_topology::TenantStorage {
    px_topology::parse_valid_spec(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Applies `spec` to a fresh simulated array whose state file is `dir/state.json`,
/// and returns that path. A new API token (cloud-drive) is written once into a 0600
/// file under `dir/out`.
pub(crate) fn applied(dir: &Path, spec: &Path) -> PathBuf {
    let state = dir.join("state.json");
    let out_dir = dir.join("out");
    let out = pxfa(&[
        "--array",
        "sim",
        "--sim-state",
        state.to_str().unwrap(),
        "--yes",
        "apply",
        "-f",
        spec.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--include-secrets",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    state
}

/// How many requests other than GET the fake API server received.
pub(crate) async fn writes(fake: &Fake) -> usize {
    fake.server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() != "GET")
        .count()
}

/// A Kubernetes list answer of `kind` objects.
pub(crate) fn list(kind: &str, items: Vec<Value>) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "apiVersion": "v1", "kind": format!("{kind}List"), "metadata": {}, "items": items}))
}
