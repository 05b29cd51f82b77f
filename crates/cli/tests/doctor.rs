//! `pxfa doctor` through the binary: a fake management site (px-cluster's test
//! fixtures, shared by path) and the embedded simulated array with a state file.
//! Doctor writes nothing on either, its JSON is the schema's `SiteReport`, the exit
//! code follows the worst check, `$KUBECONFIG` is honoured, and its YAML drives
//! `render --site`.
// A test scenario reads top to bottom; the 120-line rule is for library code.
#![allow(clippy::too_many_lines)]

mod fake_sites;

use serde_json::Value;

use crate::fake_sites::fake_site::{SiteSpec, complete, mount, persistent_ips};
use crate::fake_sites::support::Fake;
use crate::fake_sites::{applied, pxfa, pxfa_with_kubeconfig_env, writes};

fn fixture() -> String {
    fake_sites::fixture("valid-full.yaml")
        .to_str()
        .unwrap()
        .to_string()
}

/// Runs doctor on `site` with `$KUBECONFIG`; the exit code, the report, the
/// non-GET requests the fake API server saw, and whether the array state changed.
async fn doctor(site: SiteSpec, format: &str) -> (Option<i32>, String, usize, bool) {
    let fake = Fake::start().await;
    mount(&fake.server, &site).await;
    let dir = tempfile::tempdir().unwrap();
    // An array that already holds the tenant, so that the checks have something to read.
    let state = applied(dir.path(), std::path::Path::new(&fixture()));
    let s = state.to_str().unwrap().to_string();
    let before = std::fs::read(&state).unwrap();
    let kubeconfig = fake.kubeconfig.clone();
    let format = format.to_string();
    let out = tokio::task::spawn_blocking(move || {
        pxfa_with_kubeconfig_env(
            &[
                "--array",
                "sim",
                "--sim-state",
                &s,
                "doctor",
                "-f",
                &fixture(),
                "-o",
                &format,
            ],
            &kubeconfig,
        )
    })
    .await
    .unwrap();
    let writes = writes(&fake).await;
    let unchanged = std::fs::read(&state).unwrap() == before;
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        writes,
        unchanged,
    )
}

fn schema() -> Value {
    let text = std::fs::read_to_string(format!(
        "{}/../../docs/site-report.schema.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn doctor_reads_only_and_reports_a_schema_valid_site() {
    let (code, stdout, writes, unchanged) = doctor(complete(), "json").await;
    assert_eq!(writes, 0, "doctor wrote to the management cluster");
    assert!(unchanged, "doctor changed the array");
    let report: Value = serde_json::from_str(&stdout).expect("JSON report");
    // The schema's top-level contract (the full validation is px-topology's test).
    let schema = schema();
    for key in schema["required"].as_array().unwrap() {
        assert!(
            report.get(key.as_str().unwrap()).is_some(),
            "{key} missing: {report}"
        );
    }
    assert_eq!(
        report["apiVersion"],
        schema["properties"]["apiVersion"]["const"]
    );
    assert_eq!(report["kind"], schema["properties"]["kind"]["const"]);
    assert_eq!(report["facts"]["hotplugGate"], "hotplug-volumes");
    assert_eq!(report["facts"]["uplinkMtu"], 9000);
    let failed: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
    // Warnings or unknowns only: 3; everything ok: 0.
    let worst_ok = report["summary"]["warn"] == 0 && report["summary"]["unknown"] == 0;
    assert_eq!(code, Some(if worst_ok { 0 } else { 3 }), "{report}");
}

#[tokio::test]
async fn doctor_names_missing_prerequisites_and_exits_1() {
    let site = SiteSpec {
        secrets: false,
        metallb: false,
        ..complete()
    };
    let (code, stdout, writes, unchanged) = doctor(site, "json").await;
    assert_eq!((code, writes, unchanged), (Some(1), 0, true));
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let failed: Vec<String> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .map(|c| {
            format!(
                "{} {}",
                c["name"].as_str().unwrap(),
                c["read"].as_str().unwrap()
            )
        })
        .collect();
    for want in [
        "referenced-secret Secret clusters/tenant-full-pull-secret",
        "referenced-secret Secret clusters/tenant-full-ssh-key",
        "spec-vs-site spec.management.metallb",
    ] {
        assert!(
            failed.iter().any(|f| f.starts_with(want)),
            "{want}: {failed:?}"
        );
    }
    assert!(
        failed.iter().any(|f| f.starts_with("load-balancer")),
        "{failed:?}"
    );
}

#[tokio::test]
async fn doctor_yaml_drives_render_site() {
    let site = SiteSpec {
        gates: vec!["DeclarativeHotplugVolumes"],
        ..complete()
    };
    let (_, yaml, _, _) = doctor(site, "yaml").await;
    let dir = tempfile::tempdir().unwrap();
    let site_file = dir.path().join("site.yaml");
    std::fs::write(&site_file, &yaml).unwrap();
    let out_dir = dir.path().join("out");
    // The fixture states hotplug-volumes, the default; the site's declarative gate wins.
    let out = pxfa(&[
        "render",
        "-f",
        &fixture(),
        "--site",
        site_file.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let patch = std::fs::read_dir(out_dir.join("management"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("virtualmachine"))
        .expect("a VM disk patch");
    let text = std::fs::read_to_string(patch).unwrap();
    assert!(text.contains("declarative-hotplug-volumes"), "{text}");
    let lint = pxfa(&[
        "lint",
        out_dir.join("management").to_str().unwrap(),
        out_dir.join("tenant").to_str().unwrap(),
    ]);
    assert!(
        lint.status.success(),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
    // A report that is not one is bad input.
    std::fs::write(&site_file, "kind: Status\n").unwrap();
    let out = pxfa(&[
        "render",
        "-f",
        &fixture(),
        "--site",
        site_file.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// `network.persistentIps` through doctor's report: refused (exit 2, nothing written)
/// for a site whose IPAM controller is off, an OVN-Kubernetes localnet bundle that
/// lints clean for a site that keeps the addresses.
#[tokio::test]
async fn render_site_refuses_or_renders_persistent_ips() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.yaml");
    let text = std::fs::read_to_string(fixture()).unwrap();
    assert!(text.contains("persistentIps: false"));
    std::fs::write(
        &spec,
        text.replace("persistentIps: false", "persistentIps: true"),
    )
    .unwrap();
    let render = |site_file: &std::path::Path, out_dir: &std::path::Path| {
        pxfa(&[
            "render",
            "-f",
            spec.to_str().unwrap(),
            "--site",
            site_file.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ])
    };
    let (_, yaml, _, _) = doctor(complete(), "yaml").await;
    let refused_site = dir.path().join("site-off.yaml");
    std::fs::write(&refused_site, &yaml).unwrap();
    let refused_out = dir.path().join("refused");
    let out = render(&refused_site, &refused_out);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("spec.network.persistentIps"), "{err}");
    assert!(!refused_out.exists(), "nothing written on a refusal");

    let (_, yaml, _, _) = doctor(persistent_ips(), "yaml").await;
    let site_file = dir.path().join("site-on.yaml");
    std::fs::write(&site_file, &yaml).unwrap();
    let out_dir = dir.path().join("out");
    let out = render(&site_file, &out_dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nad = std::fs::read_dir(out_dir.join("management"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("networkattachmentdefinition"))
        .expect("a NAD");
    let text = std::fs::read_to_string(nad).unwrap();
    assert!(text.contains("\"topology\": \"localnet\""), "{text}");
    assert!(text.contains("\"allowPersistentIPs\": true"), "{text}");
    let lint = pxfa(&[
        "lint",
        out_dir.join("management").to_str().unwrap(),
        out_dir.join("tenant").to_str().unwrap(),
    ]);
    assert!(
        lint.status.success(),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
}

#[test]
fn doctor_bad_kubeconfig_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.kubeconfig");
    let out = pxfa(&[
        "doctor",
        "-f",
        &fixture(),
        "--kubeconfig",
        missing.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--kubeconfig") && stderr.contains("nope.kubeconfig"),
        "{stderr}"
    );
    // Without any array or cluster, every layer is unknown: exit 3, nothing fails.
    let out = pxfa(&["doctor", "-f", &fixture(), "-o", "json"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["summary"]["fail"], 0);
    assert_eq!(report["summary"]["unknown"], 2);
}

/// What the cluster says is printed escaped, as `status` and `orphans` print it: a
/// version holding terminal escapes cannot clear the screen or retitle the window
/// (issue #38 L1).
#[tokio::test]
async fn doctor_prints_what_the_cluster_says_escaped() {
    let site = SiteSpec {
        portworx: "3.7.0\u{1b}[2J\u{1b}]0;owned\u{7}",
        ..complete()
    };
    let (_, stdout, _, _) = doctor(site, "table").await;
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
        "raw control characters in {stdout:?}"
    );
    assert!(stdout.contains(r"\u{1b}[2J"), "{stdout}");
}

/// A hostile API server: every answer asks for an hour's wait, takes two minutes,
/// or is 50 MB that is not JSON. Doctor ends in bounded time with bounded output,
/// the cause named once per read (issue #38 M3, M4, M5).
#[tokio::test]
async fn doctor_against_a_hostile_api_server_ends_in_bounded_time_and_output() {
    use std::time::{Duration, Instant};
    use wiremock::matchers::method;
    use wiremock::{Mock, ResponseTemplate};
    let junk = format!("<html>{}", "A".repeat(50 << 20));
    let answers = [
        (
            "429 Retry-After 3600",
            ResponseTemplate::new(429).insert_header("Retry-After", "3600"),
            "retry after 3600 s",
        ),
        (
            "an answer after 120 s",
            ResponseTemplate::new(200)
                .set_body_string("{}")
                .set_delay(Duration::from_secs(120)),
            "the command's deadline",
        ),
        (
            "50 MB that is not JSON",
            ResponseTemplate::new(200).set_body_string(junk),
            "larger than",
        ),
    ];
    for (what, answer, cause) in answers {
        let fake = Fake::start().await;
        Mock::given(method("GET"))
            .respond_with(answer)
            .mount(&fake.server)
            .await;
        let kubeconfig = fake.kubeconfig.clone();
        let started = Instant::now();
        let out = tokio::task::spawn_blocking(move || {
            pxfa(&[
                "doctor",
                "-f",
                &fixture(),
                "--kubeconfig",
                kubeconfig.to_str().unwrap(),
                "--context",
                "fake",
                "--kube-deadline",
                "5s",
            ])
        })
        .await
        .unwrap();
        let took = started.elapsed();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(took < Duration::from_secs(40), "{what}: took {took:?}");
        assert!(
            stdout.len() + stderr.len() < 64 << 10,
            "{what}: {} bytes of stdout, {} of stderr",
            stdout.len(),
            stderr.len()
        );
        assert!(
            stdout.contains(cause) || stderr.contains(cause),
            "{what}: {stdout}\n{stderr}"
        );
        assert!(
            !stdout.contains("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
        );
    }
}
