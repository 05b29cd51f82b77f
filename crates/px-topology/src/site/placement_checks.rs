//! Where the tenant's storage workers run: two Portworx nodes of one tenant on one
//! management node means one drain (a MachineConfig rollout, an OpenShift or
//! management Portworx upgrade) takes both, and on three workers the internal KVDB's
//! quorum. HyperShift only prefers to spread a NodePool's VMs (`ScheduleAnyway`), so
//! doctor and `pxfa status` look at where they landed.

use std::collections::BTreeMap;

use super::report::{Check, Layer};
use super::views::{ManagementView, Read, WorkerPlacement};
use crate::spec::TenantStorage;

/// The management nodes that run more than one of `placements`, each with the VMs on
/// it (sorted by node, then VM). Unscheduled VMs share no node.
pub fn shared_nodes(placements: &[WorkerPlacement]) -> Vec<(String, Vec<String>)> {
    let mut by_node: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for p in placements {
        if let Some(node) = p.node.as_deref() {
            by_node.entry(node).or_default().push(p.vm.clone());
        }
    }
    by_node
        .into_iter()
        .filter(|(_, vms)| vms.len() > 1)
        .map(|(node, mut vms)| {
            vms.sort();
            (node.to_string(), vms)
        })
        .collect()
}

/// What to do about workers sharing a node, per mode: whether the VM can move
/// while running decides between a migration and a stop/start.
fn move_one(spec: &TenantStorage) -> String {
    let ns = spec.hcp_namespace();
    // Drives that are VM disks may be ReadWriteOnce (not live-migratable).
    if spec.mode().drives_are_vm_disks() {
        format!(
            "move one of them: `virtctl migrate <vm> -n {ns}` where the drives are ReadWriteMany; with \
             ReadWriteOnce drives cordon the node, `virtctl stop` and `virtctl start` the VM (it starts \
             elsewhere), uncordon, and wait for its Portworx node to be Online"
        )
    } else {
        format!(
            "live-migrate one of them to another node (`virtctl migrate <vm> -n {ns}`), one at a time, \
             waiting for its Portworx node to be Online"
        )
    }
}

/// `worker-spread`: no two storage workers of the tenant on one management node.
/// Only for the modes that run Portworx in the tenant.
pub(super) fn worker_spread(spec: &TenantStorage, view: &ManagementView) -> Option<Check> {
    if !spec.mode().runs_portworx() {
        return None;
    }
    let c = Check::of(
        Layer::Management,
        "worker-spread",
        format!(
            "VirtualMachineInstances of NodePool {} in {} status.nodeName",
            spec.node_pool(),
            spec.hcp_namespace()
        ),
    );
    Some(match &view.worker_placement {
        Read::Found(l) if l.is_empty() => c.ok("no worker VM running yet"),
        Read::Found(l) => {
            let shared = shared_nodes(l);
            if shared.is_empty() {
                let nodes = l.iter().filter(|p| p.node.is_some()).count();
                c.ok(format!("{nodes} worker VM(s), each on its own management node"))
            } else {
                c.warn(
                    format!(
                        "{}: one drain takes more than one Portworx node of this tenant (on three \
                         workers, the KVDB quorum)",
                        describe(&shared)
                    ),
                    move_one(spec),
                )
            }
        }
        Read::Missing => c.unknown(
            "the VirtualMachineInstance API is not served",
            "install OpenShift Virtualization",
        ),
        Read::Unreadable(why) => c.unknown(
            why.clone(),
            "run doctor with a kubeconfig that may list VirtualMachineInstances in the hosted control plane namespace",
        ),
    })
}

/// `node a runs w1, w2; node b runs w3, w4`.
pub(crate) fn describe(shared: &[(String, Vec<String>)]) -> String {
    shared
        .iter()
        .map(|(node, vms)| format!("node {node} runs {}", vms.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::CheckStatus;

    fn at(vm: &str, node: Option<&str>) -> WorkerPlacement {
        WorkerPlacement {
            vm: vm.into(),
            node: node.map(str::to_string),
        }
    }

    use crate::site::example_spec as spec;

    #[test]
    fn shared_nodes_name_each_node_and_its_vms() {
        let l = [
            at("np-b", Some("n1")),
            at("np-a", Some("n1")),
            at("np-c", Some("n2")),
            at("np-d", None),
            at("np-e", None),
        ];
        assert_eq!(
            shared_nodes(&l),
            vec![(
                "n1".to_string(),
                vec!["np-a".to_string(), "np-b".to_string()]
            )]
        );
        assert!(shared_nodes(&l[2..]).is_empty());
    }

    #[test]
    fn co_located_storage_workers_warn_with_the_modes_move() {
        let mut v = ManagementView::unread("t");
        v.worker_placement = Read::Found(vec![at("np-a", Some("n1")), at("np-b", Some("n1"))]);
        for mode in ["cloud-drive", "direct-access"] {
            let c = worker_spread(&spec(mode), &v).unwrap();
            assert_eq!(c.status, CheckStatus::Warn, "{mode}");
            assert!(c.found.contains("node n1 runs np-a, np-b"), "{}", c.found);
            assert!(c.fix.unwrap().contains("virtctl migrate"));
        }
        assert!(worker_spread(&spec("kubevirt-csi"), &v).is_none());
        v.worker_placement = Read::Found(vec![at("np-a", Some("n1")), at("np-b", Some("n2"))]);
        let c = worker_spread(&spec("cloud-drive"), &v).unwrap();
        assert_eq!(c.status, CheckStatus::Ok);
        v.worker_placement = Read::Unreadable("forbidden".into());
        let c = worker_spread(&spec("cloud-drive"), &v).unwrap();
        assert_eq!(c.status, CheckStatus::Unknown);
    }
}
