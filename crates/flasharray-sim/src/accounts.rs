//! Classic local admin accounts as the simulator keeps them beside the mock's
//! admin list: role, password, SSH public key and lock state (`/admins`, and the
//! password login of REST 1.x `auth/apitoken`).
//!
//! Passwords live only in memory as [`SecretString`], are compared without an early
//! exit, and are never serialized, echoed or logged; they are not part of the mock's
//! saved state. `pureuser` has the password of [`super::SimConfig::admin_password`]
//! (none by default, so it cannot log in with a password).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use secrecy::{ExposeSecret, SecretString};

use flasharray_mock::BUILTIN_ADMIN;

/// The roles an admin may have (REST 2.x `role.name`).
pub(crate) const ROLES: &[&str] = &["readonly", "ops_admin", "storage_admin", "array_admin"];

/// One account's settings beyond its name (which the mock holds).
#[derive(Debug, Clone)]
pub(crate) struct Account {
    pub(crate) role: String,
    password: Option<SecretString>,
    pub(crate) public_key: Option<String>,
    pub(crate) locked: bool,
}

impl Account {
    fn blank() -> Account {
        Account {
            role: "storage_admin".into(),
            password: None,
            public_key: None,
            locked: false,
        }
    }
}

/// Why a password change was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PasswordRefusal {
    /// `old_password` is missing or is not the current password.
    OldPasswordWrong,
    /// The new password is empty.
    Empty,
}

/// Every classic account, keyed by lower-case name.
#[derive(Debug, Default)]
pub(crate) struct Accounts {
    by_name: Mutex<BTreeMap<String, Account>>,
}

fn same_secret(want: &str, got: &str) -> bool {
    let (w, g) = (want.as_bytes(), got.as_bytes());
    let mut diff = w.len() ^ g.len();
    for (i, b) in w.iter().enumerate() {
        diff |= usize::from(b ^ g.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

impl Accounts {
    /// The store with `pureuser` (array_admin) holding `admin_password`.
    pub(crate) fn new(admin_password: Option<SecretString>) -> Accounts {
        let accounts = Accounts::default();
        accounts.lock().insert(
            BUILTIN_ADMIN.to_string(),
            Account {
                role: "array_admin".into(),
                password: admin_password,
                public_key: None,
                locked: false,
            },
        );
        accounts
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Account>> {
        self.by_name.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a new account (the mock already accepted the name).
    pub(crate) fn create(&self, name: &str, role: &str, password: SecretString) {
        self.lock().insert(
            name.to_ascii_lowercase(),
            Account {
                role: role.to_string(),
                password: Some(password),
                public_key: None,
                locked: false,
            },
        );
    }

    /// Forgets a deleted account.
    pub(crate) fn remove(&self, name: &str) {
        self.lock().remove(&name.to_ascii_lowercase());
    }

    /// The account's settings; admins made another way (realm policy admins) get
    /// the defaults of an account without a password.
    pub(crate) fn get(&self, name: &str) -> Account {
        self.lock()
            .get(&name.to_ascii_lowercase())
            .cloned()
            .unwrap_or_else(Account::blank)
    }

    /// Applies `change` to the named account (created with defaults if the
    /// simulator did not know it yet).
    pub(crate) fn update(&self, name: &str, change: impl FnOnce(&mut Account)) {
        let mut map = self.lock();
        let entry = map
            .entry(name.to_ascii_lowercase())
            .or_insert_with(Account::blank);
        change(entry);
    }

    /// Sets a new password after checking the current one, as `PATCH /admins` does.
    pub(crate) fn change_password(
        &self,
        name: &str,
        old: Option<&str>,
        new: &str,
    ) -> Result<(), PasswordRefusal> {
        if new.is_empty() {
            return Err(PasswordRefusal::Empty);
        }
        let mut map = self.lock();
        let account = map
            .get_mut(&name.to_ascii_lowercase())
            .ok_or(PasswordRefusal::OldPasswordWrong)?;
        let current_ok = match (&account.password, old) {
            (Some(current), Some(old)) => same_secret(current.expose_secret(), old),
            _ => false,
        };
        if !current_ok {
            return Err(PasswordRefusal::OldPasswordWrong);
        }
        account.password = Some(SecretString::from(new.to_string()));
        Ok(())
    }

    /// Whether `password` is the unlocked account's password (the REST 1.x login).
    pub(crate) fn check_password(&self, name: &str, password: &str) -> bool {
        self.lock()
            .get(&name.to_ascii_lowercase())
            .is_some_and(|a| {
                !a.locked
                    && a.password
                        .as_ref()
                        .is_some_and(|p| same_secret(p.expose_secret(), password))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_checked_and_never_shown() {
        let a = Accounts::new(None);
        assert!(!a.check_password("pureuser", ""), "no password by default");
        a.create(
            "ops",
            "readonly",
            SecretString::from("first-pass".to_string()),
        );
        assert!(a.check_password("OPS", "first-pass"));
        assert!(!a.check_password("ops", "first-pas"));
        assert_eq!(
            a.change_password("ops", Some("wrong"), "second"),
            Err(PasswordRefusal::OldPasswordWrong)
        );
        assert_eq!(
            a.change_password("ops", None, "second"),
            Err(PasswordRefusal::OldPasswordWrong)
        );
        assert_eq!(
            a.change_password("ops", Some("first-pass"), ""),
            Err(PasswordRefusal::Empty)
        );
        a.change_password("ops", Some("first-pass"), "second")
            .unwrap();
        assert!(a.check_password("ops", "second"));
        a.update("ops", |acc| acc.locked = true);
        assert!(
            !a.check_password("ops", "second"),
            "a locked account cannot log in"
        );
        let shown = format!("{:?}", a.get("ops"));
        assert!(!shown.contains("second"), "{shown}");
        a.remove("ops");
        assert_eq!(a.get("ops").role, "storage_admin");
    }
}
