//! The token journal on disk ([`px_topology::token_journal::TokenJournal`]): one JSON file per
//! array, tenant and user, `pxfa-token-<array>-<namespace>_<name>-<user>.json`, mode 0600 in
//! a 0700 folder, replaced atomically with the folder fsynced (`secret_file::write_private`).
//!
//! The entry is the tenant's, not the user's: it records the tenant's identity
//! (namespace and name), and an entry of another identity is never read, kept or
//! removed. An entry an earlier pxfa wrote (`pxfa-token-<array>-<user>.json`, no
//! identity) is still read, and removed once the token is delivered: the array holds
//! one token per user, so once this tenant's is delivered such an entry is spent.
//!
//! The folder is `--out DIR/.pxfa/` when the apply writes manifests (with a
//! `.gitignore` of `*`, so a committed `--out` folder never carries a token), else
//! the state folder: `--state-dir`, `$XDG_STATE_HOME/pxfa` or `~/.local/state/pxfa`.
//! Reading searches both, so a rerun with or without `--out` finds the entry; an
//! entry is removed from both once delivered.

use std::path::{Path, PathBuf};

use px_topology::TenantId;
use px_topology::files::{self, FileLock};
use px_topology::token_journal::{JournalEntry, JournalError, JournalState, TokenJournal};
use secrecy::{ExposeSecret, SecretString};
use serde_json::json;

/// The folder an `--out DIR` apply journals in.
pub(crate) const OUT_SUBDIR: &str = ".pxfa";

/// The journal of one array.
#[derive(Debug)]
pub(crate) struct FileTokenJournal {
    /// Where entries are written (first of `dirs`).
    dirs: Vec<PathBuf>,
    /// Names the array in file names (`sim`, or the address's host and port).
    array: String,
    /// The tenant's identity, `namespace/name`, recorded in every entry.
    tenant: String,
    /// The identity in file names, `namespace_name` (`_` is in neither part).
    tenant_file: String,
    /// A reader (`plan`) takes no lock and so leaves no lock file behind.
    read_only: bool,
}

/// The journals this process has locked: from their first use to the end of the
/// process (one command), so two runs never interleave one journal while any number
/// of [`FileTokenJournal`]s of this process share it.
static HELD: std::sync::Mutex<Vec<FileLock>> = std::sync::Mutex::new(Vec::new());

/// `$XDG_STATE_HOME/pxfa`, else `$HOME/.local/state/pxfa`; `None` without either.
pub(crate) fn default_state_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(x) = env("XDG_STATE_HOME").filter(|s| !s.is_empty()) {
        return Some(PathBuf::from(x).join("pxfa"));
    }
    env("HOME")
        .filter(|s| !s.is_empty())
        .map(|h| PathBuf::from(h).join(".local/state/pxfa"))
}

/// Only characters safe in a file name; everything else becomes `_`.
fn file_part(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

fn err(what: &str, path: &Path, e: impl std::fmt::Display) -> JournalError {
    JournalError::new(format!("{what} {}: {e}", path.display()))
}

impl FileTokenJournal {
    /// The journal of `tenant` on `array`, writing to the first of `dirs` and
    /// reading all of them.
    pub(crate) fn new(array: &str, tenant: &TenantId, dirs: Vec<PathBuf>) -> FileTokenJournal {
        FileTokenJournal {
            dirs,
            array: file_part(array),
            tenant: format!("{}/{}", tenant.namespace, tenant.name),
            tenant_file: file_part(&format!("{}_{}", tenant.namespace, tenant.name)),
            read_only: false,
        }
    }

    /// The same journal for a command that only reads it (`plan`): no lock taken.
    pub(crate) fn read_only(mut self) -> FileTokenJournal {
        self.read_only = true;
        self
    }

    /// Locks the journal of this array in `dir` (an existing folder) unless this
    /// process already does ([`HELD`]); a second pxfa on the same journal waits,
    /// then refuses.
    fn hold(&self, dir: &Path) -> Result<(), JournalError> {
        if self.read_only {
            return Ok(());
        }
        let target = dir.join(format!("pxfa-token-{}", self.array));
        let mut locks = HELD
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if locks
            .iter()
            .any(|l| l.path() == FileLock::path_for(&target))
        {
            return Ok(());
        }
        let lock = FileLock::acquire(&target, files::LOCK_WAIT, &mut |p| {
            tracing::warn!(
                "waiting for another pxfa process using the token journal ({})",
                p.display()
            );
        })
        .map_err(|e| JournalError::new(e.to_string()))?;
        locks.push(lock);
        Ok(())
    }

    /// The folder entries are written to.
    pub(crate) fn dir(&self) -> Option<&Path> {
        self.dirs.first().map(PathBuf::as_path)
    }

    fn file_in(&self, dir: &Path, user: &str) -> PathBuf {
        dir.join(format!(
            "pxfa-token-{}-{}-{}.json",
            self.array,
            self.tenant_file,
            file_part(user)
        ))
    }

    /// Where an earlier pxfa kept the entry of `user`, with no identity.
    fn unkeyed_file_in(&self, dir: &Path, user: &str) -> PathBuf {
        dir.join(format!(
            "pxfa-token-{}-{}.json",
            self.array,
            file_part(user)
        ))
    }

    /// Creates the write folder owner-only; an `--out` journal folder gets its
    /// `.gitignore`.
    /// Checks the folder entries are written to without changing anything: absent,
    /// or a real folder of the user running pxfa that only they can enter. `apply`
    /// runs this before its first array write, so a folder pxfa cannot use never
    /// surfaces after the array changed.
    pub(crate) fn check(&self) -> Result<(), JournalError> {
        let Some(dir) = self.dir() else {
            return Ok(());
        };
        if !px_topology::files::check_own_dir(dir)
            .map_err(|e| err("cannot use the token journal folder", dir, e))?
        {
            return Ok(());
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir)
                .map_err(|e| err("cannot read", dir, e))?
                .permissions()
                .mode();
            if mode & 0o077 != 0 {
                return Err(JournalError::new(format!(
                    "{} is open to other users (mode {:o}); the token journal needs an owner-only folder \
                     (chmod 700 it, or name another with --state-dir)",
                    dir.display(),
                    mode & 0o777
                )));
            }
        }
        Ok(())
    }

    fn prepare(&self) -> Result<&Path, JournalError> {
        let dir = self.dir().ok_or_else(|| {
            JournalError::new("no folder for the token journal (set --state-dir)")
        })?;
        // A missing folder is created owner-only. An existing one (a `--state-dir`
        // the admin named, or an `--out` folder's `.pxfa/`) must be a real folder of
        // the user running pxfa and is never chmod-ed: one open to others is refused.
        px_topology::files::ensure_own_dir(dir, 0o700)
            .map_err(|e| err("cannot use the token journal folder", dir, e))?;
        self.check()?;
        if dir.file_name().is_some_and(|n| n == OUT_SUBDIR) {
            let ignore = dir.join(".gitignore");
            // Not `exists()`: a dangling link there would be followed by a write.
            if std::fs::symlink_metadata(&ignore).is_err() {
                use std::io::Write as _;
                px_topology::files::create_new_file(&ignore, 0o644)
                    .and_then(|mut f| f.write_all(b"*\n"))
                    .map_err(|e| err("cannot write", &ignore, e))?;
            }
        }
        self.hold(dir)?;
        Ok(dir)
    }

    fn write(&self, user: &str, value: &serde_json::Value) -> Result<(), JournalError> {
        let dir = self.prepare()?;
        let path = self.file_in(dir, user);
        let bytes = serde_json::to_vec_pretty(value).map_err(|e| err("cannot encode", &path, e))?;
        crate::secret_file::write_private(&path, &bytes)
            .map_err(|e| err("cannot write", &path, format!("{e:#}")))
    }
}

/// The entry in `text` for `user` of `tenant` (`namespace/name`): `Err` when it is
/// no journal entry, `Ok(None)` when it is another tenant's.
fn parse(text: &str, user: &str, tenant: &str) -> Result<Option<JournalEntry>, ()> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|_| ())?;
    let field = |k: &str| v.get(k).ok_or(());
    if field("v")?.as_u64() != Some(1) {
        return Err(());
    }
    // No identity: an earlier pxfa's entry, read as this tenant's.
    if v.get("tenant").is_some_and(|t| t.as_str() != Some(tenant)) {
        return Ok(None);
    }
    if !field("user")?
        .as_str()
        .ok_or(())?
        .eq_ignore_ascii_case(user)
    {
        return Err(());
    }
    let state = match field("state")?.as_str() {
        Some("creating") => JournalState::Creating,
        Some("created") => JournalState::Created,
        _ => return Err(()),
    };
    Ok(Some(JournalEntry {
        user: user.to_string(),
        state,
        intent_at_ms: field("intent_at_ms")?.as_u64().ok_or(())?,
        created_at: v.get("created_at").and_then(serde_json::Value::as_u64),
        token: v
            .get("token")
            .and_then(serde_json::Value::as_str)
            .map(|t| SecretString::from(t.to_string())),
    }))
}

impl TokenJournal for FileTokenJournal {
    fn record_intent(&self, user: &str, at_ms: u64) -> Result<(), JournalError> {
        self.write(
            user,
            &json!({"v": 1, "array": self.array, "tenant": self.tenant, "user": user, "state": "creating",
                    "intent_at_ms": at_ms, "observed": "no-token"}),
        )
    }

    fn record_token(
        &self,
        user: &str,
        created_at: Option<u64>,
        token: &SecretString,
    ) -> Result<(), JournalError> {
        let intent_at_ms = self
            .load(user)?
            .map_or_else(px_topology::token_journal::now_ms, |e| e.intent_at_ms);
        self.write(
            user,
            &json!({"v": 1, "array": self.array, "tenant": self.tenant, "user": user, "state": "created",
                    "intent_at_ms": intent_at_ms, "created_at": created_at,
                    "token": token.expose_secret()}),
        )
    }

    fn delivered(&self, user: &str) -> Result<(), JournalError> {
        for dir in &self.dirs {
            for path in [self.file_in(dir, user), self.unkeyed_file_in(dir, user)] {
                if path == self.unkeyed_file_in(dir, user) && self.read(&path, user)?.is_none() {
                    continue;
                }
                match std::fs::remove_file(&path) {
                    Ok(()) => {
                        #[cfg(unix)]
                        std::fs::File::open(dir)
                            .and_then(|d| d.sync_all())
                            .map_err(|e| err("cannot sync", dir, e))?;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(err("cannot remove", &path, e)),
                }
            }
            // An `--out` journal folder that holds nothing more goes too.
            if dir.file_name().is_some_and(|n| n == OUT_SUBDIR) {
                let leftovers = |name: &std::ffi::OsStr| {
                    name == ".gitignore" || name.to_string_lossy().ends_with(".lock")
                };
                let only_ignore = std::fs::read_dir(dir)
                    .is_ok_and(|rd| rd.filter_map(Result::ok).all(|e| leftovers(&e.file_name())));
                if only_ignore {
                    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                        let _ = std::fs::remove_file(e.path());
                    }
                    let _ = std::fs::remove_dir(dir);
                }
            }
        }
        Ok(())
    }

    fn load(&self, user: &str) -> Result<Option<JournalEntry>, JournalError> {
        for dir in &self.dirs {
            if files::check_own_dir(dir).map_err(|e| err("cannot use", dir, e))? {
                self.hold(dir)?;
            }
            for path in [self.file_in(dir, user), self.unkeyed_file_in(dir, user)] {
                if let Some(e) = self.read(&path, user)? {
                    return Ok(Some(e));
                }
            }
        }
        Ok(None)
    }
}

impl FileTokenJournal {
    /// The entry of `user` in `path` if it is this tenant's (`None`: no file, or
    /// another tenant's entry).
    fn read(&self, path: &Path, user: &str) -> Result<Option<JournalEntry>, JournalError> {
        match files::read_input_text(path, files::InputKind::Credentials) {
            Ok(text) => parse(&text, user, &self.tenant).map_err(|()| {
                err(
                    "unreadable entry in",
                    path,
                    "not a pxfa token journal entry",
                )
            }),
            Err(files::FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(err("cannot read", path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(namespace: &str) -> TenantId {
        TenantId::new(namespace, "dev")
    }

    #[test]
    fn entries_are_the_tenants_not_the_users() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        let a = FileTokenJournal::new("sim", &dev("team-a"), vec![dir.clone()]);
        let b = FileTokenJournal::new("sim", &dev("team-b"), vec![dir.clone()]);
        a.record_token("pxfa-dev", Some(9), &SecretString::from("tok-a"))
            .unwrap();
        // team-b/dev, whose token user has the same name, neither sees nor removes it.
        assert!(b.load("pxfa-dev").unwrap().is_none());
        b.delivered("pxfa-dev").unwrap();
        let kept = a.load("pxfa-dev").unwrap().unwrap();
        assert_eq!(kept.token.unwrap().expose_secret(), "tok-a");
        // An earlier pxfa's entry (no identity) is still found, and goes once delivered.
        a.delivered("pxfa-dev").unwrap();
        std::fs::write(
            dir.join("pxfa-token-sim-pxfa-dev.json"),
            r#"{"v":1,"array":"sim","user":"pxfa-dev","state":"creating","intent_at_ms":5}"#,
        )
        .unwrap();
        assert_eq!(a.load("pxfa-dev").unwrap().unwrap().intent_at_ms, 5);
        a.delivered("pxfa-dev").unwrap();
        assert!(a.load("pxfa-dev").unwrap().is_none());
    }

    #[test]
    fn entries_round_trip_owner_only_and_go_when_delivered() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out").join(OUT_SUBDIR);
        let state = tmp.path().join("state");
        let v = FileTokenJournal::new(
            "https://fa1:8443",
            &dev("team-a"),
            vec![out.clone(), state.clone()],
        );
        v.record_intent("px-User", 7).unwrap();
        let e = v.load("px-user").unwrap().unwrap();
        assert_eq!(e.state, JournalState::Creating);
        assert_eq!(e.intent_at_ms, 7);
        v.record_token("px-user", Some(9), &SecretString::from("tok-1"))
            .unwrap();
        let e = v.load("px-user").unwrap().unwrap();
        assert_eq!(e.state, JournalState::Created);
        assert_eq!((e.intent_at_ms, e.created_at), (7, Some(9)));
        assert_eq!(e.token.unwrap().expose_secret(), "tok-1");
        assert_eq!(
            std::fs::read_to_string(out.join(".gitignore")).unwrap(),
            "*\n"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&out), 0o700);
            let file = std::fs::read_dir(&out)
                .unwrap()
                .filter_map(Result::ok)
                .find(|f| f.file_name().to_string_lossy().starts_with("pxfa-token-"))
                .unwrap();
            assert_eq!(mode(&file.path()), 0o600);
        }
        // A second journal reading only the state folder does not see the --out entry;
        // one reading both does.
        assert!(
            FileTokenJournal::new("https://fa1:8443", &dev("team-a"), vec![state.clone()])
                .load("px-user")
                .unwrap()
                .is_none()
        );
        assert!(
            FileTokenJournal::new("https://fa1:8443", &dev("team-a"), vec![state, out.clone()])
                .load("px-user")
                .unwrap()
                .is_some()
        );
        // Another array's journal is another file.
        assert!(
            FileTokenJournal::new("sim", &dev("team-a"), vec![out.clone()])
                .load("px-user")
                .unwrap()
                .is_none()
        );
        v.delivered("px-user").unwrap();
        assert!(v.load("px-user").unwrap().is_none());
        assert!(!out.exists(), "the empty journal folder stays");
    }

    #[cfg(unix)]
    #[test]
    fn an_open_folder_is_refused_not_chmodded() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = FileTokenJournal::new("sim", &dev("team-a"), vec![open.clone()])
            .record_intent("u", 1)
            .unwrap_err();
        assert!(e.to_string().contains("open to other users"), "{e}");
        assert_eq!(
            std::fs::metadata(&open).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert_eq!(std::fs::read_dir(&open).unwrap().count(), 0);
    }

    #[test]
    fn state_dir_follows_xdg_then_home() {
        let env = |k: &str| match k {
            "XDG_STATE_HOME" => Some("/x".to_string()),
            "HOME" => Some("/h".to_string()),
            _ => None,
        };
        assert_eq!(default_state_dir(&env), Some(PathBuf::from("/x/pxfa")));
        let home = |k: &str| (k == "HOME").then(|| "/h".to_string());
        assert_eq!(
            default_state_dir(&home),
            Some(PathBuf::from("/h/.local/state/pxfa"))
        );
        assert_eq!(default_state_dir(&|_| None), None);
    }
}
