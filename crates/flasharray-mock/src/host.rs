//! Host and host-group rules: initiators (one owner each, normalised), personality,
//! membership (one group per host), deletion refused while connected or populated.

use std::collections::{BTreeMap, HashMap, HashSet};

use flasharray::models::{
    Host, HostGroup, HostGroupPost, HostPatch, HostPersonality, HostPost, Member, Reference,
    normalize_wwn,
};
use flasharray::params::MemberParams;
use flasharray::{HostGroupName, HostName, ListParams, Result, TagResource, Wwn};

use crate::listing::refine;
use crate::state::{HostGroupRec, HostRec, State, TargetId, bad};
use crate::volume::space_of;

/// Host personalities the array accepts (REST 2.52); `""` clears it.
pub const PERSONALITIES: &[&str] = &[
    "aix",
    "esxi",
    "hitachi-vsp",
    "hpux",
    "oracle-vm-server",
    "solaris",
    "vms",
    "nutanix-mgmt",
    "nutanix-cluster",
];

/// The three initiator kinds, for messages and ownership checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Iqn,
    Nqn,
    Wwn,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Iqn => "IQN",
            Kind::Nqn => "NQN",
            Kind::Wwn => "WWN",
        }
    }
}

fn normalize(host: &str, kind: Kind, raw: &str) -> Result<String> {
    let v = raw.trim();
    match kind {
        Kind::Wwn => normalize_wwn(v).map_err(|e| bad(host, format!("Invalid WWN: {e}."))),
        Kind::Iqn => {
            let l = v.to_ascii_lowercase();
            if ["iqn.", "eui.", "naa."].iter().any(|p| l.starts_with(p))
                && l.len() > 4
                && !l.contains(char::is_whitespace)
            {
                Ok(l)
            } else {
                Err(bad(
                    host,
                    format!("Invalid IQN {raw:?}: must start with iqn., eui. or naa."),
                ))
            }
        }
        Kind::Nqn => {
            if v.to_ascii_lowercase().starts_with("nqn.")
                && v.len() > 4
                && !v.contains(char::is_whitespace)
            {
                Ok(v.to_string())
            } else {
                Err(bad(
                    host,
                    format!("Invalid NQN {raw:?}: must start with nqn."),
                ))
            }
        }
    }
}

fn normalize_all(host: &str, kind: Kind, list: &[String]) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::with_capacity(list.len());
    for raw in list {
        let v = normalize(host, kind, raw)?;
        if !out.iter().any(|o| o.eq_ignore_ascii_case(&v)) {
            out.push(v);
        }
    }
    Ok(out)
}

fn check_personality(host: &str, p: &Option<HostPersonality>) -> Result<()> {
    if let Some(p) = p.as_ref().map(HostPersonality::as_str)
        && !p.is_empty()
        && !PERSONALITIES.contains(&p)
    {
        return Err(bad(
            host,
            format!(
                "Invalid value for personality: {p:?} (one of {}).",
                PERSONALITIES.join(", ")
            ),
        ));
    }
    Ok(())
}

/// Volumes seen and bytes they provision, per host or host group id.
type UsageById<'a> = HashMap<&'a str, (u64, u64)>;

/// Initiators a host would end up with; checked as a whole.
struct Initiators {
    iqns: Vec<String>,
    nqns: Vec<String>,
    wwns: Vec<String>,
}

impl State {
    fn host_id(&self, name: &str) -> Result<String> {
        self.hosts
            .id_of(name)
            .map(str::to_string)
            .ok_or_else(|| bad(name, "Host does not exist."))
    }

    fn group_id(&self, name: &str) -> Result<String> {
        self.host_groups
            .id_of(name)
            .map(str::to_string)
            .ok_or_else(|| bad(name, "Host group does not exist."))
    }

    /// Checks the NVMe mixing rule and that no other host (nor another host of the
    /// same batch, tracked in `taken`) owns an initiator.
    fn check_initiators(
        &self,
        host: &str,
        own_id: Option<&str>,
        ini: &Initiators,
        taken: &mut HashSet<String>,
    ) -> Result<()> {
        // "hosts defined with an NQN cannot have either IQN or WWNs" on current
        // Purity//FA (Pure's Ansible collection, Pure-Storage-Ansible/
        // FlashArray-Collection#627, which made purefa_host enforce it too).
        if !ini.nqns.is_empty() && (!ini.iqns.is_empty() || !ini.wwns.is_empty()) {
            return Err(bad(
                host,
                "Invalid request: mixing NQNs with IQNs or WWNs on one host is not allowed.",
            ));
        }
        let mut owners: HashMap<String, &str> = HashMap::new();
        for (id, h) in self.hosts.iter() {
            if Some(id.as_str()) == own_id {
                continue;
            }
            for i in h.iqns.iter().chain(&h.nqns).chain(&h.wwns) {
                owners.insert(Wwn::initiator_key(i), h.name.as_str());
            }
        }
        for (kind, list) in [
            (Kind::Iqn, &ini.iqns),
            (Kind::Nqn, &ini.nqns),
            (Kind::Wwn, &ini.wwns),
        ] {
            for i in list {
                let k = Wwn::initiator_key(i);
                if let Some(owner) = owners.get(&k) {
                    return Err(bad(
                        host,
                        format!(
                            "The specified {} {i} is already in use by host {owner}.",
                            kind.word()
                        ),
                    ));
                }
                if !taken.insert(k) {
                    return Err(bad(
                        host,
                        format!("The specified {} {i} is already in use.", kind.word()),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Per host id: number of volumes it sees and their provisioned bytes.
    fn host_usage(&self) -> (UsageById<'_>, UsageById<'_>) {
        let mut hosts: HashMap<&str, (u64, u64)> = HashMap::new();
        let mut groups: HashMap<&str, (u64, u64)> = HashMap::new();
        for (vol, t) in self.connections.map.keys() {
            let size = self.volumes.get(vol).map_or(0, |v| v.provisioned);
            let e = match t {
                TargetId::Host(h) => hosts.entry(h.as_str()).or_default(),
                TargetId::HostGroup(g) => groups.entry(g.as_str()).or_default(),
            };
            e.0 += 1;
            e.1 += size;
        }
        (hosts, groups)
    }

    fn render_hosts(&self, sel: Vec<(&str, &HostRec)>) -> Vec<Host> {
        let (hosts, groups) = self.host_usage();
        sel.into_iter()
            .map(|(id, h)| {
                let own = hosts.get(id).copied().unwrap_or_default();
                let shared = h
                    .host_group
                    .as_deref()
                    .and_then(|g| groups.get(g).copied())
                    .unwrap_or_default();
                let mut host = Host::default();
                host.name = h.name.clone();
                host.connection_count = Some(own.0 + shared.0);
                host.host_group.name = h
                    .host_group
                    .as_deref()
                    .and_then(|g| self.host_groups.get(g))
                    .map(|g| g.name.clone());
                host.iqns = h.iqns.clone();
                host.nqns = h.nqns.clone();
                host.wwns = h.wwns.clone();
                host.personality = h.personality.as_deref().map(HostPersonality::from);
                host.space = space_of(own.1 + shared.1);
                host.is_local = Some(true);
                host.vlan = Some("any".into());
                host
            })
            .collect()
    }

    pub(crate) fn list_hosts(&self, params: &ListParams) -> Result<Vec<Host>> {
        let sel = self.hosts.select("Host", params, false, |_| false)?;
        refine(
            self.render_hosts(sel),
            params.filter.as_deref(),
            &params.sort,
            params.limit,
        )
    }

    pub(crate) fn create_hosts(
        &mut self,
        names: &[HostName],
        body: &HostPost,
    ) -> Result<Vec<Host>> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        let first = names[0].as_str();
        check_personality(first, &body.personality)?;
        let ini = Initiators {
            iqns: normalize_all(first, Kind::Iqn, &body.iqns)?,
            nqns: normalize_all(first, Kind::Nqn, &body.nqns)?,
            wwns: normalize_all(first, Kind::Wwn, &body.wwns)?,
        };
        let mut seen = HashSet::new();
        let mut taken = HashSet::new();
        for n in names {
            if !seen.insert(n.key()) || self.hosts.contains_name(n.as_str()) {
                return Err(bad(n.as_str(), "Host already exists."));
            }
            self.check_initiators(n.as_str(), None, &ini, &mut taken)?;
        }
        let tags = self.creation_tags(first, &body.tags)?;
        let mut ids = Vec::new();
        for n in names {
            let id = uuid::Uuid::new_v4().to_string();
            self.hosts.insert(
                id.clone(),
                HostRec {
                    name: n.as_str().to_string(),
                    iqns: ini.iqns.clone(),
                    nqns: ini.nqns.clone(),
                    wwns: ini.wwns.clone(),
                    personality: body
                        .personality
                        .as_ref()
                        .map(HostPersonality::as_str)
                        .filter(|p| !p.is_empty())
                        .map(str::to_string),
                    host_group: None,
                },
            );
            ids.push(id);
        }
        self.tag_new(TagResource::Host, &ids, &tags);
        let sel = ids
            .iter()
            .filter_map(|id| self.hosts.get(id).map(|h| (id.as_str(), h)))
            .collect();
        Ok(self.render_hosts(sel))
    }

    /// LUNs a host sees: its private ones and its group's shared ones.
    pub(crate) fn host_luns(&self, host_id: &str) -> HashSet<u32> {
        let group = self.hosts.get(host_id).and_then(|h| h.host_group.clone());
        self.connections
            .map
            .iter()
            .filter(|((_, t), _)| match t {
                TargetId::Host(h) => h == host_id,
                TargetId::HostGroup(g) => Some(g) == group.as_ref(),
            })
            .map(|(_, l)| *l)
            .collect()
    }

    /// A host may join a group only if no LUN or volume would then be seen twice.
    fn check_join(&self, host_id: &str, group_id: &str) -> Result<()> {
        let host = self.hosts.get(host_id).map_or("", |h| h.name.as_str());
        let group = self
            .host_groups
            .get(group_id)
            .map_or("", |g| g.name.as_str());
        let mut private: BTreeMap<&str, u32> = BTreeMap::new();
        let mut shared: BTreeMap<&str, u32> = BTreeMap::new();
        for ((vol, t), lun) in &self.connections.map {
            match t {
                TargetId::Host(h) if h == host_id => {
                    private.insert(vol.as_str(), *lun);
                }
                TargetId::HostGroup(g) if g == group_id => {
                    shared.insert(vol.as_str(), *lun);
                }
                _ => {}
            }
        }
        for (vol, lun) in &shared {
            if private.contains_key(vol) {
                let vname = self.volumes.get(vol).map_or("", |v| v.name.as_str());
                return Err(bad(
                    host,
                    format!(
                        "Invalid request: volume {vname} is connected to host {host} and to host group {group}; a host cannot see it twice."
                    ),
                ));
            }
            if private.values().any(|l| l == lun) {
                return Err(bad(
                    host,
                    format!("LUN {lun} of host group {group} is already in use on host {host}."),
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn patch_hosts(
        &mut self,
        names: &[HostName],
        patch: &HostPatch,
    ) -> Result<Vec<Host>> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        if patch.name.is_some() && names.len() > 1 {
            return Err(bad(
                "name",
                "Invalid request: a new name must be given for one host at a time.",
            ));
        }
        let mut plans = Vec::new();
        let mut taken = HashSet::new();
        for n in names {
            let id = self.host_id(n.as_str())?;
            let h = self
                .hosts
                .get(&id)
                .ok_or_else(|| bad(n.as_str(), "Host does not exist."))?;
            let host = h.name.as_str();
            check_personality(host, &patch.personality)?;
            let mut lists = [h.iqns.clone(), h.nqns.clone(), h.wwns.clone()];
            let changes = [
                (Kind::Iqn, &patch.iqns, &patch.add_iqns, &patch.remove_iqns),
                (Kind::Nqn, &patch.nqns, &patch.add_nqns, &patch.remove_nqns),
                (Kind::Wwn, &patch.wwns, &patch.add_wwns, &patch.remove_wwns),
            ];
            for (slot, (kind, replace, add, remove)) in lists.iter_mut().zip(changes) {
                if let Some(r) = replace {
                    *slot = normalize_all(host, kind, r)?;
                }
                for a in normalize_all(host, kind, add)? {
                    if !slot.iter().any(|s| s.eq_ignore_ascii_case(&a)) {
                        slot.push(a);
                    }
                }
                for r in normalize_all(host, kind, remove)? {
                    let before = slot.len();
                    slot.retain(|s| !s.eq_ignore_ascii_case(&r));
                    if slot.len() == before {
                        return Err(bad(
                            host,
                            format!(
                                "Invalid request: {} {r} is not an initiator of host {host}.",
                                kind.word()
                            ),
                        ));
                    }
                }
            }
            let [iqns, nqns, wwns] = lists;
            let ini = Initiators { iqns, nqns, wwns };
            self.check_initiators(host, Some(&id), &ini, &mut taken)?;
            let new_name = match &patch.name {
                Some(new) => {
                    let hn = HostName::new(new.clone())
                        .map_err(|e| bad(new, format!("Invalid host name: {}.", e.reason)))?;
                    if let Some(other) = self.hosts.id_of(hn.as_str())
                        && other != id
                    {
                        return Err(bad(new, "Host already exists."));
                    }
                    Some(hn.as_str().to_string())
                }
                None => None,
            };
            let group = match &patch.host_group {
                None => h.host_group.clone(),
                Some(g) => match g.name.as_deref().filter(|s| !s.is_empty()) {
                    None => None,
                    Some(gname) => {
                        let gid = self.group_id(gname)?;
                        match &h.host_group {
                            Some(cur) if *cur == gid => {}
                            Some(cur) => {
                                let cname =
                                    self.host_groups.get(cur).map_or("", |g| g.name.as_str());
                                return Err(bad(
                                    host,
                                    format!("Host already belongs to host group {cname}."),
                                ));
                            }
                            None => self.check_join(&id, &gid)?,
                        }
                        Some(gid)
                    }
                },
            };
            plans.push((id, ini, new_name, group));
        }
        let mut ids = Vec::new();
        for (id, ini, new_name, group) in plans {
            if let Some(n) = new_name {
                self.hosts.rename(&id, n);
            }
            if let Some(h) = self.hosts.get_mut(&id) {
                h.iqns = ini.iqns;
                h.nqns = ini.nqns;
                h.wwns = ini.wwns;
                if let Some(p) = &patch.personality {
                    h.personality = Some(p.as_str().to_string()).filter(|p| !p.is_empty());
                }
                h.host_group = group;
            }
            ids.push(id);
        }
        let sel = ids
            .iter()
            .filter_map(|id| self.hosts.get(id).map(|h| (id.as_str(), h)))
            .collect();
        Ok(self.render_hosts(sel))
    }

    /// Refused while a host sees any volume, privately or through its group.
    pub(crate) fn delete_hosts(&mut self, names: &[HostName]) -> Result<()> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        let mut ids = Vec::new();
        for n in names {
            let id = self.host_id(n.as_str())?;
            let group = self.hosts.get(&id).and_then(|h| h.host_group.clone());
            let connected = self.connections.map.keys().any(|(_, t)| match t {
                TargetId::Host(h) => *h == id,
                TargetId::HostGroup(g) => Some(g) == group.as_ref(),
            });
            if connected {
                return Err(bad(
                    n.as_str(),
                    "Host cannot be deleted due to existing connections.",
                ));
            }
            ids.push(id);
        }
        for id in ids {
            self.hosts.remove(&id);
            self.host_tags.remove(&id);
        }
        Ok(())
    }

    fn render_groups(&self, sel: Vec<(&str, &HostGroupRec)>) -> Vec<HostGroup> {
        let (_, groups) = self.host_usage();
        let mut members: HashMap<&str, u64> = HashMap::new();
        for (_, h) in self.hosts.iter() {
            if let Some(g) = &h.host_group {
                *members.entry(g.as_str()).or_default() += 1;
            }
        }
        sel.into_iter()
            .map(|(id, g)| {
                let u = groups.get(id).copied().unwrap_or_default();
                let mut host_group = HostGroup::default();
                host_group.name = g.name.clone();
                host_group.connection_count = Some(u.0);
                host_group.host_count = Some(members.get(id).copied().unwrap_or(0));
                host_group.is_local = Some(true);
                host_group.space = space_of(u.1);
                host_group
            })
            .collect()
    }

    pub(crate) fn list_host_groups(&self, params: &ListParams) -> Result<Vec<HostGroup>> {
        let sel = self
            .host_groups
            .select("Host group", params, false, |_| false)?;
        refine(
            self.render_groups(sel),
            params.filter.as_deref(),
            &params.sort,
            params.limit,
        )
    }

    pub(crate) fn create_host_groups(
        &mut self,
        names: &[HostGroupName],
        body: &HostGroupPost,
    ) -> Result<Vec<HostGroup>> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        let mut seen = HashSet::new();
        for n in names {
            if !seen.insert(n.key()) || self.host_groups.contains_name(n.as_str()) {
                return Err(bad(n.as_str(), "Host group already exists."));
            }
        }
        let tags = self.creation_tags(names[0].as_str(), &body.tags)?;
        let mut ids = Vec::new();
        for n in names {
            let id = uuid::Uuid::new_v4().to_string();
            self.host_groups.insert(
                id.clone(),
                HostGroupRec {
                    name: n.as_str().to_string(),
                },
            );
            ids.push(id);
        }
        self.tag_new(TagResource::HostGroup, &ids, &tags);
        let sel = ids
            .iter()
            .filter_map(|id| self.host_groups.get(id).map(|g| (id.as_str(), g)))
            .collect();
        Ok(self.render_groups(sel))
    }

    pub(crate) fn delete_host_groups(&mut self, names: &[HostGroupName]) -> Result<()> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        let mut ids = Vec::new();
        for n in names {
            let id = self.group_id(n.as_str())?;
            if self
                .hosts
                .iter()
                .any(|(_, h)| h.host_group.as_deref() == Some(id.as_str()))
            {
                return Err(bad(
                    n.as_str(),
                    "Host group still has members; remove its hosts first.",
                ));
            }
            if self
                .connections
                .map
                .keys()
                .any(|(_, t)| *t == TargetId::HostGroup(id.clone()))
            {
                return Err(bad(
                    n.as_str(),
                    "Host group has connections; disconnect its volumes first.",
                ));
            }
            ids.push(id);
        }
        for id in ids {
            self.host_groups.remove(&id);
            self.host_group_tags.remove(&id);
        }
        Ok(())
    }

    pub(crate) fn list_host_group_members(&self, params: &MemberParams) -> Result<Vec<Member>> {
        let mut groups = HashSet::new();
        for g in &params.group_names {
            groups.insert(self.group_id(g)?);
        }
        let mut hosts = HashSet::new();
        for h in &params.member_names {
            hosts.insert(self.host_id(h)?);
        }
        let mut rows: Vec<(String, String)> = Vec::new();
        for (hid, h) in self.hosts.iter_by_name() {
            let Some(gid) = &h.host_group else { continue };
            if (!groups.is_empty() && !groups.contains(gid))
                || (!hosts.is_empty() && !hosts.contains(hid))
            {
                continue;
            }
            let g = self
                .host_groups
                .get(gid)
                .map_or(String::new(), |g| g.name.clone());
            rows.push((g, h.name.clone()));
        }
        rows.sort_by_key(|(g, h)| (g.to_ascii_lowercase(), h.to_ascii_lowercase()));
        Ok(rows
            .into_iter()
            .map(|(g, h)| {
                let mut member = Member::default();
                member.group = Reference::named(g);
                member.member = Reference::named(h);
                member
            })
            .collect())
    }

    pub(crate) fn add_host_group_members(
        &mut self,
        group: &HostGroupName,
        hosts: &[HostName],
    ) -> Result<Vec<Member>> {
        if hosts.is_empty() {
            return Err(bad(
                "member_names",
                "Invalid request: member_names must be given.",
            ));
        }
        let gid = self.group_id(group.as_str())?;
        let mut ids = Vec::new();
        let mut seen = HashSet::new();
        for n in hosts {
            let id = self.host_id(n.as_str())?;
            if let Some(cur) = self.hosts.get(&id).and_then(|h| h.host_group.as_ref()) {
                let cname = self.host_groups.get(cur).map_or("", |g| g.name.as_str());
                return Err(bad(
                    n.as_str(),
                    format!("Host already belongs to host group {cname}."),
                ));
            }
            self.check_join(&id, &gid)?;
            if seen.insert(id.clone()) {
                ids.push(id);
            }
        }
        let gname = self
            .host_groups
            .get(&gid)
            .map_or(String::new(), |g| g.name.clone());
        let mut out = Vec::new();
        for id in ids {
            if let Some(h) = self.hosts.get_mut(&id) {
                h.host_group = Some(gid.clone());
                out.push({
                    let mut member = Member::default();
                    member.group = Reference::named(gname.clone());
                    member.member = Reference::named(h.name.clone());
                    member
                });
            }
        }
        Ok(out)
    }

    pub(crate) fn remove_host_group_members(
        &mut self,
        group: &HostGroupName,
        hosts: &[HostName],
    ) -> Result<()> {
        if hosts.is_empty() {
            return Err(bad(
                "member_names",
                "Invalid request: member_names must be given.",
            ));
        }
        let gid = self.group_id(group.as_str())?;
        let mut ids = Vec::new();
        for n in hosts {
            let id = self.host_id(n.as_str())?;
            if self.hosts.get(&id).and_then(|h| h.host_group.as_ref()) != Some(&gid) {
                return Err(bad(
                    n.as_str(),
                    format!("Invalid request: host {n} is not a member of host group {group}."),
                ));
            }
            ids.push(id);
        }
        for id in ids {
            if let Some(h) = self.hosts.get_mut(&id) {
                h.host_group = None;
            }
        }
        Ok(())
    }
}
