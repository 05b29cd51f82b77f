//! The CRD pxfa ships, and that the shipped RBAC grants every request pxfa makes.

use px_topology::{Cluster, Form};
use serde_json::Value;

use crate::support::*;

#[test]
fn crd_is_a_valid_custom_resource_definition() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crd: CustomResourceDefinition =
        serde_json::from_value(px_topology::crd::tenant_storage_crd()).expect("CRD shape");
    assert_eq!(crd.spec.group, "pxfa.io");
    assert_eq!(crd.spec.scope, "Namespaced");
    assert_eq!(crd.spec.names.kind, "TenantStorage");
    let v = &crd.spec.versions[0];
    assert_eq!(
        (v.name.as_str(), v.served, v.storage),
        ("v1alpha1", true, true)
    );
    let schema = v
        .schema
        .as_ref()
        .unwrap()
        .open_api_v3_schema
        .as_ref()
        .unwrap();
    assert!(schema.properties.as_ref().unwrap().contains_key("spec"));
}

// ------------------------------------------------------------------ RBAC

fn rbac_rules(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!(
        "{}/../../deploy/rbac/{file}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).expect("RBAC YAML");
    docs.into_iter()
        .filter(|d| d["kind"] == "ClusterRole")
        .flat_map(|d| d["rules"].as_array().cloned().unwrap_or_default())
        .collect()
}

fn allows(rules: &[Value], group: &str, resource: &str, verb: &str) -> bool {
    let has = |r: &Value, key: &str, want: &str| {
        r[key]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == want || v == "*"))
    };
    rules.iter().any(|r| {
        r.get("resourceNames").is_none()
            && has(r, "apiGroups", group)
            && has(r, "resources", resource)
            && has(r, "verbs", verb)
    }) || (verb != "create"
        && rules.iter().any(|r| {
            r.get("resourceNames").is_some()
                && has(r, "apiGroups", group)
                && has(r, "resources", resource)
                && has(r, "verbs", verb)
        }))
}

#[test]
fn shipped_rbac_grants_everything_pxfa_does() {
    let management = rbac_rules("management.yaml");
    let tenant = rbac_rules("tenant.yaml");
    for spec in [
        direct_access_spec(),
        cloud_drive_spec(),
        kubevirt_csi_spec(),
    ] {
        for m in rendered(&spec) {
            if m.form != Form::Resource {
                continue;
            }
            let rules = match m.cluster {
                Cluster::Management => &management,
                Cluster::Tenant => &tenant,
            };
            let (group, plural) = resource_of(m.body["apiVersion"].as_str().unwrap(), &m.kind);
            for verb in ["get", "create", "patch"] {
                assert!(
                    allows(rules, &group, plural, verb),
                    "{}: {verb} {group}/{plural} not granted by deploy/rbac",
                    m.file_name
                );
            }
        }
    }
    for (rules, group, resource, verb) in [
        (&management, "kubevirt.io", "virtualmachines", "list"),
        (&management, "kubevirt.io", "virtualmachines", "patch"),
        (
            &management,
            "kubevirt.io",
            "virtualmachineinstances",
            "list",
        ),
        (
            &management,
            "subresources.kubevirt.io",
            "virtualmachines/addvolume",
            "update",
        ),
        (&management, "", "persistentvolumeclaims", "patch"),
        // The site facts doctor and apply read, the PVs status checks.
        (&management, "config.openshift.io", "clusterversions", "get"),
        (&management, "operator.openshift.io", "networks", "get"),
        (&management, "hco.kubevirt.io", "hyperconvergeds", "list"),
        (&management, "kubevirt.io", "kubevirts", "list"),
        (&management, "metallb.io", "ipaddresspools", "list"),
        (&management, "nmstate.io", "nodenetworkstates", "list"),
        (&management, "apps", "deployments", "get"),
        (
            &management,
            "core.libopenstorage.org",
            "storageclusters",
            "list",
        ),
        (&management, "", "persistentvolumes", "list"),
        (&tenant, "", "secrets", "update"),
        (&tenant, "core.libopenstorage.org", "storagenodes", "list"),
        (
            &tenant,
            "operators.coreos.com",
            "clusterserviceversions",
            "get",
        ),
    ] {
        assert!(
            allows(rules, group, resource, verb),
            "{verb} {group}/{resource}"
        );
    }
}
