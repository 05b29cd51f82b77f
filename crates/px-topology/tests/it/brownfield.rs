//! The example tenant on the brownfield array (a shared production array, see
//! `flasharray_mock::Seed::Brownfield`) and on an empty one, through the
//! `FlashArray` trait on `MockArray` and over HTTPS against the simulator: every
//! foreign object stays exactly as it was.

use flasharray::rest::RestArray;
use flasharray::{FlashArray, ListParams};
use flasharray_mock::foreign::ForeignView;
use flasharray_mock::{MockArray, OTHER_TENANT, Seed};
use flasharray_sim::{SimConfig, Simulator};
use px_topology::spec::{Attach, TenantStorage};
use px_topology::{Action, ApplyOptions, DesiredState, Kind, Plan, PlanOptions};

use crate::support;
use crate::support::tenant::{Planned, apply, planned, quiet};

const TOKEN: &str = "5e2a1c3d-0f4b-4e7a-9c1d-2b3a4c5d6e7f";

fn example() -> TenantStorage {
    support::example("direct-access")
}

/// Import through the management host group: the variant that makes volumes,
/// memberships and connections on the shared array.
fn host_group() -> TenantStorage {
    let mut t = support::as_import(example());
    t.spec.storage.attach = Attach::HostGroup;
    assert!(t.validate().is_empty(), "{:#?}", t.validate());
    t
}

fn desired(t: &TenantStorage) -> DesiredState {
    support::desired_of(t)
}

fn mock(seed: Seed) -> MockArray {
    support::seeded_mock(seed)
}

async fn plan_on(a: &dyn FlashArray, d: &DesiredState) -> Plan {
    planned_on(a, d).await.plan().clone()
}

async fn planned_on<'a>(a: &'a dyn FlashArray, d: &DesiredState) -> Planned<'a> {
    planned(a, d, PlanOptions::default()).await
}

/// Plans, applies, checks the foreign view and that a second run plans nothing
/// and writes nothing; returns the first plan.
async fn apply_twice(m: &MockArray, a: &dyn FlashArray, d: &DesiredState) -> Plan {
    let before = ForeignView::read(a, &d.tenant.to_string()).await.unwrap();
    let staged = planned_on(a, d).await;
    let p = staged.plan().clone();
    assert!(p.is_applicable(), "{}", p.to_text(false));
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    let after = ForeignView::read(a, &d.tenant.to_string()).await.unwrap();
    assert_eq!(after.changes_since(&before), Vec::<String>::new());
    let again_planned = planned_on(a, d).await;
    let again = again_planned.plan().clone();
    assert!(!again.has_changes(), "{}", again.to_text(true));
    m.reset_stats();
    let r = apply(again_planned, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    assert_eq!(m.stats().writes, 0, "re-apply writes nothing");
    p
}

#[tokio::test]
async fn brownfield_fada_dynamic_applies_and_reapplies_with_zero_writes() {
    for seed in [Seed::Empty, Seed::brownfield()] {
        let m = mock(seed);
        let d = desired(&example());
        let p = apply_twice(&m, &m, &d).await;
        // Only the pod: no host, group, volume or connection on a shared array.
        let kinds: Vec<Kind> = p.actionable().map(|c| c.kind).collect();
        assert_eq!(kinds, [Kind::Pod], "{}", p.to_text(true));
        assert!(p.host_map.is_empty());
        assert!(p.to_text(false).contains("pxfa plans no hosts"));
    }
}

#[tokio::test]
async fn brownfield_host_group_uses_existing_hosts_and_creates_none() {
    let m = mock(Seed::brownfield());
    let hosts_before = m.list_hosts(&ListParams::all()).await.unwrap();
    let d = desired(&host_group());
    let p = apply_twice(&m, &m, &d).await;
    assert!(
        p.actionable()
            .all(|c| !(c.kind == Kind::Host && c.action == Action::Create)),
        "{}",
        p.to_text(true)
    );
    let map: Vec<(&str, &str)> = p
        .host_map
        .iter()
        .map(|h| (h.node.as_str(), h.hosts[0].as_str()))
        .collect();
    assert_eq!(
        map,
        [
            ("worker-01", "px-mgmt-worker-01"),
            ("worker-02", "px-mgmt-worker-02"),
            ("worker-03", "worker-03"),
        ]
    );
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("px-mgmt-worker-01 lacks 2100F4C7AA002707")),
        "{:?}",
        p.warnings
    );
    let hosts_after = m.list_hosts(&ListParams::all()).await.unwrap();
    assert_eq!(hosts_after.len(), hosts_before.len(), "no host created");
    let decoy = hosts_after.iter().find(|h| h.name == "worker-02").unwrap();
    assert_eq!(decoy.host_group.name, None, "the decoy is never touched");
    // On the empty array the same spec creates the three hosts under their names.
    let e = mock(Seed::Empty);
    let p = apply_twice(&e, &e, &d).await;
    assert_eq!(
        p.actionable()
            .filter(|c| c.kind == Kind::Host && c.action == Action::Create)
            .count(),
        3
    );
}

#[tokio::test]
async fn another_pxfa_tenant_is_never_touched() {
    let m = mock(Seed::brownfield());
    let blue_before = ForeignView::read(&m, "tenant-demo").await.unwrap();
    for t in [example(), host_group()] {
        apply_twice(&m, &m, &desired(&t)).await;
    }
    // tenant-blue's pod, drives, tags and connection are as seeded.
    let after = ForeignView::read(&m, "tenant-demo").await.unwrap();
    assert_eq!(after.changes_since(&blue_before), Vec::<String>::new());
    assert!(after.contains(&format!("pod:{OTHER_TENANT}")));
}

#[tokio::test]
async fn refused_plan_makes_no_write() {
    let m = mock(Seed::brownfield());
    let d = desired(&host_group());
    apply_twice(&m, &m, &d).await;
    // Capacity down: the drives would shrink; the plan refuses, naming the flag.
    let mut smaller = host_group();
    smaller.spec.storage.capacity = flasharray::Size::tib(2);
    let d2 = desired(&smaller);
    let p = plan_on(&m, &d2).await;
    assert!(!p.is_applicable());
    assert!(
        p.refusals
            .iter()
            .all(|r| r.resolution.contains("--allow-shrink")),
        "{:?}",
        p.refusals
    );
}

#[tokio::test]
async fn brownfield_over_https_keeps_foreign_objects() {
    let m = mock(Seed::brownfield());
    let sim = Simulator::start(m.clone(), SimConfig::new(TOKEN.into()))
        .await
        .unwrap();
    let rest = RestArray::builder(sim.url())
        .api_token(TOKEN.into())
        .ca_pem(sim.cert_pem().as_bytes().to_vec())
        .build()
        .unwrap();
    for t in [example(), host_group()] {
        apply_twice(&m, &rest, &desired(&t)).await;
    }
    rest.close().await.unwrap();
    sim.shutdown().await;
}

#[tokio::test]
async fn well_filled_brownfield_array_trips_pxfa019_only_past_its_free_space() {
    use px_topology::{ArraySpaceInfo, size};
    let m = mock(Seed::brownfield());
    let space = ArraySpaceInfo::from(&m.get_array_space().await.unwrap());
    assert!(space.used > flasharray::Size::tib(73), "{space:?}");
    let with = |capacity: u64, workers: u32| {
        let mut t = example();
        t.spec.storage.capacity = flasharray::Size::tib(capacity);
        t.spec.hosted_cluster.replicas = workers;
        size(&t, Some(space.clone())).unwrap()
    };
    // 4Ti at 3 or 4 workers and 6Ti at 4 workers fit in ≈ 26.8 TiB free.
    for (c, w) in [(4, 3), (4, 4), (6, 4)] {
        let s = with(c, w);
        assert!(
            !s.findings.iter().any(|f| f.rule == "PXFA019"),
            "{c}Ti at {w}: {}",
            s.total_provisioned
        );
    }
    // 9Ti at 4 workers provisions ≈ 27 TiB: more than the array has free.
    let s = with(9, 4);
    assert!(
        s.findings.iter().any(|f| f.rule == "PXFA019"),
        "{}",
        s.total_provisioned
    );
}

#[tokio::test]
async fn drives_in_use_are_read_from_the_tenants_tags_only() {
    use px_topology::read_drives_in_use;
    let m = mock(Seed::brownfield());
    m.add_admin(crate::support::tenant::ADMIN);
    let none = read_drives_in_use(&m, &"t1".into()).await.unwrap();
    assert_eq!(none.drives_per_node, 0);
    let d = crate::support::tenant::desired("t1", 3, flasharray::Size::gib(512));
    let staged = planned_on(&m, &d).await;
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    let got = read_drives_in_use(&m, &"t1".into()).await.unwrap();
    // tenant-blue's 4 TiB drives on the same array do not count.
    assert_eq!(got.data, flasharray::Size::gib(512));
    assert_eq!(got.metadata, flasharray::Size::gib(64));
    assert_eq!(got.drives_per_node, 2);
    assert_eq!(got.capacity_before, None);
}

#[tokio::test]
async fn report_counts_what_was_written_on_the_array() {
    let m = mock(Seed::brownfield());
    let d = desired(&host_group());
    let staged = planned_on(&m, &d).await;
    m.reset_stats();
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    let w = r.writes;
    // 6 drives, the pod and the group; three foreign hosts join it; 6 connections.
    assert_eq!(
        (w.created, w.memberships, w.connected, w.destroyed),
        (8, 3, 6, 0),
        "{w:?}"
    );
    assert!(
        w.total() as u64 >= m.stats().writes,
        "{w:?} {:?}",
        m.stats()
    );
    assert!(w.summary_line(r.failed.len()).starts_with(&format!(
        "Wrote {} objects on the array (8 created",
        w.total()
    )));
    let again_planned = planned_on(&m, &d).await;
    let r = apply(again_planned, &ApplyOptions::default(), &quiet).await;
    assert_eq!(r.writes.total(), 0);
}
