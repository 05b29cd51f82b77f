//! The steps of a tenant's life that pxfa cannot do itself, as the plan prints them
//! and `docs/lifecycle.md` repeats them.
//!
//! Scale-in retains the removed workers' drives (they hold Portworx pools); taking a
//! Portworx node out of the tenant cluster happens inside the tenant and on the
//! management cluster, so the plan lists those steps per retained worker index.

use std::collections::BTreeMap;

use flasharray::{FlashArray, Result, Size, TagResource};

use super::observe::{Observed, TagIndex};
use super::{lookup_tags, lookup_volumes};
use crate::desired::{TAG_CAPACITY, TAG_NODE, TAG_ROLE};
use crate::sizing::DrivesInUse;

/// Reads the drives tagged for `tenant` (two tag listings, one volume lookup) for
/// [`crate::sizing::keep_drives_in_use`]. Destroyed drives do not count; the
/// capacity they were sized for is the tenant pod's `capacity` tag.
pub async fn read_drives_in_use(array: &dyn FlashArray, tenant: &str) -> Result<DrivesInUse> {
    let mut tags = TagIndex::default();
    for kind in [TagResource::Volume, TagResource::Pod] {
        tags.insert(kind, &lookup_tags(array, kind, &[]).await?);
    }
    let names = tags.owned_by(TagResource::Volume, tenant);
    let volumes = lookup_volumes(array, &names).await?;
    let mut out = count_drives(&tags, volumes.iter());
    out.capacity_before = capacity_before(&tags, tenant);
    Ok(out)
}

/// The capacity recorded on the tenant's pod (its `pxfa.io capacity` tag).
fn capacity_before(tags: &TagIndex, tenant: &str) -> Option<Size> {
    tags.owned_by(TagResource::Pod, tenant)
        .iter()
        .filter_map(|p| {
            tags.get(TagResource::Pod, p)?
                .get(TAG_CAPACITY)?
                .parse()
                .ok()
        })
        .max()
        .map(Size::bytes)
}

/// The drives in use as `observe` already saw them: the tenant's live volumes among
/// the desired names and the orphans, with their tags. No further array call, so the
/// plan keeps its read rounds.
pub fn drives_in_use(observed: &Observed, tenant: &str) -> DrivesInUse {
    let owned: std::collections::BTreeSet<String> = observed
        .tags
        .owned_by(TagResource::Volume, tenant)
        .into_iter()
        .map(|n| n.to_ascii_lowercase())
        .collect();
    let mut out = count_drives(
        &observed.tags,
        observed
            .volumes
            .values()
            .filter(|v| owned.contains(&v.name.to_ascii_lowercase())),
    );
    out.capacity_before = capacity_before(&observed.tags, tenant);
    out
}

/// Largest data and metadata drive and data drives per node over `volumes`, by
/// their pxfa role and node tags; destroyed drives do not count.
fn count_drives<'a>(
    tags: &TagIndex,
    volumes: impl Iterator<Item = &'a flasharray::models::Volume>,
) -> DrivesInUse {
    let mut data_per_node: BTreeMap<String, u32> = BTreeMap::new();
    let mut out = DrivesInUse::default();
    for v in volumes.filter(|v| !v.destroyed) {
        let Some(t) = tags.get(TagResource::Volume, &v.name) else {
            continue;
        };
        let Some(node) = t.get(TAG_NODE) else {
            continue;
        };
        if let Ok(i) = node.parse::<u32>() {
            let b = out.per_worker.entry(i).or_default();
            *b = Size::bytes(b.as_u64() + v.provisioned);
        }
        match t.get(TAG_ROLE).map(String::as_str) {
            Some("px-data") => {
                *data_per_node.entry(node.clone()).or_default() += 1;
                out.data = out.data.max(Size::bytes(v.provisioned));
            }
            Some("px-metadata") => out.metadata = out.metadata.max(Size::bytes(v.provisioned)),
            _ => {}
        }
    }
    out.drives_per_node = data_per_node.values().copied().max().unwrap_or(0);
    out
}

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
