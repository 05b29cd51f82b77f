//! What `/healthz` and `/readyz` answer.
//!
//! - **Live** while the election loop (or, without election, the controller) has
//!   ticked within the stall limit: a wedged process is restarted.
//! - **Ready** when this replica either leads and its TenantStorage cache finished
//!   its first list (it reconciles from a complete view), or stands by having read
//!   the Lease within the lease duration (it can take over at once). A standby is
//!   ready on purpose: readiness gates rollouts, and a rollout must be able to
//!   replace the standby first; no traffic is routed to the controller anyway.
//!   Not ready while starting, while a new leader is still listing, or when the
//!   API server cannot be reached.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The role of this replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Not yet known (no successful Lease read).
    Starting,
    /// Another replica leads.
    Standby,
    /// This replica leads and reconciles.
    Leader,
}

/// Shared probe state of one controller process.
#[derive(Debug)]
pub struct Health {
    role: Mutex<Role>,
    synced: AtomicBool,
    last_tick: Mutex<Instant>,
    last_lease_read: Mutex<Option<Instant>>,
    /// A standby's Lease read older than this makes it unready.
    lease_duration: Duration,
    /// No tick for this long makes the process not live.
    stall: Duration,
}

impl Health {
    /// A starting process; `lease_duration` bounds how stale a standby's view may be.
    pub fn new(lease_duration: Duration) -> Self {
        Health {
            role: Mutex::new(Role::Starting),
            synced: AtomicBool::new(false),
            last_tick: Mutex::new(Instant::now()),
            last_lease_read: Mutex::new(None),
            lease_duration,
            stall: lease_duration
                .saturating_mul(4)
                .max(Duration::from_secs(30)),
        }
    }

    /// The current role.
    pub fn role(&self) -> Role {
        self.role.lock().map(|r| *r).unwrap_or(Role::Starting)
    }

    /// Whether this replica may reconcile now.
    pub fn is_leading(&self) -> bool {
        self.role() == Role::Leader
    }

    /// Enters `role`; a new leader starts unsynced.
    pub fn set_role(&self, role: Role) {
        if let Ok(mut r) = self.role.lock() {
            if *r != role {
                self.synced.store(false, Ordering::SeqCst);
            }
            *r = role;
        }
        self.tick();
    }

    /// The leader's cache finished its first list.
    pub fn set_synced(&self) {
        self.synced.store(true, Ordering::SeqCst);
    }

    /// The loop is alive.
    pub fn tick(&self) {
        if let Ok(mut t) = self.last_tick.lock() {
            *t = Instant::now();
        }
    }

    /// The Lease was read (or written) just now.
    pub fn lease_read(&self) {
        if let Ok(mut t) = self.last_lease_read.lock() {
            *t = Some(Instant::now());
        }
        self.tick();
    }

    /// `/healthz`: `Ok` or why not.
    pub fn live(&self) -> Result<(), String> {
        let since = self
            .last_tick
            .lock()
            .map(|t| t.elapsed())
            .unwrap_or(Duration::MAX);
        if since > self.stall {
            return Err(format!("no progress for {}s", since.as_secs()));
        }
        Ok(())
    }

    /// `/readyz`: `Ok(role)` or why not.
    pub fn ready(&self) -> Result<&'static str, String> {
        match self.role() {
            Role::Starting => Err("starting: the leader Lease was not read yet".into()),
            Role::Leader if self.synced.load(Ordering::SeqCst) => Ok("leader"),
            Role::Leader => Err("leading, the TenantStorage cache is still listing".into()),
            Role::Standby => {
                let fresh = self
                    .last_lease_read
                    .lock()
                    .ok()
                    .and_then(|t| *t)
                    .is_some_and(|t| t.elapsed() <= self.lease_duration);
                if fresh {
                    Ok("standby")
                } else {
                    Err("standby, but the leader Lease could not be read lately".into())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_when_leading_and_synced_or_standing_by() {
        let h = Health::new(Duration::from_secs(15));
        assert!(h.ready().is_err(), "starting");
        assert!(h.live().is_ok());
        h.set_role(Role::Leader);
        assert!(h.ready().is_err(), "leader still listing");
        h.set_synced();
        assert_eq!(h.ready(), Ok("leader"));
        h.set_role(Role::Standby);
        assert!(h.ready().is_err(), "standby without a Lease read");
        h.lease_read();
        assert_eq!(h.ready(), Ok("standby"));
        assert!(!h.is_leading());
    }
}
