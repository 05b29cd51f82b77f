//! The FlashArray REST 2.x client.
//!
//! [`RestArray`] implements [`crate::FlashArray`] over HTTPS. It logs in lazily with
//! an API token, negotiating the REST version ([`ApiVersion`]), retries what is safe to
//! retry ([`RetryConfig`]), follows pages ([`DEFAULT_PAGE_SIZE`] items each unless asked
//! otherwise) and sends each write once: a write whose answer was
//! lost comes back as an error flagged [`crate::Error::maybe_applied`], and settling
//! it (re-reading, sending only what is missing) is [`crate::Settling`]'s, the one
//! layer for every array, which pxfa puts around every `RestArray` it writes through.
//! The private `transport` module does the sending; one module per resource (`volumes`, `hosts`,
//! `host_groups`, `connections`, `pods`, `tags`, `tokens`, `realms`, `array`) says
//! what to send.
//!
//! # Creation tags
//!
//! `VolumePost`, `HostPost`, `HostGroupPost` and `PodPost` carry `tags` that every
//! created object gets. From REST 2.39 on (see [`ApiVersion::TAGS_IN_CREATE`]) they
//! travel in the create body, so an object never exists without them: a caller killed
//! at any moment leaves either nothing or a fully tagged object. On older arrays the
//! client creates first and then sends `PUT /{kind}/tags/batch`. **A process killed
//! between those two calls leaves an untagged object**; pxfa's next plan reports it as
//! a conflict ("exists without pxfa's tags ... adopt it") instead of taking it over,
//! and the admin resolves it with `apply --adopt`. A lost answer to either call is
//! settled by [`crate::Settling`] (see its rule for creates before 2.39).
//!
//! `create_volumes_batch` gives each volume its own size and tags in one
//! `POST /volumes/batch` from REST 2.32 ([`ApiVersion::VOLUME_BATCH`]); older arrays
//! get one `POST /volumes` per size and one `PUT /volumes/tags/batch`, with the same
//! window between the two.
//!
//! ```no_run
//! # async fn demo() -> flasharray::Result<()> {
//! use flasharray::{FlashArray, ListParams, Settling, rest::RestArray};
//! use secrecy::SecretString;
//!
//! // Writes through `Settling` are settled after a lost answer.
//! let array = Settling::new(
//!     RestArray::builder("array1.example.com")
//!         .api_token(SecretString::from("…"))
//!         .ca_file("/etc/pxfa/array-ca.pem")
//!         .build()?,
//! );
//! for v in array.list_volumes(&ListParams::all()).await? {
//!     println!("{} {}", v.name, v.provisioned);
//! }
//! array.close().await?;
//! # Ok(()) }
//! ```

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::stream::BoxStream;
use url::Url;

use crate::array::FlashArray;
use crate::error::Result;
use crate::models::*;
use crate::name::{HostGroupName, HostName, PodName, RealmName, VolumeName};
use crate::params::*;

mod array;
mod config;
mod connections;
mod host_groups;
mod hosts;
pub mod oauth;
mod pods;
mod query;
mod realms;
mod tags;
mod tokens;
mod transport;
mod volumes;
mod writes;

pub use config::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, RestArrayBuilder, install_crypto_provider,
};
pub use transport::paging::DEFAULT_PAGE_SIZE;
pub use transport::retry::RetryConfig;
pub use transport::session::ApiVersion;
pub(crate) use transport::{paging, retry, session};

use query::Query;
use transport::Transport;

/// A FlashArray reached over its REST 2.x API.
///
/// Cheap to share behind an `Arc`; concurrent calls share one session. Debug output
/// shows the address and settings, never a token.
pub struct RestArray {
    transport: Transport,
}

impl fmt::Debug for RestArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestArray")
            .field("base", &crate::redact::SafeUrl(&self.transport.base))
            .field("api_token", &"[REDACTED]")
            .field("pinned", &self.transport.pinned)
            .field("retry", &self.transport.retry)
            .finish_non_exhaustive()
    }
}

impl RestArray {
    /// Starts configuring a client for the array at `url` (`host`, `host:port` or
    /// `https://host[:port]`).
    pub fn builder(url: impl Into<String>) -> RestArrayBuilder {
        RestArrayBuilder::new(url)
    }

    pub(crate) fn from_parts(
        http: reqwest::Client,
        base: Url,
        credential: transport::Credential,
        pinned: Option<ApiVersion>,
        retry: RetryConfig,
    ) -> Self {
        RestArray {
            transport: Transport::new(http, base, credential, pinned, retry),
        }
    }

    /// The array's address.
    pub fn url(&self) -> &Url {
        &self.transport.base
    }

    /// The REST version in use, once logged in.
    pub async fn api_version(&self) -> Option<ApiVersion> {
        self.transport.api_version().await
    }

    /// Raw escape hatch for endpoints the typed API does not cover: `GET
    /// /api/2.N/{path}` with the given query pairs (each value percent-encoded), the
    /// whole answer as JSON. Retries, login and errors work as for typed calls; no
    /// paging is done.
    pub async fn get_json(&self, path: &str, query: &[(&str, &str)]) -> Result<serde_json::Value> {
        let path = path.trim_start_matches('/');
        if path.is_empty()
            || path.split('/').any(|seg| seg == ".." || seg == ".")
            || path.contains(['?', '#'])
        {
            return Err(crate::Error::InvalidRequest(format!(
                "{path:?} is not a path below /api/2.N/; pass query values separately"
            )));
        }
        if let Some(bad) = query
            .iter()
            .map(|(k, _)| *k)
            .find(|k| k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        {
            return Err(crate::Error::InvalidRequest(format!(
                "query parameter name {bad:?} is not a REST parameter name"
            )));
        }
        let q = query.iter().fold(Query::new(), |q, (k, v)| q.value(k, v));
        let reply = self.transport.get(path, q).await?;
        reply.decode()
    }
}

/// The trait, one line per method: each resource module holds its endpoints.
#[async_trait]
impl FlashArray for RestArray {
    async fn list_volumes(&self, params: &ListParams) -> Result<Vec<Volume>> {
        volumes::list(self, params).await
    }

    fn volume_stream(&self, params: ListParams) -> BoxStream<'_, Result<Volume>> {
        volumes::stream(self, params)
    }

    async fn create_volumes(&self, names: &[VolumeName], body: &VolumePost) -> Result<Vec<Volume>> {
        volumes::create(self, names, body).await
    }

    async fn create_volumes_batch(&self, items: &[VolumeBatchPost]) -> Result<Vec<Volume>> {
        volumes::create_batch(self, items).await
    }

    async fn patch_volumes(
        &self,
        names: &[VolumeName],
        patch: &VolumePatch,
        truncate: bool,
    ) -> Result<Vec<Volume>> {
        volumes::patch(self, names, patch, truncate).await
    }

    async fn eradicate_volumes(&self, names: &[VolumeName]) -> Result<()> {
        volumes::eradicate(self, names).await
    }

    async fn list_tags(&self, kind: TagResource, params: &TagParams) -> Result<Vec<Tag>> {
        tags::list(self, kind, params).await
    }

    async fn set_tags(&self, kind: TagResource, tags: &[Tag]) -> Result<Vec<Tag>> {
        tags::set(self, kind, tags).await
    }

    async fn delete_tags(
        &self,
        kind: TagResource,
        resource_names: &[String],
        keys: &[String],
        namespaces: &[String],
    ) -> Result<()> {
        tags::delete(self, kind, resource_names, keys, namespaces).await
    }

    async fn list_hosts(&self, params: &ListParams) -> Result<Vec<Host>> {
        hosts::list(self, params).await
    }

    async fn create_hosts(&self, names: &[HostName], body: &HostPost) -> Result<Vec<Host>> {
        hosts::create(self, names, body).await
    }

    async fn patch_hosts(&self, names: &[HostName], patch: &HostPatch) -> Result<Vec<Host>> {
        hosts::patch(self, names, patch).await
    }

    async fn delete_hosts(&self, names: &[HostName]) -> Result<()> {
        hosts::delete(self, names).await
    }

    async fn list_host_groups(&self, params: &ListParams) -> Result<Vec<HostGroup>> {
        host_groups::list(self, params).await
    }

    async fn create_host_groups(
        &self,
        names: &[HostGroupName],
        body: &HostGroupPost,
    ) -> Result<Vec<HostGroup>> {
        host_groups::create(self, names, body).await
    }

    async fn delete_host_groups(&self, names: &[HostGroupName]) -> Result<()> {
        host_groups::delete(self, names).await
    }

    async fn list_host_group_members(&self, params: &MemberParams) -> Result<Vec<Member>> {
        host_groups::list_members(self, params).await
    }

    async fn add_host_group_members(
        &self,
        group: &HostGroupName,
        hosts: &[HostName],
    ) -> Result<Vec<Member>> {
        host_groups::add_members(self, group, hosts).await
    }

    async fn remove_host_group_members(
        &self,
        group: &HostGroupName,
        hosts: &[HostName],
    ) -> Result<()> {
        host_groups::remove_members(self, group, hosts).await
    }

    async fn list_connections(&self, params: &ConnectionParams) -> Result<Vec<Connection>> {
        connections::list(self, params).await
    }

    async fn create_connections(
        &self,
        target: &ConnectionTarget,
        volumes: &[VolumeName],
        lun: Option<u32>,
    ) -> Result<Vec<Connection>> {
        connections::create(self, target, volumes, lun).await
    }

    async fn delete_connections(
        &self,
        target: &ConnectionTarget,
        volumes: &[VolumeName],
    ) -> Result<()> {
        connections::delete(self, target, volumes).await
    }

    async fn list_pods(&self, params: &ListParams) -> Result<Vec<Pod>> {
        pods::list(self, params).await
    }

    async fn create_pods(&self, names: &[PodName], body: &PodPost) -> Result<Vec<Pod>> {
        pods::create(self, names, body).await
    }

    async fn patch_pods(
        &self,
        names: &[PodName],
        patch: &PodPatch,
        destroy_contents: bool,
    ) -> Result<Vec<Pod>> {
        pods::patch(self, names, patch, destroy_contents).await
    }

    async fn eradicate_pods(&self, names: &[PodName], eradicate_contents: bool) -> Result<()> {
        pods::eradicate(self, names, eradicate_contents).await
    }

    async fn list_pod_arrays(&self, pods: &[PodName]) -> Result<Vec<Member>> {
        pods::list_arrays(self, pods).await
    }

    async fn get_array(&self) -> Result<ArrayInfo> {
        array::get(self).await
    }

    async fn get_array_space(&self) -> Result<ArraySpace> {
        array::space(self).await
    }

    async fn list_api_tokens(&self, admins: &[String], expose: bool) -> Result<Vec<AdminApiToken>> {
        tokens::list(self, admins, expose).await
    }

    async fn create_api_token(
        &self,
        admin: &str,
        timeout: Option<Duration>,
    ) -> Result<AdminApiToken> {
        tokens::create(self, admin, timeout).await
    }

    async fn delete_api_token(&self, admin: &str) -> Result<()> {
        tokens::delete(self, admin).await
    }

    async fn list_realms(&self, params: &ListParams) -> Result<Vec<Realm>> {
        realms::list(self, params).await
    }

    async fn create_realms(&self, names: &[RealmName], body: &RealmPost) -> Result<Vec<Realm>> {
        realms::create(self, names, body).await
    }

    async fn patch_realms(
        &self,
        names: &[RealmName],
        patch: &RealmPatch,
        destroy_contents: bool,
    ) -> Result<Vec<Realm>> {
        realms::patch(self, names, patch, destroy_contents).await
    }

    async fn eradicate_realms(&self, names: &[RealmName], eradicate_contents: bool) -> Result<()> {
        realms::eradicate(self, names, eradicate_contents).await
    }

    async fn list_management_access_policies(
        &self,
        names: &[String],
    ) -> Result<Vec<ManagementAccessPolicy>> {
        realms::list_policies(self, names).await
    }

    async fn create_management_access_policies(
        &self,
        names: &[String],
        body: &ManagementAccessPolicyPost,
    ) -> Result<Vec<ManagementAccessPolicy>> {
        realms::create_policies(self, names, body).await
    }

    async fn delete_management_access_policies(&self, names: &[String]) -> Result<()> {
        realms::delete_policies(self, names).await
    }

    async fn list_admins(&self, names: &[String]) -> Result<Vec<Admin>> {
        realms::list_admins(self, names).await
    }

    async fn create_admins(&self, names: &[String], body: &AdminPost) -> Result<Vec<Admin>> {
        realms::create_admins(self, names, body).await
    }

    async fn delete_admins(&self, names: &[String]) -> Result<()> {
        realms::delete_admins(self, names).await
    }

    async fn rest_minor_version(&self) -> Result<Option<u32>> {
        Ok(Some(self.transport.session().await?.version.minor))
    }

    async fn close(&self) -> Result<()> {
        self.transport.logout().await
    }
}
