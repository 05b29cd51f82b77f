//! The controller's durable token journal: one Secret per TenantStorage, beside it in
//! its namespace, so that a tenant API token survives a killed controller or a
//! leader change between the array creating it and the tenant's px-pure-secret
//! receiving it (the array shows a token's value only in the answer that creates it).
//!
//! The converge engine journals into a [`MemTokenJournal`] (its calls are synchronous, so
//! that no await falls between the create answer and the record);
//! [`ControllerTokenJournal`] wraps it, as the pipeline's one [`TokenJournal`], and
//! makes it durable through the journal's hooks around the apply:
//!
//! 1. before the apply, when the plan creates a token, the *intent* is written here
//!    (the apply does not start unless it is);
//! 2. after the apply, however it ended, a token the [`MemTokenJournal`] holds is written
//!    here (the reconcile fails unless it is, and the next one tries again);
//! 3. once the tenant cluster holds the px-pure-secret, the Secret is deleted.
//!
//! A run killed between 1 and 2 leaves `creating`: the next reconcile (any replica)
//! sees a token created in the intent's window and replaces it (its value never left
//! the array). Killed after 2, it leaves `created`: the next reconcile delivers that
//! token, with no array write. See [`px_topology::token_journal`] for the table.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;

use flasharray::FlashArray;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{DeleteParams, ObjectMeta, PostParams, Preconditions};
use px_topology::token_journal::{
    JournalEntry, JournalError, JournalState, MemTokenJournal, TokenJournal, now_ms,
};
use px_topology::{DesiredState, JournalVerdict, Tenant};
use secrecy::{ExposeSecret, SecretString};
use tokio::sync::Mutex;

use crate::error::{Error, Reason};

/// Label on every journal Secret, naming the TenantStorage it belongs to.
pub(crate) const TENANT_LABEL: &str = "pxfa.io/tenant-storage";
/// The label that marks a journal Secret as the controller's; a Secret of the
/// journal's name without it is never overwritten or deleted.
const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "pxfa-controller");

/// The journal Secret's name for a TenantStorage (a DNS label, so the name fits).
pub(crate) fn secret_name(tenant_storage: &str) -> String {
    format!("pxfa-token-journal-{tenant_storage}")
}

/// The journal Secret of one TenantStorage. Every write is fenced by what was last
/// read: a create fails if the Secret appeared meanwhile, a replace or delete if its
/// `resourceVersion` changed (another replica, during a Lease handover, wrote it),
/// so two writers cannot silently undo each other.
pub(crate) struct SecretTokenJournal {
    api: Api<Secret>,
    namespace: String,
    tenant_storage: String,
    name: String,
    /// The Secret's `resourceVersion` as last read or written; `None`: absent.
    seen: Option<String>,
}

impl SecretTokenJournal {
    /// The journal of TenantStorage `namespace/tenant_storage`; call
    /// [`SecretTokenJournal::load`] before writing.
    pub(crate) fn new(
        client: kube::Client,
        namespace: &str,
        tenant_storage: &str,
    ) -> SecretTokenJournal {
        SecretTokenJournal {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_string(),
            tenant_storage: tenant_storage.to_string(),
            name: secret_name(tenant_storage),
            seen: None,
        }
    }

    /// `namespace/name` of the Secret, for messages.
    pub(crate) fn id(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// An API failure by its code and reason only: the server's message may quote
    /// the object (an admission webhook denying it), and this one holds a token.
    fn failed(&self, what: &str, e: kube::Error) -> Error {
        let (reason, why) = match &e {
            kube::Error::Api(s) if s.code == 409 => (
                Reason::Conflict,
                format!(
                    "{} {}: it changed since this reconcile read it (another controller replica?); nothing is delivered, the next reconcile reads it again",
                    s.code, s.reason
                ),
            ),
            kube::Error::Api(s) => (
                Reason::ClusterApplyFailed,
                format!("{} {}", s.code, s.reason),
            ),
            other => (Reason::ClusterApplyFailed, other.to_string()),
        };
        Error::new(
            reason,
            format!("token journal Secret {}: cannot {what}: {why}", self.id()),
        )
    }

    /// The entry the Secret holds, if any. A Secret that does not parse, or that is
    /// not the controller's, is an error (nothing is decided on a journal that
    /// cannot be read, and nothing of somebody else's is overwritten).
    pub(crate) async fn load(&mut self) -> Result<Option<JournalEntry>, Error> {
        let secret = self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|e| self.failed("read it", e))?;
        let Some(secret) = secret else {
            self.seen = None;
            return Ok(None);
        };
        let ours = secret
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(MANAGED_BY.0))
            .is_some_and(|v| v == MANAGED_BY.1);
        if !ours {
            return Err(Error::new(
                Reason::Conflict,
                format!(
                    "token journal Secret {}: exists without the label {}={}: it is not the controller's, and pxfa neither reads nor overwrites it; rename or delete it",
                    self.id(),
                    MANAGED_BY.0,
                    MANAGED_BY.1
                ),
            ));
        }
        self.seen = secret.metadata.resource_version.clone();
        decode(&secret.data.unwrap_or_default())
            .map(Some)
            .map_err(|e| {
                Error::new(
                    Reason::ClusterApplyFailed,
                    format!("token journal Secret {}: cannot parse it: {e}", self.id()),
                )
            })
    }

    /// Writes `entry`: creates the Secret when the last read found none, else
    /// replaces it guarded by the `resourceVersion` read (a field the entry lacks,
    /// such as the token of an intent, is gone).
    pub(crate) async fn store(&mut self, entry: &JournalEntry) -> Result<(), Error> {
        let mut secret = Secret {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                labels: Some(BTreeMap::from([
                    (MANAGED_BY.0.to_string(), MANAGED_BY.1.to_string()),
                    (TENANT_LABEL.to_string(), self.tenant_storage.clone()),
                ])),
                annotations: Some(BTreeMap::from([(
                    "pxfa.io/purpose".to_string(),
                    "token write-ahead journal: holds a tenant API token until the tenant's \
                     px-pure-secret does; deleted after delivery"
                        .to_string(),
                )])),
                ..ObjectMeta::default()
            },
            type_: Some("Opaque".to_string()),
            data: Some(encode(entry)),
            ..Secret::default()
        };
        let written = match &self.seen {
            None => self
                .api
                .create(&PostParams::default(), &secret)
                .await
                .map_err(|e| self.failed("create it", e))?,
            Some(rv) => {
                secret.metadata.resource_version = Some(rv.clone());
                self.api
                    .replace(&self.name, &PostParams::default(), &secret)
                    .await
                    .map_err(|e| self.failed("write it", e))?
            }
        };
        self.seen = written.metadata.resource_version;
        Ok(())
    }

    /// Deletes the Secret as last read (gone already is fine; changed since is a
    /// conflict).
    pub(crate) async fn remove(&mut self) -> Result<(), Error> {
        let Some(rv) = self.seen.clone() else {
            return Ok(());
        };
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                resource_version: Some(rv),
                uid: None,
            }),
            ..DeleteParams::default()
        };
        match self.api.delete(&self.name, &params).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(self.failed("delete it", e)),
        }
        self.seen = None;
        Ok(())
    }
}

/// The token journal of one reconcile: this process's [`MemTokenJournal`] (the converge
/// engine's entries, which the pipeline reads and writes), made durable by the
/// object's [`SecretTokenJournal`] at the three points in the module text (the
/// [`TokenJournal`] hooks). The durable half is inert when the desired state wants
/// no token.
pub(crate) struct ControllerTokenJournal {
    token_journal: Arc<MemTokenJournal>,
    user: Option<String>,
    /// `TenantStorage ns/name`, for messages.
    id: String,
    durable: Mutex<Durable>,
}

/// The Secret and what it holds, as far as this reconcile knows.
struct Durable {
    secret: SecretTokenJournal,
    entry: Option<JournalEntry>,
}

impl ControllerTokenJournal {
    /// Reads the Secret back into `token_journal` (unless `token_journal` holds a newer entry), for
    /// the pipeline's observation to read. `id` names the object in errors. A Secret
    /// holding another array user's entry (the spec's `tokenUser` changed while a
    /// token of the old one was in flight) stops the reconcile: that token may be
    /// undelivered, and overwriting the entry would forget it.
    pub(crate) async fn open(
        token_journal: Arc<MemTokenJournal>,
        mut secret: SecretTokenJournal,
        desired: &DesiredState,
        id: &str,
    ) -> Result<ControllerTokenJournal, Error> {
        let user = desired.api_token.as_ref().map(|t| t.admin.clone());
        let mut entry = None;
        if let Some(user) = &user {
            entry = secret.load().await?;
            if let Some(e) = entry
                .as_ref()
                .filter(|e| !e.user.eq_ignore_ascii_case(user))
            {
                return Err(Error::new(
                    Reason::Conflict,
                    format!(
                        "{id}: token journal Secret {} holds an entry of array user {} ({}), not of {user}: a token of {} may have been created and never delivered; deliver or delete that token, then delete the Secret",
                        secret.id(),
                        e.user,
                        if e.state == JournalState::Created {
                            "created"
                        } else {
                            "creating"
                        },
                        e.user
                    ),
                ));
            }
            seed(&token_journal, user, entry.clone()).map_err(|e| internal(id, e))?;
        }
        Ok(ControllerTokenJournal {
            token_journal,
            user,
            id: id.to_string(),
            durable: Mutex::new(Durable { secret, entry }),
        })
    }

    /// Write-ahead, durably: the intent is in the Secret before the apply starts,
    /// or the apply does not start.
    async fn store_intent(&self) -> Result<(), Error> {
        let Some(user) = &self.user else {
            return Ok(());
        };
        let intent = JournalEntry {
            user: user.clone(),
            state: JournalState::Creating,
            intent_at_ms: now_ms(),
            created_at: None,
            token: None,
        };
        let mut durable = self.durable.lock().await;
        durable.secret.store(&intent).await?;
        durable.entry = Some(intent);
        Ok(())
    }

    /// However the apply ended, a token it created goes to the Secret before
    /// anything else; the caller delivers it only when this succeeds (else the next
    /// reconcile of this process writes it again from memory).
    async fn store_token(&self) -> Result<(), Error> {
        let Some(user) = self.user.clone() else {
            return Ok(());
        };
        let held = self
            .token_journal
            .load(&user)
            .map_err(|e| internal(&self.id, e))?;
        let Some(entry) = held.filter(|e| e.state == JournalState::Created) else {
            return Ok(());
        };
        let mut durable = self.durable.lock().await;
        if same(Some(&entry), durable.entry.as_ref()) {
            return Ok(());
        }
        durable.secret.store(&entry).await.map_err(|err| {
            Error::new(
                err.reason,
                format!(
                    "{}; the new API token of {user} is held in memory and delivered by the next reconcile",
                    err.message
                ),
            )
        })?;
        durable.entry = Some(entry);
        Ok(())
    }

    /// The pipeline let go of the token (the tenant's px-pure-secret holds it, or
    /// nothing was pending; the entry in memory is gone already): the Secret goes.
    async fn remove(&self) -> Result<(), Error> {
        if self.user.is_none() {
            return Ok(());
        }
        let mut durable = self.durable.lock().await;
        // A no-op when the last read found no Secret.
        durable.secret.remove().await?;
        durable.entry = None;
        Ok(())
    }
}

impl std::fmt::Debug for ControllerTokenJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerTokenJournal")
            .field("tenant", &self.id)
            .finish_non_exhaustive()
    }
}

/// The entries are this process's memory; the hooks copy them to the Secret.
#[async_trait]
impl TokenJournal for ControllerTokenJournal {
    fn memory(&self) -> Option<&MemTokenJournal> {
        Some(&self.token_journal)
    }

    async fn persist_intent(&self, _user: &str) -> Result<(), JournalError> {
        self.store_intent().await.map_err(JournalError::other)
    }

    async fn persist_token(&self, _user: &str) -> Result<(), JournalError> {
        self.store_token().await.map_err(JournalError::other)
    }

    /// A Secret left behind is read again by the next reconcile: a delivered token
    /// is delivered again (the same value), a stale entry ignored.
    async fn persist_delivered(&self, _user: &str) -> Result<(), JournalError> {
        self.remove().await.map_err(JournalError::other)
    }

    // A Secret of a tenant with nothing pending goes too: it would otherwise stay
    // beside the object forever.
    fn drops_stale_entries(&self) -> bool {
        true
    }
}

/// On delete: whether the journal holds the array's current token of the desired
/// user undelivered (created and journaled, or created by an interrupted apply).
/// Such a token is pxfa's and nobody has it, so the destroy deletes it with the
/// tenant instead of leaving a credential behind that no one can use or revoke by
/// name. Reads `journal` (so that a later [`SecretTokenJournal::remove`] is fenced).
pub(crate) async fn undelivered_token(
    journal: &mut SecretTokenJournal,
    array: &dyn FlashArray,
    tenant: &Tenant,
) -> Result<bool, Error> {
    let Some(user) = tenant.desired.api_token.as_ref().map(|t| t.admin.clone()) else {
        return Ok(false);
    };
    let Some(entry) = journal
        .load()
        .await?
        .filter(|e| e.user.eq_ignore_ascii_case(&user))
    else {
        return Ok(false);
    };
    let verdict = tenant.token_verdict(array, &entry).await.map_err(|e| {
        Error::array(
            Reason::ArrayUnreachable,
            "reading the tenant's API token",
            &e,
        )
    })?;
    Ok(matches!(
        verdict,
        JournalVerdict::PendingDelivery | JournalVerdict::Interrupted
    ))
}

fn internal(id: &str, e: impl std::fmt::Display) -> Error {
    Error::new(Reason::Internal, format!("{id}: {e}"))
}

/// The Secret's data for an entry. The token is present only in `created`.
fn encode(e: &JournalEntry) -> BTreeMap<String, ByteString> {
    let mut data = BTreeMap::new();
    let mut put = |k: &str, v: &str| {
        data.insert(k.to_string(), ByteString(v.as_bytes().to_vec()));
    };
    put("user", &e.user);
    put(
        "state",
        match e.state {
            JournalState::Creating => "creating",
            JournalState::Created => "created",
        },
    );
    put("intentAtMs", &e.intent_at_ms.to_string());
    if let Some(c) = e.created_at {
        put("createdAt", &c.to_string());
    }
    if let (JournalState::Created, Some(t)) = (e.state, &e.token) {
        put("token", t.expose_secret());
    }
    data
}

/// The entry in a Secret's data; errors name the key, never a value.
fn decode(data: &BTreeMap<String, ByteString>) -> Result<JournalEntry, String> {
    let text = |k: &str| -> Result<Option<String>, String> {
        data.get(k)
            .map(|b| String::from_utf8(b.0.clone()).map_err(|_| format!("{k} is not UTF-8")))
            .transpose()
    };
    let number = |k: &str| -> Result<Option<u64>, String> {
        text(k)?
            .map(|s| {
                s.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("{k} is not a number"))
            })
            .transpose()
    };
    let user = text("user")?.ok_or("no key user")?;
    let state = match text("state")?.as_deref() {
        Some("creating") => JournalState::Creating,
        Some("created") => JournalState::Created,
        Some(_) => return Err("state is neither creating nor created".into()),
        None => return Err("no key state".into()),
    };
    let intent_at_ms = number("intentAtMs")?.ok_or("no key intentAtMs")?;
    let created_at = number("createdAt")?;
    let token = text("token")?.map(SecretString::from);
    if state == JournalState::Created && token.is_none() {
        return Err("state is created and there is no key token".into());
    }
    Ok(JournalEntry {
        user,
        state,
        intent_at_ms,
        created_at,
        token,
    })
}

/// Which of two entries of one user is newer: the later intent, and at the same
/// intent the answered one (`created` comes after `creating`).
fn newer(a: JournalEntry, b: JournalEntry) -> JournalEntry {
    let rank = |e: &JournalEntry| (e.intent_at_ms, e.state == JournalState::Created);
    if rank(&b) > rank(&a) { b } else { a }
}

/// Whether two entries say the same (the token aside: one answer has one token).
fn same(a: Option<&JournalEntry>, b: Option<&JournalEntry>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.user.eq_ignore_ascii_case(&b.user)
                && a.state == b.state
                && a.intent_at_ms == b.intent_at_ms
                && a.created_at == b.created_at
        }
        _ => false,
    }
}

/// Puts the durable entry into this process's token journal unless that journal holds a newer
/// one of the same user (a token this process created whose write to the Secret
/// failed). Returns what the token journal holds for `user` afterwards.
fn seed(
    token_journal: &MemTokenJournal,
    user: &str,
    durable: Option<JournalEntry>,
) -> Result<Option<JournalEntry>, JournalError> {
    let local = token_journal.load(user)?;
    let chosen = match (local, durable) {
        (None, None) => None,
        (Some(e), None) | (None, Some(e)) => Some(e),
        (Some(l), Some(d)) => Some(newer(l, d)),
    };
    if let Some(e) = &chosen {
        token_journal.restore(e.clone());
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(state: JournalState, intent: u64, created: Option<u64>) -> JournalEntry {
        JournalEntry {
            user: "pxfa-t".into(),
            state,
            intent_at_ms: intent,
            created_at: created,
            token: (state == JournalState::Created).then(|| SecretString::from("tok-value")),
        }
    }

    #[test]
    fn entries_round_trip_and_an_intent_has_no_token() {
        for e in [
            entry(JournalState::Creating, 10, None),
            entry(JournalState::Created, 10, Some(12)),
        ] {
            let data = encode(&e);
            assert_eq!(data.contains_key("token"), e.state == JournalState::Created);
            let back = decode(&data).unwrap();
            assert!(same(Some(&e), Some(&back)));
            assert_eq!(
                back.token.as_ref().map(|t| t.expose_secret().to_string()),
                e.token.as_ref().map(|t| t.expose_secret().to_string())
            );
        }
    }

    #[test]
    fn a_broken_secret_is_an_error_naming_the_key_not_the_value() {
        let mut data = encode(&entry(JournalState::Created, 10, Some(12)));
        data.remove("token");
        assert!(decode(&data).unwrap_err().contains("token"));
        let mut data = encode(&entry(JournalState::Created, 10, Some(12)));
        data.insert("intentAtMs".into(), ByteString(b"tok-value?".to_vec()));
        let e = decode(&data).unwrap_err();
        assert!(e.contains("intentAtMs") && !e.contains("tok-value"), "{e}");
        let mut data = encode(&entry(JournalState::Creating, 10, None));
        data.insert("state".into(), ByteString(b"done".to_vec()));
        assert!(decode(&data).is_err());
    }

    #[test]
    fn seeding_keeps_the_newer_entry() {
        let v = MemTokenJournal::new();
        // Nothing anywhere.
        assert!(seed(&v, "pxfa-t", None).unwrap().is_none());
        // A new process: the Secret's entry.
        let durable = entry(JournalState::Creating, 10, None);
        let got = seed(&v, "pxfa-t", Some(durable.clone())).unwrap();
        assert!(same(got.as_ref(), Some(&durable)));
        // This process got the answer and could not write it: the answer wins over
        // the Secret's intent of the same or an earlier time.
        v.record_token("pxfa-t", Some(11), &SecretString::from("x"))
            .unwrap();
        let got = seed(&v, "pxfa-t", Some(durable)).unwrap().unwrap();
        assert_eq!(got.state, JournalState::Created);
        // Another replica wrote a later entry since: it wins.
        let later = entry(JournalState::Created, 20, Some(21));
        let got = seed(&v, "pxfa-t", Some(later.clone())).unwrap();
        assert!(same(got.as_ref(), Some(&later)));
        assert!(same(v.load("pxfa-t").unwrap().as_ref(), Some(&later)));
    }
}
