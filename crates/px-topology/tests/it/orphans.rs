//! Issue #24 item 4, `pxfa orphans` on the brownfield array (MockArray and REST):
//! tenant-demo applied (import, so pxfa's own drives), the seed's other pxfa tenant
//! (tenant-blue) given no spec, a host pxfa tagged whose node is gone with one of
//! tenant-demo's drives connected to it, and a management cluster (an in-memory
//! `ClusterReader`) with one orphan of every cluster kind beside foreign look-alikes.
//! Every kind is found, nothing foreign is listed, the scan writes nothing, the
//! cleanup touches only what was listed, and a second scan is empty.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use flasharray::models::{HostPost, Tag};
use flasharray::{ConnectionTarget, FlashArray, HostName, TagResource, VolumeName};
use flasharray_mock::Seed;
use flasharray_mock::foreign::ForeignView;
use flasharray_mock::{OTHER_TENANT, OTHER_TENANT_NAMESPACE, blue_volume};
use px_topology::orphans::{
    ClaimFact, ClusterFacts, ClusterReader, ClusterTarget, Evidence, HostedClusterFact,
    HotplugPodFact, Known, OrphanKind, PvFact, ScanOptions, TenantObjectFact, TenantRef,
    VmDiskFact, VmFact, cleanup, scan,
};
use px_topology::{PlanOptions, TENANT_LABEL, TENANT_NAMESPACE_LABEL, Tenant};

use super::worlds::{World, apply_step, import_tenant, world};

const GONE_HOST: &str = "pxfa-gone-node";

/// Past the default drive grace: two hours after the array's clock.
fn later(w: &World) -> ScanOptions {
    ScanOptions::at(w.mock.clock().now_ms() + 2 * 3_600_000)
}

/// The tenant's HostedCluster as the management cluster shows it.
fn hosted_cluster(t: &Tenant, available: bool, deleting: bool) -> HostedClusterFact {
    let hc = &t.spec.spec.hosted_cluster;
    HostedClusterFact {
        namespace: hc.namespace.clone(),
        name: hc.name.clone(),
        available,
        deleting,
    }
}

/// The management cluster was read: `t`'s TenantStorage is the only one.
fn cluster_evidence(t: &Tenant) -> Evidence {
    Evidence::Cluster {
        storages: vec![TenantRef::of(t)],
    }
}

/// A management cluster in memory: the facts, and every removal it was asked for.
struct FakeCluster {
    facts: Mutex<ClusterFacts>,
    removed: Mutex<Vec<ClusterTarget>>,
}

#[async_trait]
impl ClusterReader for FakeCluster {
    async fn facts(&self) -> Result<ClusterFacts, String> {
        Ok(self.facts.lock().unwrap().clone())
    }

    async fn remove(&self, target: &ClusterTarget) -> Result<(), String> {
        self.removed.lock().unwrap().push(target.clone());
        let mut f = self.facts.lock().unwrap();
        match target {
            ClusterTarget::PersistentVolume { name } => f.pvs.retain(|p| &p.name != name),
            ClusterTarget::PersistentVolumeClaim { namespace, name } => f
                .claims
                .retain(|c| !(&c.namespace == namespace && &c.name == name)),
            ClusterTarget::VmDisk { vm, volume, .. } => {
                for v in f.vms.iter_mut().filter(|v| &v.name == vm) {
                    v.disks.retain(|d| &d.volume != volume);
                }
            }
            ClusterTarget::Pod { namespace, name } => f
                .hotplug_pods
                .retain(|p| !(&p.namespace == namespace && &p.name == name)),
            ClusterTarget::Object {
                object_kind,
                namespace,
                name,
            } => f.tenant_objects.retain(|o| {
                !(&o.kind == object_kind && &o.namespace == namespace && &o.name == name)
            }),
        }
        Ok(())
    }
}

/// pxfa's labels for `tenant` (`namespace/name`; a bare name as an earlier pxfa
/// labelled, without the namespace); none without one.
fn pxfa_labels(tenant: Option<&str>) -> std::collections::BTreeMap<String, String> {
    let Some(t) = tenant else {
        return Default::default();
    };
    let (ns, name) = t.split_once('/').map_or((None, t), |(ns, n)| (Some(ns), n));
    let mut labels = std::collections::BTreeMap::from([
        (
            "app.kubernetes.io/managed-by".to_string(),
            "pxfa".to_string(),
        ),
        (TENANT_LABEL.to_string(), name.to_string()),
    ]);
    if let Some(ns) = ns {
        labels.insert(TENANT_NAMESPACE_LABEL.to_string(), ns.to_string());
    }
    labels
}

/// tenant-blue, as its tags and labels name it.
fn blue() -> String {
    format!("{OTHER_TENANT_NAMESPACE}/{OTHER_TENANT}")
}

fn object(kind: &str, ns: &str, name: &str, tenant: Option<&str>) -> TenantObjectFact {
    TenantObjectFact {
        kind: kind.into(),
        namespace: ns.into(),
        name: name.into(),
        labels: pxfa_labels(tenant),
    }
}

fn claim(ns: &str, name: &str, tenant: Option<&str>, pv: &str) -> ClaimFact {
    ClaimFact {
        namespace: ns.into(),
        name: name.into(),
        labels: pxfa_labels(tenant),
        phase: Some("Bound".into()),
        volume_name: Some(pv.into()),
    }
}

/// tenant-demo's claims (all Bound but worker 2's first data drive, whose claim is
/// gone), and one orphan of every cluster kind beside a foreign look-alike of each.
fn cluster_of(t: &Tenant) -> (FakeCluster, String) {
    let ns = t.spec.hcp_namespace();
    let me = t.desired.tenant.to_string();
    let mut claims: Vec<ClaimFact> = t
        .manifests()
        .unwrap()
        .into_iter()
        .filter(|m| m.kind == "PersistentVolumeClaim" && m.name.contains("-w"))
        .map(|m| claim(&ns, &m.name, Some(&me), &format!("pv-{}", m.name)))
        .collect();
    let gone = claims
        .iter()
        .position(|c| c.name.contains("-w02-data0"))
        .expect("worker 2's data claim");
    let gone = claims.remove(gone).name;
    let w01 = claims
        .iter()
        .find(|c| c.name.contains("-w01-data0"))
        .unwrap()
        .name
        .clone();
    claims.push(claim(
        "clusters-blue",
        "blue-w00-data0",
        Some(&blue()),
        "pv-x",
    ));
    claims.push(claim("apps", "db", None, "pvc-foreign"));
    let pv_of_blue = blue_volume(0).rsplit_once("-pvc-").unwrap().1.to_string();
    let facts = ClusterFacts {
        claims,
        pvs: vec![
            PvFact {
                name: format!("pvc-{pv_of_blue}"),
                phase: Some("Released".into()),
                claim: Some("clusters-blue/blue-w00-data0".into()),
            },
            PvFact {
                name: "pvc-foreign-released".into(),
                phase: Some("Released".into()),
                claim: Some("apps/old-db".into()),
            },
        ],
        vms: vec![
            VmFact {
                namespace: ns.clone(),
                name: "tenant-demo-workers-2".into(),
                worker_index: Some("2".into()),
                // Attached with `virtctl addvolume --persist`: named after the
                // claim, pxfa's by its serial.
                disks: vec![VmDiskFact {
                    volume: gone.clone(),
                    serial: "pxdata0".into(),
                    claim: gone.clone(),
                }],
            },
            VmFact {
                namespace: "apps".into(),
                name: "someone-elses-vm".into(),
                worker_index: None,
                disks: vec![VmDiskFact {
                    volume: "pxdata0".into(),
                    serial: "pxdata0".into(),
                    claim: "missing".into(),
                }],
            },
        ],
        hotplug_pods: vec![
            HotplugPodFact {
                namespace: ns.clone(),
                name: "hp-volume-gone".into(),
                owner_pod: Some("virt-launcher-gone".into()),
                claims: vec![w01.clone()],
            },
            HotplugPodFact {
                namespace: ns.clone(),
                name: "hp-volume-running".into(),
                owner_pod: Some("virt-launcher-w01".into()),
                claims: vec![w01],
            },
            HotplugPodFact {
                namespace: "apps".into(),
                name: "hp-volume-foreign".into(),
                owner_pod: None,
                claims: vec!["db".into()],
            },
        ],
        launcher_pods: BTreeSet::from([format!("{ns}/virt-launcher-w01")]),
        hosted_clusters: vec![hosted_cluster(t, true, false)],
        // tenant-blue's MetalLB pool outlived it; tenant-demo's pull secret is its
        // own; an unlabelled ConfigMap is nobody's; a ConfigMap an earlier pxfa
        // labelled with tenant-demo's name alone may be any namespace's tenant-demo:
        // kept, reported.
        tenant_objects: vec![
            object(
                "IPAddressPool",
                "metallb-system",
                "blue-hcp-api",
                Some(&blue()),
            ),
            object("Secret", "clusters", "demo-pull-secret", Some(&me)),
            object("ConfigMap", "clusters", "foreign-config", None),
            object(
                "ConfigMap",
                "clusters",
                "demo-old-config",
                Some(&t.desired.tenant.name),
            ),
        ],
        tenant_objects_unread: None,
    };
    let fake = FakeCluster {
        facts: Mutex::new(facts),
        removed: Mutex::new(Vec::new()),
    };
    (fake, gone)
}

/// A host pxfa tagged (shared) for a management node that is gone, with one of
/// tenant-demo's drives privately connected to it.
async fn gone_node_host(a: &dyn FlashArray, drive: &str) {
    let h = HostName::new(GONE_HOST).unwrap();
    a.create_hosts(
        std::slice::from_ref(&h),
        &HostPost::default().with_wwns(vec!["20000025B5FF0E01".into()]),
    )
    .await
    .unwrap();
    let tags: Vec<Tag> = [
        ("managed-by", "pxfa"),
        ("scope", "shared"),
        ("role", "mgmt-host"),
    ]
    .iter()
    .map(|(k, v)| Tag::new(GONE_HOST, "pxfa.io", *k, *v))
    .collect();
    a.set_tags(TagResource::Host, &tags).await.unwrap();
    a.create_connections(
        &ConnectionTarget::Host(h),
        &[VolumeName::new(drive).unwrap()],
        None,
    )
    .await
    .unwrap();
}

async fn orphans_in(w: &World) {
    let spec = import_tenant();
    apply_step(w, &spec, PlanOptions::default()).await;
    let t = Tenant::from_spec(spec, Path::new("spec.yaml")).unwrap();
    let a = w.array();
    let w02 = t
        .desired
        .volumes
        .iter()
        .find(|v| v.name.as_str().contains("-w02-data0"))
        .unwrap()
        .name
        .to_string();
    let w00 = t
        .desired
        .volumes
        .iter()
        .find(|v| v.name.as_str().contains("-w00-meta"))
        .unwrap()
        .name
        .to_string();
    gone_node_host(a, &w00).await;
    let (cluster, _) = cluster_of(&t);
    // The management cluster holds tenant-demo's TenantStorage and HostedCluster,
    // and neither of tenant-blue: tenant-blue is gone on evidence.
    let known = Known {
        evidence: cluster_evidence(&t),
        tenants: vec![t],
        unloaded: Vec::new(),
    };

    w.mock.reset_stats();
    let before = ForeignView::read(a, OTHER_TENANT).await.unwrap();
    let r = scan(a, Some(&cluster), &known, &later(w)).await.unwrap();
    assert_eq!(
        w.mock.stats().writes,
        0,
        "{}: the scan writes nothing",
        w.name
    );
    assert!(cluster.removed.lock().unwrap().is_empty());
    assert!(r.not_checked.is_empty(), "{:?}", r.not_checked);
    for (kind, n) in r.counts() {
        assert!(
            n > 0,
            "{}: {} found: {:#?}",
            w.name,
            kind.as_str(),
            r.orphans
        );
    }
    let listed: Vec<&str> = r.orphans.iter().map(|o| o.object.as_str()).collect();
    // Exactly these, and nothing foreign (the seed's management volumes and hosts,
    // ESX, analytics, old-scratch; the foreign PV, claim, VM and hotplug pod).
    let expected: BTreeSet<String> = [
        format!("pod {OTHER_TENANT}"),
        format!("volume {w02}"),
        format!("host {GONE_HOST}"),
        format!("connection {w00} -> {GONE_HOST}"),
        "PersistentVolume pvc-".to_string(),
        "PersistentVolumeClaim clusters-blue/blue-w00-data0".to_string(),
        "VirtualMachine ".to_string()
            + &known.tenants[0].spec.hcp_namespace()
            + "/tenant-demo-workers-2 disk",
        "Pod ".to_string() + &known.tenants[0].spec.hcp_namespace() + "/hp-volume-gone",
        "IPAddressPool metallb-system/blue-hcp-api".to_string(),
    ]
    .into();
    for e in &expected {
        assert!(
            listed.iter().any(|l| l.contains(e.as_str())),
            "{}: {e} in {listed:#?}",
            w.name
        );
    }
    let blue_volumes =
        (0..6).filter(|i| listed.contains(&format!("volume {}", blue_volume(*i)).as_str()));
    assert_eq!(blue_volumes.count(), 6, "{listed:#?}");
    assert_eq!(listed.len(), expected.len() + 6, "{}: {listed:#?}", w.name);
    for foreign in [
        "px_5c1e7a3b-1f",
        "px_5c1e7a3b-2a",
        "esx",
        "analytics",
        "old-scratch",
        "px-mgmt-worker",
        "foreign",
        "someone-elses",
        "apps/",
    ] {
        assert!(
            !listed.iter().any(|l| l.contains(foreign)),
            "{}: {foreign} listed: {listed:#?}",
            w.name
        );
    }
    assert!(r.orphans.iter().all(|o| !o.evidence.is_empty()));
    // Only the earlier pxfa's ConfigMap is kept unaccounted for, with why.
    assert_eq!(r.unaccounted.len(), 1, "{:#?}", r.unaccounted);
    assert_eq!(
        r.unaccounted[0].objects,
        ["ConfigMap clusters/demo-old-config"]
    );
    assert!(
        r.unaccounted[0].evidence.contains("may own it"),
        "{}",
        r.unaccounted[0].evidence
    );
    assert!(!listed.iter().any(|l| l.contains("demo-old-config")));
    let blue = r
        .orphans
        .iter()
        .find(|o| o.object == format!("pod {OTHER_TENANT}"))
        .unwrap();
    assert!(
        blue.evidence.contains("no TenantStorage")
            && blue.evidence.contains("no HostedCluster of it"),
        "{}",
        blue.evidence
    );
    assert!(r.safe_mode.enabled, "the brownfield array runs SafeMode");

    let done = cleanup(a, Some(&cluster), &r).await;
    assert!(done.is_success(), "{}: {done:#?}", w.name);
    assert_eq!(
        w.mock
            .stats()
            .per_op
            .keys()
            .filter(|op| format!("{op:?}").contains("Eradicate"))
            .count(),
        0,
        "never eradicates"
    );
    // Only listed objects changed.
    let after = ForeignView::read(a, OTHER_TENANT).await.unwrap();
    for change in after.changes_since(&before) {
        assert!(
            [w02.as_str(), w00.as_str(), GONE_HOST, &blue_volume(0)]
                .iter()
                .any(|n| change
                    .to_ascii_lowercase()
                    .contains(&n.to_ascii_lowercase())),
            "{}: unlisted change {change}",
            w.name
        );
    }
    assert_eq!(cluster.removed.lock().unwrap().len(), 5, "{}", w.name);

    let again = scan(a, Some(&cluster), &known, &later(w)).await.unwrap();
    assert!(again.is_empty(), "{}: {:#?}", w.name, again.orphans);
    assert!(
        again
            .pending_eradication
            .iter()
            .any(|p| p.object == format!("pod {OTHER_TENANT}")),
        "{:#?}",
        again.pending_eradication
    );
}

#[tokio::test]
async fn every_kind_found_nothing_foreign_zero_writes_and_clean_after_cleanup() {
    for over_rest in [false, true] {
        let w = world(Seed::brownfield(), over_rest).await;
        orphans_in(&w).await;
        w.close().await;
    }
}

#[tokio::test]
async fn without_a_cluster_the_array_kinds_only_and_a_tenant_given_is_kept() {
    let w = world(Seed::brownfield(), false).await;
    let spec = import_tenant();
    apply_step(&w, &spec, PlanOptions::default()).await;
    let t = Tenant::from_spec(spec, Path::new("spec.yaml")).unwrap();
    let a = w.array();
    // tenant-blue exists (as a tenant that could not be loaded): its objects are
    // no orphans, and the host rules wait for its nodes.
    let known = Known {
        tenants: vec![t],
        unloaded: vec![(
            TenantRef::new(Some(OTHER_TENANT_NAMESPACE), OTHER_TENANT),
            "invalid spec".into(),
        )],
        evidence: Evidence::default(),
    };
    let r = scan(a, None, &known, &later(&w)).await.unwrap();
    assert!(r.is_empty(), "{:#?}", r.orphans);
    let skipped: BTreeSet<OrphanKind> = r.not_checked.iter().map(|n| n.kind).collect();
    let rest: BTreeSet<OrphanKind> = OrphanKind::ALL
        .into_iter()
        .filter(|k| *k != OrphanKind::TenantGone)
        .collect();
    assert_eq!(skipped, rest);
    assert!(r.checked == vec![OrphanKind::TenantGone], "{:?}", r.checked);
    w.close().await;
}

/// A gone realm tenant (cloud-drive-realm applied, then given no spec): its pod is
/// a tenant-gone orphan and so is its realm, which holds only that pod; a realm
/// holding an untagged pod beside a gone tenant's is never listed. The scan writes
/// nothing; the cleanup soft-destroys the pod, then the realm (the array refuses a
/// realm with a live pod, and the realm with the untagged pod stays live); a
/// second scan is empty and lists the realm as pending eradication.
#[tokio::test]
async fn a_gone_tenants_realm_is_found_and_soft_destroyed_after_its_pod() {
    use flasharray::models::{PodPost, RealmPatch, RealmPost};
    use flasharray::{ListParams, PodName, RealmName};
    const REALM: &str = "tenant-cdr-realm";
    for over_rest in [false, true] {
        let w = world(Seed::Empty, over_rest).await;
        apply_step(
            &w,
            &crate::support::example("cloud-drive-realm"),
            PlanOptions::default(),
        )
        .await;
        let a = w.array();
        // Another realm: a pod tagged for the same gone tenant beside one nobody tagged.
        let mixed = RealmName::new("mixed-realm").unwrap();
        a.create_realms(std::slice::from_ref(&mixed), &RealmPost::default())
            .await
            .unwrap();
        let (tagged, untagged) = (
            PodName::new("mixed-realm::cdr-extra").unwrap(),
            PodName::new("mixed-realm::someone-else").unwrap(),
        );
        a.create_pods(&[tagged.clone(), untagged], &PodPost::default())
            .await
            .unwrap();
        let tags: Vec<Tag> = [
            ("managed-by", "pxfa"),
            ("tenant", "tenant-cdr"),
            ("tenant-namespace", "default"),
        ]
        .iter()
        .map(|(k, v)| Tag::new(tagged.as_str(), "pxfa.io", *k, *v))
        .collect();
        a.set_tags(TagResource::Pod, &tags).await.unwrap();
        // The array's rule: a realm holding a live pod is not destroyed.
        let refused = a
            .patch_realms(
                std::slice::from_ref(&mixed),
                &RealmPatch::default().with_destroyed(true),
                false,
            )
            .await;
        assert!(refused.is_err(), "{}: {refused:?}", w.name);

        // The user states that no spec given (none) leaves a tenant out.
        let everyone = Known {
            evidence: Evidence::Specs { complete: true },
            ..Known::default()
        };
        w.mock.reset_stats();
        let r = scan(a, None, &everyone, &later(&w)).await.unwrap();
        assert_eq!(
            w.mock.stats().writes,
            0,
            "{}: a scan writes nothing",
            w.name
        );
        let objects: BTreeSet<&str> = r.orphans.iter().map(|o| o.object.as_str()).collect();
        assert!(
            objects.contains(format!("realm {REALM}").as_str()),
            "{objects:?}"
        );
        assert!(
            objects.contains("pod tenant-cdr-realm::tenant-cdr"),
            "{objects:?}"
        );
        assert!(
            objects.contains("pod mixed-realm::cdr-extra"),
            "{objects:?}"
        );
        assert!(
            !objects
                .iter()
                .any(|o| o.contains("mixed-realm") && o.starts_with("realm")),
            "{}: a realm holding an untagged pod is not pxfa's: {objects:?}",
            w.name
        );
        let realm = r
            .orphans
            .iter()
            .find(|o| o.object == format!("realm {REALM}"))
            .unwrap();
        assert_eq!(realm.kind, OrphanKind::TenantGone);
        assert!(
            realm.evidence.contains("tenant default/tenant-cdr"),
            "{}",
            realm.evidence
        );

        let done = cleanup(a, None, &r).await;
        assert!(done.is_success(), "{}: {done:#?}", w.name);
        let realms = a.list_realms(&ListParams::all()).await.unwrap();
        let state = |n: &str| realms.iter().find(|r| r.name == n).map(|r| r.destroyed);
        assert_eq!(
            state(REALM),
            Some(true),
            "{}: soft-destroyed, recoverable",
            w.name
        );
        assert_eq!(state("mixed-realm"), Some(false), "{}: kept", w.name);

        let again = scan(a, None, &everyone, &later(&w)).await.unwrap();
        assert!(again.is_empty(), "{}: {:#?}", w.name, again.orphans);
        assert!(
            again
                .pending_eradication
                .iter()
                .any(|p| p.object == format!("realm {REALM}")),
            "{}: {:?}",
            w.name,
            again.pending_eradication
        );
        w.close().await;
    }
}

/// Issue #34 item 2: a tenant left out of the specs is not gone. Given tenant-demo's
/// spec alone and no management cluster, the seed's tenant-blue is listed as not
/// accounted for with its objects, nothing of it is an orphan, and a cleanup of
/// that report changes nothing of it; only the user's statement that the specs
/// are every tenant makes it gone, and then each object names that evidence.
#[tokio::test]
async fn a_tenant_left_out_of_the_specs_is_kept_unless_they_are_stated_complete() {
    let blue_id = format!("{OTHER_TENANT_NAMESPACE}/{OTHER_TENANT}");
    for over_rest in [false, true] {
        let w = world(Seed::brownfield(), over_rest).await;
        let spec = import_tenant();
        apply_step(&w, &spec, PlanOptions::default()).await;
        let t = Tenant::from_spec(spec, Path::new("spec.yaml")).unwrap();
        let a = w.array();
        let known = Known {
            tenants: vec![t],
            ..Known::default()
        };
        let before = ForeignView::read(a, OTHER_TENANT).await.unwrap();
        let r = scan(a, None, &known, &later(&w)).await.unwrap();
        assert!(
            r.orphans
                .iter()
                .all(|o| o.tenant.as_deref() != Some(blue_id.as_str())),
            "{}: {:#?}",
            w.name,
            r.orphans
        );
        assert_eq!(r.unaccounted.len(), 1, "{:#?}", r.unaccounted);
        let blue = &r.unaccounted[0];
        assert_eq!(blue.tenant, blue_id);
        assert_eq!(blue.objects.len(), 7, "pod and six drives: {blue:#?}");
        assert!(blue.objects.contains(&format!("pod {OTHER_TENANT}")));
        assert!(
            blue.evidence.contains("no evidence it is gone"),
            "{blue:#?}"
        );
        let skipped: BTreeSet<OrphanKind> = r.not_checked.iter().map(|n| n.kind).collect();
        assert!(
            skipped.contains(&OrphanKind::HostWithoutNode),
            "another tenant's nodes may use pxfa's shared hosts: {skipped:?}"
        );
        let done = cleanup(a, None, &r).await;
        assert!(done.is_success(), "{done:#?}");
        let after = ForeignView::read(a, OTHER_TENANT).await.unwrap();
        assert!(
            after.changes_since(&before).is_empty(),
            "{}: {:?}",
            w.name,
            after.changes_since(&before)
        );

        let complete = Known {
            evidence: Evidence::Specs { complete: true },
            ..known
        };
        let r = scan(a, None, &complete, &later(&w)).await.unwrap();
        let gone: Vec<_> = r
            .orphans
            .iter()
            .filter(|o| o.tenant.as_deref() == Some(blue_id.as_str()))
            .collect();
        assert_eq!(gone.len(), 7, "{:#?}", r.orphans);
        assert!(gone.iter().all(
            |o| o.kind == OrphanKind::TenantGone && o.evidence.contains("--all-tenants-given")
        ));
        assert!(r.unaccounted.is_empty());
        w.close().await;
    }
}

/// Issue #34 item 3: `unbound-drive` selects only a drive no claim backs in any
/// phase, older than the grace, of a tenant whose HostedCluster is made and
/// stays. Worker 0's data claim is gone and worker 1's is Pending: only worker
/// 0's drive is selected, and only past the grace with the HostedCluster
/// available; the cleanup leaves the Pending, claimed and young drives live.
#[tokio::test]
async fn young_pending_and_claimed_drives_and_those_of_a_cluster_being_made_survive() {
    for over_rest in [false, true] {
        let w = world(Seed::Empty, over_rest).await;
        let spec = import_tenant();
        apply_step(&w, &spec, PlanOptions::default()).await;
        let t = Tenant::from_spec(spec, Path::new("spec.yaml")).unwrap();
        let a = w.array();
        let ns = t.spec.hcp_namespace();
        let me = t.desired.tenant.to_string();
        let mut claims: Vec<ClaimFact> = t
            .manifests()
            .unwrap()
            .into_iter()
            .filter(|m| m.kind == "PersistentVolumeClaim" && m.name.contains("-w"))
            .map(|m| claim(&ns, &m.name, Some(&me), &format!("pv-{}", m.name)))
            .collect();
        claims.retain(|c| !c.name.contains("-w00-data0"));
        let pending = claims
            .iter_mut()
            .find(|c| c.name.contains("-w01-data0"))
            .unwrap();
        pending.phase = Some("Pending".into());
        pending.volume_name = None;
        let drive = |part: &str| {
            t.desired
                .volumes
                .iter()
                .find(|v| v.name.as_str().contains(part))
                .unwrap()
                .name
                .to_string()
        };
        let (unclaimed, pending_drive) = (drive("-w00-data0"), drive("-w01-data0"));
        let facts = |hc: HostedClusterFact| FakeCluster {
            facts: Mutex::new(ClusterFacts {
                claims: claims.clone(),
                hosted_clusters: vec![hc],
                ..ClusterFacts::default()
            }),
            removed: Mutex::new(Vec::new()),
        };
        let known = Known {
            evidence: cluster_evidence(&t),
            tenants: vec![t.clone()],
            unloaded: Vec::new(),
        };
        let unbound = |r: &px_topology::orphans::OrphanReport| -> Vec<String> {
            r.orphans
                .iter()
                .filter(|o| o.kind == OrphanKind::UnboundDrive)
                .map(|o| o.object.clone())
                .collect()
        };
        let young = ScanOptions::at(w.mock.clock().now_ms() + 60_000);
        for (hc, opts, why) in [
            (
                hosted_cluster(&t, true, false),
                young,
                "younger than the grace",
            ),
            (
                hosted_cluster(&t, false, false),
                later(&w),
                "HostedCluster being made",
            ),
            (
                hosted_cluster(&t, true, true),
                later(&w),
                "HostedCluster being deleted",
            ),
        ] {
            let r = scan(a, Some(&facts(hc)), &known, &opts).await.unwrap();
            assert!(
                unbound(&r).is_empty(),
                "{}: {why}: {:#?}",
                w.name,
                r.orphans
            );
        }
        let cluster = facts(hosted_cluster(&t, true, false));
        let r = scan(a, Some(&cluster), &known, &later(&w)).await.unwrap();
        assert_eq!(unbound(&r), [format!("volume {unclaimed}")], "{}", w.name);
        let o = r
            .orphans
            .iter()
            .find(|o| o.kind == OrphanKind::UnboundDrive)
            .unwrap();
        assert_eq!(o.age_ms, Some(2 * 3_600_000));
        assert!(o.evidence.contains("in any phase"), "{}", o.evidence);
        let done = cleanup(a, Some(&cluster), &r).await;
        assert!(done.is_success(), "{done:#?}");
        let vols = a
            .list_volumes(&flasharray::ListParams::all())
            .await
            .unwrap();
        let destroyed = |n: &str| vols.iter().find(|v| v.name == n).map(|v| v.destroyed);
        assert_eq!(destroyed(&unclaimed), Some(true), "{}", w.name);
        assert_eq!(
            destroyed(&pending_drive),
            Some(false),
            "{}: Pending claim",
            w.name
        );
        for v in &t.desired.volumes {
            if v.name.as_str() != unclaimed {
                assert_eq!(
                    destroyed(v.name.as_str()),
                    Some(false),
                    "{}: {}",
                    w.name,
                    v.name
                );
            }
        }
        w.close().await;
    }
}
