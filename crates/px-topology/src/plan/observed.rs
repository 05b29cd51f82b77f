//! What the array holds of a tenant, as `observe` read it: the state every kind's
//! diff and the destroy plan start from.

use std::collections::BTreeMap;

use flasharray::models::{Connection, Host, HostGroup, Pod, Volume};

use super::drives::ObservedDrives;
use super::ownership::TagIndex;
use super::realm::RealmState;
use super::token::{JournalVerdict, TokenState};

/// What the array holds of a tenant's objects, keyed by lower-cased name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// Pods (desired and orphaned), destroyed ones included.
    pub pods: BTreeMap<String, Pod>,
    /// Host groups (desired and orphaned).
    pub host_groups: BTreeMap<String, HostGroup>,
    /// Hosts (desired and orphaned).
    pub hosts: BTreeMap<String, Host>,
    /// Every host on the array, read only when the desired state has management
    /// node hosts: they are found by initiator, not by name.
    pub all_hosts: Vec<Host>,
    /// Volumes (desired and orphaned), destroyed ones included.
    pub volumes: BTreeMap<String, Volume>,
    /// pxfa's `pxfa.io` tags by kind and object: of every object but those of other
    /// tenants whose names the desired state does not use (see
    /// `TagIndex::insert_relevant`).
    pub tags: TagIndex,
    /// Connections of the existing tenant volumes, hosts and host groups (one row per
    /// host, as the array lists them), without duplicates.
    pub connections: Vec<Connection>,
    /// Members of the orphaned host groups, by lower-cased group name.
    pub group_members: BTreeMap<String, Vec<String>>,
    /// Whether the tenant's token admin exists and holds a token.
    pub token: TokenState,
    /// When the admin's token was created (ms since the epoch, the array's clock).
    pub token_created_at: Option<u64>,
    /// When the admin's token expires (ms since the epoch, the array's clock); `None`
    /// when it never does or there is none. `status` warns ahead of it.
    pub token_expires_at: Option<u64>,
    /// What the token journal says about that token.
    pub token_journal: JournalVerdict,
    /// The desired realm, its pods, policy and admin (read in round 1).
    pub realm: RealmState,
    /// Objects tagged for this tenant that the desired state no longer names.
    pub orphans: Orphans,
    /// The desired dynamically provisioned drives found by tags (and, after
    /// `super::locate_drives`, through their claims).
    pub drives: ObservedDrives,
    /// Dependent read rounds `observe` took: 1, or 2 when there were orphans.
    pub rounds: usize,
}

/// Objects tagged for the tenant that the desired state no longer names, as the array
/// spells their names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Orphans {
    /// Volumes tagged for the tenant that no desired volume or drive names.
    pub volumes: Vec<String>,
    /// Hosts tagged for the tenant that the desired state does not name.
    pub hosts: Vec<String>,
    /// Host groups tagged for the tenant that the desired state does not name.
    pub host_groups: Vec<String>,
    /// Pods tagged for the tenant other than its desired pod (a renamed tenant pod).
    pub pods: Vec<String>,
}

impl Orphans {
    pub(crate) fn is_empty(&self) -> bool {
        self.volumes.is_empty()
            && self.hosts.is_empty()
            && self.host_groups.is_empty()
            && self.pods.is_empty()
    }
}

pub(crate) fn keyed<T>(items: Vec<T>, name: impl Fn(&T) -> &str) -> BTreeMap<String, T> {
    items
        .into_iter()
        .map(|i| (name(&i).to_ascii_lowercase(), i))
        .collect()
}

/// The key an object is found under: array names compare without case.
pub(crate) fn key(name: &str) -> String {
    name.to_ascii_lowercase()
}
