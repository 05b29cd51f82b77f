//! Unit tests of spec validation: every range, name rule and derived limit.

use std::path::{Path, PathBuf};

use flasharray::size::{GIB, MIB, PIB, TIB};

use super::*;
use crate::spec::{parse_spec, parse_valid_spec};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

fn example(name: &str) -> TenantStorage {
    let text = std::fs::read_to_string(repo("examples").join(name)).unwrap();
    parse_valid_spec(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The paths of every error for `t`.
fn paths(t: &TenantStorage) -> Vec<String> {
    t.validate().into_iter().map(|e| e.path).collect()
}

fn refused_at(t: &TenantStorage, path: &str) {
    let errs = t.validate();
    assert!(
        errs.iter().any(|e| e.path == path),
        "expected an error at {path}, got {errs:?}"
    );
}

fn accepted(t: &TenantStorage) {
    let errs = t.validate();
    assert!(errs.is_empty(), "{errs:?}");
    crate::sizing::size(t, None).unwrap();
}

#[test]
fn examples_and_valid_fixtures_pass_every_range() {
    for name in [
        "tenant-direct-access.yaml",
        "tenant-cloud-drive.yaml",
        "tenant-kubevirt-csi.yaml",
    ] {
        accepted(&example(name));
    }
    for name in ["valid-full.yaml", "valid-minimal.yaml"] {
        let text = std::fs::read_to_string(repo("fixtures/tenants").join(name)).unwrap();
        accepted(&parse_valid_spec(&text).unwrap_or_else(|e| panic!("{name}: {e}")));
    }
}

/// Every `fixtures/tenants/invalid-*.yaml` is refused, by parsing or validation,
/// with the field its first line names. The e2e test checks the same through the
/// binary; this one runs in milliseconds and points at the spec code.
#[test]
fn every_invalid_fixture_names_its_field() {
    let mut n = 0;
    for entry in std::fs::read_dir(repo("fixtures/tenants")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !(name.starts_with("invalid-") && name.ends_with(".yaml")) {
            continue;
        }
        n += 1;
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let expect = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| panic!("{name}: no `# expect:` first line"))
            .trim()
            .to_string();
        let errors = match parse_valid_spec(&text) {
            Ok(t) => match crate::sizing::size(&t, None) {
                Ok(_) => panic!("{name}: accepted"),
                Err(e) => vec![e],
            },
            Err(e) => e.0,
        };
        assert!(
            errors.iter().any(|e| e.path == expect),
            "{name}: no error at {expect:?}: {errors:?}"
        );
    }
    assert!(n >= 150, "only {n} invalid fixtures");
}

#[test]
fn the_issue_cases_are_refused_with_their_field() {
    let mut t = example("tenant-cloud-drive.yaml");
    t.spec.storage.metadata_size = Size::bytes(5 * PIB);
    refused_at(&t, "spec.storage.metadataSize");

    let mut t = example("tenant-direct-access.yaml");
    t.spec.storage.capacity = Size::bytes(15 * PIB);
    t.spec.storage.drives_per_node = 1;
    refused_at(&t, "spec.storage.capacity");

    let mut t = example("tenant-direct-access.yaml");
    t.spec.storage.drives_per_node = 100_000;
    refused_at(&t, "spec.storage.drivesPerNode");

    // 2^64 − 1 bytes used to wrap to a small size in the GiB round-up; now the
    // parser refuses it, naming the field.
    let text = std::fs::read_to_string(repo("examples/tenant-direct-access.yaml")).unwrap();
    for (field, line) in [
        ("metadataSize", "metadataSize: 64Gi"),
        ("capacity", "capacity: 4Ti"),
        ("memory", "memory: 32Gi"),
    ] {
        let bad = text.replace(line, &format!("{field}: 18446744073709551615"));
        assert_ne!(bad, text);
        let e = parse_spec(&bad).unwrap_err();
        assert!(e.path.ends_with(field), "{e}");
        assert!(e.message.contains("too large"), "{e}");
    }
}

#[test]
fn node_ranges_accept_their_bounds_and_refuse_past_them() {
    let base = example("tenant-kubevirt-csi.yaml");
    let hc = |f: &dyn Fn(&mut HostedClusterSpec)| {
        let mut t = base.clone();
        f(&mut t.spec.hosted_cluster);
        t
    };
    accepted(&hc(&|h| h.replicas = MAX_REPLICAS));
    refused_at(
        &hc(&|h| h.replicas = MAX_REPLICAS + 1),
        "spec.hostedCluster.replicas",
    );
    accepted(&hc(&|h| h.cores = MAX_CORES));
    refused_at(
        &hc(&|h| h.cores = MAX_CORES + 1),
        "spec.hostedCluster.cores",
    );
    refused_at(&hc(&|h| h.cores = 0), "spec.hostedCluster.cores");
    accepted(&hc(&|h| h.memory = MIN_MEMORY));
    accepted(&hc(&|h| h.memory = MAX_MEMORY));
    refused_at(
        &hc(&|h| h.memory = Size::bytes(MIN_MEMORY.as_u64() - 1)),
        "spec.hostedCluster.memory",
    );
    refused_at(
        &hc(&|h| h.memory = Size::bytes(MAX_MEMORY.as_u64() + 1)),
        "spec.hostedCluster.memory",
    );
    accepted(&hc(&|h| h.root_volume_size = MAX_VM_DISK));
    refused_at(
        &hc(&|h| h.root_volume_size = Size::bytes(MAX_VM_DISK.as_u64() + 1)),
        "spec.hostedCluster.rootVolumeSize",
    );
    refused_at(
        &hc(&|h| h.root_volume_size = Size::bytes(512)),
        "spec.hostedCluster.rootVolumeSize",
    );
}

#[test]
fn storage_ranges_accept_their_bounds_and_refuse_past_them() {
    let base = example("tenant-direct-access.yaml");
    let st = |f: &dyn Fn(&mut TenantStorage)| {
        let mut t = base.clone();
        f(&mut t);
        t
    };
    accepted(&st(&|t| {
        t.spec.storage.drives_per_node = MAX_DRIVES_PER_NODE
    }));
    refused_at(
        &st(&|t| t.spec.storage.drives_per_node = MAX_DRIVES_PER_NODE + 1),
        "spec.storage.drivesPerNode",
    );
    refused_at(
        &st(&|t| t.spec.storage.drives_per_node = 0),
        "spec.storage.drivesPerNode",
    );
    // direct-access devices are VM disks: 100 TB, not 4 PiB.
    accepted(&st(&|t| t.spec.storage.metadata_size = Size::gib(64)));
    refused_at(
        &st(&|t| t.spec.storage.metadata_size = Size::bytes(MAX_VM_DISK.as_u64() + 1)),
        "spec.storage.metadataSize",
    );
    refused_at(
        &st(&|t| t.spec.storage.capacity = Size::bytes(MIB - 1)),
        "spec.storage.capacity",
    );
    accepted(&st(&|t| t.spec.storage.capacity = Size::bytes(MIB)));
    // 32 drives of 15 TiB per node is the most a 3-node tenant holds at the default
    // ceiling (and its pod quota stays under 4 PiB).
    accepted(&st(&|t| t.spec.storage.capacity = Size::tib(32 * 15)));
    refused_at(
        &st(&|t| t.spec.storage.capacity = Size::tib(32 * 15 + 1)),
        "spec.storage.capacity",
    );

    let cd = example("tenant-cloud-drive.yaml");
    let mut t = cd.clone();
    t.spec.storage.metadata_size = MAX_ARRAY_VOLUME;
    // A 4 PiB metadata device on 3 nodes cannot fit a 4 PiB pod quota.
    refused_at(&t, "spec.storage.capacity");
    t.spec.storage.metadata_size = Size::bytes(MAX_ARRAY_VOLUME.as_u64() + 512);
    refused_at(&t, "spec.storage.metadataSize");
}

#[test]
fn the_pod_quota_limit_is_exact() {
    // cloud-drive, 3 nodes, replication 3: total = 3 × (drive + 64 GiB); the quota
    // adds 10 % and must stay within 4 PiB.
    let mut t = example("tenant-cloud-drive.yaml");
    t.spec.storage.replication = 3;
    t.spec.portworx.max_pool_size = Some(MAX_ARRAY_VOLUME);
    t.spec.storage.drives_per_node = 1;
    let fits = |cap_gib: u64| {
        let total = 3 * (cap_gib + 64) * GIB;
        limits::pod_quota(u128::from(total)).unwrap() <= u128::from(4 * PIB)
    };
    let mut lo = 1u64;
    let mut hi = 4 * PIB / GIB;
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if fits(mid) { lo = mid } else { hi = mid }
    }
    t.spec.storage.capacity = Size::gib(lo);
    accepted(&t);
    let s = crate::sizing::size(&t, None).unwrap();
    assert!(s.pod_quota <= MAX_ARRAY_VOLUME);
    t.spec.storage.capacity = Size::gib(hi);
    refused_at(&t, "spec.storage.capacity");
}

#[test]
fn lun_and_attachment_limits_follow_the_attach_mode() {
    let mut t = example("tenant-direct-access.yaml");
    t.spec.network = None;
    for n in &mut t.spec.management.nodes {
        n.storage_address = None;
    }
    t.spec.storage.pod = None;
    t.spec.storage.capacity = Size::tib(1);
    // 195 workers × (20 + 1) = 4095 volumes: exactly the LUNs of a host group.
    t.spec.hosted_cluster.replicas = 195;
    t.spec.storage.drives_per_node = 20;
    // A host group pre-connects volumes pxfa creates: import provisioning, which
    // needs a release that documents it (3.7 with the FA/FB driver).
    t.spec.storage.attach = Attach::HostGroup;
    t.spec.storage.provisioning = Provisioning::Import;
    t.spec.portworx.version = "3.7.0".parse().unwrap();
    t.spec.management.fa_fb_driver = true;
    accepted(&t);
    t.spec.hosted_cluster.replicas = 196;
    refused_at(&t, "spec.storage.attach");
    // FADA: 3 management nodes × 1024 attachments.
    t.spec.storage.attach = Attach::Fada;
    t.spec.hosted_cluster.replicas = 146; // 146 × 21 = 3066 <= 3072
    accepted(&t);
    t.spec.hosted_cluster.replicas = 147; // 147 × 21 = 3087 > 3072
    refused_at(&t, "spec.storage.attach");
}

#[test]
fn initiators_and_endpoints() {
    for ok in [
        "iqn.1994-05.com.redhat:worker-01",
        "iqn.2004-10.com.example",
        "eui.02004567A425678D",
    ] {
        assert_eq!(iscsi_name_problem(&ok.to_ascii_lowercase()), None, "{ok}");
    }
    for bad in [
        "iqn.1994-5.com.redhat:x",
        "iqn.1994-00.com.redhat:x",
        "iqn.1994-05.:x",
        "iqn.1994-05.com_x",
        "eui.0200",
        "iscsi",
    ] {
        assert!(iscsi_name_problem(bad).is_some(), "{bad}");
    }
    assert_eq!(
        nvme_name_problem("nqn.2014-08.org.nvmexpress:uuid:5b3c5a6e-0000-4000-8000-000000000001"),
        None
    );
    assert!(nvme_name_problem("nqn.2014-08.org.nvmexpress:uuid:\u{e9}").is_some());
    for ok in [
        "fa1-mgmt.example.net",
        "FA1.Example.NET",
        "10.0.0.5",
        "10.0.0.5:443",
        "fa1:8443",
        "[2001:db8::10]",
        "[2001:db8::10]:443",
    ] {
        assert_eq!(endpoint_problem(ok), None, "{ok}");
    }
    for bad in [
        "fa1:0",
        "fa1:65536",
        "fa1:",
        "fa1:+1",
        "2001:db8::10",
        "[2001:db8::10",
        "[2001:db8::10]443",
        "fa_1",
        "-fa1",
        ":443",
    ] {
        assert!(endpoint_problem(bad).is_some(), "{bad}");
    }
}

#[test]
fn one_mistake_gives_one_error() {
    // An out-of-range input is reported once, not again by every derived check.
    let mut t = example("tenant-direct-access.yaml");
    t.spec.storage.drives_per_node = 100_000;
    assert_eq!(paths(&t), vec!["spec.storage.drivesPerNode".to_string()]);
    let mut t = example("tenant-direct-access.yaml");
    t.spec.storage.capacity = Size::bytes(15 * PIB);
    assert_eq!(paths(&t), vec!["spec.storage.capacity".to_string()]);
    let _ = TIB;
}
