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

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use async_trait::async_trait;
use flasharray::FlashArray;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, PostParams};
use px_topology::TenantStorage;
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use serde_json::Value;

use super::BOOKKEEPING_MANAGER;

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
    async fn verify(&self, user: &str, token: &SecretString) -> Result<()>;
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
}

impl RotateOptions {
    /// The defaults for `spec`: alternate `<tokenUser>-alt`, no expiry, six minutes'
    /// grace (Portworx re-reads the secret about every five).
    pub fn for_spec(spec: &TenantStorage) -> Self {
        RotateOptions {
            alternate_user: format!("{}-alt", spec.token_user()),
            lifetime: None,
            grace: Duration::from_secs(360),
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
    let primary = spec.token_user();
    if opts.alternate_user.eq_ignore_ascii_case(&primary) {
        bail!("the alternate token user must differ from the token user {primary}");
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
    let (holder, switched_at) = r.secret_state().await?;
    if !holder.is_empty()
        && !holder.eq_ignore_ascii_case(&primary)
        && !holder.eq_ignore_ascii_case(&alternate)
    {
        bail!(
            "Secret {}/{PURE_SECRET} records token user {holder}, neither {primary} nor {alternate}; \
             check spec.array.tokenUser and --alternate-user",
            r.namespace
        );
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
            .with_context(|| format!("cannot read {path} in the tenant cluster"))?
            .with_context(|| {
                format!("{path} does not exist in the tenant cluster; run pxfa apply first")
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
            .with_context(|| {
                format!(
                    "cannot read the API token of array user {user} (both token users must exist on \
                     the array with the same role)"
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
        self.array
            .delete_api_token(user)
            .await
            .with_context(|| format!("cannot delete the API token of array user {user}"))?;
        self.step(format!("deleted the old token of {user}"));
        Ok(())
    }

    /// New token for `user`, verified, written and confirmed.
    async fn switch_to(&mut self, user: &str) -> Result<()> {
        let created = self
            .array
            .create_api_token(user, self.opts.lifetime)
            .await
            .with_context(|| {
                format!("cannot create an API token for array user {user} (does the user exist?)")
            })?;
        let token = created.api_token.token.with_context(|| {
            format!("the array created a token for {user} but did not return it")
        })?;
        self.step(format!("created a new token for {user}"));
        self.probe
            .verify(user, &token)
            .await
            .with_context(|| format!("the new token of {user} does not log in"))?;
        self.step(format!("verified the new token of {user} (logged in)"));
        self.write(user, &token).await?;
        self.step(format!("wrote the token of {user} to {}", self.path()));
        self.confirm(user, &token).await?;
        self.step(format!(
            "confirmed {} holds the token of {user}",
            self.path()
        ));
        Ok(())
    }

    async fn write(&self, user: &str, token: &SecretString) -> Result<()> {
        let path = self.path();
        let mut secret = self.read_secret().await?;
        let pure = pure_json(&secret).with_context(|| format!("{path}: pure.json"))?;
        let updated = with_token(pure, self.endpoint.as_deref(), token)
            .with_context(|| format!("{path}: pure.json"))?;
        let text = serde_json::to_string_pretty(&updated)? + "\n";
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
            .map_err(|e| anyhow::anyhow!("cannot update {path}: {}", redact(&e)))
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
        let pure = pure_json(&secret).with_context(|| format!("{path}: pure.json"))?;
        let holds = tokens_in(&pure)
            .iter()
            .any(|t| t.as_str() == token.expose_secret());
        if holder != user || !holds {
            bail!(
                "{path} does not hold the new token of {user} after writing it; re-run to finish"
            );
        }
        Ok(())
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A kube error without anything a secret's body could have put into it.
fn redact(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("the API server answered {} {}", s.code, s.reason),
        other => other.to_string(),
    }
}

fn pure_json(secret: &Secret) -> Result<Value> {
    if let Some(text) = secret.string_data.as_ref().and_then(|d| d.get("pure.json")) {
        return serde_json::from_str(text).map_err(|_| anyhow::anyhow!("is not valid JSON"));
    }
    let raw = secret
        .data
        .as_ref()
        .and_then(|d| d.get("pure.json"))
        .context("key missing")?;
    serde_json::from_slice(&raw.0).map_err(|_| anyhow::anyhow!("is not valid JSON"))
}

fn tokens_in(pure: &Value) -> Vec<String> {
    pure.get("FlashArrays")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|fa| fa.get("APIToken").and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// `pure.json` with the token of the tenant's array replaced: the entry whose
/// `MgmtEndPoint` is `endpoint`, or the only entry when no endpoint is set.
pub fn with_token(mut pure: Value, endpoint: Option<&str>, token: &SecretString) -> Result<Value> {
    let arrays = pure
        .get_mut("FlashArrays")
        .and_then(Value::as_array_mut)
        .context("has no FlashArrays list")?;
    let idx = match endpoint {
        Some(ep) => arrays
            .iter()
            .position(|a| a.get("MgmtEndPoint").and_then(Value::as_str) == Some(ep))
            .with_context(|| format!("has no FlashArrays entry with MgmtEndPoint {ep}"))?,
        None if arrays.len() == 1 => 0,
        None => bail!(
            "lists {} arrays and spec.array.endpoint is not set to say which one is the tenant's",
            arrays.len()
        ),
    };
    arrays[idx]["APIToken"] = Value::String(token.expose_secret().to_string());
    Ok(pure)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replaces_only_the_tenant_array_token() {
        let pure = json!({"FlashArrays": [
            {"MgmtEndPoint": "fa1", "APIToken": "old-1"},
            {"MgmtEndPoint": "fa2", "APIToken": "old-2"}]});
        let out = with_token(pure.clone(), Some("fa2"), &SecretString::from("new")).unwrap();
        assert_eq!(tokens_in(&out), ["old-1", "new"]);
        let err = with_token(pure, None, &SecretString::from("new")).unwrap_err();
        assert!(err.to_string().contains("spec.array.endpoint"), "{err}");
    }
}
