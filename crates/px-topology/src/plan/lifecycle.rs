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
use crate::desired::{
    TAG_CAPACITY, TAG_DRIVE_SIZE, TAG_DRIVES_PER_NODE, TAG_METADATA_SIZE, TAG_NODE, TAG_ROLE,
};
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
    let out = count_drives(&tags, volumes.iter());
    Ok(or_recorded(out, &tags, tenant))
}

/// `seen` (the drives on the array), or when no live drive of the tenant can be
/// seen, the sizing in use recorded on its pod ([`crate::desired::TAG_DRIVE_SIZE`]
/// and the others): a dynamic tenant applied without cluster access has drives
/// nobody tagged, and a fresh division of the capacity would shrink them. Either
/// way with the capacity the drives were sized for.
fn or_recorded(seen: DrivesInUse, tags: &TagIndex, tenant: &str) -> DrivesInUse {
    let mut out = if seen.data.as_u64() == 0 && seen.drives_per_node == 0 {
        recorded(tags, tenant).unwrap_or(seen)
    } else {
        seen
    };
    out.capacity_before = capacity_before(tags, tenant);
    out
}

/// The sizing in use recorded on the tenant's pod, when it carries all of it.
fn recorded(tags: &TagIndex, tenant: &str) -> Option<DrivesInUse> {
    let pods = tags.owned_by(TagResource::Pod, tenant);
    let t = pods.iter().find_map(|p| {
        let t = tags.get(TagResource::Pod, p)?;
        t.contains_key(TAG_DRIVE_SIZE).then_some(t)
    })?;
    let num = |key: &str| t.get(key)?.parse::<u64>().ok();
    let data = Size::bytes(num(TAG_DRIVE_SIZE)?);
    let metadata = Size::bytes(num(TAG_METADATA_SIZE)?);
    let drives_per_node = u32::try_from(num(TAG_DRIVES_PER_NODE)?).ok()?;
    if data.as_u64() == 0 || drives_per_node == 0 {
        return None;
    }
    // Which worker indexes hold drives is not recorded (it would make every scale
    // a tag write): the retained drives of removed workers are not added to the
    // planned quota, and the plan never lowers a pod quota, so scale-in keeps it.
    Some(DrivesInUse {
        data,
        metadata,
        drives_per_node,
        capacity_before: None,
        per_worker: BTreeMap::new(),
    })
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
/// the desired names and the orphans, with their tags, or when none can be seen, the
/// sizing recorded on the tenant's pod. No further array call, so the plan keeps its
/// read rounds.
pub fn drives_in_use(observed: &Observed, tenant: &str) -> DrivesInUse {
    let owned: std::collections::BTreeSet<String> = observed
        .tags
        .owned_by(TagResource::Volume, tenant)
        .into_iter()
        .map(|n| n.to_ascii_lowercase())
        .collect();
    let out = count_drives(
        &observed.tags,
        observed
            .volumes
            .values()
            .filter(|v| owned.contains(&v.name.to_ascii_lowercase())),
    );
    or_recorded(out, &observed.tags, tenant)
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

    fn pod_tags(pairs: &[(&str, &str)]) -> TagIndex {
        let tags: Vec<flasharray::models::Tag> = [
            (crate::desired::TAG_MANAGED_BY, "pxfa"),
            (crate::desired::TAG_TENANT, "tenant-demo"),
        ]
        .iter()
        .chain(pairs)
        .map(|(k, v)| {
            flasharray::models::Tag::new("tenant-demo", crate::desired::TAG_NAMESPACE, *k, *v)
        })
        .collect();
        let mut index = TagIndex::default();
        index.insert(TagResource::Pod, &tags);
        index
    }

    #[test]
    fn the_recorded_sizing_is_read_back_only_when_complete() {
        let full = [
            (TAG_DRIVE_SIZE, "4398046511104"),
            (TAG_DRIVES_PER_NODE, "1"),
            (TAG_METADATA_SIZE, "68719476736"),
        ];
        let r = recorded(&pod_tags(&full), "tenant-demo").expect("complete");
        assert_eq!(r.data, Size::tib(4));
        assert_eq!(r.metadata, Size::gib(64));
        assert_eq!(r.drives_per_node, 1);
        assert_eq!(recorded(&pod_tags(&full), "tenant-other"), None);
        for missing in 0..full.len() {
            let mut some = full.to_vec();
            some.remove(missing);
            assert_eq!(recorded(&pod_tags(&some), "tenant-demo"), None, "{some:?}");
        }
        let mut bad = full;
        bad[0].1 = "4Ti";
        assert_eq!(recorded(&pod_tags(&bad), "tenant-demo"), None);
        // Drives seen on the array win over the record.
        let seen = DrivesInUse {
            data: Size::tib(2),
            drives_per_node: 2,
            ..DrivesInUse::default()
        };
        let out = or_recorded(seen.clone(), &pod_tags(&full), "tenant-demo");
        assert_eq!((out.data, out.drives_per_node), (seen.data, 2));
        let unseen = or_recorded(DrivesInUse::default(), &pod_tags(&full), "tenant-demo");
        assert_eq!(unseen.data, Size::tib(4));
    }

    #[test]
    fn steps_name_the_worker_and_the_release_flag() {
        let s = decommission_steps("tenant-demo", 3);
        assert_eq!(s.len(), 5);
        assert!(s.iter().all(|l| l.starts_with("worker 3")));
        assert!(s[0].contains("tenant-demo-w03"));
        assert!(s[4].contains("--release-removed-workers"));
    }
}
