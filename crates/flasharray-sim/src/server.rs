//! The listener: accepts connections, speaks TLS and HTTP/2 or HTTP/1.1 keep-alive
//! (ALPN decides), records what it served ([`super::stats`]), and shuts down
//! gracefully (stop accepting, let in-flight requests finish, then close).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use secrecy::ExposeSecret;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;

use super::accounts::Accounts;
use super::faults::{FaultPlan, FaultTrigger, HttpFault, HttpFaultKind};
use super::guard::{Guarded, LastRead};
use super::persist::{self, Persister};
use super::replication::Replication;
use super::response::Fail;
use super::rest1::LoginCredentials;
use super::session::Sessions;
use super::stats::{Recorder, RequestRecord, SimStats};
use super::{SimConfig, SimError, SimState, default_versions, routes, tls};
use flasharray_mock::MockArray;

/// Largest HTTP/2 header list accepted: hyper's HTTP/1.1 read buffer (400 KiB).
const HEADER_LIST_LIMIT: u32 = 8192 + 4096 * 100;

/// How long a graceful shutdown waits for in-flight requests before closing.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The entry point: [`Simulator::start`] serves an array over HTTPS and hands back the
/// [`RunningSim`]; the type itself holds nothing.
#[derive(Debug)]
pub struct Simulator;

impl Simulator {
    /// Binds `cfg.listen`, makes the certificate, and serves `array` until
    /// [`RunningSim::shutdown`] (or until the `RunningSim` is dropped).
    pub async fn start(array: MockArray, cfg: SimConfig) -> Result<RunningSim, SimError> {
        if cfg.api_token.expose_secret().is_empty() {
            return Err(SimError::Config("api_token must not be empty".into()));
        }
        let mut faults = cfg.faults.clone();
        if let Some(n) = cfg.expire_sessions_every {
            if n == 0 {
                return Err(SimError::Config(
                    "expire_sessions_every must be at least 1".into(),
                ));
            }
            faults.push(HttpFault {
                kind: HttpFaultKind::ExpireSession,
                trigger: FaultTrigger::Every(n),
            });
        }
        let versions = if cfg.versions.is_empty() {
            array
                .rest_version()
                .map_or_else(default_versions, super::versions_up_to)
        } else {
            cfg.versions.clone()
        };
        if !versions.iter().any(|v| v.starts_with("2.")) {
            return Err(SimError::Config(format!(
                "versions must list at least one 2.x version, got {versions:?}"
            )));
        }
        let persister = match &cfg.state_file {
            Some(path) => {
                Some(
                    Persister::start(path, &array).map_err(|source| SimError::StateFile {
                        path: path.clone(),
                        source,
                    })?,
                )
            }
            None => None,
        };
        let listener = TcpListener::bind(cfg.listen)
            .await
            .map_err(|source| SimError::Bind {
                addr: cfg.listen,
                source,
            })?;
        let local_addr = listener.local_addr().map_err(|source| SimError::Bind {
            addr: cfg.listen,
            source,
        })?;
        let identity = if cfg.tls {
            Some(tls::self_signed(local_addr.ip(), cfg.http1_only)?)
        } else {
            None
        };
        let cert_pem = identity
            .as_ref()
            .map(|i| i.cert_pem.clone())
            .unwrap_or_default();
        let acceptor = identity.map(|i| TlsAcceptor::from(i.config));
        let state = Arc::new(SimState {
            array: Arc::new(array.clone()),
            mock: array,
            api_token: cfg.api_token.clone(),
            sessions: Sessions::new(cfg.session_ttl),
            faults: FaultPlan::new(faults),
            versions,
            accounts: Accounts::new(cfg.admin_password.clone()),
            api_clients: Default::default(),
            replication: Replication::default(),
            login_credentials: LoginCredentials::default(),
            tls: cfg.tls,
            recorder: Recorder::default(),
            http_latency: cfg.http_latency,
            connect_latency: cfg.connect_latency,
            http1_only: cfg.http1_only,
            header_timeout: cfg.header_timeout,
            body_timeout: cfg.body_timeout,
            idle_timeout: cfg.idle_timeout,
            logout_latency: cfg.logout_latency,
            persister,
        });
        let (stop_tx, stop_rx) = watch::channel(false);
        let task = tokio::spawn(accept_loop(listener, acceptor, state.clone(), stop_rx));
        let scheme = if cfg.tls { "https" } else { "http" };
        let host = if local_addr.ip().is_unspecified() {
            "127.0.0.1".to_string()
        } else {
            local_addr.ip().to_string()
        };
        let url = match local_addr {
            SocketAddr::V6(_) if !local_addr.ip().is_unspecified() => {
                format!("{scheme}://[{host}]:{}", local_addr.port())
            }
            _ => format!("{scheme}://{host}:{}", local_addr.port()),
        };
        tracing::info!(%url, tls = cfg.tls, "FlashArray simulator listening");
        Ok(RunningSim {
            url,
            local_addr,
            cert_pem,
            stop: stop_tx,
            task: Some(task),
            state,
        })
    }
}

/// A simulator that is serving. Dropping it stops accepting connections; call
/// [`RunningSim::shutdown`] to also wait for in-flight requests.
#[derive(Debug)]
pub struct RunningSim {
    url: String,
    local_addr: SocketAddr,
    cert_pem: String,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
    state: Arc<SimState>,
}

impl RunningSim {
    /// `https://127.0.0.1:PORT` (or `http://` without TLS).
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// The self-signed certificate in PEM form (SAN `127.0.0.1`, `localhost`), for
    /// clients that verify TLS; empty without TLS.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// Registers an API client, enabled, as `POST` then `PATCH /api-clients` would
    /// (see [`crate`]'s `api_clients`), with `name` as its issuer: for tests
    /// that log in as one. Returns its `id` and `key_id`, or why the array refused it.
    pub fn register_api_client(
        &self,
        name: &str,
        public_key_pem: &str,
        max_role: &str,
        access_token_ttl: Duration,
    ) -> Result<(String, String), String> {
        self.state
            .api_clients
            .register(name, public_key_pem, max_role, access_token_ttl)
    }

    /// The bound address (with the real port when port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// What the simulator served so far.
    pub fn stats(&self) -> SimStats {
        self.state.recorder.stats()
    }

    /// Every request served so far, in the order they ended.
    pub fn request_log(&self) -> Vec<RequestRecord> {
        self.state.recorder.log()
    }

    /// Forgets the counters and the log, so that a benchmark can measure one phase.
    pub fn reset_stats(&self) {
        self.state.recorder.reset();
    }

    /// Stops accepting, lets in-flight requests finish (up to a few seconds), then
    /// closes every connection, and saves the state file one last time (see
    /// [`SimConfig::state_file`]).
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        persist::final_save(&self.state).await;
    }
}

impl Drop for RunningSim {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: Option<TlsAcceptor>,
    state: Arc<SimState>,
    mut stop: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: back off briefly.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.changed() => break,
        };
        let _ = tcp.set_nodelay(true);
        let state = state.clone();
        let acceptor = acceptor.clone();
        let stop = stop.clone();
        connections.spawn(async move {
            let conn_id = state.recorder.connection();
            if !state.connect_latency.is_zero() {
                tokio::time::sleep(state.connect_latency).await;
            }
            match acceptor {
                Some(acceptor) => {
                    let handshake = acceptor.accept(tcp);
                    let done =
                        match state.header_timeout {
                            Some(limit) => tokio::time::timeout(limit, handshake)
                                .await
                                .unwrap_or_else(|_| {
                                    Err(std::io::Error::new(
                                        std::io::ErrorKind::TimedOut,
                                        "no TLS handshake within the header timeout",
                                    ))
                                }),
                            None => handshake.await,
                        };
                    match done {
                        Ok(tls) => {
                            state.recorder.handshake();
                            serve_connection(tls, conn_id, state, stop).await
                        }
                        Err(e) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                    }
                }
                None => serve_connection(tcp, conn_id, state, stop).await,
            }
        });
    }
    drop(listener);
    let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        connections.abort_all();
    }
}

async fn serve_connection<I>(
    io: I,
    conn_id: u64,
    state: Arc<SimState>,
    mut stop: watch::Receiver<bool>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let http1_only = state.http1_only;
    let header_timeout = state.header_timeout;
    let idle_timeout = state.idle_timeout;
    let (io, last_read) = Guarded::new(io);
    let in_flight = Arc::new(AtomicUsize::new(0));
    let busy = in_flight.clone();
    let service = service_fn(move |req| {
        let state = state.clone();
        let busy = busy.clone();
        async move {
            busy.fetch_add(1, Ordering::Relaxed);
            let answer = handle(state, conn_id, req).await;
            busy.fetch_sub(1, Ordering::Relaxed);
            answer
        }
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .keep_alive(true)
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    // HTTP/2 header lists as large as an HTTP/1.1 head may be, so that a long URL
    // reaches the handlers over both protocols (h2's default is 16 KiB). Targets
    // over 64 KiB cannot be represented by either (`sim::guard`).
    builder.http2().max_header_list_size(HEADER_LIST_LIMIT);
    if http1_only {
        builder = builder.http1_only();
    }
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = idle(last_read, in_flight, idle_timeout) => {
            tracing::debug!(conn_id, "closing an idle connection");
        }
        _ = stop.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

/// Resolves once the connection has had no request in progress and received
/// nothing for `limit` (never without a limit).
async fn idle(last_read: LastRead, in_flight: Arc<AtomicUsize>, limit: Option<Duration>) {
    let Some(limit) = limit else {
        return std::future::pending().await;
    };
    loop {
        let deadline = last_read.at() + limit;
        if std::time::Instant::now() >= deadline {
            if in_flight.load(Ordering::Relaxed) == 0 {
                return;
            }
            // A request is being answered: look again a little later.
            tokio::time::sleep(limit.min(Duration::from_secs(1))).await;
            continue;
        }
        tokio::time::sleep_until(deadline.into()).await;
    }
}

/// Returned to hyper to close the connection without answering.
#[derive(Debug)]
struct ConnectionDropped;

impl std::fmt::Display for ConnectionDropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped by fault injection")
    }
}

impl std::error::Error for ConnectionDropped {}

async fn handle(
    state: Arc<SimState>,
    conn_id: u64,
    req: Request<Incoming>,
) -> Result<Response<axum::body::Body>, ConnectionDropped> {
    let start = SystemTime::now();
    // The names hyper's Debug gives, without formatting them on every request.
    let version: std::borrow::Cow<'static, str> = match req.version() {
        hyper::Version::HTTP_2 => "HTTP/2.0".into(),
        hyper::Version::HTTP_11 => "HTTP/1.1".into(),
        other => format!("{other:?}").into(),
    };
    let request_id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 200)
        .map(str::to_string)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    if !state.http_latency.is_zero() {
        tokio::time::sleep(state.http_latency).await;
    }
    let routed = routes::route(&state, req).await;
    let (status, answer) = match persist::settle(&state, &method, routed).await {
        Ok(reply) | Err(Fail::Reply(reply)) => {
            tracing::debug!(%method, %path, status = reply.status.as_u16(), %request_id, "sim request");
            (reply.status.as_u16(), Ok(reply.into_response(&request_id)))
        }
        Err(Fail::Drop) => {
            tracing::debug!(%method, %path, %request_id, "sim request: connection dropped");
            (0, Err(ConnectionDropped))
        }
    };
    let record = RequestRecord {
        conn_id,
        method: method.to_string(),
        path,
        status,
        start,
        end: SystemTime::now(),
    };
    state.recorder.request(record, &version);
    answer
}
