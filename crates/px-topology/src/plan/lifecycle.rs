//! The drives a tenant has in use, and the steps of its life that pxfa cannot do
//! itself as the plan lists them.
//!
//! Scale-in retains the removed workers' drives (they hold Portworx pools); taking a
//! Portworx node out of the tenant cluster happens inside the tenant and on the
//! management cluster, so the plan lists those steps per retained worker index. The
//! steps are the runbook's ([`crate::runbook`]), the one place they are written.

use std::collections::BTreeMap;

use flasharray::{FlashArray, Result, Size, TagResource};

use super::{Observed, TagIndex};
use super::{lookup_pods, lookup_tags, lookup_volumes};
use crate::desired::{
    TAG_CAPACITY, TAG_DRIVE_SIZE, TAG_DRIVES_PER_NODE, TAG_METADATA_SIZE, TAG_NODE, TAG_ROLE,
    TenantId,
};
use crate::runbook::steps::{DA_SCALE_IN, outline};
use crate::sizing::DrivesInUse;
use crate::spec::provisioning::Strategy;

/// Reads the drives tagged for `tenant` (two tag listings, one volume lookup) for
/// [`crate::sizing::keep_drives_in_use`]. Destroyed drives do not count; the
/// capacity they were sized for is the tenant pod's `capacity` tag.
pub async fn read_drives_in_use(array: &dyn FlashArray, tenant: &TenantId) -> Result<DrivesInUse> {
    let mut tags = TagIndex::default();
    for kind in [TagResource::Volume, TagResource::Pod] {
        tags.insert(kind, &lookup_tags(array, kind, &[]).await?);
    }
    let names = tags.owned_by(TagResource::Volume, tenant);
    let volumes = lookup_volumes(array, &names).await?;
    let pods = lookup_pods(array, &tags.owned_by(TagResource::Pod, tenant)).await?;
    let out = count_drives(&tags, volumes.iter());
    Ok(or_recorded(
        out,
        &tags,
        tenant,
        pod_provisioned(pods.iter()),
    ))
}

/// What the tenant's live pods provision, as the array reports it (every volume
/// in them, tagged or not): with the recorded sizing, how many workers' drives
/// the pod holds.
fn pod_provisioned<'a>(pods: impl Iterator<Item = &'a flasharray::models::Pod>) -> Option<u64> {
    pods.filter(|p| !p.destroyed)
        .filter_map(|p| p.space.total_provisioned)
        .reduce(u64::saturating_add)
}

/// `seen` (the drives on the array), or when no live drive of the tenant can be
/// seen, the sizing in use recorded on its pod ([`crate::desired::TAG_DRIVE_SIZE`]
/// and the others): a dynamic tenant applied without cluster access has drives
/// nobody tagged, and a fresh division of the capacity would shrink them. Either
/// way with the capacity the drives were sized for.
fn or_recorded(
    seen: DrivesInUse,
    tags: &TagIndex,
    tenant: &TenantId,
    pod_provisioned: Option<u64>,
) -> DrivesInUse {
    let mut out = if seen.data.as_u64() == 0 && seen.drives_per_node == 0 {
        recorded(tags, tenant, pod_provisioned).unwrap_or(seen)
    } else {
        seen
    };
    out.capacity_before = capacity_before(tags, tenant);
    out
}

/// The sizing in use recorded on the tenant's pod, when it carries all of it. The
/// drives themselves cannot be seen, so which workers hold drives is told by what
/// the pod provisions: `pod_provisioned` over one worker's drives at the recorded
/// sizes is the number of workers whose drives it holds, indexes `0..n` (pxfa
/// removes the highest indexes first). After a scale-in, those past the desired
/// workers are the retained drives, which the pod quota must still cover
/// ([`crate::sizing::keep_drives_in_use`]); a volume that is not a drive only
/// raises the quota, never lowers it.
fn recorded(
    tags: &TagIndex,
    tenant: &TenantId,
    pod_provisioned: Option<u64>,
) -> Option<DrivesInUse> {
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
    let worker = data
        .as_u64()
        .saturating_mul(u64::from(drives_per_node))
        .saturating_add(metadata.as_u64());
    let workers = pod_provisioned.map_or(0, |p| p / worker);
    let per_worker = (0..u32::try_from(workers).unwrap_or(u32::MAX))
        .map(|i| (i, Size::bytes(worker)))
        .collect();
    Some(DrivesInUse {
        data,
        metadata,
        drives_per_node,
        capacity_before: None,
        per_worker,
    })
}

/// The capacity recorded on the tenant's pod (its `pxfa.io capacity` tag).
fn capacity_before(tags: &TagIndex, tenant: &TenantId) -> Option<Size> {
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
pub(crate) fn drives_in_use(observed: &Observed, tenant: &TenantId) -> DrivesInUse {
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
    let pods: std::collections::BTreeSet<String> = observed
        .tags
        .owned_by(TagResource::Pod, tenant)
        .into_iter()
        .map(|n| n.to_ascii_lowercase())
        .collect();
    let provisioned = pod_provisioned(
        observed
            .pods
            .iter()
            .filter(|(k, _)| pods.contains(*k))
            .map(|(_, p)| p),
    );
    or_recorded(out, &observed.tags, tenant, provisioned)
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
/// keeps: a first line that says so and names the full runbook, then the
/// runbook's own direct-access scale-in steps (Portworx's decommission procedure,
/// one source: [`crate::runbook::steps::DA_SCALE_IN`], the step data alone, so
/// that `plan` does not depend on the runbook's use of the tenant), each with where
/// it runs and its command.
/// `dynamic`: the management Portworx created the drives (their release steps go
/// through it, not the array).
pub(crate) fn decommission_steps(tenant: &str, index: u32, dynamic: bool) -> Vec<String> {
    let strategy = if dynamic {
        Strategy::Dynamic
    } else {
        Strategy::Import
    };
    let head = format!(
        "worker {index} ({tenant}-w{index:02}) drives are retained; retire its Portworx node the way \
         Portworx documents it, skipping what is done already (`pxfa runbook scale-in -f SPEC \
         --worker {index}` prints every step with its check and source):"
    );
    std::iter::once(head)
        .chain(outline(DA_SCALE_IN, Some(strategy), tenant, index))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod_tags(pairs: &[(&str, &str)]) -> TagIndex {
        let tags: Vec<flasharray::models::Tag> = [
            (crate::desired::TAG_MANAGED_BY, "pxfa"),
            (crate::desired::TAG_TENANT, "tenant-demo"),
            (crate::desired::TAG_TENANT_NAMESPACE, "default"),
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
        let r = recorded(&pod_tags(&full), &"tenant-demo".into(), None).expect("complete");
        assert_eq!(r.data, Size::tib(4));
        assert_eq!(r.metadata, Size::gib(64));
        assert_eq!(r.drives_per_node, 1);
        assert_eq!(
            recorded(&pod_tags(&full), &"tenant-other".into(), None),
            None
        );
        for missing in 0..full.len() {
            let mut some = full.to_vec();
            some.remove(missing);
            assert_eq!(
                recorded(&pod_tags(&some), &"tenant-demo".into(), None),
                None,
                "{some:?}"
            );
        }
        let mut bad = full;
        bad[0].1 = "4Ti";
        assert_eq!(recorded(&pod_tags(&bad), &"tenant-demo".into(), None), None);
        // Drives seen on the array win over the record.
        let seen = DrivesInUse {
            data: Size::tib(2),
            drives_per_node: 2,
            ..DrivesInUse::default()
        };
        let out = or_recorded(seen.clone(), &pod_tags(&full), &"tenant-demo".into(), None);
        assert_eq!((out.data, out.drives_per_node), (seen.data, 2));
        let unseen = or_recorded(
            DrivesInUse::default(),
            &pod_tags(&full),
            &"tenant-demo".into(),
            None,
        );
        assert_eq!(unseen.data, Size::tib(4));
    }

    #[test]
    fn the_pods_provisioned_bytes_say_which_workers_hold_recorded_drives() {
        let full = [
            (TAG_DRIVE_SIZE, "4398046511104"),
            (TAG_DRIVES_PER_NODE, "1"),
            (TAG_METADATA_SIZE, "68719476736"),
        ];
        let worker = Size::tib(4).as_u64() + Size::gib(64).as_u64();
        // Four workers' drives in the pod (one more than a 3-worker spec wants),
        // and a little more that is no drive.
        let r = recorded(
            &pod_tags(&full),
            &"tenant-demo".into(),
            Some(4 * worker + 1),
        )
        .unwrap();
        assert_eq!(r.per_worker.len(), 4);
        assert_eq!(r.per_worker[&3], Size::bytes(worker));
        assert!(
            recorded(&pod_tags(&full), &"tenant-demo".into(), Some(0))
                .unwrap()
                .per_worker
                .is_empty()
        );
        assert!(
            recorded(&pod_tags(&full), &"tenant-demo".into(), None)
                .unwrap()
                .per_worker
                .is_empty()
        );
    }

    #[test]
    fn steps_are_the_runbooks_decommission_for_the_worker() {
        let s = decommission_steps("tenant-demo", 3, false);
        assert!(s.iter().all(|l| l.starts_with("worker 3")), "{s:#?}");
        assert!(s[0].contains("tenant-demo-w03"));
        assert!(s[0].contains("pxfa runbook scale-in -f SPEC --worker 3"));
        let book = crate::runbook::pieces(
            crate::runbook::Operation::ScaleIn,
            crate::spec::StorageMode::DirectAccess,
        )
        .unwrap();
        let ids = |p: &[crate::runbook::Piece]| -> Vec<&str> {
            p.iter().flat_map(|p| p.iter().map(|t| t.id)).collect()
        };
        assert_eq!(
            ids(&book),
            ids(DA_SCALE_IN),
            "the runbook's scale-in is the plan's"
        );
        let import = |t: &&crate::runbook::steps::StepTemplate| {
            crate::runbook::steps::applies_to(t.id, Some(Strategy::Import))
        };
        let steps = |p: &[crate::runbook::Piece]| p.iter().flat_map(|p| p.iter()).count();
        assert_eq!(
            s.len(),
            1 + book.iter().flat_map(|p| p.iter()).filter(import).count()
        );
        assert!(steps(&book) > s.len() - 1, "the dynamic steps are left out");
        let pos = |needle: &str| {
            s.iter()
                .position(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("{needle} in {s:#?}"))
        };
        // Portworx's order: KVDB check, maintenance, cluster delete (always), then
        // the VM goes, replication is restored and the drives are released.
        assert!(pos("kvdb members") < pos("maintenance --enter"));
        assert!(pos("maintenance --enter") < pos("pxctl cluster delete <node-id-w03>"));
        assert!(pos("pxctl cluster delete") < pos("delete-machine=yes"));
        assert!(pos("ha-update") < pos("--release-removed-workers"));
        assert!(!s.iter().any(|l| l.contains("if the node is offline")));
        assert!(
            !s.iter().any(|l| l.contains('{')),
            "every word filled or a <hole>: {s:#?}"
        );
        assert!(s.iter().any(|l| l.contains("-n <hcp>")));
    }

    /// #36 N6: a dynamic worker's drives are released through the management
    /// Portworx (reclaim policy Delete, then the claims), never `--release-removed-workers`.
    #[test]
    fn a_dynamic_workers_steps_release_through_portworx() {
        let s = decommission_steps("tenant-demo", 3, true);
        let pos = |needle: &str| {
            s.iter()
                .position(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("{needle} in {s:#?}"))
        };
        assert!(pos("pxctl cluster delete") < pos("persistentVolumeReclaimPolicy"));
        assert!(pos("persistentVolumeReclaimPolicy") < pos("oc delete pvc"));
        assert!(
            !s.iter().any(|l| l.contains("--release-removed-workers")
                || l.contains("oc delete pv <pv>")),
            "{s:#?}"
        );
    }
}
