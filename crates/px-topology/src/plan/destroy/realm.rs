//! Destroying the tenant's realm, its access policy and its realm user, after the
//! pod inside the realm: the user first (its API token goes with it), then the
//! policy it held, then the realm, soft unless eradication was asked for. Each is
//! removed only when it is recognisably this tenant's (see `plan/realm.rs`), and a
//! realm holding anything but this tenant's pod is always kept.

use flasharray::RealmName;

use super::super::change::{Action, Blocker, Change, Kind};
use super::super::observed::Observed;
use super::super::realm::{admin_matches, foreign_pods, policy_matches, realm_is_ours};
use super::steps::{After, DestroyScope, Removal, Steps};
use crate::desired::DesiredState;

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

    /// Keeps the realm, its policy and its user (the management Portworx may still
    /// use them to release drives): each is noted in `kept` with `why`.
    pub(super) fn hold(&mut self, kept: &mut Vec<Blocker>, why: &str) {
        let reason = |what: &str| format!("{why}: {what} until Portworx has released the drives");
        if let Some(user) = self.user.take() {
            kept.push(held(
                Kind::RealmUser,
                &user,
                reason("the management Portworx may log in as it"),
            ));
        }
        if let Some(policy) = self.policy.take() {
            kept.push(held(
                Kind::AccessPolicy,
                &policy,
                reason("its user is kept"),
            ));
        }
        if let Some((realm, _)) = self.realm.take() {
            kept.push(held(
                Kind::Realm,
                realm.as_str(),
                reason("it holds the tenant's pod"),
            ));
        }
    }

    /// Whether the realm user `admin` is deleted (its token with it).
    pub(super) fn deletes_user(&self, admin: &str) -> bool {
        self.user
            .as_deref()
            .is_some_and(|u| u.eq_ignore_ascii_case(admin))
    }
}

fn held(kind: Kind, name: &str, reason: String) -> Blocker {
    Blocker {
        kind,
        name: name.to_string(),
        reason,
        resolution: "destroy again once the management Portworx released the drives".to_string(),
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
    scope: DestroyScope,
    kept: &mut Vec<Blocker>,
) -> RealmRemoval {
    let mut out = RealmRemoval::default();
    let Some(want) = &desired.realm else {
        return out;
    };
    let realm = want.name.as_str();
    if let Some(user) = &want.user {
        let others = obs.tags.token_claimants();
        let user_ours = match &obs.realm.admin {
            // The realm user is the token user: one another tenant may use is kept.
            Some(_) if !others.is_empty() => {
                kept.push(kept_because(
                    Kind::RealmUser,
                    &user.admin,
                    format!("{others} too, whose objects are on the array"),
                ));
                false
            }
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
    } else if !realm_is_ours(desired, &obs.realm, &obs.tags) {
        kept.push(kept_because(
            Kind::Realm,
            realm,
            format!(
                "no pod of tenant {} is in it: not created by pxfa",
                desired.tenant
            ),
        ));
    } else if !have.destroyed || scope.eradicate {
        out.realm = Some((want.name.clone(), have.destroyed));
    }
    out
}

/// Adds the removals. `pods_gone` are the calls destroying (and, with
/// eradication, eradicating) the realm's pods; the realm's eradication is an
/// eradication step, so that a SafeMode refusal is reported as pending.
pub(super) fn add(sel: &RealmRemoval, scope: DestroyScope, s: &mut Steps, pods_gone: &After) {
    let mut user_step = Vec::new();
    if let Some(admin) = &sel.user {
        let reason = "tenant destroyed; its API token goes with it";
        let id = s.change(Change::new(Action::Delete, Kind::RealmUser, admin, reason));
        user_step.push(s.add(Removal::DeleteRealmUser(admin.clone()), vec![], vec![id]));
    }
    let mut policy_step = Vec::new();
    if let Some(name) = &sel.policy {
        let id = s.change(Change::new(
            Action::Delete,
            Kind::AccessPolicy,
            name,
            "tenant destroyed",
        ));
        let call = Removal::DeleteAccessPolicy(name.clone());
        policy_step.push(s.add(call, user_step.clone(), vec![id]));
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
    let mut destroy_step = Vec::new();
    if !destroyed {
        let reason = "tenant destroyed; recoverable until eradicated";
        let id = s.change(Change::new(
            Action::Delete,
            Kind::Realm,
            realm.as_str(),
            reason,
        ));
        let after = in_realm.iter().chain(&policy_step).copied().collect();
        destroy_step.push(s.add(Removal::DestroyRealm(realm.clone()), after, vec![id]));
    }
    if scope.eradicate {
        let ids = s.eradications(Kind::Realm, &[realm.as_str()]);
        let after = (in_realm.iter())
            .chain(&destroy_step)
            .chain(&policy_step)
            .copied()
            .collect();
        let n = s.add(Removal::EradicateRealm(realm.clone()), after, ids);
        s.eradications.push(n);
    }
}
