//! Semantic validation: one test per rule, each against the valid example changed in
//! one place, checking the path and the gist of the message.

use px_topology::spec::{SpecError, TenantStorage, parse_spec};

fn example(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../../examples/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn da() -> String {
    example("tenant-direct-access.yaml")
}

fn errs(yaml: &str) -> Vec<SpecError> {
    parse_spec(yaml)
        .unwrap_or_else(|e| panic!("parse: {e}"))
        .validate()
}

#[track_caller]
fn expect(yaml: &str, path: &str, needle: &str) {
    let e = errs(yaml);
    assert!(
        e.iter()
            .any(|e| e.path == path && e.message.contains(needle)),
        "expected {path}: …{needle}… in {e:#?}"
    );
}

fn with(yaml: &str, from: &str, to: &str) -> String {
    assert!(yaml.contains(from), "{from:?} not in the example");
    yaml.replacen(from, to, 1)
}

#[test]
fn examples_are_valid() {
    for f in [
        "tenant-direct-access.yaml",
        "tenant-cloud-drive.yaml",
        "tenant-kubevirt-csi.yaml",
    ] {
        assert_eq!(errs(&example(f)), vec![], "{f}");
    }
}

#[test]
fn kind_and_api_version() {
    expect(
        &with(&da(), "kind: TenantStorage", "kind: Tenant"),
        "kind",
        "TenantStorage",
    );
}

#[test]
fn tenant_name_is_a_short_dns_label() {
    let long = "t".repeat(41);
    expect(
        &with(
            &da(),
            "name: tenant-demo\nspec",
            &format!("name: {long}\nspec"),
        ),
        "metadata.name",
        "limit is 40",
    );
    expect(
        &with(&da(), "name: tenant-demo\nspec", "name: -tenant\nspec"),
        "metadata.name",
        "start and end",
    );
}

#[test]
fn hcp_namespace_must_fit() {
    let ns = "n".repeat(40);
    let name = "c".repeat(30);
    let y = with(
        &with(&da(), "namespace: clusters", &format!("namespace: {ns}")),
        "    name: tenant-demo\n    namespace",
        &format!("    name: {name}\n    namespace"),
    );
    expect(&y, "spec.hostedCluster.name", "longer than 63");
}

#[test]
fn portworx_modes_need_three_workers() {
    let y = with(
        &with(&da(), "replicas: 3", "replicas: 2"),
        "replication: 3",
        "replication: 2",
    );
    expect(&y, "spec.hostedCluster.replicas", "at least 3");
    // kubevirt-csi runs no Portworx: two workers are fine.
    assert_eq!(errs(&example("tenant-kubevirt-csi.yaml")), vec![]);
}

#[test]
fn replication_range_and_nodes() {
    expect(
        &with(&da(), "replication: 3", "replication: 0"),
        "spec.storage.replication",
        "1, 2 or 3",
    );
    let y = with(
        &with(&da(), "replicas: 3", "replicas: 4"),
        "replication: 3",
        "replication: 3",
    );
    assert_eq!(errs(&y), vec![]);
}

#[test]
fn mode_protocol_combinations() {
    let cd = example("tenant-cloud-drive.yaml");
    expect(
        &with(&cd, "protocol: iscsi", "protocol: fc"),
        "spec.storage.protocol",
        "does not support fc",
    );
    expect(
        &with(&cd, "    protocol: iscsi\n", ""),
        "spec.storage.protocol",
        "needs a protocol",
    );
    let kv = example("tenant-kubevirt-csi.yaml");
    expect(
        &with(
            &kv,
            "mode: kubevirt-csi",
            "mode: kubevirt-csi\n    protocol: iscsi",
        ),
        "spec.storage.protocol",
        "remove protocol",
    );
    for p in ["fc", "iscsi", "nvme-tcp"] {
        let y = with(&da(), "protocol: fc", &format!("protocol: {p}"));
        let e = errs(&y);
        assert!(
            !e.iter().any(|e| e.path == "spec.storage.protocol"),
            "{p}: {e:?}"
        );
    }
}

#[test]
fn initiators_match_the_protocol() {
    // iscsi direct-access: every node needs an IQN.
    let y = with(&da(), "protocol: fc", "protocol: iscsi");
    expect(&y, "spec.management.nodes[0].iqns", "needs the iqns");
    let y = with(&da(), "protocol: fc", "protocol: nvme-tcp");
    expect(&y, "spec.management.nodes[2].nqns", "needs the nqns");
}

#[test]
fn initiator_formats() {
    let y = with(
        &da(),
        "      storageAddress: 10.40.0.101/20",
        "      iqns: [\"iqn-bad\"]\n      nqns: [\"host1\"]\n      storageAddress: 10.40.0.101/20",
    );
    expect(&y, "spec.management.nodes[0].iqns[0]", "not an iSCSI name");
    expect(
        &y,
        "spec.management.nodes[0].nqns[0]",
        "not an NVMe qualified name",
    );
    let y = with(&da(), "21:00:f4:c7:aa:00:27:06", "21:00:f4:c7:aa:00:27");
    expect(&y, "spec.management.nodes[0].wwns[0]", "16 hex digits");
}

#[test]
fn duplicate_initiators_are_found_after_normalisation() {
    let y = with(&da(), "\"21:00:f4:c7:aa:00:28:06\"", "\"2100F4C7AA002706\"");
    expect(
        &y,
        "spec.management.nodes[1].wwns[0]",
        "already listed at spec.management.nodes[0].wwns[0]",
    );
}

#[test]
fn node_names_and_hosts() {
    let y = with(&da(), "name: worker-02", "name: Worker-01");
    expect(&y, "spec.management.nodes[1].name", "already nodes[0]");
    // An FQDN node name is a fine Kubernetes name but not an array host name.
    let y = with(&da(), "name: worker-03", "name: worker-03.example.net");
    expect(&y, "spec.management.nodes[2].name", "set `host:`");
    let y = with(
        &da(),
        "name: worker-03",
        "name: worker-03.example.net\n      host: worker-03",
    );
    assert_eq!(errs(&y), vec![]);
    let y = with(
        &da(),
        "name: worker-03",
        "name: worker-03.example.net\n      host: worker-01",
    );
    expect(
        &y,
        "spec.management.nodes[2].host",
        "already used by nodes[0]",
    );
}

#[test]
fn direct_access_needs_management_nodes() {
    let y = da();
    let start = y.find("    nodes:").unwrap();
    let end = y.find("  network:").unwrap();
    let y = format!("{}    nodes: []\n{}", &y[..start], &y[end..]);
    let y = y.replace("  network:", "  network_removed:");
    let y =
        y[..y.find("  network_removed:").unwrap()].to_string() + "  portworx: {version: 3.6.2}\n";
    expect(
        &y,
        "spec.management.nodes",
        "direct-access needs the management nodes",
    );
}

#[test]
fn storage_addresses() {
    expect(
        &with(&da(), "10.40.0.102/20", "10.40.0.101/20"),
        "spec.management.nodes[1].storageAddress",
        "already the address of nodes[0]",
    );
    expect(
        &with(&da(), "10.40.0.102/20", "10.40.0.210/20"),
        "spec.management.nodes[1].storageAddress",
        "inside vmRange",
    );
    expect(
        &with(&da(), "10.40.0.102/20", "10.40.0.102/24"),
        "spec.management.nodes[1].storageAddress",
        "prefix /24",
    );
    expect(
        &with(&da(), "10.40.0.102/20", "10.40.0.1/20"),
        "spec.management.nodes[1].storageAddress",
        "gateway",
    );
    expect(
        &with(&da(), "10.40.0.102/20", "10.40.0.0/20"),
        "spec.management.nodes[1].storageAddress",
        "network or broadcast",
    );
    let y = with(&da(), "      storageAddress: 10.40.0.103/20\n", "");
    expect(
        &y,
        "spec.management.nodes[2].storageAddress",
        "needs its address",
    );
}

#[test]
fn network_fields() {
    expect(
        &with(&da(), "vlan: 400", "vlan: 0"),
        "spec.network.vlan",
        "1..4094",
    );
    expect(
        &with(&da(), "gateway: 10.40.0.1", "gateway: 10.41.0.1"),
        "spec.network.gateway",
        "outside the subnet",
    );
    expect(
        &with(&da(), "gateway: 10.40.0.1", "gateway: 10.40.0.201"),
        "spec.network.gateway",
        "inside vmRange",
    );
    expect(
        &with(&da(), "subnet: 10.40.0.0/20", "subnet: 10.40.0.7/20"),
        "spec.network.subnet",
        "host bits",
    );
    expect(
        &with(
            &da(),
            "vmRange: 10.40.0.200-10.40.0.250",
            "vmRange: 10.40.0.200-10.40.0.201",
        ),
        "spec.network.vmRange",
        "fewer than the 3 worker VMs",
    );
    expect(
        &with(&da(), "mtu: 9000", "mtu: 65000"),
        "spec.network.mtu",
        "576..9216",
    );
    expect(
        &with(
            &da(),
            "bridge: br-storage",
            "bridge: br-storage-way-too-long",
        ),
        "spec.network.bridge",
        "Linux interface name",
    );
}

#[test]
fn capacity_and_metadata() {
    expect(
        &with(&da(), "capacity: 4Ti", "capacity: 0"),
        "spec.storage.capacity",
        "more than 0",
    );
    expect(
        &with(&da(), "metadataSize: 64Gi", "metadataSize: 63Gi"),
        "spec.storage.metadataSize",
        "64 GiB",
    );
    expect(
        &with(&da(), "drivesPerNode: 1", "drivesPerNode: 0"),
        "spec.storage.drivesPerNode",
        "at least 1",
    );
}

#[test]
fn cloud_drive_array_fields() {
    let cd = example("tenant-cloud-drive.yaml");
    expect(
        &with(&cd, "    endpoint: fa1-mgmt.example.net\n", ""),
        "spec.array.endpoint",
        "cloud-drive needs",
    );
    expect(
        &with(
            &cd,
            "endpoint: fa1-mgmt.example.net",
            "endpoint: https://fa1-mgmt.example.net",
        ),
        "spec.array.endpoint",
        "without scheme",
    );
    expect(
        &with(&cd, "endpoint: fa1-mgmt.example.net", "endpoint: admin@fa1"),
        "spec.array.endpoint",
        "credentials",
    );
    expect(
        &with(&cd, "tokenUser: pxfa-tenant-cd", "tokenUser: 1user"),
        "spec.array.tokenUser",
        "start with a letter",
    );
}

#[test]
fn storage_class_names_and_access_modes() {
    expect(
        &with(
            &da(),
            "appStorageClass: px-repl3",
            "appStorageClass: PX_Repl3",
        ),
        "spec.storage.appStorageClass",
        "DNS-1123",
    );
    let kv = example("tenant-kubevirt-csi.yaml");
    expect(
        &with(&kv, "accessModes: [ReadWriteOnce]", "accessModes: [RWX]"),
        "spec.storage.accessModes[0]",
        "not an access mode",
    );
}

#[test]
fn metallb_addresses() {
    let y = with(
        &da(),
        "addresses: [\"198.51.100.50-198.51.100.69\"]",
        "addresses: [\"198.51.100.50-198.51.100.69\", \"bogus\"]",
    );
    expect(
        &y,
        "spec.management.metallb.addresses[1]",
        "neither an address range",
    );
    let e = errs(&y);
    assert_eq!(e.len(), 1, "{e:?}");
}

#[test]
fn parsed_spec_round_trips_through_yaml() {
    let t: TenantStorage = parse_spec(&da()).unwrap();
    let yaml = serde_saphyr::to_string(&t).unwrap();
    assert_eq!(parse_spec(&yaml).unwrap(), t);
}
