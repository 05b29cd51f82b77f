//! The `FlashArray` trait: the one seam between pxfa and an array.
//!
//! Implemented by the REST client (`rest::RestArray`) and by
//! `flasharray_mock::MockArray`. Methods follow the REST API one to one, accept
//! several names where the API does (so callers can batch), and return the typed
//! models. List calls return every matching item; [`FlashArray::volume_stream`] yields
//! them page by page for very large arrays.
//!
//! The method list is written once, in [`for_each_method!`](crate::for_each_method):
//! the trait, the `Arc`/`Box` forwarders here, [`crate::Settling`], the controller's
//! metering wrapper and the mock's `Op` are expanded from it, and
//! [`crate::forwarding`] checks that a wrapper forwards every method.

use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use futures_util::stream::{self, BoxStream, StreamExt};

use signature::*;

/// A shared handle to any array, real or simulated.
pub type DynFlashArray = Arc<dyn FlashArray>;

/// The items of a listing, one at a time ([`FlashArray::volume_stream`]).
pub type ItemStream<'a, T> = BoxStream<'a, Result<T>>;

/// Every type the method signatures name, for modules that expand
/// [`for_each_method!`](crate::for_each_method): `use flasharray::array::signature::*;`.
pub mod signature {
    pub use std::time::Duration;

    pub use super::{FlashArray, ItemStream};
    pub use crate::error::Result;
    pub use crate::models::*;
    pub use crate::name::{HostGroupName, HostName, PodName, RealmName, VolumeName};
    pub use crate::params::*;
}

/// The items of one list call as a stream: the default of
/// [`FlashArray::volume_stream`] for arrays that do not page.
pub fn stream_of<'a, T: Send + 'a>(
    list: impl Future<Output = Result<Vec<T>>> + Send + 'a,
) -> ItemStream<'a, T> {
    stream::once(list)
        .flat_map(|r| match r {
            Ok(v) => stream::iter(v.into_iter().map(Ok)).boxed(),
            Err(e) => stream::iter([Err(e)]).boxed(),
        })
        .boxed()
}

/// The one list of the [`FlashArray`] methods: calls `$callback!` with every method,
/// so that the trait, its forwarders (`Arc`, `Box`, [`crate::Settling`], the
/// controller's `Metered`), the mock's `Op` and the forwarding check are derived from
/// it and cannot drift apart. A new method is added here and nowhere else but in the
/// implementations.
///
/// `for_each_method!(callback, extra...)` expands to `callback! { [extra...] calls {..}
/// streams {..} session {..} }`: the callback's own tokens first (a wrapper's name,
/// say), then three sections:
///
/// * `calls { $( #[doc] kind Op "REQUEST" fn name(arg: Type, ...) -> Output; )* }`:
///   one REST call each (`kind` is `read` or `write`, `Op` names the call as a value,
///   `REQUEST` is `METHOD /path`); the method is
///   `async fn name(&self, ...) -> Result<Output>`;
/// * `streams { $( #[doc] fn name(&self, arg: Type, ...) -> Item { default } )* }`:
///   `fn name(&self, ...) -> ItemStream<'_, Item>` with a provided body;
/// * `session { $( #[doc] fn name(&self) -> Output { default } )* }`:
///   `async fn name(&self) -> Result<Output>` with a provided body.
///
/// The signatures name their types unqualified: expand the table where
/// `use flasharray::array::signature::*;` is in scope.
///
/// ```
/// use flasharray::array::signature::*;
///
/// macro_rules! names {
///     (
///         [$($extra:tt)*]
///         calls { $($(#[$cm:meta])* $kind:ident $op:ident $request:literal
///             fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)* }
///         streams { $($(#[$sm:meta])* fn $sname:ident(&$sself:ident $(, $sarg:ident: $sty:ty)*)
///             -> $sret:ty $sbody:block)* }
///         session { $($(#[$pm:meta])* fn $pname:ident(&$pself:ident) -> $pret:ty $pbody:block)* }
///     ) => {
///         const CALLS: &[&str] = &[$(stringify!($name)),*];
///     };
/// }
/// flasharray::for_each_method!(names);
/// assert_eq!(CALLS[0], "list_volumes");
/// assert!(CALLS.contains(&"create_api_token"));
/// ```
#[macro_export]
macro_rules! for_each_method {
    ($callback:ident $(, $($extra:tt)*)?) => {
        $callback! {
            [$($($extra)*)?]
            calls {
                // ---------------------------------------------------------- volumes

                /// `GET /volumes`.
                read ListVolumes "GET /volumes"
                fn list_volumes(params: &ListParams) -> Vec<Volume>;

                /// `POST /volumes?names=...`: creates every name with the same body, in one
                /// call. `body.tags` are on every created volume before anyone can see it
                /// (REST 2.39+; older arrays need a second call, see `rest::RestArray`).
                write CreateVolumes "POST /volumes"
                fn create_volumes(names: &[VolumeName], body: &VolumePost) -> Vec<Volume>;

                /// `POST /volumes/batch` (REST 2.32+): creates volumes of different sizes,
                /// each with its own tags, in one call, answered in request order. Items are
                /// checked together (names, sizes, duplicates, quotas) before anything is
                /// made. Older arrays reach the same end state through `POST /volumes` per
                /// size and `PUT /volumes/tags/batch` (see `rest::RestArray`).
                write CreateVolumesBatch "POST /volumes/batch"
                fn create_volumes_batch(items: &[VolumeBatchPost]) -> Vec<Volume>;

                /// `PATCH /volumes?names=...`: resize (`truncate` to shrink), rename,
                /// destroy, recover, move.
                write PatchVolumes "PATCH /volumes"
                fn patch_volumes(
                    names: &[VolumeName],
                    patch: &VolumePatch,
                    truncate: bool
                ) -> Vec<Volume>;

                /// `DELETE /volumes?names=...`: eradicates destroyed volumes.
                write EradicateVolumes "DELETE /volumes"
                fn eradicate_volumes(names: &[VolumeName]) -> ();

                // ------------------------------------------------------------- tags

                /// `GET /{kind}/tags`.
                read ListTags "GET /tags"
                fn list_tags(kind: TagResource, params: &TagParams) -> Vec<Tag>;

                /// `PUT /{kind}/tags/batch`: sets (adds or overwrites) tags on several
                /// objects.
                write SetTags "PUT /tags/batch"
                fn set_tags(kind: TagResource, tags: &[Tag]) -> Vec<Tag>;

                /// `DELETE /{kind}/tags?resource_names=...&keys=...&namespaces=...`.
                write DeleteTags "DELETE /tags"
                fn delete_tags(
                    kind: TagResource,
                    resource_names: &[String],
                    keys: &[String],
                    namespaces: &[String]
                ) -> ();

                // ------------------------------------------------------------ hosts

                /// `GET /hosts`.
                read ListHosts "GET /hosts"
                fn list_hosts(params: &ListParams) -> Vec<Host>;

                /// `POST /hosts?names=...`.
                write CreateHosts "POST /hosts"
                fn create_hosts(names: &[HostName], body: &HostPost) -> Vec<Host>;

                /// `PATCH /hosts?names=...`: initiators, host group, personality, rename.
                write PatchHosts "PATCH /hosts"
                fn patch_hosts(names: &[HostName], patch: &HostPatch) -> Vec<Host>;

                /// `DELETE /hosts?names=...`; refused while a host has connections.
                write DeleteHosts "DELETE /hosts"
                fn delete_hosts(names: &[HostName]) -> ();

                // ------------------------------------------------------ host groups

                /// `GET /host-groups`.
                read ListHostGroups "GET /host-groups"
                fn list_host_groups(params: &ListParams) -> Vec<HostGroup>;

                /// `POST /host-groups?names=...`; `body` carries the creation tags.
                write CreateHostGroups "POST /host-groups"
                fn create_host_groups(
                    names: &[HostGroupName],
                    body: &HostGroupPost
                ) -> Vec<HostGroup>;

                /// `DELETE /host-groups?names=...`; refused while a group has members or
                /// connections.
                write DeleteHostGroups "DELETE /host-groups"
                fn delete_host_groups(names: &[HostGroupName]) -> ();

                /// `GET /host-groups/hosts`.
                read ListHostGroupMembers "GET /host-groups/hosts"
                fn list_host_group_members(params: &MemberParams) -> Vec<Member>;

                /// `POST /host-groups/hosts?group_names=g&member_names=h1,h2`.
                write AddHostGroupMembers "POST /host-groups/hosts"
                fn add_host_group_members(group: &HostGroupName, hosts: &[HostName]) -> Vec<Member>;

                /// `DELETE /host-groups/hosts?group_names=g&member_names=h1,h2`.
                write RemoveHostGroupMembers "DELETE /host-groups/hosts"
                fn remove_host_group_members(group: &HostGroupName, hosts: &[HostName]) -> ();

                // ------------------------------------------------------ connections

                /// `GET /connections`: one row per host that sees a volume.
                read ListConnections "GET /connections"
                fn list_connections(params: &ConnectionParams) -> Vec<Connection>;

                /// `POST /connections`: connects several volumes to one host or host group.
                /// `lun` (1–4095) only makes sense with a single volume.
                write CreateConnections "POST /connections"
                fn create_connections(
                    target: &ConnectionTarget,
                    volumes: &[VolumeName],
                    lun: Option<u32>
                ) -> Vec<Connection>;

                /// `DELETE /connections`.
                write DeleteConnections "DELETE /connections"
                fn delete_connections(target: &ConnectionTarget, volumes: &[VolumeName]) -> ();

                // ------------------------------------------------------------- pods

                /// `GET /pods`.
                read ListPods "GET /pods"
                fn list_pods(params: &ListParams) -> Vec<Pod>;

                /// `POST /pods?names=...`.
                write CreatePods "POST /pods"
                fn create_pods(names: &[PodName], body: &PodPost) -> Vec<Pod>;

                /// `PATCH /pods?names=...`: destroy (refused while not empty unless
                /// `destroy_contents`), recover, quota, rename.
                write PatchPods "PATCH /pods"
                fn patch_pods(
                    names: &[PodName],
                    patch: &PodPatch,
                    destroy_contents: bool
                ) -> Vec<Pod>;

                /// `DELETE /pods?names=...`: eradicates destroyed pods.
                write EradicatePods "DELETE /pods"
                fn eradicate_pods(names: &[PodName], eradicate_contents: bool) -> ();

                /// `GET /pods/arrays`.
                read ListPodArrays "GET /pods/arrays"
                fn list_pod_arrays(pods: &[PodName]) -> Vec<Member>;

                // ------------------------------------------------------------ array

                /// `GET /arrays`.
                read GetArray "GET /arrays"
                fn get_array() -> ArrayInfo;

                /// `GET /arrays/space`.
                read GetArraySpace "GET /arrays/space"
                fn get_array_space() -> ArraySpace;

                // ----------------------------------------------------------- tokens

                /// `GET /admins/api-tokens?names=...`; `expose` asks for the token values.
                read ListApiTokens "GET /admins/api-tokens"
                fn list_api_tokens(admins: &[String], expose: bool) -> Vec<AdminApiToken>;

                /// `POST /admins/api-tokens?names=admin&timeout=ms`: the answer holds the
                /// new token.
                write CreateApiToken "POST /admins/api-tokens"
                fn create_api_token(admin: &str, timeout: Option<Duration>) -> AdminApiToken;

                /// `DELETE /admins/api-tokens?names=admin`.
                write DeleteApiToken "DELETE /admins/api-tokens"
                fn delete_api_token(admin: &str) -> ();

                // ----------------------------------------- realms and their users

                /// `GET /realms` (REST 2.36+).
                read ListRealms "GET /realms"
                fn list_realms(params: &ListParams) -> Vec<Realm>;

                /// `POST /realms?names=...`.
                write CreateRealms "POST /realms"
                fn create_realms(names: &[RealmName], body: &RealmPost) -> Vec<Realm>;

                /// `PATCH /realms?names=...`: destroy (refused while it holds live pods
                /// unless `destroy_contents`), recover, rename.
                write PatchRealms "PATCH /realms"
                fn patch_realms(
                    names: &[RealmName],
                    patch: &RealmPatch,
                    destroy_contents: bool
                ) -> Vec<Realm>;

                /// `DELETE /realms?names=...`: eradicates destroyed realms.
                write EradicateRealms "DELETE /realms"
                fn eradicate_realms(names: &[RealmName], eradicate_contents: bool) -> ();

                /// `GET /policies/management-access?names=...` (all when `names` is empty).
                read ListManagementAccessPolicies "GET /policies/management-access"
                fn list_management_access_policies(names: &[String]) -> Vec<ManagementAccessPolicy>;

                /// `POST /policies/management-access?names=...`: a role within a scope (a
                /// realm).
                write CreateManagementAccessPolicies "POST /policies/management-access"
                fn create_management_access_policies(
                    names: &[String],
                    body: &ManagementAccessPolicyPost
                ) -> Vec<ManagementAccessPolicy>;

                /// `DELETE /policies/management-access?names=...`.
                write DeleteManagementAccessPolicies "DELETE /policies/management-access"
                fn delete_management_access_policies(names: &[String]) -> ();

                /// `GET /admins?names=...` (all when `names` is empty).
                read ListAdmins "GET /admins"
                fn list_admins(names: &[String]) -> Vec<Admin>;

                /// `POST /admins?names=...`: token-only users whose rights come from
                /// policies.
                write CreateAdmins "POST /admins"
                fn create_admins(names: &[String], body: &AdminPost) -> Vec<Admin>;

                /// `DELETE /admins?names=...`.
                write DeleteAdmins "DELETE /admins"
                fn delete_admins(names: &[String]) -> ();
            }
            streams {
                /// `GET /volumes`, page by page, so that memory stays flat on huge arrays.
                /// The default collects [`FlashArray::list_volumes`]; the REST client pages.
                fn volume_stream(&self, params: ListParams) -> Volume {
                    $crate::array::stream_of(async move { self.list_volumes(&params).await })
                }
            }
            session {
                /// The `N` of the REST 2.N version calls to this array use, negotiated (and
                /// logged in) first if need be, so that a caller can refuse a feature the
                /// array's version lacks (realms need 2.36) before writing anything. `None`
                /// when no REST version applies: the in-memory array has every feature.
                fn rest_minor_version(&self) -> Option<u32> {
                    Ok(None)
                }

                /// Ends the session (REST: `POST /logout`). Further calls may log in again.
                fn close(&self) -> () {
                    Ok(())
                }
            }
        }
    };
}

/// Expands the table into the trait.
macro_rules! define_trait {
    (
        []
        calls { $($(#[$cm:meta])* $kind:ident $op:ident $request:literal
            fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)* }
        streams { $($(#[$sm:meta])* fn $sname:ident(&$sself:ident $(, $sarg:ident: $sty:ty)* $(,)?)
            -> $sret:ty $sbody:block)* }
        session { $($(#[$pm:meta])* fn $pname:ident(&$pself:ident) -> $pret:ty $pbody:block)* }
    ) => {
        /// A FlashArray, real or simulated. Object-safe: hold it as [`DynFlashArray`].
        /// `Arc<T>`, `Box<T>` and `&T` of an array are arrays too.
        #[async_trait]
        pub trait FlashArray: Send + Sync + std::fmt::Debug {
            $( $(#[$cm])* async fn $name(&self, $($arg: $ty),*) -> Result<$ret>; )*
            $( $(#[$sm])* fn $sname(&$sself, $($sarg: $sty),*) -> ItemStream<'_, $sret> $sbody )*
            $( $(#[$pm])* async fn $pname(&$pself) -> Result<$pret> $pbody )*
        }
    };
}

crate::for_each_method!(define_trait);

/// Forwards every method, provided ones included, so that a wrapped array keeps its
/// own paging stream and session handling.
macro_rules! forward_flash_array {
    (
        [$wrapper:ty]
        calls { $($(#[$cm:meta])* $kind:ident $op:ident $request:literal
            fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)* }
        streams { $($(#[$sm:meta])* fn $sname:ident(&$sself:ident $(, $sarg:ident: $sty:ty)* $(,)?)
            -> $sret:ty $sbody:block)* }
        session { $($(#[$pm:meta])* fn $pname:ident(&$pself:ident) -> $pret:ty $pbody:block)* }
    ) => {
        #[async_trait]
        impl<T: FlashArray + ?Sized> FlashArray for $wrapper {
            $( async fn $name(&self, $($arg: $ty),*) -> Result<$ret> {
                (**self).$name($($arg),*).await
            } )*
            $( fn $sname(&self, $($sarg: $sty),*) -> ItemStream<'_, $sret> {
                (**self).$sname($($sarg),*)
            } )*
            $( async fn $pname(&self) -> Result<$pret> {
                (**self).$pname().await
            } )*
        }
    };
}

crate::for_each_method!(forward_flash_array, Arc<T>);
crate::for_each_method!(forward_flash_array, Box<T>);
crate::for_each_method!(forward_flash_array, &T);
