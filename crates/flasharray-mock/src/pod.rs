//! Pods: containers of volumes with a quota; destroyed only when empty (or with
//! their contents), recovered with what they took down, eradicated when destroyed.

use std::collections::HashSet;

use flasharray::models::{Member, Pod, PodArray, PodPatch, PodPost, Reference};
use flasharray::{ListParams, PodName, Result, TagResource};

use crate::listing::refine;
use crate::state::{Ctx, DestroyConnected, PodRec, State, bad};
use crate::volume::{check_size, safemode_refusal, space_used};

impl State {
    fn pod_id(&self, name: &str) -> Result<String> {
        self.pods
            .id_of(name)
            .map(str::to_string)
            .ok_or_else(|| bad(name, "Pod does not exist."))
    }

    fn pod_volumes(&self, pod_id: &str) -> Vec<String> {
        self.volumes
            .iter()
            .filter(|(_, v)| v.pod.as_deref() == Some(pod_id))
            .map(|(id, _)| id.clone())
            .collect()
    }

    fn render_pod(&self, id: &str, p: &PodRec, now: u64) -> Pod {
        let mut pod = Pod::default();
        pod.id = Some(id.to_string());
        pod.name = p.name.clone();
        pod.arrays = vec![{
            let mut pod_array = PodArray::default();
            pod_array.id = Some(self.array.id.clone());
            pod_array.name = Some(self.array.name.clone());
            pod_array.mediator_status = Some("online".into());
            pod_array.pre_elected = Some(false);
            pod_array.status = Some("online".into());
            pod_array
        }];
        pod.destroyed = p.destroyed_at.is_some();
        pod.mediator = Some("purestorage".into());
        pod.mediator_version = Some("1.0".into());
        // A pod's space is its volumes' (the mock reduces nothing); `footprint`, the
        // deprecated field, is the bytes its volumes hold.
        let written = self.pod_written(id);
        pod.footprint = Some(written);
        pod.space = space_used(self.pod_provisioned(id), written);
        pod.time_remaining = self.time_remaining(p.destroyed_at, now);
        pod.link_source_count = Some(0);
        pod.link_target_count = Some(0);
        pod.promotion_status = Some("promoted".into());
        pod.requested_promotion_state = Some("promoted".into());
        pod.array_count = Some(1);
        pod.eradication_config.manual_eradication = Some("all-enabled".into());
        pod.quota_limit = p.quota_limit;
        pod
    }

    fn render_pods(&self, ids: &[String], now: u64) -> Vec<Pod> {
        ids.iter()
            .filter_map(|id| self.pods.get(id).map(|p| self.render_pod(id, p, now)))
            .collect()
    }

    pub(crate) fn list_pods(&self, params: &ListParams, now: u64) -> Result<Vec<Pod>> {
        let sel = self
            .pods
            .select("Pod", params, true, |p| p.destroyed_at.is_some())?;
        let items = sel
            .into_iter()
            .map(|(id, p)| self.render_pod(id, p, now))
            .collect();
        refine(items, params.filter.as_deref(), &params.sort, params.limit)
    }

    pub(crate) fn create_pods(
        &mut self,
        ctx: Ctx,
        names: &[PodName],
        body: &PodPost,
    ) -> Result<Vec<Pod>> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        if let Some(q) = body.quota_limit {
            check_size(names[0].as_str(), "quota_limit", q)?;
        }
        let mut seen = HashSet::new();
        for n in names {
            if !seen.insert(n.key()) || self.pods.contains_name(n.as_str()) {
                return Err(bad(n.as_str(), "Pod already exists."));
            }
            self.check_pod_realm(n)?;
        }
        let tags = self.creation_tags(names[0].as_str(), &body.tags)?;
        let mut ids = Vec::new();
        for n in names {
            let id = uuid::Uuid::new_v4().to_string();
            self.pods.insert(
                id.clone(),
                PodRec {
                    name: n.as_str().to_string(),
                    quota_limit: body.quota_limit,
                    created: ctx.now,
                    destroyed_at: None,
                },
            );
            ids.push(id);
        }
        self.tag_new(TagResource::Pod, &ids, &tags);
        Ok(self.render_pods(&ids, ctx.now))
    }

    pub(crate) fn patch_pods(
        &mut self,
        ctx: Ctx,
        names: &[PodName],
        patch: &PodPatch,
        destroy_contents: bool,
    ) -> Result<Vec<Pod>> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        if patch.name.is_some() && names.len() > 1 {
            return Err(bad(
                "name",
                "Invalid request: a new name must be given for one pod at a time.",
            ));
        }
        // Every pod is checked before any is changed: a refusal changes nothing.
        let mut plan = Vec::new();
        for n in names {
            plan.push(self.check_pod_patch(n, patch, destroy_contents)?);
        }
        let mut ids = Vec::new();
        for (id, new_name) in plan {
            self.apply_pod_patch(ctx, &id, new_name, patch);
            ids.push(id);
        }
        Ok(self.render_pods(&ids, ctx.now))
    }

    /// The pod's id and new name, if `patch` may be applied to it.
    fn check_pod_patch(
        &self,
        n: &PodName,
        patch: &PodPatch,
        destroy_contents: bool,
    ) -> Result<(String, Option<String>)> {
        let id = self.pod_id(n.as_str())?;
        let p = self
            .pods
            .get(&id)
            .ok_or_else(|| bad(n.as_str(), "Pod does not exist."))?;
        let destroyed = p.destroyed_at.is_some();
        let recovering = destroyed && patch.destroyed == Some(false);
        if destroyed && !recovering {
            return Err(bad(n.as_str(), "Pod has been destroyed."));
        }
        if let Some(q) = patch.quota_limit {
            check_size(n.as_str(), "quota_limit", q)?;
            let used = self.pod_provisioned(&id);
            if q < used {
                return Err(bad(
                    n.as_str(),
                    format!(
                        "Invalid value for quota_limit: {q} is below the {used} bytes the pod's volumes provision."
                    ),
                ));
            }
        }
        let new_name = match &patch.name {
            Some(new) => {
                let pn = PodName::new(new.clone())
                    .map_err(|e| bad(new, format!("Invalid pod name: {}.", e.reason)))?;
                if let Some(other) = self.pods.id_of(pn.as_str())
                    && other != id
                {
                    return Err(bad(new, "Pod already exists."));
                }
                Some(pn.as_str().to_string())
            }
            None => None,
        };
        if patch.destroyed == Some(true) {
            let live: Vec<String> = self
                .pod_volumes(&id)
                .into_iter()
                .filter(|v| {
                    self.volumes
                        .get(v)
                        .is_some_and(|r| r.destroyed_at.is_none())
                })
                .collect();
            if !live.is_empty() && !destroy_contents {
                return Err(bad(
                    n.as_str(),
                    format!(
                        "Pod is not empty: it holds {} live volume(s); destroy them first or set destroy_contents.",
                        live.len()
                    ),
                ));
            }
            if self.array.destroy_connected == DestroyConnected::Refuse
                && let Some(v) = live.iter().find(|v| self.has_connections(v))
            {
                let vname = self.volumes.get(v).map_or("", |r| r.name.as_str());
                return Err(bad(
                    vname,
                    "Volume has connections; disconnect it from every host and host group first.",
                ));
            }
        }
        Ok((id, new_name))
    }

    /// Applies a checked `patch` to the pod `id`.
    fn apply_pod_patch(&mut self, ctx: Ctx, id: &str, new_name: Option<String>, patch: &PodPatch) {
        if patch.destroyed == Some(false) {
            if let Some(p) = self.pods.get_mut(id) {
                p.destroyed_at = None;
            }
            for v in self.pod_volumes(id) {
                if let Some(r) = self.volumes.get_mut(&v)
                    && r.destroyed_with_pod
                {
                    r.destroyed_at = None;
                    r.destroyed_with_pod = false;
                }
            }
        }
        if let Some(new) = new_name {
            self.pods.rename(id, new.clone());
            for v in self.pod_volumes(id) {
                let short = self
                    .volumes
                    .get(&v)
                    .map(|r| {
                        r.name
                            .split_once("::")
                            .map_or(r.name.clone(), |(_, s)| s.to_string())
                    })
                    .unwrap_or_default();
                self.volumes.rename(&v, format!("{new}::{short}"));
            }
        }
        if let Some(q) = patch.quota_limit
            && let Some(p) = self.pods.get_mut(id)
        {
            p.quota_limit = Some(q);
        }
        if patch.destroyed == Some(true) {
            for v in self.pod_volumes(id) {
                if self
                    .volumes
                    .get(&v)
                    .is_some_and(|r| r.destroyed_at.is_none())
                {
                    self.destroy_volume(&v, ctx.now, true);
                }
            }
            if let Some(p) = self.pods.get_mut(id) {
                p.destroyed_at = Some(ctx.now);
            }
            self.note_destroyed(ctx.now);
        }
    }

    pub(crate) fn eradicate_pods(
        &mut self,
        ctx: Ctx,
        names: &[PodName],
        eradicate_contents: bool,
    ) -> Result<()> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        let mut ids = Vec::new();
        for n in names {
            let id = self.pod_id(n.as_str())?;
            if self.pods.get(&id).is_some_and(|p| p.destroyed_at.is_none()) {
                return Err(bad(
                    n.as_str(),
                    "Pod must be destroyed before it can be eradicated.",
                ));
            }
            if ctx.safemode {
                return Err(safemode_refusal("pod", n.as_str()));
            }
            if !eradicate_contents && !self.pod_volumes(&id).is_empty() {
                return Err(bad(
                    n.as_str(),
                    "Pod is not empty: eradicate its volumes first or set eradicate_contents.",
                ));
            }
            ids.push(id);
        }
        for id in ids {
            for v in self.pod_volumes(&id) {
                self.drop_volume(&v);
            }
            self.pods.remove(&id);
            self.pod_tags.remove(&id);
        }
        Ok(())
    }

    pub(crate) fn list_pod_arrays(&self, pods: &[PodName]) -> Result<Vec<Member>> {
        let ids: Vec<String> = if pods.is_empty() {
            self.pods
                .iter_by_name()
                .map(|(id, _)| id.to_string())
                .collect()
        } else {
            pods.iter()
                .map(|p| self.pod_id(p.as_str()))
                .collect::<Result<_>>()?
        };
        Ok(ids
            .iter()
            .filter_map(|id| {
                self.pods.get(id).map(|p| {
                    let mut member = Member::default();
                    member.group = Reference::new(id.clone(), p.name.clone());
                    member.member = Reference::new(self.array.id.clone(), self.array.name.clone());
                    member
                })
            })
            .collect())
    }
}
