//! `pxfa doctor` against the brownfield array (`--array sim --sim-seed brownfield`):
//! its management hosts hold the example tenant's node initiators in the array's form
//! (`2100F4C7AA002706`) while the spec writes them as colon pairs
//! (`21:00:f4:c7:aa:00:27:06`); both are one WWN, so doctor's
//! `management-initiators` check finds every node's host. (With the example's
//! `attach: fada` a node without a host is told, not warned about.)

use serde_json::Value;

use crate::harness::{direct_access_spec, pxfa};

/// Doctor's `management-initiators` check on the brownfield array for `spec`, array
/// layer only (no kubeconfig): its status and what it found.
fn initiator_check(spec: &std::path::Path) -> (String, String) {
    let out = pxfa()
        .env_remove("KUBECONFIG")
        .args(["--array", "sim", "--sim-seed", "brownfield", "doctor", "-f"])
        .arg(spec)
        .args(["-o", "json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "doctor printed no JSON report ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let check = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "management-initiators")
        .unwrap_or_else(|| panic!("no management-initiators check: {report:#}"))
        .clone();
    (
        check["status"].as_str().unwrap().to_string(),
        check["found"].as_str().unwrap().to_string(),
    )
}

#[test]
fn doctor_finds_the_brownfield_hosts_of_colon_written_wwns() {
    let (status, found) = initiator_check(&direct_access_spec());
    assert_eq!(status, "ok", "{found}");
}

#[test]
fn doctor_names_only_the_node_whose_wwns_no_host_holds() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(direct_access_spec()).unwrap();
    // worker-02's ports become ones no brownfield host holds.
    let text = text.replacen(
        r#"["21:00:f4:c7:aa:00:28:06", "21:00:f4:c7:aa:00:28:07"]"#,
        r#"["21:00:f4:c7:aa:00:5a:06", "21:00:f4:c7:aa:00:5a:07"]"#,
        1,
    );
    assert!(
        text.contains("00:5a:06"),
        "the example's worker-02 WWNs moved"
    );
    let spec = dir.path().join("tenant.yaml");
    std::fs::write(&spec, text).unwrap();
    let (status, found) = initiator_check(&spec);
    // attach: fada: the management Portworx makes its hosts on demand, so a node
    // without one is told (ok), not warned about.
    assert_eq!(status, "ok", "{found}");
    assert!(
        found.ends_with("no host holds yet the initiators of: worker-02"),
        "{found}"
    );
}
