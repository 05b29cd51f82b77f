//! Tenant tokens expire by default (issue #37): the token `apply` creates for a
//! cloud-drive tenant lives `spec.array.tokenLifetime`, a year when absent; `never`
//! is the explicit way out, and a value that is no duration is refused with the
//! field's path before the array is called.

use std::path::Path;

use crate::harness::{example, pxfa, streams};

const DAY_MS: u64 = 86_400_000;

/// The cloud-drive example with `tokenLifetime` set (or not), applied on a fresh
/// embedded array: the exit code, what was said, and the token's
/// `expires_at - created_at` in days.
fn apply_with(dir: &Path, lifetime: Option<&str>) -> (Option<i32>, String, Option<u64>) {
    let text = std::fs::read_to_string(example("tenant-cloud-drive.yaml")).unwrap();
    let text = match lifetime {
        Some(l) => text.replace(
            "    tokenUser: pxfa-tenant-cd",
            &format!("    tokenUser: pxfa-tenant-cd\n    tokenLifetime: {l}"),
        ),
        None => text,
    };
    let spec = dir.join("spec.yaml");
    std::fs::write(&spec, text).unwrap();
    let state = dir.join("state.json");
    let out = pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(&state)
        .args(["apply", "--yes", "--include-secrets", "-f"])
        .arg(&spec)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    let listed = pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(&state)
        .args(["token", "list", "pxfa-tenant-cd", "-o", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap_or_default();
    let t = &v[0]["api_token"];
    let days = t["expires_at"]
        .as_u64()
        .zip(t["created_at"].as_u64())
        .map(|(e, c)| (e - c) / DAY_MS);
    (out.status.code(), format!("{stdout}{stderr}"), days)
}

#[test]
fn tenant_tokens_expire_after_a_year_unless_the_spec_says_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let (code, said, days) = apply_with(dir.path(), None);
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(days, Some(365), "the default lifetime: {said}");

    let dir = tempfile::tempdir().unwrap();
    let (code, said, days) = apply_with(dir.path(), Some("90d"));
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(days, Some(90));

    let dir = tempfile::tempdir().unwrap();
    let (code, said, days) = apply_with(dir.path(), Some("never"));
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(days, None, "never expires: {said}");

    for bad in ["soon", "1h"] {
        let dir = tempfile::tempdir().unwrap();
        let (code, said, _) = apply_with(dir.path(), Some(bad));
        assert_eq!(code, Some(2), "{bad}: {said}");
        assert!(said.contains("spec.array.tokenLifetime"), "{bad}: {said}");
        assert!(
            !dir.path().join("state.json").exists()
                || !std::fs::read_to_string(dir.path().join("state.json"))
                    .unwrap()
                    .contains("tenant-cd"),
            "{bad}: the array was written"
        );
    }
}

/// `status` of the applied tenant in `dir` with `extra` flags: the exit code and stdout.
fn status_of(dir: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let out = pxfa()
        .args(["--array", "sim", "--sim-state"])
        .arg(dir.join("state.json"))
        .args(["status", "-f"])
        .arg(dir.join("spec.yaml"))
        .args(extra)
        .output()
        .unwrap();
    let (stdout, stderr) = streams(&out);
    (out.status.code(), format!("{stdout}{stderr}"))
}

/// `status` reads the token's expiry from the array: a token expiring within
/// `--token-expiry-warning` (default 30 days) is a problem naming `pxfa token
/// rotate` (exit 3); a later one is shown with its date; a token that never expires
/// says so.
#[test]
fn status_warns_before_the_tenant_token_expires() {
    let dir = tempfile::tempdir().unwrap();
    let (code, said, _) = apply_with(dir.path(), Some("10d"));
    assert_eq!(code, Some(0), "{said}");
    let (code, said) = status_of(dir.path(), &[]);
    assert_eq!(code, Some(3), "{said}");
    assert!(
        said.contains("!! api token of pxfa-tenant-cd: expires "),
        "{said}"
    );
    assert!(said.contains("(in 9d 23h)"), "{said}");
    assert!(said.contains("pxfa token rotate -f "), "{said}");
    assert!(said.contains("problems found"), "{said}");
    // A shorter warning window: as specified, exit 0.
    let (code, said) = status_of(dir.path(), &["--token-expiry-warning", "7d"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("ok api token of pxfa-tenant-cd: present, expires "),
        "{said}"
    );
    let (code, said) = status_of(dir.path(), &["--token-expiry-warning", "soon"]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("--token-expiry-warning"), "{said}");

    let dir = tempfile::tempdir().unwrap();
    let (code, said, _) = apply_with(dir.path(), None);
    assert_eq!(code, Some(0), "{said}");
    let (code, said) = status_of(dir.path(), &[]);
    assert_eq!(code, Some(0), "a year ahead: {said}");
    assert!(said.contains("(in 364d 23h)"), "{said}");

    let dir = tempfile::tempdir().unwrap();
    let (code, said, _) = apply_with(dir.path(), Some("never"));
    assert_eq!(code, Some(0), "{said}");
    let (code, said) = status_of(dir.path(), &[]);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("ok api token of pxfa-tenant-cd: present, never expires"),
        "{said}"
    );
}
