//! The calls of a destroy as data, added in the order they take effect: what
//! `converge` sends, and what the destroy plans of the realm and of the other
//! objects build together.

use std::collections::BTreeMap;

use flasharray::{ConnectionTarget, HostGroupName, HostName, PodName, RealmName, VolumeName};

use super::super::change::{Action, Change, Kind};

/// What a destroy takes beyond the tenant's tagged objects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DestroyScope {
    /// Eradicate destroyed volumes, the pod and the realm: irreversible.
    pub eradicate: bool,
    /// Delete the token admin's API token (tokens carry no tags).
    pub delete_token: bool,
    /// Destroy on the array the live drives the management Portworx created
    /// (dynamic provisioning, tagged with their claim). Off by default: those are
    /// released through Portworx (the PV's reclaim policy set to Delete, the claim
    /// deleted), which removes the array volume and Portworx's record of it; an
    /// array-side destroy leaves the record and the PV stale \[L\]. For a management
    /// Portworx that is gone.
    pub destroy_dynamic_drives: bool,
}

/// One REST call of a destroy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Removal {
    Disconnect {
        target: ConnectionTarget,
        volumes: Vec<VolumeName>,
    },
    DestroyVolumes(Vec<VolumeName>),
    RemoveMembers {
        group: HostGroupName,
        hosts: Vec<HostName>,
    },
    EradicateVolumes(Vec<VolumeName>),
    DeleteHosts(Vec<HostName>),
    DestroyPods(Vec<PodName>),
    DeleteHostGroups(Vec<HostGroupName>),
    EradicatePods(Vec<PodName>),
    DeleteToken(String),
    /// The realm user (its API token goes with it).
    DeleteRealmUser(String),
    DeleteAccessPolicy(String),
    DestroyRealm(RealmName),
    EradicateRealm(RealmName),
}

/// A call, the earlier calls it waits for and the changes it carries out (indexes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) call: Removal,
    pub(crate) after: Vec<usize>,
    pub(crate) changes: Vec<usize>,
}

/// The changes and calls of a destroy, as they are added.
#[derive(Default)]
pub(super) struct Steps {
    pub(super) changes: Vec<Change>,
    pub(super) steps: Vec<Step>,
    /// The steps that eradicate.
    pub(super) eradications: Vec<usize>,
}

impl Steps {
    /// Adds a change; its index.
    pub(super) fn change(&mut self, c: Change) -> usize {
        self.changes.push(c);
        self.changes.len() - 1
    }

    /// Adds a call after `after` carrying out `changes`; its index.
    pub(super) fn add(&mut self, call: Removal, after: Vec<usize>, changes: Vec<usize>) -> usize {
        self.steps.push(Step {
            call,
            after,
            changes,
        });
        self.steps.len() - 1
    }

    /// One delete change per name of `chunk`.
    pub(super) fn deletes<T: AsRef<str>>(
        &mut self,
        kind: Kind,
        chunk: &[T],
        reason: &str,
    ) -> Vec<usize> {
        chunk
            .iter()
            .map(|n| self.change(Change::new(Action::Delete, kind, n.as_ref(), reason)))
            .collect()
    }

    /// One eradicating delete change per name of `chunk`.
    pub(super) fn eradications<T: AsRef<str>>(&mut self, kind: Kind, chunk: &[T]) -> Vec<usize> {
        let reason = "tenant destroyed with eradication";
        chunk
            .iter()
            .map(|n| {
                let c = Change::new(Action::Delete, kind, n.as_ref(), reason);
                self.change(c.detail("mode", "eradicate"))
            })
            .collect()
    }
}

/// The calls each object waits for, by lower-cased name.
pub(super) type After = BTreeMap<String, Vec<usize>>;
