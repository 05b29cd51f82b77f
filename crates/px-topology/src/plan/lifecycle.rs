//! The steps of a tenant's life that pxfa cannot do itself, as the plan prints them
//! and `docs/lifecycle.md` repeats them.
//!
//! Scale-in retains the removed workers' drives (they hold Portworx pools); taking a
//! Portworx node out of the tenant cluster happens inside the tenant and on the
//! management cluster, so the plan lists those steps per retained worker index.

/// What to do, in order, to retire worker `index` of `tenant` whose drives pxfa
/// keeps. Sources: Portworx node labels and scale-down references [H]; Cluster API
/// `delete-machine` annotation [M], honoured by HyperShift KubeVirt NodePools [L].
pub fn decommission_steps(tenant: &str, index: u32) -> Vec<String> {
    let w = format!("w{index:02}");
    vec![
        format!(
            "worker {index} ({tenant}-{w}) drives are retained; to retire it: in the tenant, check the \
             replicas of volumes on the node (`pxctl volume list --node <id>`) and raise \
             replication elsewhere first"
        ),
        format!("worker {index}: `oc adm cordon` and `oc adm drain` the tenant node"),
        format!(
            "worker {index}: label the node `px/enabled=remove` and wait for `px/enabled=false`; if \
             the node is offline, `pxctl cluster delete <node-id>`"
        ),
        format!(
            "worker {index}: on the management cluster, annotate its Machine \
             `cluster.x-k8s.io/delete-machine=yes` so the NodePool removes that VM"
        ),
        format!(
            "worker {index}: once Portworx forgot the node, release the drives with \
             `--release-removed-workers` (soft destroy, recoverable for the eradication delay), \
             then delete the Released PVs"
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_name_the_worker_and_the_release_flag() {
        let s = decommission_steps("tenant-demo", 3);
        assert_eq!(s.len(), 5);
        assert!(s.iter().all(|l| l.starts_with("worker 3")));
        assert!(s[0].contains("tenant-demo-w03"));
        assert!(s[4].contains("--release-removed-workers"));
    }
}
