//! The controller's durable token journal: one Secret per TenantStorage, beside it in
//! its namespace, so that a tenant API token survives a killed controller or a
//! leader change between the array creating it and the tenant's px-pure-secret
//! receiving it (the array shows a token's value only in the answer that creates it).
//!
//! The converge engine journals into a [`MemVault`] (its calls are synchronous, so
//! that no await falls between the create answer and the record); this module makes
//! that durable around it:
//!
//! 1. before the apply, when the plan creates a token, the *intent* is written here
//!    (the apply does not start unless it is);
//! 2. after the apply, however it ended, a token the [`MemVault`] holds is written
//!    here (the reconcile fails unless it is, and the next one tries again);
//! 3. once the tenant cluster holds the px-pure-secret, the Secret is deleted.
//!
//! A run killed between 1 and 2 leaves `creating`: the next reconcile (any replica)
//! sees a token created in the intent's window and replaces it (its value never left
//! the array). Killed after 2, it leaves `created`: the next reconcile delivers that
//! token, with no array write. See [`px_topology::vault`] for the table.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams};
use px_topology::desired::DesiredState;
use px_topology::plan::{Action, Kind, Observed, Plan};
use px_topology::vault::{
    JournalEntry, JournalState, MemVault, TokenVault, VaultError, now_ms, read_journal,
};
use secrecy::{ExposeSecret, SecretString};

use crate::error::{Error, Reason};

/// The field manager of the journal's server-side applies.
const MANAGER: &str = "pxfa-controller-token-journal";
/// Label on every journal Secret, naming the TenantStorage it belongs to.
pub const TENANT_LABEL: &str = "pxfa.io/tenant-storage";

/// The journal Secret's name for a TenantStorage (a DNS label, so the name fits).
pub fn secret_name(tenant_storage: &str) -> String {
    format!("pxfa-token-journal-{tenant_storage}")
}

/// The journal Secret of one TenantStorage.
pub struct SecretJournal {
    api: Api<Secret>,
    namespace: String,
    tenant_storage: String,
    name: String,
}

impl SecretJournal {
    /// The journal of TenantStorage `namespace/tenant_storage`.
    pub fn new(client: kube::Client, namespace: &str, tenant_storage: &str) -> SecretJournal {
        SecretJournal {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_string(),
            tenant_storage: tenant_storage.to_string(),
            name: secret_name(tenant_storage),
        }
    }

    /// `namespace/name` of the Secret, for messages.
    pub fn id(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    fn failed(&self, what: &str, e: impl std::fmt::Display) -> Error {
        Error::new(
            Reason::ClusterApplyFailed,
            format!("token journal Secret {}: cannot {what}: {e}", self.id()),
        )
    }

    /// The entry the Secret holds, if any. A Secret that does not parse is an error
    /// (nothing is decided on a journal that cannot be read).
    pub async fn load(&self) -> Result<Option<JournalEntry>, Error> {
        let secret = self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|e| self.failed("read it", e))?;
        let Some(secret) = secret else {
            return Ok(None);
        };
        decode(&secret.data.unwrap_or_default())
            .map(Some)
            .map_err(|e| self.failed("parse it", e))
    }

    /// Writes `entry` (server-side apply: created when absent, replaced otherwise;
    /// a field the entry lacks, such as the token of an intent, is removed).
    pub async fn store(&self, entry: &JournalEntry) -> Result<(), Error> {
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                labels: Some(BTreeMap::from([
                    (
                        "app.kubernetes.io/managed-by".to_string(),
                        "pxfa-controller".to_string(),
                    ),
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
        let mut body = serde_json::to_value(&secret).map_err(|e| self.failed("encode it", e))?;
        body["apiVersion"] = "v1".into();
        body["kind"] = "Secret".into();
        self.api
            .patch(
                &self.name,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&body),
            )
            .await
            .map(|_| ())
            .map_err(|e| self.failed("write it", e))
    }

    /// Deletes the Secret (gone already is fine).
    pub async fn remove(&self) -> Result<(), Error> {
        match self.api.delete(&self.name, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(self.failed("delete it", e)),
        }
    }
}

/// The token journal of one reconcile: this process's [`MemVault`] (the converge
/// engine's), made durable by the object's [`SecretJournal`] at the three points in
/// the module text. Inert when the desired state wants no token.
pub struct ReconcileJournal {
    vault: Arc<MemVault>,
    secret: SecretJournal,
    user: Option<String>,
    /// What the Secret holds, as far as this reconcile knows.
    durable: Option<JournalEntry>,
}

impl ReconcileJournal {
    /// Reads the Secret back into `vault` (unless `vault` holds a newer entry) and
    /// records what it means for the plan in `observed`. `id` names the object in
    /// errors.
    pub async fn open(
        vault: Arc<MemVault>,
        secret: SecretJournal,
        desired: &DesiredState,
        observed: &mut Observed,
        id: &str,
    ) -> Result<ReconcileJournal, Error> {
        let user = desired.api_token.as_ref().map(|t| t.admin.clone());
        let mut durable = None;
        if let Some(user) = &user {
            durable = secret.load().await?;
            let mine = durable
                .clone()
                .filter(|e| e.user.eq_ignore_ascii_case(user));
            seed(&vault, user, mine).map_err(|e| internal(id, e))?;
        }
        read_journal(vault.as_ref(), desired, observed).map_err(|e| internal(id, e))?;
        Ok(ReconcileJournal {
            vault,
            secret,
            user,
            durable,
        })
    }

    /// The vault the apply journals into.
    pub fn vault(&self) -> Arc<dyn TokenVault> {
        self.vault.clone()
    }

    /// Write-ahead, durably: when `plan` creates a token, its intent is in the
    /// Secret before the apply starts, or the apply does not start.
    pub async fn before_apply(&mut self, plan: &Plan) -> Result<(), Error> {
        let Some(user) = &self.user else {
            return Ok(());
        };
        if !plan
            .changes
            .iter()
            .any(|c| c.action == Action::Create && c.kind == Kind::ApiToken)
        {
            return Ok(());
        }
        let intent = JournalEntry {
            user: user.clone(),
            state: JournalState::Creating,
            intent_at_ms: now_ms(),
            created_at: None,
            token: None,
        };
        self.secret.store(&intent).await?;
        self.durable = Some(intent);
        Ok(())
    }

    /// However the apply ended, a token it created goes to the Secret before
    /// anything else; the caller delivers it only when this succeeds (else the next
    /// reconcile of this process writes it again from memory).
    pub async fn after_apply(&mut self, id: &str) -> Result<(), Error> {
        let Some(user) = &self.user else {
            return Ok(());
        };
        let held = self.vault.load(user).map_err(|e| internal(id, e))?;
        let Some(entry) = held.filter(|e| e.state == JournalState::Created) else {
            return Ok(());
        };
        if same(Some(&entry), self.durable.as_ref()) {
            return Ok(());
        }
        self.secret.store(&entry).await.map_err(|err| {
            Error::new(
                err.reason,
                format!(
                    "{}; the new API token of {user} is held in memory and delivered by the next reconcile",
                    err.message
                ),
            )
        })?;
        self.durable = Some(entry);
        Ok(())
    }

    /// The tenant's px-pure-secret holds the token (or the entry was stale): the
    /// journal lets go, in memory and then the Secret. A Secret left behind is read
    /// again by the next reconcile: a delivered token is delivered again (the same
    /// value), a stale entry ignored.
    pub async fn delivered(&self, id: &str) {
        let Some(user) = &self.user else {
            return;
        };
        if let Err(e) = self.vault.delivered(user) {
            tracing::warn!(tenant = %id, "token journal: {e}");
        }
        if self.durable.is_some()
            && let Err(e) = self.secret.remove().await
        {
            tracing::warn!(tenant = %id, "{}", e.message);
        }
    }
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

/// Puts the durable entry into this process's vault unless the vault holds a newer
/// one of the same user (a token this process created whose write to the Secret
/// failed). Returns what the vault holds for `user` afterwards.
fn seed(
    vault: &MemVault,
    user: &str,
    durable: Option<JournalEntry>,
) -> Result<Option<JournalEntry>, VaultError> {
    let local = vault.load(user)?;
    let chosen = match (local, durable) {
        (None, None) => None,
        (Some(e), None) | (None, Some(e)) => Some(e),
        (Some(l), Some(d)) => Some(newer(l, d)),
    };
    if let Some(e) = &chosen {
        vault.restore(e.clone());
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
        let v = MemVault::new();
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
