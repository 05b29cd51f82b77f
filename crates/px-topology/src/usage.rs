//! `pxfa usage`: what each tenant holds on the array, from the array's own space
//! figures, read only.
//!
//! Whose an object is comes from the one ownership rule (`plan::ownership`): a
//! volume or pod tagged `managed-by=pxfa` with `tenant` and `tenant-namespace` is
//! that tenant's ([`UsageHolder::Tenant`]); one an earlier pxfa tagged without a
//! namespace is nobody's until claimed ([`UsageHolder::Unclaimed`]); a shared
//! management object is [`UsageHolder::Shared`]; anything else is
//! [`UsageHolder::Untagged`]. A volume without tags of its own that lives in a pod
//! whose tags name a holder (Portworx's cloud drives in a tenant's pod carry no pxfa
//! tags) is that pod's holder's: the pod is a fact on the array, not a guess. A
//! volume's own tags always win over its pod's. Destroyed volumes are apart
//! ([`UsageHolder::Destroyed`]): they hold space until the array eradicates them,
//! and belong to no tenant any more.
//!
//! Per worker, the drives pxfa tagged with a `node-index` (its worker index) and a
//! `disk-index` are listed with their sizes.

use std::collections::BTreeMap;

use flasharray::models::{Pod, Volume};
use flasharray::{FlashArray, ListParams, TagResource};
use schemars::JsonSchema;
use serde::Serialize;

use crate::desired::{TAG_DISK, TAG_NODE, TenantId};
use crate::orphans::TenantRef;
use crate::plan::{Owner, TagIndex, lookup_tags, marked_tenant, owner};

/// Who a volume's or pod's space is counted for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum UsageHolder {
    /// A tenant: its TenantStorage's namespace and name, as the tags name them.
    Tenant {
        /// `tenant-namespace`.
        namespace: String,
        /// `tenant`.
        name: String,
    },
    /// Tagged by an earlier pxfa for a tenant name without a namespace: no
    /// namespace's until `pxfa claim`.
    Unclaimed {
        /// The `tenant` tag.
        name: String,
    },
    /// A management object several tenants share (`scope=shared`).
    Shared,
    /// No pxfa ownership tags (another application's, or made by hand).
    Untagged,
    /// Destroyed, waiting for eradication.
    Destroyed,
}

impl UsageHolder {
    /// The holder pxfa's tags name (`None`: no tags of pxfa's), by the ownership
    /// rule. Never [`UsageHolder::Destroyed`]: that is a state, not a tag.
    pub fn of(tags: Option<&BTreeMap<String, String>>) -> UsageHolder {
        let Some(t) = tags else {
            return UsageHolder::Untagged;
        };
        if let Some(m) = marked_tenant(t) {
            return match m.id() {
                Some(id) => UsageHolder::Tenant {
                    namespace: id.namespace,
                    name: id.name,
                },
                None => UsageHolder::Unclaimed {
                    name: m.name.to_string(),
                },
            };
        }
        if owner(Some(t), &TenantId::default()) == Owner::Shared {
            UsageHolder::Shared
        } else {
            UsageHolder::Untagged
        }
    }

    /// Whether `r` (`pxfa ... --tenant`) names this holder: a tenant of that name in
    /// that namespace, or in any namespace for a bare name ([`TenantRef::matches`]);
    /// an unclaimed holder only for a bare name (it has no namespace to compare, and
    /// counting it for one would be a guess).
    pub fn is_named_by(&self, r: &TenantRef) -> bool {
        match self {
            UsageHolder::Tenant { namespace, name } => {
                r.matches(&TenantRef::new(Some(namespace), name))
            }
            UsageHolder::Unclaimed { name } => {
                r.namespace.is_none() && r.matches(&TenantRef::new(None, name))
            }
            _ => false,
        }
    }

    /// The tenant's identity, for a tenant.
    pub fn tenant(&self) -> Option<TenantId> {
        match self {
            UsageHolder::Tenant { namespace, name } => Some(TenantId::new(namespace, name)),
            _ => None,
        }
    }
}

/// `namespace/name`, `name (unclaimed)`, `shared`, `untagged` or `destroyed`.
impl std::fmt::Display for UsageHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UsageHolder::Tenant { namespace, name } => write!(f, "{namespace}/{name}"),
            UsageHolder::Unclaimed { name } => write!(f, "{name} (unclaimed)"),
            UsageHolder::Shared => f.write_str("shared"),
            UsageHolder::Untagged => f.write_str("untagged"),
            UsageHolder::Destroyed => f.write_str("destroyed"),
        }
    }
}

/// One holder's space on the array.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageRow {
    /// Whose.
    pub holder: UsageHolder,
    /// Volumes counted.
    pub volumes: usize,
    /// Of those, volumes without tags of their own counted through their pod.
    pub volumes_through_pod: usize,
    /// Bytes the volumes provision.
    pub provisioned: u64,
    /// Bytes the volumes use on the array (`space.total_used`, or `total_physical`
    /// before REST 2.26).
    pub used: u64,
    /// The holder's pods, by name.
    pub pods: Vec<String>,
    /// The sum of those pods' quotas; `None` when none has one.
    pub quota: Option<u64>,
    /// `used` as a percentage of the array's usable capacity.
    pub share_of_capacity: f64,
}

/// One drive of a tenant worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DriveUsage {
    /// The volume.
    pub volume: String,
    /// The `disk-index` tag: a data index, or `meta`.
    pub disk: String,
    /// Bytes provisioned.
    pub provisioned: u64,
    /// Bytes used.
    pub used: u64,
}

/// One tenant worker's drives (by their `node-index` tag).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerUsage {
    /// Whose drives: a tenant, or an earlier pxfa's unclaimed tenant.
    pub holder: UsageHolder,
    /// The holder as text: `namespace/name`, or `name (unclaimed)`.
    pub tenant: String,
    /// The worker index.
    pub worker: u32,
    /// Its drives, data drives in index order, then metadata.
    pub drives: Vec<DriveUsage>,
    /// Bytes its drives provision.
    pub provisioned: u64,
    /// Bytes its drives use.
    pub used: u64,
}

/// What `pxfa usage -o json|yaml` prints and `docs/usage.schema.json` describes:
/// every field always present (`null` where the array gave no figure).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageReport {
    /// Always `pxfa.io/v1alpha1`.
    #[schemars(schema_with = "api_version_schema")]
    pub api_version: &'static str,
    /// Always `Usage`.
    #[schemars(schema_with = "kind_schema")]
    pub kind: &'static str,
    /// The array's name.
    pub array: String,
    /// Usable bytes.
    pub capacity: u64,
    /// Bytes the array says are used in all (volumes, snapshots, system).
    pub array_used: Option<u64>,
    /// Tenants by identity, then unclaimed, shared, untagged and destroyed; a
    /// holder with nothing is left out.
    pub rows: Vec<UsageRow>,
    /// Tenant workers with drives.
    pub workers: Vec<WorkerUsage>,
}

/// Whose a volume is by the tags (its own, else its pod's), whatever its state, and
/// the worker and disk its own tags give a tenant's drive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeHolder {
    /// Whose.
    pub holder: UsageHolder,
    /// Counted through its pod (no tags of its own).
    pub through_pod: bool,
    /// The `node-index` tag of a tenant's (or unclaimed) drive.
    pub worker: Option<u32>,
    /// Its `disk-index` tag.
    pub disk: Option<String>,
}

impl VolumeHolder {
    /// `v`'s holder from `tags` (volume and pod tags).
    pub fn of(tags: &TagIndex, v: &Volume) -> VolumeHolder {
        let own_tags = tags.get(TagResource::Volume, &v.name);
        let own = UsageHolder::of(own_tags);
        let pod = v
            .pod
            .name
            .as_deref()
            .map(|p| UsageHolder::of(tags.get(TagResource::Pod, p)));
        let (holder, through_pod) = match (own, pod) {
            (UsageHolder::Untagged, Some(p)) if p != UsageHolder::Untagged => (p, true),
            (own, _) => (own, false),
        };
        let drive = matches!(
            holder,
            UsageHolder::Tenant { .. } | UsageHolder::Unclaimed { .. }
        ) && !through_pod;
        let tag = |k: &str| own_tags.and_then(|t| t.get(k)).filter(|_| drive);
        VolumeHolder {
            worker: tag(TAG_NODE).and_then(|n| n.parse().ok()),
            disk: tag(TAG_DISK).cloned(),
            holder,
            through_pod,
        }
    }
}

/// The holders of `volumes`, in their order, from every `pxfa.io` volume and pod
/// tag on the array (two reads).
pub async fn read_volume_holders(
    array: &dyn FlashArray,
    volumes: &[Volume],
) -> flasharray::Result<Vec<VolumeHolder>> {
    let (vol_tags, pod_tags) = futures_util::future::try_join(
        lookup_tags(array, TagResource::Volume, &[]),
        lookup_tags(array, TagResource::Pod, &[]),
    )
    .await?;
    let mut tags = TagIndex::default();
    tags.insert(TagResource::Volume, &vol_tags);
    tags.insert(TagResource::Pod, &pod_tags);
    Ok(volumes.iter().map(|v| VolumeHolder::of(&tags, v)).collect())
}

impl UsageReport {
    /// The JSON Schema (draft 2020-12) of the report, as committed in
    /// `docs/usage.schema.json`.
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(UsageReport)).unwrap_or_default()
    }
}

const USAGE_KIND: &str = "Usage";

fn api_version_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "const": crate::orphans::API_VERSION })
}

fn kind_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "const": USAGE_KIND })
}

/// What the array says a volume uses.
fn used_of(v: &Volume) -> u64 {
    v.space.total_used.or(v.space.total_physical).unwrap_or(0)
}

/// Reads every volume, pod and `pxfa.io` tag once and sums them per holder.
pub async fn read_usage(array: &dyn FlashArray) -> flasharray::Result<UsageReport> {
    let all = ListParams::all();
    let (vol_tags, pod_tags, volumes, pods, space) = futures_util::future::try_join5(
        lookup_tags(array, TagResource::Volume, &[]),
        lookup_tags(array, TagResource::Pod, &[]),
        array.list_volumes(&all),
        array.list_pods(&all),
        array.get_array_space(),
    )
    .await?;
    let mut tags = TagIndex::default();
    tags.insert(TagResource::Volume, &vol_tags);
    tags.insert(TagResource::Pod, &pod_tags);
    Ok(summarize(
        &tags,
        &volumes,
        &pods,
        (space.name, space.capacity, space.space.total_used),
    ))
}

/// The report from what was read: tags, volumes, pods and the array's name,
/// capacity and used bytes.
pub(crate) fn summarize(
    tags: &TagIndex,
    volumes: &[Volume],
    pods: &[Pod],
    (array, capacity, array_used): (String, u64, Option<u64>),
) -> UsageReport {
    let mut rows: BTreeMap<UsageHolder, UsageRow> = BTreeMap::new();
    for p in pods.iter().filter(|p| !p.destroyed) {
        let h = UsageHolder::of(tags.get(TagResource::Pod, &p.name));
        let row = rows.entry(h.clone()).or_insert_with(|| empty_row(h));
        row.pods.push(p.name.clone());
        if let Some(q) = p.quota_limit {
            row.quota = Some(row.quota.unwrap_or(0) + q);
        }
    }
    let mut workers: BTreeMap<(UsageHolder, u32), Vec<DriveUsage>> = BTreeMap::new();
    for v in volumes {
        let by_tags = VolumeHolder::of(tags, v);
        let (holder, through_pod) = if v.destroyed {
            (UsageHolder::Destroyed, false)
        } else {
            (by_tags.holder.clone(), by_tags.through_pod)
        };
        let row = rows
            .entry(holder.clone())
            .or_insert_with(|| empty_row(holder.clone()));
        row.volumes += 1;
        row.volumes_through_pod += usize::from(through_pod);
        row.provisioned += v.provisioned;
        row.used += used_of(v);
        if !v.destroyed
            && let Some(worker) = by_tags.worker
        {
            let disk = by_tags.disk.unwrap_or_else(|| "-".into());
            workers
                .entry((by_tags.holder, worker))
                .or_default()
                .push(DriveUsage {
                    volume: v.name.clone(),
                    disk,
                    provisioned: v.provisioned,
                    used: used_of(v),
                });
        }
    }
    let mut rows: Vec<UsageRow> = rows.into_values().collect();
    for r in &mut rows {
        r.share_of_capacity = share(r.used, capacity);
    }
    UsageReport {
        api_version: crate::orphans::API_VERSION,
        kind: USAGE_KIND,
        array,
        capacity,
        array_used,
        rows,
        workers: workers
            .into_iter()
            .map(|((holder, worker), drives)| worker_usage(&holder, worker, drives))
            .collect(),
    }
}

fn empty_row(holder: UsageHolder) -> UsageRow {
    UsageRow {
        holder,
        volumes: 0,
        volumes_through_pod: 0,
        provisioned: 0,
        used: 0,
        pods: Vec::new(),
        quota: None,
        share_of_capacity: 0.0,
    }
}

/// `used` of `capacity` in percent, two decimals.
fn share(used: u64, capacity: u64) -> f64 {
    if capacity == 0 {
        return 0.0;
    }
    (used as f64 * 10_000.0 / capacity as f64).round() / 100.0
}

fn worker_usage(holder: &UsageHolder, worker: u32, mut drives: Vec<DriveUsage>) -> WorkerUsage {
    // Data drives by index, then `meta` (and anything else) by name.
    drives.sort_by(|a, b| {
        let key = |d: &DriveUsage| {
            (
                d.disk.parse::<u32>().map_or(1, |_| 0),
                d.disk.parse::<u32>().unwrap_or(0),
                d.disk.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
    WorkerUsage {
        holder: holder.clone(),
        tenant: holder.to_string(),
        worker,
        provisioned: drives.iter().map(|d| d.provisioned).sum(),
        used: drives.iter().map(|d| d.used).sum(),
        drives,
    }
}

#[cfg(test)]
mod tests {
    use flasharray::models::Tag;
    use flasharray_mock::MockArray;

    use super::*;
    use crate::desired::{TAG_NAMESPACE, TAG_TENANT, TAG_TENANT_NAMESPACE};

    const GIB: u64 = 1 << 30;

    #[tokio::test]
    async fn the_brownfield_array_is_summed_per_holder_by_the_ownership_rule() {
        let array = MockArray::builder()
            .seed(flasharray_mock::Seed::brownfield())
            .build();
        let r = read_usage(&array).await.unwrap();
        let row = |h: &UsageHolder| r.rows.iter().find(|x| x.holder == *h).cloned();
        let blue = UsageHolder::Tenant {
            namespace: "team-blue".into(),
            name: "tenant-blue".into(),
        };
        let b = row(&blue).expect("tenant-blue has a row");
        assert_eq!(b.volumes, 6);
        assert_eq!(b.provisioned, 3 * 4 * 1024 * GIB + 3 * 64 * GIB);
        assert_eq!(b.used, 3 * 1536 * GIB);
        assert_eq!(b.quota, Some(14 * 1024 * GIB));
        assert_eq!(b.pods, ["tenant-blue"]);
        // 4.5 TiB of 100 TiB.
        assert!((b.share_of_capacity - 4.5).abs() < f64::EPSILON, "{b:?}");

        // The earlier pxfa's tenant: its own row, never a namespace's.
        let gray = row(&UsageHolder::Unclaimed {
            name: "tenant-gray".into(),
        })
        .unwrap();
        assert_eq!((gray.volumes, gray.pods.len()), (0, 1));
        // The analytics pod and the management drives carry no pxfa tags.
        let untagged = row(&UsageHolder::Untagged).unwrap();
        assert!(untagged.pods.contains(&"analytics".to_string()));
        assert!(untagged.volumes >= 4 + 6 + 2 + 2);
        let destroyed = row(&UsageHolder::Destroyed).unwrap();
        assert_eq!(destroyed.volumes, 1);
        assert!(r.rows.iter().all(|x| x.holder != UsageHolder::Shared));

        // Every live volume is counted once.
        let total: usize = r.rows.iter().map(|x| x.volumes).sum();
        assert_eq!(
            total,
            array.list_volumes(&ListParams::all()).await.unwrap().len()
        );
        // Worker drives: three workers with a data and a metadata drive each.
        assert_eq!(r.workers.len(), 3);
        let w0 = &r.workers[0];
        assert_eq!(
            (w0.tenant.as_str(), w0.worker),
            ("team-blue/tenant-blue", 0)
        );
        let disks: Vec<&str> = w0.drives.iter().map(|d| d.disk.as_str()).collect();
        assert_eq!(disks, ["0", "meta"]);
        assert_eq!(w0.provisioned, 4 * 1024 * GIB + 64 * GIB);
    }

    fn tag(name: &str, pairs: &[(&str, &str)]) -> Vec<Tag> {
        pairs
            .iter()
            .map(|(k, v)| Tag::new(name, TAG_NAMESPACE, *k, *v))
            .collect()
    }

    fn volume(name: &str, pod: Option<&str>, provisioned: u64, used: u64) -> Volume {
        let mut v = Volume::default();
        v.name = name.into();
        v.provisioned = provisioned;
        v.space.total_used = Some(used);
        v.pod.name = pod.map(str::to_string);
        v
    }

    #[test]
    fn own_tags_win_over_the_pod_and_loose_tenant_tags_count_for_nobody() {
        let mut tags = TagIndex::default();
        let ours = [
            ("managed-by", "pxfa"),
            (TAG_TENANT, "red"),
            (TAG_TENANT_NAMESPACE, "team-r"),
        ];
        tags.insert(TagResource::Pod, &tag("red", &ours));
        let others = [
            ("managed-by", "pxfa"),
            (TAG_TENANT, "blue"),
            (TAG_TENANT_NAMESPACE, "team-b"),
        ];
        tags.insert(TagResource::Volume, &tag("red::blues", &others));
        // A tenant tag without managed-by: not pxfa's, so nobody's (never a guess).
        let loose = [(TAG_TENANT, "red"), (TAG_TENANT_NAMESPACE, "team-r")];
        tags.insert(TagResource::Volume, &tag("loose", &loose));
        let mut pod = Pod::default();
        pod.name = "red".into();
        pod.quota_limit = Some(100 * GIB);
        let vols = [
            volume("red::px_cloud1", Some("red"), 10 * GIB, GIB),
            volume("red::blues", Some("red"), 20 * GIB, 2 * GIB),
            volume("loose", None, 5 * GIB, 0),
        ];
        let r = summarize(&tags, &vols, &[pod], ("fa".into(), 1000 * GIB, None));
        let holders: Vec<String> = r.rows.iter().map(|x| x.holder.to_string()).collect();
        assert_eq!(holders, ["team-b/blue", "team-r/red", "untagged"]);
        assert_eq!(r.rows[1].volumes_through_pod, 1);
        assert_eq!(r.rows[1].provisioned, 10 * GIB);
        assert_eq!(r.rows[1].quota, Some(100 * GIB));
        assert!((r.rows[1].share_of_capacity - 0.1).abs() < 1e-9);
        assert_eq!(r.rows[0].provisioned, 20 * GIB);
        assert_eq!(r.rows[2].volumes, 1);
        assert!(r.workers.is_empty());
    }

    #[test]
    fn a_bare_name_matches_any_namespace_and_a_namespace_only_its_own() {
        let blue = UsageHolder::Tenant {
            namespace: "team-b".into(),
            name: "blue".into(),
        };
        let legacy = UsageHolder::Unclaimed {
            name: "blue".into(),
        };
        let bare = TenantRef::parse("Blue");
        let exact = TenantRef::parse("team-b/blue");
        let other = TenantRef::parse("team-c/blue");
        assert!(blue.is_named_by(&bare) && blue.is_named_by(&exact));
        assert!(!blue.is_named_by(&other));
        assert!(legacy.is_named_by(&bare));
        assert!(
            !legacy.is_named_by(&exact),
            "no namespace is never a namespace's"
        );
        assert!(!UsageHolder::Untagged.is_named_by(&bare));
    }
}
