//! `MockArray`: the state behind one lock, the fault switches in front of it, and the
//! `FlashArray` trait on top.
//!
//! Every trait call goes through [`MockArray::call`]: count it, decide its faults,
//! sleep the injected latency (never holding the lock), refuse it if a pre-call fault
//! says so, then run the rules on the state under the lock, after eradicating what
//! the clock says is due.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use flasharray::models::*;
use flasharray::params::*;
use flasharray::{
    Error, FlashArray, HostGroupName, HostName, PodName, RealmName, Result, VolumeName,
};

use crate::clock::MockClock;
use crate::faults::{Faults, Stall, WriteFault, lost_answer};
use crate::op::Op;
use crate::realm::Scope;
use crate::state::{Ctx, MockState, State};
use crate::stats::CallStats;

/// An in-memory FlashArray with the real array's rules. Clones share one array.
#[derive(Clone)]
pub struct MockArray {
    inner: Arc<Inner>,
    /// The admin calling, for realm enforcement; `None` is the array's own view
    /// (or, in the simulator, the session's admin).
    caller: Option<Arc<str>>,
}

tokio::task_local! {
    /// The admin of the simulator session a request runs for; set by the simulator
    /// around each request ([`MockArray::calling_as`]) so that the one shared
    /// `MockArray` knows who is calling.
    static SESSION_CALLER: Arc<str>;
}

struct Inner {
    state: Mutex<State>,
    clock: MockClock,
    faults: Faults,
    stats: Mutex<CallStats>,
    /// Successful writes so far; see [`MockArray::generation`].
    generation: AtomicU64,
    /// The newest REST 2.x minor version the array answers as, [`NO_REST_TOP`]
    /// for the simulator's newest; see [`MockArray::rest_version`].
    rest_top: AtomicU32,
}

impl std::fmt::Debug for MockArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        f.debug_struct("MockArray")
            .field("name", &s.array.name)
            .field("id", &s.array.id)
            .field("volumes", &s.volumes.len())
            .field("hosts", &s.hosts.len())
            .field("host_groups", &s.host_groups.len())
            .field("pods", &s.pods.len())
            .field("connections", &s.connections.map.len())
            .finish_non_exhaustive()
    }
}

/// [`Inner::rest_top`] when no version was set.
const NO_REST_TOP: u32 = u32::MAX;

impl MockArray {
    /// The array over a built state; see [`crate::MockArrayBuilder`].
    pub(crate) fn from_parts(
        state: State,
        clock: MockClock,
        faults: Faults,
        rest_top: Option<u32>,
    ) -> MockArray {
        MockArray {
            inner: Arc::new(Inner {
                state: Mutex::new(state),
                clock,
                faults,
                stats: Mutex::new(CallStats::default()),
                generation: AtomicU64::new(0),
                rest_top: AtomicU32::new(rest_top.unwrap_or(NO_REST_TOP)),
            }),
            caller: None,
        }
    }

    /// The array's clock; advance it to make eradication delays pass.
    pub fn clock(&self) -> &MockClock {
        &self.inner.clock
    }

    /// Runtime fault injection.
    pub fn faults(&self) -> &Faults {
        &self.inner.faults
    }

    /// Calls made so far.
    pub fn stats(&self) -> CallStats {
        lock(&self.inner.stats).clone()
    }

    /// The newest REST 2.x minor version this array answers as
    /// ([`crate::MockArrayBuilder::rest_version`]): the simulator advertises 1.x and
    /// 2.0 to `2.N` and serves each endpoint and field only from the version that
    /// introduced it. `None`: the simulator's newest
    /// (`flasharray_sim::TOP_REST_VERSION`).
    pub fn rest_version(&self) -> Option<u32> {
        let top = self.inner.rest_top.load(Ordering::SeqCst);
        (top != NO_REST_TOP).then_some(top)
    }

    /// Sets [`MockArray::rest_version`] on an array already made (one loaded from a
    /// saved state: `pxfa --array sim --rest-version`); a simulator reads it when it
    /// starts.
    pub fn set_rest_version(&self, minor: u32) {
        self.inner.rest_top.store(minor, Ordering::SeqCst);
    }

    /// How many writes have changed the array so far. Refused writes and reads
    /// leave it alone, so a caller that remembers it can tell whether there is
    /// anything new to save (`--sim-state` is rewritten only then).
    pub fn generation(&self) -> u64 {
        self.inner.generation.load(Ordering::SeqCst)
    }

    /// Counts a write made outside the trait (the simulator's admin and array
    /// settings calls), after it was applied, so that [`MockArray::generation`]
    /// (and the simulator's state file) sees it.
    pub(crate) fn changed(&self) {
        self.inner.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Starts counting calls from zero.
    pub fn reset_stats(&self) {
        *lock(&self.inner.stats) = CallStats::default();
    }

    /// Adds an admin user that may own an API token (no-op if it exists).
    pub fn add_admin(&self, name: &str) {
        self.lock().add_admin(name);
    }

    /// The admin owning `token`, if the token exists and has not expired. The
    /// simulator's login uses it; comparing here keeps the tokens inside the state.
    pub fn api_token_owner(&self, token: &str) -> Option<String> {
        let now = self.inner.clock.now_ms();
        self.lock().token_owner(token, now)
    }

    /// The whole state (objects, tags, LUNs, tokens, clock) for saving as JSON.
    pub fn snapshot(&self) -> MockState {
        let mut s = self.lock().clone();
        s.clock = Some(self.inner.clock.snapshot());
        MockState { inner: s }
    }

    /// Replaces the whole state with a snapshot (and puts the clock back).
    pub fn restore(&self, state: MockState) {
        let mut s = state.inner;
        s.rebuild_indexes();
        s.sweep_due = 0;
        if let Some(c) = s.clock {
            self.inner.clock.restore(c);
        }
        *self.lock() = s;
        self.inner.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The same array seen by `admin`: an admin scoped to realms by its management
    /// access policies sees and changes only objects inside them (see `realm`); any
    /// other admin sees everything. An admin that does not exist (any more) is
    /// refused on every call.
    pub fn scoped(&self, admin: &str) -> MockArray {
        MockArray {
            inner: Arc::clone(&self.inner),
            caller: Some(Arc::from(admin)),
        }
    }

    /// Whether the caller may act on the whole array (no realm-scoped view); an
    /// unknown admin may not.
    pub fn caller_is_array_wide(&self) -> bool {
        match self.caller() {
            None => true,
            Some(admin) => matches!(self.lock().scope_of(&admin), Ok(Scope::Array)),
        }
    }

    /// Runs `f` with `admin` as the caller of every view without an admin of its own
    /// ([`MockArray::scoped`] views keep theirs): the simulator runs each request
    /// of a session this way, so that the one shared array it serves applies the
    /// session admin's realm scope.
    pub async fn calling_as<F: std::future::Future>(admin: &str, f: F) -> F::Output {
        SESSION_CALLER.scope(Arc::from(admin), f).await
    }

    /// Who is calling: the scoped view's admin, else the simulator session's.
    fn caller(&self) -> Option<Arc<str>> {
        if let Some(c) = &self.caller {
            return Some(Arc::clone(c));
        }
        if let Ok(c) = SESSION_CALLER.try_with(Arc::clone) {
            return Some(c);
        }
        None
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.inner.state)
    }

    /// Runs one trait call: stats, faults, latency, then `f` under the lock.
    async fn call<T>(
        &self,
        op: Op,
        f: impl FnOnce(&mut State, Ctx, &Scope) -> Result<T>,
    ) -> Result<T> {
        lock(&self.inner.stats).record(op);
        let faults = self.inner.faults.on_call(op);
        if faults.stall == Stall::Before {
            return std::future::pending().await;
        }
        if !faults.latency.is_zero() {
            tokio::time::sleep(faults.latency).await;
        }
        // Polled, not notified: a held call is a test's rare, seconds-long wait.
        while self.inner.faults.holds(op) {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        if let Some(e) = faults.refuse {
            return Err(e);
        }
        if faults.write == WriteFault::Dropped {
            return Err(lost_answer(op, true));
        }
        let ctx = Ctx {
            now: self.inner.clock.now_ms(),
            safemode: self.inner.faults.safemode(),
        };
        let result = {
            let mut s = self.lock();
            s.sweep(ctx.now);
            s.sweep_realms(ctx.now);
            let r = match self.caller() {
                None => f(&mut s, ctx, &Scope::Array),
                Some(admin) => s.scope_of(&admin).and_then(|sc| f(&mut s, ctx, &sc)),
            };
            if r.is_ok() && op.is_write() {
                self.inner.generation.fetch_add(1, Ordering::SeqCst);
            }
            r
        };
        if faults.stall == Stall::AfterEffect {
            // The lock is released: the write is visible, its caller never hears.
            return std::future::pending().await;
        }
        if faults.write == WriteFault::AnswerLost {
            return Err(lost_answer(op, false));
        }
        result.map_err(|e| match e {
            Error::Api(mut a) => {
                if a.operation.is_empty() {
                    a.operation = op.request().to_string();
                }
                Error::Api(a)
            }
            other => other,
        })
    }
}

/// Locks a mutex, ignoring poisoning: every rule validates before it mutates, so a
/// panic cannot leave half-applied state behind.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[async_trait]
impl FlashArray for MockArray {
    async fn list_volumes(&self, params: &ListParams) -> Result<Vec<Volume>> {
        self.call(Op::ListVolumes, |s, c, sc| {
            sc.check(V, params.names.iter().map(String::as_str))?;
            let mut out = s.list_volumes(params, c.now)?;
            sc.retain(V, &mut out, |v| &v.name);
            Ok(out)
        })
        .await
    }

    async fn create_volumes(&self, names: &[VolumeName], body: &VolumePost) -> Result<Vec<Volume>> {
        self.call(Op::CreateVolumes, |s, c, sc| {
            sc.check_write("volumes")?;
            sc.check(V, names.iter().map(VolumeName::as_str))?;
            sc.check(V, body.source.iter().filter_map(|r| r.name.as_deref()))?;
            s.create_volumes(c, names, body)
        })
        .await
    }

    async fn create_volumes_batch(&self, items: &[VolumeBatchPost]) -> Result<Vec<Volume>> {
        self.call(Op::CreateVolumesBatch, |s, c, sc| {
            sc.check_write("volumes")?;
            sc.check(V, items.iter().map(|i| i.name.as_str()))?;
            s.create_volumes_batch(c, items)
        })
        .await
    }

    async fn patch_volumes(
        &self,
        names: &[VolumeName],
        patch: &VolumePatch,
        truncate: bool,
    ) -> Result<Vec<Volume>> {
        self.call(Op::PatchVolumes, |s, c, sc| {
            sc.check_write("volumes")?;
            sc.check(V, names.iter().map(VolumeName::as_str))?;
            sc.check(V, patch.name.as_deref())?;
            if let Some(pod) = patch.pod.as_ref() {
                sc.check(P, pod.name.as_deref().filter(|p| !p.is_empty()))?;
                if pod.name.as_deref().is_none_or(str::is_empty) {
                    sc.array_only("moving volumes out of a pod")?;
                }
            }
            s.patch_volumes(c, names, patch, truncate)
        })
        .await
    }

    async fn eradicate_volumes(&self, names: &[VolumeName]) -> Result<()> {
        self.call(Op::EradicateVolumes, |s, c, sc| {
            sc.check_write("volumes")?;
            sc.check(V, names.iter().map(VolumeName::as_str))?;
            s.eradicate_volumes(c, names)
        })
        .await
    }

    async fn list_tags(&self, kind: TagResource, params: &TagParams) -> Result<Vec<Tag>> {
        self.call(Op::ListTags, |s, _, sc| {
            let mut out = s.list_tags(kind, params)?;
            sc.retain(kind, &mut out, |t| t.resource.name.as_deref().unwrap_or(""));
            Ok(out)
        })
        .await
    }

    async fn set_tags(&self, kind: TagResource, tags: &[Tag]) -> Result<Vec<Tag>> {
        self.call(Op::SetTags, |s, _, sc| {
            sc.check_write("tags")?;
            sc.check(
                kind,
                tags.iter()
                    .map(|t| t.resource.name.as_deref().unwrap_or("")),
            )?;
            s.set_tags(kind, tags)
        })
        .await
    }

    async fn delete_tags(
        &self,
        kind: TagResource,
        resource_names: &[String],
        keys: &[String],
        namespaces: &[String],
    ) -> Result<()> {
        self.call(Op::DeleteTags, |s, _, sc| {
            sc.check_write("tags")?;
            if resource_names.is_empty() {
                sc.array_only("deleting tags without resource_names")?;
            }
            sc.check(kind, resource_names.iter().map(String::as_str))?;
            s.delete_tags(kind, resource_names, keys, namespaces)
        })
        .await
    }

    async fn list_hosts(&self, params: &ListParams) -> Result<Vec<Host>> {
        self.call(Op::ListHosts, |s, _, sc| {
            sc.check(H, params.names.iter().map(String::as_str))?;
            let mut out = s.list_hosts(params)?;
            sc.retain(H, &mut out, |h| &h.name);
            Ok(out)
        })
        .await
    }

    async fn create_hosts(&self, names: &[HostName], body: &HostPost) -> Result<Vec<Host>> {
        self.call(Op::CreateHosts, |s, _, sc| {
            sc.array_only("hosts")?;
            s.create_hosts(names, body)
        })
        .await
    }

    async fn patch_hosts(&self, names: &[HostName], patch: &HostPatch) -> Result<Vec<Host>> {
        self.call(Op::PatchHosts, |s, _, sc| {
            sc.array_only("hosts")?;
            s.patch_hosts(names, patch)
        })
        .await
    }

    async fn delete_hosts(&self, names: &[HostName]) -> Result<()> {
        self.call(Op::DeleteHosts, |s, _, sc| {
            sc.array_only("hosts")?;
            s.delete_hosts(names)
        })
        .await
    }

    async fn list_host_groups(&self, params: &ListParams) -> Result<Vec<HostGroup>> {
        self.call(Op::ListHostGroups, |s, _, sc| {
            sc.check(HG, params.names.iter().map(String::as_str))?;
            let mut out = s.list_host_groups(params)?;
            sc.retain(HG, &mut out, |g| &g.name);
            Ok(out)
        })
        .await
    }

    async fn create_host_groups(
        &self,
        names: &[HostGroupName],
        body: &HostGroupPost,
    ) -> Result<Vec<HostGroup>> {
        self.call(Op::CreateHostGroups, |s, _, sc| {
            sc.array_only("host groups")?;
            s.create_host_groups(names, body)
        })
        .await
    }

    async fn delete_host_groups(&self, names: &[HostGroupName]) -> Result<()> {
        self.call(Op::DeleteHostGroups, |s, _, sc| {
            sc.array_only("host groups")?;
            s.delete_host_groups(names)
        })
        .await
    }

    async fn list_host_group_members(&self, params: &MemberParams) -> Result<Vec<Member>> {
        self.call(Op::ListHostGroupMembers, |s, _, sc| {
            sc.array_only("host group members")?;
            s.list_host_group_members(params)
        })
        .await
    }

    async fn add_host_group_members(
        &self,
        group: &HostGroupName,
        hosts: &[HostName],
    ) -> Result<Vec<Member>> {
        self.call(Op::AddHostGroupMembers, |s, _, sc| {
            sc.array_only("host group members")?;
            s.add_host_group_members(group, hosts)
        })
        .await
    }

    async fn remove_host_group_members(
        &self,
        group: &HostGroupName,
        hosts: &[HostName],
    ) -> Result<()> {
        self.call(Op::RemoveHostGroupMembers, |s, _, sc| {
            sc.array_only("host group members")?;
            s.remove_host_group_members(group, hosts)
        })
        .await
    }

    async fn list_connections(&self, params: &ConnectionParams) -> Result<Vec<Connection>> {
        self.call(Op::ListConnections, |s, _, sc| {
            let mut out = s.list_connections(params)?;
            sc.retain(V, &mut out, |c| c.volume.name.as_deref().unwrap_or(""));
            Ok(out)
        })
        .await
    }

    async fn create_connections(
        &self,
        target: &ConnectionTarget,
        volumes: &[VolumeName],
        lun: Option<u32>,
    ) -> Result<Vec<Connection>> {
        self.call(Op::CreateConnections, |s, _, sc| {
            sc.array_only("connections to hosts outside the realm")?;
            s.create_connections(target, volumes, lun)
        })
        .await
    }

    async fn delete_connections(
        &self,
        target: &ConnectionTarget,
        volumes: &[VolumeName],
    ) -> Result<()> {
        self.call(Op::DeleteConnections, |s, _, sc| {
            sc.array_only("connections to hosts outside the realm")?;
            s.delete_connections(target, volumes)
        })
        .await
    }

    async fn list_pods(&self, params: &ListParams) -> Result<Vec<Pod>> {
        self.call(Op::ListPods, |s, c, sc| {
            sc.check(P, params.names.iter().map(String::as_str))?;
            let mut out = s.list_pods(params, c.now)?;
            sc.retain(P, &mut out, |p| &p.name);
            Ok(out)
        })
        .await
    }

    async fn create_pods(&self, names: &[PodName], body: &PodPost) -> Result<Vec<Pod>> {
        self.call(Op::CreatePods, |s, c, sc| {
            sc.check_write("pods")?;
            sc.check(P, names.iter().map(PodName::as_str))?;
            s.create_pods(c, names, body)
        })
        .await
    }

    async fn patch_pods(
        &self,
        names: &[PodName],
        patch: &PodPatch,
        destroy_contents: bool,
    ) -> Result<Vec<Pod>> {
        self.call(Op::PatchPods, |s, c, sc| {
            sc.check_write("pods")?;
            sc.check(P, names.iter().map(PodName::as_str))?;
            sc.check(P, patch.name.as_deref())?;
            s.patch_pods(c, names, patch, destroy_contents)
        })
        .await
    }

    async fn eradicate_pods(&self, names: &[PodName], eradicate_contents: bool) -> Result<()> {
        self.call(Op::EradicatePods, |s, c, sc| {
            sc.check_write("pods")?;
            sc.check(P, names.iter().map(PodName::as_str))?;
            s.eradicate_pods(c, names, eradicate_contents)
        })
        .await
    }

    async fn list_pod_arrays(&self, pods: &[PodName]) -> Result<Vec<Member>> {
        self.call(Op::ListPodArrays, |s, _, sc| {
            sc.check(P, pods.iter().map(PodName::as_str))?;
            if pods.is_empty() {
                sc.array_only("listing every pod's arrays")?;
            }
            s.list_pod_arrays(pods)
        })
        .await
    }

    async fn get_array(&self) -> Result<ArrayInfo> {
        self.call(Op::GetArray, |s, c, _| Ok(s.array_info(c))).await
    }

    async fn get_array_space(&self) -> Result<ArraySpace> {
        self.call(Op::GetArraySpace, |s, c, _| Ok(s.array_space(c.now)))
            .await
    }

    async fn list_api_tokens(&self, admins: &[String], expose: bool) -> Result<Vec<AdminApiToken>> {
        let expose = expose && !self.faults().withholds_token_values();
        self.call(Op::ListApiTokens, |s, _, sc| {
            sc.check_admins(admins)?;
            let mut out = s.list_api_tokens(admins, expose)?;
            out.retain(|t| sc.is_self_or_array(&t.name));
            Ok(out)
        })
        .await
    }

    async fn create_api_token(
        &self,
        admin: &str,
        timeout: Option<Duration>,
    ) -> Result<AdminApiToken> {
        self.call(Op::CreateApiToken, |s, c, sc| {
            sc.check_admins(&[admin.to_string()])?;
            s.create_api_token(c.now, admin, timeout)
        })
        .await
    }

    async fn delete_api_token(&self, admin: &str) -> Result<()> {
        self.call(Op::DeleteApiToken, |s, _, sc| {
            sc.check_admins(&[admin.to_string()])?;
            s.delete_api_token(admin)
        })
        .await
    }

    async fn list_realms(&self, params: &ListParams) -> Result<Vec<Realm>> {
        self.call(Op::ListRealms, |s, c, sc| s.list_realms(params, c.now, sc))
            .await
    }

    async fn create_realms(&self, names: &[RealmName], body: &RealmPost) -> Result<Vec<Realm>> {
        self.call(Op::CreateRealms, |s, c, sc| {
            sc.array_only("realms")?;
            s.create_realms(c, names, body)
        })
        .await
    }

    async fn patch_realms(
        &self,
        names: &[RealmName],
        patch: &RealmPatch,
        destroy_contents: bool,
    ) -> Result<Vec<Realm>> {
        self.call(Op::PatchRealms, |s, c, sc| {
            sc.array_only("realms")?;
            s.patch_realms(c, names, patch, destroy_contents)
        })
        .await
    }

    async fn eradicate_realms(&self, names: &[RealmName], eradicate_contents: bool) -> Result<()> {
        self.call(Op::EradicateRealms, |s, c, sc| {
            sc.array_only("realms")?;
            s.eradicate_realms(c, names, eradicate_contents)
        })
        .await
    }

    async fn list_management_access_policies(
        &self,
        names: &[String],
    ) -> Result<Vec<ManagementAccessPolicy>> {
        self.call(Op::ListManagementAccessPolicies, |s, _, sc| {
            s.list_access_policies(names, sc)
        })
        .await
    }

    async fn create_management_access_policies(
        &self,
        names: &[String],
        body: &ManagementAccessPolicyPost,
    ) -> Result<Vec<ManagementAccessPolicy>> {
        self.call(Op::CreateManagementAccessPolicies, |s, _, sc| {
            sc.array_only("management access policies")?;
            s.create_access_policies(names, body)
        })
        .await
    }

    async fn delete_management_access_policies(&self, names: &[String]) -> Result<()> {
        self.call(Op::DeleteManagementAccessPolicies, |s, _, sc| {
            sc.array_only("management access policies")?;
            s.delete_access_policies(names)
        })
        .await
    }

    async fn list_admins(&self, names: &[String]) -> Result<Vec<Admin>> {
        self.call(Op::ListAdmins, |s, _, sc| s.list_admins(names, sc))
            .await
    }

    async fn create_admins(&self, names: &[String], body: &AdminPost) -> Result<Vec<Admin>> {
        self.call(Op::CreateAdmins, |s, _, sc| {
            sc.array_only("admins")?;
            s.create_admins(names, body)
        })
        .await
    }

    async fn delete_admins(&self, names: &[String]) -> Result<()> {
        self.call(Op::DeleteAdmins, |s, _, sc| {
            sc.array_only("admins")?;
            s.delete_admins(names)
        })
        .await
    }

    /// The version set with [`crate::MockArrayBuilder::rest_version`], so that
    /// callers refuse what an array of that version lacks (realms before 2.36) as
    /// they would over REST; `None` (every feature) otherwise.
    async fn rest_minor_version(&self) -> Result<Option<u32>> {
        Ok(self.rest_version())
    }
}

const V: TagResource = TagResource::Volume;
const P: TagResource = TagResource::Pod;
const H: TagResource = TagResource::Host;
const HG: TagResource = TagResource::HostGroup;

impl State {
    /// Bytes provisioned by every volume, destroyed ones included.
    fn total_provisioned(&self) -> u64 {
        self.volumes.iter().map(|(_, v)| v.provisioned).sum()
    }

    /// Bytes written to every volume, destroyed ones included (they hold their data
    /// until eradicated).
    fn total_written(&self) -> u64 {
        self.volumes.iter().map(|(_, v)| v.written).sum()
    }

    fn array_info(&self, ctx: Ctx) -> ArrayInfo {
        let mut array_info = ArrayInfo::default();
        array_info.id = Some(self.array.id.clone());
        array_info.name = self.array.name.clone();
        array_info.os = Some("Purity//FA".into());
        array_info.version = Some(self.array.version.clone());
        array_info.banner = Some(String::new());
        array_info.capacity = Some(self.array.capacity);
        array_info.parity = Some(1.0);
        array_info.space =
            crate::volume::space_used(self.total_provisioned(), self.total_written());
        array_info.idle_timeout = Some(1_800_000);
        array_info.scsi_timeout = Some(60_000);
        array_info.console_lock_enabled = Some(false);
        array_info.eradication_config.eradication_delay = Some(self.array.eradication_delay_ms);
        array_info.eradication_config.manual_eradication = Some(if ctx.safemode {
            flasharray::models::ManualEradication::PartiallyDisabled
        } else {
            flasharray::models::ManualEradication::AllEnabled
        });
        array_info
    }

    fn array_space(&self, now: u64) -> ArraySpace {
        let mut array_space = ArraySpace::default();
        array_space.id = Some(self.array.id.clone());
        array_space.name = self.array.name.clone();
        array_space.capacity = self.array.capacity;
        array_space.parity = Some(1.0);
        array_space.space =
            crate::volume::space_used(self.total_provisioned(), self.total_written());
        array_space.time = Some(now);
        array_space
    }
}
