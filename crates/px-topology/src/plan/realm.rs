//! The tenant's realm, its access policy and its realm user: the version gate,
//! reading them, and their part of the plan.
//!
//! None of the three carries tags on the array, so ownership is decided by what they
//! hold: the realm is this tenant's when the tenant's pod inside it is tagged for
//! the tenant, or when it is pristine (empty, and no other access policy reaches
//! into it: what an apply interrupted before the pod leaves); the policy when it
//! grants exactly the desired role in exactly this realm; the admin when its rights
//! come only from that policy. Anything else of the same name is a conflict (a realm
//! may be adopted with `--adopt`; a policy or admin never is, since pxfa would have
//! to change rights it did not grant).

use flasharray::models::{ManagementAccessPolicy, Pod, RESOURCE_REALMS, Realm};
use flasharray::{ErrorKind, FlashArray, ListParams, Result};

use super::change::{Action, Blocker, Change, Kind, Payload, PlanOptions};
use super::ownership::{Owner, TagIndex, is_tenants, owner};
use crate::desired::{DesiredRealm, DesiredRealmUser, DesiredState, TenantId};
use crate::spec::realm::REALM_MIN_REST_MINOR;

/// Why a tenant with a realm cannot be planned on an array.
#[derive(Debug, thiserror::Error)]
pub enum RealmGateError {
    /// The array's REST version has no realms (bad input: exit 2).
    #[error(
        "spec.array.realm: realm {realm} needs FlashArray REST 2.{REALM_MIN_REST_MINOR} or newer \
         (Purity 6.6.11+ has secure multi-tenancy); this array speaks REST 2.{found} at most: \
         upgrade Purity or remove spec.array.realm; nothing was changed"
    )]
    Unsupported {
        /// The realm the spec asks for.
        realm: String,
        /// The REST minor version the array speaks.
        found: u32,
    },
    /// The array's REST version cannot tag an object kind the tenant owns (bad
    /// input: exit 2). pxfa marks what it made with tags; without them it could not
    /// tell its objects from anyone else's.
    #[error(
        "the tenant's {kind} carry pxfa's ownership tags, which FlashArray has from REST \
         2.{need} (`/{kind}/tags`); this array speaks REST 2.{found} at most: upgrade Purity; \
         nothing was changed"
    )]
    TagsUnsupported {
        /// The object kind (`pods`, `hosts`, `host-groups`).
        kind: &'static str,
        /// The first REST minor version with that kind's tags.
        need: u32,
        /// The REST minor version the array speaks.
        found: u32,
    },
    /// Asking the array for its version failed.
    #[error("reading the array's REST version: {0}")]
    Array(#[from] flasharray::Error),
}

impl RealmGateError {
    /// Whether the array cannot take this tenant at all (bad input, exit 2), as
    /// opposed to a failure to ask it.
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self,
            RealmGateError::Unsupported { .. } | RealmGateError::TagsUnsupported { .. }
        )
    }
}

/// The first REST 2.N with each tagged kind's `/{kind}/tags` (py-pure-client's
/// per-version clients; `flasharray_sim`'s `versions` holds the whole table).
const TAGS_SINCE: [(&str, u32); 3] = [("pods", 39), ("host-groups", 34), ("hosts", 34)];

/// The first tagged kind the tenant owns that `found` cannot tag.
fn untaggable(desired: &DesiredState, found: u32) -> Option<(&'static str, u32)> {
    let owns = |kind: &str| match kind {
        "pods" => desired.pod.is_some(),
        "host-groups" => !desired.host_groups.is_empty(),
        _ => !desired.hosts.is_empty(),
    };
    TAGS_SINCE
        .into_iter()
        .find(|(kind, need)| found < *need && owns(kind))
}

/// Refuses a desired state with a realm on an array whose REST version lacks realms,
/// or with a pod, hosts or host groups on one that cannot tag them (pxfa's ownership
/// marks); one read at most (the version is negotiated once per session). Call it
/// before observing, so that nothing is read from or written to such an array.
pub(crate) async fn require_realm_support(
    array: &dyn FlashArray,
    desired: &DesiredState,
) -> std::result::Result<(), RealmGateError> {
    if desired.realm.is_none() && desired.pod.is_none() && desired.hosts.is_empty() {
        return Ok(());
    }
    let Some(found) = array.rest_minor_version().await? else {
        return Ok(());
    };
    // The realm first: its message names the spec field to remove.
    if let Some(realm) = &desired.realm
        && found < REALM_MIN_REST_MINOR
    {
        return Err(RealmGateError::Unsupported {
            realm: realm.name.to_string(),
            found,
        });
    }
    match untaggable(desired, found) {
        Some((kind, need)) => Err(RealmGateError::TagsUnsupported { kind, need, found }),
        None => Ok(()),
    }
}

/// The realm's objects as the array holds them; empty without a desired realm.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RealmState {
    /// The realm, destroyed or not.
    pub realm: Option<Realm>,
    /// Every pod inside the realm, destroyed ones included.
    pub pods: Vec<Pod>,
    /// The realm user's access policy.
    pub policy: Option<ManagementAccessPolicy>,
    /// Other access policies with a rule inside the realm: someone else's users reach
    /// into it.
    pub other_policies: Vec<String>,
    /// The realm user's rights, when the admin exists: its policies (names) and its
    /// array-wide role (`None` when its rights come from policies).
    pub admin: Option<(Vec<String>, Option<String>)>,
}

/// Reads the desired realm, its pods, the policy and the admin (one round, the four
/// reads concurrent). Realms, policies and admins are small collections: they are
/// listed whole and picked by name, which needs no "does not exist" handling.
pub(super) async fn read_realm(
    array: &dyn FlashArray,
    desired: &DesiredState,
) -> Result<RealmState> {
    let Some(want) = &desired.realm else {
        return Ok(RealmState::default());
    };
    let name = want.name.as_str();
    let user = want.user.as_ref();
    let everything = ListParams::all();
    let realms = array.list_realms(&everything);
    let pods = async {
        let params = ListParams {
            filter: Some(format!("name='{name}::*'")),
            ..ListParams::default()
        };
        match array.list_pods(&params).await {
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Vec::new()),
            r => r,
        }
    };
    let policies = array.list_management_access_policies(&[]);
    let admins = async {
        match user {
            Some(u) => array.list_admins(&[]).await.map(|all| {
                all.into_iter()
                    .find(|a| a.name.eq_ignore_ascii_case(&u.admin))
                    .map(|a| {
                        let policies = a
                            .management_access_policies
                            .iter()
                            .filter_map(|p| p.name.clone())
                            .collect();
                        (policies, a.role.name)
                    })
            }),
            None => Ok(None),
        }
    };
    let (realms, pods, policies, admin) =
        futures_util::future::try_join4(realms, pods, policies, admins).await?;
    let ours =
        |p: &ManagementAccessPolicy| user.is_some_and(|u| p.name.eq_ignore_ascii_case(&u.policy));
    let other_policies = policies
        .iter()
        .filter(|p| !ours(p))
        .filter(|p| {
            p.rules.iter().any(|r| {
                r.scope.resource_type.as_deref() == Some(RESOURCE_REALMS)
                    && r.scope
                        .name
                        .as_deref()
                        .is_some_and(|n| n.eq_ignore_ascii_case(name))
            })
        })
        .map(|p| p.name.clone())
        .collect();
    let policy = policies.into_iter().find(|p| ours(p));
    let prefix = format!("{}::", name.to_ascii_lowercase());
    Ok(RealmState {
        realm: realms
            .into_iter()
            .find(|r| r.name.eq_ignore_ascii_case(name)),
        pods: pods
            .into_iter()
            .filter(|p| p.name.to_ascii_lowercase().starts_with(&prefix))
            .collect(),
        policy,
        other_policies,
        admin,
    })
}

/// Whether `pods` (inside the realm) hold anything but this tenant's pods; the names
/// of the others.
pub(crate) fn foreign_pods(pods: &[Pod], tags: &TagIndex, tenant: &TenantId) -> Vec<String> {
    pods.iter()
        .filter(|p| !tags.is_tenants(flasharray::TagResource::Pod, &p.name, tenant))
        .map(|p| p.name.clone())
        .collect()
}

/// Whether the realm is this tenant's: the desired pod is in it, tagged for the
/// tenant; or the realm is pristine (see [`realm_is_pristine`]).
pub(crate) fn realm_is_ours(desired: &DesiredState, state: &RealmState, tags: &TagIndex) -> bool {
    realm_holds_our_pod(desired, state, tags) || realm_is_pristine(state)
}

/// An existing realm that holds no pod at all, not even a destroyed one, and that no
/// other access policy reaches into: what an apply interrupted between creating the
/// realm and creating the pod leaves. Taking it is safe: nothing is in it, and no
/// one else's user can see what pxfa puts there.
pub(crate) fn realm_is_pristine(state: &RealmState) -> bool {
    state.realm.is_some() && state.pods.is_empty() && state.other_policies.is_empty()
}

fn realm_holds_our_pod(desired: &DesiredState, state: &RealmState, tags: &TagIndex) -> bool {
    let Some(pod) = &desired.pod else {
        return false;
    };
    state.pods.iter().any(|p| {
        p.name.eq_ignore_ascii_case(pod.name.as_str())
            && is_tenants(
                tags.get(flasharray::TagResource::Pod, &p.name),
                &desired.tenant,
            )
    })
}

/// Whether `policy` grants exactly `user.role` inside `realm` and nothing else.
pub(crate) fn policy_matches(
    policy: &ManagementAccessPolicy,
    realm: &str,
    user: &DesiredRealmUser,
) -> bool {
    let [rule] = policy.rules.as_slice() else {
        return false;
    };
    policy.enabled != Some(false)
        && policy
            .aggregation_strategy
            .as_ref()
            .is_none_or(|a| a.as_str().eq_ignore_ascii_case(&user.aggregation_strategy))
        && rule
            .role
            .name
            .as_deref()
            .is_some_and(|r| r.eq_ignore_ascii_case(&user.role))
        && rule.scope.resource_type.as_deref() == Some(RESOURCE_REALMS)
        && rule
            .scope
            .name
            .as_deref()
            .is_some_and(|n| n.eq_ignore_ascii_case(realm))
}

/// Whether the admin's rights come only from `user.policy`.
pub(crate) fn admin_matches(
    rights: &(Vec<String>, Option<String>),
    user: &DesiredRealmUser,
) -> bool {
    let (policies, role) = rights;
    role.is_none() && policies.len() == 1 && policies[0].eq_ignore_ascii_case(&user.policy)
}

/// The realm's part of a plan.
#[derive(Debug, Default)]
pub(super) struct RealmPlan {
    /// The realm (before the pod).
    pub realm: Vec<Change>,
    /// The policy and the admin (before the token).
    pub user: Vec<Change>,
    /// Objects pxfa must not touch.
    pub conflicts: Vec<Blocker>,
    /// Whether the plan creates the realm user (so its token can be created too).
    pub creates_admin: bool,
}

fn conflict(kind: Kind, name: &str, reason: String, resolution: &str) -> Blocker {
    Blocker {
        kind,
        name: name.to_string(),
        reason,
        resolution: resolution.to_string(),
    }
}

/// Plans the realm, its policy and its admin from what the array holds of them
/// (`state`) and pxfa's tags.
pub(super) fn plan_realm(
    desired: &DesiredState,
    (state, tags): (&RealmState, &TagIndex),
    opts: &PlanOptions,
) -> RealmPlan {
    let mut out = RealmPlan::default();
    let Some(want) = &desired.realm else {
        return out;
    };
    plan_realm_object(want, desired, (state, tags), opts, &mut out);
    if let Some(user) = &want.user {
        plan_user(want, user, state, &mut out);
    }
    out
}

fn plan_realm_object(
    want: &DesiredRealm,
    desired: &DesiredState,
    (state, tags): (&RealmState, &TagIndex),
    opts: &PlanOptions,
    out: &mut RealmPlan,
) {
    let name = want.name.as_str();
    let payload = Payload::Realm {
        name: want.name.clone(),
    };
    let Some(have) = &state.realm else {
        out.realm
            .push(Change::new(Action::Create, Kind::Realm, name, "not on the array").with(payload));
        return;
    };
    let ours = realm_holds_our_pod(desired, state, tags);
    let pristine = !ours && realm_is_pristine(state);
    let foreign = foreign_pods(&state.pods, tags, &desired.tenant);
    // --adopt takes an untagged realm, never one holding another tenant's pod.
    let others = state.pods.iter().any(|p| {
        let tags = tags.get(flasharray::TagResource::Pod, &p.name);
        matches!(
            owner(tags, &desired.tenant),
            Owner::OtherTenant(_) | Owner::Unclaimed
        )
    });
    if !ours && !pristine && (!opts.adopt || others) {
        let mut why = Vec::new();
        if !foreign.is_empty() {
            why.push(format!(
                "It holds pods pxfa does not manage for this tenant: {}.",
                foreign.join(", ")
            ));
        }
        if !state.other_policies.is_empty() {
            why.push(format!(
                "Access policies pxfa did not make reach into it: {}.",
                state.other_policies.join(", ")
            ));
        }
        out.conflicts.push(conflict(
            Kind::Realm,
            name,
            format!(
                "exists, and no pod of tenant {} is in it: pxfa did not make it (realms carry no tags). {}",
                desired.tenant,
                why.join(" ")
            ),
            if others {
                "choose another spec.array.realm (another tenant's pod is in it)"
            } else {
                "adopt it (--adopt), or choose another spec.array.realm"
            },
        ));
        return;
    }
    if have.destroyed {
        out.realm.push(
            Change::new(
                Action::Recover,
                Kind::Realm,
                name,
                "destroyed and still pending eradication: recovered, not re-created",
            )
            .with(payload),
        );
    } else if ours {
        out.realm
            .push(Change::new(Action::NoOp, Kind::Realm, name, "as desired"));
    } else if pristine {
        out.realm.push(Change::new(
            Action::NoOp,
            Kind::Realm,
            name,
            "empty, and no other access policy reaches into it: taken as left by an interrupted apply",
        ));
    } else {
        out.realm.push(Change::new(
            Action::NoOp,
            Kind::Realm,
            name,
            "adopted (--adopt): realms carry no tags; the tenant's pod inside it marks it as this tenant's",
        ));
    }
}

fn plan_user(
    want: &DesiredRealm,
    user: &DesiredRealmUser,
    state: &RealmState,
    out: &mut RealmPlan,
) {
    let realm = want.name.as_str();
    let resolution = "set spec.array.tokenUser to a name not in use (the policy is named after it), or remove it on the array";
    match &state.policy {
        None => out.user.push(
            Change::new(
                Action::Create,
                Kind::AccessPolicy,
                &user.policy,
                "not on the array",
            )
            .detail("role", &user.role)
            .detail("realm", realm)
            .with(Payload::AccessPolicy {
                name: user.policy.clone(),
                realm: want.name.clone(),
                role: user.role.clone(),
                aggregation_strategy: user.aggregation_strategy.clone(),
            }),
        ),
        Some(p) if policy_matches(p, realm, user) => out.user.push(Change::new(
            Action::NoOp,
            Kind::AccessPolicy,
            &user.policy,
            "grants exactly the desired role in the realm",
        )),
        Some(_) => out.conflicts.push(conflict(
            Kind::AccessPolicy,
            &user.policy,
            format!(
                "exists with other rules or settings than role {} in realm {realm}; pxfa does not change access policies it did not make",
                user.role
            ),
            resolution,
        )),
    }
    match &state.admin {
        None => {
            out.creates_admin = true;
            out.user.push(
                Change::new(
                    Action::Create,
                    Kind::RealmUser,
                    &user.admin,
                    "not on the array",
                )
                .detail("policy", &user.policy)
                .with(Payload::RealmUser {
                    admin: user.admin.clone(),
                    policy: user.policy.clone(),
                }),
            );
        }
        Some(rights) if admin_matches(rights, user) => out.user.push(Change::new(
            Action::NoOp,
            Kind::RealmUser,
            &user.admin,
            "holds only the realm's access policy",
        )),
        Some((policies, role)) => {
            let rights = match role {
                Some(r) => format!("the array-wide role {r}"),
                None => format!("the policies {}", policies.join(", ")),
            };
            out.conflicts.push(conflict(
                Kind::RealmUser,
                &user.admin,
                format!("exists with {rights}: its token would not be confined to realm {realm}"),
                resolution,
            ));
        }
    }
}
