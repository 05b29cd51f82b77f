//! REST version choice and the API-token session.
//!
//! The flow is the one Pure's SDK uses: `GET /api/api_version` (no credentials),
//! choose a version, `POST /api/2.N/login` with the `api-token` header and keep the
//! `x-auth-token` answer header as the session. The session is created lazily by the
//! first call; concurrent first calls wait for one shared login. After a 401 the
//! session is replaced once by whichever caller notices first; the others reuse the
//! replacement instead of logging in again.

use std::fmt;
use std::sync::Arc;

use reqwest::Method;
use secrecy::SecretString;
use serde::Deserialize;

use super::Auth;
use super::Transport;
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
    /// First version whose create bodies (`POST /volumes`, `/hosts`, `/host-groups`,
    /// `/pods`) accept `tags` (Pure's SDK: `VolumePost.tags` etc. appear in the 2.39
    /// models). Below it the client creates, then tags in a second call.
    pub const TAGS_IN_CREATE: ApiVersion = ApiVersion { minor: 39 };
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
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("version", &self.version)
            .field("token", &"[REDACTED]")
            .finish()
    }
}

/// What the client remembers between calls.
#[derive(Debug, Default)]
pub(crate) struct SessionState {
    pub(crate) version: Option<ApiVersion>,
    pub(crate) session: Option<Arc<Session>>,
}

#[derive(Deserialize)]
struct VersionList {
    version: Vec<String>,
}

impl Transport {
    /// The current session, logging in first if there is none.
    pub(crate) async fn session(&self) -> Result<Arc<Session>> {
        let mut state = self.state.lock().await;
        if let Some(s) = &state.session {
            return Ok(s.clone());
        }
        self.login_locked(&mut state).await
    }

    /// Replaces `stale` after a 401, unless another caller already did.
    pub(crate) async fn renew(&self, stale: &Arc<Session>) -> Result<Arc<Session>> {
        let mut state = self.state.lock().await;
        if let Some(current) = &state.session
            && !Arc::ptr_eq(current, stale)
        {
            return Ok(current.clone());
        }
        state.session = None;
        tracing::debug!(array = %self.base, "session rejected (401); logging in again");
        self.login_locked(&mut state).await
    }

    async fn login_locked(&self, state: &mut SessionState) -> Result<Arc<Session>> {
        let version = match state.version {
            Some(v) => v,
            None => {
                let v = self.negotiate().await?;
                state.version = Some(v);
                v
            }
        };
        let path = format!("/api/{version}/login");
        let no_query = Query::new();
        let reply = self
            .with_retries(true, &path, || {
                self.send(
                    Method::POST,
                    &path,
                    &no_query,
                    None,
                    Auth::ApiToken(&self.api_token),
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
        let session = Arc::new(Session {
            version,
            token: SecretString::from(token),
        });
        tracing::debug!(array = %self.base, %version, "logged in");
        state.session = Some(session.clone());
        Ok(session)
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
    /// does not answer, so the next call logs in afresh.
    pub(crate) async fn logout(&self) -> Result<()> {
        let session = self.state.lock().await.session.take();
        let Some(session) = session else {
            return Ok(());
        };
        let path = format!("/api/{}/logout", session.version);
        self.send(
            Method::POST,
            &path,
            &Query::new(),
            None,
            Auth::Session(&session.token),
            false,
        )
        .await
        .map(drop)
    }

    /// The REST version in use, once logged in.
    pub(crate) async fn api_version(&self) -> Option<ApiVersion> {
        self.state.lock().await.version
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
