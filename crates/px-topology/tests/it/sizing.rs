//! Pool sizing: the arithmetic, the ceiling, the floors, the array headroom.

use flasharray::Size;
use flasharray::models::ArraySpace;
use flasharray::size::{GIB, TIB};
use proptest::prelude::*;
use px_topology::spec::{TenantStorage, parse_valid_spec};
use px_topology::{ArraySpaceInfo, size};

fn spec(
    mode: &str,
    capacity: &str,
    repl: u8,
    replicas: u32,
    drives: u32,
    extra: &str,
) -> TenantStorage {
    let protocol = if mode == "kubevirt-csi" {
        String::new()
    } else {
        "protocol: iscsi,".into()
    };
    let yaml = format!(
        r#"
apiVersion: pxfa.io/v1alpha1
kind: TenantStorage
metadata: {{name: sz}}
spec:
  hostedCluster: {{name: sz, replicas: {replicas}}}
  storage: {{mode: {mode}, {protocol} capacity: "{capacity}", replication: {repl}, drivesPerNode: {drives}}}
  array: {{endpoint: fa.example.net}}
  management:
    hostGroup: mgmt
    nodes: [{{name: n1, iqns: ["iqn.2020-01.io.pxfa:n1"]}}]
{extra}"#
    );
    parse_valid_spec(&yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

#[test]
fn four_tib_repl3_on_three_nodes() {
    let t = spec("direct-access", "4Ti", 3, 3, 1, "");
    let s = size(&t, None).unwrap();
    assert_eq!(s.raw_capacity, Size::tib(12));
    assert_eq!(s.per_node, Size::tib(4));
    assert_eq!(s.drives_per_node, 1);
    assert_eq!(s.drive_size, Size::tib(4));
    assert_eq!(s.metadata_size, Size::gib(64));
    assert_eq!(s.data_provisioned, Size::tib(12));
    assert_eq!(s.metadata_provisioned, Size::gib(192));
    assert_eq!(s.total_provisioned, Size::bytes(12 * TIB + 192 * GIB));
    // 10 % headroom rounded up to a GiB: (12288 + 192) * 1.1 = 13728 GiB.
    assert_eq!(s.pod_quota, Size::gib(13728));
    assert_eq!(s.effective_usable, Size::tib(4));
    assert!(s.findings.is_empty(), "{:?}", s.findings);
}

#[test]
fn pool_ceiling_adds_drives() {
    // 40Ti x 3 / 3 nodes = 40Ti per node > 15Ti: three drives of 13.34 TiB (rounded up).
    let t = spec("direct-access", "40Ti", 3, 3, 1, "");
    let s = size(&t, None).unwrap();
    assert_eq!(s.drives_per_node, 3);
    assert_eq!(s.drive_size, Size::gib((40 * 1024_u64).div_ceil(3)));
    assert!(s.drive_size <= s.pool_ceiling);
    assert!(s.explain().iter().any(|l| l.contains("raised from 1")));
}

#[test]
fn configurable_ceiling() {
    let t = spec(
        "direct-access",
        "4Ti",
        3,
        3,
        1,
        "  portworx: {maxPoolSize: 1Ti}\n",
    );
    let s = size(&t, None).unwrap();
    assert_eq!(s.pool_ceiling, Size::tib(1));
    assert_eq!(s.drives_per_node, 4);
    assert_eq!(s.drive_size, Size::tib(1));
}

#[test]
fn requested_drives_are_kept_when_larger() {
    let t = spec("cloud-drive", "3Ti", 2, 4, 3, "");
    let s = size(&t, None).unwrap();
    assert_eq!(s.drives_per_node, 3);
    // 6Ti / 4 nodes / 3 drives = 512 GiB.
    assert_eq!(s.drive_size, Size::gib(512));
}

#[test]
fn small_drives_hit_the_floor_and_warn() {
    let t = spec("direct-access", "6Gi", 1, 3, 1, "");
    let s = size(&t, None).unwrap();
    assert_eq!(s.drive_size, Size::gib(8));
    assert!(s.findings.iter().any(|f| f.rule == "PXFA018"));
    let big = size(&spec("direct-access", "1Ti", 3, 3, 1, ""), None).unwrap();
    assert!(!big.findings.iter().any(|f| f.rule == "PXFA018"));
}

#[test]
fn odd_sizes_round_up_to_whole_gib() {
    let t = spec("direct-access", "1000G", 3, 3, 2, "");
    let s = size(&t, None).unwrap();
    assert_eq!(s.drive_size.as_u64() % GIB, 0);
    assert_eq!(s.drive_size.as_u64() % 512, 0);
    assert!(s.effective_usable >= s.usable_capacity);
}

#[test]
fn kubevirt_csi_has_no_pool() {
    let t = spec("kubevirt-csi", "1Ti", 3, 2, 1, "");
    let s = size(&t, None).unwrap();
    assert!(!s.has_pool);
    assert_eq!(s.total_provisioned, Size::bytes(0));
    let e = s.explain();
    assert_eq!(e.len(), 1);
    assert!(e[0].contains("no Portworx pool"), "{e:?}");
}

#[test]
fn px_storev2_node_findings_come_along() {
    let t = spec("direct-access", "1Ti", 3, 3, 1, "");
    let mut t = t;
    t.spec.hosted_cluster.cores = 4;
    let s = size(&t, None).unwrap();
    assert!(s.findings.iter().any(|f| f.rule == "PXFA005"));
}

#[test]
fn replication_above_nodes_is_an_error() {
    let mut t = spec("direct-access", "1Ti", 3, 3, 1, "");
    t.spec.hosted_cluster.replicas = 2;
    let e = size(&t, None).unwrap_err();
    assert_eq!(e.path, "spec.storage.replication");
}

fn array(capacity: u64, used: u64, provisioned: Option<u64>) -> ArraySpaceInfo {
    let mut a = ArraySpace::default();
    a.name = "fa1".into();
    a.capacity = capacity;
    a.space.total_used = Some(used);
    a.space.total_provisioned = provisioned;

    ArraySpaceInfo::from(&a)
}

#[test]
fn headroom_against_the_array() {
    let t = spec("direct-access", "4Ti", 3, 3, 1, "");
    let s = size(&t, Some(array(100 * TIB, 40 * TIB, Some(200 * TIB)))).unwrap();
    let h = s.array.as_ref().unwrap();
    assert_eq!(h.free, Size::tib(60));
    let total = s.total_provisioned.as_u64() as f64;
    assert!((h.percent_of_capacity - total * 100.0 / (100 * TIB) as f64).abs() < 1e-9);
    assert!((h.percent_of_free.unwrap() - total * 100.0 / (60 * TIB) as f64).abs() < 1e-9);
    assert_eq!(
        h.free_after_bytes,
        i128::from(60 * TIB) - i128::from(s.total_provisioned.as_u64())
    );
    assert!(h.provisioning_ratio_after.unwrap() > 2.0);
    assert!(!s.findings.iter().any(|f| f.rule == "PXFA019"));
    assert!(s.explain().iter().any(|l| l.contains("upper bounds")));
}

#[test]
fn headroom_warns_when_it_cannot_fit() {
    let t = spec("direct-access", "4Ti", 3, 3, 1, "");
    let s = size(&t, Some(array(20 * TIB, 10 * TIB, None))).unwrap();
    let h = s.array.as_ref().unwrap();
    assert!(h.free_after_bytes < 0);
    assert!(s.findings.iter().any(|f| f.rule == "PXFA019"));
    assert!(
        s.explain()
            .iter()
            .any(|l| l.contains("free after") && l.contains("-"))
    );
}

#[test]
fn sizing_serializes_for_json_output() {
    let t = spec("direct-access", "4Ti", 3, 3, 1, "");
    let j = serde_json::to_value(size(&t, None).unwrap()).unwrap();
    assert_eq!(j["drive_size"], 4 * TIB);
    assert_eq!(j["mode"], "direct-access");
    assert!(j.get("array").is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn drives_cover_the_request_within_a_gib_and_under_the_ceiling(
        cap_gib in 1u64..200_000,
        repl in 1u8..=3,
        extra_nodes in 0u32..10,
        drives in 1u32..6,
        ceiling_gib in 8u64..20_000,
    ) {
        let replicas = 3 + extra_nodes;
        let mut t = spec("direct-access", "1Ti", 3, 3, 1, "");
        t.spec.hosted_cluster.replicas = replicas;
        t.spec.storage.capacity = Size::gib(cap_gib);
        t.spec.storage.replication = repl;
        t.spec.storage.drives_per_node = drives;
        t.spec.portworx.max_pool_size = Some(Size::gib(ceiling_gib));
        let s = size(&t, None).unwrap();
        let raw = u128::from(cap_gib * GIB) * u128::from(repl);
        let slots = u128::from(replicas) * u128::from(s.drives_per_node);
        let drive = u128::from(s.drive_size.as_u64());
        // Never below the request.
        prop_assert!(drive * slots >= raw);
        prop_assert!(s.effective_usable.as_u64() >= cap_gib * GIB);
        // Never more than 1 GiB per drive over the exact share (unless the 8 GiB floor).
        if drive > u128::from(8 * GIB) {
            prop_assert!(drive * slots < raw + slots * u128::from(GIB));
        }
        // Every drive within the ceiling, whole GiB.
        prop_assert!(s.drive_size <= s.pool_ceiling);
        prop_assert_eq!(s.drive_size.as_u64() % GIB, 0);
        prop_assert!(s.drives_per_node >= drives);
        prop_assert!(s.pod_quota >= s.total_provisioned);
    }
}

#[test]
fn explain_shows_the_arithmetic() {
    let t = spec("direct-access", "40Ti", 3, 3, 1, "");
    let s = size(&t, Some(array(500 * TIB, 100 * TIB, Some(600 * TIB)))).unwrap();
    let lines = s.explain();
    for l in &lines {
        println!("{l}");
    }
    let text = lines.join("\n");
    for needle in [
        "raw capacity      = usable 40 TiB x replication 3 = 120 TiB",
        "per storage node  = 120 TiB / 3 nodes = 40 TiB",
        "drives per node   = 3 (raised from 1",
        "= 13654 GiB (13.33 TiB)",
        "metadata per node = 64 GiB",
        "pod quota",
        "array fa1: capacity 500 TiB, used 100 TiB, free 400 TiB",
        "unprovisioned -",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}

mod in_use {
    use flasharray::Size;
    use px_topology::spec::{CapacityGrowth, TenantStorage};
    use px_topology::{DrivesInUse, Growth, keep_drives_in_use, size};

    use crate::support;

    fn tenant(capacity: u64, workers: u32) -> TenantStorage {
        let mut t = support::example("direct-access");
        t.spec.storage.capacity = Size::tib(capacity);
        t.spec.hosted_cluster.replicas = workers;
        t
    }

    /// The drives of 4Ti at 3 workers (repl 3): 4 TiB data, 64 GiB metadata.
    fn four_tib_drives(capacity_before: Option<u64>) -> DrivesInUse {
        DrivesInUse {
            data: Size::tib(4),
            metadata: Size::gib(64),
            drives_per_node: 1,
            capacity_before: capacity_before.map(Size::tib),
            per_worker: Default::default(),
        }
    }

    fn grown(t: &TenantStorage, in_use: &DrivesInUse) -> px_topology::Sizing {
        keep_drives_in_use(t, size(t, None).unwrap(), in_use)
    }

    #[test]
    fn scale_out_keeps_drive_size_in_use_and_raises_usable() {
        let t = tenant(4, 4);
        let fresh = size(&t, None).unwrap();
        assert_eq!(fresh.drive_size, Size::tib(3), "a fresh sizing re-divides");
        let s = keep_drives_in_use(&t, fresh, &four_tib_drives(Some(4)));
        assert_eq!(s.drive_size, Size::tib(4));
        assert_eq!(
            s.total_provisioned,
            Size::bytes(4 * (4 << 40) + 4 * (64 << 30))
        );
        assert!(s.effective_usable > Size::tib(5), "{}", s.effective_usable);
        assert!(s.pod_quota.as_u64() >= s.total_provisioned.as_u64() * 11 / 10);
        assert_eq!(
            s.growth,
            Some(Growth::Kept {
                drive: Size::tib(4)
            })
        );
        let text = s.explain().join("\n");
        assert!(text.contains("existing drives are never shrunk"), "{text}");
    }

    #[test]
    fn capacity_raise_within_existing_usable_changes_nothing() {
        // 4 workers x 4 TiB / 3 = 5.33 TiB usable already: 5Ti needs no growth.
        let s = grown(&tenant(5, 4), &four_tib_drives(Some(4)));
        assert_eq!(s.drive_size, Size::tib(4));
        assert!(matches!(s.growth, Some(Growth::Kept { .. })), "{s:?}");
        assert!(s.growth.unwrap().refusal(false).is_none());
    }

    #[test]
    fn steady_state_is_the_fresh_sizing() {
        let t = tenant(4, 3);
        let fresh = size(&t, None).unwrap();
        assert_eq!(grown(&t, &four_tib_drives(Some(4))), fresh);
    }

    #[test]
    fn capacity_raise_resizes_within_ceiling() {
        // 6Ti at 4 workers: 4.5 TiB per worker, one drive each: 4 TiB -> 4.5 TiB.
        let t = tenant(6, 4);
        let s = grown(&t, &four_tib_drives(Some(4)));
        assert_eq!(s.drive_size, Size::gib(4608));
        assert_eq!(s.drives_per_node, 1);
        assert_eq!(
            s.growth,
            Some(Growth::Resize {
                from: Size::tib(4),
                to: Size::gib(4608),
                drives_per_node: 1
            })
        );
        // The quota follows the grown drives.
        assert!(s.pod_quota.as_u64() >= (4 * (4608u64 << 30) + 4 * (64 << 30)) * 11 / 10);
        let g = s.growth.clone().unwrap();
        assert!(g.refusal(false).is_none());
        let steps = g.admin_steps().join("\n");
        assert!(
            steps.contains("4608 GiB per data drive")
                && steps.contains("pxctl service pool update --resize <pool-uid>"),
            "{steps}"
        );
        let text = s.explain().join("\n");
        assert!(text.contains("capacity growth: resize"), "{text}");
    }

    #[test]
    fn capacity_raise_beyond_ceiling_is_refused_naming_add_pool() {
        // 16Ti at 3 workers: 16 TiB per worker, past the 15 TiB ceiling.
        let t = tenant(16, 3);
        let s = grown(&t, &four_tib_drives(Some(4)));
        assert_eq!(s.drive_size, Size::tib(4), "nothing grows");
        let (reason, resolution) = s.growth.as_ref().unwrap().refusal(true).unwrap();
        assert!(reason.contains("pool ceiling"), "{reason}");
        assert!(reason.contains("15 TiB"), "{reason}");
        assert!(
            resolution.contains("capacityGrowth: add-pool"),
            "{resolution}"
        );
        assert!(resolution.contains("replicas"), "{resolution}");
        // A higher ceiling in the spec lets the resize through.
        let mut high = tenant(16, 3);
        high.spec.portworx.max_pool_size = Some(Size::tib(20));
        let s = grown(&high, &four_tib_drives(Some(4)));
        assert_eq!(s.drive_size, Size::tib(16));
    }

    #[test]
    fn add_pool_adds_drives_of_the_size_in_use() {
        let mut t = tenant(16, 3);
        t.spec.storage.capacity_growth = CapacityGrowth::AddPool;
        let s = grown(&t, &four_tib_drives(Some(4)));
        // 16 TiB per worker from 4 TiB drives: 4 drives, 3 of them new pools.
        assert_eq!((s.drives_per_node, s.drive_size), (4, Size::tib(4)));
        assert_eq!(
            s.growth,
            Some(Growth::AddPool {
                drive: Size::tib(4),
                from: 1,
                to: 4
            })
        );
        assert_eq!(
            s.total_provisioned,
            Size::bytes(3 * (16 << 40) + 3 * (64 << 30))
        );
        let steps = s.growth.unwrap().admin_steps().join("\n");
        assert!(steps.contains("pxdata1, pxdata2, pxdata3"), "{steps}");
        assert!(
            steps.contains("--newpool") && steps.contains("maintenance --enter"),
            "{steps}"
        );
    }

    #[test]
    fn add_pool_is_capped_per_node() {
        let mut t = tenant(200, 3);
        t.spec.storage.capacity_growth = CapacityGrowth::AddPool;
        let s = grown(&t, &four_tib_drives(Some(4)));
        assert_eq!(s.drives_per_node, 1, "nothing added past the cap");
        let (reason, resolution) = s.growth.unwrap().refusal(false).unwrap();
        assert!(reason.contains("32"), "{reason}");
        assert!(resolution.contains("replicas"), "{resolution}");
    }

    #[test]
    fn capacity_decrease_is_refused_naming_allow_shrink() {
        let t = tenant(3, 3);
        let fresh = size(&t, None).unwrap();
        let s = keep_drives_in_use(&t, fresh.clone(), &four_tib_drives(Some(4)));
        assert_eq!(s.drive_size, fresh.drive_size, "the plan shows the shrink");
        let g = s.growth.unwrap();
        assert_eq!(
            g,
            Growth::Decrease {
                from: Size::tib(4),
                to: Size::tib(3)
            }
        );
        let (reason, resolution) = g.refusal(false).unwrap();
        assert!(reason.contains("cannot shrink"), "{reason}");
        assert!(resolution.contains("--allow-shrink"), "{resolution}");
        assert!(g.refusal(true).is_none(), "--allow-shrink lets it through");
        // Without a recorded capacity the drives are kept (never shrunk).
        let s = grown(&t, &four_tib_drives(None));
        assert_eq!(s.drive_size, Size::tib(4));
    }

    #[test]
    fn retained_drives_count_against_the_pod_quota() {
        // Scaled in from 4 to 3: worker 3's 4 TiB + 64 GiB stay on the array.
        let t = tenant(4, 3);
        let mut in_use = four_tib_drives(Some(4));
        for i in 0..4 {
            in_use.per_worker.insert(i, Size::gib(4096 + 64));
        }
        let s = grown(&t, &in_use);
        let all = 4 * (4160u64 << 30);
        assert!(s.pod_quota.as_u64() >= all * 11 / 10, "{}", s.pod_quota);
        assert_eq!(s.total_provisioned, Size::bytes(3 * (4160u64 << 30)));
        assert!(s.explain().join("\n").contains("retained drives"));
    }

    #[test]
    fn the_drive_count_in_use_wins_over_the_spec() {
        // Two drives per worker in use (an earlier add-pool): every worker keeps two.
        let t = tenant(4, 4);
        let two = DrivesInUse {
            drives_per_node: 2,
            ..four_tib_drives(Some(4))
        };
        let s = grown(&t, &two);
        assert_eq!((s.drives_per_node, s.drive_size), (2, Size::tib(4)));
        let fresh = size(&t, None).unwrap();
        assert_eq!(grown(&t, &DrivesInUse::default()), fresh);
    }
}
