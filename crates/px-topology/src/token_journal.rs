//! The token write-ahead journal: an array shows an API token's value only once, in
//! the answer that creates it, so a run killed between creating the token and
//! delivering it (to a file or a cluster secret) would leave a token nobody has.
//!
//! The converge engine writes to a [`TokenJournal`] around the one call that creates a
//! token: *intent* before `POST /admins/api-tokens`, the *token* right after its
//! answer (no other await in between), and the caller marks it *delivered* once a
//! durable copy exists (the entry then goes). The next run reads the entry back
//! ([`read_journal`]) and the plan acts on it:
//!
//! | journal | array | plan |
//! |---|---|---|
//! | none | any | as without a journal |
//! | `creating` | no token | create (the intent is overwritten) |
//! | `creating` | a token created in the intent's window | replace it: it is provably ours and its value never left the array |
//! | `created`, same `created_at` | that token | deliver it from the journal, no array write |
//! | anything else | | stale: ignored, overwritten by the next intent |
//!
//! The planner does no I/O: the token journal is the caller's (a 0600 file in the CLI,
//! [`MemTokenJournal`] in tests, and in the controller a [`MemTokenJournal`] whose
//! [`TokenJournal`] hooks copy it to a Secret before and after the apply).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use secrecy::SecretString;

use crate::desired::DesiredState;
use crate::plan::{JournalVerdict, Observed, TokenState};

/// How long before the recorded intent a token's `created_at` may lie and still be
/// this run's: the array's clock and this machine's may differ.
pub(crate) const CLOCK_SKEW_MS: u64 = 10 * 60 * 1000;
/// How long after the intent the creating call may still have landed: request
/// timeout and retries, plus the clock skew.
pub(crate) const CREATE_WINDOW_MS: u64 = 20 * 60 * 1000;

/// Where an entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalState {
    /// The intent is recorded; the create call may or may not have reached the array.
    Creating,
    /// The array answered: the entry holds the token and its `created_at`.
    Created,
}

/// One user's journal entry.
#[derive(Debug, Clone)]
pub struct JournalEntry {
    /// The array user the token is for.
    pub user: String,
    /// Where the entry stands.
    pub state: JournalState,
    /// When the intent was recorded (ms since the epoch, this machine's clock).
    pub intent_at_ms: u64,
    /// The token's creation time as the array answered.
    pub created_at: Option<u64>,
    /// The token (only in [`JournalState::Created`]); `Debug` shows no value.
    pub token: Option<SecretString>,
}

/// A journal that cannot be read or written. Creating a token is refused when the
/// intent cannot be recorded.
#[derive(Debug)]
pub struct JournalError {
    message: String,
    /// The journal's own error, kept whole for the adapter that made the journal
    /// (see [`JournalError::downcast`]).
    inner: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl JournalError {
    /// An error the message says all of ("token journal: " goes before it).
    pub fn new(message: impl Into<String>) -> Self {
        JournalError {
            message: message.into(),
            inner: None,
        }
    }

    /// A journal's own error (the controller's Secret: a conflict, an API
    /// failure), shown as it is and handed back whole by [`JournalError::downcast`].
    pub fn other(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        JournalError {
            message: error.to_string(),
            inner: Some(Box::new(error)),
        }
    }

    /// The error [`JournalError::other`] was made of, when it is an `E`.
    pub fn downcast<E: std::error::Error + 'static>(self) -> Result<E, Self> {
        match self.inner.map(|b| b.downcast::<E>()) {
            Some(Ok(e)) => Ok(*e),
            Some(Err(inner)) => Err(JournalError {
                message: self.message,
                inner: Some(inner),
            }),
            None => Err(JournalError {
                message: self.message,
                inner: None,
            }),
        }
    }
}

impl fmt::Display for JournalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.inner.is_some() {
            // The journal's own error names the journal.
            f.write_str(&self.message)
        } else {
            write!(f, "token journal: {}", self.message)
        }
    }
}

impl std::error::Error for JournalError {}

/// The token journal, one entry per array user: the one trait every journal
/// implements (the CLI's 0600 file, the controller's Secret over this process's
/// memory, [`MemTokenJournal`] in tests), and the only place the pipeline keeps a
/// token it created before the token reached the tenant.
///
/// Two halves. The entries: every method is synchronous so that recording the
/// token right after the create answer involves no await (a cancelled future
/// cannot fall between the two). Their durable copy: asynchronous hooks the
/// pipeline ([`crate::Planned::apply`], [`crate::Applied::token_delivered`]) calls
/// around the array apply, for a journal whose entries live in memory and are
/// copied elsewhere (the controller's Secret); a journal durable by itself (a file
/// synced on every write) keeps their defaults, which do nothing.
///
/// The rule every journal keeps: the token is kept (the intent durable before the
/// create call, the token durable before anyone is given it), and the journal lets
/// go only once the token was delivered.
///
/// A journal keeps its entries one of two ways: itself, implementing the four entry
/// methods (the CLI's file, [`MemTokenJournal`]), or in this process's memory,
/// answering [`TokenJournal::memory`] and implementing only the hooks that copy it
/// (the controller's Secret, tests' recorders): the entry methods then forward to
/// that memory. A journal that does neither has no entries: its entry methods fail.
#[async_trait]
pub trait TokenJournal: Send + Sync + fmt::Debug {
    /// The in-memory entries the entry methods forward to, for a journal whose
    /// hooks copy them elsewhere; `None` (the default) for a journal that keeps its
    /// entries itself.
    fn memory(&self) -> Option<&MemTokenJournal> {
        None
    }

    /// Before the create call: `user` is about to get a token (the plan saw none).
    fn record_intent(&self, user: &str, at_ms: u64) -> Result<(), JournalError> {
        memory_of(self)?.record_intent(user, at_ms)
    }
    /// The array's answer: the token and its creation time.
    fn record_token(
        &self,
        user: &str,
        created_at: Option<u64>,
        token: &SecretString,
    ) -> Result<(), JournalError> {
        memory_of(self)?.record_token(user, created_at, token)
    }
    /// A durable copy exists elsewhere: the entry is removed.
    fn delivered(&self, user: &str) -> Result<(), JournalError> {
        memory_of(self)?.delivered(user)
    }
    /// The entry of `user`, if any.
    fn load(&self, user: &str) -> Result<Option<JournalEntry>, JournalError> {
        memory_of(self)?.load(user)
    }

    /// Before the first array write of a plan that creates `user`'s token: the
    /// intent is durable, or the apply does not start.
    async fn persist_intent(&self, user: &str) -> Result<(), JournalError> {
        let _ = user;
        Ok(())
    }

    /// After the apply, however it ended: a token it created for `user` is durable
    /// before anyone is given it.
    async fn persist_token(&self, user: &str) -> Result<(), JournalError> {
        let _ = user;
        Ok(())
    }

    /// After [`TokenJournal::delivered`]: the durable copy of `user`'s entry goes.
    async fn persist_delivered(&self, user: &str) -> Result<(), JournalError> {
        let _ = user;
        Ok(())
    }

    /// Whether a complete run that had nothing pending (no entry, or a stale one)
    /// lets the entry go: a copy kept outside the run (the controller's Secret)
    /// would otherwise hold a stale entry forever; a file keeps it until the next
    /// intent overwrites it.
    fn drops_stale_entries(&self) -> bool {
        false
    }
}

/// The memory a journal's entry methods forward to (see [`TokenJournal::memory`]).
fn memory_of<J: TokenJournal + ?Sized>(journal: &J) -> Result<&MemTokenJournal, JournalError> {
    journal.memory().ok_or_else(|| {
        JournalError::new(format!(
            "{journal:?} keeps no entries (neither its own nor in memory)"
        ))
    })
}

/// This machine's clock in ms since the epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// What the journal says about the observed token: the pure decision of the table
/// in the module text.
pub fn classify(
    entry: Option<&JournalEntry>,
    token: TokenState,
    created_at: Option<u64>,
) -> JournalVerdict {
    let Some(e) = entry else {
        return JournalVerdict::None;
    };
    match (e.state, token) {
        (JournalState::Created, TokenState::HasToken)
            if e.token.is_some() && e.created_at.is_some() && e.created_at == created_at =>
        {
            JournalVerdict::PendingDelivery
        }
        (JournalState::Creating, TokenState::HasToken)
            if created_at.is_some_and(|c| {
                c >= e.intent_at_ms.saturating_sub(CLOCK_SKEW_MS)
                    && c <= e.intent_at_ms.saturating_add(CREATE_WINDOW_MS)
            }) =>
        {
            JournalVerdict::Interrupted
        }
        _ => JournalVerdict::Stale,
    }
}

/// Reads the journal entry of the desired token user and records in `observed` what
/// it means for the plan (see [`classify`]). Nothing is read when the desired state
/// wants no token.
pub fn read_journal(
    token_journal: &dyn TokenJournal,
    desired: &DesiredState,
    observed: &mut Observed,
) -> Result<(), JournalError> {
    let Some(t) = &desired.api_token else {
        return Ok(());
    };
    let entry = token_journal.load(&t.admin)?;
    observed.token_journal = classify(entry.as_ref(), observed.token, observed.token_created_at);
    Ok(())
}

/// A token_journal step, for [`MemTokenJournal::crash_after`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalStep {
    /// [`TokenJournal::record_intent`].
    Intent,
    /// [`TokenJournal::record_token`].
    Token,
    /// [`TokenJournal::delivered`].
    Delivered,
}

/// Runs after a token journal step took effect; a test kills the process there (panics the
/// task the apply runs in).
pub(crate) type CrashHook = Box<dyn Fn(JournalStep) + Send + Sync>;

/// An in-memory token journal for tests, with a hook after every step. Clones share the
/// entries, as a file on disk would be shared by two runs.
#[derive(Clone, Default)]
pub struct MemTokenJournal {
    entries: Arc<Mutex<BTreeMap<String, JournalEntry>>>,
    hook: Arc<Mutex<Option<CrashHook>>>,
}

impl fmt::Debug for MemTokenJournal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemTokenJournal")
            .field("entries", &self.lock().len())
            .finish_non_exhaustive()
    }
}

impl MemTokenJournal {
    /// An empty journal held in memory: nothing in it outlives the process.
    pub fn new() -> Self {
        MemTokenJournal::default()
    }

    /// Panics right after `step` took effect, once: what a killed process leaves.
    pub fn crash_after(&self, step: JournalStep) {
        let fired = Arc::new(std::sync::atomic::AtomicBool::new(false));
        self.set_hook(Box::new(move |s| {
            if s == step && !fired.swap(true, std::sync::atomic::Ordering::SeqCst) {
                panic!("killed after token_journal step {s:?}");
            }
        }));
    }

    /// Calls `hook` after every step.
    pub fn set_hook(&self, hook: CrashHook) {
        *self.hook.lock().unwrap_or_else(|p| p.into_inner()) = Some(hook);
    }

    /// Puts `entry` in place as it is: the caller's durable copy of the journal (the
    /// controller's journal Secret) read back into this process. Not a token journal step.
    pub fn restore(&self, entry: JournalEntry) {
        self.lock().insert(entry.user.to_ascii_lowercase(), entry);
    }

    /// Removes the hook.
    pub fn clear_hook(&self) {
        *self.hook.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, JournalEntry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn after(&self, step: JournalStep) {
        if let Some(h) = self.hook.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            h(step);
        }
    }
}

impl TokenJournal for MemTokenJournal {
    fn record_intent(&self, user: &str, at_ms: u64) -> Result<(), JournalError> {
        self.lock().insert(
            user.to_ascii_lowercase(),
            JournalEntry {
                user: user.to_string(),
                state: JournalState::Creating,
                intent_at_ms: at_ms,
                created_at: None,
                token: None,
            },
        );
        self.after(JournalStep::Intent);
        Ok(())
    }

    fn record_token(
        &self,
        user: &str,
        created_at: Option<u64>,
        token: &SecretString,
    ) -> Result<(), JournalError> {
        {
            let mut m = self.lock();
            let intent_at_ms = m
                .get(&user.to_ascii_lowercase())
                .map_or_else(now_ms, |e| e.intent_at_ms);
            m.insert(
                user.to_ascii_lowercase(),
                JournalEntry {
                    user: user.to_string(),
                    state: JournalState::Created,
                    intent_at_ms,
                    created_at,
                    token: Some(token.clone()),
                },
            );
        }
        self.after(JournalStep::Token);
        Ok(())
    }

    fn delivered(&self, user: &str) -> Result<(), JournalError> {
        self.lock().remove(&user.to_ascii_lowercase());
        self.after(JournalStep::Delivered);
        Ok(())
    }

    fn load(&self, user: &str) -> Result<Option<JournalEntry>, JournalError> {
        Ok(self.lock().get(&user.to_ascii_lowercase()).cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A journal copied elsewhere: only `memory`, and its entries are that memory's.
    #[derive(Debug, Default)]
    struct Copied {
        entries: MemTokenJournal,
    }

    impl TokenJournal for Copied {
        fn memory(&self) -> Option<&MemTokenJournal> {
            Some(&self.entries)
        }
    }

    /// Neither its own entries nor a memory.
    #[derive(Debug)]
    struct Nothing;

    impl TokenJournal for Nothing {}

    #[test]
    fn entry_methods_forward_to_the_journals_memory() {
        let j = Copied::default();
        let t = SecretString::from("tok".to_string());
        j.record_intent("px-a", 5).unwrap();
        j.record_token("px-a", Some(7), &t).unwrap();
        let e = j.entries.load("PX-A").unwrap().expect("in the memory");
        assert_eq!(
            (e.state, e.intent_at_ms, e.created_at),
            (JournalState::Created, 5, Some(7))
        );
        assert_eq!(
            j.load("px-a").unwrap().map(|e| e.user),
            Some("px-a".to_string())
        );
        j.delivered("px-a").unwrap();
        assert!(j.entries.load("px-a").unwrap().is_none());
    }

    #[test]
    fn a_journal_without_entries_refuses_to_record() {
        let e = Nothing.record_intent("px-a", 1).unwrap_err();
        assert!(e.to_string().contains("keeps no entries"), "{e}");
        assert!(Nothing.load("px-a").is_err());
    }

    fn entry(state: JournalState, intent: u64, created_at: Option<u64>) -> JournalEntry {
        JournalEntry {
            user: "u".into(),
            state,
            intent_at_ms: intent,
            created_at,
            token: (state == JournalState::Created).then(|| SecretString::from("t")),
        }
    }

    #[test]
    fn the_table() {
        use JournalState::*;
        use TokenState::*;
        let at = 100 * CREATE_WINDOW_MS;
        assert_eq!(classify(None, HasToken, Some(at)), JournalVerdict::None);
        let creating = entry(Creating, at, None);
        assert_eq!(
            classify(Some(&creating), NoToken, None),
            JournalVerdict::Stale
        );
        for c in [at - CLOCK_SKEW_MS, at, at + CREATE_WINDOW_MS] {
            assert_eq!(
                classify(Some(&creating), HasToken, Some(c)),
                JournalVerdict::Interrupted,
                "{c}"
            );
        }
        for c in [at - CLOCK_SKEW_MS - 1, at + CREATE_WINDOW_MS + 1] {
            assert_eq!(
                classify(Some(&creating), HasToken, Some(c)),
                JournalVerdict::Stale
            );
        }
        // No creation time on the array: nothing proves the token is ours.
        assert_eq!(
            classify(Some(&creating), HasToken, None),
            JournalVerdict::Stale
        );
        let created = entry(Created, at, Some(at + 5));
        assert_eq!(
            classify(Some(&created), HasToken, Some(at + 5)),
            JournalVerdict::PendingDelivery
        );
        assert_eq!(
            classify(Some(&created), HasToken, Some(at + 6)),
            JournalVerdict::Stale
        );
        assert_eq!(
            classify(Some(&created), NoToken, None),
            JournalVerdict::Stale
        );
    }

    #[test]
    fn a_journals_own_error_comes_back_whole() {
        let e = JournalError::other(std::io::Error::other("Secret ns/j: conflict"));
        assert_eq!(e.to_string(), "Secret ns/j: conflict");
        let back = e.downcast::<std::io::Error>().unwrap();
        assert_eq!(back.to_string(), "Secret ns/j: conflict");
        let plain = JournalError::new("cannot write /x");
        assert_eq!(plain.to_string(), "token journal: cannot write /x");
        let not = JournalError::other(std::fmt::Error)
            .downcast::<std::io::Error>()
            .unwrap_err();
        assert!(not.downcast::<std::fmt::Error>().is_ok());
    }

    #[test]
    fn entries_hide_the_token() {
        let v = MemTokenJournal::new();
        v.record_intent("U", 1).unwrap();
        v.record_token("u", Some(2), &SecretString::from("very-secret"))
            .unwrap();
        let e = v.load("u").unwrap().unwrap();
        assert_eq!(e.state, JournalState::Created);
        assert_eq!(e.intent_at_ms, 1);
        assert!(!format!("{e:?}").contains("very-secret"));
        v.delivered("u").unwrap();
        assert!(v.load("u").unwrap().is_none());
    }
}
