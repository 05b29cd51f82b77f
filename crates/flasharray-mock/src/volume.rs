//! Volume rules: creation in batches, sizes, serials, resize, rename, move between
//! pods, destroy, recover, eradicate.

use std::collections::{BTreeMap, HashMap, HashSet};

use flasharray::models::{Qos, Reference, Space, Volume, VolumeBatchPost, VolumePatch, VolumePost};
use flasharray::size::{MAX_VOLUME, MIB, SECTOR};
use flasharray::{Error, ListParams, Result, TagResource, VolumeName};

use crate::listing::refine;
use crate::state::{Ctx, DestroyConnected, State, VolumeRec, bad};

/// Checks a byte count against the array's volume size rules.
pub(crate) fn check_size(context: &str, field: &str, bytes: u64) -> Result<()> {
    if !bytes.is_multiple_of(SECTOR) {
        return Err(bad(
            context,
            format!("Invalid value for {field}: {bytes} is not a multiple of 512."),
        ));
    }
    if !(MIB..=MAX_VOLUME).contains(&bytes) {
        return Err(bad(
            context,
            format!("Invalid value for {field}: {bytes} is outside 1 MiB to 4 PiB."),
        ));
    }
    Ok(())
}

/// Space of objects that hold `provisioned` bytes and have had nothing written.
pub(crate) fn space_of(provisioned: u64) -> Space {
    space_used(provisioned, 0)
}

/// Space of objects that hold `provisioned` bytes of which `written` are used; the
/// mock reduces nothing, so used, physical and unique are the written bytes.
pub(crate) fn space_used(provisioned: u64, written: u64) -> Space {
    let mut space = Space::default();
    space.data_reduction = Some(1.0);
    space.shared = Some(0);
    space.snapshots = Some(0);
    space.thin_provisioning = Some(1.0);
    space.total_physical = Some(written);
    space.total_provisioned = Some(provisioned);
    space.total_reduction = Some(1.0);
    space.unique = Some(written);
    space.r#virtual = Some(written);
    space.total_used = Some(written);
    space.used_provisioned = Some(written.min(provisioned));
    space
}

fn check_qos(context: &str, qos: &Qos) -> Result<()> {
    if let Some(b) = qos.bandwidth_limit
        && !(MIB..=512 * 1024 * MIB).contains(&b)
    {
        return Err(bad(
            context,
            format!("Invalid value for qos.bandwidth_limit: {b} is outside 1 MiB/s to 512 GiB/s."),
        ));
    }
    if let Some(i) = qos.iops_limit
        && !(100..=100_000_000).contains(&i)
    {
        return Err(bad(
            context,
            format!("Invalid value for qos.iops_limit: {i} is outside 100 to 100000000."),
        ));
    }
    Ok(())
}

/// Splits `pod::vol` into its parts.
fn split(full: &str) -> (Option<&str>, &str) {
    match full.split_once("::") {
        Some((p, v)) => (Some(p), v),
        None => (None, full),
    }
}

impl State {
    /// Connections per volume id (hosts and host groups each count once).
    pub(crate) fn volume_connection_counts(&self) -> HashMap<&str, u64> {
        let mut m: HashMap<&str, u64> = HashMap::new();
        for (vol, _) in self.connections.map.keys() {
            *m.entry(vol.as_str()).or_default() += 1;
        }
        m
    }

    pub(crate) fn render_volume(&self, id: &str, r: &VolumeRec, now: u64, conns: u64) -> Volume {
        let pod = r
            .pod
            .as_ref()
            .and_then(|p| {
                self.pods
                    .get(p)
                    .map(|pr| Reference::new(p.clone(), pr.name.clone()))
            })
            .unwrap_or_default();
        let mut volume = Volume::default();
        volume.id = Some(id.to_string());
        volume.name = r.name.clone();
        volume.connection_count = Some(conns);
        volume.created = Some(r.created);
        volume.destroyed = r.destroyed_at.is_some();
        volume.host_encryption_key_status = Some("none".into());
        volume.provisioned = r.provisioned;
        volume.qos.bandwidth_limit = r.bandwidth_limit;
        volume.qos.iops_limit = r.iops_limit;
        volume.serial = Some(r.serial.clone());
        volume.space = space_used(r.provisioned, r.written);
        volume.time_remaining = self.time_remaining(r.destroyed_at, now);
        volume.pod = pod;
        volume.subtype = Some("regular".into());
        volume.promotion_status = Some("promoted".into());
        volume.requested_promotion_state = Some("promoted".into());
        volume.priority = Some(0);
        volume
    }

    fn render_volumes(&self, ids: &[String], now: u64) -> Vec<Volume> {
        let counts = self.volume_connection_counts();
        ids.iter()
            .filter_map(|id| {
                self.volumes.get(id).map(|r| {
                    self.render_volume(id, r, now, counts.get(id.as_str()).copied().unwrap_or(0))
                })
            })
            .collect()
    }

    pub(crate) fn volume_id(&self, name: &str) -> Result<String> {
        self.volumes
            .id_of(name)
            .map(str::to_string)
            .ok_or_else(|| bad(name, "Volume does not exist."))
    }

    /// Bytes provisioned by the volumes of a pod, destroyed ones included (they
    /// occupy space until eradicated).
    pub(crate) fn pod_provisioned(&self, pod_id: &str) -> u64 {
        self.volumes
            .iter()
            .filter(|(_, v)| v.pod.as_deref() == Some(pod_id))
            .map(|(_, v)| v.provisioned)
            .sum()
    }

    /// Bytes written to the volumes of a pod, destroyed ones included (they hold
    /// their data until eradicated).
    pub(crate) fn pod_written(&self, pod_id: &str) -> u64 {
        self.volumes
            .iter()
            .filter(|(_, v)| v.pod.as_deref() == Some(pod_id))
            .map(|(_, v)| v.written)
            .sum()
    }

    /// The live pod a volume name points into, or the array's error.
    fn live_pod(&self, pod: &str) -> Result<String> {
        let (id, p) = self
            .pods
            .by_name(pod)
            .ok_or_else(|| bad(pod, "Pod does not exist."))?;
        if p.destroyed_at.is_some() {
            return Err(bad(pod, "Pod has been destroyed."));
        }
        Ok(id.to_string())
    }

    fn check_quota(&self, pod_id: &str, added: u64) -> Result<()> {
        let Some(p) = self.pods.get(pod_id) else {
            return Ok(());
        };
        if let Some(q) = p.quota_limit {
            let used = self.pod_provisioned(pod_id);
            if used.saturating_add(added) > q {
                return Err(bad(
                    &p.name,
                    format!(
                        "Pod quota limit exceeded: {} bytes requested, {} of {q} bytes provisioned.",
                        added, used
                    ),
                ));
            }
        }
        Ok(())
    }

    fn new_serial(&mut self) -> String {
        let prefix: String = self
            .array
            .id
            .chars()
            .filter(char::is_ascii_hexdigit)
            .take(16)
            .collect::<String>()
            .to_ascii_uppercase();
        let s = format!("{prefix:0<16}{:08X}", self.next_serial & 0xFFFF_FFFF);
        self.next_serial += 1;
        s
    }

    pub(crate) fn list_volumes(&self, params: &ListParams, now: u64) -> Result<Vec<Volume>> {
        let sel = self
            .volumes
            .select("Volume", params, true, |v| v.destroyed_at.is_some())?;
        let counts = self.volume_connection_counts();
        let items: Vec<Volume> = sel
            .into_iter()
            .map(|(id, r)| self.render_volume(id, r, now, counts.get(id).copied().unwrap_or(0)))
            .collect();
        refine(items, params.filter.as_deref(), &params.sort, params.limit)
    }

    /// Creates every name with the same body, or none of them.
    pub(crate) fn create_volumes(
        &mut self,
        ctx: Ctx,
        names: &[VolumeName],
        body: &VolumePost,
    ) -> Result<Vec<Volume>> {
        let ids = self.insert_volumes(ctx, names, body)?;
        Ok(self.render_volumes(&ids, ctx.now))
    }

    /// The rules of [`State::create_volumes`] without rendering the answer, which
    /// seeding 100k volumes does not need. Returns the new ids.
    pub(crate) fn insert_volumes(
        &mut self,
        ctx: Ctx,
        names: &[VolumeName],
        body: &VolumePost,
    ) -> Result<Vec<String>> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        let size = match &body.source {
            Some(src) => {
                let sname = src.name.as_deref().unwrap_or_default();
                let (_, s) = self
                    .volumes
                    .by_name(sname)
                    .ok_or_else(|| bad(sname, "No such volume or snapshot."))?;
                if s.destroyed_at.is_some() {
                    return Err(bad(sname, "Volume has been destroyed."));
                }
                s.provisioned
            }
            None => body.provisioned.unwrap_or(MIB),
        };
        check_size(names[0].as_str(), "provisioned", size)?;
        let mut seen = HashSet::new();
        let mut per_pod: BTreeMap<String, u64> = BTreeMap::new();
        let mut pods = Vec::with_capacity(names.len());
        for n in names {
            if !seen.insert(n.key()) || self.volumes.contains_name(n.as_str()) {
                return Err(bad(n.as_str(), "Volume already exists."));
            }
            let pod = match n.pod() {
                Some(p) => {
                    let id = self.live_pod(p)?;
                    *per_pod.entry(id.clone()).or_default() += size;
                    Some(id)
                }
                None => None,
            };
            pods.push(pod);
        }
        for (pod, added) in &per_pod {
            self.check_quota(pod, *added)?;
        }
        let tags = self.creation_tags(names[0].as_str(), &body.tags)?;
        let ids: Vec<String> = names
            .iter()
            .zip(pods)
            .map(|(n, pod)| self.insert_volume(ctx, n, pod, size))
            .collect();
        self.tag_new(TagResource::Volume, &ids, &tags);
        Ok(ids)
    }

    /// `POST /volumes/batch`: every item is checked (size, name taken or repeated,
    /// pod, quota summed per pod, tags) before any volume is made, so one bad item
    /// creates nothing. Answers in request order.
    pub(crate) fn create_volumes_batch(
        &mut self,
        ctx: Ctx,
        items: &[VolumeBatchPost],
    ) -> Result<Vec<Volume>> {
        if items.is_empty() {
            return Err(bad(
                "volume",
                "Invalid request: at least one volume must be given.",
            ));
        }
        let mut seen = HashSet::new();
        let mut per_pod: BTreeMap<String, u64> = BTreeMap::new();
        let mut checked = Vec::with_capacity(items.len());
        for item in items {
            let n = &item.name;
            let size = item.provisioned.unwrap_or(MIB);
            check_size(n.as_str(), "provisioned", size)?;
            if !seen.insert(n.key()) || self.volumes.contains_name(n.as_str()) {
                return Err(bad(n.as_str(), "Volume already exists."));
            }
            let pod = match n.pod() {
                Some(p) => {
                    let id = self.live_pod(p)?;
                    *per_pod.entry(id.clone()).or_default() += size;
                    Some(id)
                }
                None => None,
            };
            let tags = self.creation_tags(n.as_str(), &item.tags)?;
            checked.push((n, pod, size, tags));
        }
        for (pod, added) in &per_pod {
            self.check_quota(pod, *added)?;
        }
        let mut ids = Vec::with_capacity(checked.len());
        for (n, pod, size, tags) in checked {
            let id = self.insert_volume(ctx, n, pod, size);
            self.tag_new(TagResource::Volume, std::slice::from_ref(&id), &tags);
            ids.push(id);
        }
        Ok(self.render_volumes(&ids, ctx.now))
    }

    /// Inserts one checked volume; returns its id.
    fn insert_volume(
        &mut self,
        ctx: Ctx,
        n: &VolumeName,
        pod: Option<String>,
        size: u64,
    ) -> String {
        // Show the pod part with the pod's own case, as the array does.
        let name = match &pod {
            Some(p) => format!(
                "{}::{}",
                self.pods.get(p).map_or("", |r| r.name.as_str()),
                n.short()
            ),
            None => n.as_str().to_string(),
        };
        let id = uuid::Uuid::new_v4().to_string();
        let serial = self.new_serial();
        self.volumes.insert(
            id.clone(),
            VolumeRec {
                name,
                pod,
                provisioned: size,
                created: ctx.now,
                serial,
                destroyed_at: None,
                destroyed_with_pod: false,
                bandwidth_limit: None,
                iops_limit: None,
                written: 0,
            },
        );
        id
    }

    /// Where a volume named `name` in `pod` ends up after `patch` (a rename, a move):
    /// its pod id and its full name.
    fn volume_destination(
        &self,
        name: &str,
        pod: Option<String>,
        patch: &VolumePatch,
    ) -> Result<(Option<String>, String)> {
        let (cur_pod_name, cur_short) = split(name);
        let mut short = cur_short.to_string();
        let mut pod_id = pod;
        let mut pod_name = cur_pod_name.map(str::to_string);
        if let Some(new) = &patch.name {
            let (np, ns) = split(new);
            if let Some(np) = np
                && !cur_pod_name.is_some_and(|c| c.eq_ignore_ascii_case(np))
            {
                return Err(bad(
                    new,
                    "Invalid request: a rename cannot move a volume to another pod; set pod instead.",
                ));
            }
            short = ns.to_string();
        }
        if let Some(target) = &patch.pod {
            match target.name.as_deref().filter(|s| !s.is_empty()) {
                Some(p) => {
                    let id = self.live_pod(p)?;
                    pod_name = self.pods.get(&id).map(|r| r.name.clone());
                    pod_id = Some(id);
                }
                None => {
                    pod_id = None;
                    pod_name = None;
                }
            }
        }
        let full = match &pod_name {
            Some(p) => format!("{p}::{short}"),
            None => short.clone(),
        };
        Ok((pod_id, full))
    }

    /// Resize, rename, move, QoS, destroy and recover; validated for every name
    /// before anything changes.
    pub(crate) fn patch_volumes(
        &mut self,
        ctx: Ctx,
        names: &[VolumeName],
        patch: &VolumePatch,
        truncate: bool,
    ) -> Result<Vec<Volume>> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        // A rename and a destroy (or recover) in one PATCH are refused: CloudStack's
        // FlashArray adapter sent {name, destroyed} when deleting and the array
        // answered 400 "Invalid combination of parameters" (apache/cloudstack#13049,
        // which now sends two requests).
        if patch.name.is_some() && patch.destroyed.is_some() {
            return Err(bad("destroyed", "Invalid combination of parameters."));
        }
        if patch.name.is_some() && names.len() > 1 {
            return Err(bad(
                "name",
                "Invalid request: a new name must be given for one volume at a time.",
            ));
        }
        if let Some(q) = &patch.qos {
            check_qos(names[0].as_str(), q)?;
        }
        let mut planned = Vec::with_capacity(names.len());
        let mut new_names = HashSet::new();
        let mut pod_growth: BTreeMap<String, u64> = BTreeMap::new();
        for n in names {
            let id = self.volume_id(n.as_str())?;
            let r = self
                .volumes
                .get(&id)
                .ok_or_else(|| bad(n.as_str(), "Volume does not exist."))?;
            let destroyed = r.destroyed_at.is_some();
            let recovering = destroyed && patch.destroyed == Some(false);
            if destroyed && !recovering {
                return Err(bad(n.as_str(), "Volume has been destroyed."));
            }
            if recovering
                && let Some(p) = &r.pod
                && self.pods.get(p).is_some_and(|p| p.destroyed_at.is_some())
            {
                let pname = self.pods.get(p).map_or("", |p| p.name.as_str());
                return Err(bad(pname, "Pod has been destroyed."));
            }
            if let Some(size) = patch.provisioned {
                check_size(n.as_str(), "provisioned", size)?;
                if size < r.provisioned && !truncate {
                    return Err(bad(
                        n.as_str(),
                        "Invalid request: shrinking a volume needs truncate=true (data beyond the new size is lost).",
                    ));
                }
            }
            let (pod_id, full) = self.volume_destination(&r.name, r.pod.clone(), patch)?;
            if patch.name.is_some() || patch.pod.is_some() {
                let vn = VolumeName::new(full.clone())
                    .map_err(|e| bad(&full, format!("Invalid volume name: {}.", e.reason)))?;
                if let Some(other) = self.volumes.id_of(vn.as_str())
                    && other != id
                {
                    return Err(bad(&full, "Volume already exists."));
                }
                if !new_names.insert(vn.key()) {
                    return Err(bad(&full, "Volume already exists."));
                }
            }
            let new_size = patch.provisioned.unwrap_or(r.provisioned);
            if let Some(p) = &pod_id {
                let added = if r.pod.as_ref() == Some(p) {
                    new_size.saturating_sub(r.provisioned)
                } else {
                    new_size
                };
                *pod_growth.entry(p.clone()).or_default() += added;
            }
            if patch.destroyed == Some(true)
                && self.array.destroy_connected == DestroyConnected::Refuse
                && self.has_connections(&id)
            {
                return Err(bad(
                    n.as_str(),
                    "Volume has connections; disconnect it from every host and host group first.",
                ));
            }
            planned.push((id, full, pod_id, new_size));
        }
        for (pod, added) in &pod_growth {
            if *added > 0 {
                self.check_quota(pod, *added)?;
            }
        }
        let mut ids = Vec::with_capacity(planned.len());
        for (id, full, pod_id, new_size) in planned {
            if patch.destroyed == Some(false)
                && let Some(r) = self.volumes.get_mut(&id)
            {
                r.destroyed_at = None;
                r.destroyed_with_pod = false;
            }
            if patch.name.is_some() || patch.pod.is_some() {
                self.volumes.rename(&id, full);
            }
            if let Some(r) = self.volumes.get_mut(&id) {
                r.pod = pod_id;
                r.provisioned = new_size;
                if let Some(q) = &patch.qos {
                    r.bandwidth_limit = q.bandwidth_limit;
                    r.iops_limit = q.iops_limit;
                }
            }
            if patch.destroyed == Some(true) {
                self.destroy_volume(&id, ctx.now, false);
            }
            ids.push(id);
        }
        Ok(self.render_volumes(&ids, ctx.now))
    }

    pub(crate) fn has_connections(&self, vol_id: &str) -> bool {
        self.connections
            .map
            .range(
                (
                    vol_id.to_string(),
                    crate::state::TargetId::Host(String::new()),
                )..,
            )
            .next()
            .is_some_and(|((v, _), _)| v == vol_id)
    }

    /// Marks a volume destroyed; its connections go (the refusal, if configured, was
    /// checked by the caller).
    pub(crate) fn destroy_volume(&mut self, id: &str, now: u64, with_pod: bool) {
        let keys: Vec<_> = self
            .connections
            .map
            .range((id.to_string(), crate::state::TargetId::Host(String::new()))..)
            .take_while(|((v, _), _)| v == id)
            .map(|(k, _)| k.clone())
            .collect();
        for k in keys {
            self.connections.map.remove(&k);
        }
        if let Some(r) = self.volumes.get_mut(id) {
            r.destroyed_at = Some(now);
            r.destroyed_with_pod = with_pod;
        }
        self.note_destroyed(now);
    }

    /// Eradicates destroyed volumes, all or none.
    pub(crate) fn eradicate_volumes(&mut self, ctx: Ctx, names: &[VolumeName]) -> Result<()> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        let mut ids = Vec::with_capacity(names.len());
        for n in names {
            let id = self.volume_id(n.as_str())?;
            let destroyed = self
                .volumes
                .get(&id)
                .is_some_and(|r| r.destroyed_at.is_some());
            if !destroyed {
                return Err(bad(
                    n.as_str(),
                    "Volume must be destroyed before it can be eradicated.",
                ));
            }
            if ctx.safemode {
                return Err(safemode_refusal("volume", n.as_str()));
            }
            ids.push(id);
        }
        for id in ids {
            self.drop_volume(&id);
        }
        Ok(())
    }
}

/// The answer of an array whose SafeMode blocks manual eradication (volumes, pods
/// and realms alike). Source: LXD's Pure driver meets "Cannot eradicate pod" on
/// SafeMode arrays (reference `flasharray-rest.md` §2.5, error table), and the
/// SDK's `EradicationConfig.manual_eradication` (REST 2.26) says that with it
/// disabled "you cannot eradicate objects". Destroyed objects still go when their
/// delay ends (`State::sweep`).
pub(crate) fn safemode_refusal(kind: &str, name: &str) -> Error {
    bad(
        name,
        format!(
            "Cannot eradicate {kind} {name}: SafeMode is enabled; it will be eradicated when its eradication delay ends."
        ),
    )
}
