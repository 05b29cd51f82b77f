//! Login sessions (`x-auth-token`).
//!
//! Session tokens are random (UUID v4 from the OS generator), live only in memory
//! and are never logged. A session ends at logout, after the configured TTL (counted
//! on the array's clock from login, so tests can move time instead of sleeping), or
//! when an `expire` fault ends it; the next request then gets 401 and the client is
//! expected to log in again.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// Why a request's session was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionRefusal {
    /// No `x-auth-token` header.
    Missing,
    /// A token this simulator never issued, or one that was logged out.
    Unknown,
    /// A token whose TTL has run out.
    Expired,
}

impl SessionRefusal {
    /// The message of the 401 answer.
    pub(crate) fn message(self) -> &'static str {
        match self {
            SessionRefusal::Missing => "Authentication required: missing x-auth-token header.",
            SessionRefusal::Unknown => "Invalid session token.",
            SessionRefusal::Expired => "Session expired.",
        }
    }
}

#[derive(Debug)]
struct Session {
    username: String,
    created_ms: u64,
}

/// Every live session of one simulator.
#[derive(Debug)]
pub(crate) struct Sessions {
    ttl: Option<Duration>,
    live: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    pub(crate) fn new(ttl: Option<Duration>) -> Self {
        Sessions {
            ttl,
            live: Mutex::new(HashMap::new()),
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts a session for `username` and returns its token.
    pub(crate) fn login(&self, username: &str, now_ms: u64) -> String {
        let token = uuid::Uuid::new_v4().to_string();
        self.live().insert(
            token.clone(),
            Session {
                username: username.to_string(),
                created_ms: now_ms,
            },
        );
        token
    }

    /// The user of a valid session; expired sessions are forgotten.
    pub(crate) fn check(&self, token: Option<&str>, now_ms: u64) -> Result<String, SessionRefusal> {
        let token = token.ok_or(SessionRefusal::Missing)?;
        let mut live = self.live();
        let session = live.get(token).ok_or(SessionRefusal::Unknown)?;
        if let Some(ttl) = self.ttl {
            let age = now_ms.saturating_sub(session.created_ms);
            if u128::from(age) >= ttl.as_millis() {
                live.remove(token);
                return Err(SessionRefusal::Expired);
            }
        }
        Ok(session.username.clone())
    }

    /// Ends a session (logout, or an `expire` fault). Unknown tokens are ignored.
    pub(crate) fn end(&self, token: &str) {
        self.live().remove(token);
    }

    /// Ends every session of a user (the user was deleted), so that one made again
    /// under the same name starts with none.
    pub(crate) fn end_user(&self, username: &str) {
        self.live()
            .retain(|_, s| !s.username.eq_ignore_ascii_case(username));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle() {
        let s = Sessions::new(Some(Duration::from_secs(60)));
        let t = s.login("pureuser", 1_000);
        assert_eq!(s.check(Some(&t), 1_000).unwrap(), "pureuser");
        assert_eq!(s.check(Some(&t), 60_999).unwrap(), "pureuser");
        assert_eq!(s.check(Some(&t), 61_000), Err(SessionRefusal::Expired));
        // once expired, the token is unknown
        assert_eq!(s.check(Some(&t), 61_000), Err(SessionRefusal::Unknown));
        assert_eq!(s.check(None, 0), Err(SessionRefusal::Missing));
        let t2 = s.login("pureuser", 0);
        assert_ne!(t, t2);
        s.end(&t2);
        assert_eq!(s.check(Some(&t2), 0), Err(SessionRefusal::Unknown));
    }

    #[test]
    fn no_ttl_never_expires() {
        let s = Sessions::new(None);
        let t = s.login("pureuser", 0);
        assert!(s.check(Some(&t), u64::MAX).is_ok());
    }
}
