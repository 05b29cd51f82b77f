//! `pxfa orphans` against the fake API server: the TenantStorage objects are the
//! tenants, the cluster kinds are read through the real client (claims, PVs, VMs,
//! KubeVirt's pods by label) and cleaned up through it (deletes, `removevolume`),
//! beside the brownfield MockArray. The fake keeps state, so a second scan sees
//! the cleanup: every cluster kind found, nothing foreign listed, zero writes
//! without a cleanup, and an empty scan after it.

use std::sync::{Arc, Mutex};

use flasharray_mock::{MockArray, OTHER_TENANT, OTHER_TENANT_NAMESPACE, Seed, blue_volume};
use px_cluster::ClusterOrphans;
use px_cluster::orphans::tenant_storage_id;
use px_topology::Cluster;
use px_topology::orphans::{Evidence, Known, OrphanKind, ScanOptions, cleanup, scan};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::support::*;

#[derive(Default)]
struct State {
    claims: Vec<Value>,
    pvs: Vec<Value>,
    vms: Vec<Value>,
    pods: Vec<Value>,
    writes: usize,
}

fn list(kind: &str, items: &[Value]) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "apiVersion": "v1", "kind": format!("{kind}List"), "metadata": {}, "items": items}))
}

fn meta(ns: Option<&str>, name: &str, labels: Value) -> Value {
    let mut m = json!({"name": name, "labels": labels});
    if let Some(ns) = ns {
        m["namespace"] = json!(ns);
    }
    m
}

fn pvc(ns: &str, name: &str, labels: Value, pv: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta(Some(ns), name, labels),
           "spec": {"volumeName": pv}, "status": {"phase": "Bound"}})
}

fn pv(name: &str, claim_ns: &str, claim: &str, phase: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta(None, name, json!({})),
           "spec": {"claimRef": {"namespace": claim_ns, "name": claim}}, "status": {"phase": phase}})
}

fn pod(ns: &str, name: &str, app: &str, owner: Option<&str>, claim: Option<&str>) -> Value {
    let owners: Vec<Value> = owner
        .map(|o| json!({"apiVersion": "v1", "kind": "Pod", "name": o, "uid": "u"}))
        .into_iter()
        .collect();
    let volumes: Vec<Value> = claim
        .map(|c| json!({"name": "v", "persistentVolumeClaim": {"claimName": c}}))
        .into_iter()
        .collect();
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns, "labels": {"kubevirt.io": app}, "ownerReferences": owners},
           "spec": {"containers": [{"name": "c"}], "volumes": volumes}})
}

fn same(item: &Value, ns: Option<&str>, name: &str) -> bool {
    item["metadata"]["name"] == name && ns.is_none_or(|ns| item["metadata"]["namespace"] == ns)
}

/// Mounts the stateful fake: lists by kind (pods by their `kubevirt.io` label),
/// deletes, `removevolume`, and the TenantStorage list.
async fn mount(fake: &Fake, state: Arc<Mutex<State>>, tenant_doc: Value) {
    let s = state.clone();
    Mock::given(method("GET"))
        .and(path("/api/v1/persistentvolumeclaims"))
        .respond_with(move |_: &Request| list("PersistentVolumeClaim", &s.lock().unwrap().claims))
        .mount(&fake.server)
        .await;
    let s = state.clone();
    Mock::given(method("GET"))
        .and(path("/api/v1/persistentvolumes"))
        .respond_with(move |_: &Request| list("PersistentVolume", &s.lock().unwrap().pvs))
        .mount(&fake.server)
        .await;
    let s = state.clone();
    Mock::given(method("GET"))
        .and(path("/apis/kubevirt.io/v1/virtualmachines"))
        .respond_with(move |_: &Request| list("VirtualMachine", &s.lock().unwrap().vms))
        .mount(&fake.server)
        .await;
    let s = state.clone();
    Mock::given(method("GET"))
        .and(path("/api/v1/pods"))
        .respond_with(move |r: &Request| {
            let selector = r
                .url
                .query_pairs()
                .find(|(k, _)| k == "labelSelector")
                .map(|(_, v)| v.to_string())
                .unwrap_or_default();
            let app = selector.strip_prefix("kubevirt.io=").unwrap_or_default();
            let pods: Vec<Value> = s
                .lock()
                .unwrap()
                .pods
                .iter()
                .filter(|p| p["metadata"]["labels"]["kubevirt.io"] == app)
                .cloned()
                .collect();
            list("Pod", &pods)
        })
        .mount(&fake.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/apis/pxfa.io/v1alpha1/tenantstorages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "apiVersion": "pxfa.io/v1alpha1", "kind": "TenantStorageList", "metadata": {},
            "items": [tenant_doc]})))
        .mount(&fake.server)
        .await;
    let s = state.clone();
    Mock::given(method("DELETE"))
        .respond_with(move |r: &Request| {
            let parts: Vec<&str> = r.url.path().split('/').collect();
            let name = parts[parts.len() - 1];
            let ns = parts
                .iter()
                .position(|p| *p == "namespaces")
                .map(|i| parts[i + 1]);
            let mut st = s.lock().unwrap();
            st.writes += 1;
            let bucket = match parts[parts.len() - 2] {
                "persistentvolumeclaims" => &mut st.claims,
                "persistentvolumes" => &mut st.pvs,
                _ => &mut st.pods,
            };
            match bucket.iter().position(|i| same(i, ns, name)) {
                Some(i) => ResponseTemplate::new(200).set_body_json(bucket.remove(i)),
                None => ResponseTemplate::new(404).set_body_json(json!({
                    "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                    "code": 404, "message": "not found"})),
            }
        })
        .mount(&fake.server)
        .await;
    let s = state;
    Mock::given(method("PUT"))
        .and(path_regex(
            "^/apis/subresources.kubevirt.io/v1/namespaces/[^/]+/virtualmachines/[^/]+/removevolume$",
        ))
        .respond_with(move |r: &Request| {
            let parts: Vec<&str> = r.url.path().split('/').collect();
            let (ns, vm) = (parts[5], parts[7]);
            let volume = r.body_json::<Value>().unwrap()["name"].clone();
            let mut st = s.lock().unwrap();
            st.writes += 1;
            if let Some(v) = st.vms.iter_mut().find(|v| same(v, Some(ns), vm))
                && let Some(vols) = v["spec"]["template"]["spec"]["volumes"].as_array_mut()
            {
                vols.retain(|x| x["name"] != volume);
            }
            ResponseTemplate::new(202)
        })
        .mount(&fake.server)
        .await;
}

#[tokio::test]
async fn every_cluster_kind_found_nothing_foreign_and_clean_after_cleanup() {
    let fake = Fake::start().await;
    let spec = direct_access_spec();
    let ns = spec.hcp_namespace();
    let labels = json!({"app.kubernetes.io/managed-by": "pxfa", "pxfa.io/tenant": spec.tenant_name(),
                        "pxfa.io/tenant-namespace": spec.tenant_id().namespace});
    let claims: Vec<String> = rendered(&spec)
        .into_iter()
        .filter(|m| m.kind == "PersistentVolumeClaim" && m.cluster == Cluster::Management)
        .filter(|m| m.name.contains("-w"))
        .map(|m| m.name)
        .collect();
    let gone = claims
        .iter()
        .find(|c| c.contains("-w01-data0"))
        .unwrap()
        .clone();
    let kept = claims
        .iter()
        .find(|c| c.contains("-w00-data0"))
        .unwrap()
        .clone();
    let blue_pv = format!("pvc-{}", blue_volume(0).rsplit_once("-pvc-").unwrap().1);
    let mut st = State {
        claims: claims
            .iter()
            .filter(|c| **c != gone)
            .map(|c| pvc(&ns, c, labels.clone(), &format!("pv-{c}")))
            .collect(),
        ..State::default()
    };
    st.claims.push(pvc(
        "clusters-blue",
        "blue-w00-data0",
        json!({"app.kubernetes.io/managed-by": "pxfa", "pxfa.io/tenant": OTHER_TENANT,
               "pxfa.io/tenant-namespace": OTHER_TENANT_NAMESPACE}),
        &blue_pv,
    ));
    // A claim an earlier pxfa labelled with tenant-full's name alone, which no
    // tenant renders: it may be any namespace's tenant-full, so it is never
    // selected while tenant-full exists, and the report says why.
    st.claims.push(pvc(
        &ns,
        "tenant-full-w09-data0",
        json!({"app.kubernetes.io/managed-by": "pxfa", "pxfa.io/tenant": spec.tenant_name()}),
        "pv-old-label",
    ));
    st.claims.push(pvc("apps", "db", json!({}), "pv-db"));
    st.pvs = vec![
        pv(&blue_pv, "clusters-blue", "blue-w00-data0-old", "Released"),
        pv("pv-foreign", "apps", "old-db", "Released"),
        pv("pv-db", "apps", "db", "Bound"),
    ];
    let disk =
        |claim: &str| json!([{"name": "pxdata0", "persistentVolumeClaim": {"claimName": claim}}]);
    st.vms = vec![
        vm_json(
            "tenant-full-workers-1",
            "2026-01-01T00:00:00Z",
            Some(1),
            disk(&gone),
        ),
        vm_json(
            "tenant-full-workers-0",
            "2026-01-01T00:00:00Z",
            Some(0),
            disk(&kept),
        ),
    ];
    let mut foreign_vm = vm_json(
        "someone-elses",
        "2026-01-01T00:00:00Z",
        None,
        disk("missing"),
    );
    foreign_vm["metadata"]["namespace"] = json!("apps");
    st.vms.push(foreign_vm);
    st.pods = vec![
        pod(
            &ns,
            "hp-volume-gone",
            "hotplug-disk",
            Some("virt-launcher-gone"),
            Some(&kept),
        ),
        pod(
            &ns,
            "hp-volume-live",
            "hotplug-disk",
            Some("virt-launcher-w0"),
            Some(&kept),
        ),
        pod(
            "apps",
            "hp-volume-foreign",
            "hotplug-disk",
            None,
            Some("db"),
        ),
        pod(&ns, "virt-launcher-w0", "virt-launcher", None, None),
    ];
    let state = Arc::new(Mutex::new(st));
    let doc = serde_json::to_value(&spec).unwrap();
    mount(&fake, state.clone(), doc).await;

    let client = fake.client().await;
    let objects = px_cluster::orphans::tenant_storages(&client).await.unwrap();
    assert_eq!(objects.len(), 1);
    let known = Known {
        tenants: vec![px_topology::Tenant::from_spec(spec.clone(), "spec".as_ref()).unwrap()],
        unloaded: Vec::new(),
        evidence: Evidence::Cluster {
            storages: objects.iter().map(tenant_storage_id).collect(),
        },
    };
    let array = MockArray::builder().seed(Seed::brownfield()).build();
    let opts = ScanOptions::at(array.clock().now_ms());
    let reader = ClusterOrphans::new(client);

    // While tenant-blue's HostedCluster exists (its control plane namespace holds
    // the claim pxfa labelled for it), it is not gone: kept, not accounted for.
    {
        let _hc = Mock::given(method("GET"))
            .and(path("/apis/hypershift.openshift.io/v1beta1/hostedclusters"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedClusterList",
                "metadata": {}, "items": [{
                    "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
                    "metadata": {"name": "blue", "namespace": "clusters"}}]})))
            .mount_as_scoped(&fake.server)
            .await;
        let r = scan(&array, Some(&reader), &known, &opts).await.unwrap();
        assert_eq!(r.counts()[&OrphanKind::TenantGone], 0, "{:#?}", r.orphans);
        assert_eq!(
            r.counts()[&OrphanKind::LeftoverClaim],
            0,
            "{:#?}",
            r.orphans
        );
        // tenant-blue, and the earlier pxfa's claim (below).
        assert_eq!(r.unaccounted.len(), 2, "{:#?}", r.unaccounted);
        let blue = r
            .unaccounted
            .iter()
            .find(|u| u.tenant == format!("{OTHER_TENANT_NAMESPACE}/{OTHER_TENANT}"))
            .unwrap_or_else(|| panic!("{:#?}", r.unaccounted));
        assert!(
            blue.evidence.contains("HostedCluster clusters/blue exists"),
            "{:#?}",
            r.unaccounted
        );
    }

    let r = scan(&array, Some(&reader), &known, &opts).await.unwrap();
    assert_eq!(state.lock().unwrap().writes, 0, "the scan writes nothing");
    assert_eq!(array.stats().writes, 0);
    let counts = r.counts();
    for kind in [
        OrphanKind::ReleasedVolume,
        OrphanKind::LeftoverClaim,
        OrphanKind::VmDiskWithoutClaim,
        OrphanKind::HotplugPodWithoutVm,
        OrphanKind::TenantGone,
    ] {
        assert_eq!(
            counts[&kind],
            if kind == OrphanKind::TenantGone { 7 } else { 1 },
            "{kind:?}: {:#?}",
            r.orphans
        );
    }
    let listed: Vec<&str> = r.orphans.iter().map(|o| o.object.as_str()).collect();
    for want in [
        format!("PersistentVolume {blue_pv}"),
        "PersistentVolumeClaim clusters-blue/blue-w00-data0".to_string(),
        format!("VirtualMachine {ns}/tenant-full-workers-1 disk pxdata0"),
        format!("Pod {ns}/hp-volume-gone"),
    ] {
        assert!(listed.contains(&want.as_str()), "{want} in {listed:#?}");
    }
    for foreign in [
        "apps/",
        "pv-foreign",
        "pv-db",
        "someone-elses",
        "hp-volume-live",
        "workers-0",
        "w09-data0",
    ] {
        assert!(
            !listed.iter().any(|l| l.contains(foreign)),
            "{foreign} listed: {listed:#?}"
        );
    }

    let old = r
        .unaccounted
        .iter()
        .find(|u| u.tenant.contains("earlier pxfa"))
        .unwrap_or_else(|| panic!("{:#?}", r.unaccounted));
    assert_eq!(
        old.objects,
        [format!("PersistentVolumeClaim {ns}/tenant-full-w09-data0")]
    );
    assert!(old.evidence.contains("may own it"), "{}", old.evidence);

    let done = cleanup(&array, Some(&reader), &r).await;
    assert!(done.is_success(), "{done:#?}");
    assert_eq!(
        state.lock().unwrap().writes,
        4,
        "one write per cluster orphan"
    );
    let again = scan(&array, Some(&reader), &known, &opts).await.unwrap();
    assert!(again.is_empty(), "{:#?}", again.orphans);
}

/// The tenant objects are listed by metadata only: the Secrets' data (pull secret,
/// SSH key) never crosses the wire. The fake answers a full list with data and
/// counts it; a metadata-only list (`as=PartialObjectMetadataList`) with metadata.
#[tokio::test]
async fn tenant_secrets_are_listed_by_metadata_only() {
    use px_topology::orphans::ClusterReader;
    let fake = Fake::start().await;
    let full_reads = Arc::new(Mutex::new(0usize));
    let labels = json!({"app.kubernetes.io/managed-by": "pxfa", "pxfa.io/tenant": "gone"});
    for (plural, kind) in [("secrets", "Secret"), ("configmaps", "ConfigMap")] {
        let full = full_reads.clone();
        let labels = labels.clone();
        Mock::given(method("GET"))
            .and(path(format!("/api/v1/{plural}")))
            .respond_with(move |r: &Request| {
                let accept = (r.headers.get("accept"))
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default();
                let item_meta = meta(Some("clusters"), "gone-pull-secret", labels.clone());
                if accept.contains("as=PartialObjectMetadataList") {
                    return ResponseTemplate::new(200).set_body_json(json!({
                        "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList",
                        "metadata": {},
                        "items": [{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
                                   "metadata": item_meta}]}));
                }
                *full.lock().unwrap() += 1;
                list(
                    kind,
                    &[
                        json!({"apiVersion": "v1", "kind": kind, "metadata": item_meta,
                                     "data": {".dockerconfigjson": "c2VjcmV0"}}),
                    ],
                )
            })
            .mount(&fake.server)
            .await;
    }
    for (p, kind) in [
        ("/api/v1/persistentvolumeclaims", "PersistentVolumeClaim"),
        ("/api/v1/persistentvolumes", "PersistentVolume"),
        ("/api/v1/pods", "Pod"),
    ] {
        Mock::given(method("GET"))
            .and(path(p))
            .respond_with(list(kind, &[]))
            .mount(&fake.server)
            .await;
    }
    let reader = ClusterOrphans::new(fake.client().await);
    let facts = reader.facts().await.unwrap();
    let found: Vec<(&str, &str)> = (facts.tenant_objects.iter())
        .map(|o| (o.kind.as_str(), o.name.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("Secret", "gone-pull-secret"),
            ("ConfigMap", "gone-pull-secret")
        ]
    );
    assert_eq!(facts.tenant_objects[0].labels["pxfa.io/tenant"], "gone");
    assert_eq!(
        *full_reads.lock().unwrap(),
        0,
        "no full Secret or ConfigMap list"
    );
}
