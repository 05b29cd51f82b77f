//! `write_dir` never replaces a px-pure-secret that holds a real API token with a
//! template, nor removes it as stale: it may be the only copy of the token.

use crate::support;

use px_topology::spec::TenantStorage;
use px_topology::{ArrayFacts, Manifest, RenderOptions, render, write_dir};
use secrecy::SecretString;

const TOKEN: &str = "0b7e4d52-3a61-4f0c-9e2d-5c8a1b6f7e93";
const NEW_TOKEN: &str = "7f3c2a19-6d5e-4b8a-8c1f-2e9d0a4b6c57";

fn cloud_drive() -> TenantStorage {
    support::example("cloud-drive")
}

fn rendered(spec: &TenantStorage, token: Option<&str>) -> Vec<Manifest> {
    render(
        spec,
        &support::sizing(spec),
        &ArrayFacts {
            api_token: token.map(SecretString::from),
            ..ArrayFacts::default()
        },
        RenderOptions {
            include_secrets: token.is_some(),
            ..RenderOptions::default()
        },
    )
    .unwrap()
}

fn secret_path(ms: &[Manifest], dir: &std::path::Path) -> std::path::PathBuf {
    let m = ms
        .iter()
        .find(|m| m.kind == "Secret" && m.name == "px-pure-secret")
        .unwrap();
    dir.join("tenant").join(&m.file_name)
}

#[test]
fn a_template_never_replaces_a_real_token() {
    let spec = cloud_drive();
    let tmp = tempfile::tempdir().unwrap();
    let first = rendered(&spec, Some(TOKEN));
    let path = secret_path(&first, tmp.path());
    let out = write_dir(&first, tmp.path()).unwrap();
    assert!(out.kept.is_empty());
    assert!(out.written.contains(&path));
    let before = std::fs::read(&path).unwrap();
    assert!(String::from_utf8_lossy(&before).contains(TOKEN));

    let again = write_dir(&rendered(&spec, None), tmp.path()).unwrap();
    assert_eq!(again.kept, vec![path.clone()]);
    assert!(!again.written.contains(&path));
    assert_eq!(std::fs::read(&path).unwrap(), before, "kept byte for byte");

    // A new real token is how a rotation delivers: it replaces the file.
    let rotated = write_dir(&rendered(&spec, Some(NEW_TOKEN)), tmp.path()).unwrap();
    assert!(rotated.kept.is_empty());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(NEW_TOKEN) && !text.contains(TOKEN));
}

#[test]
fn a_template_replaces_a_template() {
    let spec = cloud_drive();
    let tmp = tempfile::tempdir().unwrap();
    let ms = rendered(&spec, None);
    write_dir(&ms, tmp.path()).unwrap();
    let out = write_dir(&ms, tmp.path()).unwrap();
    assert!(out.kept.is_empty(), "{:?}", out.kept);
    assert!(out.written.contains(&secret_path(&ms, tmp.path())));
}

#[test]
fn a_real_token_in_base64_data_is_kept_too() {
    use base64::Engine as _;
    let spec = cloud_drive();
    let tmp = tempfile::tempdir().unwrap();
    let ms = rendered(&spec, None);
    write_dir(&ms, tmp.path()).unwrap();
    let path = secret_path(&ms, tmp.path());
    // The admin pasted the token as `data` (what `oc get secret -o yaml` shows).
    let pure = format!(r#"{{"FlashArrays": [{{"MgmtEndPoint": "fa1", "APIToken": "{TOKEN}"}}]}}"#);
    let b64 = base64::engine::general_purpose::STANDARD.encode(pure);
    let edited = format!(
        "# Apply to: TENANT (step 02 of 05)\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: px-pure-secret\ndata:\n  pure.json: {b64}\n"
    );
    std::fs::write(&path, &edited).unwrap();
    let out = write_dir(&ms, tmp.path()).unwrap();
    assert_eq!(out.kept, vec![path.clone()]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
}

#[test]
fn a_stale_secret_with_a_real_token_is_not_removed() {
    let spec = cloud_drive();
    let tmp = tempfile::tempdir().unwrap();
    let first = rendered(&spec, Some(TOKEN));
    write_dir(&first, tmp.path()).unwrap();
    let path = secret_path(&first, tmp.path());
    // The same file under a name this render no longer produces.
    let stale = path.with_file_name("01-secret-old-px-pure-secret.yaml");
    std::fs::rename(&path, &stale).unwrap();
    let out = write_dir(&rendered(&spec, None), tmp.path()).unwrap();
    assert!(out.kept.contains(&stale), "{:?}", out.kept);
    assert!(stale.exists());
}
