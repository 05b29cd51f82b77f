//! HTTPS simulator of the FlashArray REST API 2.x, serving a [`MockArray`] of the
//! `flasharray-mock` crate.
//!
//! Every request is answered through the [`flasharray::FlashArray`] trait methods of
//! the mock, so HTTP behaviour is exactly the trait behaviour (rules, errors, mock
//! faults); this crate only adds what exists at the HTTP level: versions, login and
//! sessions, paths and query parameters, envelopes and paging, status codes, headers,
//! TLS, and HTTP faults ([`parse_faults`]); and the third-party surfaces beside REST
//! 2.x: REST 1.x (the Ansible collection's `purestorage` 1.x client), array
//! connections and replication between simulators, API clients (OAuth2). The target
//! is that Pure's own Python SDK (`py-pure-client`) and our REST client work against
//! it unchanged.
//!
//! # Serve the simulator in a test
//!
//! Start it on a free port with a fresh self-signed certificate, point the REST
//! client (or any HTTPS tool) at it, and look at the array behind it directly:
//!
//! ```
//! use flasharray::models::VolumePost;
//! use flasharray::{FlashArray, ListParams, RestArray, VolumeName};
//! use flasharray_mock::MockArray;
//! use flasharray_sim::{SimConfig, Simulator};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let token = "0b7d4c2e-8f1a-4d3b-9e6c-5a2f1b0c9d8e";
//! let array = MockArray::new();
//! let sim = Simulator::start(array.clone(), SimConfig::new(token.into())).await?;
//!
//! let rest = RestArray::builder(sim.url())
//!     .api_token(token.into())
//!     .ca_pem(sim.cert_pem().as_bytes().to_vec())
//!     .build()?;
//! let names = [VolumeName::new("px-data-01")?];
//! rest.create_volumes(&names, &VolumePost::default().with_provisioned(1 << 30)).await?;
//!
//! // The write went over HTTPS into the array the test holds.
//! assert_eq!(array.list_volumes(&ListParams::all()).await?.len(), 1);
//! assert!(sim.stats().requests >= 3); // version, login, create
//! rest.close().await?;
//! sim.shutdown().await;
//! # Ok(()) }
//! ```

/// The crate README's example, compiled as a doc test so that it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod accounts;
mod api_clients;
mod faults;
mod fields;
mod guard;
mod paging;
mod peer;
mod persist;
mod query;
mod replication;
mod response;
mod rest1;
mod routes;
mod server;
mod session;
mod stats;
mod tls;
mod versions;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use flasharray::FlashArray;
use flasharray_mock::MockArray;
use hyper::Method;
use hyper::body::Bytes;
use secrecy::{ExposeSecret, SecretString};

use accounts::Accounts;
use api_clients::ApiClients;
use faults::FaultPlan;
use persist::Persister;
use query::Query;
use replication::Replication;
use rest1::LoginCredentials;
use session::Sessions;
use stats::Recorder;

pub use faults::{FaultTrigger, HttpFault, HttpFaultKind, parse_faults};
pub use server::{RunningSim, Simulator};
pub use stats::{RequestRecord, SimStats, critical_path_depth, stats_json};
pub use versions::{parse_rest_version, versions_up_to};

/// The newest REST version the simulator advertises by default: the first one whose
/// SDK module has tag endpoints for volumes, hosts, host groups *and* pods (pod tags
/// arrived in 2.39; host and host-group tags in 2.34).
pub const TOP_REST_VERSION: &str = "2.39";

/// The default `GET /api/api_version` list: ascending, REST 1.x entries first, as
/// real arrays answer.
pub fn default_versions() -> Vec<String> {
    versions_up_to(versions::top_minor())
}

/// How to run the simulator.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Address to listen on; port 0 picks a free port.
    pub listen: SocketAddr,
    /// The API token that `POST /login` accepts (tokens the array issued through
    /// `/admins/api-tokens` are accepted too). Never logged.
    pub api_token: SecretString,
    /// Serve HTTPS with a fresh self-signed certificate (default). Plain HTTP is for
    /// benchmarks that want to leave TLS out of the measurement.
    pub tls: bool,
    /// Sessions end this long after login (on the array's clock).
    pub session_ttl: Option<Duration>,
    /// Every n-th authenticated request finds its session expired (401).
    pub expire_sessions_every: Option<u64>,
    /// HTTP-level faults, in addition to the mock array's own.
    pub faults: Vec<HttpFault>,
    /// The `GET /api/api_version` list; empty means that of the array's
    /// [`MockArray::rest_version`] ([`versions_up_to`]), or [`default_versions`].
    pub versions: Vec<String>,
    /// Added to every HTTP request, version probe, login and logout included, so
    /// that a benchmark's round trips all cost alike (the mock's own latency only
    /// reaches array calls).
    pub http_latency: Duration,
    /// Added before each TLS accept: stands for the TCP and TLS round trips of a new
    /// connection.
    pub connect_latency: Duration,
    /// Serve HTTP/1.1 only; by default ALPN offers `h2` first.
    pub http1_only: bool,
    /// The password of `pureuser`, for REST 1.x password logins (`purefa_token`);
    /// `None` (the default) means `pureuser` cannot log in with a password. Never
    /// logged.
    pub admin_password: Option<SecretString>,
    /// The TLS handshake and each HTTP/1.1 request head (request line and headers,
    /// and the wait for the next request on a kept-alive connection) must arrive
    /// within this; otherwise the connection is closed (half-sent, "slowloris"
    /// requests). `None` disables it.
    pub header_timeout: Option<Duration>,
    /// A request body must arrive within this; otherwise the answer is `408` and the
    /// connection is closed (slow senders). `None` disables it.
    pub body_timeout: Option<Duration>,
    /// A connection with no request in progress that receives nothing for this long
    /// is closed (idle connections, HTTP/1.1 and HTTP/2). `None` disables it.
    pub idle_timeout: Option<Duration>,
    /// Added to `POST /logout` after the session has ended: an array slow to answer
    /// a logout (clients must not wait for it; see pxfa's session module).
    pub logout_latency: Duration,
    /// Where the array's state is kept ([`flasharray_mock::state_file`]): written at start,
    /// then again after every request that changed the array, before that request
    /// is answered, so that an answered write survives a crash or `kill -9`; and
    /// once more at [`RunningSim::shutdown`](server::RunningSim::shutdown). `None`
    /// (the default) keeps the state in memory only. The simulator does not read
    /// it: restore it into the [`MockArray`] before starting
    /// ([`flasharray_mock::state_file::load_state`]).
    pub state_file: Option<PathBuf>,
}

impl SimConfig {
    /// Defaults: `127.0.0.1:0`, TLS on, HTTP/2 offered, no expiry, no faults, no
    /// added latency, default versions; request heads within 30 s (hyper's own
    /// default; on HTTP/1.1 it also bounds the wait between kept-alive requests),
    /// bodies within 30 s, idle connections closed after 75 s (the keep-alive time
    /// of the usual HTTPS gateways).
    pub fn new(api_token: SecretString) -> SimConfig {
        SimConfig {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            api_token,
            tls: true,
            session_ttl: None,
            expire_sessions_every: None,
            faults: Vec::new(),
            versions: Vec::new(),
            http_latency: Duration::ZERO,
            connect_latency: Duration::ZERO,
            http1_only: false,
            admin_password: None,
            header_timeout: Some(Duration::from_secs(30)),
            body_timeout: Some(Duration::from_secs(30)),
            idle_timeout: Some(Duration::from_secs(75)),
            logout_latency: Duration::ZERO,
            state_file: None,
        }
    }
}

/// Why the simulator could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
    /// Certificate or TLS setup failed.
    #[error("TLS setup: {0}")]
    Tls(String),
    /// The configuration is unusable (the field is named in the message).
    #[error("simulator configuration: {0}")]
    Config(String),
    /// [`SimConfig::state_file`] could not be written.
    #[error("cannot write the state file {path}: {source}")]
    StateFile {
        /// The file asked for.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Everything a request handler needs; shared by all connections.
pub(crate) struct SimState {
    /// The array, used only through the trait.
    pub(crate) array: Arc<dyn FlashArray>,
    /// The mock, for its clock (session TTL).
    pub(crate) mock: MockArray,
    pub(crate) api_token: secrecy::SecretString,
    pub(crate) sessions: Sessions,
    pub(crate) faults: FaultPlan,
    pub(crate) versions: Vec<String>,
    /// The connection key and the array connections to other simulators.
    pub(crate) replication: Replication,
    /// Whether this simulator speaks TLS (and so expects its peers to).
    pub(crate) tls: bool,
    /// REST 1.x login credentials of admins without an API token.
    pub(crate) login_credentials: LoginCredentials,
    /// Role, password, public key and lock state of classic admin accounts.
    pub(crate) accounts: Accounts,
    /// API clients and their access tokens.
    pub(crate) api_clients: ApiClients,
    /// Wire counters and the request log.
    pub(crate) recorder: Recorder,
    /// Added to every request before it is routed.
    pub(crate) http_latency: Duration,
    /// Added before each TLS accept.
    pub(crate) connect_latency: Duration,
    /// Added to `POST /logout` after the session ended.
    pub(crate) logout_latency: Duration,
    /// Serve HTTP/1.1 only (no `h2` in ALPN, no HTTP/2 prior knowledge).
    pub(crate) http1_only: bool,
    /// See [`SimConfig::header_timeout`], [`SimConfig::body_timeout`] and
    /// [`SimConfig::idle_timeout`].
    pub(crate) header_timeout: Option<Duration>,
    pub(crate) body_timeout: Option<Duration>,
    pub(crate) idle_timeout: Option<Duration>,
    /// Keeps [`SimConfig::state_file`] up to date.
    pub(crate) persister: Option<Persister>,
}

impl SimState {
    /// Milliseconds on the array's clock.
    pub(crate) fn now_ms(&self) -> u64 {
        self.mock.clock().now_ms()
    }

    /// Compares a presented API token with the configured one without an early
    /// exit on the first differing byte.
    pub(crate) fn is_configured_token(&self, presented: &str) -> bool {
        let want = self.api_token.expose_secret().as_bytes();
        let got = presented.as_bytes();
        let mut diff = want.len() ^ got.len();
        for (i, w) in want.iter().enumerate() {
            diff |= usize::from(w ^ got.get(i).copied().unwrap_or(0));
        }
        diff == 0
    }
}

impl std::fmt::Debug for SimState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The API token is never shown.
        f.debug_struct("SimState")
            .field("versions", &self.versions.len())
            .field("http_latency", &self.http_latency)
            .field("connect_latency", &self.connect_latency)
            .field("http1_only", &self.http1_only)
            .field("logout_latency", &self.logout_latency)
            .finish_non_exhaustive()
    }
}

/// One request, parsed: what a route handler (`routes`, `api_clients`) is given.
pub(crate) struct Call<'a> {
    pub(crate) state: &'a SimState,
    /// The admin the request's credential belongs to.
    pub(crate) caller: String,
    pub(crate) method: Method,
    /// `volumes`, `hosts/host-groups`, ...
    pub(crate) resource: String,
    /// The `N` of the `/api/2.N/` prefix the client chose.
    pub(crate) minor: u32,
    pub(crate) query: Query,
    pub(crate) body: Bytes,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_debug_never_shows_the_token_or_password() {
        let mut cfg = SimConfig::new("s3cr3t-token-value".into());
        cfg.admin_password = Some("pa55w0rd-value".into());
        let shown = format!("{cfg:?}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(!shown.contains("pa55w0rd"), "{shown}");
        assert!(cfg.tls);
        assert_eq!(cfg.listen.port(), 0);
    }

    #[test]
    fn default_versions_ascend_and_end_at_the_top_version() {
        let v = default_versions();
        assert_eq!(v.first().map(String::as_str), Some("1.17"));
        assert_eq!(v.last().map(String::as_str), Some(TOP_REST_VERSION));
        let minors: Vec<u32> = v
            .iter()
            .filter_map(|s| s.strip_prefix("2.").and_then(|m| m.parse().ok()))
            .collect();
        assert!(minors.windows(2).all(|w| w[0] < w[1]));
    }
}
