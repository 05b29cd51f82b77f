//! The cluster rules on hand-made facts (the array rules run on MockArray in
//! `tests/it/orphans.rs`).

use std::path::Path;

use std::collections::BTreeMap;

use super::cluster;
use super::evidence::{self, TenantRef};
use super::seen::{ClaimFact, ClusterFacts, Seen, TenantObjectFact};
use super::{Evidence, Known, OrphanKind, OrphanReport};
use crate::desired::TenantId;
use crate::labels::tenant_labels;
use crate::{Tenant, parse_valid_spec};

fn demo() -> Tenant {
    let yaml = include_str!("../../../../examples/tenant-direct-access.yaml");
    Tenant::from_spec(parse_valid_spec(yaml).unwrap(), Path::new("demo.yaml")).unwrap()
}

/// The direct-access example as the tenant `namespace/name`.
fn tenant(namespace: &str, name: &str) -> Tenant {
    let yaml = include_str!("../../../../examples/tenant-direct-access.yaml");
    let mut spec = parse_valid_spec(yaml).unwrap();
    spec.metadata.name = name.into();
    spec.metadata.namespace = Some(namespace.into());
    Tenant::from_spec(spec, Path::new("t.yaml")).unwrap()
}

fn claim(ns: &str, name: &str, labels: BTreeMap<String, String>) -> ClaimFact {
    ClaimFact {
        namespace: ns.into(),
        name: name.into(),
        labels,
        phase: Some("Bound".into()),
        volume_name: Some(format!("pv-{name}")),
    }
}

/// A claim labelled by pxfa for `tenant` (`namespace/name`).
fn labelled(ns: &str, name: &str, tenant: &str) -> ClaimFact {
    claim(ns, name, tenant_labels(&TenantId::from(tenant)))
}

/// The labels an earlier pxfa wrote: the tenant's name alone.
fn old_labels(tenant: &str) -> BTreeMap<String, String> {
    [
        ("app.kubernetes.io/managed-by".into(), "pxfa".into()),
        ("pxfa.io/tenant".into(), tenant.into()),
    ]
    .into()
}

fn secret(ns: &str, name: &str, labels: BTreeMap<String, String>) -> TenantObjectFact {
    TenantObjectFact {
        kind: "Secret".into(),
        namespace: ns.into(),
        name: name.into(),
        labels,
    }
}

/// The name of the claim `t` renders for worker 0's first data drive.
fn first_data_claim(t: &Tenant) -> String {
    t.manifests()
        .unwrap()
        .into_iter()
        .find(|m| m.kind == "PersistentVolumeClaim" && m.name.contains("-w00-data0"))
        .unwrap()
        .name
}

#[test]
fn claims_a_tenant_renders_are_kept_and_unrendered_ones_without_a_drive_are_leftovers() {
    let t = demo();
    let ns = t.spec.hcp_namespace();
    let rendered = first_data_claim(&t);
    let facts = ClusterFacts {
        claims: vec![
            labelled(&ns, &rendered, "default/tenant-demo"),
            labelled(&ns, "tenant-demo-w07-data0", "default/tenant-demo"),
            labelled("apps", "db", "default/tenant-gone"),
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
            .contains("no TenantStorage default/tenant-gone on the management cluster"),
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
        claims: vec![claim("clusters-blue", "db", old_labels("tenant-blue"))],
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
    let blue = TenantRef::new(None, "tenant-blue");
    assert!(judged.gone(&blue).is_none());
    let why = judged.unaccounted(&blue).unwrap();
    assert!(why.contains("HostedCluster clusters/blue exists"), "{why}");
    let mut skipped = Vec::new();
    assert!(cluster::find(&facts, &known, &judged, &seen, &mut skipped).is_empty());

    // A TenantStorage of that name in another namespace keeps it too (an earlier
    // pxfa's labels give no namespace).
    let known = Known {
        evidence: Evidence::Cluster {
            storages: vec![TenantRef::new(Some("team-b"), "tenant-blue")],
        },
        ..Known::default()
    };
    let judged = evidence::judge(&seen, &known, Some(&facts));
    assert!(judged.gone(&blue).is_none());
}

/// Issue #34: team-a/dev and team-b/dev both have labelled claims and objects;
/// team-a is gone on evidence (no TenantStorage, no HostedCluster), team-b is
/// loaded. Only team-a's are selected; a claim an earlier pxfa labelled `dev`
/// (no namespace) may be team-b's, so it is never selected, and the report says
/// why.
#[test]
fn a_gone_tenants_labelled_objects_go_and_a_same_named_tenants_stay() {
    let b = tenant("team-b", "dev");
    let b_ns = b.spec.hcp_namespace();
    let b_claim = first_data_claim(&b);
    let a = TenantId::new("team-a", "dev");
    let facts = ClusterFacts {
        claims: vec![
            labelled("clusters-dev-a", "dev-w00-data0", "team-a/dev"),
            labelled(&b_ns, &b_claim, "team-b/dev"),
            claim("clusters-dev-old", "dev-w00-data0", old_labels("dev")),
        ],
        tenant_objects: vec![
            secret("clusters", "dev-a-pull-secret", tenant_labels(&a)),
            secret(
                "clusters",
                "dev-b-pull-secret",
                tenant_labels(&b.desired.tenant),
            ),
            secret("clusters", "dev-old-pull-secret", old_labels("dev")),
        ],
        ..ClusterFacts::default()
    };
    let known = Known {
        tenants: vec![b],
        unloaded: Vec::new(),
        evidence: Evidence::Cluster {
            storages: vec![TenantRef::new(Some("team-b"), "dev")],
        },
    };
    let seen = Seen::default();
    let judged = evidence::judge(&seen, &known, Some(&facts));
    assert!(
        judged
            .gone(&TenantRef::new(Some("team-a"), "dev"))
            .is_some()
    );
    assert!(judged.gone(&TenantRef::new(None, "dev")).is_none());
    let mut skipped = Vec::new();
    let found = cluster::find(&facts, &known, &judged, &seen, &mut skipped);
    let objects: Vec<&str> = found.iter().map(|o| o.object.as_str()).collect();
    assert_eq!(
        objects,
        [
            "PersistentVolumeClaim clusters-dev-a/dev-w00-data0",
            "Secret clusters/dev-a-pull-secret",
        ],
        "{found:#?}"
    );
    for o in &found {
        assert_eq!(o.tenant.as_deref(), Some("team-a/dev"));
        assert!(
            o.evidence
                .contains("pxfa.io/tenant=dev,pxfa.io/tenant-namespace=team-a"),
            "{}",
            o.evidence
        );
    }

    // The earlier pxfa's objects are reported, kept, with why.
    let kept = cluster::unaccounted(&facts, &known, &judged);
    assert_eq!(kept.len(), 1, "{kept:#?}");
    assert!(
        kept[0].tenant.contains("earlier pxfa"),
        "{}",
        kept[0].tenant
    );
    assert_eq!(
        kept[0].objects,
        [
            "PersistentVolumeClaim clusters-dev-old/dev-w00-data0",
            "Secret clusters/dev-old-pull-secret",
        ]
    );
    assert!(
        kept[0]
            .evidence
            .contains("tenant team-b/dev bears the name"),
        "{}",
        kept[0].evidence
    );
}

/// An object an earlier pxfa labelled with a name alone is never selected while a
/// tenant of that name may own it: one that exists, one not accounted for (specs
/// only), or one whose HostedCluster exists. Only when every tenant of that name is
/// gone on evidence is it an orphan.
#[test]
fn an_earlier_pxfas_label_is_kept_while_any_tenant_of_its_name_may_own_it() {
    let facts = ClusterFacts {
        claims: vec![claim("clusters-dev", "dev-w00-data0", old_labels("dev"))],
        tenant_objects: vec![secret("clusters", "dev-pull-secret", old_labels("dev"))],
        ..ClusterFacts::default()
    };
    let seen = Seen::default();
    let selected = |known: &Known| {
        let judged = evidence::judge(&seen, known, Some(&facts));
        let mut skipped = Vec::new();
        let found = cluster::find(&facts, known, &judged, &seen, &mut skipped);
        let kept = cluster::unaccounted(&facts, known, &judged);
        (found.len(), kept)
    };
    for known in [
        Known {
            tenants: vec![tenant("team-b", "dev")],
            evidence: Evidence::Specs { complete: true },
            ..Known::default()
        },
        Known::default(),
        Known {
            evidence: Evidence::Cluster {
                storages: vec![TenantRef::new(Some("team-c"), "dev")],
            },
            ..Known::default()
        },
    ] {
        let (found, kept) = selected(&known);
        assert_eq!(found, 0, "{:?}", known.evidence);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].objects.len(), 2);
    }

    // No tenant named dev in any namespace, on the cluster's evidence: gone.
    let known = Known {
        evidence: Evidence::Cluster {
            storages: Vec::new(),
        },
        ..Known::default()
    };
    let (found, kept) = selected(&known);
    assert_eq!(found, 2);
    assert!(kept.is_empty());
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
