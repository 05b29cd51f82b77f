//! Fake management sites: what doctor reads from each, the checks it reports, and the
//! bundle choice (or the refusal) the site's facts imply. Every read is a GET.

use px_topology::TenantStorage;
use px_topology::site::{self, CheckStatus, Read, SiteFacts};
use px_topology::spec::HotplugGate;
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, ResponseTemplate};

use crate::fake_site::{SiteSpec, complete, mount, persistent_ips};
use crate::support::*;

/// Reads the fake site for `spec`; the checks by name, the facts, and the number of
/// requests that were not GETs.
async fn doctor(
    s: &SiteSpec,
    spec: &TenantStorage,
) -> (Vec<(String, CheckStatus)>, SiteFacts, usize) {
    let fake = Fake::start().await;
    mount(&fake.server, s).await;
    let client = fake.client().await;
    let view = px_cluster::read_management(&client, spec, None).await;
    let facts = SiteFacts::from_management(&view, &spec.hcp_namespace());
    let (checks, _) = site::management_checks(spec, &view);
    let writes = fake
        .server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method.as_str() != "GET")
        .count();
    (
        checks.into_iter().map(|c| (c.name, c.status)).collect(),
        facts,
        writes,
    )
}

fn status(checks: &[(String, CheckStatus)], name: &str) -> CheckStatus {
    checks
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| *s)
        .unwrap_or_else(|| panic!("no check {name}: {checks:?}"))
}

/// The rendered direct-access disk patch headers and claim access modes for `spec`.
fn bundle(spec: &TenantStorage) -> (String, Vec<String>) {
    let manifests = rendered(spec);
    let headers: String = manifests
        .iter()
        .flat_map(|m| m.purpose.iter().cloned())
        .collect::<Vec<_>>()
        .join("\n");
    let modes = manifests
        .iter()
        .filter(|m| {
            m.kind == "PersistentVolumeClaim" && m.cluster == px_topology::Cluster::Management
        })
        .map(|m| {
            m.body["spec"]["accessModes"][0]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    (headers, modes)
}

#[tokio::test]
async fn complete_site_is_ok_and_reads_only() {
    let spec = direct_access_spec();
    let (checks, facts, writes) = doctor(&complete(), &spec).await;
    assert_eq!(writes, 0);
    for (name, st) in &checks {
        assert_eq!(*st, CheckStatus::Ok, "{name}: {checks:?}");
    }
    assert_eq!(facts.hotplug_gate, Some(HotplugGate::HotplugVolumes));
    assert_eq!(facts.uplink_mtu, Some(9000));
    assert!(site::resolve(&spec, &facts).is_ok());
}

#[tokio::test]
async fn virtualization_4_18_with_hotplug_volumes_uses_addvolume() {
    let mut spec = direct_access_spec();
    spec.spec.management.virtualization_version = None;
    spec.spec.hosted_cluster.virtualization_version = None;
    let s = SiteSpec {
        virtualization: "4.18.3",
        gates: vec!["HotplugVolumes", "DeclarativeHotplugVolumes"],
        ..complete()
    };
    let (checks, facts, _) = doctor(&s, &spec).await;
    assert_eq!(status(&checks, "hotplug-gate"), CheckStatus::Ok);
    let resolved = site::resolve(&spec, &facts).unwrap();
    assert_eq!(
        resolved.spec.management.hotplug_gate,
        HotplugGate::HotplugVolumes
    );
    assert_eq!(
        resolved.virtualization_version().unwrap().to_string(),
        "4.18.3"
    );
    let (headers, _) = bundle(&resolved);
    assert!(headers.contains("virtctl addvolume"), "{headers}");
}

#[tokio::test]
async fn declarative_site_edits_the_template_and_refuses_a_contradiction() {
    let spec = direct_access_spec();
    let s = SiteSpec {
        virtualization: "4.21.0",
        gates: vec!["DeclarativeHotplugVolumes"],
        ..complete()
    };
    let (_, facts, _) = doctor(&s, &spec).await;
    assert_eq!(
        facts.hotplug_gate,
        Some(HotplugGate::DeclarativeHotplugVolumes)
    );
    // The fixture states 4.20.4: the site's 4.21.0 contradicts it.
    let err = site::resolve(&spec, &facts).unwrap_err();
    assert!(
        err.0
            .iter()
            .any(|c| c.field == "spec.management.virtualizationVersion"),
        "{err}"
    );
    let mut unstated = spec.clone();
    unstated.spec.management.virtualization_version = None;
    unstated.spec.hosted_cluster.virtualization_version = None;
    let resolved = site::resolve(&unstated, &facts).unwrap();
    let (headers, _) = bundle(&resolved);
    assert!(
        headers.contains("hotplugs the disks") && !headers.contains("virtctl addvolume"),
        "{headers}"
    );
    // A spec stating the declarative gate on a HotplugVolumes site is refused.
    let mut declared = unstated.clone();
    declared.spec.management.hotplug_gate = HotplugGate::DeclarativeHotplugVolumes;
    let (_, facts, _) = doctor(&complete(), &declared).await;
    let err = site::resolve(&declared, &facts).unwrap_err();
    assert!(
        err.to_string().contains("spec.management.hotplugGate"),
        "{err}"
    );
}

#[tokio::test]
async fn no_metallb_fails_and_is_refused() {
    let spec = direct_access_spec();
    let (checks, facts, _) = doctor(
        &SiteSpec {
            metallb: false,
            ..complete()
        },
        &spec,
    )
    .await;
    assert_eq!(status(&checks, "load-balancer"), CheckStatus::Fail);
    assert_eq!(
        facts.load_balancer.as_ref().map(|l| l.metallb_installed),
        Some(false)
    );
    let err = site::resolve(&spec, &facts).unwrap_err();
    assert!(
        err.0.iter().any(|c| c.field == "spec.management.metallb"),
        "{err}"
    );
}

#[tokio::test]
async fn uplink_at_1500_fails_and_is_refused() {
    let spec = direct_access_spec();
    let (checks, facts, _) = doctor(
        &SiteSpec {
            uplink_mtu: 1500,
            ..complete()
        },
        &spec,
    )
    .await;
    assert_eq!(status(&checks, "uplink-mtu"), CheckStatus::Fail);
    let err = site::resolve(&spec, &facts).unwrap_err();
    assert!(
        err.0.iter().any(|c| c.field == "spec.network.uplinkMtu"),
        "{err}"
    );
    let mut unstated = spec.clone();
    unstated.spec.network.as_mut().unwrap().uplink_mtu = None;
    let err = site::resolve(&unstated, &facts).unwrap_err();
    assert!(
        err.0
            .iter()
            .any(|c| c.field == "spec.network.mtu" && c.fact.contains("1500")),
        "{err}"
    );
}

#[tokio::test]
async fn portworx_3_6_2_without_the_driver_gives_rwo_claims() {
    let mut spec = direct_access_spec();
    spec.spec.portworx.version = "3.6.2".parse().unwrap();
    spec.spec.management.portworx_version = None;
    spec.spec.management.fa_fb_driver = false;
    spec.spec.storage.provisioning = px_topology::spec::Provisioning::Auto;
    let (checks, facts, _) = doctor(
        &SiteSpec {
            portworx: "3.6.2",
            fa_fb: false,
            ..complete()
        },
        &spec,
    )
    .await;
    assert_eq!(status(&checks, "fa-fb-driver"), CheckStatus::Warn);
    let resolved = site::resolve(&spec, &facts).unwrap();
    let (headers, modes) = bundle(&resolved);
    assert!(modes.iter().all(|m| m == "ReadWriteOnce"), "{modes:?}");
    assert!(headers.contains("do NOT live-migrate"));
    // A spec that claims the driver on this site is refused.
    let mut claims = spec.clone();
    claims.spec.management.fa_fb_driver = true;
    let err = site::resolve(&claims, &facts).unwrap_err();
    assert!(
        err.0
            .iter()
            .any(|c| c.field == "spec.management.faFbDriver"),
        "{err}"
    );
}

#[tokio::test]
async fn portworx_3_7_with_the_driver_gives_rwx_claims() {
    let mut spec = direct_access_spec();
    spec.spec.management.fa_fb_driver = false;
    let (checks, facts, _) = doctor(&complete(), &spec).await;
    assert_eq!(status(&checks, "fa-fb-driver"), CheckStatus::Ok);
    assert_eq!(facts.fa_fb_driver, Some(true));
    // The spec left faFbDriver at its default: the site's driver is used.
    let resolved = site::resolve(&spec, &facts).unwrap();
    let (_, modes) = bundle(&resolved);
    assert!(
        !modes.is_empty() && modes.iter().all(|m| m == "ReadWriteMany"),
        "{modes:?}"
    );
}

#[tokio::test]
async fn missing_pull_secret_and_ssh_key_fail() {
    let spec = direct_access_spec();
    let fake = Fake::start().await;
    mount(
        &fake.server,
        &SiteSpec {
            secrets: false,
            ..complete()
        },
    )
    .await;
    let view = px_cluster::read_management(&fake.client().await, &spec, None).await;
    let missing: Vec<&str> = view
        .referenced
        .iter()
        .filter(|o| o.read == Read::Missing)
        .map(|o| o.field.as_str())
        .collect();
    assert_eq!(
        missing,
        [
            "spec.hostedCluster.pullSecret",
            "spec.hostedCluster.sshKeySecret"
        ]
    );
    let (checks, _) = site::management_checks(&spec, &view);
    let failed: Vec<&str> = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .map(|c| c.read.as_str())
        .collect();
    assert_eq!(
        failed,
        [
            "Secret clusters/tenant-full-pull-secret",
            "Secret clusters/tenant-full-ssh-key"
        ]
    );
}

#[tokio::test]
async fn an_unreadable_site_is_unknown_not_failed() {
    let spec = direct_access_spec();
    let fake = Fake::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(403).set_body_json(json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403})))
        .mount(&fake.server)
        .await;
    let view = px_cluster::read_management(&fake.client().await, &spec, None).await;
    let (checks, creds) = site::management_checks(&spec, &view);
    assert!(creds.is_empty());
    for c in &checks {
        assert_eq!(c.status, CheckStatus::Unknown, "{c:?}");
        assert!(c.found.contains("forbidden"), "{c:?}");
    }
    assert_eq!(SiteFacts::from_management(&view, "x"), SiteFacts::default());
}

/// The storage NAD and the NNCPs' OVN bridge mappings of a rendered bundle.
fn storage_network(spec: &TenantStorage) -> (serde_json::Value, Vec<serde_json::Value>) {
    let manifests = rendered(spec);
    let nad = manifests
        .iter()
        .find(|m| m.kind == "NetworkAttachmentDefinition")
        .expect("a NAD");
    let config: serde_json::Value =
        serde_json::from_str(nad.body["spec"]["config"].as_str().unwrap()).unwrap();
    let mappings = manifests
        .iter()
        .filter(|m| m.kind == "NodeNetworkConfigurationPolicy")
        .map(|m| m.body["spec"]["desiredState"]["ovn"]["bridge-mappings"].clone())
        .collect();
    (config, mappings)
}

#[tokio::test]
async fn persistent_ips_render_localnet_where_the_site_keeps_addresses() {
    let mut spec = direct_access_spec();
    spec.spec.network.as_mut().unwrap().persistent_ips = Some(true);
    let (checks, facts, writes) = doctor(&persistent_ips(), &spec).await;
    assert_eq!(writes, 0);
    assert_eq!(
        status(&checks, "storage-address-persistence"),
        CheckStatus::Ok
    );
    assert!(
        !checks.iter().any(|(n, _)| n == "whereabouts-reconciler"),
        "no whereabouts check without whereabouts: {checks:?}"
    );
    assert_eq!(facts.ovn_kubernetes, Some(true));
    assert_eq!(facts.ipam_controller, Some(true));
    let resolved = site::resolve(&spec, &facts).expect("the site supports it");
    let (config, mappings) = storage_network(&resolved);
    assert_eq!(config["type"], "ovn-k8s-cni-overlay");
    assert_eq!(config["topology"], "localnet");
    assert_eq!(config["allowPersistentIPs"], true);
    assert_eq!(config["vlanID"], 400);
    assert!(!mappings.is_empty());
    // The mapping names the site-wide physical network where the NAD gives one
    // (OpenShift 4.18+, #36 N10), else the tenant's network.
    let mapped = match &config["physicalNetworkName"] {
        serde_json::Value::Null => &config["name"],
        physical => physical,
    };
    for m in &mappings {
        assert_eq!(&m[0]["localnet"], mapped, "{m}");
        assert_eq!(m[0]["state"], "present");
    }
}

#[tokio::test]
async fn persistent_ips_are_refused_where_the_site_cannot_keep_them() {
    let mut spec = direct_access_spec();
    spec.spec.network.as_mut().unwrap().persistent_ips = Some(true);
    for site_spec in [
        complete(),
        SiteSpec {
            network_type: "OpenShiftSDN",
            ..persistent_ips()
        },
        SiteSpec {
            virtualization: "4.17.5",
            ..persistent_ips()
        },
    ] {
        let (checks, facts, _) = doctor(&site_spec, &spec).await;
        assert_eq!(
            status(&checks, "storage-address-persistence"),
            CheckStatus::Fail
        );
        let err = site::resolve(&spec, &facts).unwrap_err();
        assert!(
            err.0
                .iter()
                .any(|c| c.field == "spec.network.persistentIps"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn whereabouts_tenant_on_a_persistent_ip_site_is_told_and_kept() {
    let spec = direct_access_spec();
    let (checks, facts, _) = doctor(&persistent_ips(), &spec).await;
    assert_eq!(
        status(&checks, "storage-address-persistence"),
        CheckStatus::Warn
    );
    // A stated `persistentIps: false` is kept.
    let resolved = site::resolve(&spec, &facts).unwrap();
    let (config, mappings) = storage_network(&resolved);
    assert_eq!(config["ipam"]["type"], "whereabouts");
    assert!(mappings.iter().all(serde_json::Value::is_null));
}

/// Unstated, a tenant whose workers join the network gets persistent IPs where the
/// site keeps them; not where the bridge already runs as a linux bridge (converting
/// it would drop its storage sessions), and a stated `true` is refused there.
#[tokio::test]
async fn persistent_ips_are_the_default_where_the_site_keeps_them() {
    let mut spec = direct_access_spec();
    let net = spec.spec.network.as_mut().unwrap();
    net.persistent_ips = None;
    net.attach_workers = Some(true);
    let (checks, facts, _) = doctor(&persistent_ips(), &spec).await;
    assert_eq!(facts.linux_bridge, Some(false));
    assert_eq!(
        status(&checks, "storage-address-persistence"),
        CheckStatus::Ok
    );
    let (config, _) = storage_network(&site::resolve(&spec, &facts).unwrap());
    assert_eq!(config["allowPersistentIPs"], true);

    let on_bridge = SiteSpec {
        linux_bridge: true,
        ..persistent_ips()
    };
    let (checks, facts, _) = doctor(&on_bridge, &spec).await;
    assert_eq!(facts.linux_bridge, Some(true));
    assert_eq!(
        status(&checks, "storage-address-persistence"),
        CheckStatus::Warn
    );
    let (config, _) = storage_network(&site::resolve(&spec, &facts).unwrap());
    assert_eq!(config["ipam"]["type"], "whereabouts");
    spec.spec.network.as_mut().unwrap().persistent_ips = Some(true);
    let err = site::resolve(&spec, &facts).unwrap_err();
    assert!(err.to_string().contains("linux bridge"), "{err}");
}

/// The site's Portworx is the management's: a tenant Portworx of another minor is the
/// spec's choice, and the live-migration rule follows the management release.
#[tokio::test]
async fn tenant_portworx_of_another_minor_than_the_management_is_not_refused() {
    let mut spec = direct_access_spec();
    spec.spec.portworx.version = "3.6.2".parse().unwrap();
    spec.spec.management.portworx_version = None;
    spec.spec.management.fa_fb_driver = false;
    let (_, facts, _) = doctor(&complete(), &spec).await;
    assert_eq!(facts.portworx_version, Some("3.7.0".parse().unwrap()));
    let resolved = site::resolve(&spec, &facts).expect("3.6.2 in the tenant, 3.7 managing");
    assert_eq!(resolved.spec.portworx.version, "3.6.2".parse().unwrap());
    let (_, modes) = bundle(&resolved);
    assert!(
        !modes.is_empty() && modes.iter().all(|m| m == "ReadWriteMany"),
        "{modes:?}"
    );
    // The other way round: 3.7 in the tenant, 3.6.2 managing without the driver.
    let mut newer = direct_access_spec();
    newer.spec.management.portworx_version = None;
    newer.spec.management.fa_fb_driver = false;
    newer.spec.storage.provisioning = px_topology::spec::Provisioning::Auto;
    let (_, facts, _) = doctor(
        &SiteSpec {
            portworx: "3.6.2",
            fa_fb: false,
            ..complete()
        },
        &newer,
    )
    .await;
    let resolved = site::resolve(&newer, &facts).expect("3.7 in the tenant, 3.6.2 managing");
    let (headers, modes) = bundle(&resolved);
    assert!(modes.iter().all(|m| m == "ReadWriteOnce"), "{modes:?}");
    assert!(headers.contains("management Portworx"), "{headers}");
    // A stated management release the site contradicts is refused.
    let mut stated = direct_access_spec();
    stated.spec.management.portworx_version = Some("3.8.0".parse().unwrap());
    let err = site::resolve(&stated, &facts).unwrap_err();
    assert!(
        err.0
            .iter()
            .any(|c| c.field == "spec.management.portworxVersion"),
        "{err}"
    );
}

/// The admin token is looked for in `px-pure-secret` by name: doctor needs `get` on
/// that name only, and never lists (or receives) another Secret's data (issue #38 L4).
#[tokio::test]
async fn the_admin_token_is_found_by_secret_name_without_listing_secrets() {
    use k8s_openapi::ByteString;
    use k8s_openapi::api::core::v1::Secret;
    let spec = direct_access_spec();
    let fake = Fake::start().await;
    mount(&fake.server, &complete()).await;
    let pure_json =
        json!({"FlashArrays": [{"MgmtEndPoint": "fa.example", "APIToken": "admin-token-1"}]});
    let secret = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some("px-pure-secret".into()),
            namespace: Some("clusters".into()),
            ..Default::default()
        },
        data: Some(
            [(
                "pure.json".to_string(),
                ByteString(pure_json.to_string().into_bytes()),
            )]
            .into(),
        ),
        ..Default::default()
    };
    Mock::given(method("GET"))
        .and(wiremock::matchers::path(
            "/api/v1/namespaces/clusters/secrets/px-pure-secret",
        ))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                json!({"apiVersion": "v1", "kind": "Secret"})
                    .as_object()
                    .cloned()
                    .map(|mut o| {
                        o.extend(
                            serde_json::to_value(&secret)
                                .unwrap()
                                .as_object()
                                .cloned()
                                .unwrap(),
                        );
                        o
                    }),
            ),
        )
        .mount(&fake.server)
        .await;
    let token = secrecy::SecretString::from("admin-token-1".to_string());
    let view = px_cluster::read_management(&fake.client().await, &spec, Some(&token)).await;
    let Read::Found(found) = &view.credentials else {
        panic!("{:?}", view.credentials)
    };
    let held: Vec<_> = found
        .iter()
        .map(|c| (c.namespace.as_str(), c.name.as_str(), c.is_admin_token))
        .collect();
    assert_eq!(held, [("clusters", "px-pure-secret", Some(true))]);
    let requests = fake.server.received_requests().await.unwrap();
    let lists: Vec<_> = requests
        .iter()
        .filter(|r| r.url.path().ends_with("/secrets"))
        .map(|r| r.url.path().to_string())
        .collect();
    assert!(lists.is_empty(), "Secrets listed: {lists:?}");
}

/// Direct-access with ReadWriteOnce drives (no GA FA/FB driver on the management
/// Portworx): doctor checks the HyperConverged eviction settings of Red Hat's
/// procedure for non-migratable hosted-cluster VMs, at `spec` or under
/// `spec.virtualization`; with live-migratable drives it does not ask.
#[tokio::test]
async fn non_migratable_workers_need_the_hyperconverged_eviction_settings() {
    let mut spec = direct_access_spec();
    spec.spec.management.fa_fb_driver = false;
    let rwo = SiteSpec {
        fa_fb: false,
        ..complete()
    };
    let (checks, _, writes) = doctor(&rwo, &spec).await;
    assert_eq!(writes, 0);
    assert_eq!(
        status(&checks, "hyperconverged-eviction"),
        CheckStatus::Warn
    );
    for at in ["spec", "virtualization"] {
        let site = SiteSpec {
            eviction_at: Some(at),
            ..rwo.clone()
        };
        let (checks, _, _) = doctor(&site, &spec).await;
        assert_eq!(
            status(&checks, "hyperconverged-eviction"),
            CheckStatus::Ok,
            "{at}"
        );
    }
    spec.spec.management.fa_fb_driver = true;
    let (checks, _, _) = doctor(&complete(), &spec).await;
    assert!(
        !checks.iter().any(|(n, _)| n == "hyperconverged-eviction"),
        "{checks:?}"
    );
}
