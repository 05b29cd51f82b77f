//! The array's whole state, as plain records, and the bookkeeping shared by every
//! resource kind: name tables, eradication sweeps, array-style errors.
//!
//! Objects are keyed by an internal id (the public UUID for volumes and pods, a
//! private one for hosts and host groups, which have no id in the API), so that a
//! rename touches one record and one name-index entry, never the connections or tags
//! that refer to the object.

use std::collections::BTreeMap;

use flasharray::Error;
use flasharray::models::ManagementAccessRule;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::clock::ClockSnapshot;

/// The admin that every array has and that cannot be deleted.
pub const BUILTIN_ADMIN: &str = "pureuser";

/// What destroying a volume that still has host connections does. The reference
/// marks the real array's behaviour as unconfirmed (`[L]`), so it is a choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DestroyConnected {
    /// Refuse with "Volume ... has connections." (the strict choice: code that works
    /// against it also works against an array that disconnects silently).
    #[default]
    Refuse,
    /// Remove the volume's connections, then destroy it (Ansible-like expectations).
    Disconnect,
}

/// The array's own settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ArrayRec {
    pub id: String,
    pub name: String,
    pub version: String,
    pub capacity: u64,
    /// The delay in force: `eradication_config.enabled_delay`, for objects that
    /// can be eradicated by hand (the simulator's SafeMode is off).
    pub eradication_delay_ms: u64,
    /// `eradication_config.disabled_delay` (REST 2.26+: the delay for objects that
    /// SafeMode keeps from manual eradication); `None` is the same as the enabled
    /// delay (a fresh array, and states saved before it was kept).
    #[serde(default)]
    pub eradication_disabled_delay_ms: Option<u64>,
    pub destroy_connected: DestroyConnected,
}

/// Something with a case-insensitive, renameable name.
pub(crate) trait Named {
    fn name(&self) -> &str;
    fn set_name(&mut self, name: String);
}

/// Records by id plus a case-insensitive name index (rebuilt after deserializing).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(bound(serialize = "R: Serialize", deserialize = "R: Deserialize<'de>"))]
pub(crate) struct Table<R> {
    rows: BTreeMap<String, R>,
    #[serde(skip)]
    names: BTreeMap<String, String>,
}

impl<R> Default for Table<R> {
    fn default() -> Self {
        Table {
            rows: BTreeMap::new(),
            names: BTreeMap::new(),
        }
    }
}

impl<R: Named> Table<R> {
    pub(crate) fn id_of(&self, name: &str) -> Option<&str> {
        self.names
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    pub(crate) fn by_name(&self, name: &str) -> Option<(&str, &R)> {
        let id = self.names.get(&name.to_ascii_lowercase())?;
        self.rows.get(id).map(|r| (id.as_str(), r))
    }

    pub(crate) fn get(&self, id: &str) -> Option<&R> {
        self.rows.get(id)
    }

    pub(crate) fn get_mut(&mut self, id: &str) -> Option<&mut R> {
        self.rows.get_mut(id)
    }

    pub(crate) fn contains_name(&self, name: &str) -> bool {
        self.names.contains_key(&name.to_ascii_lowercase())
    }

    pub(crate) fn insert(&mut self, id: String, rec: R) {
        self.names
            .insert(rec.name().to_ascii_lowercase(), id.clone());
        self.rows.insert(id, rec);
    }

    pub(crate) fn remove(&mut self, id: &str) -> Option<R> {
        let rec = self.rows.remove(id)?;
        self.names.remove(&rec.name().to_ascii_lowercase());
        Some(rec)
    }

    pub(crate) fn rename(&mut self, id: &str, new_name: String) {
        if let Some(rec) = self.rows.get_mut(id) {
            self.names.remove(&rec.name().to_ascii_lowercase());
            self.names
                .insert(new_name.to_ascii_lowercase(), id.to_string());
            rec.set_name(new_name);
        }
    }

    /// Records in name order (case-insensitive), the default listing order.
    pub(crate) fn iter_by_name(&self) -> impl Iterator<Item = (&str, &R)> {
        self.names
            .values()
            .filter_map(|id| self.rows.get(id).map(|r| (id.as_str(), r)))
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&String, &R)> {
        self.rows.iter()
    }

    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    fn rebuild(&mut self) {
        self.names = self
            .rows
            .iter()
            .map(|(id, r)| (r.name().to_ascii_lowercase(), id.clone()))
            .collect();
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct VolumeRec {
    /// Full display name, `pod::vol` inside a pod.
    pub name: String,
    pub pod: Option<String>,
    pub provisioned: u64,
    pub created: u64,
    pub serial: String,
    pub destroyed_at: Option<u64>,
    /// Destroyed together with its pod (`destroy_contents`): recovered with it too.
    #[serde(default)]
    pub destroyed_with_pod: bool,
    #[serde(default)]
    pub bandwidth_limit: Option<u64>,
    #[serde(default)]
    pub iops_limit: Option<u64>,
    /// Bytes the host has written (the space the volume uses; no data reduction).
    /// Only seeds set it: the mock stores no data.
    #[serde(default)]
    pub written: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct HostRec {
    pub name: String,
    pub iqns: Vec<String>,
    pub nqns: Vec<String>,
    pub wwns: Vec<String>,
    pub personality: Option<String>,
    pub host_group: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct HostGroupRec {
    pub name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PodRec {
    pub name: String,
    pub quota_limit: Option<u64>,
    pub created: u64,
    pub destroyed_at: Option<u64>,
}

macro_rules! named {
    ($($t:ty),*) => {$(
        impl Named for $t {
            fn name(&self) -> &str { &self.name }
            fn set_name(&mut self, name: String) { self.name = name; }
        }
    )*};
}
named!(VolumeRec, HostRec, HostGroupRec, PodRec);

/// The host side of a connection, by internal id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TargetId {
    Host(String),
    HostGroup(String),
}

/// A connection: volume id and target, with its LUN.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ConnRec {
    pub volume: String,
    pub target: TargetId,
    pub lun: u32,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Connections {
    pub map: BTreeMap<(String, TargetId), u32>,
}

impl Serialize for Connections {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v: Vec<ConnRec> = self
            .map
            .iter()
            .map(|((vol, t), lun)| ConnRec {
                volume: vol.clone(),
                target: t.clone(),
                lun: *lun,
            })
            .collect();
        v.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Connections {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Vec::<ConnRec>::deserialize(d)?;
        Ok(Connections {
            map: v
                .into_iter()
                .map(|c| ((c.volume, c.target), c.lun))
                .collect(),
        })
    }
}

/// One tag on one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TagRec {
    pub namespace: String,
    pub key: String,
    pub value: String,
    pub copyable: bool,
}

/// An API token, kept secret everywhere except in the array's own snapshot.
#[derive(Clone)]
pub(crate) struct TokenRec {
    pub token: SecretString,
    pub created_at: u64,
    pub expires_at: Option<u64>,
}

impl std::fmt::Debug for TokenRec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRec")
            .field("token", &"[REDACTED]")
            .field("created_at", &self.created_at)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

#[derive(Serialize, Deserialize)]
struct TokenWire {
    token: String,
    created_at: u64,
    expires_at: Option<u64>,
}

impl Serialize for TokenRec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        TokenWire {
            token: self.token.expose_secret().to_string(),
            created_at: self.created_at,
            expires_at: self.expires_at,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for TokenRec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = TokenWire::deserialize(d)?;
        Ok(TokenRec {
            token: SecretString::from(w.token),
            created_at: w.created_at,
            expires_at: w.expires_at,
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct AdminRec {
    pub name: String,
    pub token: Option<TokenRec>,
    /// Management access policies (names); none means array-wide rights.
    #[serde(default)]
    pub policies: Vec<String>,
}

/// Everything the array knows.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct State {
    pub array: ArrayRec,
    pub volumes: Table<VolumeRec>,
    pub hosts: Table<HostRec>,
    pub host_groups: Table<HostGroupRec>,
    pub pods: Table<PodRec>,
    pub connections: Connections,
    pub volume_tags: BTreeMap<String, Vec<TagRec>>,
    pub host_tags: BTreeMap<String, Vec<TagRec>>,
    pub host_group_tags: BTreeMap<String, Vec<TagRec>>,
    pub pod_tags: BTreeMap<String, Vec<TagRec>>,
    /// Admins by lower-case name.
    pub admins: BTreeMap<String, AdminRec>,
    /// Realms by lower-case name.
    #[serde(default)]
    pub realms: Realms,
    /// Management access policies by lower-case name.
    #[serde(default)]
    pub access_policies: Policies,
    pub next_serial: u64,
    pub clock: Option<ClockSnapshot>,
    /// Earliest time a sweep can find something to eradicate; 0 means "scan at the
    /// next call" (the default after deserializing), `u64::MAX` "nothing pending".
    /// Keeps every call O(1) on arrays with 100k live volumes.
    #[serde(skip)]
    pub sweep_due: u64,
}

/// The whole state of a mock array, for saving and restoring (JSON). It contains the
/// array's API tokens, as the array itself does; its Debug output does not.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MockState {
    pub(crate) inner: State,
}

/// Per-call context handed to the rules.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx {
    pub now: u64,
    pub safemode: bool,
}

/// An array-style 400 answer about `context`.
pub(crate) fn bad(context: &str, message: impl Into<String>) -> Error {
    Error::api(400, Some(context), message)
}

impl State {
    pub(crate) fn new(array: ArrayRec, admins: &[String]) -> Self {
        let mut s = State {
            array,
            volumes: Table::default(),
            hosts: Table::default(),
            host_groups: Table::default(),
            pods: Table::default(),
            connections: Connections::default(),
            volume_tags: BTreeMap::new(),
            host_tags: BTreeMap::new(),
            host_group_tags: BTreeMap::new(),
            pod_tags: BTreeMap::new(),
            admins: BTreeMap::new(),
            realms: BTreeMap::new(),
            access_policies: BTreeMap::new(),
            next_serial: 1,
            clock: None,
            sweep_due: u64::MAX,
        };
        for a in admins {
            s.add_admin(a);
        }
        s
    }

    pub(crate) fn add_admin(&mut self, name: &str) {
        self.admins
            .entry(name.to_ascii_lowercase())
            .or_insert_with(|| AdminRec {
                name: name.to_string(),
                token: None,
                policies: Vec::new(),
            });
    }

    /// Rebuilds the name indexes after deserializing.
    pub(crate) fn rebuild_indexes(&mut self) {
        self.volumes.rebuild();
        self.hosts.rebuild();
        self.host_groups.rebuild();
        self.pods.rebuild();
    }

    /// Milliseconds left before a destroyed object is eradicated.
    pub(crate) fn time_remaining(&self, destroyed_at: Option<u64>, now: u64) -> Option<u64> {
        destroyed_at.map(|t| {
            t.saturating_add(self.array.eradication_delay_ms)
                .saturating_sub(now)
        })
    }

    fn expired(&self, destroyed_at: Option<u64>, now: u64) -> bool {
        matches!(destroyed_at, Some(t) if t.saturating_add(self.array.eradication_delay_ms) <= now)
    }

    /// Eradicates every destroyed object whose time ran out, as the array does in
    /// the background. Called before each operation; SafeMode does not stop it
    /// (SafeMode only blocks manual eradication).
    pub(crate) fn sweep(&mut self, now: u64) {
        if self.sweep_due > now {
            return;
        }
        let pods: Vec<String> = self
            .pods
            .iter()
            .filter(|(_, p)| self.expired(p.destroyed_at, now))
            .map(|(id, _)| id.clone())
            .collect();
        let vols: Vec<String> = self
            .volumes
            .iter()
            .filter(|(_, v)| {
                self.expired(v.destroyed_at, now)
                    || v.pod.as_ref().is_some_and(|p| pods.contains(p))
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in vols {
            self.drop_volume(&id);
        }
        for id in pods {
            self.pods.remove(&id);
            self.pod_tags.remove(&id);
        }
        let delay = self.array.eradication_delay_ms;
        self.sweep_due = self
            .volumes
            .iter()
            .filter_map(|(_, v)| v.destroyed_at)
            .chain(self.pods.iter().filter_map(|(_, p)| p.destroyed_at))
            .map(|t| t.saturating_add(delay))
            .min()
            .unwrap_or(u64::MAX);
    }

    /// Notes that something was destroyed at `now`, so that a sweep runs once its
    /// delay has passed.
    pub(crate) fn note_destroyed(&mut self, now: u64) {
        self.sweep_due = self
            .sweep_due
            .min(now.saturating_add(self.array.eradication_delay_ms));
    }

    /// Removes a volume and everything that refers to it.
    pub(crate) fn drop_volume(&mut self, id: &str) {
        self.volumes.remove(id);
        self.volume_tags.remove(id);
        let keys: Vec<_> = self
            .connections
            .map
            .range((id.to_string(), TargetId::Host(String::new()))..)
            .take_while(|((v, _), _)| v == id)
            .map(|(k, _)| k.clone())
            .collect();
        for k in keys {
            self.connections.map.remove(&k);
        }
    }
}

impl<R: Named> Table<R> {
    /// The records a list call selects by `names`, `ids` and `destroyed`, in the
    /// array's order: the names as given, otherwise name order. Every named (or id'd)
    /// object must exist and match the `destroyed` flag, as on the array.
    /// `kind` is the capitalised word of the messages (`Volume`); `with_ids` says
    /// whether the kind has public ids.
    pub(crate) fn select(
        &self,
        kind: &str,
        params: &flasharray::ListParams,
        with_ids: bool,
        is_destroyed: impl Fn(&R) -> bool,
    ) -> Result<Vec<(&str, &R)>, Error> {
        let check = |shown: &str, r: &R| -> Result<(), Error> {
            match params.destroyed {
                Some(false) if is_destroyed(r) => {
                    Err(bad(shown, format!("{kind} has been destroyed.")))
                }
                Some(true) if !is_destroyed(r) => {
                    Err(bad(shown, format!("{kind} is not destroyed.")))
                }
                _ => Ok(()),
            }
        };
        if !params.ids.is_empty() && !with_ids {
            return Err(bad(
                "ids",
                format!("Invalid parameter: {kind} objects have no ids."),
            ));
        }
        if !params.names.is_empty() && !params.ids.is_empty() {
            return Err(bad(
                "names",
                "Invalid parameters: names and ids are not allowed together.",
            ));
        }
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        if !params.names.is_empty() {
            for n in params.names.iter().flat_map(|n| n.split(',')) {
                let (id, r) = self
                    .by_name(n)
                    .ok_or_else(|| bad(n, format!("{kind} does not exist.")))?;
                check(n, r)?;
                if seen.insert(id) {
                    out.push((id, r));
                }
            }
        } else if !params.ids.is_empty() {
            for i in params.ids.iter().flat_map(|n| n.split(',')) {
                let (id, r) = self
                    .rows
                    .get_key_value(i)
                    .ok_or_else(|| bad(i, format!("{kind} does not exist.")))?;
                check(i, r)?;
                if seen.insert(id.as_str()) {
                    out.push((id.as_str(), r));
                }
            }
        } else {
            out.extend(self.iter_by_name().filter(|(_, r)| match params.destroyed {
                Some(d) => is_destroyed(r) == d,
                None => true,
            }));
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RealmRec {
    pub id: String,
    pub name: String,
    pub quota_limit: Option<u64>,
    pub created: u64,
    pub destroyed_at: Option<u64>,
}

/// A management access policy.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PolicyRec {
    pub id: String,
    pub name: String,
    pub enabled: bool,
    pub aggregation_strategy: String,
    pub rules: Vec<ManagementAccessRule>,
}

/// Realms and policies by lower-case name, for the state.
pub(crate) type Realms = BTreeMap<String, RealmRec>;
/// Management access policies by lower-case name.
pub(crate) type Policies = BTreeMap<String, PolicyRec>;
