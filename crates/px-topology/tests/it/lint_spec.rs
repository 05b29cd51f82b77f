//! Spec lint rules: each fires on a one-field change of a clean spec and stays quiet
//! on the clean spec.

use std::collections::BTreeSet;

use flasharray::Size;
use px_topology::spec::{StorageMode, TenantStorage, Version, load_spec};
use px_topology::{Severity, lint_path, lint_spec};

fn example(name: &str) -> String {
    format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn good() -> TenantStorage {
    load_spec(example("tenant-direct-access.yaml")).unwrap()
}

fn rules(t: &TenantStorage) -> BTreeSet<&'static str> {
    lint_spec(t).into_iter().map(|f| f.rule).collect()
}

fn fires_alone(rule: &str, change: impl FnOnce(&mut TenantStorage)) {
    let mut t = good();
    change(&mut t);
    assert_eq!(rules(&t), BTreeSet::from([rule]), "{:#?}", lint_spec(&t));
}

#[test]
fn examples_are_quiet() {
    for f in [
        "tenant-direct-access.yaml",
        "tenant-cloud-drive.yaml",
        "tenant-kubevirt-csi.yaml",
    ] {
        let t = load_spec(example(f)).unwrap();
        // PXFA032: a cloud-drive tenant without a realm holds an array-wide token.
        let want: BTreeSet<&str> = if f == "tenant-cloud-drive.yaml" {
            BTreeSet::from(["PXFA032"])
        } else {
            BTreeSet::new()
        };
        assert_eq!(rules(&t), want, "{f}: {:#?}", lint_spec(&t));
    }
    let realm = load_spec(example("tenant-cloud-drive-realm.yaml")).unwrap();
    assert!(rules(&realm).is_empty(), "{:#?}", lint_spec(&realm));
}

#[test]
fn pxfa001_old_portworx() {
    fires_alone("PXFA001", |t| {
        t.spec.portworx.version = Version::new(3, 5, 9)
    });
    fires_alone("PXFA001", |t| {
        t.spec.portworx.version = "3.6".parse().unwrap()
    });
    let mut t = good();
    t.spec.portworx.version = Version::new(3, 7, 0);
    assert!(rules(&t).is_empty());
}

#[test]
fn pxfa005_006_007_px_storev2_nodes() {
    fires_alone("PXFA005", |t| t.spec.hosted_cluster.cores = 7);
    fires_alone("PXFA006", |t| t.spec.hosted_cluster.memory = Size::gib(6));
    fires_alone("PXFA007", |t| {
        t.spec.hosted_cluster.root_volume_size = Size::gib(64)
    });
    // kubevirt-csi runs no Portworx in the tenant: no PX-StoreV2 minimums.
    let mut t = load_spec(example("tenant-kubevirt-csi.yaml")).unwrap();
    t.spec.hosted_cluster.cores = 2;
    t.spec.hosted_cluster.root_volume_size = Size::gib(32);
    assert!(rules(&t).is_empty());
}

#[test]
fn pxfa008_replication_above_nodes() {
    fires_alone("PXFA008", |t| t.spec.hosted_cluster.replicas = 2);
}

#[test]
fn pxfa009_nodiscard_versions() {
    let mut t = good();
    t.spec.management.virtualization_version = Some(Version::new(4, 18, 4));
    let f = lint_spec(&t);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!((f[0].rule, f[0].severity), ("PXFA009", Severity::Info));
    assert!(f[0].message.contains("4.18.4"), "{}", f[0].message);

    let mut t = good();
    t.spec.management.virtualization_version = None;
    t.spec.hosted_cluster.virtualization_version = None;
    let f = lint_spec(&t);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!((f[0].rule, f[0].severity), ("PXFA009", Severity::Warning));
    assert_eq!(f[0].object, "spec.management.virtualizationVersion");

    // The management cluster's OpenShift: 4.20.26 needs it, 4.20.27 does not; the
    // tenant's release image does not count.
    let mut t = good();
    t.spec.management.openshift_version = Some(Version::new(4, 20, 26));
    assert_eq!(rules(&t), BTreeSet::from(["PXFA009"]));
    t.spec.management.openshift_version = Some(Version::new(4, 20, 27));
    t.spec.hosted_cluster.release_image =
        Some("quay.io/openshift-release-dev/ocp-release:4.20.26-multi".into());
    assert!(rules(&t).is_empty());
}

#[test]
fn pxfa017_rwx_with_kubevirt_csi() {
    let mut t = load_spec(example("tenant-kubevirt-csi.yaml")).unwrap();
    t.spec.storage.access_modes = vec!["ReadWriteMany".into()];
    assert_eq!(rules(&t), BTreeSet::from(["PXFA017"]));
    // RWX with a Portworx mode is fine.
    let mut t = good();
    t.spec.storage.access_modes = vec!["ReadWriteMany".into()];
    assert_eq!(t.mode(), StorageMode::DirectAccess);
    assert!(rules(&t).is_empty());
}

#[test]
fn lint_path_on_a_spec_file() {
    assert!(
        lint_path(example("tenant-direct-access.yaml"))
            .unwrap()
            .is_empty()
    );
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.yaml");
    let text = std::fs::read_to_string(example("tenant-direct-access.yaml"))
        .unwrap()
        .replace("cores: 8", "cores: 4");
    std::fs::write(&p, text).unwrap();
    let f = lint_path(&p).unwrap();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].rule, "PXFA005");
    assert_eq!(
        f[0].source.as_deref(),
        Some(p.display().to_string().as_str())
    );
}

#[test]
fn lint_path_reports_invalid_specs_as_pxfa000() {
    let p = format!(
        "{}/../../fixtures/tenants/invalid-duplicate-wwn.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let f = lint_path(&p).unwrap();
    assert!(!f.is_empty());
    assert!(
        f.iter()
            .all(|f| f.rule == "PXFA000" && f.severity == Severity::Error),
        "{f:#?}"
    );
    assert!(
        f.iter()
            .any(|f| f.object == "spec.management.nodes[1].wwns[0]"),
        "{f:#?}"
    );
    let p = format!(
        "{}/../../fixtures/tenants/invalid-size.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let f = lint_path(&p).unwrap();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].object, "spec.storage.capacity");
}

#[test]
fn docs_list_every_rule_with_its_severity() {
    let docs = std::fs::read_to_string(format!(
        "{}/../../docs/lint-rules.md",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    for r in px_topology::LINT_RULES {
        let row = docs
            .lines()
            .find(|l| l.starts_with(&format!("| {} |", r.id)))
            .unwrap_or_else(|| panic!("docs/lint-rules.md has no row for {}", r.id));
        let severity_cell = row.split('|').nth(2).unwrap();
        assert!(
            severity_cell.contains(&r.severity.to_string()),
            "{}: docs say {severity_cell:?}, catalogue says {}",
            r.id,
            r.severity
        );
    }
}

#[test]
fn every_rule_id_in_the_code_is_in_the_catalogue() {
    let src = format!("{}/src", env!("CARGO_MANIFEST_DIR"));
    let modules = [
        "lint/spec_rules",
        "lint/manifest_rules",
        "lint/load",
        "lint/rendered",
        "sizing",
    ];
    let mut seen = 0;
    for f in modules {
        // A module's file is `name.rs` or `name/mod.rs`.
        let text = std::fs::read_to_string(format!("{src}/{f}.rs"))
            .or_else(|_| std::fs::read_to_string(format!("{src}/{f}/mod.rs")))
            .unwrap();
        for (i, _) in text.match_indices("\"PXFA") {
            let id = &text[i + 1..i + 8];
            assert!(
                px_topology::lint_rule(id).is_some(),
                "{f}: {id} is not in RULES"
            );
            seen += 1;
        }
    }
    assert!(seen >= 20, "only {seen} rule ids found");
}

#[test]
fn pxfa027_no_release_image() {
    fires_alone("PXFA027", |t| t.spec.hosted_cluster.release_image = None);
    // The shipped minimal spec has none: lint says so, as render refuses it.
    let p = format!(
        "{}/../../fixtures/tenants/valid-minimal.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let f = lint_path(&p).unwrap();
    assert!(
        f.iter().any(|f| f.rule == "PXFA027"
            && f.severity == Severity::Error
            && f.object == "spec.hostedCluster.releaseImage"),
        "{f:#?}"
    );
}

#[test]
fn lint_path_refuses_unknown_yaml_tags_in_a_spec_at_their_path() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.yaml");
    let text = std::fs::read_to_string(example("tenant-direct-access.yaml"))
        .unwrap()
        .replace("capacity: 4Ti", "capacity: !foo 4Ti");
    assert!(text.contains("!foo"));
    std::fs::write(&p, text).unwrap();
    let f = lint_path(&p).unwrap();
    assert!(
        f.iter().any(|f| f.rule == "PXFA000"
            && f.object == "spec.storage.capacity"
            && f.message.contains("!foo")),
        "{f:#?}"
    );
}

#[test]
fn pxfa026_added_documents_in_a_rendered_folder() {
    use px_topology::{ArrayFacts, RenderOptions, render, write_dir};
    let t = good();
    let sizing = px_topology::size(&t, None).unwrap();
    let ms = render(
        &t,
        &sizing,
        &ArrayFacts::default(),
        RenderOptions::default(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_dir(&ms, dir.path()).unwrap();
    let quiet = lint_path(dir.path()).unwrap();
    assert!(
        quiet.iter().all(|f| f.rule != "PXFA026"),
        "a fresh render is quiet: {quiet:#?}"
    );
    let hc = std::fs::read_dir(dir.path().join("management"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("-hostedcluster-"))
        .unwrap();
    let text = std::fs::read_to_string(&hc).unwrap();
    let injected = text.replacen(
        "# How:",
        "# x\nkind: ClusterRoleBinding\nmetadata: {name: pwn}\n# How:",
        1,
    );
    std::fs::write(&hc, injected).unwrap();
    let f = lint_path(dir.path()).unwrap();
    let hits: Vec<_> = f.iter().filter(|f| f.rule == "PXFA026").collect();
    assert!(!hits.is_empty(), "{f:#?}");
    assert!(hits.iter().all(|f| f.severity == Severity::Error
        && f.source.as_deref() == Some(hc.display().to_string().as_str())));
}

/// PXFA033: cloud-drive workers on whereabouts, whose addresses live migration does
/// not keep; quiet with persistent IPs and for a direct-access tenant (PXFA021 there).
#[test]
fn pxfa033_cloud_drive_workers_on_whereabouts() {
    let mut t = load_spec(example("tenant-cloud-drive-realm.yaml")).unwrap();
    assert!(rules(&t).is_empty(), "{:#?}", lint_spec(&t));
    let net = t.spec.network.as_mut().unwrap();
    net.persistent_ips = Some(false);
    net.whereabouts_reconciler = true;
    assert_eq!(rules(&t), BTreeSet::from(["PXFA033"]));
    let f = lint_spec(&t);
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(f[0].message.contains("live migration"), "{}", f[0].message);
    // Unstated (no site read) is whereabouts too.
    t.spec.network.as_mut().unwrap().persistent_ips = None;
    assert_eq!(rules(&t), BTreeSet::from(["PXFA033"]));
    let mut da = good();
    da.spec.network.as_mut().unwrap().attach_workers = Some(true);
    da.spec.network.as_mut().unwrap().whereabouts_reconciler = true;
    assert_eq!(rules(&da), BTreeSet::from(["PXFA021"]));
}

/// PXFA034: `capacity: 4T` keeps its Kubernetes meaning, and lint names the binary
/// size a Pure admin may have meant.
#[test]
fn a_bare_decimal_unit_in_a_spec_warns_with_both_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(example("tenant-direct-access.yaml"))
        .unwrap()
        .replacen("capacity: 4Ti", "capacity: 4T", 1);
    let path = dir.path().join("spec.yaml");
    std::fs::write(&path, text).unwrap();
    let f = lint_path(&path).unwrap();
    let w: Vec<_> = f.iter().filter(|f| f.rule == "PXFA034").collect();
    assert_eq!(w.len(), 1, "{f:#?}");
    assert_eq!(w[0].object, "spec.storage.capacity");
    assert_eq!(w[0].severity, Severity::Warning);
    assert!(
        w[0].message.contains("3.64 TiB") && w[0].message.contains("4Ti"),
        "{}",
        w[0].message
    );
    // Spelled out, nothing to say.
    assert!(
        lint_path(example("tenant-direct-access.yaml"))
            .unwrap()
            .iter()
            .all(|f| f.rule != "PXFA034")
    );
}

/// PXFA035 across specs: a tenant on persistent IPs (OVS bridge) and one on the same
/// bridge and nodes with a linux bridge, linted together, are refused on the first;
/// each alone, or on other nodes, is not.
#[test]
fn pxfa035_tenants_disagree_on_the_bridge_type() {
    let dir = tempfile::tempdir().unwrap();
    let ovs = dir.path().join("cloud-drive.yaml");
    std::fs::copy(example("tenant-cloud-drive-realm.yaml"), &ovs).unwrap();
    // Another cloud-drive tenant on whereabouts: a linux bridge on the same nodes.
    let linux = dir.path().join("whereabouts.yaml");
    let text = std::fs::read_to_string(example("tenant-cloud-drive.yaml")).unwrap();
    assert!(text.contains("persistentIps: true"));
    std::fs::write(
        &linux,
        text.replace("persistentIps: true", "persistentIps: false"),
    )
    .unwrap();
    let ids = |f: &[px_topology::Finding]| -> BTreeSet<&'static str> {
        f.iter().map(|f| f.rule).collect()
    };
    assert!(!ids(&lint_path(&ovs).unwrap()).contains("PXFA035"));
    let f = px_topology::lint_paths([&ovs, &linux]).unwrap();
    let hits: Vec<_> = f.iter().filter(|f| f.rule == "PXFA035").collect();
    assert_eq!(hits.len(), 1, "{f:#?}");
    assert_eq!(hits[0].severity, Severity::Error);
    assert_eq!(hits[0].object, "spec.network.persistentIps");
    assert_eq!(
        hits[0].source.as_deref(),
        Some(ovs.display().to_string().as_str())
    );
    assert!(
        hits[0].message.contains("br-storage"),
        "{}",
        hits[0].message
    );
    // The same bridge name on another management cluster's nodes is no conflict.
    let text = std::fs::read_to_string(&linux)
        .unwrap()
        .replace("name: worker-0", "name: other-0");
    std::fs::write(&linux, text).unwrap();
    let f = px_topology::lint_paths([&ovs, &linux]).unwrap();
    assert!(!ids(&f).contains("PXFA035"), "{f:#?}");
}

/// PXFA036: a direct-access worker's hotplugged disks (its data drives and metadata
/// drive) past the bus's documented limit, or the site's stated one.
#[test]
fn pxfa036_hotplugged_disks_past_the_limit() {
    // virtio: 4 data drives and the metadata drive are five, past kubevirt/kubevirt#14180's four.
    fires_alone("PXFA036", |t| {
        t.spec.storage.disk_bus = px_topology::spec::DiskBus::Virtio;
        t.spec.storage.drives_per_node = 4;
    });
    let mut t = good();
    t.spec.storage.disk_bus = px_topology::spec::DiskBus::Virtio;
    t.spec.storage.drives_per_node = 3;
    assert!(rules(&t).is_empty(), "four disks fit: {:#?}", lint_spec(&t));
    t.spec.storage.drives_per_node = 4;
    let f = lint_spec(&t);
    assert_eq!(f[0].object, "spec.storage.drivesPerNode");
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(
        f[0].message.contains("5 disks")
            && f[0].message.contains("14180")
            && f[0].message.contains("[L]"),
        "{}",
        f[0].message
    );
    // The site states it takes more: quiet.
    t.spec.management.hotplug_disk_limit = Some(8);
    assert!(rules(&t).is_empty(), "{:#?}", lint_spec(&t));
    // scsi: the stated limit is what counts.
    fires_alone("PXFA036", |t| {
        t.spec.storage.drives_per_node = 2;
        t.spec.management.hotplug_disk_limit = Some(2);
    });
    // Not a direct-access tenant: nothing is hotplugged by pxfa.
    let mut kv = load_spec(example("tenant-kubevirt-csi.yaml")).unwrap();
    kv.spec.management.hotplug_disk_limit = Some(0);
    assert!(!rules(&kv).contains("PXFA036"));
}
