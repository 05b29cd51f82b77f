//! Array connections (`/array-connections`) between simulators.
//!
//! Each simulator has a connection key (`GET /array-connections/connection-key`).
//! `POST /array-connections` on array A with B's management address and key makes
//! A call B over HTTPS (`POST /_sim/replication/connect`, outside the REST API, as
//! real arrays use their own replication protocol); B checks the key and records
//! the connection too, so both sides list it. The side that formed the connection
//! shows the `management_address` it was given; the other side shows none, which is
//! how Pure's Ansible collection tells them apart ("disconnect can only happen from
//! the array that formed the connection"). Disconnecting tells the peer with a
//! secret the two sides agreed on at connect time.
//!
//! Keys and link secrets are never logged; the connection key leaves the simulator
//! only through its own endpoint, as on an array.

use std::sync::{Mutex, MutexGuard, PoisonError};

use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};

/// The replication types a connection may have (REST 2.39 `type`).
pub(crate) const TYPES: &[&str] = &["async-replication", "sync-replication"];

/// One end of a connection, as this array sees it.
#[derive(Debug, Clone)]
pub(crate) struct Link {
    /// The connection's own id.
    pub(crate) id: String,
    /// The remote array's id and name (the connection's `name`).
    pub(crate) remote_id: String,
    pub(crate) remote_name: String,
    /// The remote's Purity version.
    pub(crate) remote_version: String,
    /// Where the remote answers: the address given on this side (the side that
    /// formed the connection) and the URL this simulator uses to reach the peer.
    pub(crate) management_address: Option<String>,
    pub(crate) peer_url: Option<String>,
    /// `async-replication` or `sync-replication`.
    pub(crate) kind: String,
    /// `ip` or `fc`.
    pub(crate) transport: String,
    /// Shared by both ends, to authenticate the peer's disconnect.
    pub(crate) secret: SecretString,
}

impl Link {
    /// The REST 2.39 `ArrayConnection` model; `context` is this array.
    pub(crate) fn render(&self, array: &Value) -> Value {
        json!({
            "id": self.id,
            "name": self.remote_name,
            "context": array,
            "encryption": "unencrypted",
            "encryption_mode": null,
            "management_address": self.management_address,
            "replication_addresses": [],
            "replication_transport": self.transport,
            "status": "connected",
            "throttle": {"default_limit": null, "window": null, "window_limit": null},
            "type": self.kind,
            "version": self.remote_version,
        })
    }
}

/// This array's connection key and connections.
#[derive(Debug)]
pub(crate) struct Replication {
    key: SecretString,
    links: Mutex<Vec<Link>>,
}

impl Default for Replication {
    fn default() -> Self {
        Replication {
            key: SecretString::from(uuid::Uuid::new_v4().to_string()),
            links: Mutex::new(Vec::new()),
        }
    }
}

pub(crate) fn same_secret(want: &str, got: &str) -> bool {
    let (w, g) = (want.as_bytes(), got.as_bytes());
    let mut diff = w.len() ^ g.len();
    for (i, b) in w.iter().enumerate() {
        diff |= usize::from(b ^ g.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

impl Replication {
    fn lock(&self) -> MutexGuard<'_, Vec<Link>> {
        self.links.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The key a remote array presents to connect to this one.
    pub(crate) fn key(&self) -> &str {
        self.key.expose_secret()
    }

    /// Whether `presented` is this array's connection key.
    pub(crate) fn key_matches(&self, presented: &str) -> bool {
        same_secret(self.key.expose_secret(), presented)
    }

    /// Every connection, by name.
    pub(crate) fn links(&self) -> Vec<Link> {
        let mut links = self.lock().clone();
        links.sort_by(|a, b| a.remote_name.cmp(&b.remote_name));
        links
    }

    /// The connection to the array of that name.
    pub(crate) fn by_name(&self, name: &str) -> Option<Link> {
        self.lock()
            .iter()
            .find(|l| l.remote_name.eq_ignore_ascii_case(name))
            .cloned()
    }

    /// Whether a connection to that array (by id) or management address exists.
    pub(crate) fn connected_to(&self, remote_id: Option<&str>, address: Option<&str>) -> bool {
        self.lock().iter().any(|l| {
            remote_id.is_some_and(|id| l.remote_id == id)
                || address.is_some_and(|a| l.management_address.as_deref() == Some(a))
        })
    }

    /// Records a connection; refused (false) when one to that array exists.
    pub(crate) fn add(&self, link: Link) -> bool {
        let mut links = self.lock();
        if links.iter().any(|l| l.remote_id == link.remote_id) {
            return false;
        }
        links.push(link);
        true
    }

    /// Changes a connection's type.
    pub(crate) fn set_kind(&self, id: &str, kind: &str) {
        if let Some(l) = self.lock().iter_mut().find(|l| l.id == id) {
            l.kind = kind.to_string();
        }
    }

    /// Removes the connection with that id.
    pub(crate) fn remove(&self, id: &str) {
        self.lock().retain(|l| l.id != id);
    }

    /// Removes the connection to `remote_id` when `secret` is the link's secret
    /// (the peer disconnecting); false if there is no such link.
    pub(crate) fn remove_by_peer(&self, remote_id: &str, secret: &str) -> bool {
        let mut links = self.lock();
        let before = links.len();
        links.retain(|l| {
            !(l.remote_id == remote_id && same_secret(l.secret.expose_secret(), secret))
        });
        links.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(remote: &str) -> Link {
        Link {
            id: uuid::Uuid::new_v4().to_string(),
            remote_id: format!("{remote}-id"),
            remote_name: remote.into(),
            remote_version: "6.7.0".into(),
            management_address: Some(format!("{remote}:443")),
            peer_url: None,
            kind: TYPES[0].into(),
            transport: "ip".into(),
            secret: SecretString::from("s".to_string()),
        }
    }

    #[test]
    fn one_connection_per_remote_and_peer_removal_needs_the_secret() {
        let r = Replication::default();
        assert!(r.key_matches(r.key()));
        assert!(!r.key_matches("other"));
        assert!(r.add(link("b")));
        assert!(!r.add(link("b")), "a second connection to the same array");
        assert!(r.connected_to(None, Some("b:443")));
        assert!(r.connected_to(Some("b-id"), None));
        assert!(!r.remove_by_peer("b-id", "wrong"));
        assert!(r.remove_by_peer("b-id", "s"));
        assert!(r.links().is_empty());
        let shown = format!("{r:?}");
        assert!(!shown.contains(r.key()), "the key is not in Debug");
    }
}
