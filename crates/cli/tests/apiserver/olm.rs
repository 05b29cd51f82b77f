//! The controller's OLM bundle (`deploy/olm`): made by `scripts/olm-bundle.sh
//! generate` from deploy/ and `pxfa crd` (the Go module `tools/olm-bundle`), so the
//! committed bundle must be byte for byte what it makes now; operator-framework's
//! own validation (`github.com/operator-framework/api`) accepts it; and the real
//! server, with OLM's CRDs from `../shared/schemas/more`, accepts its
//! ClusterServiceVersion and Service with strict field validation. OLM itself does
//! not run. Needs Go like the rest of this tier (skips loudly without it).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use kube::api::{Patch, PatchParams, ValidationDirective};

use crate::harness::{self, dynamic_api, namespace, workspace, yaml_documents};

fn olm_bundle(args: &[&str]) -> String {
    let out = Command::new("bash")
        .arg(workspace().join("scripts/olm-bundle.sh"))
        .args(args)
        .env("PXFA_BIN", env!("CARGO_BIN_EXE_pxfa"))
        .output()
        .expect("run scripts/olm-bundle.sh");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "olm-bundle.sh {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Every file under `dir`, by path relative to it.
fn files(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for sub in ["manifests", "metadata"] {
        for entry in std::fs::read_dir(dir.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            out.insert(
                format!("{sub}/{}", path.file_name().unwrap().to_string_lossy()),
                std::fs::read_to_string(&path).unwrap(),
            );
        }
    }
    out
}

#[tokio::test]
async fn the_olm_bundle_is_in_step_with_deploy_valid_and_accepted_by_the_server() {
    let Some((server, _turn)) = harness::shared().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("bundle");
    olm_bundle(&["generate", fresh.to_str().unwrap()]);
    let committed = workspace().join("deploy/olm");
    let (now, then) = (files(&fresh), files(&committed));
    assert_eq!(
        now.keys().collect::<Vec<_>>(),
        then.keys().collect::<Vec<_>>(),
        "deploy/olm's files; run `bash scripts/olm-bundle.sh generate`"
    );
    for (name, text) in &now {
        assert!(
            &then[name] == text,
            "deploy/olm/{name} is not what deploy/ and `pxfa crd` make now; run `bash scripts/olm-bundle.sh generate`"
        );
    }
    let report = olm_bundle(&["validate", committed.to_str().unwrap()]);
    assert!(
        report.contains("passes operator-framework's validation"),
        "{report}"
    );
    assert!(!report.contains("error:"), "{report}");

    let admin = server.admin().await;
    let ns = namespace(&admin, "olm").await;
    let params = PatchParams {
        field_validation: Some(ValidationDirective::Strict),
        ..PatchParams::apply("pxfa-test").force()
    };
    for (name, _) in now
        .iter()
        .filter(|(n, _)| n.starts_with("manifests/") && !n.ends_with(".crd.yaml"))
    {
        for mut doc in yaml_documents(&committed.join(name)) {
            doc["metadata"]["namespace"] = serde_json::json!(ns);
            let api = dynamic_api(
                &admin,
                doc["apiVersion"].as_str().unwrap(),
                doc["kind"].as_str().unwrap(),
                Some(&ns),
            )
            .await;
            let obj_name = doc["metadata"]["name"].as_str().unwrap().to_string();
            api.patch(&obj_name, &params, &Patch::Apply(&doc))
                .await
                .unwrap_or_else(|e| panic!("the server refused {name}: {e}"));
        }
    }
}
