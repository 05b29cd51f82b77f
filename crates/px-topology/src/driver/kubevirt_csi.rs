//! Option (c), KubeVirt CSI: no Portworx in the tenant. HyperShift's KubeVirt CSI
//! driver maps a guest StorageClass onto a management StorageClass; guest PVCs
//! become PVCs in the hosted control plane namespace. Nothing is needed on the array
//! beyond what the management Portworx already has.

use super::{ArrayFacts, DriverError, StorageDriver};
use crate::desired::DesiredState;
use crate::render::hosted_cluster::GuestStorage;
use crate::render::management;
use crate::render::tenant;
use crate::render::{Manifest, RenderError};
use crate::sizing::Sizing;
use crate::spec::TenantStorage;

/// Namespace of the guest validation PVC (no Portworx namespace in the tenant).
const VALIDATION_NAMESPACE: &str = "default";

/// The KubeVirt CSI driver.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct KubevirtCsi;

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
            tenant: spec.tenant_id(),
            ..DesiredState::default()
        })
    }

    fn guest_storage(&self, spec: &TenantStorage) -> GuestStorage {
        let st = &spec.spec.storage;
        GuestStorage::Manual {
            infra_class: spec.spec.hosted_cluster.root_storage_class.clone(),
            guest_class: st.guest_storage_class.clone(),
            infra_snapshot_class: st.infra_snapshot_class.clone(),
            guest_snapshot_class: st.guest_snapshot_class.clone(),
        }
    }

    fn manifests(
        &self,
        spec: &TenantStorage,
        _sizing: &Sizing,
        _facts: &ArrayFacts,
    ) -> Result<Vec<Manifest>, RenderError> {
        let guest = &spec.spec.storage.guest_storage_class;
        let mut pvc = tenant::validation_pvc(spec, guest, VALIDATION_NAMESPACE);
        pvc = pvc.note(format!(
            "Binds through the mapping: a PVC appears in the hosted control plane namespace {}.",
            spec.hcp_namespace()
        ));
        // HyperShift makes the guest class from the mapping with no volumeBindingMode
        // (hostedclusterconfigoperator resources/kubevirt, whose unit test
        // TestReconcileKubevirtCSIDriver expects csi.kubevirt.io, bus scsi,
        // infraStorageClassName and expansion only), and Kubernetes defaults it to
        // Immediate: the claim binds with no pod.
        pvc = pvc.note(
            "The guest class HyperShift makes from the mapping sets no volumeBindingMode, so it binds Immediate (the \
             Kubernetes default; openshift/hypershift hostedclusterconfigoperator resources/kubevirt, \
             TestReconcileKubevirtCSIDriver): the claim binds with no pod. Pending means the mapping or the infra class.",
        );
        Ok(vec![management::node_pool(spec, &[])?, pvc])
    }
}
