//! A canonical snapshot of everything on an array that is not one tenant's, so that a
//! test can prove that commands for that tenant never touched anything else.
//!
//! It is read through the [`FlashArray`] trait, so it works on a [`crate::MockArray`]
//! and over REST against the simulator alike. An object is the tenant's when it
//! carries the `pxfa.io` tag `tenant=<tenant>`; pxfa's shared management objects
//! (`managed-by=pxfa`, `scope=shared`: the hosts and host group pxfa creates for
//! `attach: host-group`) are left out too, as pxfa may create them. Everything else
//! is in the view: names, sizes, initiators, group, connections with LUNs, the
//! destroyed flag, pod quotas, tags in every namespace. The two changes pxfa may make
//! to a foreign host are left out: its membership in pxfa's own group and the
//! connections of the tenant's volumes to that group. Space and `time_remaining` are
//! left out as well: they change with writes and time, not with pxfa.

use std::collections::{BTreeMap, BTreeSet};

use flasharray::models::Tag;
use flasharray::{ConnectionParams, FlashArray, ListParams, Result, TagParams, TagResource};
use serde_json::{Value, json};

/// The tag namespace pxfa writes its ownership tags in (defined by px-topology, which
/// the mock cannot depend on): [`ForeignView`] tells a tenant's own objects by it, and
/// the brownfield seed's other pxfa tenant carries it.
pub(crate) const PXFA_TAG_NAMESPACE: &str = "pxfa.io";

/// Every object of an array that is not the tenant's, keyed `kind:name`
/// (lower-case names, as the array compares them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignView {
    objects: BTreeMap<String, Value>,
}

/// Tags by lower-case object name.
type TagsByName = BTreeMap<String, BTreeMap<String, String>>;

fn by_name(tags: Vec<Tag>) -> TagsByName {
    let mut out = TagsByName::new();
    for t in tags {
        let name = t.resource.name.unwrap_or_default().to_ascii_lowercase();
        let ns = t.namespace.unwrap_or_else(|| "default".into());
        out.entry(name)
            .or_default()
            .insert(format!("{ns}/{}", t.key), t.value);
    }
    out
}

fn tag<'a>(tags: &'a TagsByName, name: &str, key: &str) -> Option<&'a str> {
    tags.get(&name.to_ascii_lowercase())?
        .get(&format!("{PXFA_TAG_NAMESPACE}/{key}"))
        .map(String::as_str)
}

/// Whether pxfa may own the object in a run for `tenant` (`namespace/name`, or a
/// bare name for every namespace's tenant of that name): the tenant's own, or one
/// of pxfa's shared management objects.
fn excluded(tags: &TagsByName, name: &str, tenant: &str) -> bool {
    let (namespace, tenant) = match tenant.split_once('/') {
        Some((ns, n)) => (Some(ns), n),
        None => (None, tenant),
    };
    let ours = tag(tags, name, "tenant") == Some(tenant)
        && namespace.is_none_or(|ns| tag(tags, name, "tenant-namespace") == Some(ns));
    ours || (tag(tags, name, "managed-by") == Some("pxfa")
        && tag(tags, name, "scope") == Some("shared"))
}

async fn tags(array: &dyn FlashArray, kind: TagResource) -> Result<TagsByName> {
    Ok(by_name(array.list_tags(kind, &TagParams::default()).await?))
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    for s in &mut v {
        *s = s.to_ascii_uppercase();
    }
    v.sort();
    v
}

impl ForeignView {
    /// Reads the view of everything that is not `tenant`'s (`namespace/name`, as
    /// pxfa's `tenant-namespace` and `tenant` tags name it, or a bare name).
    pub async fn read(array: &dyn FlashArray, tenant: &str) -> Result<ForeignView> {
        let vol_tags = tags(array, TagResource::Volume).await?;
        let host_tags = tags(array, TagResource::Host).await?;
        let group_tags = tags(array, TagResource::HostGroup).await?;
        let pod_tags = tags(array, TagResource::Pod).await?;
        let mut objects = BTreeMap::new();

        let groups = array.list_host_groups(&ListParams::all()).await?;
        let own_groups: BTreeSet<String> = groups
            .iter()
            .map(|g| g.name.to_ascii_lowercase())
            .filter(|g| excluded(&group_tags, g, tenant))
            .collect();
        for g in groups {
            let key = g.name.to_ascii_lowercase();
            if own_groups.contains(&key) {
                continue;
            }
            let t = group_tags.get(&key).cloned().unwrap_or_default();
            objects.insert(
                format!("host-group:{key}"),
                json!({"name": g.name, "tags": t}),
            );
        }

        let mut foreign_hosts = BTreeSet::new();
        for h in array.list_hosts(&ListParams::all()).await? {
            let key = h.name.to_ascii_lowercase();
            if excluded(&host_tags, &key, tenant) {
                continue;
            }
            foreign_hosts.insert(key.clone());
            // Membership in pxfa's own group is the one change pxfa may make.
            let group = h
                .host_group
                .name
                .filter(|g| !own_groups.contains(&g.to_ascii_lowercase()));
            let t = host_tags.get(&key).cloned().unwrap_or_default();
            objects.insert(
                format!("host:{key}"),
                json!({
                    "name": h.name,
                    "wwns": sorted(h.wwns),
                    "iqns": sorted(h.iqns),
                    "nqns": sorted(h.nqns),
                    "personality": h.personality,
                    "host_group": group,
                    "tags": t,
                }),
            );
        }

        for p in array.list_pods(&ListParams::all()).await? {
            let key = p.name.to_ascii_lowercase();
            if excluded(&pod_tags, &key, tenant) {
                continue;
            }
            let t = pod_tags.get(&key).cloned().unwrap_or_default();
            objects.insert(
                format!("pod:{key}"),
                json!({
                    "name": p.name,
                    "destroyed": p.destroyed,
                    "quota_limit": p.quota_limit,
                    "tags": t,
                }),
            );
        }

        let mut foreign_volumes = BTreeSet::new();
        for v in array.list_volumes(&ListParams::all()).await? {
            let key = v.name.to_ascii_lowercase();
            if excluded(&vol_tags, &key, tenant) {
                continue;
            }
            foreign_volumes.insert(key.clone());
            let t = vol_tags.get(&key).cloned().unwrap_or_default();
            objects.insert(
                format!("volume:{key}"),
                json!({
                    "name": v.name,
                    "provisioned": v.provisioned,
                    "destroyed": v.destroyed,
                    "serial": v.serial,
                    "qos": {"bandwidth_limit": v.qos.bandwidth_limit, "iops_limit": v.qos.iops_limit},
                    "tags": t,
                }),
            );
        }

        for c in array.list_connections(&ConnectionParams::default()).await? {
            let volume = c.volume.name.unwrap_or_default().to_ascii_lowercase();
            // Shared connections come as one row per member host, with the group
            // set: the group is the target.
            let (target, foreign_target) = match (c.host_group.name, c.host.name) {
                (Some(g), _) => {
                    let k = g.to_ascii_lowercase();
                    let f = !own_groups.contains(&k);
                    (format!("host-group {k}"), f)
                }
                (None, Some(h)) => {
                    let k = h.to_ascii_lowercase();
                    let f = foreign_hosts.contains(&k);
                    (format!("host {k}"), f)
                }
                (None, None) => continue,
            };
            // A connection is foreign when either end is: the tenant's volumes may
            // only meet pxfa's own hosts and group.
            if foreign_volumes.contains(&volume) || foreign_target {
                objects.insert(
                    format!("connection:{volume} -> {target}"),
                    json!({"lun": c.lun, "nsid": c.nsid}),
                );
            }
        }
        Ok(ForeignView { objects })
    }

    /// Number of objects in the view.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether the view holds no object.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Whether the view has an object `kind:name` (e.g. `host:worker-02`).
    pub fn contains(&self, key: &str) -> bool {
        self.objects.contains_key(&key.to_ascii_lowercase())
    }

    /// The canonical JSON of the whole view.
    pub fn to_json(&self) -> Value {
        json!(self.objects)
    }

    /// What differs from `before`, one line per object (empty when nothing did),
    /// for assertion messages.
    pub fn changes_since(&self, before: &ForeignView) -> Vec<String> {
        let mut out = Vec::new();
        for (k, v) in &before.objects {
            match self.objects.get(k) {
                None => out.push(format!("- {k}: {v}")),
                Some(now) if now != v => out.push(format!("~ {k}: {v} -> {now}")),
                Some(_) => {}
            }
        }
        for (k, v) in &self.objects {
            if !before.objects.contains_key(k) {
                out.push(format!("+ {k}: {v}"));
            }
        }
        out
    }
}
