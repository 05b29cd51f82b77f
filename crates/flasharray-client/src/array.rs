//! The `FlashArray` trait: the one seam between pxfa and an array.
//!
//! Implemented by the REST client (`rest::RestArray`) and by
//! `flasharray_mock::MockArray`. Methods follow the REST API one to one, accept
//! several names where the API does (so callers can batch), and return the typed
//! models. List calls return every matching item; [`FlashArray::volume_stream`] yields
//! them page by page for very large arrays.

use std::time::Duration;

use async_trait::async_trait;
use futures_util::stream::{self, BoxStream, StreamExt};

use crate::error::Result;
use crate::models::*;
use crate::name::{HostGroupName, HostName, PodName, VolumeName};
use crate::params::*;

/// A FlashArray, real or simulated. Object-safe: hold it as `Arc<dyn FlashArray>`.
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

    // ------------------------------------------------------------------ session

    /// Ends the session (REST: `POST /logout`). Further calls may log in again.
    async fn close(&self) -> Result<()> {
        Ok(())
    }
}
