//! Every string field of the spec has a grammar: a line break, a control character
//! or a shell metacharacter in any of them is a validation error naming the field
//! (issue #28: a newline in `releaseImage` used to escape a header comment and add a
//! ClusterRoleBinding to the rendered files). The table lists the fields on its own,
//! independently of `validate::string_fields`, so a field the validator forgets fails
//! here.

use serde_json::{Value, json};

use px_topology::spec::{from_value, parse_spec, parse_valid_spec};

/// Which valid spec a field is probed in.
#[derive(Clone, Copy)]
enum Base {
    /// `fixtures/tenants/valid-full.yaml` plus `credentialsSecret`, `apply`, `onDelete`.
    Full,
    /// The cloud-drive realm example plus `realmRole`, `realmAggregationStrategy`,
    /// `realmPodForm` (realm fields are only read there).
    Realm,
}

/// How a field is probed.
#[derive(Clone, Copy)]
enum At {
    /// The string at this JSON pointer.
    Value(&'static str),
    /// A new key in the map at this JSON pointer.
    Key(&'static str),
}

/// A field, its probe, the path its error must carry, and whether shell
/// metacharacters and line breaks are refused (only free text, annotation values,
/// takes them: they reach no manifest, comment or command).
struct Field {
    at: At,
    path: &'static str,
    base: Base,
    shell: bool,
}

/// Whether `p`'s only control characters are line breaks and tabs.
fn only_breaks(p: &str) -> bool {
    p.chars().all(|c| {
        !(c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')) || matches!(c, '\n' | '\r' | '\t')
    })
}

const fn f(ptr: &'static str, path: &'static str) -> Field {
    Field {
        at: At::Value(ptr),
        path,
        base: Base::Full,
        shell: true,
    }
}

const fn realm(ptr: &'static str, path: &'static str) -> Field {
    Field {
        at: At::Value(ptr),
        path,
        base: Base::Realm,
        shell: true,
    }
}

const fn key(ptr: &'static str, path: &'static str) -> Field {
    Field {
        at: At::Key(ptr),
        path,
        base: Base::Full,
        shell: true,
    }
}

/// Every string field of the model (`spec/model.rs`), strings of typed fields
/// (sizes, versions, addresses, names, enums) included.
const FIELDS: &[Field] = &[
    f("/apiVersion", "apiVersion"),
    f("/kind", "kind"),
    f("/metadata/name", "metadata.name"),
    f("/metadata/namespace", "metadata.namespace"),
    key("/metadata/labels", "metadata.labels"),
    f("/metadata/labels/team", "metadata.labels.team"),
    key("/metadata/annotations", "metadata.annotations"),
    Field {
        at: At::Value("/metadata/annotations/pxfa.io~1owner"),
        path: "metadata.annotations.pxfa.io/owner",
        base: Base::Full,
        shell: false,
    },
    f("/spec/hostedCluster/name", "spec.hostedCluster.name"),
    f(
        "/spec/hostedCluster/namespace",
        "spec.hostedCluster.namespace",
    ),
    f(
        "/spec/hostedCluster/nodePool",
        "spec.hostedCluster.nodePool",
    ),
    f("/spec/hostedCluster/memory", "spec.hostedCluster.memory"),
    f(
        "/spec/hostedCluster/rootVolumeSize",
        "spec.hostedCluster.rootVolumeSize",
    ),
    f(
        "/spec/hostedCluster/releaseImage",
        "spec.hostedCluster.releaseImage",
    ),
    f(
        "/spec/hostedCluster/ocpVersion",
        "spec.hostedCluster.ocpVersion",
    ),
    f(
        "/spec/hostedCluster/virtualizationVersion",
        "spec.hostedCluster.virtualizationVersion",
    ),
    f(
        "/spec/hostedCluster/rootStorageClass",
        "spec.hostedCluster.rootStorageClass",
    ),
    f(
        "/spec/hostedCluster/pullSecret",
        "spec.hostedCluster.pullSecret",
    ),
    f(
        "/spec/hostedCluster/sshKeySecret",
        "spec.hostedCluster.sshKeySecret",
    ),
    f(
        "/spec/hostedCluster/etcdStorageClass",
        "spec.hostedCluster.etcdStorageClass",
    ),
    f("/spec/storage/mode", "spec.storage.mode"),
    f("/spec/storage/protocol", "spec.storage.protocol"),
    f("/spec/storage/capacity", "spec.storage.capacity"),
    f("/spec/storage/metadataSize", "spec.storage.metadataSize"),
    f("/spec/storage/pod", "spec.storage.pod"),
    f("/spec/storage/attach", "spec.storage.attach"),
    f("/spec/storage/provisioning", "spec.storage.provisioning"),
    f("/spec/storage/diskBus", "spec.storage.diskBus"),
    f(
        "/spec/storage/capacityGrowth",
        "spec.storage.capacityGrowth",
    ),
    f(
        "/spec/storage/fadaStorageClass",
        "spec.storage.fadaStorageClass",
    ),
    f(
        "/spec/storage/appStorageClass",
        "spec.storage.appStorageClass",
    ),
    f(
        "/spec/storage/guestStorageClass",
        "spec.storage.guestStorageClass",
    ),
    f("/spec/storage/accessModes/0", "spec.storage.accessModes[0]"),
    f("/spec/storage/volumeMode", "spec.storage.volumeMode"),
    f(
        "/spec/storage/infraSnapshotClass",
        "spec.storage.infraSnapshotClass",
    ),
    f(
        "/spec/storage/guestSnapshotClass",
        "spec.storage.guestSnapshotClass",
    ),
    f("/spec/array/endpoint", "spec.array.endpoint"),
    f("/spec/array/tokenUser", "spec.array.tokenUser"),
    realm("/spec/array/realm", "spec.array.realm"),
    realm("/spec/array/realmRole", "spec.array.realmRole"),
    realm(
        "/spec/array/realmAggregationStrategy",
        "spec.array.realmAggregationStrategy",
    ),
    realm("/spec/array/realmPodForm", "spec.array.realmPodForm"),
    f("/spec/management/hostGroup", "spec.management.hostGroup"),
    f(
        "/spec/management/openshiftVersion",
        "spec.management.openshiftVersion",
    ),
    f(
        "/spec/management/virtualizationVersion",
        "spec.management.virtualizationVersion",
    ),
    f(
        "/spec/management/nodes/0/name",
        "spec.management.nodes[0].name",
    ),
    f(
        "/spec/management/nodes/0/host",
        "spec.management.nodes[0].host",
    ),
    f(
        "/spec/management/nodes/0/wwns/0",
        "spec.management.nodes[0].wwns[0]",
    ),
    f(
        "/spec/management/nodes/0/iqns/0",
        "spec.management.nodes[0].iqns[0]",
    ),
    f(
        "/spec/management/nodes/0/nqns/0",
        "spec.management.nodes[0].nqns[0]",
    ),
    f(
        "/spec/management/nodes/0/storageAddress",
        "spec.management.nodes[0].storageAddress",
    ),
    f(
        "/spec/management/metallb/addresses/0",
        "spec.management.metallb.addresses[0]",
    ),
    f("/spec/network/bridge", "spec.network.bridge"),
    f("/spec/network/uplink", "spec.network.uplink"),
    f("/spec/network/subnet", "spec.network.subnet"),
    f("/spec/network/gateway", "spec.network.gateway"),
    f("/spec/network/vmRange", "spec.network.vmRange"),
    f(
        "/spec/network/guestInterface",
        "spec.network.guestInterface",
    ),
    f("/spec/network/nadName", "spec.network.nadName"),
    f("/spec/portworx/version", "spec.portworx.version"),
    f("/spec/portworx/namespace", "spec.portworx.namespace"),
    f("/spec/portworx/clusterName", "spec.portworx.clusterName"),
    f("/spec/portworx/maxPoolSize", "spec.portworx.maxPoolSize"),
    f("/spec/apply", "spec.apply"),
    f("/spec/onDelete", "spec.onDelete"),
    f(
        "/spec/credentialsSecret/name",
        "spec.credentialsSecret.name",
    ),
    f(
        "/spec/credentialsSecret/pureJsonKey",
        "spec.credentialsSecret.pureJsonKey",
    ),
    f(
        "/spec/credentialsSecret/caKey",
        "spec.credentialsSecret.caKey",
    ),
];

fn read(rel: &str) -> Value {
    let text =
        std::fs::read_to_string(format!("{}/../../{rel}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

fn base(b: Base) -> Value {
    match b {
        Base::Full => {
            let mut v = read("fixtures/tenants/valid-full.yaml");
            let spec = v["spec"].as_object_mut().unwrap();
            spec.insert(
                "credentialsSecret".into(),
                json!({"name": "pxfa-array", "pureJsonKey": "pure.json", "caKey": "ca.crt"}),
            );
            spec.insert("apply".into(), json!("auto"));
            spec.insert("onDelete".into(), json!("destroy"));
            v
        }
        Base::Realm => {
            let mut v = read("examples/tenant-cloud-drive-realm.yaml");
            let a = v["spec"]["array"].as_object_mut().unwrap();
            a.insert("realmRole".into(), json!("storage"));
            a.insert(
                "realmAggregationStrategy".into(),
                json!("least-common-permissions"),
            );
            a.insert("realmPodForm".into(), json!("short"));
            v
        }
    }
}

/// The paths of every problem the spec `v` has (parse error or validation errors).
/// No path or message holds a raw control character: they are printed.
fn problems(v: Value) -> Vec<String> {
    let errors = match from_value(v) {
        Err(e) => vec![e],
        Ok(t) => t.validate(),
    };
    for e in &errors {
        assert!(
            !e.to_string().chars().any(px_topology::spec::is_unprintable),
            "raw control character in {e:?}"
        );
    }
    errors.into_iter().map(|e| e.path).collect()
}

/// Line breaks and control characters, around or inside a valid value.
fn break_payloads(v: &str) -> Vec<String> {
    vec![
        format!(
            "{v}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n\
             metadata: {{name: pwn}}\nroleRef: {{kind: ClusterRole, name: cluster-admin}}"
        ),
        format!("{v}\n"),
        format!("\n{v}"),
        format!("{v}\r# x"),
        format!("{v}\u{1b}]0;pwn\u{7}"),
        format!("{v}\u{1b}[2J"),
        format!("{v}\0"),
        format!("{v}\u{85}x"),
        format!("{v}\u{2028}x"),
        format!("{v}\t"),
    ]
}

/// Shell metacharacters after a valid value.
fn shell_payloads(v: &str) -> Vec<String> {
    [
        ";id", "$(id)", "`id`", " x", "|sh", "&", "'", "\"", ">x", "<x", "*", "?", "\\",
    ]
    .iter()
    .map(|p| format!("{v}{p}"))
    .chain([format!(" {v}"), format!("~{v}")])
    .collect()
}

fn probe(field: &Field, payload: &str) -> Vec<String> {
    let mut v = base(field.base);
    match field.at {
        At::Value(ptr) => {
            *v.pointer_mut(ptr)
                .unwrap_or_else(|| panic!("{ptr} is not in the base spec")) = json!(payload);
        }
        At::Key(ptr) => {
            v.pointer_mut(ptr)
                .and_then(Value::as_object_mut)
                .unwrap_or_else(|| panic!("{ptr} is not a map in the base spec"))
                .insert(payload.to_string(), json!("x"));
        }
    }
    problems(v)
}

#[test]
fn the_bases_are_valid() {
    for b in [Base::Full, Base::Realm] {
        assert_eq!(problems(base(b)), Vec::<String>::new());
    }
}

#[test]
fn every_string_field_refuses_breaks_controls_and_shell_metacharacters() {
    let mut failures = Vec::new();
    for field in FIELDS {
        let valid = match field.at {
            At::Value(ptr) => base(field.base)
                .pointer(ptr)
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("{ptr} holds no string in the base spec"))
                .to_string(),
            At::Key(_) => "pxfa.io/key".to_string(),
        };
        let mut payloads = break_payloads(&valid);
        if field.shell {
            payloads.extend(shell_payloads(&valid));
        } else {
            payloads.retain(|p| !only_breaks(p));
        }
        for p in payloads {
            let got = probe(field, &p);
            if !got.iter().any(|path| path == field.path) {
                failures.push(format!("{} = {p:?}: errors at {got:?}", field.path));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} accepted payload(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_release_image_proof_of_concept_is_refused_from_yaml() {
    let yaml = std::fs::read_to_string(format!(
        "{}/../../examples/tenant-kubevirt-csi.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let line = yaml
        .lines()
        .find(|l| l.trim_start().starts_with("releaseImage:"))
        .unwrap();
    let poc = yaml.replace(
        line,
        "    releaseImage: \"quay.io/openshift-release-dev/ocp-release:4.19.10-multi\\n---\\n\
         apiVersion: rbac.authorization.k8s.io/v1\\nkind: ClusterRoleBinding\\nmetadata: \
         {name: pwn}\\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, \
         name: cluster-admin}\\nsubjects: [{kind: User, name: eve}]\"",
    );
    let e = parse_valid_spec(&poc).unwrap_err();
    assert!(
        e.0.iter()
            .any(|e| e.path == "spec.hostedCluster.releaseImage"),
        "{e}"
    );
    // The same through the snapshot classes, which reach the same HostedCluster.
    for key in ["infraSnapshotClass", "guestSnapshotClass"] {
        let text = yaml.replace(
            "  storage:\n",
            &format!("  storage:\n    {key}: \"x\\n---\\nkind: Pod\"\n"),
        );
        let e = parse_valid_spec(&text).unwrap_err();
        assert!(
            e.0.iter().any(|e| e.path == format!("spec.storage.{key}")),
            "{key}: {e}"
        );
    }
}

#[test]
fn image_references_follow_the_containers_image_grammar() {
    let spec = |img: &str| {
        let mut v = base(Base::Full);
        v["spec"]["hostedCluster"]["releaseImage"] = json!(img);
        problems(v)
    };
    for ok in [
        "quay.io/openshift-release-dev/ocp-release:4.19.10-multi",
        "quay.io/openshift-release-dev/ocp-release:4.19.10-x86_64",
        "registry.example.com:5000/ocp4/openshift4:4.20.3",
        "localhost/ocp:4.20",
        "mirror:5000/ocp/release:4.20.3",
        "[2001:db8::1]:5000/ocp/release:4.20.3",
        "quay.io/openshift-release-dev/ocp-release@sha256:\
         0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "quay.io/a/b__c.d-e/f:v1@sha256:\
         0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ] {
        assert_eq!(spec(ok), Vec::<String>::new(), "{ok}");
    }
    for bad in [
        "",
        "ocp-release:4.19",                          // no registry
        "quay.io/openshift-release-dev/ocp-release", // neither tag nor digest
        "quay.io/Openshift/ocp:4.19",                // upper case in the path
        "quay.io/ocp-/x:4.19",                       // component ends with a separator
        "quay.io/a..b/x:4.19",                       // two dots
        "quay.io/x:.4",                              // tag starts with '.'
        "quay.io/x:4.19@sha256:abc",                 // short digest
        "quay.io/x@md5:0123456789abcdef0123456789abcdef",
        "quay.io:port/x:4.19",
        "https://quay.io/x:4.19",
    ] {
        assert!(
            spec(bad).contains(&"spec.hostedCluster.releaseImage".to_string()),
            "{bad:?} accepted"
        );
    }
    let long = format!("quay.io/{}:4.19", "a".repeat(250));
    assert!(spec(&long).contains(&"spec.hostedCluster.releaseImage".to_string()));
    let long_tag = format!("quay.io/x:{}", "a".repeat(129));
    assert!(spec(&long_tag).contains(&"spec.hostedCluster.releaseImage".to_string()));
}

#[test]
fn sizes_follow_the_documented_grammar() {
    let da = std::fs::read_to_string(format!(
        "{}/../../examples/tenant-direct-access.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    assert!(da.contains("capacity: 4Ti"));
    for bad in [
        "4000m",
        "4ti",
        "4tib",
        "4TIB",
        "4gi",
        "\" 4Ti\"",
        "\"4Ti \"",
        "\"4Ti\\n\"",
    ] {
        let e = parse_spec(&da.replace("capacity: 4Ti", &format!("capacity: {bad}"))).unwrap_err();
        assert_eq!(e.path, "spec.storage.capacity", "{bad}: {e}");
    }
    let e = parse_spec(&da.replace("capacity: 4Ti", "capacity: 4000m")).unwrap_err();
    assert!(e.message.contains("milli"), "{e}");
    for ok in [
        "4Ti",
        "4TiB",
        "4T",
        "4TB",
        "4400G",
        "4.5Ti",
        "4398046511104",
    ] {
        parse_valid_spec(&da.replace("capacity: 4Ti", &format!("capacity: {ok}")))
            .unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
}

#[test]
fn unknown_yaml_tags_are_refused_at_their_field() {
    let da = std::fs::read_to_string(format!(
        "{}/../../examples/tenant-direct-access.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    for (from, to, path) in [
        (
            "capacity: 4Ti",
            "capacity: !foo 4Ti",
            "spec.storage.capacity",
        ),
        (
            "mode: direct-access",
            "mode: !!python/object direct-access",
            "spec.storage.mode",
        ),
        ("storage:\n", "storage: !bar\n", "spec.storage"),
    ] {
        let text = da.replacen(from, to, 1);
        assert_ne!(text, da, "{from}");
        let e = parse_spec(&text).unwrap_err();
        assert_eq!(e.path, path, "{to}: {e}");
        assert!(e.message.contains("unknown YAML tag"), "{e}");
    }
    // The core schema's tags are plain YAML.
    let text = da.replacen("capacity: 4Ti", "capacity: !!str 4Ti", 1);
    parse_valid_spec(&text).unwrap();
}
