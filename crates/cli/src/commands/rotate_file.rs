//! `pxfa token rotate -f SPEC --out DIR`: the rotation for tenants whose
//! px-pure-secret is applied by hand from an `--out` folder, so pxfa cannot reach the
//! tenant cluster. It follows the same two-user bridge as the cluster rotation
//! (`px_cluster::token`), one step per run, because only the admin can apply the file
//! and only then may the old token go:
//!
//! | the file holds | array | this run |
//! |---|---|---|
//! | a template, or the token user's token | alternate has none | new token for the alternate into the file; "apply it, run again after the grace period" |
//! | the alternate's token | (token user may have one) | after the grace period and a confirmation: delete the token user's token, new token for the token user into the file; "apply it, run again" |
//! | the token user's token | alternate has one | after the grace period and a confirmation: delete the alternate's token; done |
//!
//! The file records whose token it holds and since when in the annotations
//! `pxfa.io/token-user` and `pxfa.io/token-switched-at`. Every creation is journaled in
//! `DIR/.pxfa/` (see `crate::token_journal`), so a run killed between creating a token
//! and writing the file is finished by the next one: the journaled token is written,
//! or the undelivered one replaced.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use flasharray::FlashArray;
use px_cluster::{RotateOptions, TokenProbe};
use px_topology::token_journal::{TokenJournal, classify, now_ms};
use px_topology::{
    ArrayFacts, Cluster, JournalVerdict, RenderOptions, Tenant, TokenState, render, to_yaml,
};
use secrecy::SecretString;

use crate::confirm::confirm;
use crate::token_journal::{FileTokenJournal, OUT_SUBDIR};

const USER_ANNOTATION: &str = px_cluster::token::TOKEN_USER_ANNOTATION;
const SWITCHED_ANNOTATION: &str = px_cluster::token::SWITCHED_AT_ANNOTATION;

/// What one run did, for the output.
pub(crate) struct FileRotation {
    /// The steps, in order.
    pub(crate) steps: Vec<String>,
    /// Whether the rotation is complete (no further run needed).
    pub(crate) done: bool,
}

/// Everything a run works with.
pub(crate) struct Rotator<'a> {
    pub(crate) array: &'a dyn FlashArray,
    pub(crate) probe: &'a dyn TokenProbe,
    pub(crate) tenant: &'a Tenant,
    pub(crate) opts: &'a RotateOptions,
    pub(crate) out: &'a Path,
    pub(crate) array_key: String,
    pub(crate) yes: bool,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Rotator<'_> {
    fn token_journal(&self) -> FileTokenJournal {
        FileTokenJournal::new(
            &self.array_key,
            &self.tenant.desired.tenant,
            vec![self.out.join(OUT_SUBDIR)],
        )
    }

    /// The rendered px-pure-secret for `token` (the tenant manifests' own file name
    /// and step).
    fn secret_manifest(
        &self,
        token: Option<&SecretString>,
    ) -> Result<(px_topology::Manifest, u32)> {
        let t = self.tenant;
        let facts = ArrayFacts {
            api_token: token.cloned(),
            ..ArrayFacts::default()
        };
        let all = render(
            &t.spec,
            &t.sizing,
            &facts,
            RenderOptions {
                include_secrets: true,
                ..RenderOptions::default()
            },
        )?;
        let total = all
            .iter()
            .filter(|m| m.cluster == Cluster::Tenant)
            .map(|m| m.order)
            .max()
            .unwrap_or(0);
        let m = all
            .into_iter()
            .find(|m| {
                m.cluster == Cluster::Tenant && m.secret && m.name == px_cluster::token::PURE_SECRET
            })
            .context("the tenant's manifests have no px-pure-secret")?;
        Ok((m, total))
    }

    fn secret_path(&self) -> Result<PathBuf> {
        let (m, _) = self.secret_manifest(None)?;
        Ok(self.out.join(Cluster::Tenant.dir_name()).join(m.file_name))
    }

    /// Whose token the file holds (`None`: a template or no file) and since when.
    fn file_state(&self) -> Result<(Option<String>, u64)> {
        let path = self.secret_path()?;
        let text =
            match px_topology::files::read_input_text(&path, px_topology::files::InputKind::Spec) {
                Ok(t) => t,
                Err(px_topology::files::FileError::Io(e))
                    if e.kind() == std::io::ErrorKind::NotFound =>
                {
                    return Ok((None, 0));
                }
                Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
            };
        let body: serde_json::Value = serde_saphyr::from_str(&text)
            .with_context(|| format!("{} is not a px-pure-secret manifest", path.display()))?;
        let pure = body
            .pointer("/stringData/pure.json")
            .and_then(serde_json::Value::as_str)
            .map(px_topology::PureJson::parse);
        let real = matches!(pure, Some(Ok(ref p)) if p.holds_real_token());
        if !real {
            return Ok((None, 0));
        }
        let ann = |k: &str| {
            body.pointer("/metadata/annotations")
                .and_then(|a| a.get(k))
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        };
        let holder = ann(USER_ANNOTATION).unwrap_or_else(|| self.tenant.spec.token_user());
        let at = ann(SWITCHED_ANNOTATION)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        Ok((Some(holder), at))
    }

    /// Writes the file with `user`'s token (owner-only, atomically, folder fsynced).
    fn write_file(&self, user: &str, token: &SecretString) -> Result<PathBuf> {
        let (mut m, total) = self.secret_manifest(Some(token))?;
        let meta = m
            .body
            .get_mut("metadata")
            .and_then(serde_json::Value::as_object_mut)
            .context("px-pure-secret has no metadata")?;
        let ann = meta
            .entry("annotations")
            .or_insert_with(|| serde_json::json!({}));
        ann[USER_ANNOTATION] = user.into();
        ann[SWITCHED_ANNOTATION] = unix_now().to_string().into();
        m.purpose
            .retain(|l| !l.starts_with("Holds the live API token"));
        m.purpose.push(format!(
            "Holds the API token of array user {user} (written by pxfa token rotate --out)."
        ));
        let text = to_yaml(&m, total)?;
        let path = self.out.join(Cluster::Tenant.dir_name()).join(&m.file_name);
        let dir = path.parent().context("no folder")?;
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        crate::secret_file::write_private(&path, text.as_bytes())?;
        Ok(path)
    }

    /// The user's token on the array: (has one, its `created_at`).
    async fn token_of(&self, user: &str) -> Result<(bool, Option<u64>)> {
        let items = self
            .array
            .list_api_tokens(&[user.to_string()], false)
            .await
            .with_context(|| {
                format!("cannot read the API token of array user {user} (both token users must exist with the same role)")
            })?;
        let t = items
            .into_iter()
            .find(|a| a.name.eq_ignore_ascii_case(user))
            .map(|a| a.api_token)
            .filter(|t| t.created_at.is_some() || t.token.is_some() || t.expires_at.is_some());
        Ok((t.is_some(), t.and_then(|t| t.created_at)))
    }

    /// Creates `user`'s token (journaled), verifies it, writes the file, and lets the
    /// journal go.
    async fn switch_to(&self, user: &str, steps: &mut Vec<String>) -> Result<PathBuf> {
        let token_journal = self.token_journal();
        token_journal.record_intent(user, now_ms())?;
        let created = self
            .array
            .create_api_token(user, self.opts.lifetime)
            .await
            .with_context(|| format!("cannot create an API token for array user {user}"))?;
        let Some(token) = created.api_token.token else {
            bail!("the array created a token for {user} but did not return it");
        };
        token_journal.record_token(user, created.api_token.created_at, &token)?;
        steps.push(format!("created a new token for {user}"));
        self.probe
            .verify(user, &token)
            .await
            .map_err(|e| anyhow::anyhow!("the new token of {user} does not log in: {e}"))?;
        steps.push(format!("verified the new token of {user} (logged in)"));
        let path = self.write_file(user, &token)?;
        token_journal.delivered(user)?;
        let apply = px_topology::shell_join(&[
            "oc".to_string(),
            "apply".to_string(),
            "-f".to_string(),
            path.display().to_string(),
        ]);
        steps.push(format!(
            "wrote the token of {user} to {}: apply it to the tenant cluster ({apply})",
            path.display(),
        ));
        Ok(path)
    }

    /// Deletes `user`'s token once the file has held another for the grace period,
    /// after a confirmation that the file was applied.
    async fn retire(
        &self,
        user: &str,
        holder: &str,
        switched_at: u64,
        steps: &mut Vec<String>,
    ) -> Result<()> {
        let ready = switched_at.saturating_add(self.opts.grace.as_secs());
        let now = unix_now();
        if ready > now {
            let wait = Duration::from_secs(ready - now).min(self.opts.grace);
            bail!(
                "too early to delete the old token of {user}: apply the px-pure-secret in {} (it holds {holder}'s token) \
                 and run this again in {} (Portworx re-reads the secret about every five minutes)",
                self.out.display(),
                humantime::format_duration(wait)
            );
        }
        confirm(
            self.yes,
            &format!(
                "delete the API token of array user {user}: the tenant cluster must already use the px-pure-secret \
                 in {} (token of {holder}); proceed",
                self.out.display()
            ),
        )?;
        self.array
            .delete_api_token(user)
            .await
            .with_context(|| format!("cannot delete the API token of array user {user}"))?;
        steps.push(format!("deleted the old token of {user}"));
        Ok(())
    }

    /// A journal entry left by a killed run: write its token, or replace the token it
    /// proves undelivered. Returns the file written, if any.
    async fn finish_journal(&self, user: &str, steps: &mut Vec<String>) -> Result<Option<PathBuf>> {
        let token_journal = self.token_journal();
        let Some(entry) = token_journal.load(user)? else {
            return Ok(None);
        };
        let (has, created_at) = self.token_of(user).await?;
        let state = if has {
            TokenState::HasToken
        } else {
            TokenState::NoToken
        };
        match classify(Some(&entry), state, created_at) {
            JournalVerdict::PendingDelivery => {
                let token = entry.token.context("journal entry without its token")?;
                let path = self.write_file(user, &token)?;
                token_journal.delivered(user)?;
                steps.push(format!(
                    "wrote the journaled token of {user} (an earlier run was interrupted) to {}: apply it to the tenant cluster",
                    path.display()
                ));
                Ok(Some(path))
            }
            JournalVerdict::Interrupted => {
                self.array
                    .delete_api_token(user)
                    .await
                    .with_context(|| format!("cannot delete the undelivered token of {user}"))?;
                token_journal.delivered(user)?;
                steps.push(format!(
                    "deleted the token of {user} an interrupted run created and never delivered"
                ));
                Ok(None)
            }
            JournalVerdict::None | JournalVerdict::Stale => {
                token_journal.delivered(user)?;
                Ok(None)
            }
        }
    }

    /// One step of the rotation (see the module text).
    pub(crate) async fn run(&self) -> Result<FileRotation> {
        let primary = self.tenant.spec.token_user();
        let alternate = self.opts.alternate_user.clone();
        if alternate.eq_ignore_ascii_case(&primary) {
            return Err(crate::exit::InvalidInput::error(format!(
                "the alternate token user must differ from the token user {primary}"
            )));
        }
        let mut steps = Vec::new();
        for u in [&alternate, &primary] {
            if self.finish_journal(u, &mut steps).await?.is_some() {
                return Ok(FileRotation { steps, done: false });
            }
        }
        let (holder, switched_at) = self.file_state()?;
        let (alt_has, _) = self.token_of(&alternate).await?;
        let is =
            |h: &Option<String>, u: &str| h.as_deref().is_some_and(|h| h.eq_ignore_ascii_case(u));
        if is(&holder, &alternate) {
            let (primary_has, _) = self.token_of(&primary).await?;
            if primary_has {
                self.retire(&primary, &alternate, switched_at, &mut steps)
                    .await?;
            }
            self.switch_to(&primary, &mut steps).await?;
            steps.push(format!(
                "next: once the tenant cluster uses it, run this again to delete the token of {alternate}"
            ));
            return Ok(FileRotation { steps, done: false });
        }
        if let Some(h) = &holder
            && !h.eq_ignore_ascii_case(&primary)
        {
            bail!(
                "the px-pure-secret in {} records token user {h}, neither {primary} nor {alternate}; \
                 check spec.array.tokenUser and --alternate-user",
                self.out.display()
            );
        }
        if alt_has {
            if holder.is_none() {
                bail!(
                    "array user {alternate} has a token and the px-pure-secret in {} holds none: the tenant cluster \
                     may be using it; write the secret the cluster uses into that file (or delete {alternate}'s token \
                     on the array) and run this again",
                    self.out.display()
                );
            }
            self.retire(&alternate, &primary, switched_at, &mut steps)
                .await?;
            steps.push(format!(
                "rotated: the px-pure-secret holds the token of {primary}"
            ));
            return Ok(FileRotation { steps, done: true });
        }
        self.switch_to(&alternate, &mut steps).await?;
        steps.push(format!(
            "next: once the tenant cluster uses it (and Portworx re-read it, about {}), run this again to replace the token of {primary}",
            humantime::format_duration(self.opts.grace)
        ));
        Ok(FileRotation { steps, done: false })
    }
}
