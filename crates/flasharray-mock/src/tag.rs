//! Tags on volumes, hosts, host groups and pods: upsert by namespace and key, kept
//! with their object (also while it is destroyed) and gone when it is.

use std::collections::BTreeMap;

use flasharray::Result;
use flasharray::models::{Tag, TagBody};
use flasharray::params::{TagParams, TagResource};

use crate::state::{State, TagRec, bad};

/// The namespace the array uses when a tag names none.
pub const DEFAULT_NAMESPACE: &str = "default";

fn word(kind: TagResource) -> &'static str {
    match kind {
        TagResource::Volume => "Volume",
        TagResource::Host => "Host",
        TagResource::HostGroup => "Host group",
        TagResource::Pod => "Pod",
    }
}

/// One tag checked against the array's limits; `shown` names the object in errors.
fn tag_rec(
    shown: &str,
    namespace: Option<&str>,
    key: &str,
    value: &str,
    copyable: Option<bool>,
) -> Result<TagRec> {
    if key.is_empty() || key.len() > 63 {
        return Err(bad(
            shown,
            format!("Invalid tag key {key:?}: 1 to 63 characters."),
        ));
    }
    if value.len() > 256 {
        return Err(bad(
            shown,
            format!("Invalid value for tag {key}: at most 256 characters."),
        ));
    }
    let ns = namespace
        .filter(|n| !n.is_empty())
        .unwrap_or(DEFAULT_NAMESPACE);
    Ok(TagRec {
        namespace: ns.to_string(),
        key: key.to_string(),
        value: value.to_string(),
        copyable: copyable.unwrap_or(true),
    })
}

impl State {
    fn tags(&self, kind: TagResource) -> &BTreeMap<String, Vec<TagRec>> {
        match kind {
            TagResource::Volume => &self.volume_tags,
            TagResource::Host => &self.host_tags,
            TagResource::HostGroup => &self.host_group_tags,
            TagResource::Pod => &self.pod_tags,
        }
    }

    fn tags_mut(&mut self, kind: TagResource) -> &mut BTreeMap<String, Vec<TagRec>> {
        match kind {
            TagResource::Volume => &mut self.volume_tags,
            TagResource::Host => &mut self.host_tags,
            TagResource::HostGroup => &mut self.host_group_tags,
            TagResource::Pod => &mut self.pod_tags,
        }
    }

    /// Internal id of a tagged object by name or (volumes, pods) id.
    fn resource_id(
        &self,
        kind: TagResource,
        name: Option<&str>,
        id: Option<&str>,
    ) -> Result<String> {
        let found = match (kind, name, id) {
            (TagResource::Volume, Some(n), _) => self.volumes.id_of(n).map(str::to_string),
            (TagResource::Volume, None, Some(i)) => self.volumes.get(i).map(|_| i.to_string()),
            (TagResource::Pod, Some(n), _) => self.pods.id_of(n).map(str::to_string),
            (TagResource::Pod, None, Some(i)) => self.pods.get(i).map(|_| i.to_string()),
            (TagResource::Host, Some(n), _) => self.hosts.id_of(n).map(str::to_string),
            (TagResource::HostGroup, Some(n), _) => self.host_groups.id_of(n).map(str::to_string),
            _ => None,
        };
        let shown = name.or(id).unwrap_or("resource");
        found.ok_or_else(|| bad(shown, format!("{} does not exist.", word(kind))))
    }

    /// Display name, public id and destroyed flag of a tagged object.
    fn resource_view(&self, kind: TagResource, id: &str) -> Option<(String, Option<String>, bool)> {
        match kind {
            TagResource::Volume => self.volumes.get(id).map(|v| {
                (
                    v.name.clone(),
                    Some(id.to_string()),
                    v.destroyed_at.is_some(),
                )
            }),
            TagResource::Pod => self.pods.get(id).map(|p| {
                (
                    p.name.clone(),
                    Some(id.to_string()),
                    p.destroyed_at.is_some(),
                )
            }),
            TagResource::Host => self.hosts.get(id).map(|h| (h.name.clone(), None, false)),
            TagResource::HostGroup => self
                .host_groups
                .get(id)
                .map(|g| (g.name.clone(), None, false)),
        }
    }

    fn render_tag(&self, kind: TagResource, res: &str, t: &TagRec) -> Option<Tag> {
        let (name, id, _) = self.resource_view(kind, res)?;
        Some({
            let mut tag = Tag::default();
            tag.namespace = Some(t.namespace.clone());
            tag.key = t.key.clone();
            tag.value = t.value.clone();
            tag.copyable = Some(t.copyable);
            tag.resource.id = id;
            tag.resource.name = Some(name);
            tag
        })
    }

    pub(crate) fn list_tags(&self, kind: TagResource, params: &TagParams) -> Result<Vec<Tag>> {
        let mut only = Vec::new();
        for n in &params.resource_names {
            only.push(self.resource_id(kind, Some(n), None)?);
        }
        let mut rows: Vec<(String, Tag)> = Vec::new();
        let mut visit = |res: &str, tags: &Vec<TagRec>| {
            let Some((name, _, destroyed)) = self.resource_view(kind, res) else {
                return;
            };
            if params.resource_destroyed.is_some_and(|d| d != destroyed) {
                return;
            }
            for t in tags {
                if !params.namespaces.is_empty() && !params.namespaces.contains(&t.namespace) {
                    continue;
                }
                if let Some(tag) = self.render_tag(kind, res, t) {
                    rows.push((name.to_ascii_lowercase(), tag));
                }
            }
        };
        if only.is_empty() {
            for (res, tags) in self.tags(kind) {
                visit(res, tags);
            }
        } else {
            for res in &only {
                if let Some(tags) = self.tags(kind).get(res) {
                    visit(res, tags);
                }
            }
        }
        rows.sort_by(|(a, x), (b, y)| {
            a.cmp(b)
                .then_with(|| x.namespace.cmp(&y.namespace))
                .then_with(|| x.key.cmp(&y.key))
        });
        Ok(rows.into_iter().map(|(_, t)| t).collect())
    }

    /// Adds or overwrites every tag, or none.
    pub(crate) fn set_tags(&mut self, kind: TagResource, tags: &[Tag]) -> Result<Vec<Tag>> {
        if tags.is_empty() {
            return Err(bad(
                "tags",
                "Invalid request: at least one tag must be given.",
            ));
        }
        let mut plan = Vec::with_capacity(tags.len());
        for t in tags {
            let res =
                self.resource_id(kind, t.resource.name.as_deref(), t.resource.id.as_deref())?;
            let shown = t.resource.name.as_deref().unwrap_or(&res);
            if self.resource_view(kind, &res).is_some_and(|(_, _, d)| d) {
                return Err(bad(shown, format!("{} has been destroyed.", word(kind))));
            }
            let rec = tag_rec(shown, t.namespace.as_deref(), &t.key, &t.value, t.copyable)?;
            plan.push((res, rec));
        }
        let mut out = Vec::with_capacity(plan.len());
        for (res, rec) in plan {
            self.upsert_tag(kind, &res, rec.clone());
            if let Some(t) = self.render_tag(kind, &res, &rec) {
                out.push(t);
            }
        }
        Ok(out)
    }

    fn upsert_tag(&mut self, kind: TagResource, res: &str, rec: TagRec) {
        let list = self.tags_mut(kind).entry(res.to_string()).or_default();
        match list
            .iter_mut()
            .find(|x| x.namespace == rec.namespace && x.key == rec.key)
        {
            Some(x) => *x = rec,
            None => list.push(rec),
        }
    }

    /// Validates the tags of a create body (the rules of `set_tags`) before the
    /// create changes anything, so that a bad tag refuses the whole call.
    pub(crate) fn creation_tags(&self, shown: &str, tags: &[TagBody]) -> Result<Vec<TagRec>> {
        tags.iter()
            .map(|t| tag_rec(shown, t.namespace.as_deref(), &t.key, &t.value, t.copyable))
            .collect()
    }

    /// Puts validated creation tags on the objects just created, under the same lock
    /// as the create: no reader ever sees them untagged.
    pub(crate) fn tag_new(&mut self, kind: TagResource, ids: &[String], recs: &[TagRec]) {
        for id in ids {
            for rec in recs {
                self.upsert_tag(kind, id, rec.clone());
            }
        }
    }

    /// Deletes the tags of the named objects that match `keys` and `namespaces`
    /// (an empty list matches everything; both empty is refused).
    pub(crate) fn delete_tags(
        &mut self,
        kind: TagResource,
        resource_names: &[String],
        keys: &[String],
        namespaces: &[String],
    ) -> Result<()> {
        if resource_names.is_empty() {
            return Err(bad(
                "resource_names",
                "Invalid request: resource_names must be given.",
            ));
        }
        if keys.is_empty() && namespaces.is_empty() {
            return Err(bad(
                "keys",
                "Invalid request: keys or namespaces must be given.",
            ));
        }
        let mut ids = Vec::new();
        for n in resource_names {
            ids.push(self.resource_id(kind, Some(n), None)?);
        }
        let map = self.tags_mut(kind);
        for id in ids {
            if let Some(list) = map.get_mut(&id) {
                list.retain(|t| {
                    let k = keys.is_empty() || keys.contains(&t.key);
                    let n = namespaces.is_empty() || namespaces.contains(&t.namespace);
                    !(k && n)
                });
                if list.is_empty() {
                    map.remove(&id);
                }
            }
        }
        Ok(())
    }
}
