//! Option (c), KubeVirt CSI: no Portworx in the tenant. HyperShift's KubeVirt CSI
//! driver maps a guest StorageClass onto a management StorageClass; guest PVCs
//! become PVCs in the hosted control plane namespace. Nothing is needed on the array
//! beyond what the management Portworx already has.

use serde_json::json;

use super::{ArrayFacts, DriverError, StorageDriver};
use crate::desired::DesiredState;
use crate::render::management;
use crate::render::tenant;
use crate::render::{Cluster, Form, Manifest, RenderError, step};
use crate::sizing::Sizing;
use crate::spec::TenantStorage;

/// Dotted path of the HostedCluster field this option provides.
const STORAGE_DRIVER_PATH: &str = "spec.platform.kubevirt.storageDriver";

/// Namespace of the guest validation PVC (no Portworx namespace in the tenant).
const VALIDATION_NAMESPACE: &str = "default";

/// The KubeVirt CSI driver.
#[derive(Debug, Clone, Copy, Default)]
pub struct KubevirtCsi;

impl StorageDriver for KubevirtCsi {
    fn mode(&self) -> &'static str {
        "kubevirt-csi"
    }

    fn desired_state(
        &self,
        spec: &TenantStorage,
        _sizing: &Sizing,
    ) -> Result<DesiredState, DriverError> {
        Ok(DesiredState {
            tenant: spec.tenant_name().to_string(),
            ..DesiredState::default()
        })
    }

    fn manifests(
        &self,
        spec: &TenantStorage,
        _sizing: &Sizing,
        _facts: &ArrayFacts,
    ) -> Result<Vec<Manifest>, RenderError> {
        let hc = &spec.spec.hosted_cluster;
        let guest = &spec.spec.storage.guest_storage_class;
        let body = json!({
            "apiVersion": "hypershift.openshift.io/v1beta1",
            "kind": "HostedCluster",
            "metadata": {"name": hc.name, "namespace": hc.namespace},
            "spec": {
                "platform": {
                    "type": "KubeVirt",
                    "kubevirt": {
                        "storageDriver": {
                            "type": "Manual",
                            "manual": {
                                "storageClassMapping": [{
                                    "infraStorageClassName": hc.root_storage_class,
                                    "guestStorageClassName": guest,
                                }],
                            },
                        },
                    },
                },
            },
        });
        let fragment = Manifest {
            cluster: Cluster::Management,
            order: step::HOSTED_CLUSTER,
            file_name: String::new(),
            kind: "HostedCluster".to_string(),
            name: hc.name.clone(),
            namespace: Some(hc.namespace.clone()),
            body,
            secret: false,
            purpose: vec![
                format!(
                    "Maps guest StorageClass {guest} onto management class {} (RWX Block, so VMs stay live-migratable).",
                    hc.root_storage_class
                ),
                "storageDriver is IMMUTABLE: it must be in the HostedCluster when it is created."
                    .to_string(),
                "Portworx supports ReadWriteOnce only through this mapping; no RWX, no DR."
                    .to_string(),
            ],
            form: Form::Fragment {
                path: STORAGE_DRIVER_PATH.to_string(),
            },
        };
        let mut pvc = tenant::validation_pvc(spec, guest, VALIDATION_NAMESPACE);
        pvc = pvc.note(format!(
            "Binds through the mapping: a PVC appears in the hosted control plane namespace {}.",
            spec.hcp_namespace()
        ));
        pvc = pvc.note(
            "If the guest class binds WaitForFirstConsumer, the PVC stays Pending until a pod mounts it.",
        );
        Ok(vec![fragment, management::node_pool(spec, &[])?, pvc])
    }
}
