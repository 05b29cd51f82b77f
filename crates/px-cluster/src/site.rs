//! Reading the site: what `pxfa doctor` and `apply --kubeconfig` need to know about
//! the management and tenant clusters, as px-topology's [`ManagementView`] and
//! [`TenantView`] (the checks and facts are computed there). Only GET and LIST
//! requests: nothing here writes.
//!
//! Every read is independent: a 404 (the object, or its kind because its operator is
//! not installed) is `Missing`, anything else that fails (403, no answer) is
//! `Unreadable` with the reason, so one missing right does not hide the other checks.

use crate::bounds::list_all;
use crate::token::PURE_SECRET;
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};
use px_topology::site::{
    CredentialView, EvictionView, MachineConfigView, ManagementView, MetallbView, ObjectRead,
    PoolView, Read, SiteFacts, StorageClusterView, TenantView, UplinkView, WorkerPlacement,
};
use px_topology::{
    Cluster, Manifest, PORTWORX_OLM_PACKAGE, PureJson, TenantStorage, VALIDATION_PVC,
};
use secrecy::SecretString;
use serde_json::Value;

use crate::discovery::status_code;
use crate::kinds::{Kind, STORAGE_CLUSTER, STORAGE_NODE, VIRTUAL_MACHINE_INSTANCE};

const fn kind(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
) -> Kind {
    Kind {
        group,
        version,
        kind,
        plural,
    }
}

const CLUSTER_VERSION: Kind = kind(
    "config.openshift.io",
    "v1",
    "ClusterVersion",
    "clusterversions",
);
const HYPERCONVERGED: Kind = kind(
    "hco.kubevirt.io",
    "v1beta1",
    "HyperConverged",
    "hyperconvergeds",
);
const KUBEVIRT: Kind = kind("kubevirt.io", "v1", "KubeVirt", "kubevirts");
const MCE: Kind = kind(
    "multicluster.openshift.io",
    "v1",
    "MultiClusterEngine",
    "multiclusterengines",
);
const METALLB: Kind = kind("metallb.io", "v1beta1", "MetalLB", "metallbs");
const IP_POOL: Kind = kind("metallb.io", "v1beta1", "IPAddressPool", "ipaddresspools");
const NMSTATE: Kind = kind("nmstate.io", "v1", "NMState", "nmstates");
const NNS: Kind = kind(
    "nmstate.io",
    "v1beta1",
    "NodeNetworkState",
    "nodenetworkstates",
);
const DAEMON_SET: Kind = kind("apps", "v1", "DaemonSet", "daemonsets");
const DEPLOYMENT: Kind = kind("apps", "v1", "Deployment", "deployments");
const NETWORK_OPERATOR: Kind = kind("operator.openshift.io", "v1", "Network", "networks");
const STORAGE_CLASS: Kind = kind("storage.k8s.io", "v1", "StorageClass", "storageclasses");
const SNAPSHOT_CLASS: Kind = kind(
    "snapshot.storage.k8s.io",
    "v1",
    "VolumeSnapshotClass",
    "volumesnapshotclasses",
);
const MACHINE_CONFIG: Kind = kind(
    "machineconfiguration.openshift.io",
    "v1",
    "MachineConfig",
    "machineconfigs",
);
const SECRET: Kind = kind("", "v1", "Secret", "secrets");
const NAMESPACE: Kind = kind("", "v1", "Namespace", "namespaces");
const SUBSCRIPTION: Kind = kind(
    "operators.coreos.com",
    "v1alpha1",
    "Subscription",
    "subscriptions",
);
const PVC: Kind = kind("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims");

/// OpenShift Virtualization's namespace.
const CNV_NAMESPACE: &str = "openshift-cnv";
/// The HyperConverged feature gate that deploys OpenShift Virtualization's IPAM
/// controller (kubevirt/hyperconverged-cluster-operator docs/cluster-configuration.md),
/// and the controller's Deployment (kubevirt/ipam-extensions), read when the gate is
/// not set: a release that deploys it without the gate still runs it.
const IPAM_GATE: &str = "/spec/featureGates/deployKubevirtIpamController";
const IPAM_DEPLOYMENT: &str = "kubevirt-ipam-controller-manager";
/// The annotation that turns on Portworx's FA/FB driver (portworx-enterprise/platform/
/// configure-portworx-components/enable-fa-fb-driver).
const FA_FB_ANNOTATION: &str = "portworx.io/pure-csi-integration";
/// The key of Portworx's array credential Secret ([`PURE_SECRET`]).
const PURE_JSON_KEY: &str = "pure.json";

fn api(client: &Client, k: &Kind, namespace: Option<&str>) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &k.resource()),
        None => Api::all_with(client.clone(), &k.resource()),
    }
}

fn failed<T>(k: &Kind, e: &kube::Error) -> Read<T> {
    match status_code(e) {
        Some(404) => Read::Missing,
        Some(403) => Read::Unreadable(format!("forbidden: cannot read {}", k.kind)),
        _ => Read::Unreadable(format!("cannot read {}: {e}", k.kind)),
    }
}

/// One object, as JSON.
async fn get(client: &Client, k: &Kind, namespace: Option<&str>, name: &str) -> Read<Value> {
    match api(client, k, namespace).get(name).await {
        Ok(o) => Read::Found(serde_json::to_value(o).unwrap_or_default()),
        Err(e) => failed(k, &e),
    }
}

/// Every object of a kind (in `namespace`, or everywhere), as JSON.
async fn list(client: &Client, k: &Kind, namespace: Option<&str>) -> Read<Vec<Value>> {
    match list_all(&api(client, k, namespace), &ListParams::default()).await {
        Ok(l) => Read::Found(
            l.items
                .into_iter()
                .map(|o| serde_json::to_value(o).unwrap_or_default())
                .collect(),
        ),
        Err(e) => failed(k, &e),
    }
}

fn text(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn name_of(v: &Value) -> String {
    text(v, "/metadata/name").unwrap_or_default()
}

/// Everything doctor reads from the management cluster for `spec`. `admin_token` is
/// the array token pxfa itself runs with, compared (never shown) with each `pure.json`
/// found, so that an administrator's token in a tenant's reach is named.
pub async fn read_management(
    client: &Client,
    spec: &TenantStorage,
    admin_token: Option<&SecretString>,
) -> ManagementView {
    let portworx = storage_clusters(client).await;
    let credentials = management_credentials(client, spec, &portworx, admin_token).await;
    ManagementView {
        openshift_version: openshift_version(client).await,
        virtualization_version: virtualization_version(client).await,
        kubevirt_feature_gates: feature_gates(client).await,
        mce_components: mce_components(client).await,
        metallb: metallb(client).await,
        nmstate: get(client, &NMSTATE, None, "nmstate").await.map(|_| ()),
        uplinks: uplinks(client, spec).await,
        whereabouts_reconciler: get(
            client,
            &DAEMON_SET,
            Some("openshift-multus"),
            "whereabouts-reconciler",
        )
        .await
        .map(|_| ()),
        network_type: get(client, &NETWORK_OPERATOR, None, "cluster")
            .await
            .map(|n| text(&n, "/spec/defaultNetwork/type").unwrap_or_default()),
        ipam_controller: ipam_controller(client).await,
        eviction: eviction(client).await,
        worker_placement: worker_placement(client, spec).await,
        portworx,
        storage_classes: names(client, &STORAGE_CLASS).await,
        snapshot_classes: names(client, &SNAPSHOT_CLASS).await,
        machine_configs: machine_configs(client).await,
        referenced: referenced(client, spec).await,
        credentials,
    }
}

/// The site facts of the management cluster (what `apply --kubeconfig` resolves the
/// spec with), read as doctor reads them.
pub async fn read_site_facts(client: &Client, spec: &TenantStorage) -> SiteFacts {
    let view = read_management(client, spec, None).await;
    SiteFacts::from_management(&view, &spec.hcp_namespace())
}

async fn openshift_version(client: &Client) -> Read<String> {
    get(client, &CLUSTER_VERSION, None, "version")
        .await
        .map(|v| text(&v, "/status/desired/version").unwrap_or_default())
}

async fn virtualization_version(client: &Client) -> Read<String> {
    let hco = get(
        client,
        &HYPERCONVERGED,
        Some(CNV_NAMESPACE),
        "kubevirt-hyperconverged",
    )
    .await;
    hco.map(|v| {
        v.pointer("/status/versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|e| e.get("name").and_then(Value::as_str) == Some("operator"))
            .and_then(|e| e.get("version").and_then(Value::as_str))
            .unwrap_or_default()
            .to_string()
    })
}

/// OpenShift Virtualization's IPAM controller: the HyperConverged gate says so, or
/// its Deployment is there. Missing when OpenShift Virtualization is not installed.
async fn ipam_controller(client: &Client) -> Read<bool> {
    let hco = get(
        client,
        &HYPERCONVERGED,
        Some(CNV_NAMESPACE),
        "kubevirt-hyperconverged",
    )
    .await;
    match hco {
        Read::Found(h) if h.pointer(IPAM_GATE).and_then(Value::as_bool) == Some(true) => {
            Read::Found(true)
        }
        Read::Found(_) => {
            match get(client, &DEPLOYMENT, Some(CNV_NAMESPACE), IPAM_DEPLOYMENT).await {
                Read::Found(_) => Read::Found(true),
                Read::Missing => Read::Found(false),
                Read::Unreadable(why) => Read::Unreadable(why),
            }
        }
        Read::Missing => Read::Missing,
        Read::Unreadable(why) => Read::Unreadable(why),
    }
}

/// The HyperConverged eviction settings, at `spec` (HyperConverged v1beta1) or under
/// `spec.virtualization` (where Red Hat's procedure for non-migratable hosted-cluster
/// VMs writes them).
/// Every MachineConfig with the paths of the files it writes.
async fn machine_configs(client: &Client) -> Read<Vec<MachineConfigView>> {
    list(client, &MACHINE_CONFIG, None).await.map(|l| {
        l.iter()
            .map(|mc| MachineConfigView {
                name: name_of(mc),
                files: mc
                    .pointer("/spec/config/storage/files")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|f| text(f, "/path"))
                    .collect(),
            })
            .collect()
    })
}

/// Where the tenant NodePool's VMIs run (doctor's `worker-spread`).
async fn worker_placement(client: &Client, spec: &TenantStorage) -> Read<Vec<WorkerPlacement>> {
    match crate::vms::list_vmis(client, &spec.hcp_namespace()).await {
        Ok(items) => Read::Found(crate::vms::placement_of(items, &spec.node_pool())),
        Err(e) => failed(&VIRTUAL_MACHINE_INSTANCE, &e),
    }
}

async fn eviction(client: &Client) -> Read<EvictionView> {
    get(
        client,
        &HYPERCONVERGED,
        Some(CNV_NAMESPACE),
        "kubevirt-hyperconverged",
    )
    .await
    .map(|h| {
        let at = |p: &str| {
            text(&h, &format!("/spec{p}")).or_else(|| text(&h, &format!("/spec/virtualization{p}")))
        };
        let methods = |base: &str| {
            strings(
                &h,
                &format!("{base}/workloadUpdateStrategy/workloadUpdateMethods"),
            )
        };
        let mut update_methods = methods("/spec");
        if update_methods.is_empty() {
            update_methods = methods("/spec/virtualization");
        }
        EvictionView {
            strategy: at("/evictionStrategy"),
            update_methods,
        }
    })
}

async fn feature_gates(client: &Client) -> Read<Vec<String>> {
    get(
        client,
        &KUBEVIRT,
        Some(CNV_NAMESPACE),
        "kubevirt-kubevirt-hyperconverged",
    )
    .await
    .map(|v| {
        strings(
            &v,
            "/spec/configuration/developerConfiguration/featureGates",
        )
    })
}

fn strings(v: &Value, pointer: &str) -> Vec<String> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

async fn mce_components(client: &Client) -> Read<Vec<(String, bool)>> {
    get(client, &MCE, None, "multiclusterengine")
        .await
        .map(|v| {
            v.pointer("/spec/overrides/components")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| {
                    (
                        text(c, "/name").unwrap_or_default(),
                        c.get("enabled").and_then(Value::as_bool).unwrap_or(false),
                    )
                })
                .collect()
        })
}

/// MetalLB: Missing when its API is not served; the pools of every namespace.
async fn metallb(client: &Client) -> Read<MetallbView> {
    let instances = match list(client, &METALLB, None).await {
        Read::Found(i) => i,
        Read::Missing => return Read::Missing,
        Read::Unreadable(why) => return Read::Unreadable(why),
    };
    let pools = list(client, &IP_POOL, None)
        .await
        .found()
        .cloned()
        .unwrap_or_default();
    Read::Found(MetallbView {
        instance: !instances.is_empty(),
        pools: pools
            .iter()
            .map(|p| PoolView {
                name: name_of(p),
                auto_assign: p
                    .pointer("/spec/autoAssign")
                    .and_then(Value::as_bool)
                    .unwrap_or(true),
                namespaces: strings(p, "/spec/serviceAllocation/namespaces"),
                selectors: ["namespaceSelectors", "serviceSelectors"].iter().any(|k| {
                    p.pointer(&format!("/spec/serviceAllocation/{k}"))
                        .and_then(Value::as_array)
                        .is_some_and(|a| !a.is_empty())
                }),
            })
            .collect(),
    })
}

/// The spec's uplink and storage bridge on every node, from the NodeNetworkStates.
async fn uplinks(client: &Client, spec: &TenantStorage) -> Read<Vec<UplinkView>> {
    let Some(net) = &spec.spec.network else {
        return Read::Found(Vec::new());
    };
    list(client, &NNS, None).await.map(|states| {
        states
            .iter()
            .map(|s| {
                let iface = |name: &str| {
                    s.pointer("/status/currentState/interfaces")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .find(|i| i.get("name").and_then(Value::as_str) == Some(name))
                        .cloned()
                };
                UplinkView {
                    node: name_of(s),
                    mtu: iface(&net.uplink)
                        .and_then(|i| i.get("mtu").and_then(Value::as_u64))
                        .and_then(|m| u32::try_from(m).ok()),
                    bridge_type: iface(&net.bridge).and_then(|i| text(&i, "/type")),
                }
            })
            .collect()
    })
}

async fn storage_clusters(client: &Client) -> Read<Vec<StorageClusterView>> {
    list(client, &STORAGE_CLUSTER, None).await.map(|l| {
        l.iter()
            .map(|sc| StorageClusterView {
                namespace: text(sc, "/metadata/namespace").unwrap_or_default(),
                name: name_of(sc),
                version: text(sc, "/status/version").or_else(|| {
                    text(sc, "/spec/image")
                        .and_then(|i| i.rsplit_once(':').map(|(_, tag)| tag.to_string()))
                }),
                fa_fb_driver: sc
                    .pointer("/metadata/annotations")
                    .and_then(|a| a.get(FA_FB_ANNOTATION))
                    .and_then(Value::as_str)
                    == Some("true"),
                phase: text(sc, "/status/phase"),
            })
            .collect()
    })
}

async fn names(client: &Client, k: &Kind) -> Read<Vec<String>> {
    list(client, k, None)
        .await
        .map(|l| l.iter().map(name_of).collect())
}

/// The Secrets and the namespace the bundle names but does not create: the
/// HostedCluster's namespace, its pull secret and its SSH key.
async fn referenced(client: &Client, spec: &TenantStorage) -> Vec<ObjectRead> {
    let hc = &spec.spec.hosted_cluster;
    let mut wanted = vec![(
        NAMESPACE,
        None,
        hc.namespace.clone(),
        "spec.hostedCluster.namespace",
    )];
    wanted.push((
        SECRET,
        Some(hc.namespace.clone()),
        spec.pull_secret_name(),
        "spec.hostedCluster.pullSecret",
    ));
    if let Some(key) = &hc.ssh_key_secret {
        wanted.push((
            SECRET,
            Some(hc.namespace.clone()),
            key.clone(),
            "spec.hostedCluster.sshKeySecret",
        ));
    }
    let mut out = Vec::new();
    for (k, ns, name, field) in wanted {
        let read = get(client, &k, ns.as_deref(), &name).await.map(|_| ());
        out.push(ObjectRead {
            kind: k.kind.to_string(),
            namespace: ns,
            name,
            field: field.to_string(),
            read,
        });
    }
    out
}

/// `pure.json` Secrets in the management Portworx's namespaces and in the tenant's
/// namespaces on the management cluster (its HostedCluster's and its control plane's).
async fn management_credentials(
    client: &Client,
    spec: &TenantStorage,
    portworx: &Read<Vec<StorageClusterView>>,
    admin_token: Option<&SecretString>,
) -> Read<Vec<CredentialView>> {
    let mut namespaces: Vec<String> = portworx
        .found()
        .into_iter()
        .flatten()
        .map(|sc| sc.namespace.clone())
        .collect();
    namespaces.push(spec.spec.hosted_cluster.namespace.clone());
    namespaces.push(spec.hcp_namespace());
    namespaces.dedup();
    credentials_in(client, "management", &namespaces, admin_token).await
}

/// The `px-pure-secret` of each namespace, read by name (Portworx reads its array
/// credential from no other Secret), so doctor needs `get` on that name and never
/// lists, or receives, any other Secret's data.
async fn credentials_in(
    client: &Client,
    cluster: &str,
    namespaces: &[String],
    admin_token: Option<&SecretString>,
) -> Read<Vec<CredentialView>> {
    let mut out = Vec::new();
    for ns in namespaces {
        let api: Api<Secret> = Api::namespaced(client.clone(), ns);
        let secret = match api.get(PURE_SECRET).await {
            Ok(s) => s,
            Err(e) => match failed::<()>(&SECRET, &e) {
                Read::Unreadable(why) => return Read::Unreadable(why),
                _ => continue,
            },
        };
        let Some(bytes) = secret.data.as_ref().and_then(|d| d.get(PURE_JSON_KEY)) else {
            continue;
        };
        // Compared in memory, never shown: an unparsable pure.json compares as unknown.
        let parsed = std::str::from_utf8(&bytes.0)
            .ok()
            .and_then(|t| PureJson::parse(t).ok());
        out.push(CredentialView {
            cluster: cluster.to_string(),
            namespace: ns.clone(),
            name: PURE_SECRET.to_string(),
            is_admin_token: admin_token.and_then(|t| parsed.as_ref().map(|p| p.holds_token(t))),
        });
    }
    Read::Found(out)
}

/// Everything doctor reads from the tenant cluster; `manifests` (the rendered
/// bundle) says where the validation claim lives.
pub async fn read_tenant(
    client: &Client,
    spec: &TenantStorage,
    manifests: &[Manifest],
    admin_token: Option<&SecretString>,
) -> TenantView {
    let ns = spec.spec.portworx.namespace.as_str();
    let claim_ns = manifests
        .iter()
        .find(|m| {
            m.cluster == Cluster::Tenant
                && m.kind == "PersistentVolumeClaim"
                && m.name == VALIDATION_PVC
        })
        .and_then(|m| m.namespace.clone())
        .unwrap_or_else(|| "default".to_string());
    let operator = get(client, &SUBSCRIPTION, Some(ns), PORTWORX_OLM_PACKAGE).await;
    let secret = get(client, &SECRET, Some(ns), PURE_SECRET).await;
    let cluster = get(
        client,
        &STORAGE_CLUSTER,
        Some(ns),
        &spec.portworx_cluster_name(),
    )
    .await;
    let nodes = list(client, &STORAGE_NODE, Some(ns)).await;
    let claim = get(client, &PVC, Some(&claim_ns), VALIDATION_PVC).await;
    let credentials = credentials_in(client, "tenant", &[ns.to_string()], admin_token).await;
    TenantView {
        operator: operator.map(|s| text(&s, "/status/installedCSV").unwrap_or_default()),
        pure_secret: secret.map(|_| ()),
        storage_cluster: cluster.map(|s| text(&s, "/status/phase").unwrap_or_default()),
        storage_nodes: nodes.map(|l| {
            l.iter()
                .map(|n| (name_of(n), text(n, "/status/phase").unwrap_or_default()))
                .collect()
        }),
        validation_claim: claim.map(|c| text(&c, "/status/phase").unwrap_or_default()),
        credentials,
    }
}
