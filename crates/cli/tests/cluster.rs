//! The cluster commands through the `pxfa` binary: `crd`, `apply --kubeconfig` against
//! an in-process fake Kubernetes API server, and `status` without a cluster. The
//! cluster logic itself is tested in px-cluster.

mod fake_sites;

use px_topology::Manifest;
use serde_json::Value;

use crate::fake_sites::support::{
    Fake, direct_access_spec, mount_discovery, mount_ready_management, rendered, resource_of,
};
use crate::fake_sites::{command, fixture, pxfa};

#[test]
fn crd_command_prints_the_crd() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let out = pxfa(&["crd"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let crd: CustomResourceDefinition = serde_saphyr::from_str(&text).expect("CRD YAML");
    assert_eq!(crd.metadata.name.as_deref(), Some("tenantstorages.pxfa.io"));
}

#[tokio::test]
async fn apply_with_kubeconfig_finishes_on_the_management_cluster() {
    let fake = Fake::start().await;
    let spec = direct_access_spec();
    mount_ready_management(&fake.server, &rendered(&spec)).await;
    let kubeconfig = fake.kubeconfig.to_str().unwrap().to_string();
    let spec_file = fixture("valid-full.yaml").to_str().unwrap().to_string();
    let out = tokio::task::spawn_blocking(move || {
        pxfa(&[
            "--array",
            "sim",
            "--yes",
            "apply",
            "-f",
            &spec_file,
            "--kubeconfig",
            &kubeconfig,
            "--context",
            "fake",
            "--wait-timeout",
            "5s",
        ])
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("worker 03 -> VM tenant-full-workers-3"),
        "{stdout}"
    );
    assert!(stdout.contains("clusters: done"), "{stdout}");
    assert!(!fake.requests("PUT", "/addvolume").await.is_empty());
}

/// A kubeconfig that can be read only once (a pipe: `vault read ... | pxfa apply
/// --kubeconfig /dev/stdin`, or `--kubeconfig <(...)`): apply reads it once and
/// passes the client on, so the site facts, the preflight and the clusters all
/// have it. Read twice, the second read found the pipe drained and the preflight
/// refused the kubeconfig (exit 2).
#[tokio::test]
async fn apply_reads_a_piped_kubeconfig_once() {
    use std::io::Write;
    use std::process::Stdio;

    let fake = Fake::start().await;
    let spec = direct_access_spec();
    mount_ready_management(&fake.server, &rendered(&spec)).await;
    let kubeconfig = std::fs::read(&fake.kubeconfig).unwrap();
    let spec_file = fixture("valid-full.yaml").to_str().unwrap().to_string();
    let out = tokio::task::spawn_blocking(move || {
        let mut child = command(&[
            "--array",
            "sim",
            "--yes",
            "apply",
            "-f",
            &spec_file,
            "--kubeconfig",
            "/dev/stdin",
            "--context",
            "fake",
            "--wait-timeout",
            "5s",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pxfa");
        // Written once and closed: what a pipe from another command gives.
        child.stdin.take().unwrap().write_all(&kubeconfig).unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stderr.contains("site facts from the management cluster"),
        "{stderr}"
    );
    assert!(stdout.contains("clusters: done"), "{stdout}");
    assert!(!fake.requests("PUT", "/addvolume").await.is_empty());
}

#[tokio::test]
async fn status_without_kubeconfig_shows_the_array_layer_only() {
    let spec_file = fixture("valid-full.yaml").to_str().unwrap().to_string();
    let out = tokio::task::spawn_blocking(move || {
        pxfa(&["--array", "sim", "-o", "json", "status", "-f", &spec_file])
    })
    .await
    .unwrap();
    // Problems found (nothing applied yet): exit 3 (#37).
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("status JSON");
    let layers = v["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1, "no kubeconfig: the array layer only");
    assert!(layers[0]["name"].as_str().unwrap().starts_with("array"));
    // A fresh simulated array holds nothing of the tenant yet.
    assert!(
        layers[0]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["ok"] == false)
    );
}

/// The API path of a rendered object, as the fake's discovery serves its kind.
fn object_path(m: &Manifest) -> String {
    let api_version = m.body["apiVersion"].as_str().unwrap();
    let (_, plural) = resource_of(api_version, &m.kind);
    let root = if api_version.contains('/') {
        format!("/apis/{api_version}")
    } else {
        format!("/api/{api_version}")
    };
    match &m.namespace {
        Some(ns) => format!("{root}/namespaces/{ns}/{plural}/{}", m.name),
        None => format!("{root}/{plural}/{}", m.name),
    }
}

/// A management cluster where the first management object of `manifests` exists as
/// apply would leave it, the second with a label apply does not set, and the rest of
/// the bundle not yet; the site's other objects cannot be read (forbidden: the site
/// facts are then the spec's statements). Dry-run applies echo the body. Returns the
/// three: unchanged, changed, to create.
async fn mount_half_applied(fake: &Fake, manifests: &[Manifest]) -> [Manifest; 3] {
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, Request, ResponseTemplate};

    mount_discovery(&fake.server, manifests).await;
    let objects: Vec<&Manifest> = manifests
        .iter()
        .filter(|m| {
            m.cluster == px_topology::Cluster::Management
                && m.form == px_topology::Form::Resource
                && !m.secret
                && m.kind != "MachineConfig"
        })
        .collect();
    let (same, changed) = (objects[0], objects[1]);
    Mock::given(method("GET"))
        .and(path(object_path(same)))
        .respond_with(ResponseTemplate::new(200).set_body_json(same.body.clone()))
        .mount(&fake.server)
        .await;
    let mut other = changed.body.clone();
    other["metadata"]["labels"]["team"] = "storage".into();
    Mock::given(method("GET"))
        .and(path(object_path(changed)))
        .respond_with(ResponseTemplate::new(200).set_body_json(other))
        .mount(&fake.server)
        .await;
    Mock::given(method("PATCH"))
        .and(header("content-type", "application/apply-patch+yaml"))
        .respond_with(|r: &Request| {
            ResponseTemplate::new(200).set_body_json(r.body_json::<Value>().unwrap())
        })
        .mount(&fake.server)
        .await;
    let bundle: std::collections::BTreeSet<String> = manifests
        .iter()
        .filter(|m| m.form == px_topology::Form::Resource)
        .map(object_path)
        .collect();
    Mock::given(method("GET"))
        .respond_with(move |r: &Request| {
            let (code, reason) = if bundle.contains(r.url.path()) {
                (404, "NotFound")
            } else {
                (403, "Forbidden")
            };
            ResponseTemplate::new(code).set_body_json(serde_json::json!({
                "kind": "Status", "apiVersion": "v1", "status": "Failure",
                "code": code, "reason": reason, "message": reason}))
        })
        .mount(&fake.server)
        .await;
    [same.clone(), changed.clone(), objects[2].clone()]
}

/// `Kind namespace/name`, as the preview names an object.
fn describe(m: &Manifest) -> String {
    match &m.namespace {
        Some(ns) => format!("{} {ns}/{}", m.kind, m.name),
        None => format!("{} {}", m.kind, m.name),
    }
}

/// `plan --kubeconfig`: beside the array plan, what `apply --kubeconfig` would change
/// on the management cluster, per object a read and a server-side apply dry run;
/// nothing is written, in text and `-o json`, and `--detailed-exitcode` counts it.
#[tokio::test]
async fn plan_with_kubeconfig_previews_the_clusters_without_writing() {
    let fake = Fake::start().await;
    let manifests = rendered(&direct_access_spec());
    let [same, changed, created] = mount_half_applied(&fake, &manifests).await;
    let kubeconfig = fake.kubeconfig.to_str().unwrap().to_string();
    let spec_file = fixture("valid-full.yaml").to_str().unwrap().to_string();
    let run = move |extra: &'static [&'static str]| {
        let (kubeconfig, spec_file) = (kubeconfig.clone(), spec_file.clone());
        tokio::task::spawn_blocking(move || {
            let mut args = vec![
                "--array",
                "sim",
                "plan",
                "-f",
                &spec_file,
                "--kubeconfig",
                &kubeconfig,
                "--context",
                "fake",
            ];
            args.extend_from_slice(extra);
            pxfa(&args)
        })
    };
    let out = run(&["--detailed-exitcode"]).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(3),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.contains("Plan for "),
        "the array plan first: {stdout}"
    );
    assert!(
        stdout.contains("Clusters (server-side apply dry run, nothing written):"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "~ change management {}: metadata.labels.team",
            describe(&changed)
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("+ create management {}", describe(&created))),
        "{stdout}"
    );
    assert!(
        !stdout.contains(&describe(&same)),
        "unchanged objects only with -v: {stdout}"
    );
    assert!(
        stdout.contains(" to create, 1 to change, 1 unchanged, 0 conflict(s)"),
        "{stdout}"
    );
    assert!(stdout.contains("not applied MachineConfig/"), "{stdout}");

    let out = run(&["-o", "json"]).await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("plan JSON");
    assert_eq!(v["kind"], "Plan");
    // The documented schema describes `clusters` too, and refuses a wrong action.
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/plan.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let mut wrong = v.clone();
    wrong["clusters"]["objects"][0]["action"] = "explode".into();
    assert!(
        !validator.is_valid(&wrong),
        "clusters.objects[].action is an enum"
    );
    let mut wrong = v.clone();
    wrong["clusters"]["skipped"] = "none".into();
    assert!(!validator.is_valid(&wrong), "clusters.skipped is a list");
    let previewed = v["clusters"]["objects"].as_array().unwrap();
    let action_of = |m: &Manifest| {
        previewed
            .iter()
            .find(|o| o["object"] == describe(m).as_str())
            .map(|o| o["action"].clone())
    };
    assert_eq!(action_of(&same), Some("unchanged".into()), "{v:#}");
    assert_eq!(action_of(&changed), Some("change".into()), "{v:#}");
    assert_eq!(action_of(&created), Some("create".into()), "{v:#}");

    // Every request was a read or a dry run.
    let requests = fake.server.received_requests().await.unwrap();
    let dry_runs = requests
        .iter()
        .filter(|r| r.method.as_str() == "PATCH")
        .count();
    assert!(dry_runs > 2, "{dry_runs}");
    for r in &requests {
        assert!(
            r.method.as_str() == "GET" || r.url.query().unwrap_or("").contains("dryRun=All"),
            "a write: {} {}",
            r.method,
            r.url
        );
    }
}

/// `plan --kubeconfig` with a file that does not load: exit 2 naming the flag,
/// before the array is opened.
#[test]
fn plan_with_a_bad_kubeconfig_exits_2_before_the_array() {
    let spec_file = fixture("valid-full.yaml").to_str().unwrap().to_string();
    let out = pxfa(&[
        "--array",
        "https://127.0.0.1:1",
        "--retries",
        "0",
        "plan",
        "-f",
        &spec_file,
        "--kubeconfig",
        "/nonexistent/kubeconfig",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--kubeconfig"), "{stderr}");
    assert!(!stderr.contains("did not answer"), "{stderr}");
}

/// `apply --kubeconfig` of a new cloud-drive tenant without `--tenant-kubeconfig`
/// (its HostedCluster, which gives the tenant cluster, is made by this very apply):
/// the API token has nowhere to go yet, so its creation is held (the plan shows
/// it, with why) and everything else applies, the HostedCluster included; exit 4
/// with what to do next. No token is created, and a later plan still creates it.
#[tokio::test]
async fn apply_without_a_tenant_cluster_holds_the_new_token_and_applies_the_rest() {
    let fake = Fake::start().await;
    // The example, on a site whose default network is not OVN-Kubernetes.
    let dir = tempfile::tempdir().unwrap();
    let example = std::fs::read_to_string(crate::fake_sites::example("cloud-drive")).unwrap();
    let spec_path = dir.path().join("tenant.yaml");
    std::fs::write(
        &spec_path,
        example.replace("persistentIps: true", "persistentIps: false"),
    )
    .unwrap();
    mount_ready_management(
        &fake.server,
        &rendered(&crate::fake_sites::spec_of(&spec_path)),
    )
    .await;
    let state = dir.path().join("state.json").to_str().unwrap().to_string();
    let kubeconfig = fake.kubeconfig.to_str().unwrap().to_string();
    let spec_file = spec_path.to_str().unwrap().to_string();
    let (state_arg, spec_arg) = (state.clone(), spec_file.clone());
    let out = tokio::task::spawn_blocking(move || {
        pxfa(&[
            "--array",
            "sim",
            "--sim-state",
            &state_arg,
            "--yes",
            "apply",
            "-f",
            &spec_arg,
            "--kubeconfig",
            &kubeconfig,
            "--context",
            "fake",
            "--wait-timeout",
            "5s",
        ])
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(4),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.contains("? pending api token of") && stdout.contains("--tenant-kubeconfig"),
        "the plan shows the held token and why:\n{stdout}"
    );
    assert!(
        stderr.contains("is not created yet") && stderr.contains("Run apply again with"),
        "{stderr}"
    );
    assert_eq!(
        fake.requests("PATCH", "/hostedclusters/").await.len(),
        1,
        "the HostedCluster was applied"
    );
    let again = pxfa(&[
        "--array",
        "sim",
        "--sim-state",
        &state,
        "plan",
        "-f",
        &spec_file,
        "-o",
        "json",
    ]);
    let plan: Value = serde_json::from_slice(&again.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&again.stderr)));
    let actionable: Vec<(&str, &str)> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["action"] != "noop")
        .map(|c| (c["action"].as_str().unwrap(), c["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        actionable,
        [("create", "api-token")],
        "only the token is left, not created:\n{plan:#}"
    );
}
