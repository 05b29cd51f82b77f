//! The FlashArray REST 2.x client.
//!
//! [`RestArray`] implements [`crate::FlashArray`] over HTTPS. It logs in lazily with
//! an API token (see [`session`]), retries what is safe to retry (see [`retry`]),
//! follows pages (see [`paging`]) and never replays a write whose answer was lost: it
//! re-reads the objects and sends only what is still missing (see the rules on each
//! operation in `endpoints.rs` and [`reconcile`]).
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
//! and the admin resolves it with `apply --adopt`. A lost answer to the tag call
//! itself is settled like any `set_tags`.
//!
//! ```no_run
//! # async fn demo() -> flasharray::Result<()> {
//! use flasharray::{FlashArray, ListParams, rest::RestArray};
//! use secrecy::SecretString;
//!
//! let array = RestArray::builder("array1.example.com")
//!     .api_token(SecretString::from("…"))
//!     .ca_file("/etc/pxfa/array-ca.pem")
//!     .build()?;
//! for v in array.list_volumes(&ListParams::all()).await? {
//!     println!("{} {}", v.name, v.provisioned);
//! }
//! array.close().await?;
//! # Ok(()) }
//! ```

use std::fmt;

use reqwest::Method;
use secrecy::SecretString;
use url::Url;

use crate::error::Result;

mod config;
mod endpoints;
mod http;
pub mod paging;
mod query;
pub mod reconcile;
pub mod retry;
pub mod session;

pub use config::{DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, RestArrayBuilder};
pub use paging::DEFAULT_PAGE_SIZE;
pub use retry::RetryConfig;
pub use session::ApiVersion;

use http::Call;
use query::Query;
use session::SessionState;

/// A FlashArray reached over its REST 2.x API.
///
/// Cheap to share behind an `Arc`; concurrent calls share one session. Debug output
/// shows the address and settings, never a token.
pub struct RestArray {
    http: reqwest::Client,
    base: Url,
    api_token: SecretString,
    pinned: Option<ApiVersion>,
    retry: RetryConfig,
    state: tokio::sync::Mutex<SessionState>,
}

impl fmt::Debug for RestArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestArray")
            .field("base", &self.base.as_str())
            .field("api_token", &"[REDACTED]")
            .field("pinned", &self.pinned)
            .field("retry", &self.retry)
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
        api_token: SecretString,
        pinned: Option<ApiVersion>,
        retry: RetryConfig,
    ) -> Self {
        RestArray {
            http,
            base,
            api_token,
            pinned,
            retry,
            state: tokio::sync::Mutex::new(SessionState::default()),
        }
    }

    /// The array's address.
    pub fn url(&self) -> &Url {
        &self.base
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
        let reply = self
            .call(Call {
                method: Method::GET,
                path,
                query: &q,
                body: None,
            })
            .await?;
        reply.decode()
    }
}
