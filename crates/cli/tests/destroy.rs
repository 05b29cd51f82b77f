//! `pxfa destroy` of a tenant with nothing on the array tagged for it, through the
//! binary on the embedded simulated array: a kubevirt-csi tenant (pxfa puts nothing
//! on the array for it) and a cloud-drive tenant destroyed and eradicated already.
//! Both succeed with an empty report and say why on stderr, as the second destroy
//! of a tenant whose objects are only destroyed does; nothing is asked and nothing
//! is written. `plan --destroy` has no plan to show there and stays an error.

mod fake_sites;

use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::Value;

use crate::fake_sites::{applied, command, example};

/// `pxfa --array sim --sim-state STATE ARGS -f SPEC`, with stdin closed (no
/// terminal to confirm on).
fn sim(state: &Path, args: &[&str], spec: &Path) -> Output {
    let mut all = vec!["--array", "sim", "--sim-state", state.to_str().unwrap()];
    all.extend(args);
    all.extend(["-f", spec.to_str().unwrap()]);
    command(&all)
        .stdin(Stdio::null())
        .output()
        .expect("run pxfa")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn destroying_a_kubevirt_csi_tenant_succeeds_with_nothing_to_destroy() {
    let dir = tempfile::tempdir().unwrap();
    let spec = example("kubevirt-csi");
    let state = applied(dir.path(), &spec);
    // The tenant needs nothing on the array: the apply changed nothing, and no state
    // file was written.
    assert!(!state.exists());
    // Without --yes and without a terminal: nothing goes, so nothing is asked.
    let out = sim(&state, &["destroy"], &spec);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("Destroyed 0 of 0 object(s)"),
        "{stdout}{stderr}"
    );
    assert!(
        stderr.contains("puts nothing on the array (kubevirt-csi mode): nothing to destroy"),
        "{stderr}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
    let out = sim(&state, &["-o", "json", "destroy", "--yes"], &spec);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report as JSON");
    assert_eq!(report["changes"], serde_json::json!([]), "{report}");
    assert_eq!(report["calls"], 0, "{report}");
    assert!(!state.exists(), "destroy wrote a state file");
}

#[test]
fn a_destroyed_cloud_drive_tenant_destroys_again_as_nothing_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let spec = example("cloud-drive");
    let state = applied(dir.path(), &spec);
    let out = sim(&state, &["destroy", "--yes"], &spec);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Destroyed, not eradicated: the tenant's objects still carry its tags, so the
    // second destroy has an empty plan and succeeds.
    let out = sim(&state, &["destroy", "--yes"], &spec);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Destroyed 0 of 0 object(s)"));
    let out = sim(&state, &["destroy", "--yes", "--eradicate"], &spec);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Eradicated: nothing on the array is tagged for the tenant any more. The same
    // answer, with a warning (a wrong array or tenant name looks the same).
    let before = std::fs::read(&state).unwrap();
    let out = sim(&state, &["destroy"], &spec);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("Destroyed 0 of 0 object(s)"), "{stdout}");
    assert!(
        stderr.contains("warning: nothing on")
            && stderr.contains("is tagged for tenant default/tenant-cd: nothing to destroy"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&state).unwrap(), before, "destroy wrote");
    // The preview agrees with destroy: an empty plan, exit 0 (#37).
    let out = sim(&state, &["plan", "--destroy"], &spec);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("nothing to destroy"));
}
