//! Connections: volumes to one host (private LUN) or one host group (shared LUN),
//! with the array's LUN allocation.

use std::collections::{BTreeSet, HashSet};

use flasharray::models::{Connection, Reference};
use flasharray::params::{ConnectionParams, ConnectionTarget};
use flasharray::{Result, VolumeName};

use crate::listing::refine;
use crate::state::{State, TargetId, bad};

/// Highest LUN the array hands out or accepts.
pub const MAX_LUN: u32 = 4095;
/// Where shared (host-group) LUNs start counting down from.
pub const SHARED_LUN_START: u32 = 254;

/// First free private LUN: 1 upward.
fn private_lun(used: &HashSet<u32>) -> Option<u32> {
    (1..=MAX_LUN).find(|l| !used.contains(l))
}

/// First free shared LUN: 254 downward to 1, then 255 upward.
fn shared_lun(used: &HashSet<u32>) -> Option<u32> {
    (1..=SHARED_LUN_START)
        .rev()
        .chain(SHARED_LUN_START + 1..=MAX_LUN)
        .find(|l| !used.contains(l))
}

impl State {
    fn resolve_target(&self, target: &ConnectionTarget) -> Result<TargetId> {
        match target {
            ConnectionTarget::Host(h) => self
                .hosts
                .id_of(h.as_str())
                .map(|id| TargetId::Host(id.to_string()))
                .ok_or_else(|| bad(h.as_str(), "Host does not exist.")),
            ConnectionTarget::HostGroup(g) => self
                .host_groups
                .id_of(g.as_str())
                .map(|id| TargetId::HostGroup(id.to_string()))
                .ok_or_else(|| bad(g.as_str(), "Host group does not exist.")),
        }
    }

    fn members(&self, group_id: &str) -> Vec<&str> {
        self.hosts
            .iter_by_name()
            .filter(|(_, h)| h.host_group.as_deref() == Some(group_id))
            .map(|(id, _)| id)
            .collect()
    }

    /// LUNs taken on every host the target reaches (and by the group itself, so a
    /// group without members keeps its LUNs distinct).
    fn used_luns(&self, target: &TargetId) -> HashSet<u32> {
        match target {
            TargetId::Host(h) => self.host_luns(h),
            TargetId::HostGroup(g) => {
                let mut used: HashSet<u32> = self
                    .connections
                    .map
                    .iter()
                    .filter(|((_, t), _)| matches!(t, TargetId::HostGroup(x) if x == g))
                    .map(|(_, l)| *l)
                    .collect();
                for m in self.members(g) {
                    used.extend(self.host_luns(m));
                }
                used
            }
        }
    }

    fn target_name(&self, t: &TargetId) -> (Option<String>, Option<String>) {
        match t {
            TargetId::Host(h) => (self.hosts.get(h).map(|h| h.name.clone()), None),
            TargetId::HostGroup(g) => (None, self.host_groups.get(g).map(|g| g.name.clone())),
        }
    }

    /// The GET rows of one connection: one per host that sees it.
    fn connection_rows(&self, vol: &str, t: &TargetId, lun: u32, out: &mut Vec<Connection>) {
        let volume = self
            .volumes
            .get(vol)
            .map(|v| Reference::new(vol.to_string(), v.name.clone()))
            .unwrap_or_default();
        let row = |host: Option<String>, group: Option<String>| {
            let mut connection = Connection::default();
            connection.host.name = host;
            connection.host_group.name = group;
            connection.lun = Some(lun);
            connection.volume = volume.clone();
            connection
        };
        match t {
            TargetId::Host(_) => {
                let (h, _) = self.target_name(t);
                out.push(row(h, None));
            }
            TargetId::HostGroup(g) => {
                let gname = self.host_groups.get(g).map(|g| g.name.clone());
                let members = self.members(g);
                if members.is_empty() {
                    out.push(row(None, gname));
                } else {
                    for m in members {
                        out.push(row(
                            self.hosts.get(m).map(|h| h.name.clone()),
                            gname.clone(),
                        ));
                    }
                }
            }
        }
    }

    pub(crate) fn list_connections(&self, params: &ConnectionParams) -> Result<Vec<Connection>> {
        let mut hosts = HashSet::new();
        for h in &params.host_names {
            let id = self
                .hosts
                .id_of(h)
                .ok_or_else(|| bad(h, "Host does not exist."))?;
            hosts.insert(id);
        }
        let mut groups = HashSet::new();
        for g in &params.host_group_names {
            let id = self
                .host_groups
                .id_of(g)
                .ok_or_else(|| bad(g, "Host group does not exist."))?;
            groups.insert(id);
        }
        let mut vols = HashSet::new();
        for v in &params.volume_names {
            let id = self
                .volumes
                .id_of(v)
                .ok_or_else(|| bad(v, "Volume does not exist."))?;
            vols.insert(id);
        }
        let host_names: HashSet<String> = hosts
            .iter()
            .filter_map(|id| self.hosts.get(id).map(|h| h.name.to_ascii_lowercase()))
            .collect();
        let mut rows = Vec::new();
        for ((vol, t), lun) in &self.connections.map {
            if !vols.is_empty() && !vols.contains(vol.as_str()) {
                continue;
            }
            if !groups.is_empty()
                && !matches!(t, TargetId::HostGroup(g) if groups.contains(g.as_str()))
            {
                continue;
            }
            let start = rows.len();
            self.connection_rows(vol, t, *lun, &mut rows);
            if !hosts.is_empty() {
                let kept: Vec<Connection> = rows
                    .drain(start..)
                    .filter(|r| {
                        r.host
                            .name
                            .as_ref()
                            .is_some_and(|n| host_names.contains(&n.to_ascii_lowercase()))
                    })
                    .collect();
                rows.extend(kept);
            }
        }
        rows.sort_by_cached_key(|r| {
            (
                r.volume
                    .name
                    .clone()
                    .unwrap_or_default()
                    .to_ascii_lowercase(),
                r.host_group
                    .name
                    .clone()
                    .unwrap_or_default()
                    .to_ascii_lowercase(),
                r.host.name.clone().unwrap_or_default().to_ascii_lowercase(),
            )
        });
        refine(rows, params.filter.as_deref(), &params.sort, None)
    }

    /// Connects every volume to the target, or none.
    pub(crate) fn create_connections(
        &mut self,
        target: &ConnectionTarget,
        volumes: &[VolumeName],
        lun: Option<u32>,
    ) -> Result<Vec<Connection>> {
        if volumes.is_empty() {
            return Err(bad(
                "volume_names",
                "Invalid request: volume_names must be given.",
            ));
        }
        if lun.is_some() && volumes.len() > 1 {
            return Err(bad(
                "lun",
                "Invalid request: a LUN can be given for one volume only.",
            ));
        }
        let t = self.resolve_target(target)?;
        let tname = target.name();
        // Volumes the target's hosts already see through the other kind of connection.
        let overlapping: HashSet<&str> = match &t {
            TargetId::Host(h) => match self.hosts.get(h).and_then(|h| h.host_group.clone()) {
                Some(g) => self
                    .connections
                    .map
                    .keys()
                    .filter(|(_, x)| *x == TargetId::HostGroup(g.clone()))
                    .map(|(v, _)| v.as_str())
                    .collect(),
                None => HashSet::new(),
            },
            TargetId::HostGroup(g) => {
                let members: BTreeSet<&str> = self.members(g).into_iter().collect();
                self.connections
                    .map
                    .keys()
                    .filter(|(_, x)| matches!(x, TargetId::Host(h) if members.contains(h.as_str())))
                    .map(|(v, _)| v.as_str())
                    .collect()
            }
        };
        let mut used = self.used_luns(&t);
        let mut plan = Vec::with_capacity(volumes.len());
        let mut seen = HashSet::new();
        for v in volumes {
            let id = self.volume_id(v.as_str())?;
            if self
                .volumes
                .get(&id)
                .is_some_and(|r| r.destroyed_at.is_some())
            {
                return Err(bad(v.as_str(), "Volume has been destroyed."));
            }
            if self.connections.map.contains_key(&(id.clone(), t.clone()))
                || !seen.insert(id.clone())
            {
                return Err(bad(v.as_str(), "Connection already exists."));
            }
            if overlapping.contains(id.as_str()) {
                return Err(bad(
                    v.as_str(),
                    format!(
                        "Invalid request: volume {v} is already visible to {target} through another connection; a host cannot see a volume twice."
                    ),
                ));
            }
            let l = match lun {
                Some(l) => {
                    if !(1..=MAX_LUN).contains(&l) {
                        return Err(bad(
                            "lun",
                            format!("Invalid value for lun: {l} is outside 1 to {MAX_LUN}."),
                        ));
                    }
                    if used.contains(&l) {
                        return Err(bad(
                            tname,
                            format!("LUN {l} is already in use on {target}."),
                        ));
                    }
                    l
                }
                None => {
                    let free = match t {
                        TargetId::Host(_) => private_lun(&used),
                        TargetId::HostGroup(_) => shared_lun(&used),
                    };
                    free.ok_or_else(|| {
                        bad(
                            tname,
                            format!("Invalid request: no free LUN left on {target}."),
                        )
                    })?
                }
            };
            used.insert(l);
            plan.push((id, l));
        }
        let mut rows = Vec::new();
        for (id, l) in plan {
            self.connections.map.insert((id.clone(), t.clone()), l);
            self.connection_rows(&id, &t, l, &mut rows);
        }
        Ok(rows)
    }

    /// Disconnects every volume from the target, or none.
    pub(crate) fn delete_connections(
        &mut self,
        target: &ConnectionTarget,
        volumes: &[VolumeName],
    ) -> Result<()> {
        if volumes.is_empty() {
            return Err(bad(
                "volume_names",
                "Invalid request: volume_names must be given.",
            ));
        }
        let t = self.resolve_target(target)?;
        let mut keys = Vec::new();
        for v in volumes {
            let id = self.volume_id(v.as_str())?;
            let k = (id, t.clone());
            if !self.connections.map.contains_key(&k) {
                return Err(bad(
                    v.as_str(),
                    format!("Volume {v} is not connected to {target}."),
                ));
            }
            keys.push(k);
        }
        for k in keys {
            self.connections.map.remove(&k);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_luns_count_down_from_254_then_up_from_255() {
        let mut used = HashSet::new();
        assert_eq!(shared_lun(&used), Some(254));
        used.extend(1..=254);
        assert_eq!(shared_lun(&used), Some(255));
        used.insert(255);
        assert_eq!(shared_lun(&used), Some(256));
    }

    #[test]
    fn private_luns_count_up_from_1() {
        let mut used: HashSet<u32> = [1, 2, 4].into_iter().collect();
        assert_eq!(private_lun(&used), Some(3));
        used.extend(1..=MAX_LUN);
        assert_eq!(private_lun(&used), None);
    }
}
