//! Admins and their API tokens. One token per admin: a second POST is refused until
//! the first is deleted (the reference infers this from Ansible, `[M]`).

use std::time::Duration;

use flasharray::Result;
use flasharray::models::AdminApiToken;
use secrecy::SecretString;

use crate::state::{State, TokenRec, bad};

impl State {
    fn admin_key(&self, admin: &str) -> Result<String> {
        let k = admin.to_ascii_lowercase();
        if self.admins.contains_key(&k) {
            Ok(k)
        } else {
            Err(bad(admin, "Admin does not exist."))
        }
    }

    fn render_token(name: &str, t: &TokenRec, expose: bool) -> AdminApiToken {
        let mut admin_api_token = AdminApiToken::default();
        admin_api_token.name = name.to_string();
        admin_api_token.api_token.created_at = Some(t.created_at);
        admin_api_token.api_token.expires_at = t.expires_at;
        admin_api_token.api_token.token = expose.then(|| t.token.clone());
        admin_api_token
    }

    /// Admins with a token, all or the named ones (each must exist).
    pub(crate) fn list_api_tokens(
        &self,
        admins: &[String],
        expose: bool,
    ) -> Result<Vec<AdminApiToken>> {
        let keys: Vec<String> = if admins.is_empty() {
            self.admins.keys().cloned().collect()
        } else {
            admins
                .iter()
                .map(|a| self.admin_key(a))
                .collect::<Result<_>>()?
        };
        Ok(keys
            .iter()
            .filter_map(|k| self.admins.get(k))
            .filter_map(|a| {
                a.token
                    .as_ref()
                    .map(|t| Self::render_token(&a.name, t, expose))
            })
            .collect())
    }

    pub(crate) fn create_api_token(
        &mut self,
        now: u64,
        admin: &str,
        timeout: Option<Duration>,
    ) -> Result<AdminApiToken> {
        let k = self.admin_key(admin)?;
        // `timeout=0` is a token that never expires, as no timeout is: Pure's
        // Ansible collection sends it for every token made without a lifetime
        // (`purefa_user` `timeout` defaults to "0", converted to 0 ms, since
        // collection 1.34), so arrays accept it.
        let expires_at = timeout
            .filter(|d| !d.is_zero())
            .map(|d| now.saturating_add(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)));
        let rec = self
            .admins
            .get_mut(&k)
            .ok_or_else(|| bad(admin, "Admin does not exist."))?;
        if rec.token.is_some() {
            return Err(bad(
                admin,
                format!(
                    "API token already exists for admin {}; delete it before creating a new one.",
                    rec.name
                ),
            ));
        }
        let t = TokenRec {
            token: SecretString::from(uuid::Uuid::new_v4().to_string()),
            created_at: now,
            expires_at,
        };
        let out = Self::render_token(&rec.name, &t, true);
        rec.token = Some(t);
        Ok(out)
    }

    pub(crate) fn delete_api_token(&mut self, admin: &str) -> Result<()> {
        let k = self.admin_key(admin)?;
        let rec = self
            .admins
            .get_mut(&k)
            .ok_or_else(|| bad(admin, "Admin does not exist."))?;
        if rec.token.take().is_none() {
            return Err(bad(
                admin,
                format!("API token for admin {} does not exist.", rec.name),
            ));
        }
        Ok(())
    }

    /// The admin a token belongs to, if it is valid at `now` (for the simulator's login).
    pub(crate) fn token_owner(&self, token: &str, now: u64) -> Option<String> {
        use secrecy::ExposeSecret;
        self.admins.values().find_map(|a| {
            let t = a.token.as_ref()?;
            let matches = same_secret(t.token.expose_secret(), token);
            let live = t.expires_at.is_none_or(|e| e > now);
            (matches && live).then(|| a.name.clone())
        })
    }
}

/// Compares two secrets without stopping at the first differing byte, so that the
/// time a login takes says nothing about how much of a guessed token was right.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}
