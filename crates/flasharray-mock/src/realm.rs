//! Secure multi-tenancy: realms, management access policies, admins holding them,
//! and the enforcement that makes a realm a boundary.
//!
//! Rules (choices where the array is unconfirmed are marked `[L]` in
//! `docs/realms.md`):
//!
//! * a realm name is unique among realms; a pod `realm::pod` needs its realm live;
//! * a realm is destroyed only when it holds no live pod, unless `destroy_contents`
//!   (which destroys its pods with their volumes); eradicated only when destroyed and
//!   empty, unless `eradicate_contents`; SafeMode refuses manual eradication;
//! * a policy rule names a built-in role (`viewer`, `support`, `storage`, `admin`)
//!   and a scope, an existing realm or the array; a policy attached to an admin
//!   cannot be deleted;
//! * an admin whose enabled policies scope it to realms is **realm-scoped**: it sees
//!   only objects inside those realms (`realm::pod`, `realm::pod::vol`, their tags,
//!   their connections), its own admin record and token, and the array itself;
//!   anything else it names is refused with 403 `[L]`; `viewer`/`support` roles
//!   only read. Hosts and host groups are outside every realm in the mock
//!   (realm hosts, `realm::host`, come with REST 2.47 and are not modelled).

use flasharray::models::*;
use flasharray::params::{ListParams, TagResource};
use flasharray::{Error, PodName, RealmName, Result};

use crate::state::{Ctx, PolicyRec, RealmRec, State, bad};
use crate::volume::{check_size, safemode_refusal};

/// Roles a management access rule may name, and whether each may change things.
const ROLES: &[(&str, bool)] = &[
    ("viewer", false),
    ("support", false),
    ("storage", true),
    ("admin", true),
];

/// What a caller may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The whole array (`pureuser`, array-scoped policies, classic roles).
    Array,
    /// Only these realms (lower-case names); `write` unless every role only reads.
    Realms {
        admin: String,
        realms: Vec<String>,
        write: bool,
    },
}

/// The realm part of a name of `kind`, if the name is inside a realm.
fn realm_of(kind: TagResource, name: &str) -> Option<&str> {
    let parts: Vec<&str> = name.split("::").collect();
    match (kind, parts.len()) {
        (TagResource::Volume, 3) | (TagResource::Pod, 2) => Some(parts[0]),
        _ => None,
    }
}

fn forbidden(context: &str, message: impl Into<String>) -> Error {
    Error::api(403, Some(context), message)
}

impl Scope {
    /// Whether `name` (of `kind`) is inside the scope.
    pub(crate) fn reaches(&self, kind: TagResource, name: &str) -> bool {
        match self {
            Scope::Array => true,
            Scope::Realms { realms, .. } => realm_of(kind, name)
                .is_some_and(|r| realms.iter().any(|k| k.eq_ignore_ascii_case(r))),
        }
    }

    /// Refuses the first name outside the scope.
    pub(crate) fn check<'a>(
        &self,
        kind: TagResource,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        let Scope::Realms { admin, .. } = self else {
            return Ok(());
        };
        for n in names {
            if !self.reaches(kind, n) {
                return Err(forbidden(
                    n,
                    format!("Permission denied: {n} is outside the realms of admin {admin}."),
                ));
            }
        }
        Ok(())
    }

    /// Refuses a change by a read-only realm role.
    pub(crate) fn check_write(&self, what: &str) -> Result<()> {
        match self {
            Scope::Realms {
                admin,
                write: false,
                ..
            } => Err(forbidden(
                what,
                format!("Permission denied: admin {admin} may only read in its realms."),
            )),
            _ => Ok(()),
        }
    }

    /// Refuses an operation that only array-wide callers may make.
    pub(crate) fn array_only(&self, what: &str) -> Result<()> {
        match self {
            Scope::Array => Ok(()),
            Scope::Realms { admin, .. } => Err(forbidden(
                what,
                format!(
                    "Permission denied: admin {admin} is scoped to realms; {what} needs array-wide rights."
                ),
            )),
        }
    }

    /// Whether an admin name is the caller itself (realm-scoped callers see only it).
    pub(crate) fn is_self_or_array(&self, name: &str) -> bool {
        match self {
            Scope::Array => true,
            Scope::Realms { admin, .. } => admin.eq_ignore_ascii_case(name),
        }
    }

    /// The listed names, checked, when a realm-scoped caller names admins.
    pub(crate) fn check_admins(&self, names: &[String]) -> Result<()> {
        for n in names {
            if !self.is_self_or_array(n) {
                return Err(forbidden(n, "Permission denied: not your admin account."));
            }
        }
        Ok(())
    }

    /// Keeps the items inside the scope.
    pub(crate) fn retain<T>(
        &self,
        kind: TagResource,
        items: &mut Vec<T>,
        name: impl Fn(&T) -> &str,
    ) {
        if matches!(self, Scope::Realms { .. }) {
            items.retain(|i| self.reaches(kind, name(i)));
        }
    }
}

impl State {
    fn realm_key(&self, name: &str) -> Result<String> {
        let k = name.to_ascii_lowercase();
        if self.realms.contains_key(&k) {
            Ok(k)
        } else {
            Err(bad(name, "Realm does not exist."))
        }
    }

    /// What `admin` may reach; an unknown admin reaches nothing (401).
    pub(crate) fn scope_of(&self, admin: &str) -> Result<Scope> {
        let rec = self
            .admins
            .get(&admin.to_ascii_lowercase())
            .ok_or_else(|| Error::api(401, None, "Admin no longer exists."))?;
        let rules: Vec<&ManagementAccessRule> = rec
            .policies
            .iter()
            .filter_map(|p| self.access_policies.get(&p.to_ascii_lowercase()))
            .filter(|p| p.enabled)
            .flat_map(|p| p.rules.iter())
            .collect();
        let realm_rules: Vec<&&ManagementAccessRule> = rules
            .iter()
            .filter(|r| r.scope.resource_type.as_deref() == Some(RESOURCE_REALMS))
            .collect();
        if rules.is_empty() || realm_rules.len() < rules.len() {
            // No policies (a classic role) or some array-wide rule: the whole array.
            return Ok(Scope::Array);
        }
        let write = realm_rules.iter().any(|r| {
            ROLES.iter().any(|(n, w)| {
                *w && r
                    .role
                    .name
                    .as_deref()
                    .is_some_and(|x| x.eq_ignore_ascii_case(n))
            })
        });
        Ok(Scope::Realms {
            admin: rec.name.clone(),
            realms: realm_rules
                .iter()
                .filter_map(|r| r.scope.name.as_deref())
                .map(str::to_ascii_lowercase)
                .collect(),
            write,
        })
    }

    /// A pod name's realm must exist and be live before the pod can be created.
    pub(crate) fn check_pod_realm(&self, pod: &PodName) -> Result<()> {
        if let Some(r) = pod.realm() {
            let k = self.realm_key(r)?;
            if self
                .realms
                .get(&k)
                .is_some_and(|r| r.destroyed_at.is_some())
            {
                return Err(bad(pod.as_str(), "Realm is destroyed."));
            }
        }
        Ok(())
    }

    /// Pods inside realm `key` (by name prefix), destroyed ones included.
    fn realm_pods(&self, key: &str) -> Vec<(PodName, bool)> {
        self.pods
            .iter_by_name()
            .filter(|(_, p)| {
                p.name
                    .split_once("::")
                    .is_some_and(|(r, _)| r.eq_ignore_ascii_case(key))
            })
            .filter_map(|(_, p)| {
                PodName::new(p.name.as_str())
                    .ok()
                    .map(|pn| (pn, p.destroyed_at.is_some()))
            })
            .collect()
    }

    fn render_realm(&self, r: &RealmRec, now: u64) -> Realm {
        let key = r.name.to_ascii_lowercase();
        let provisioned: u64 = self
            .volumes
            .iter()
            .filter(|(_, v)| {
                v.name
                    .split_once("::")
                    .is_some_and(|(rn, rest)| rn.eq_ignore_ascii_case(&key) && rest.contains("::"))
            })
            .map(|(_, v)| v.provisioned)
            .sum();
        let mut realm = Realm::default();
        realm.id = Some(r.id.clone());
        realm.name = r.name.clone();
        realm.created = Some(r.created);
        realm.destroyed = r.destroyed_at.is_some();
        realm.eradication_config.manual_eradication = Some("all-enabled".into());
        realm.quota_limit = r.quota_limit;
        realm.space = crate::volume::space_of(provisioned);
        realm.time_remaining = self.time_remaining(r.destroyed_at, now);
        realm
    }

    /// Removes realms whose eradication delay ran out (their pods go by the pods' own
    /// sweep, having been destroyed at the same moment).
    pub(crate) fn sweep_realms(&mut self, now: u64) {
        let delay = self.array.eradication_delay_ms;
        self.realms
            .retain(|_, r| r.destroyed_at.is_none_or(|t| t.saturating_add(delay) > now));
    }

    pub(crate) fn list_realms(
        &self,
        params: &ListParams,
        now: u64,
        scope: &Scope,
    ) -> Result<Vec<Realm>> {
        let mut keys = Vec::new();
        for n in &params.names {
            keys.push(self.realm_key(n)?);
        }
        let mut out: Vec<Realm> = self
            .realms
            .iter()
            .filter(|(k, _)| keys.is_empty() || keys.contains(k))
            .filter(|(_, r)| {
                params
                    .destroyed
                    .is_none_or(|d| d == r.destroyed_at.is_some())
            })
            .filter(|(k, _)| match scope {
                Scope::Array => true,
                Scope::Realms { realms, .. } => realms.contains(k),
            })
            .map(|(_, r)| self.render_realm(r, now))
            .collect();
        if let Some(l) = params.limit {
            out.truncate(l);
        }
        Ok(out)
    }

    pub(crate) fn create_realms(
        &mut self,
        ctx: Ctx,
        names: &[RealmName],
        body: &RealmPost,
    ) -> Result<Vec<Realm>> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        if let Some(q) = body.quota_limit {
            check_size(names[0].as_str(), "quota_limit", q)?;
        }
        if body.qos.as_ref().is_some_and(|q| *q != Qos::default()) {
            return Err(bad("qos", "Realm QoS is not supported by the simulator."));
        }
        let mut seen = std::collections::HashSet::new();
        for n in names {
            if !seen.insert(n.key()) || self.realms.contains_key(&n.key()) {
                return Err(bad(n.as_str(), "Realm already exists."));
            }
        }
        let mut out = Vec::new();
        for n in names {
            let rec = RealmRec {
                id: uuid::Uuid::new_v4().to_string(),
                name: n.as_str().to_string(),
                quota_limit: body.quota_limit,
                created: ctx.now,
                destroyed_at: None,
            };
            out.push(self.render_realm(&rec, ctx.now));
            self.realms.insert(n.key(), rec);
        }
        Ok(out)
    }

    pub(crate) fn patch_realms(
        &mut self,
        ctx: Ctx,
        names: &[RealmName],
        patch: &RealmPatch,
        destroy_contents: bool,
    ) -> Result<Vec<Realm>> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        if patch.name.is_some() {
            return Err(bad(
                "name",
                "Renaming realms is not supported by the simulator.",
            ));
        }
        let mut keys = Vec::new();
        for n in names {
            let k = self.realm_key(n.as_str())?;
            let live_pods: Vec<PodName> = self
                .realm_pods(&k)
                .into_iter()
                .filter(|(_, destroyed)| !destroyed)
                .map(|(p, _)| p)
                .collect();
            if patch.destroyed == Some(true) && !live_pods.is_empty() && !destroy_contents {
                return Err(bad(
                    n.as_str(),
                    "Realm is not empty: destroy its pods first or set destroy_contents.",
                ));
            }
            keys.push((k, live_pods));
        }
        for (k, live_pods) in &keys {
            match patch.destroyed {
                Some(true) => {
                    if !live_pods.is_empty() {
                        let destroy = PodPatch::destroy();
                        self.patch_pods(ctx, live_pods, &destroy, true)?;
                    }
                    if let Some(r) = self.realms.get_mut(k) {
                        r.destroyed_at.get_or_insert(ctx.now);
                    }
                }
                Some(false) => {
                    if let Some(r) = self.realms.get_mut(k) {
                        r.destroyed_at = None;
                    }
                }
                None => {}
            }
        }
        Ok(keys
            .iter()
            .filter_map(|(k, _)| self.realms.get(k))
            .map(|r| self.render_realm(r, ctx.now))
            .collect())
    }

    pub(crate) fn eradicate_realms(
        &mut self,
        ctx: Ctx,
        names: &[RealmName],
        eradicate_contents: bool,
    ) -> Result<()> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        let mut plan = Vec::new();
        for n in names {
            let k = self.realm_key(n.as_str())?;
            if self
                .realms
                .get(&k)
                .is_some_and(|r| r.destroyed_at.is_none())
            {
                return Err(bad(
                    n.as_str(),
                    "Realm must be destroyed before it can be eradicated.",
                ));
            }
            if ctx.safemode {
                return Err(safemode_refusal("realm", n.as_str()));
            }
            let pods: Vec<PodName> = self.realm_pods(&k).into_iter().map(|(p, _)| p).collect();
            if !pods.is_empty() && !eradicate_contents {
                return Err(bad(
                    n.as_str(),
                    "Realm is not empty: eradicate its pods first or set eradicate_contents.",
                ));
            }
            plan.push((k, pods));
        }
        for (k, pods) in plan {
            if !pods.is_empty() {
                self.eradicate_pods(ctx, &pods, true)?;
            }
            self.realms.remove(&k);
        }
        Ok(())
    }

    fn render_policy(p: &PolicyRec) -> ManagementAccessPolicy {
        let mut management_access_policy = ManagementAccessPolicy::default();
        management_access_policy.id = Some(p.id.clone());
        management_access_policy.name = p.name.clone();
        management_access_policy.aggregation_strategy =
            Some(p.aggregation_strategy.as_str().into());
        management_access_policy.enabled = Some(p.enabled);
        management_access_policy.policy_type = Some("management-access".into());
        management_access_policy.rules = p.rules.clone();
        management_access_policy
    }

    pub(crate) fn list_access_policies(
        &self,
        names: &[String],
        scope: &Scope,
    ) -> Result<Vec<ManagementAccessPolicy>> {
        let own: Vec<String> = match scope {
            Scope::Array => Vec::new(),
            Scope::Realms { admin, .. } => self
                .admins
                .get(&admin.to_ascii_lowercase())
                .map(|a| a.policies.iter().map(|p| p.to_ascii_lowercase()).collect())
                .unwrap_or_default(),
        };
        let visible = |k: &String| matches!(scope, Scope::Array) || own.contains(k);
        let mut out = Vec::new();
        if names.is_empty() {
            out.extend(
                self.access_policies
                    .iter()
                    .filter(|(k, _)| visible(k))
                    .map(|(_, p)| Self::render_policy(p)),
            );
        } else {
            for n in names {
                let k = n.to_ascii_lowercase();
                match self.access_policies.get(&k) {
                    Some(p) if visible(&k) => out.push(Self::render_policy(p)),
                    _ => return Err(bad(n, "Policy does not exist.")),
                }
            }
        }
        Ok(out)
    }

    pub(crate) fn create_access_policies(
        &mut self,
        names: &[String],
        body: &ManagementAccessPolicyPost,
    ) -> Result<Vec<ManagementAccessPolicy>> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        let strategy = body
            .aggregation_strategy
            .clone()
            .unwrap_or_else(|| "all-permissions".into());
        if !["all-permissions", "least-common-permissions"].contains(&strategy.as_str()) {
            return Err(bad("aggregation_strategy", "Invalid aggregation_strategy."));
        }
        if body.rules.is_empty() {
            return Err(bad(
                "rules",
                "A management access policy needs at least one rule.",
            ));
        }
        for r in &body.rules {
            let role = r.role.name.as_deref().unwrap_or("");
            if !ROLES.iter().any(|(n, _)| n.eq_ignore_ascii_case(role)) {
                return Err(bad("role", format!("Role {role:?} does not exist.")));
            }
            let name = r.scope.name.as_deref().unwrap_or("");
            match r.scope.resource_type.as_deref() {
                Some(RESOURCE_REALMS) => {
                    self.realm_key(name)?;
                }
                Some("arrays") => {
                    if !name.eq_ignore_ascii_case(&self.array.name) {
                        return Err(bad(name, "Array does not exist."));
                    }
                }
                other => {
                    return Err(bad(
                        "scope",
                        format!("Scope resource_type {other:?} must be realms or arrays."),
                    ));
                }
            }
        }
        for n in names {
            flasharray::name::check_simple(flasharray::name::NameKind::Host, n, false)
                .map_err(|e| bad(n, e.to_string()))?;
            if self.access_policies.contains_key(&n.to_ascii_lowercase()) {
                return Err(bad(n, "Policy already exists."));
            }
        }
        let mut out = Vec::new();
        for n in names {
            let rec = PolicyRec {
                id: uuid::Uuid::new_v4().to_string(),
                name: n.clone(),
                enabled: body.enabled.unwrap_or(true),
                aggregation_strategy: strategy.to_string(),
                rules: body.rules.clone(),
            };
            out.push(Self::render_policy(&rec));
            self.access_policies.insert(n.to_ascii_lowercase(), rec);
        }
        Ok(out)
    }

    pub(crate) fn delete_access_policies(&mut self, names: &[String]) -> Result<()> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        for n in names {
            let k = n.to_ascii_lowercase();
            if !self.access_policies.contains_key(&k) {
                return Err(bad(n, "Policy does not exist."));
            }
            if let Some(a) = self
                .admins
                .values()
                .find(|a| a.policies.iter().any(|p| p.eq_ignore_ascii_case(n)))
            {
                return Err(bad(n, format!("Policy is in use by admin {}.", a.name)));
            }
        }
        for n in names {
            self.access_policies.remove(&n.to_ascii_lowercase());
        }
        Ok(())
    }

    fn render_admin(&self, a: &crate::state::AdminRec) -> Admin {
        let mut admin = Admin::default();
        admin.name = a.name.clone();
        admin.api_token = a.token.as_ref().map(|t| {
            let mut api_token = ApiToken::default();
            api_token.created_at = Some(t.created_at);
            api_token.expires_at = t.expires_at;
            api_token
        });
        admin.is_local = Some(true);
        admin.locked = Some(false);
        admin.management_access_policies = a
            .policies
            .iter()
            .map(|p| ReferenceWithType::management_access_policy(p.clone()))
            .collect();
        admin.role = if a.policies.is_empty() {
            NameRef::new("array_admin")
        } else {
            NameRef::default()
        };
        admin
    }

    pub(crate) fn list_admins(&self, names: &[String], scope: &Scope) -> Result<Vec<Admin>> {
        scope.check_admins(names)?;
        let mut out = Vec::new();
        if names.is_empty() {
            out.extend(
                self.admins
                    .values()
                    .filter(|a| scope.is_self_or_array(&a.name))
                    .map(|a| self.render_admin(a)),
            );
        } else {
            for n in names {
                let a = self
                    .admins
                    .get(&n.to_ascii_lowercase())
                    .ok_or_else(|| bad(n, "Admin does not exist."))?;
                out.push(self.render_admin(a));
            }
        }
        Ok(out)
    }

    pub(crate) fn create_admins(
        &mut self,
        names: &[String],
        body: &AdminPost,
    ) -> Result<Vec<Admin>> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        if body.role.is_some() != body.management_access_policies.is_empty() {
            return Err(bad(
                "management_access_policies",
                "Give either a role or management_access_policies.",
            ));
        }
        if body.role.is_some() {
            return Err(bad(
                "role",
                "Admins with a classic role are not supported by the simulator; use management_access_policies.",
            ));
        }
        let mut policies = Vec::new();
        for r in &body.management_access_policies {
            let n = r.name.as_deref().unwrap_or("");
            let p = self
                .access_policies
                .get(&n.to_ascii_lowercase())
                .ok_or_else(|| bad(n, "Policy does not exist."))?;
            policies.push(p.name.clone());
        }
        for n in names {
            flasharray::name::check_simple(flasharray::name::NameKind::Host, n, false)
                .map_err(|e| bad(n, e.to_string()))?;
            if self.admins.contains_key(&n.to_ascii_lowercase()) {
                return Err(bad(n, "Admin already exists."));
            }
        }
        let mut out = Vec::new();
        for n in names {
            let rec = crate::state::AdminRec {
                name: n.clone(),
                token: None,
                policies: policies.clone(),
            };
            out.push(self.render_admin(&rec));
            self.admins.insert(n.to_ascii_lowercase(), rec);
        }
        Ok(out)
    }

    pub(crate) fn delete_admins(&mut self, names: &[String]) -> Result<()> {
        if names.is_empty() {
            return Err(bad("names", "Invalid request: names must be given."));
        }
        for n in names {
            if n.eq_ignore_ascii_case(crate::state::BUILTIN_ADMIN) {
                return Err(bad(n, "The built-in admin cannot be deleted."));
            }
            if !self.admins.contains_key(&n.to_ascii_lowercase()) {
                return Err(bad(n, "Admin does not exist."));
            }
        }
        for n in names {
            self.admins.remove(&n.to_ascii_lowercase());
        }
        Ok(())
    }
}
