//! Generated inputs for the spec parser and validator: arbitrary YAML-ish text and
//! valid specs with one value replaced must never panic or take long, and whatever
//! validation accepts must size without error within every derived limit.

use std::path::Path;
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::limits::{MAX_ARRAY_VOLUME, MAX_DRIVES_PER_NODE};
use super::{TenantStorage, parse_spec, parse_valid_spec};

/// Longest one parse and validation may take in a debug build.
const SLOW: Duration = Duration::from_millis(500);

fn examples() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    [
        "tenant-direct-access.yaml",
        "tenant-cloud-drive.yaml",
        "tenant-kubevirt-csi.yaml",
    ]
    .iter()
    .map(|n| std::fs::read_to_string(dir.join(n)).unwrap())
    .collect()
}

/// What an accepted spec must satisfy: sizing succeeds and stays within the
/// array's and Portworx's limits (the derived checks and sizing agree).
fn accepted_spec_is_within_limits(t: &TenantStorage) -> Result<(), TestCaseError> {
    let s = crate::sizing::size(t, None)
        .map_err(|e| TestCaseError::fail(format!("validated spec fails sizing: {e}")))?;
    if s.has_pool {
        prop_assert!(s.drives_per_node <= MAX_DRIVES_PER_NODE);
        prop_assert!(s.drive_size <= MAX_ARRAY_VOLUME);
        prop_assert!(s.metadata_size <= MAX_ARRAY_VOLUME);
        let in_pod = t.mode().portworx_creates_drives() || t.spec.storage.pod.is_some();
        if in_pod {
            prop_assert!(s.pod_quota <= MAX_ARRAY_VOLUME, "quota {}", s.pod_quota);
        }
        if t.mode().uses_management_hosts() && t.spec.storage.attach == super::Attach::HostGroup {
            let volumes = u64::from(s.storage_nodes) * (u64::from(s.drives_per_node) + 1);
            prop_assert!(volumes <= super::limits::MAX_LUNS);
        }
    }
    Ok(())
}

/// Values that probe types and ranges: huge and negative numbers, sizes with and
/// without units, odd strings, YAML structure.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        (0u64..100_000).prop_map(|n| n.to_string()),
        (
            any::<u32>(),
            prop::sample::select(vec!["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "G", "T", "P"])
        )
            .prop_map(|(n, u)| format!("{n}{u}")),
        Just("18446744073709551615".to_string()),
        Just("-1".to_string()),
        Just("1.5".to_string()),
        Just("null".to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just("\"\"".to_string()),
        "[a-zA-Z0-9._:/-]{0,70}",
        "\\PC{0,20}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_never_panics_or_hangs(text in "\\PC{0,400}") {
        let start = Instant::now();
        if let Ok(t) = parse_valid_spec(&text) {
            accepted_spec_is_within_limits(&t)?;
        }
        prop_assert!(start.elapsed() < SLOW);
    }

    #[test]
    fn yaml_shaped_text_never_panics_or_hangs(
        lines in prop::collection::vec(
            ("[ -]{0,6}", "[a-zA-Z]{1,12}", prop::sample::select(vec![": ", ":", " - ", ": &a ", ": *a ", ": [", ": {"]), value()),
            0..40,
        )
    ) {
        let text: String = lines
            .iter()
            .map(|(indent, key, sep, v)| format!("{indent}{key}{sep}{v}\n"))
            .collect();
        let start = Instant::now();
        if let Ok(t) = parse_valid_spec(&text) {
            accepted_spec_is_within_limits(&t)?;
        }
        prop_assert!(start.elapsed() < SLOW);
    }

    /// One value of a valid example replaced by a probing value: refused with a
    /// field path, or accepted and within every limit; never a panic.
    #[test]
    fn mutated_valid_specs_are_refused_or_within_limits(
        which in 0usize..3,
        line in any::<prop::sample::Index>(),
        v in value(),
    ) {
        let text = &examples()[which];
        let lines: Vec<&str> = text.lines().collect();
        let i = line.index(lines.len());
        let mutated: Vec<String> = lines
            .iter()
            .enumerate()
            .map(|(k, l)| match (k == i, l.split_once(": ")) {
                (true, Some((key, _))) => format!("{key}: {v}"),
                _ => (*l).to_string(),
            })
            .collect();
        let mutated = mutated.join("\n");
        let start = Instant::now();
        match parse_valid_spec(&mutated) {
            Ok(t) => accepted_spec_is_within_limits(&t)?,
            Err(errs) => {
                for e in &errs.0 {
                    prop_assert!(!e.path.is_empty());
                    prop_assert!(!e.message.is_empty());
                }
            }
        }
        prop_assert!(start.elapsed() < SLOW);
    }

    /// The numbers that drive sizing, anywhere in their types' ranges: validation
    /// refuses what the array or Portworx would, and accepts only what sizes within
    /// the limits.
    #[test]
    fn sizing_inputs_over_their_whole_types(
        which in 0usize..2,
        // Biased towards the edges of the valid region, so that both sides of every
        // limit are exercised, not only the (vast) invalid part of each type.
        capacity in prop_oneof![any::<u64>(), 0u64..(1 << 53)],
        replicas in prop_oneof![0u32..12, 150u32..220, any::<u32>()],
        replication in prop_oneof![0u8..5, any::<u8>()],
        drives in prop_oneof![0u32..40, any::<u32>()],
        metadata in prop_oneof![any::<u64>(), (60u64 << 30)..(5u64 << 50)],
        ceiling in prop::option::of(prop_oneof![any::<u64>(), (1u64 << 30)..(5u64 << 50)]),
        pod in any::<bool>(),
        host_group in any::<bool>(),
    ) {
        let mut t = parse_spec(&examples()[which]).unwrap();
        t.spec.network = None;
        for n in &mut t.spec.management.nodes {
            n.storage_address = None;
        }
        let s = &mut t.spec.storage;
        s.capacity = flasharray::Size::bytes(capacity);
        s.replication = replication;
        s.drives_per_node = drives;
        s.metadata_size = flasharray::Size::bytes(metadata);
        if !pod && s.mode == super::StorageMode::DirectAccess {
            s.pod = None;
        }
        if host_group {
            s.attach = super::Attach::HostGroup;
        }
        t.spec.hosted_cluster.replicas = replicas;
        t.spec.portworx.max_pool_size = ceiling.map(flasharray::Size::bytes);
        if t.validate().is_empty() {
            accepted_spec_is_within_limits(&t)?;
        }
    }
}

#[test]
fn oversized_input_is_refused_before_parsing() {
    let huge = "a".repeat(super::MAX_SPEC_BYTES + 1);
    let start = Instant::now();
    let e = parse_spec(&huge).unwrap_err();
    assert_eq!(e.path, "document");
    assert!(e.message.contains("more than a spec can be"), "{e}");
    assert!(start.elapsed() < SLOW);
}
