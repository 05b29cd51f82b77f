//! The cluster rules on hand-made facts (the array rules run on MockArray in
//! `tests/it/orphans.rs`).

use std::path::Path;

use super::cluster;
use super::evidence::{self, TenantRef};
use super::seen::{ClaimFact, ClusterFacts, Seen};
use super::{Evidence, Known, OrphanKind, OrphanReport};
use crate::{Tenant, parse_valid_spec};

fn demo() -> Tenant {
    let yaml = include_str!("../../../../examples/tenant-direct-access.yaml");
    Tenant::from_spec(parse_valid_spec(yaml).unwrap(), Path::new("demo.yaml")).unwrap()
}

fn labelled(ns: &str, name: &str, tenant: &str) -> ClaimFact {
    ClaimFact {
        namespace: ns.into(),
        name: name.into(),
        labels: [
            ("app.kubernetes.io/managed-by".into(), "pxfa".into()),
            ("pxfa.io/tenant".into(), tenant.into()),
        ]
        .into(),
        phase: Some("Bound".into()),
        volume_name: Some(format!("pv-{name}")),
    }
}

#[test]
fn claims_a_tenant_renders_are_kept_and_unrendered_ones_without_a_drive_are_leftovers() {
    let t = demo();
    let ns = t.spec.hcp_namespace();
    let rendered = t
        .manifests()
        .unwrap()
        .into_iter()
        .find(|m| m.kind == "PersistentVolumeClaim" && m.name.contains("-w00-data0"))
        .unwrap()
        .name;
    let facts = ClusterFacts {
        claims: vec![
            labelled(&ns, &rendered, "tenant-demo"),
            labelled(&ns, "tenant-demo-w07-data0", "tenant-demo"),
            labelled("apps", "db", "tenant-gone"),
            ClaimFact {
                namespace: "apps".into(),
                name: "plain".into(),
                ..ClaimFact::default()
            },
        ],
        ..ClusterFacts::default()
    };
    // The management cluster was read: no TenantStorage and no HostedCluster of
    // tenant-gone, so its claim is a leftover on evidence.
    let known = Known {
        tenants: vec![t],
        unloaded: Vec::new(),
        evidence: Evidence::Cluster {
            storages: Vec::new(),
        },
    };
    let seen = Seen::default();
    let judged = evidence::judge(&seen, &known, Some(&facts));
    let mut skipped = Vec::new();
    let found = cluster::find(&facts, &known, &judged, &seen, &mut skipped);
    assert!(skipped.is_empty());
    let objects: Vec<&str> = found.iter().map(|o| o.object.as_str()).collect();
    assert_eq!(
        objects,
        [
            format!("PersistentVolumeClaim {ns}/tenant-demo-w07-data0"),
            "PersistentVolumeClaim apps/db".to_string(),
        ]
    );
    assert!(found.iter().all(|o| o.kind == OrphanKind::LeftoverClaim));
    assert!(
        found[1]
            .evidence
            .contains("no TenantStorage tenant-gone on the management cluster"),
        "{}",
        found[1].evidence
    );

    // Given specs alone, tenant-gone is not accounted for: its claim is kept.
    let known = Known {
        evidence: Evidence::default(),
        ..known
    };
    let judged = evidence::judge(&seen, &known, Some(&facts));
    let found = cluster::find(&facts, &known, &judged, &seen, &mut skipped);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].object.contains("tenant-demo-w07-data0"));
}

#[test]
fn a_tenant_whose_hosted_cluster_exists_is_not_gone() {
    let facts = ClusterFacts {
        claims: vec![labelled("clusters-blue", "db", "tenant-blue")],
        hosted_clusters: vec![super::HostedClusterFact {
            namespace: "clusters".into(),
            name: "blue".into(),
            available: true,
            deleting: false,
        }],
        ..ClusterFacts::default()
    };
    let known = Known {
        evidence: Evidence::Cluster {
            storages: Vec::new(),
        },
        ..Known::default()
    };
    let seen = Seen::default();
    let judged = evidence::judge(&seen, &known, Some(&facts));
    assert!(judged.gone("tenant-blue").is_none());
    let why = judged.unaccounted("tenant-blue").unwrap();
    assert!(why.contains("HostedCluster clusters/blue exists"), "{why}");
    let mut skipped = Vec::new();
    assert!(cluster::find(&facts, &known, &judged, &seen, &mut skipped).is_empty());

    // A TenantStorage of that name in another namespace keeps it too (the tags
    // give no namespace).
    let known = Known {
        evidence: Evidence::Cluster {
            storages: vec![TenantRef::new(Some("team-b"), "tenant-blue")],
        },
        ..Known::default()
    };
    let judged = evidence::judge(&seen, &known, Some(&ClusterFacts::default()));
    assert!(judged.gone("tenant-blue").is_none());
}

#[test]
fn an_unloaded_tenant_holds_back_the_rules_that_need_its_claims() {
    let facts = ClusterFacts {
        claims: vec![labelled("ns", "c", "tenant-broken")],
        ..ClusterFacts::default()
    };
    let known = Known {
        tenants: Vec::new(),
        unloaded: vec![(TenantRef::new(None, "tenant-broken"), "invalid spec".into())],
        evidence: Evidence::default(),
    };
    let seen = Seen::default();
    let judged = evidence::judge(&seen, &known, Some(&facts));
    let mut skipped = Vec::new();
    let found = cluster::find(&facts, &known, &judged, &seen, &mut skipped);
    assert!(found.is_empty(), "{found:#?}");
    let kinds: Vec<OrphanKind> = skipped.iter().map(|n| n.kind).collect();
    assert!(kinds.contains(&OrphanKind::LeftoverClaim));
}

#[test]
fn counts_name_every_kind() {
    let r = OrphanReport {
        api_version: super::API_VERSION,
        kind: super::KIND,
        tenants: Vec::new(),
        checked: OrphanKind::ALL.to_vec(),
        not_checked: Vec::new(),
        orphans: Vec::new(),
        unaccounted: Vec::new(),
        pending_eradication: Vec::new(),
        safe_mode: super::SafeMode::default(),
    };
    let c = r.counts();
    assert_eq!(c.len(), OrphanKind::ALL.len());
    assert!(c.values().all(|n| *n == 0));
}

/// A reader that may not list some tenant-object kinds (the controller's role, for
/// Secrets) leaves `tenant-object` not checked, with why, rather than reporting a
/// partial list as the whole truth.
#[test]
fn unreadable_tenant_objects_are_not_checked() {
    let t = demo();
    let gone_pool = super::seen::TenantObjectFact {
        kind: "IPAddressPool".into(),
        namespace: "metallb-system".into(),
        name: "gone-api".into(),
        labels: [
            ("app.kubernetes.io/managed-by".into(), "pxfa".into()),
            ("pxfa.io/tenant".into(), "tenant-gone".into()),
        ]
        .into(),
    };
    let known = Known {
        tenants: vec![t],
        unloaded: Vec::new(),
        evidence: Evidence::Cluster {
            storages: Vec::new(),
        },
    };
    let seen = Seen::default();
    let mut facts = ClusterFacts {
        tenant_objects: vec![gone_pool],
        ..ClusterFacts::default()
    };
    let judged = evidence::judge(&seen, &known, Some(&facts));
    let mut skipped = Vec::new();
    let found = cluster::find(&facts, &known, &judged, &seen, &mut skipped);
    assert!(skipped.is_empty());
    assert!(found.iter().all(|o| o.kind == OrphanKind::TenantObject));

    facts.tenant_objects_unread = Some("listing Secrets is forbidden to this user".into());
    let found = cluster::find(&facts, &known, &judged, &seen, &mut skipped);
    assert!(found.is_empty(), "{found:#?}");
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].kind, OrphanKind::TenantObject);
    assert!(skipped[0].why.contains("forbidden"));
}
