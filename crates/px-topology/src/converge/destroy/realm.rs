//! Destroying the tenant's realm, its access policy and its realm user, after the
//! pod inside the realm: the user first (its API token goes with it), then the
//! policy it held, then the realm, soft unless eradication was asked for. Each is
//! removed only when it is recognisably this tenant's (see `plan::realm`), and a
//! realm holding anything but this tenant's pod is always kept.

use std::collections::BTreeMap;

use flasharray::RealmName;

use super::super::ops::Op;
use super::super::realm_ops::RealmOp;
use super::super::schedule::Graph;
use super::DestroyOptions;
use crate::desired::DesiredState;
use crate::plan::{
    Action, Blocker, Change, Kind, Observed, admin_matches, foreign_pods, policy_matches,
    realm_is_ours,
};

/// What of the realm destroy removes.
#[derive(Debug, Default)]
pub(super) struct RealmRemoval {
    /// The realm user to delete.
    user: Option<String>,
    /// The access policy to delete.
    policy: Option<String>,
    /// The realm to destroy (`false`) or, already destroyed, only to eradicate (`true`).
    realm: Option<(RealmName, bool)>,
}

impl RealmRemoval {
    /// Whether anything is removed.
    pub(super) fn is_empty(&self) -> bool {
        self.user.is_none() && self.policy.is_none() && self.realm.is_none()
    }

    /// Whether the realm user `admin` is deleted (its token with it).
    pub(super) fn deletes_user(&self, admin: &str) -> bool {
        self.user
            .as_deref()
            .is_some_and(|u| u.eq_ignore_ascii_case(admin))
    }
}

fn kept_because(kind: Kind, name: &str, why: String) -> Blocker {
    Blocker {
        kind,
        name: name.to_string(),
        reason: format!("kept: {why}"),
        resolution: "nothing to do: pxfa keeps what is not this tenant's".to_string(),
    }
}

/// Decides what goes; what stays is added to `kept`.
pub(super) fn select(
    obs: &Observed,
    desired: &DesiredState,
    opts: &DestroyOptions,
    kept: &mut Vec<Blocker>,
) -> RealmRemoval {
    let mut out = RealmRemoval::default();
    let Some(want) = &desired.realm else {
        return out;
    };
    let realm = want.name.as_str();
    if let Some(user) = &want.user {
        let user_ours = match &obs.realm.admin {
            Some(rights) if admin_matches(rights, user) => {
                out.user = Some(user.admin.clone());
                true
            }
            Some(_) => {
                kept.push(kept_because(
                    Kind::RealmUser,
                    &user.admin,
                    format!("has rights beyond access policy {}", user.policy),
                ));
                false
            }
            None => true,
        };
        match &obs.realm.policy {
            Some(p) if user_ours && policy_matches(p, realm, user) => {
                out.policy = Some(user.policy.clone());
            }
            Some(_) => kept.push(kept_because(
                Kind::AccessPolicy,
                &user.policy,
                "not recognisably this tenant's (other rules, or held by an admin pxfa keeps)"
                    .into(),
            )),
            None => {}
        }
    }
    let Some(have) = &obs.realm.realm else {
        return out;
    };
    let foreign = foreign_pods(&obs.realm.pods, &obs.tags, &desired.tenant);
    if !foreign.is_empty() {
        kept.push(kept_because(
            Kind::Realm,
            realm,
            format!(
                "holds pods pxfa does not manage for this tenant: {}",
                foreign.join(", ")
            ),
        ));
    } else if !obs.realm.other_policies.is_empty() {
        kept.push(kept_because(
            Kind::Realm,
            realm,
            format!(
                "access policies pxfa did not make reach into it: {}",
                obs.realm.other_policies.join(", ")
            ),
        ));
    } else if !realm_is_ours(desired, obs) {
        kept.push(kept_because(
            Kind::Realm,
            realm,
            format!(
                "no pod of tenant {} is in it: not created by pxfa",
                desired.tenant
            ),
        ));
    } else if !have.destroyed || opts.eradicate {
        out.realm = Some((want.name.clone(), have.destroyed));
    }
    out
}

/// Adds the removals to the graph. `pods_gone` are the nodes destroying (and, with
/// eradication, eradicating) the realm's pods; the realm's eradication node is
/// added to `eradicate_nodes`, so that a SafeMode refusal is reported as pending.
pub(super) fn add(
    sel: &RealmRemoval,
    opts: &DestroyOptions,
    g: &mut Graph,
    change: &mut dyn FnMut(Change) -> usize,
    pods_gone: &BTreeMap<String, Vec<usize>>,
    eradicate_nodes: &mut Vec<usize>,
) {
    let mut user_node = Vec::new();
    if let Some(admin) = &sel.user {
        let id = change(Change::new(
            Action::Delete,
            Kind::RealmUser,
            admin,
            "tenant destroyed; its API token goes with it",
        ));
        user_node.push(g.add(
            Op::Realm(RealmOp::DeleteUser {
                admin: admin.clone(),
            }),
            [],
            [id],
        ));
    }
    let mut policy_node = Vec::new();
    if let Some(name) = &sel.policy {
        let id = change(Change::new(
            Action::Delete,
            Kind::AccessPolicy,
            name,
            "tenant destroyed",
        ));
        policy_node.push(g.add(
            Op::Realm(RealmOp::DeletePolicy { name: name.clone() }),
            user_node.clone(),
            [id],
        ));
    }
    let Some((realm, destroyed)) = &sel.realm else {
        return;
    };
    let in_realm: Vec<usize> = pods_gone
        .iter()
        .filter(|(pod, _)| {
            pod.split_once("::")
                .is_some_and(|(r, _)| r.eq_ignore_ascii_case(realm.as_str()))
        })
        .flat_map(|(_, n)| n.iter().copied())
        .collect();
    let mut destroy_node = Vec::new();
    if !destroyed {
        let id = change(Change::new(
            Action::Delete,
            Kind::Realm,
            realm.as_str(),
            "tenant destroyed; recoverable until eradicated",
        ));
        let deps: Vec<usize> = in_realm.iter().chain(&policy_node).copied().collect();
        destroy_node.push(g.add(
            Op::Realm(RealmOp::Destroy {
                name: realm.clone(),
            }),
            deps,
            [id],
        ));
    }
    if opts.eradicate {
        let id = change(
            Change::new(
                Action::Delete,
                Kind::Realm,
                realm.as_str(),
                "tenant destroyed with eradication",
            )
            .detail("mode", "eradicate"),
        );
        let deps: Vec<usize> = in_realm
            .iter()
            .chain(&destroy_node)
            .chain(&policy_node)
            .copied()
            .collect();
        eradicate_nodes.push(g.add(
            Op::Realm(RealmOp::Eradicate {
                name: realm.clone(),
            }),
            deps,
            [id],
        ));
    }
}
