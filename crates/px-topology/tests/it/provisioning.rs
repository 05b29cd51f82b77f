//! The provisioning strategy per Portworx release: the table, the lint rule PXFA020,
//! the validation of its combinations, and what each strategy renders and plans.

use px_topology::spec::{
    Attach, Provisioning, TenantStorage, Version, parse_spec,
    provisioning::{IMPORT_ANNOTATION, Strategy, table_markdown},
};
use px_topology::{Cluster, Severity, driver_for, lint_spec};

use crate::support;

fn da() -> TenantStorage {
    support::example("direct-access")
}

fn pxfa020(t: &TenantStorage) -> Vec<Severity> {
    lint_spec(t)
        .into_iter()
        .filter(|f| f.rule == "PXFA020")
        .map(|f| f.severity)
        .collect()
}

fn claims(t: &TenantStorage) -> Vec<serde_json::Value> {
    px_topology::render(
        t,
        &support::sizing(t),
        &Default::default(),
        Default::default(),
    )
    .unwrap()
    .into_iter()
    .filter(|m| m.kind == "PersistentVolumeClaim" && m.cluster == Cluster::Management)
    .map(|m| m.body)
    .collect()
}

#[test]
fn auto_is_dynamic_on_3_6_2() {
    let t = da();
    assert_eq!(t.spec.portworx.version, Version::new(3, 6, 2));
    assert_eq!(t.spec.storage.provisioning, Provisioning::Auto);
    assert_eq!(t.provisioning().unwrap().strategy, Strategy::Dynamic);
    assert!(pxfa020(&t).is_empty());
    // The array gets the pod only; no drive volume, host or connection.
    let d = driver_for(&t)
        .desired_state(&t, &support::sizing(&t))
        .unwrap();
    assert!(d.pod.is_some());
    assert!(d.volumes.is_empty() && d.hosts.is_empty() && d.connections.is_empty());
    assert!(d.notes.iter().any(|n| n.contains("provisioning: dynamic")));
}

#[test]
fn dynamic_claims_have_no_import_annotation() {
    let t = da();
    let cs = claims(&t);
    assert_eq!(cs.len(), 6);
    for c in &cs {
        let ann = &c["metadata"]["annotations"];
        assert!(
            ann.get("pure_vol_name").is_none() && ann.get(IMPORT_ANNOTATION).is_none(),
            "{c}"
        );
        assert_eq!(c["spec"]["storageClassName"], "pxfa-fada-tenant-demo");
    }
}

#[test]
fn import_is_refused_on_3_6_with_pxfa020() {
    let mut t = da();
    t.spec.storage.provisioning = Provisioning::Import;
    assert_eq!(pxfa020(&t), [Severity::Error]);
    let f = lint_spec(&t);
    assert!(
        f[0].message.contains("not supported on Portworx 3.6.2"),
        "{}",
        f[0].message
    );
    assert!(
        f[0].message.contains("provisioning: dynamic"),
        "{}",
        f[0].message
    );
    // The driver refuses too: nothing is planned or rendered from a refused import.
    assert!(
        driver_for(&t)
            .desired_state(&t, &support::sizing(&t))
            .is_err()
    );
    t.spec.management.fa_fb_driver = true;
    assert_eq!(
        pxfa020(&t),
        [Severity::Error],
        "the 3.6 driver is Early Access"
    );
}

#[test]
fn import_on_3_7_needs_the_fa_fb_driver() {
    let mut t = da();
    t.spec.portworx.version = Version::new(3, 7, 0);
    t.spec.storage.provisioning = Provisioning::Import;
    assert_eq!(pxfa020(&t), [Severity::Error]);
    t.spec.management.fa_fb_driver = true;
    assert_eq!(pxfa020(&t), [Severity::Warning]);
    // Unknown newer releases use the 3.7 rows.
    t.spec.portworx.version = Version::new(3, 8, 0);
    assert_eq!(pxfa020(&t), [Severity::Warning]);
}

#[test]
fn import_on_3_7_with_driver_uses_pure_volume_name_and_warns() {
    let mut t = da();
    t.spec.portworx.version = Version::new(3, 7, 0);
    t.spec.management.fa_fb_driver = true;
    t.spec.storage.provisioning = Provisioning::Import;
    let w = lint_spec(&t);
    assert!(
        w.iter()
            .any(|f| f.rule == "PXFA020" && f.message.contains("lab array"))
    );
    let d = driver_for(&t)
        .desired_state(&t, &support::sizing(&t))
        .unwrap();
    assert_eq!(d.volumes.len(), 6);
    for c in claims(&t) {
        let ann = &c["metadata"]["annotations"];
        let name = ann[IMPORT_ANNOTATION].as_str().unwrap();
        assert!(name.starts_with("tenant-demo::tenant-demo-w0"), "{name}");
        assert!(ann.get("pure_vol_name").is_none());
    }
}

#[test]
fn host_group_needs_import_and_provisioning_needs_direct_access() {
    let yaml = std::fs::read_to_string(support::example_path("direct-access")).unwrap();
    let hg = yaml.replacen("attach: fada", "attach: host-group", 1);
    let e = parse_spec(&hg).unwrap().validate();
    assert!(
        e.iter()
            .any(|e| e.path == "spec.storage.attach" && e.message.contains("use attach: fada")),
        "{e:#?}"
    );
    let ok = hg
        .replacen("version: 3.6.2", "version: 3.7.0", 1)
        .replacen(
            "attach: host-group",
            "attach: host-group\n    provisioning: import",
            1,
        )
        .replacen(
            "hostGroup: hcp-mgmt",
            "hostGroup: hcp-mgmt\n    faFbDriver: true",
            1,
        );
    let t = parse_spec(&ok).unwrap();
    assert!(t.validate().is_empty(), "{:#?}", t.validate());
    assert_eq!(t.spec.storage.attach, Attach::HostGroup);

    let cd = std::fs::read_to_string(support::example_path("cloud-drive")).unwrap();
    let cd = cd.replacen("  storage:\n", "  storage:\n    provisioning: dynamic\n", 1);
    let e = parse_spec(&cd).unwrap().validate();
    assert!(
        e.iter().any(|e| e.path == "spec.storage.provisioning"),
        "{e:#?}"
    );
}

#[test]
fn table_rows_are_documented_in_spec_md() {
    let docs =
        std::fs::read_to_string(format!("{}/../../docs/spec.md", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
    let table = table_markdown();
    assert!(
        docs.contains(&table),
        "docs/spec.md must contain the provisioning table exactly:\n{table}"
    );
}
