//! The cluster rules on hand-made facts (the array rules run on MockArray in
//! `tests/it/orphans.rs`).

use std::path::Path;

use super::array::Seen;
use super::cluster::{self, ClaimFact, ClusterFacts};
use super::{Known, OrphanKind, OrphanReport};
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
    let known = Known {
        tenants: vec![t],
        unloaded: Vec::new(),
    };
    let mut skipped = Vec::new();
    let found = cluster::find(&facts, &known, &Seen::default(), &mut skipped);
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
    assert!(found[1].evidence.contains("no tenant named tenant-gone"));
}

#[test]
fn an_unloaded_tenant_holds_back_the_rules_that_need_its_claims() {
    let facts = ClusterFacts {
        claims: vec![labelled("ns", "c", "tenant-broken")],
        ..ClusterFacts::default()
    };
    let known = Known {
        tenants: Vec::new(),
        unloaded: vec![("tenant-broken".into(), "invalid spec".into())],
    };
    let mut skipped = Vec::new();
    let found = cluster::find(&facts, &known, &Seen::default(), &mut skipped);
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
        pending_eradication: Vec::new(),
        safe_mode: super::SafeMode::default(),
    };
    let c = r.counts();
    assert_eq!(c.len(), OrphanKind::ALL.len());
    assert!(c.values().all(|n| *n == 0));
}
