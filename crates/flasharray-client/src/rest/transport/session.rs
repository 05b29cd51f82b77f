//! REST version choice and the session: an API token's or an API client's.
//!
//! The flow is the one Pure's SDK uses: `GET /api/api_version` (no credentials),
//! choose a version, then either `POST /api/2.N/login` with the `api-token` header,
//! keeping the `x-auth-token` answer header as the session, or, for an API client
//! ([`crate::rest::oauth`]), `POST /oauth2/1.0/token` with a fresh ID token, keeping
//! the access token, which calls carry as `Authorization: Bearer`. Either is a
//! "session" below. The session is created lazily by the first call; concurrent
//! first calls wait for one shared login.
//!
//! An access token whose lifetime the array stated (`expires_in`) is renewed once
//! shortly before it ends ([`refresh_margin`]): the first call that finds it due
//! leads the exchange while the others keep using the old token, still valid. A
//! failed renewal fails only the call that led it; the next call tries again while
//! the old token lasts, and a 401 on it is renewed like any refused session.
//!
//! Arrays may end sessions often. Each session has a generation; a call refused with
//! 401 asks for a session newer than the one it failed on, so however many calls see
//! the same expiry, exactly one login replaces it (single flight: the others wait for
//! it, and a failed login fails them all at once). The old session is never logged
//! out on renewal, since a logout could end the session other calls just received.
//! Three sessions in a row that die before serving anything end the call with
//! "the array ends every session".

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use reqwest::Method;
use secrecy::SecretString;
use serde::Deserialize;

use super::Transport;
use super::{Auth, Credential};
use crate::error::{Error, Result};
use crate::rest::query::Query;

/// A REST 2.x version (`2.N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiVersion {
    /// The `N` of `2.N`.
    pub minor: u32,
}

impl ApiVersion {
    /// Oldest version this client speaks: tags and API-token endpoints appear in 2.2.
    pub const MIN: ApiVersion = ApiVersion { minor: 2 };
    /// First version with `POST /volumes/batch`, whose items carry their own size
    /// and `tags` (Pure's SDK: `VolumeBatchPost` appears in the 2.32 models, with
    /// `tags`). Below it volumes of one call share one size and one set of tags.
    pub const VOLUME_BATCH: ApiVersion = ApiVersion { minor: 32 };
    /// First version whose create bodies (`POST /volumes`, `/hosts`, `/host-groups`,
    /// `/pods`) accept `tags` (Pure's SDK: `VolumePost.tags` etc. appear in the 2.39
    /// models). Below it the client creates, then tags in a second call.
    pub const TAGS_IN_CREATE: ApiVersion = ApiVersion { minor: 39 };
    /// First version with secure multi-tenancy: `/realms` and
    /// `/policies/management-access` (Pure's SDK: both appear in the 2.36 client,
    /// `FA_2_36`), and admins holding management access policies.
    pub const REALMS: ApiVersion = ApiVersion { minor: 36 };
    /// Newest version this client was written against (Pure's SDK 1.96 knows 2.58).
    pub const MAX: ApiVersion = ApiVersion { minor: 58 };

    /// Parses `2.N`; anything else (1.x, `2.DEV`) is `None`.
    pub fn parse(s: &str) -> Option<Self> {
        let rest = s.trim().strip_prefix("2.")?;
        if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        rest.parse().ok().map(|minor| ApiVersion { minor })
    }

    /// Whether this client speaks the version.
    pub fn is_supported(self) -> bool {
        (Self::MIN..=Self::MAX).contains(&self)
    }

    /// Picks the version to use from the array's list: the pinned one if the array
    /// offers it, else the highest 2.x both sides support. The list may hold 1.x
    /// entries, `2.DEV` and gaps; its order does not matter.
    pub fn choose(offered: &[String], pinned: Option<ApiVersion>) -> Result<ApiVersion> {
        let versions: Vec<ApiVersion> = offered.iter().filter_map(|s| Self::parse(s)).collect();
        if let Some(p) = pinned {
            return if versions.contains(&p) {
                Ok(p)
            } else {
                Err(Error::Version(format!(
                    "the array does not offer the pinned REST version {p} (it offers {})",
                    offered.join(", ")
                )))
            };
        }
        versions
            .into_iter()
            .filter(|v| v.is_supported())
            .max()
            .ok_or_else(|| {
                Error::Version(format!(
                    "no REST version in common: the array offers [{}], this client speaks {}..={}",
                    offered.join(", "),
                    Self::MIN,
                    Self::MAX
                ))
            })
    }
}

impl fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "2.{}", self.minor)
    }
}

/// A logged-in session. The token never leaves this type except into a header.
pub(crate) struct Session {
    pub(crate) version: ApiVersion,
    pub(crate) token: SecretString,
    /// An API client's access token (`Authorization: Bearer`), not an `x-auth-token`.
    bearer: bool,
    /// When to renew it ahead of its expiry; `None`: only when refused.
    refresh_at: Option<std::time::Instant>,
    /// Which login made it; a 401 names the generation it failed on, so that a
    /// session already replaced is never replaced again.
    pub(crate) generation: u64,
    /// Answers other than 401 received with it.
    served: AtomicU64,
    /// Requests sent with it and not answered yet.
    in_flight: AtomicU64,
}

impl Session {
    /// The header the session's token travels in.
    pub(crate) fn auth(&self) -> Auth<'_> {
        if self.bearer {
            Auth::Bearer(&self.token)
        } else {
            Auth::Session(&self.token)
        }
    }

    /// Its renewal time has come.
    fn refresh_due(&self) -> bool {
        self.refresh_at
            .is_some_and(|t| std::time::Instant::now() >= t)
    }

    /// Marks a request as sent with this session.
    pub(crate) fn start(&self) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
    }

    /// Marks a request sent with this session as answered (`refused`: by a 401).
    pub(crate) fn finish(&self, refused: bool) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        if !refused {
            self.served.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Served a call, or has one still on the way that may be served.
    pub(crate) fn served_any(&self) -> bool {
        self.served.load(Ordering::SeqCst) > 0 || self.in_flight.load(Ordering::SeqCst) > 0
    }

    /// Ended before anything could use it: nothing served, nothing still on the way.
    fn died_unused(&self) -> bool {
        !self.served_any()
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("version", &self.version)
            .field("generation", &self.generation)
            .field("bearer", &self.bearer)
            .field("token", &"[REDACTED]")
            .finish()
    }
}

/// What a login yields.
struct Login {
    version: ApiVersion,
    token: SecretString,
    bearer: bool,
    /// How long the array said the token lives.
    lifetime: Option<std::time::Duration>,
}

/// How long before its stated expiry an access token is renewed: a tenth of its
/// lifetime, at most a minute, so that a call sent just before the renewal still
/// arrives in time.
pub(crate) fn refresh_margin(lifetime: std::time::Duration) -> std::time::Duration {
    (lifetime / 10).min(std::time::Duration::from_secs(60))
}

/// Sessions that in a row ended before serving a single call; then the array is
/// taken to end every session (or the token's sessions) and the call fails.
const DEAD_STREAK_LIMIT: u32 = 3;
/// How long every call fails at once after such a streak before logins are tried
/// again.
const DEAD_STREAK_PAUSE: std::time::Duration = std::time::Duration::from_secs(10);

/// What the client remembers between calls. Guarded by a std mutex that is never
/// held across I/O: one caller (the leader) logs in, the others wait on `done`.
#[derive(Debug)]
pub(crate) struct SessionState {
    version: Option<ApiVersion>,
    current: Option<Arc<Session>>,
    /// Generation of the newest session (0: never logged in).
    generation: u64,
    /// A login is under way.
    logging_in: bool,
    /// Logins finished (successful or not); waiters watch it change.
    attempts: u64,
    /// The error of the last login attempt, for everyone who waited on it.
    last_failure: Option<Error>,
    dead_streak: u32,
    /// When `dead_streak` reached [`DEAD_STREAK_LIMIT`].
    dead_since: Option<std::time::Instant>,
    done: tokio::sync::watch::Sender<u64>,
}

impl Default for SessionState {
    fn default() -> Self {
        SessionState {
            version: None,
            current: None,
            generation: 0,
            logging_in: false,
            attempts: 0,
            last_failure: None,
            dead_streak: 0,
            dead_since: None,
            done: tokio::sync::watch::Sender::new(0),
        }
    }
}

/// Clears `logging_in` if the leader's future is dropped mid-login, so that a
/// waiter takes over instead of waiting forever.
struct LeaderGuard<'a> {
    state: &'a Mutex<SessionState>,
    armed: bool,
}

impl Drop for LeaderGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            let mut st = lock(self.state);
            st.logging_in = false;
            // Wake waiters without counting an attempt: they re-check and one leads.
            st.done.send_modify(|_| {});
        }
    }
}

/// What a caller asking for a session does next.
enum Step {
    /// Use this session.
    Use(Arc<Session>),
    /// Log in (with the version already chosen, if any); the caller is the leader.
    Lead(Option<ApiVersion>),
    /// Wait for the leader's login to finish (attempts seen so far).
    Wait(tokio::sync::watch::Receiver<u64>, u64),
}

fn lock(m: &Mutex<SessionState>) -> std::sync::MutexGuard<'_, SessionState> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[derive(Deserialize)]
struct VersionList {
    version: Vec<String>,
}

impl Transport {
    /// The current session, logging in first if there is none.
    pub(crate) async fn session(&self) -> Result<Arc<Session>> {
        self.session_after(None).await
    }

    /// A session newer than generation `failed` (which a 401 just refused), or the
    /// current one when `failed` is `None`. Concurrent callers share one login; a
    /// failed login fails every caller that waited for it. The old session is never
    /// logged out: other calls may still be using it.
    pub(crate) async fn session_after(&self, failed: Option<u64>) -> Result<Arc<Session>> {
        loop {
            let (mut rx, seen) = match self.next_step(failed)? {
                Step::Use(s) => return Ok(s),
                Step::Lead(version) => return self.lead_login(version).await,
                Step::Wait(rx, seen) => (rx, seen),
            };
            // Another caller is logging in: wait for it, then look again.
            let _ = rx.changed().await;
            let st = lock(&self.state);
            if let Some(cur) = &st.current
                && failed.is_none_or(|g| cur.generation > g)
            {
                return Ok(cur.clone());
            }
            if st.attempts > seen
                && let Some(e) = &st.last_failure
            {
                return Err(e.clone());
            }
        }
    }

    /// Decides, under the lock and without I/O, what a caller of
    /// [`Transport::session_after`] does next.
    fn next_step(&self, failed: Option<u64>) -> Result<Step> {
        let mut st = lock(&self.state);
        if let Some(cur) = st.current.clone() {
            if failed.is_none_or(|g| cur.generation > g) {
                // Due for renewal: one caller renews, the others go on with it.
                if !cur.refresh_due() || st.logging_in {
                    return Ok(Step::Use(cur));
                }
                st.logging_in = true;
                tracing::debug!(array = %self.base, generation = cur.generation, "access token due for renewal");
                return Ok(Step::Lead(st.version));
            }
            // The session the caller failed on is the current one: it is dead.
            st.dead_streak = if cur.died_unused() {
                st.dead_streak + 1
            } else {
                0
            };
            if st.dead_streak == DEAD_STREAK_LIMIT {
                st.dead_since = Some(std::time::Instant::now());
            }
            st.current = None;
            tracing::debug!(array = %self.base, generation = cur.generation, "session rejected (401); logging in again");
        }
        if st.logging_in {
            return Ok(Step::Wait(st.done.subscribe(), st.attempts));
        }
        if st.dead_streak >= DEAD_STREAK_LIMIT
            && st
                .dead_since
                .is_some_and(|t| t.elapsed() >= DEAD_STREAK_PAUSE)
        {
            // A long-lived client tries again once in a while.
            st.dead_streak = 0;
            st.dead_since = None;
        }
        if st.dead_streak >= DEAD_STREAK_LIMIT {
            return Err(Error::api(
                401,
                None,
                format!(
                    "the array ends every session before it can be used ({} sessions in a row were refused before serving a call)",
                    st.dead_streak
                ),
            ));
        }
        st.logging_in = true;
        Ok(Step::Lead(st.version))
    }

    /// Logs in as the one leader and publishes the outcome.
    async fn lead_login(&self, version: Option<ApiVersion>) -> Result<Arc<Session>> {
        let mut guard = LeaderGuard {
            state: &self.state,
            armed: true,
        };
        let result = self.login(version).await;
        guard.armed = false;
        let mut st = lock(&self.state);
        st.logging_in = false;
        st.attempts += 1;
        let out = match result {
            Ok(Login {
                version,
                token,
                bearer,
                lifetime,
            }) => {
                st.version = Some(version);
                st.generation += 1;
                let session = Arc::new(Session {
                    version,
                    token,
                    bearer,
                    refresh_at: lifetime
                        .map(|l| std::time::Instant::now() + l.saturating_sub(refresh_margin(l))),
                    generation: st.generation,
                    served: AtomicU64::new(0),
                    in_flight: AtomicU64::new(0),
                });
                tracing::debug!(array = %self.base, %version, generation = st.generation, "logged in");
                st.current = Some(session.clone());
                st.last_failure = None;
                Ok(session)
            }
            Err(e) => {
                st.last_failure = Some(e.clone());
                Err(e)
            }
        };
        st.done.send_replace(st.attempts);
        out
    }

    /// Negotiates the version (once) and logs in; no lock is held.
    async fn login(&self, version: Option<ApiVersion>) -> Result<Login> {
        let version = match version {
            Some(v) => v,
            None => self.negotiate().await?,
        };
        let api_token = match &self.credential {
            Credential::ApiToken(t) => t,
            Credential::ApiClient(client) => {
                let access = self.exchange(client).await?;
                return Ok(Login {
                    version,
                    token: access.token,
                    bearer: true,
                    lifetime: access.expires_in,
                });
            }
        };
        let path = format!("/api/{version}/login");
        let no_query = Query::new();
        // Only 429, 503 and "busy" are retried: a refused token (400, 401, 403) is
        // final for every waiter at once.
        let reply = self
            .with_retries(true, &path, || {
                self.send(
                    Method::POST,
                    &path,
                    &no_query,
                    None,
                    Auth::ApiToken(api_token),
                    false,
                )
            })
            .await?;
        let token = reply
            .headers
            .get("x-auth-token")
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| Error::Decode {
                operation: reply.operation.clone(),
                path: "x-auth-token (header)".into(),
                message: "the login answer carries no session token".into(),
            })?;
        Ok(Login {
            version,
            token: SecretString::from(token),
            bearer: false,
            lifetime: None,
        })
    }

    async fn negotiate(&self) -> Result<ApiVersion> {
        let path = "/api/api_version";
        let no_query = Query::new();
        let reply = self
            .with_retries(true, path, || {
                self.send(Method::GET, path, &no_query, None, Auth::None, false)
            })
            .await?;
        let list: VersionList = reply.decode()?;
        let v = ApiVersion::choose(&list.version, self.pinned)?;
        tracing::debug!(array = %self.base, version = %v, "REST version chosen");
        Ok(v)
    }

    /// Ends the session (`POST /logout`). The session is forgotten even if the array
    /// does not answer, so the next call logs in afresh. While a login is under way
    /// nothing is logged out: the new session belongs to a caller still running.
    pub(crate) async fn logout(&self) -> Result<()> {
        let session = {
            let mut st = lock(&self.state);
            if st.logging_in {
                return Ok(());
            }
            st.current.take()
        };
        let Some(session) = session else {
            return Ok(());
        };
        if session.bearer {
            // An access token has no logout (nor has Pure's SDK one): it is forgotten
            // and ends at its expiry.
            return Ok(());
        }
        let path = format!("/api/{}/logout", session.version);
        self.send(
            Method::POST,
            &path,
            &Query::new(),
            None,
            session.auth(),
            false,
        )
        .await
        .map(drop)
    }

    /// The REST version in use, once logged in.
    pub(crate) async fn api_version(&self) -> Option<ApiVersion> {
        lock(&self.state).version
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn highest_common_version_skipping_1x_gaps_and_dev() {
        let offered = list(&[
            "1.17", "1.19", "2.0", "2.1", "2.5", "2.13", "2.17", "2.26", "2.DEV",
        ]);
        assert_eq!(
            ApiVersion::choose(&offered, None).unwrap().to_string(),
            "2.26"
        );
        let future = list(&["2.26", "2.61", "2.70"]);
        assert_eq!(
            ApiVersion::choose(&future, None).unwrap().to_string(),
            "2.26"
        );
        assert!(matches!(
            ApiVersion::choose(&list(&["1.19", "2.0", "2.1"]), None),
            Err(Error::Version(_))
        ));
    }

    #[test]
    fn pinned_version_must_be_offered() {
        let offered = list(&["2.0", "2.21", "2.26"]);
        let pin = ApiVersion::parse("2.21");
        assert_eq!(ApiVersion::choose(&offered, pin).unwrap().minor, 21);
        let err = ApiVersion::choose(&offered, ApiVersion::parse("2.12")).unwrap_err();
        assert!(err.to_string().contains("2.12"), "{err}");
    }

    #[test]
    fn parse_rejects_non_2x() {
        assert_eq!(ApiVersion::parse("2.7"), Some(ApiVersion { minor: 7 }));
        assert_eq!(ApiVersion::parse("1.19"), None);
        assert_eq!(ApiVersion::parse("2.DEV"), None);
        assert_eq!(ApiVersion::parse("2."), None);
        assert_eq!(ApiVersion::parse("2.+1"), None);
    }
}
