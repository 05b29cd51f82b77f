//! Local admin accounts beyond their API tokens (which `token.rs` keeps): listing,
//! creating and deleting them, for `/admins`. Passwords are accepted by the
//! simulator's HTTP layer and never stored: nothing here logs in with them.

use flasharray::Result;

use crate::MockArray;
use crate::state::{BUILTIN_ADMIN, bad};

/// Admin names: 1-32 letters, digits, `-`, `_` and `.`, starting with a letter or
/// digit (Purity's rule for local users).
fn valid_admin_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
}

impl MockArray {
    /// Every local admin's name, the built-in one first.
    pub fn admin_names(&self) -> Vec<String> {
        let state = self.lock();
        let mut names = vec![BUILTIN_ADMIN.to_string()];
        names.extend(
            state
                .admins
                .values()
                .map(|a| a.name.clone())
                .filter(|n| !n.eq_ignore_ascii_case(BUILTIN_ADMIN)),
        );
        names
    }

    /// Creates a local admin; an existing name is refused.
    pub fn create_admin(&self, name: &str) -> Result<()> {
        if !valid_admin_name(name) {
            return Err(bad(name, "Invalid admin name."));
        }
        let mut state = self.lock();
        let key = name.to_ascii_lowercase();
        if key == BUILTIN_ADMIN || state.admins.contains_key(&key) {
            return Err(bad(name, "Admin already exists."));
        }
        state.add_admin(name);
        self.changed();
        Ok(())
    }

    /// Deletes a local admin and its API token; `pureuser` cannot be deleted.
    pub fn delete_admin(&self, name: &str) -> Result<()> {
        let key = name.to_ascii_lowercase();
        if key == BUILTIN_ADMIN {
            return Err(bad(name, "The built-in admin cannot be deleted."));
        }
        let removed = self.lock().admins.remove(&key);
        match removed {
            Some(_) => {
                self.changed();
                Ok(())
            }
            None => Err(bad(name, "Admin does not exist.")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_list_delete() {
        let mock = MockArray::new();
        mock.create_admin("ops-1").unwrap();
        assert!(
            mock.create_admin("OPS-1").is_err(),
            "names are case-insensitive"
        );
        assert!(mock.create_admin("pureuser").is_err());
        assert!(mock.create_admin("-bad").is_err());
        let names = mock.admin_names();
        assert_eq!(names[0], "pureuser");
        assert!(names.contains(&"ops-1".to_string()));
        mock.delete_admin("ops-1").unwrap();
        assert!(mock.delete_admin("ops-1").is_err());
        assert!(mock.delete_admin("pureuser").is_err());
        assert!(!mock.admin_names().contains(&"ops-1".to_string()));
    }
}
