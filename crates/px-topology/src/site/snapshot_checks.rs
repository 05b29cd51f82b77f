//! kubevirt-csi maps the guest's VolumeSnapshotClass to a management one
//! (`HostedCluster spec.platform.kubevirt.storageDriver.manual.volumeSnapshotClassMapping`,
//! `infraVolumeSnapshotClassName`): a guest snapshot is taken with that class on the
//! management cluster, so it has to exist there.

use super::report::{Check, Layer};
use super::views::{ManagementView, Read};
use crate::spec::TenantStorage;

/// `infra-snapshot-class`: the management VolumeSnapshotClass the HostedCluster maps
/// the guest's snapshots to (`spec.storage.infraSnapshotClass`) exists. kubevirt-csi
/// only: the Portworx modes snapshot inside the tenant.
pub(super) fn infra_snapshot_class(spec: &TenantStorage, view: &ManagementView) -> Option<Check> {
    if !spec.mode().guest_claims_are_management_claims() {
        return None;
    }
    let name = &spec.spec.storage.infra_snapshot_class;
    let c = Check::of(
        Layer::Management,
        "infra-snapshot-class",
        format!("VolumeSnapshotClass {name}"),
    );
    let fix = format!(
        "create VolumeSnapshotClass {name} for the infra class's CSI driver (Portworx: driver \
         pxd.portworx.com), or name an existing one in spec.storage.infraSnapshotClass; until \
         then the guest's VolumeSnapshots fail"
    );
    Some(match &view.snapshot_classes {
        Read::Found(l) if l.iter().any(|n| n == name) => c.ok("present"),
        Read::Found(_) => c.fail("missing", fix),
        Read::Missing => c.fail(
            "the VolumeSnapshotClass API is not served (no snapshot controller CRDs)",
            fix,
        ),
        Read::Unreadable(why) => c.unknown(
            why.clone(),
            "run doctor with a kubeconfig that may list VolumeSnapshotClasses",
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::CheckStatus;

    use crate::site::example_spec as spec;

    #[test]
    fn the_mapped_class_must_exist_for_kubevirt_csi_only() {
        let s = spec("kubevirt-csi");
        let mut v = ManagementView::unread("t");
        v.snapshot_classes = Read::Found(vec![s.spec.storage.infra_snapshot_class.clone()]);
        assert_eq!(
            infra_snapshot_class(&s, &v).unwrap().status,
            CheckStatus::Ok
        );
        v.snapshot_classes = Read::Found(vec!["other".into()]);
        let c = infra_snapshot_class(&s, &v).unwrap();
        assert_eq!(c.status, CheckStatus::Fail);
        assert!(c.fix.unwrap().contains("spec.storage.infraSnapshotClass"));
        v.snapshot_classes = Read::Missing;
        assert_eq!(
            infra_snapshot_class(&s, &v).unwrap().status,
            CheckStatus::Fail
        );
        assert!(infra_snapshot_class(&spec("cloud-drive"), &v).is_none());
        assert!(infra_snapshot_class(&spec("direct-access"), &v).is_none());
    }
}
