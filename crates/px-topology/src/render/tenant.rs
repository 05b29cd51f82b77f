//! Tenant-cluster objects: the Portworx namespace, `px-pure-secret`, the
//! StorageCluster, the application StorageClass and a validation PVC.

use secrecy::SecretString;
use serde_json::{Value, json};

use super::management::{PX_PROVISIONER, labels};
use super::manifest::{Cluster, Manifest};
use super::step;
use crate::pure_json::PureJson;
use crate::spec::TenantStorage;

/// Name of the validation PVC: small, bound immediately, proves the class works.
pub const VALIDATION_PVC: &str = "pxfa-validate";

/// How Portworx in the tenant gets its drives; the StorageCluster has either
/// `cloudStorage` or `storage`, never both (`storage` would silently win).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PortworxDrives {
    /// FlashArray Cloud Drives: Portworx creates the volumes itself.
    Cloud {
        /// `size=<GiB>[,pod=<pod>]`, one entry per drive per node.
        device_specs: Vec<String>,
        /// `size=<GiB>[,pod=<pod>]` for the PX-StoreV2 metadata device.
        metadata_spec: String,
        /// Storage nodes at install.
        initial_storage_nodes: u32,
    },
    /// Disks already attached to every node, by stable path.
    Local {
        /// Data device paths.
        devices: Vec<String>,
        /// PX-StoreV2 metadata device path.
        metadata_device: String,
    },
}

/// The Portworx namespace in the tenant.
pub(crate) fn namespace(spec: &TenantStorage) -> Manifest {
    let body = json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": spec.spec.portworx.namespace, "labels": labels(spec)},
    });
    Manifest::resource(
        Cluster::Tenant,
        step::T_NAMESPACE,
        body,
        &["Namespace of the tenant's Portworx (its operator, StorageCluster, px-pure-secret)."],
    )
}

/// The OLM package of the Portworx Enterprise operator on OpenShift (OperatorHub,
/// libopenstorage/operator `deploy/olm-catalog/portworx`).
pub const PORTWORX_OLM_PACKAGE: &str = "portworx-certified";
/// The catalog that ships it.
pub(crate) const PORTWORX_OLM_CATALOG: &str = "certified-operators";

/// The OperatorGroup and Subscription that install the Portworx operator into the
/// Portworx namespace from OperatorHub, as OpenShift's "Installing from OperatorHub
/// using the CLI" does for a single-namespace operator (Portworx's OpenShift install
/// picks "A specific namespace on the cluster"). No channel: OLM uses the package's
/// default channel. Automatic install-plan approval, so the bundle applies as is.
pub(crate) fn portworx_operator(spec: &TenantStorage) -> Vec<Manifest> {
    let ns = &spec.spec.portworx.namespace;
    let group = json!({
        "apiVersion": "operators.coreos.com/v1",
        "kind": "OperatorGroup",
        "metadata": {"name": "portworx", "namespace": ns, "labels": labels(spec)},
        "spec": {"targetNamespaces": [ns]},
    });
    let sub = json!({
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": PORTWORX_OLM_PACKAGE, "namespace": ns, "labels": labels(spec)},
        "spec": {
            "name": PORTWORX_OLM_PACKAGE,
            "source": PORTWORX_OLM_CATALOG,
            "sourceNamespace": "openshift-marketplace",
            "installPlanApproval": "Automatic",
        },
    });
    vec![
        Manifest::resource(
            Cluster::Tenant,
            step::T_OPERATOR,
            group,
            &[
                "Operator group of the Portworx namespace: the Portworx operator watches this namespace only.",
            ],
        ),
        Manifest::resource(
            Cluster::Tenant,
            step::T_OPERATOR,
            sub,
            &[
                "Installs the Portworx Enterprise operator from OperatorHub (package portworx-certified,",
                "catalog certified-operators, its default channel); the StorageCluster needs its CRD.",
                "Wait until `oc get csv -n <portworx namespace>` shows Succeeded before the next step.",
                "installPlanApproval Automatic: set it to Manual after install to pin operator upgrades.",
            ],
        ),
    ]
}

/// `px-pure-secret` with `pure.json`. The token is written only when the admin asked
/// for secrets *and* one is known; otherwise a placeholder that cannot be mistaken
/// for a token (and that Portworx will refuse) tells the admin what to paste.
pub fn pure_secret(spec: &TenantStorage, token: Option<&SecretString>) -> Manifest {
    let endpoint = spec
        .spec
        .array
        .endpoint
        .clone()
        .unwrap_or_else(|| "<array management endpoint>".to_string());
    let user = spec.token_user();
    let (token, filled) = match token {
        Some(t) => (t.clone(), true),
        None => (PureJson::placeholder_token(&user), false),
    };
    let mut pure = PureJson::single(endpoint, token);
    // With a realm the token's user has rights only inside it, and Portworx must
    // be told which realm to work in (`Realm`, one per array per cluster).
    pure.flash_arrays[0].realm = spec.realm().map(|r| r.to_string());
    let text = pure.to_text();
    let body = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "px-pure-secret",
            "namespace": spec.spec.portworx.namespace,
            "labels": labels(spec),
        },
        "type": "Opaque",
        "stringData": {"pure.json": text},
    });
    let mut m = Manifest::resource(
        Cluster::Tenant,
        step::T_SECRET,
        body,
        &[
            "FlashArray credentials for the tenant's Portworx (px-pure-secret/pure.json, names fixed by Portworx).",
            "Portworx re-reads it about every 5 minutes.",
        ],
    )
    .secret();
    if let Some(r) = spec.realm() {
        m = m.note(format!(
            "Array user {user} has rights only inside realm {r} (Realm in pure.json)."
        ));
    }
    m = if filled {
        m.note(format!("Holds the live API token of array user {user}."))
    } else {
        m.note(format!(
            "TEMPLATE: replace the APIToken placeholder with the token of array user {user} \
             (pxfa apply --include-secrets fills it in)."
        ))
    };
    m
}

/// The tenant StorageCluster.
pub(crate) fn storage_cluster(
    spec: &TenantStorage,
    drives: &PortworxDrives,
    env: &[(&str, String)],
) -> Manifest {
    let px = &spec.spec.portworx;
    let mut s = serde_json::Map::new();
    s.insert(
        "image".into(),
        json!(format!("portworx/oci-monitor:{}", px.version)),
    );
    s.insert("kvdb".into(), json!({"internal": true}));
    match drives {
        PortworxDrives::Cloud {
            device_specs,
            metadata_spec,
            initial_storage_nodes,
        } => {
            s.insert(
                "cloudStorage".into(),
                json!({
                    "deviceSpecs": device_specs,
                    "systemMetadataDeviceSpec": metadata_spec,
                    "initialStorageNodes": initial_storage_nodes,
                }),
            );
        }
        PortworxDrives::Local {
            devices,
            metadata_device,
        } => {
            s.insert(
                "storage".into(),
                json!({"devices": devices, "systemMetadataDevice": metadata_device}),
            );
        }
    }
    s.insert("csi".into(), json!({"enabled": true}));
    s.insert("stork".into(), json!({"enabled": true}));
    if !env.is_empty() {
        let list: Vec<Value> = env
            .iter()
            .map(|(k, v)| json!({"name": k, "value": v}))
            .collect();
        s.insert("env".into(), Value::Array(list));
    }
    let body = json!({
        "apiVersion": "core.libopenstorage.org/v1",
        "kind": "StorageCluster",
        "metadata": {
            "name": spec.portworx_cluster_name(),
            "namespace": px.namespace,
            "labels": labels(spec),
            "annotations": {
                "portworx.io/is-openshift": "true",
                "portworx.io/misc-args": "-T px-storev2",
            },
        },
        "spec": Value::Object(s),
    });
    Manifest::resource(
        Cluster::Tenant,
        step::T_STORAGE_CLUSTER,
        body,
        &[
            "Portworx in the tenant, PX-StoreV2.",
            "PX-StoreV2 is set explicitly: the operator's pre-flight does not run on KubeVirt nodes.",
            "Needs the Portworx operator of the Subscription step (CSV Succeeded). The drive layout is immutable after install.",
        ],
    )
}

/// The tenant's application StorageClass, replicated `replication` times.
pub(crate) fn app_storage_class(spec: &TenantStorage) -> Manifest {
    let default = spec.spec.storage.default_storage_class;
    let mut meta = json!({"name": spec.app_storage_class(), "labels": labels(spec)});
    if default {
        meta["annotations"] = json!({ DEFAULT_CLASS_ANNOTATION: "true" });
    }
    let body = json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": meta,
        "provisioner": PX_PROVISIONER,
        "parameters": {"repl": spec.spec.storage.replication.to_string()},
        "volumeBindingMode": "Immediate",
        "allowVolumeExpansion": true,
    });
    let m = Manifest::resource(
        Cluster::Tenant,
        step::T_STORAGE_CLASS,
        body,
        &["StorageClass for the tenant's applications."],
    );
    if default {
        m.note(
            "The tenant's DEFAULT class (storage.defaultStorageClass): claims without a class land here. \
             Remove the annotation from any other default class first, or the newest default wins.",
        )
    } else {
        m.note("Not the default class: claims must name it (storage.defaultStorageClass: true makes it the default).")
    }
}

/// The annotation that makes a StorageClass the cluster's default (Kubernetes).
pub(crate) const DEFAULT_CLASS_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";

/// A 1Gi ReadWriteOnce PVC of `class` in `namespace`: `Bound` proves the storage
/// path end to end; delete it afterwards.
pub(crate) fn validation_pvc(spec: &TenantStorage, class: &str, namespace: &str) -> Manifest {
    let body = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": VALIDATION_PVC, "namespace": namespace, "labels": labels(spec)},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": class,
            "resources": {"requests": {"storage": "1Gi"}},
        },
    });
    Manifest::resource(
        Cluster::Tenant,
        step::T_VALIDATE,
        body,
        &["Validation: `oc get pvc` must show it Bound within a minute; then delete it."],
    )
}
