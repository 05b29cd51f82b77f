//! `pxfa token ...`: API tokens of array admin users.
//!
//! A created token is shown exactly once: on stdout (alone on its line, so that
//! `pxfa token create u > file` works), or written to `--out FILE` with mode 0600.
//! Listings never show token values: they ask the array not to expose them, and the
//! models print `****` anyway.

use anyhow::{Context, Result};
use serde::Serialize;

use super::{Ctx, describe};
use crate::args::{OutputFormat, TokenCmd};
use crate::confirm::confirm;
use crate::exit::{InvalidInput, Outcome};
use crate::output::{local_time_opt, to_json, to_yaml};

/// A created token as `-o json|yaml` shows it when no `--out` is given: the one
/// place where a token value reaches stdout, because the admin asked for it.
#[derive(Serialize)]
struct CreatedToken<'a> {
    name: &'a str,
    created_at: Option<u64>,
    expires_at: Option<u64>,
    token: &'a str,
}

fn check_admin(admin: &str) -> Result<()> {
    let ok = !admin.is_empty()
        && admin.len() <= 63
        && admin
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'));
    if ok {
        Ok(())
    } else {
        Err(InvalidInput::error(format!(
            "invalid admin user name {admin:?}: 1–63 letters, digits, '-', '_', '.' or '@'"
        )))
    }
}

/// Runs a `token` subcommand.
pub(crate) async fn run(cmd: TokenCmd, ctx: &Ctx<'_>) -> Result<Outcome> {
    let array = ctx.array();
    let p = ctx.printer;
    match cmd {
        TokenCmd::List { admins } => {
            for a in &admins {
                check_admin(a)?;
            }
            let tokens = array
                .list_api_tokens(&admins, false)
                .await
                .context("cannot list API tokens")?;
            p.emit_list(
                "token",
                &tokens,
                |t| t.name.clone(),
                || {
                    let mut t = p.table(&["ADMIN", "CREATED", "EXPIRES"]);
                    for tok in &tokens {
                        t.add_row(vec![
                            tok.name.clone(),
                            local_time_opt(tok.api_token.created_at),
                            tok.api_token
                                .expires_at
                                .map_or_else(|| "never".into(), crate::output::local_time),
                        ]);
                    }
                    t
                },
            )?;
        }
        TokenCmd::Create {
            admin,
            lifetime,
            out,
        } => {
            check_admin(&admin)?;
            if let Some(d) = lifetime
                && d.as_millis() == 0
            {
                return Err(InvalidInput::error("--lifetime must be longer than 0"));
            }
            let created = array
                .create_api_token(&admin, lifetime)
                .await
                .with_context(|| format!("cannot create an API token for admin {admin}"))?;
            let token = created.api_token.expose().with_context(|| {
                format!("the array created a token for {admin} but did not return it")
            })?;
            let expires = created
                .api_token
                .expires_at
                .map_or_else(|| "never".into(), crate::output::local_time);
            match out {
                Some(path) => {
                    crate::secret_file::write_private(&path, format!("{token}\n").as_bytes())
                        .with_context(|| format!("cannot write the token to {}", path.display()))?;
                    p.done(format!(
                        "created an API token for admin {admin} (expires: {expires}); written to {} (mode 0600)",
                        path.display()
                    ));
                    p.emit(&created, || {
                        p.kv_table(vec![
                            ("admin", created.name.clone()),
                            ("created", local_time_opt(created.api_token.created_at)),
                            ("expires", expires.clone()),
                            ("written to", path.display().to_string()),
                        ])
                    })?;
                }
                None => {
                    p.done(format!(
                        "created an API token for admin {admin} (expires: {expires}); it is shown only this once"
                    ));
                    let shown = CreatedToken {
                        name: &created.name,
                        created_at: created.api_token.created_at,
                        expires_at: created.api_token.expires_at,
                        token,
                    };
                    match p.format {
                        OutputFormat::Json => p.stdout(&to_json(&shown)?)?,
                        OutputFormat::Yaml => p.stdout(&to_yaml(&shown)?)?,
                        // The token alone, whatever the table flavour: it is shown once.
                        _ => p.stdout(token)?,
                    }
                }
            }
        }
        TokenCmd::Delete { admin } => {
            check_admin(&admin)?;
            confirm(
                ctx.yes,
                &format!(
                    "delete the API token of admin {admin} (everything using it loses access)"
                ),
            )?;
            array
                .delete_api_token(&admin)
                .await
                .with_context(|| format!("cannot delete the API token of admin {admin}"))?;
            p.done(format!(
                "deleted the API token of {}",
                describe("admin", std::slice::from_ref(&admin))
            ));
            p.emit(&serde_json::json!({ "deleted": admin }), || {
                p.kv_table(vec![("deleted token of", admin.clone())])
            })?;
        }
        // `commands::run` sends rotation to `cluster::token_rotate` before any session
        // is opened; it never reaches the per-resource commands.
        TokenCmd::Rotate(_) => unreachable!("token rotate is dispatched by commands::run"),
    }
    Ok(Outcome::Success)
}
