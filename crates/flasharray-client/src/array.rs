//! The `FlashArray` trait: the one seam between pxfa and an array.
//!
//! Implemented by the REST client (`rest::RestArray`) and by
//! `flasharray_mock::MockArray`. Methods follow the REST API one to one, accept
//! several names where the API does (so callers can batch), and return the typed
//! models. List calls return every matching item; [`FlashArray::volume_stream`] yields
//! them page by page for very large arrays.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::stream::{self, BoxStream, StreamExt};

use crate::error::Result;
use crate::models::*;
use crate::name::{HostGroupName, HostName, PodName, RealmName, VolumeName};
use crate::params::*;

/// A shared handle to any array, real or simulated.
pub type DynFlashArray = Arc<dyn FlashArray>;

/// A FlashArray, real or simulated. Object-safe: hold it as [`DynFlashArray`].
/// `Arc<T>` and `Box<T>` of an array are arrays too.
#[async_trait]
pub trait FlashArray: Send + Sync + std::fmt::Debug {
    // ------------------------------------------------------------------ volumes

    /// `GET /volumes`.
    async fn list_volumes(&self, params: &ListParams) -> Result<Vec<Volume>>;

    /// `GET /volumes`, page by page, so that memory stays flat on huge arrays.
    /// The default collects [`FlashArray::list_volumes`]; the REST client pages.
    fn volume_stream(&self, params: ListParams) -> BoxStream<'_, Result<Volume>> {
        stream::once(async move { self.list_volumes(&params).await })
            .flat_map(|r| match r {
                Ok(v) => stream::iter(v.into_iter().map(Ok)).boxed(),
                Err(e) => stream::iter([Err(e)]).boxed(),
            })
            .boxed()
    }

    /// `POST /volumes?names=...`: creates every name with the same body, in one call.
    /// `body.tags` are on every created volume before anyone can see it (REST 2.39+;
    /// older arrays need a second call, see `rest::RestArray`).
    async fn create_volumes(&self, names: &[VolumeName], body: &VolumePost) -> Result<Vec<Volume>>;

    /// `POST /volumes/batch` (REST 2.32+): creates volumes of different sizes, each
    /// with its own tags, in one call, answered in request order. Items are checked
    /// together (names, sizes, duplicates, quotas) before anything is made. Older
    /// arrays reach the same end state through `POST /volumes` per size and
    /// `PUT /volumes/tags/batch` (see `rest::RestArray`).
    async fn create_volumes_batch(&self, items: &[VolumeBatchPost]) -> Result<Vec<Volume>>;

    /// `PATCH /volumes?names=...`: resize (`truncate` to shrink), rename, destroy,
    /// recover, move.
    async fn patch_volumes(
        &self,
        names: &[VolumeName],
        patch: &VolumePatch,
        truncate: bool,
    ) -> Result<Vec<Volume>>;

    /// `DELETE /volumes?names=...`: eradicates destroyed volumes.
    async fn eradicate_volumes(&self, names: &[VolumeName]) -> Result<()>;

    // --------------------------------------------------------------------- tags

    /// `GET /{kind}/tags`.
    async fn list_tags(&self, kind: TagResource, params: &TagParams) -> Result<Vec<Tag>>;

    /// `PUT /{kind}/tags/batch`: sets (adds or overwrites) tags on several objects.
    async fn set_tags(&self, kind: TagResource, tags: &[Tag]) -> Result<Vec<Tag>>;

    /// `DELETE /{kind}/tags?resource_names=...&keys=...&namespaces=...`.
    async fn delete_tags(
        &self,
        kind: TagResource,
        resource_names: &[String],
        keys: &[String],
        namespaces: &[String],
    ) -> Result<()>;

    // -------------------------------------------------------------------- hosts

    /// `GET /hosts`.
    async fn list_hosts(&self, params: &ListParams) -> Result<Vec<Host>>;

    /// `POST /hosts?names=...`.
    async fn create_hosts(&self, names: &[HostName], body: &HostPost) -> Result<Vec<Host>>;

    /// `PATCH /hosts?names=...`: initiators, host group, personality, rename.
    async fn patch_hosts(&self, names: &[HostName], patch: &HostPatch) -> Result<Vec<Host>>;

    /// `DELETE /hosts?names=...`; refused while a host has connections.
    async fn delete_hosts(&self, names: &[HostName]) -> Result<()>;

    // -------------------------------------------------------------- host groups

    /// `GET /host-groups`.
    async fn list_host_groups(&self, params: &ListParams) -> Result<Vec<HostGroup>>;

    /// `POST /host-groups?names=...`; `body` carries the creation tags.
    async fn create_host_groups(
        &self,
        names: &[HostGroupName],
        body: &HostGroupPost,
    ) -> Result<Vec<HostGroup>>;

    /// `DELETE /host-groups?names=...`; refused while a group has members or connections.
    async fn delete_host_groups(&self, names: &[HostGroupName]) -> Result<()>;

    /// `GET /host-groups/hosts`.
    async fn list_host_group_members(&self, params: &MemberParams) -> Result<Vec<Member>>;

    /// `POST /host-groups/hosts?group_names=g&member_names=h1,h2`.
    async fn add_host_group_members(
        &self,
        group: &HostGroupName,
        hosts: &[HostName],
    ) -> Result<Vec<Member>>;

    /// `DELETE /host-groups/hosts?group_names=g&member_names=h1,h2`.
    async fn remove_host_group_members(
        &self,
        group: &HostGroupName,
        hosts: &[HostName],
    ) -> Result<()>;

    // -------------------------------------------------------------- connections

    /// `GET /connections`: one row per host that sees a volume.
    async fn list_connections(&self, params: &ConnectionParams) -> Result<Vec<Connection>>;

    /// `POST /connections`: connects several volumes to one host or host group. `lun`
    /// (1–4095) only makes sense with a single volume.
    async fn create_connections(
        &self,
        target: &ConnectionTarget,
        volumes: &[VolumeName],
        lun: Option<u32>,
    ) -> Result<Vec<Connection>>;

    /// `DELETE /connections`.
    async fn delete_connections(
        &self,
        target: &ConnectionTarget,
        volumes: &[VolumeName],
    ) -> Result<()>;

    // --------------------------------------------------------------------- pods

    /// `GET /pods`.
    async fn list_pods(&self, params: &ListParams) -> Result<Vec<Pod>>;

    /// `POST /pods?names=...`.
    async fn create_pods(&self, names: &[PodName], body: &PodPost) -> Result<Vec<Pod>>;

    /// `PATCH /pods?names=...`: destroy (refused while not empty unless
    /// `destroy_contents`), recover, quota, rename.
    async fn patch_pods(
        &self,
        names: &[PodName],
        patch: &PodPatch,
        destroy_contents: bool,
    ) -> Result<Vec<Pod>>;

    /// `DELETE /pods?names=...`: eradicates destroyed pods.
    async fn eradicate_pods(&self, names: &[PodName], eradicate_contents: bool) -> Result<()>;

    /// `GET /pods/arrays`.
    async fn list_pod_arrays(&self, pods: &[PodName]) -> Result<Vec<Member>>;

    // -------------------------------------------------------------------- array

    /// `GET /arrays`.
    async fn get_array(&self) -> Result<ArrayInfo>;

    /// `GET /arrays/space`.
    async fn get_array_space(&self) -> Result<ArraySpace>;

    // ------------------------------------------------------------------- tokens

    /// `GET /admins/api-tokens?names=...`; `expose` asks for the token values.
    async fn list_api_tokens(&self, admins: &[String], expose: bool) -> Result<Vec<AdminApiToken>>;

    /// `POST /admins/api-tokens?names=admin&timeout=ms`: the answer holds the new token.
    async fn create_api_token(
        &self,
        admin: &str,
        timeout: Option<Duration>,
    ) -> Result<AdminApiToken>;

    /// `DELETE /admins/api-tokens?names=admin`.
    async fn delete_api_token(&self, admin: &str) -> Result<()>;

    // ------------------------------------------------- realms and their users

    /// `GET /realms` (REST 2.36+).
    async fn list_realms(&self, params: &ListParams) -> Result<Vec<Realm>>;

    /// `POST /realms?names=...`.
    async fn create_realms(&self, names: &[RealmName], body: &RealmPost) -> Result<Vec<Realm>>;

    /// `PATCH /realms?names=...`: destroy (refused while it holds live pods unless
    /// `destroy_contents`), recover, rename.
    async fn patch_realms(
        &self,
        names: &[RealmName],
        patch: &RealmPatch,
        destroy_contents: bool,
    ) -> Result<Vec<Realm>>;

    /// `DELETE /realms?names=...`: eradicates destroyed realms.
    async fn eradicate_realms(&self, names: &[RealmName], eradicate_contents: bool) -> Result<()>;

    /// `GET /policies/management-access?names=...` (all when `names` is empty).
    async fn list_management_access_policies(
        &self,
        names: &[String],
    ) -> Result<Vec<ManagementAccessPolicy>>;

    /// `POST /policies/management-access?names=...`: a role within a scope (a realm).
    async fn create_management_access_policies(
        &self,
        names: &[String],
        body: &ManagementAccessPolicyPost,
    ) -> Result<Vec<ManagementAccessPolicy>>;

    /// `DELETE /policies/management-access?names=...`.
    async fn delete_management_access_policies(&self, names: &[String]) -> Result<()>;

    /// `GET /admins?names=...` (all when `names` is empty).
    async fn list_admins(&self, names: &[String]) -> Result<Vec<Admin>>;

    /// `POST /admins?names=...`: token-only users whose rights come from policies.
    async fn create_admins(&self, names: &[String], body: &AdminPost) -> Result<Vec<Admin>>;

    /// `DELETE /admins?names=...`.
    async fn delete_admins(&self, names: &[String]) -> Result<()>;

    // ------------------------------------------------------------------ session

    /// The `N` of the REST 2.N version calls to this array use, negotiated (and
    /// logged in) first if need be, so that a caller can refuse a feature the array's
    /// version lacks (realms need 2.36) before writing anything. `None` when no REST
    /// version applies: the in-memory array has every feature.
    async fn rest_minor_version(&self) -> Result<Option<u32>> {
        Ok(None)
    }

    /// Ends the session (REST: `POST /logout`). Further calls may log in again.
    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

/// Forwards every method, provided ones included, so that a wrapped array keeps its
/// own paging stream and session handling.
macro_rules! forward_flash_array {
    ($($wrapper:ident),*) => {$(
        #[async_trait]
        impl<T: FlashArray + ?Sized> FlashArray for $wrapper<T> {
            async fn list_volumes(&self, params: &ListParams) -> Result<Vec<Volume>> {
                (**self).list_volumes(params).await
            }
            fn volume_stream(&self, params: ListParams) -> BoxStream<'_, Result<Volume>> {
                (**self).volume_stream(params)
            }
            async fn create_volumes(
                &self,
                names: &[VolumeName],
                body: &VolumePost,
            ) -> Result<Vec<Volume>> {
                (**self).create_volumes(names, body).await
            }
            async fn create_volumes_batch(
                &self,
                items: &[VolumeBatchPost],
            ) -> Result<Vec<Volume>> {
                (**self).create_volumes_batch(items).await
            }
            async fn patch_volumes(
                &self,
                names: &[VolumeName],
                patch: &VolumePatch,
                truncate: bool,
            ) -> Result<Vec<Volume>> {
                (**self).patch_volumes(names, patch, truncate).await
            }
            async fn eradicate_volumes(&self, names: &[VolumeName]) -> Result<()> {
                (**self).eradicate_volumes(names).await
            }
            async fn list_tags(&self, kind: TagResource, params: &TagParams) -> Result<Vec<Tag>> {
                (**self).list_tags(kind, params).await
            }
            async fn set_tags(&self, kind: TagResource, tags: &[Tag]) -> Result<Vec<Tag>> {
                (**self).set_tags(kind, tags).await
            }
            async fn delete_tags(
                &self,
                kind: TagResource,
                resource_names: &[String],
                keys: &[String],
                namespaces: &[String],
            ) -> Result<()> {
                (**self)
                    .delete_tags(kind, resource_names, keys, namespaces)
                    .await
            }
            async fn list_hosts(&self, params: &ListParams) -> Result<Vec<Host>> {
                (**self).list_hosts(params).await
            }
            async fn create_hosts(&self, names: &[HostName], body: &HostPost) -> Result<Vec<Host>> {
                (**self).create_hosts(names, body).await
            }
            async fn patch_hosts(&self, names: &[HostName], patch: &HostPatch) -> Result<Vec<Host>> {
                (**self).patch_hosts(names, patch).await
            }
            async fn delete_hosts(&self, names: &[HostName]) -> Result<()> {
                (**self).delete_hosts(names).await
            }
            async fn list_host_groups(&self, params: &ListParams) -> Result<Vec<HostGroup>> {
                (**self).list_host_groups(params).await
            }
            async fn create_host_groups(
                &self,
                names: &[HostGroupName],
                body: &HostGroupPost,
            ) -> Result<Vec<HostGroup>> {
                (**self).create_host_groups(names, body).await
            }
            async fn delete_host_groups(&self, names: &[HostGroupName]) -> Result<()> {
                (**self).delete_host_groups(names).await
            }
            async fn list_host_group_members(&self, params: &MemberParams) -> Result<Vec<Member>> {
                (**self).list_host_group_members(params).await
            }
            async fn add_host_group_members(
                &self,
                group: &HostGroupName,
                hosts: &[HostName],
            ) -> Result<Vec<Member>> {
                (**self).add_host_group_members(group, hosts).await
            }
            async fn remove_host_group_members(
                &self,
                group: &HostGroupName,
                hosts: &[HostName],
            ) -> Result<()> {
                (**self).remove_host_group_members(group, hosts).await
            }
            async fn list_connections(&self, params: &ConnectionParams) -> Result<Vec<Connection>> {
                (**self).list_connections(params).await
            }
            async fn create_connections(
                &self,
                target: &ConnectionTarget,
                volumes: &[VolumeName],
                lun: Option<u32>,
            ) -> Result<Vec<Connection>> {
                (**self).create_connections(target, volumes, lun).await
            }
            async fn delete_connections(
                &self,
                target: &ConnectionTarget,
                volumes: &[VolumeName],
            ) -> Result<()> {
                (**self).delete_connections(target, volumes).await
            }
            async fn list_pods(&self, params: &ListParams) -> Result<Vec<Pod>> {
                (**self).list_pods(params).await
            }
            async fn create_pods(&self, names: &[PodName], body: &PodPost) -> Result<Vec<Pod>> {
                (**self).create_pods(names, body).await
            }
            async fn patch_pods(
                &self,
                names: &[PodName],
                patch: &PodPatch,
                destroy_contents: bool,
            ) -> Result<Vec<Pod>> {
                (**self).patch_pods(names, patch, destroy_contents).await
            }
            async fn eradicate_pods(&self, names: &[PodName], eradicate_contents: bool) -> Result<()> {
                (**self).eradicate_pods(names, eradicate_contents).await
            }
            async fn list_pod_arrays(&self, pods: &[PodName]) -> Result<Vec<Member>> {
                (**self).list_pod_arrays(pods).await
            }
            async fn get_array(&self) -> Result<ArrayInfo> {
                (**self).get_array().await
            }
            async fn get_array_space(&self) -> Result<ArraySpace> {
                (**self).get_array_space().await
            }
            async fn list_api_tokens(
                &self,
                admins: &[String],
                expose: bool,
            ) -> Result<Vec<AdminApiToken>> {
                (**self).list_api_tokens(admins, expose).await
            }
            async fn create_api_token(
                &self,
                admin: &str,
                timeout: Option<Duration>,
            ) -> Result<AdminApiToken> {
                (**self).create_api_token(admin, timeout).await
            }
            async fn delete_api_token(&self, admin: &str) -> Result<()> {
                (**self).delete_api_token(admin).await
            }
            async fn list_realms(&self, params: &ListParams) -> Result<Vec<Realm>> {
                (**self).list_realms(params).await
            }
            async fn create_realms(
                &self,
                names: &[RealmName],
                body: &RealmPost,
            ) -> Result<Vec<Realm>> {
                (**self).create_realms(names, body).await
            }
            async fn patch_realms(
                &self,
                names: &[RealmName],
                patch: &RealmPatch,
                destroy_contents: bool,
            ) -> Result<Vec<Realm>> {
                (**self).patch_realms(names, patch, destroy_contents).await
            }
            async fn eradicate_realms(
                &self,
                names: &[RealmName],
                eradicate_contents: bool,
            ) -> Result<()> {
                (**self).eradicate_realms(names, eradicate_contents).await
            }
            async fn list_management_access_policies(
                &self,
                names: &[String],
            ) -> Result<Vec<ManagementAccessPolicy>> {
                (**self).list_management_access_policies(names).await
            }
            async fn create_management_access_policies(
                &self,
                names: &[String],
                body: &ManagementAccessPolicyPost,
            ) -> Result<Vec<ManagementAccessPolicy>> {
                (**self).create_management_access_policies(names, body).await
            }
            async fn delete_management_access_policies(&self, names: &[String]) -> Result<()> {
                (**self).delete_management_access_policies(names).await
            }
            async fn list_admins(&self, names: &[String]) -> Result<Vec<Admin>> {
                (**self).list_admins(names).await
            }
            async fn create_admins(&self, names: &[String], body: &AdminPost) -> Result<Vec<Admin>> {
                (**self).create_admins(names, body).await
            }
            async fn delete_admins(&self, names: &[String]) -> Result<()> {
                (**self).delete_admins(names).await
            }
            async fn rest_minor_version(&self) -> Result<Option<u32>> {
                (**self).rest_minor_version().await
            }
            async fn close(&self) -> Result<()> {
                (**self).close().await
            }
        }
    )*};
}

forward_flash_array!(Arc, Box);

#[cfg(test)]
mod tests {
    use super::*;

    /// An array whose every call fails with its own message, to see forwarding.
    #[derive(Debug)]
    struct Marked;

    fn marked<T>() -> Result<T> {
        Err(crate::Error::InvalidRequest("marked".into()))
    }

    #[async_trait]
    impl FlashArray for Marked {
        async fn list_volumes(&self, _: &ListParams) -> Result<Vec<Volume>> {
            Ok(vec![Volume {
                name: "v1".into(),
                ..Default::default()
            }])
        }
        async fn create_volumes(&self, _: &[VolumeName], _: &VolumePost) -> Result<Vec<Volume>> {
            marked()
        }
        async fn create_volumes_batch(&self, _: &[VolumeBatchPost]) -> Result<Vec<Volume>> {
            marked()
        }
        async fn patch_volumes(
            &self,
            _: &[VolumeName],
            _: &VolumePatch,
            _: bool,
        ) -> Result<Vec<Volume>> {
            marked()
        }
        async fn eradicate_volumes(&self, _: &[VolumeName]) -> Result<()> {
            marked()
        }
        async fn list_tags(&self, _: TagResource, _: &TagParams) -> Result<Vec<Tag>> {
            marked()
        }
        async fn set_tags(&self, _: TagResource, _: &[Tag]) -> Result<Vec<Tag>> {
            marked()
        }
        async fn delete_tags(
            &self,
            _: TagResource,
            _: &[String],
            _: &[String],
            _: &[String],
        ) -> Result<()> {
            marked()
        }
        async fn list_hosts(&self, _: &ListParams) -> Result<Vec<Host>> {
            marked()
        }
        async fn create_hosts(&self, _: &[HostName], _: &HostPost) -> Result<Vec<Host>> {
            marked()
        }
        async fn patch_hosts(&self, _: &[HostName], _: &HostPatch) -> Result<Vec<Host>> {
            marked()
        }
        async fn delete_hosts(&self, _: &[HostName]) -> Result<()> {
            marked()
        }
        async fn list_host_groups(&self, _: &ListParams) -> Result<Vec<HostGroup>> {
            marked()
        }
        async fn create_host_groups(
            &self,
            _: &[HostGroupName],
            _: &HostGroupPost,
        ) -> Result<Vec<HostGroup>> {
            marked()
        }
        async fn delete_host_groups(&self, _: &[HostGroupName]) -> Result<()> {
            marked()
        }
        async fn list_host_group_members(&self, _: &MemberParams) -> Result<Vec<Member>> {
            marked()
        }
        async fn add_host_group_members(
            &self,
            _: &HostGroupName,
            _: &[HostName],
        ) -> Result<Vec<Member>> {
            marked()
        }
        async fn remove_host_group_members(&self, _: &HostGroupName, _: &[HostName]) -> Result<()> {
            marked()
        }
        async fn list_connections(&self, _: &ConnectionParams) -> Result<Vec<Connection>> {
            marked()
        }
        async fn create_connections(
            &self,
            _: &ConnectionTarget,
            _: &[VolumeName],
            _: Option<u32>,
        ) -> Result<Vec<Connection>> {
            marked()
        }
        async fn delete_connections(&self, _: &ConnectionTarget, _: &[VolumeName]) -> Result<()> {
            marked()
        }
        async fn list_pods(&self, _: &ListParams) -> Result<Vec<Pod>> {
            marked()
        }
        async fn create_pods(&self, _: &[PodName], _: &PodPost) -> Result<Vec<Pod>> {
            marked()
        }
        async fn patch_pods(&self, _: &[PodName], _: &PodPatch, _: bool) -> Result<Vec<Pod>> {
            marked()
        }
        async fn eradicate_pods(&self, _: &[PodName], _: bool) -> Result<()> {
            marked()
        }
        async fn list_pod_arrays(&self, _: &[PodName]) -> Result<Vec<Member>> {
            marked()
        }
        async fn get_array(&self) -> Result<ArrayInfo> {
            marked()
        }
        async fn get_array_space(&self) -> Result<ArraySpace> {
            marked()
        }
        async fn list_api_tokens(&self, _: &[String], _: bool) -> Result<Vec<AdminApiToken>> {
            marked()
        }
        async fn create_api_token(&self, _: &str, _: Option<Duration>) -> Result<AdminApiToken> {
            marked()
        }
        async fn delete_api_token(&self, _: &str) -> Result<()> {
            marked()
        }
        async fn list_realms(&self, _: &ListParams) -> Result<Vec<Realm>> {
            marked()
        }
        async fn create_realms(&self, _: &[RealmName], _: &RealmPost) -> Result<Vec<Realm>> {
            marked()
        }
        async fn patch_realms(
            &self,
            _: &[RealmName],
            _: &RealmPatch,
            _: bool,
        ) -> Result<Vec<Realm>> {
            marked()
        }
        async fn eradicate_realms(&self, _: &[RealmName], _: bool) -> Result<()> {
            marked()
        }
        async fn list_management_access_policies(
            &self,
            _: &[String],
        ) -> Result<Vec<ManagementAccessPolicy>> {
            marked()
        }
        async fn create_management_access_policies(
            &self,
            _: &[String],
            _: &ManagementAccessPolicyPost,
        ) -> Result<Vec<ManagementAccessPolicy>> {
            marked()
        }
        async fn delete_management_access_policies(&self, _: &[String]) -> Result<()> {
            marked()
        }
        async fn list_admins(&self, _: &[String]) -> Result<Vec<Admin>> {
            marked()
        }
        async fn create_admins(&self, _: &[String], _: &AdminPost) -> Result<Vec<Admin>> {
            marked()
        }
        async fn delete_admins(&self, _: &[String]) -> Result<()> {
            marked()
        }
        async fn rest_minor_version(&self) -> Result<Option<u32>> {
            Ok(Some(99))
        }
        async fn close(&self) -> Result<()> {
            marked()
        }
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        futures_util::FutureExt::now_or_never(f).expect("ready at once")
    }

    #[test]
    fn arc_and_box_forward_every_call() {
        let shared: DynFlashArray = Arc::new(Marked);
        let boxed: Box<dyn FlashArray> = Box::new(Marked);
        let nested = Arc::new(Box::new(Marked));
        for a in [&shared as &dyn FlashArray, &boxed, &nested] {
            let v = block_on(a.list_volumes(&ListParams::all())).unwrap();
            assert_eq!(v[0].name, "v1");
            // `close` has a default body; the wrapper must reach the inner one.
            assert!(block_on(a.close()).is_err());
            assert_eq!(block_on(a.rest_minor_version()).unwrap(), Some(99));
            let streamed: Vec<_> = block_on(a.volume_stream(ListParams::all()).collect());
            assert_eq!(streamed.len(), 1);
        }
    }
}
