//! Rotating the cloud-drive tenant's FlashArray API token without a moment in which
//! `px-pure-secret` holds a token that does not work.
//!
//! An array admin holds at most one API token, and creating one fails while one exists,
//! so one user cannot rotate without a gap. pxfa uses two array users with the same
//! role: the tenant's token user (`spec.array.tokenUser`, the one `pxfa apply`
//! manages) and an alternate (`<tokenUser>-alt` by default), and bridges through the
//! alternate:
//!
//! 1. create a token for the alternate, log in with it, write it to `px-pure-secret`,
//!    read the secret back, wait the grace period (Portworx re-reads the secret every
//!    few minutes), delete the token user's old token;
//! 2. the same again the other way round: a fresh token for the token user replaces the
//!    alternate's, and the alternate's is deleted.
//!
//! So the rotation ends where `pxfa apply` expects it (the token user holds the live
//! token, the alternate none), and a token is deleted only after the secret has been
//! confirmed to hold a working other one and the grace period has passed. The secret's
//! annotations record whose token it holds (`pxfa.io/token-user`) and since when
//! (`pxfa.io/token-switched-at`, Unix seconds); every run starts from them, so a run
//! that fails at any step is completed by running it again.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use flasharray::FlashArray;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, PostParams};
use px_topology::token_journal::{JournalError, TokenJournal, classify, now_ms};
use px_topology::{JournalVerdict, PureJson, TenantStorage, TokenState};
use secrecy::SecretString;
use serde::Serialize;

use crate::BOOKKEEPING_MANAGER;
use crate::error::{BoxError, Error, Result};

/// Annotation on `px-pure-secret`: the array user whose token `pure.json` holds.
pub const TOKEN_USER_ANNOTATION: &str = "pxfa.io/token-user";
/// Annotation on `px-pure-secret`: when it last changed user (Unix seconds).
pub const SWITCHED_AT_ANNOTATION: &str = "pxfa.io/token-switched-at";
/// The secret Portworx reads its FlashArray credentials from.
pub const PURE_SECRET: &str = "px-pure-secret";

/// Proves that a freshly created token works before it goes into the secret.
#[async_trait]
pub trait TokenProbe: Send + Sync {
    /// Ok when `token` logs in to the array, as `user` where the backend can tell.
    async fn verify(&self, user: &str, token: &SecretString) -> Result<(), BoxError>;
}

/// Switches of a rotation.
#[derive(Debug, Clone)]
pub struct RotateOptions {
    /// The second array user (same role as the token user; create it once on the
    /// array).
    pub alternate_user: String,
    /// Lifetime of the new tokens; `None`: no expiry.
    pub lifetime: Option<Duration>,
    /// Time between writing a new token to the secret and deleting the old one, so
    /// that Portworx has re-read the secret.
    pub grace: Duration,
    /// The token journal (`px_topology::token_journal`): every new token is journaled from
    /// just before its creation until the secret is confirmed, so that a run killed
    /// in between is finished by the next one (the journaled token written, or the
    /// undelivered one deleted) instead of starting that switch over.
    pub journal: Option<Arc<dyn TokenJournal>>,
}

impl RotateOptions {
    /// The defaults for `spec`: alternate `<tokenUser>-alt`, the spec's token
    /// lifetime (`spec.array.tokenLifetime`, default a year), six minutes' grace
    /// (Portworx re-reads the secret about every five).
    pub fn for_spec(spec: &TenantStorage) -> Self {
        RotateOptions {
            alternate_user: format!("{}-alt", spec.token_user()),
            lifetime: spec.token_lifetime(),
            grace: Duration::from_secs(360),
            journal: None,
        }
    }
}

/// What a rotation did, step by step.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RotateReport {
    /// The steps in the order they happened.
    pub steps: Vec<String>,
    /// The user whose token the secret holds at the end.
    pub active_user: String,
}

struct Rotation<'a> {
    array: &'a dyn FlashArray,
    probe: &'a dyn TokenProbe,
    secrets: Api<Secret>,
    namespace: String,
    endpoint: Option<String>,
    opts: &'a RotateOptions,
    report: RotateReport,
}

/// Rotates the tenant's token (see the module documentation for the order).
pub async fn rotate_token(
    array: &dyn FlashArray,
    probe: &dyn TokenProbe,
    tenant: &Client,
    spec: &TenantStorage,
    opts: &RotateOptions,
) -> Result<RotateReport> {
    if !spec.spec.storage.mode.needs_token() {
        return Err(Error::InvalidOptions(format!(
            "token rotation is for cloud-drive tenants (storage.mode is {})",
            spec.spec.storage.mode
        )));
    }
    let primary = spec.token_user();
    if opts.alternate_user.eq_ignore_ascii_case(&primary) {
        return Err(Error::InvalidOptions(format!(
            "the alternate token user must differ from the token user {primary}"
        )));
    }
    let namespace = spec.spec.portworx.namespace.clone();
    let mut r = Rotation {
        array,
        probe,
        secrets: Api::namespaced(tenant.clone(), &namespace),
        namespace,
        endpoint: spec.spec.array.endpoint.clone(),
        opts,
        report: RotateReport::default(),
    };
    let alternate = opts.alternate_user.clone();
    // A run killed after writing the token user's new token only had the
    // alternate's left to delete.
    r.finish_journal(&alternate).await?;
    if r.finish_journal(&primary).await? {
        let (_, switched_at) = r.secret_state().await?;
        r.retire(&alternate, switched_at).await?;
        r.report.active_user = primary;
        return Ok(r.report);
    }
    let (holder, switched_at) = r.secret_state().await?;
    if !holder.is_empty()
        && !holder.eq_ignore_ascii_case(&primary)
        && !holder.eq_ignore_ascii_case(&alternate)
    {
        return Err(Error::State(format!(
            "Secret {}/{PURE_SECRET} records token user {holder}, neither {primary} nor {alternate}; \
             check spec.array.tokenUser and --alternate-user",
            r.namespace
        )));
    }
    if holder.eq_ignore_ascii_case(&alternate) {
        r.step(format!(
            "resuming: {PURE_SECRET} holds the token of {alternate}"
        ));
        r.retire(&primary, switched_at).await?;
    } else {
        r.retire(&alternate, switched_at).await?;
        r.switch_to(&alternate).await?;
        let (_, switched_at) = r.secret_state().await?;
        r.retire(&primary, switched_at).await?;
    }
    r.switch_to(&primary).await?;
    let (_, switched_at) = r.secret_state().await?;
    r.retire(&alternate, switched_at).await?;
    r.report.active_user = primary;
    Ok(r.report)
}

/// Whether the tenant cluster's px-pure-secret holds a real API token (not the
/// template pxfa renders without one): the copy `pxfa apply` looks for before it
/// reports a token user's token that pxfa has no copy of. A missing secret holds
/// none.
pub async fn pure_secret_holds_real_token(tenant: &Client, spec: &TenantStorage) -> Result<bool> {
    let namespace = &spec.spec.portworx.namespace;
    let path = format!("Secret {namespace}/{PURE_SECRET}");
    let secrets: Api<Secret> = Api::namespaced(tenant.clone(), namespace);
    let Some(secret) = secrets
        .get_opt(PURE_SECRET)
        .await
        .map_err(|e| redacted(format!("cannot read {path} in the tenant cluster"), e))?
    else {
        return Ok(false);
    };
    Ok(pure_json(&secret, &path).is_ok_and(|p| p.holds_real_token()))
}

impl Rotation<'_> {
    fn step(&mut self, s: String) {
        tracing::info!("token rotation: {s}");
        self.report.steps.push(s);
    }

    fn path(&self) -> String {
        format!("Secret {}/{PURE_SECRET}", self.namespace)
    }

    async fn read_secret(&self) -> Result<Secret> {
        let path = self.path();
        self.secrets
            .get_opt(PURE_SECRET)
            .await
            .map_err(|e| Error::kube(format!("cannot read {path} in the tenant cluster"), e))?
            .ok_or_else(|| {
                Error::State(format!(
                    "{path} does not exist in the tenant cluster; run pxfa apply first"
                ))
            })
    }

    /// Whose token the secret holds (the token user when not recorded: `pxfa apply`
    /// wrote it) and when it changed.
    async fn secret_state(&self) -> Result<(String, u64)> {
        let s = self.read_secret().await?;
        let ann = s.metadata.annotations.unwrap_or_default();
        let holder = ann.get(TOKEN_USER_ANNOTATION).cloned().unwrap_or_default();
        let at = ann
            .get(SWITCHED_AT_ANNOTATION)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        Ok((holder, at))
    }

    /// Deletes `user`'s token, once the secret has held another for the grace period.
    async fn retire(&mut self, user: &str, switched_at: u64) -> Result<()> {
        let tokens = self
            .array
            .list_api_tokens(&[user.to_string()], false)
            .await
            .map_err(|e| {
                Error::array(
                    format!(
                        "cannot read the API token of array user {user} (both token users must exist on \
                         the array with the same role)"
                    ),
                    e,
                )
            })?;
        let has = tokens.iter().any(|t| {
            t.name.eq_ignore_ascii_case(user)
                && (t.api_token.created_at.is_some() || t.api_token.token.is_some())
        });
        if !has {
            return Ok(());
        }
        let ready_at = switched_at.saturating_add(self.opts.grace.as_secs());
        let now = unix_now();
        if ready_at > now {
            // Capped at the grace period: a clock skewed ahead must not stall the run.
            let wait = Duration::from_secs(ready_at - now).min(self.opts.grace);
            self.step(format!(
                "waiting {} for Portworx to re-read {PURE_SECRET} before deleting {user}'s token",
                humantime::format_duration(wait)
            ));
            tokio::time::sleep(wait).await;
        }
        self.array.delete_api_token(user).await.map_err(|e| {
            Error::array(
                format!("cannot delete the API token of array user {user}"),
                e,
            )
        })?;
        self.step(format!("deleted the old token of {user}"));
        Ok(())
    }

    /// An entry a killed run left: a token created and never confirmed in the secret
    /// is written now (the rotation then goes on from there); one whose value never
    /// reached the journal is deleted (nobody can hold it).
    /// True when it delivered a token.
    async fn finish_journal(&mut self, user: &str) -> Result<bool> {
        let Some(token_journal) = self.opts.journal.clone() else {
            return Ok(false);
        };
        let Some(entry) = token_journal.load(user).map_err(journal_error)? else {
            return Ok(false);
        };
        let mut delivered = false;
        let tokens = self
            .array
            .list_api_tokens(&[user.to_string()], false)
            .await
            .map_err(|e| {
                Error::array(format!("cannot read the API token of array user {user}"), e)
            })?;
        let token = tokens
            .into_iter()
            .find(|t| t.name.eq_ignore_ascii_case(user))
            .map(|t| t.api_token)
            .filter(|t| t.created_at.is_some() || t.token.is_some());
        let state = if token.is_some() {
            TokenState::HasToken
        } else {
            TokenState::NoToken
        };
        match classify(Some(&entry), state, token.and_then(|t| t.created_at)) {
            JournalVerdict::PendingDelivery => {
                let value = entry.token.ok_or_else(|| {
                    Error::State(format!("the token journal of {user} holds no token"))
                })?;
                self.step(format!(
                    "resuming: the token of {user} an interrupted run created is in the journal"
                ));
                self.deliver(user, &value).await?;
                delivered = true;
            }
            JournalVerdict::Interrupted => {
                self.array.delete_api_token(user).await.map_err(|e| {
                    Error::array(
                        format!("cannot delete the undelivered API token of {user}"),
                        e,
                    )
                })?;
                self.step(format!(
                    "deleted the token of {user} an interrupted run created and never delivered"
                ));
            }
            JournalVerdict::None | JournalVerdict::Stale => {}
        }
        token_journal.delivered(user).map_err(journal_error)?;
        Ok(delivered)
    }

    /// New token for `user`, verified, written and confirmed.
    async fn switch_to(&mut self, user: &str) -> Result<()> {
        if let Some(v) = &self.opts.journal {
            v.record_intent(user, now_ms()).map_err(journal_error)?;
        }
        let created = self
            .array
            .create_api_token(user, self.opts.lifetime)
            .await
            .map_err(|e| {
                Error::array(
                    format!(
                        "cannot create an API token for array user {user} (does the user exist?)"
                    ),
                    e,
                )
            })?;
        let token = created.api_token.token.ok_or_else(|| {
            Error::State(format!(
                "the array created a token for {user} but did not return it"
            ))
        })?;
        if let Some(v) = &self.opts.journal {
            // No await since the answer.
            v.record_token(user, created.api_token.created_at, &token)
                .map_err(journal_error)?;
        }
        self.step(format!("created a new token for {user}"));
        self.deliver(user, &token).await?;
        if let Some(v) = &self.opts.journal {
            v.delivered(user).map_err(journal_error)?;
        }
        Ok(())
    }

    /// Verifies `user`'s token, writes it to the secret and confirms it there.
    async fn deliver(&mut self, user: &str, token: &SecretString) -> Result<()> {
        self.probe
            .verify(user, token)
            .await
            .map_err(|source| Error::Probe {
                user: user.to_string(),
                source,
            })?;
        self.step(format!("verified the new token of {user} (logged in)"));
        self.write(user, token).await?;
        self.step(format!("wrote the token of {user} to {}", self.path()));
        self.confirm(user, token).await?;
        self.step(format!(
            "confirmed {} holds the token of {user}",
            self.path()
        ));
        Ok(())
    }

    async fn write(&self, user: &str, token: &SecretString) -> Result<()> {
        let path = self.path();
        let mut secret = self.read_secret().await?;
        let mut pure = pure_json(&secret, &path)?;
        pure.set_token(self.endpoint.as_deref(), token.clone())
            .map_err(|e| Error::State(format!("{path}: pure.json: {e}")))?;
        let text = pure.to_text();
        secret
            .data
            .get_or_insert_with(Default::default)
            .insert("pure.json".to_string(), ByteString(text.into_bytes()));
        secret.string_data = None;
        let ann = secret
            .metadata
            .annotations
            .get_or_insert_with(Default::default);
        ann.insert(TOKEN_USER_ANNOTATION.to_string(), user.to_string());
        ann.insert(SWITCHED_AT_ANNOTATION.to_string(), unix_now().to_string());
        let pp = PostParams {
            field_manager: Some(BOOKKEEPING_MANAGER.to_string()),
            ..Default::default()
        };
        // replace carries the resourceVersion read above: a concurrent change fails
        // instead of being overwritten.
        self.secrets
            .replace(PURE_SECRET, &pp, &secret)
            .await
            .map(|_| ())
            .map_err(|e| redacted(format!("cannot update {path}"), e))
    }

    async fn confirm(&self, user: &str, token: &SecretString) -> Result<()> {
        let path = self.path();
        let secret = self.read_secret().await?;
        let holder = secret
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(TOKEN_USER_ANNOTATION))
            .cloned()
            .unwrap_or_default();
        let holds = pure_json(&secret, &path)?.holds_token(token);
        if holder != user || !holds {
            return Err(Error::State(format!(
                "{path} does not hold the new token of {user} after writing it; re-run to finish"
            )));
        }
        Ok(())
    }
}

fn journal_error(e: JournalError) -> Error {
    Error::State(e.to_string())
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A kube error without anything a secret's body could have put into it: an API
/// answer keeps only its status, a transport error stays as it is (it carries no
/// body).
fn redacted(context: String, e: kube::Error) -> Error {
    match e {
        kube::Error::Api(s) => Error::Refused {
            context,
            code: s.code,
            reason: s.reason,
        },
        other => Error::kube(context, other),
    }
}

/// The secret's `pure.json` (from `stringData` when a caller set it, else `data`).
fn pure_json(secret: &Secret, path: &str) -> Result<PureJson> {
    let parsed = match secret.string_data.as_ref().and_then(|d| d.get("pure.json")) {
        Some(text) => PureJson::parse(text),
        None => {
            let raw = secret
                .data
                .as_ref()
                .and_then(|d| d.get("pure.json"))
                .ok_or_else(|| Error::State(format!("{path}: pure.json: key missing")))?;
            let text = std::str::from_utf8(&raw.0)
                .map_err(|_| Error::State(format!("{path}: pure.json: is not UTF-8 text")))?;
            PureJson::parse(text)
        }
    };
    parsed.map_err(|e| Error::State(format!("{path}: pure.json: {e}")))
}
