//! `deploy/controller/controller.yaml` grants what the controller calls: a verb
//! missing there is a 403 in a real cluster that no fake-server test would see.

use serde_json::Value;

fn documents() -> Vec<Value> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/controller/controller.yaml"
    ))
    .unwrap();
    text.split("\n---\n")
        .map(|d| serde_saphyr::from_str::<Value>(d).unwrap())
        .filter(|d| !d.is_null())
        .collect()
}

fn grants(rules: &[&Value], group: &str, resource: &str, verb: &str) -> bool {
    let has = |v: &Value, want: &str| {
        v.as_array()
            .is_some_and(|a| a.iter().any(|x| x == want || x == "*"))
    };
    rules.iter().any(|r| {
        has(&r["apiGroups"], group) && has(&r["resources"], resource) && has(&r["verbs"], verb)
    })
}

fn rules<'a>(docs: &'a [Value], kind: &str, name: &str) -> Vec<&'a Value> {
    docs.iter()
        .filter(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .flat_map(|d| d["rules"].as_array().unwrap().iter())
        .collect()
}

#[test]
fn rbac_covers_leases_events_and_the_tenant_storage_kinds() {
    let docs = documents();
    let cluster = rules(&docs, "ClusterRole", "pxfa-controller");
    for (group, resource, verb) in [
        ("pxfa.io", "tenantstorages", "list"),
        ("pxfa.io", "tenantstorages", "watch"),
        ("pxfa.io", "tenantstorages", "patch"),
        ("pxfa.io", "tenantstorages/status", "patch"),
        ("pxfa.io", "tenantstorages/finalizers", "update"),
        ("", "secrets", "get"),
        // The token journal Secrets.
        ("", "secrets", "create"),
        ("", "secrets", "update"),
        ("", "secrets", "delete"),
        ("hypershift.openshift.io", "hostedclusters", "get"),
        // The orphan pass's evidence that a tenant's HostedCluster is gone.
        ("hypershift.openshift.io", "hostedclusters", "list"),
        ("events.k8s.io", "events", "create"),
        ("events.k8s.io", "events", "patch"),
        // The orphan pass's tenant objects (Secrets and ConfigMaps deliberately not).
        ("metallb.io", "ipaddresspools", "list"),
        ("metallb.io", "l2advertisements", "list"),
    ] {
        assert!(
            grants(&cluster, group, resource, verb),
            "ClusterRole pxfa-controller: {verb} {group}/{resource}"
        );
    }
    assert!(
        !grants(&cluster, "", "secrets", "list"),
        "listing Secrets cluster-wide reads their data: not granted"
    );
    let leader = rules(&docs, "Role", "pxfa-controller-leader");
    for verb in ["get", "create", "update"] {
        assert!(
            grants(&leader, "coordination.k8s.io", "leases", verb),
            "{verb} leases"
        );
    }
    let binding = docs
        .iter()
        .find(|d| d["kind"] == "RoleBinding" && d["roleRef"]["name"] == "pxfa-controller-leader")
        .expect("the leader Role is bound");
    assert_eq!(binding["subjects"][0]["name"], "pxfa-controller");
}

#[test]
fn the_deployment_elects_a_leader_and_probes_the_endpoints() {
    let docs = documents();
    let d = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    assert_eq!(d["spec"]["replicas"], 2);
    let c = &d["spec"]["template"]["spec"]["containers"][0];
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(args.contains(&"--leader-elect=true"), "{args:?}");
    assert!(args.contains(&"--log-format=json"), "{args:?}");
    assert!(args.contains(&"--metrics-address=0.0.0.0:8080"), "{args:?}");
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(c["ports"][0]["containerPort"], 8080);
    let env: Vec<&str> = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(env.contains(&"POD_NAME") && env.contains(&"POD_NAMESPACE"));
}
