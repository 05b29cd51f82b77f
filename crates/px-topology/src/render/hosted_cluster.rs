//! The HostedCluster itself, its namespace and its pull secret, and the `hcp create
//! cluster kubevirt` command that would make the same cluster.
//!
//! The HostedCluster is the object whose mistakes cannot be fixed later:
//! `platform.kubevirt.storageDriver` is immutable. HyperShift's `Default` driver
//! makes the management default class the guest's default through KubeVirt CSI, so a
//! tenant running its own Portworx (cloud-drive, direct-access) gets `None`, and a
//! kubevirt-csi tenant gets `Manual` with exactly the classes pxfa maps.

use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};

use super::management::{labels, shared_labels};
use super::manifest::{Cluster, Manifest};
use super::{RenderError, quantity, step};
use crate::spec::TenantStorage;

/// HyperShift's etcd volume size for a managed etcd ([H] HostedCluster API default).
pub(crate) const ETCD_SIZE: &str = "8Gi";
/// The guest cluster network `hcp create cluster kubevirt` uses by default: it must
/// not overlap the management cluster's own networks ([M] HyperShift KubeVirt docs).
pub(crate) const CLUSTER_NETWORK: &str = "10.132.0.0/14";
/// The guest service network `hcp create cluster kubevirt` uses by default.
pub(crate) const SERVICE_NETWORK: &str = "172.31.0.0/16";
/// The key of a `kubernetes.io/dockerconfigjson` Secret.
pub(crate) const DOCKER_CONFIG_KEY: &str = ".dockerconfigjson";

/// What the HostedCluster's KubeVirt CSI driver gives the guest (immutable).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestStorage {
    /// `storageDriver: None`: the tenant brings its own storage (Portworx).
    None,
    /// `storageDriver: Manual` with one class and one snapshot class mapped.
    Manual {
        /// Management StorageClass (RWX Block capable).
        infra_class: String,
        /// Guest StorageClass name.
        guest_class: String,
        /// Management VolumeSnapshotClass.
        infra_snapshot_class: String,
        /// Guest VolumeSnapshotClass name.
        guest_snapshot_class: String,
    },
}

impl GuestStorage {
    fn storage_driver(&self) -> Value {
        match self {
            GuestStorage::None => json!({"type": "None"}),
            GuestStorage::Manual {
                infra_class,
                guest_class,
                infra_snapshot_class,
                guest_snapshot_class,
            } => json!({
                "type": "Manual",
                "manual": {
                    "storageClassMapping": [{
                        "infraStorageClassName": infra_class,
                        "guestStorageClassName": guest_class,
                    }],
                    "volumeSnapshotClassMapping": [{
                        "infraVolumeSnapshotClassName": infra_snapshot_class,
                        "guestVolumeSnapshotClassName": guest_snapshot_class,
                    }],
                },
            }),
        }
    }
}

fn release_image(spec: &TenantStorage) -> Result<&str, RenderError> {
    spec.spec
        .hosted_cluster
        .release_image
        .as_deref()
        .ok_or_else(|| {
            RenderError::field(
                "spec.hostedCluster.releaseImage",
                "the HostedCluster and its NodePool need the OpenShift release image; set releaseImage",
            )
        })
}

/// The namespace of the HostedCluster, NodePool and pull secret (`clusters` by
/// default; shared by tenants, so it carries no tenant label).
pub(crate) fn namespace(spec: &TenantStorage) -> Manifest {
    let body = json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": spec.spec.hosted_cluster.namespace, "labels": shared_labels()},
    });
    Manifest::resource(
        Cluster::Management,
        step::HC_NAMESPACE,
        body,
        &["Namespace of the HostedCluster, its NodePool and pull secret (shared by tenants)."],
    )
}

/// The pull secret the HostedCluster refers to. Filled only from a file the admin
/// gave (`pull_secret`); otherwise a template the API server refuses until the
/// placeholder is replaced (a `kubernetes.io/dockerconfigjson` Secret must hold JSON).
pub(crate) fn pull_secret(spec: &TenantStorage, pull_secret: Option<&SecretString>) -> Manifest {
    let (text, filled) = match pull_secret {
        Some(s) => (s.expose_secret().to_string(), true),
        None => (
            "<paste the pull secret from console.redhat.com/openshift/install/pull-secret here>"
                .to_string(),
            false,
        ),
    };
    let body = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": spec.pull_secret_name(),
            "namespace": spec.spec.hosted_cluster.namespace,
            "labels": labels(spec),
        },
        "type": "kubernetes.io/dockerconfigjson",
        "stringData": {DOCKER_CONFIG_KEY: text},
    });
    let m = Manifest::resource(
        Cluster::Management,
        step::HC_NAMESPACE,
        body,
        &["Pull secret of the hosted cluster's release images (HostedCluster spec.pullSecret)."],
    )
    .secret();
    if filled {
        m.note("Holds the pull secret given with --pull-secret-file.")
    } else {
        m.note(
            "TEMPLATE: replace the placeholder with your pull secret (pxfa render \
             --include-secrets --pull-secret-file FILE fills it in).",
        )
    }
}

/// The key HyperShift reads the workers' SSH public key from in the Secret named by
/// `spec.sshKey` (`hcp create cluster --ssh-key` writes it there; HyperShift's
/// `hostedcluster_controller.go` reads `id_rsa.pub`).
pub(crate) const SSH_PUBLIC_KEY_KEY: &str = "id_rsa.pub";

/// The Secret the HostedCluster's `spec.sshKey` names (`hostedCluster.sshKeySecret`),
/// as a template whose `id_rsa.pub` is a placeholder: pxfa holds no key. HyperShift
/// fails the HostedCluster reconcile when the Secret is missing ("failed to get
/// hostedcluster SSHKey secret", openshift/hypershift `hostedcluster_controller.go`),
/// so the bundle carries it, applied before the HostedCluster. `None` without
/// `sshKeySecret` (no `spec.sshKey` either). A public key is no credential, but the
/// template must never replace a working Secret: `pxfa apply --kubeconfig` leaves it
/// to the admin, as it does the pull-secret template.
pub(crate) fn ssh_key_secret(spec: &TenantStorage) -> Option<Manifest> {
    let name = spec.spec.hosted_cluster.ssh_key_secret.as_ref()?;
    let ns = &spec.spec.hosted_cluster.namespace;
    let create = [
        "oc".to_string(),
        "create".to_string(),
        "secret".to_string(),
        "generic".to_string(),
        name.clone(),
        "-n".to_string(),
        ns.clone(),
        format!("--from-file={SSH_PUBLIC_KEY_KEY}=<key.pub>"),
    ];
    let body = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": labels(spec),
        },
        "type": "Opaque",
        "stringData": {SSH_PUBLIC_KEY_KEY: "<paste the workers' SSH public key (one line of an .pub file) here>"},
    });
    Some(
        Manifest::resource(
            Cluster::Management,
            step::HC_NAMESPACE,
            body,
            &["SSH public key of the worker VMs (HostedCluster spec.sshKey); HyperShift stops without it."],
        )
        // Every Secret pxfa renders is handled as one (owner-only file, never in
        // Debug), although a public key is no credential.
        .secret()
        .note(
            "TEMPLATE: replace the placeholder with your public key before applying (pxfa apply \
             --kubeconfig never applies this template), or create the Secret instead:",
        )
        .note(format!("  {}", super::shell::join(&create))),
    )
}

/// The HostedCluster: release, pull secret, optional SSH key, managed etcd on
/// `etcdStorageClass`, the API server on a LoadBalancer (MetalLB) and HyperShift's
/// defaults for the other services, KubeVirt with `storage`.
pub(crate) fn hosted_cluster(
    spec: &TenantStorage,
    storage: &GuestStorage,
) -> Result<Manifest, RenderError> {
    let hc = &spec.spec.hosted_cluster;
    let image = release_image(spec)?;
    let mut persistent = serde_json::Map::new();
    persistent.insert("size".into(), json!(ETCD_SIZE));
    if let Some(class) = &hc.etcd_storage_class {
        persistent.insert("storageClassName".into(), json!(class));
    }
    let route =
        |service: &str| json!({"service": service, "servicePublishingStrategy": {"type": "Route"}});
    let mut s = serde_json::Map::new();
    s.insert("release".into(), json!({"image": image}));
    s.insert(
        "pullSecret".into(),
        json!({"name": spec.pull_secret_name()}),
    );
    if let Some(key) = &hc.ssh_key_secret {
        s.insert("sshKey".into(), json!({"name": key}));
    }
    s.insert(
        "etcd".into(),
        json!({
            "managementType": "Managed",
            "managed": {"storage": {
                "type": "PersistentVolume",
                "persistentVolume": Value::Object(persistent),
            }},
        }),
    );
    s.insert(
        "networking".into(),
        json!({
            "networkType": "OVNKubernetes",
            "clusterNetwork": [{"cidr": CLUSTER_NETWORK}],
            "serviceNetwork": [{"cidr": SERVICE_NETWORK}],
        }),
    );
    s.insert(
        "services".into(),
        json!([
            {"service": "APIServer", "servicePublishingStrategy": {"type": "LoadBalancer"}},
            route("OAuthServer"),
            route("Konnectivity"),
            route("Ignition"),
        ]),
    );
    s.insert(
        "platform".into(),
        json!({
            "type": "KubeVirt",
            "kubevirt": {
                "baseDomainPassthrough": true,
                "storageDriver": storage.storage_driver(),
            },
        }),
    );
    let body = json!({
        "apiVersion": "hypershift.openshift.io/v1beta1",
        "kind": "HostedCluster",
        "metadata": {"name": hc.name, "namespace": hc.namespace, "labels": labels(spec)},
        "spec": Value::Object(s),
    });
    let mut m = Manifest::resource(
        Cluster::Management,
        step::HOSTED_CLUSTER,
        body,
        &[
            "The hosted cluster; HyperShift creates its control plane namespace (which holds the worker VMs).",
            "platform.kubevirt.storageDriver is IMMUTABLE: review it before the first apply.",
        ],
    );
    m = match storage {
        GuestStorage::None => m.note(
            "storageDriver None: the tenant runs its own Portworx, so HyperShift's KubeVirt CSI class \
             must not become the guest's default.",
        ),
        GuestStorage::Manual {
            infra_class,
            guest_class,
            ..
        } => m.note(format!(
            "storageDriver Manual: guest class {guest_class} maps onto management class {infra_class}; \
             Portworx supports ReadWriteOnce through it (RWX Block works in HyperShift, RWX Filesystem never)."
        )),
    };
    let m_spec = &spec.spec.management;
    m = m.note(if m_spec.external_load_balancer {
        format!(
            "The API server is a LoadBalancer service in {}: the spec says an external load balancer \
             serves it (management.externalLoadBalancer); without one it stays pending.",
            spec.hcp_namespace()
        )
    } else if m_spec.metallb.is_some() {
        format!(
            "The API server is a LoadBalancer service in {}: the MetalLB pool rendered with this \
             bundle serves it.",
            spec.hcp_namespace()
        )
    } else {
        "The API server is a LoadBalancer service, and nothing in this bundle serves it: set \
         management.metallb or management.externalLoadBalancer (lint PXFA028)."
            .to_string()
    });
    m = m.note(format!(
        "Same cluster with hcp: {}",
        super::shell::join(&hcp_create_command(spec, storage)?)
    ));
    if *storage == GuestStorage::None {
        m = m.note(
            "hcp has no flag for storageDriver None: with hcp, use --render and set it before applying.",
        );
    }
    Ok(m)
}

/// The `hcp create cluster kubevirt` arguments for the same cluster and NodePool, as
/// words; show them with [`super::shell::join`], which quotes what needs quoting.
/// The pull secret and SSH key are files only the admin has: shown as placeholders.
/// A word holding a control character or line break is refused (validation already
/// refuses such values; this keeps a terminal or a comment from ever receiving one).
pub fn hcp_create_command(
    spec: &TenantStorage,
    storage: &GuestStorage,
) -> Result<Vec<String>, RenderError> {
    let hc = &spec.spec.hosted_cluster;
    let mut a: Vec<String> = ["hcp", "create", "cluster", "kubevirt"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut flag = |k: &str, v: String| a.push(format!("--{k}={v}"));
    flag("name", hc.name.clone());
    flag("namespace", hc.namespace.clone());
    flag("release-image", release_image(spec)?.to_string());
    flag("pull-secret", "<pull-secret-file>".to_string());
    if hc.ssh_key_secret.is_some() {
        flag("ssh-key", "<ssh-public-key-file>".to_string());
    }
    flag("node-pool-replicas", hc.replicas.to_string());
    flag("node-upgrade-type", "InPlace".to_string());
    flag("cores", hc.cores.to_string());
    flag("memory", quantity(hc.memory));
    flag(
        "root-volume-size",
        hc.root_volume_size.gib_ceil().to_string(),
    );
    flag("root-volume-storage-class", hc.root_storage_class.clone());
    flag("root-volume-access-modes", "ReadWriteMany".to_string());
    flag("root-volume-volume-mode", "Block".to_string());
    if let Some(class) = &hc.etcd_storage_class {
        flag("etcd-storage-class", class.clone());
    }
    if spec.workers_on_storage_network()
        && let Some(net) = &spec.spec.network
    {
        flag(
            "additional-network",
            format!("name:{}/{}", spec.hcp_namespace(), net.nad_name),
        );
    }
    if let GuestStorage::Manual {
        infra_class,
        guest_class,
        infra_snapshot_class,
        guest_snapshot_class,
    } = storage
    {
        flag(
            "infra-storage-class-mapping",
            format!("{infra_class}/{guest_class}"),
        );
        flag(
            "infra-volumesnapshot-class-mapping",
            format!("{infra_snapshot_class}/{guest_snapshot_class}"),
        );
    }
    if let Some(w) = a
        .iter()
        .find(|w| w.chars().any(crate::spec::is_unprintable))
    {
        return Err(RenderError::field(
            "spec.hostedCluster",
            format!("the hcp command would hold a control character: {w:?}"),
        ));
    }
    Ok(a)
}
