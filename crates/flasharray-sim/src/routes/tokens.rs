//! `/admins/api-tokens`: the only place where a token value leaves the simulator,
//! and only when its own admin asks for it (`expose_api_token=true`) or the caller
//! just created it.

use flasharray::models::AdminApiToken;
use hyper::Method;
use serde_json::{Value, json};
use std::time::Duration;

use super::Call;
use crate::paging::{PAGING_PARAMS, PageRequest};
use crate::response::{Fail, Reply, bad_request};

/// Token values are shown masked unless exposure was asked for, as the models'
/// own serialization does.
const MASK: &str = "****";

fn render(t: &AdminApiToken, expose: bool) -> Value {
    let token = match (t.api_token.expose(), expose) {
        (Some(v), true) => Value::from(v),
        (Some(_), false) => Value::from(MASK),
        (None, _) => Value::Null,
    };
    json!({
        "name": t.name,
        "api_token": {
            "created_at": t.api_token.created_at,
            "expires_at": t.api_token.expires_at,
            "token": token,
        },
    })
}

/// The admin that owns the token the simulator was started with.
const LOGIN_ADMIN: &str = "pureuser";

/// The login token's entry: on an array that token belongs to an admin and is
/// listed with the others. Its value is never shown, even with
/// `expose_api_token=true` (the caller already holds it, and it never leaves the
/// simulator's configuration); it was made before the simulator started and does
/// not expire.
fn login_token() -> Value {
    json!({
        "name": LOGIN_ADMIN,
        "api_token": {"created_at": 0, "expires_at": null, "token": MASK},
    })
}

fn admin(call: &Call<'_>) -> Result<String, Fail> {
    let mut names = call.query.csv("names");
    match names.len() {
        1 => Ok(names.remove(0)),
        0 => Err(bad_request(
            Some("names"),
            "Parameter \"names\" is required.",
        )),
        _ => Err(bad_request(
            Some("names"),
            "Parameter \"names\" accepts only one admin here.",
        )),
    }
}

pub(super) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.method {
        Method::GET => {
            let mut allowed = vec!["names", "expose_api_token"];
            allowed.extend_from_slice(PAGING_PARAMS);
            call.query.only(&allowed)?;
            let expose = call.query.bool("expose_api_token")?.unwrap_or(false);
            let page = PageRequest::from_query("admins/api-tokens", &call.query)?;
            let admins = call.query.csv("names");
            let login_admin =
                admins.is_empty() || admins.iter().any(|a| a.eq_ignore_ascii_case(LOGIN_ADMIN));
            let tokens = call.state.array.list_api_tokens(&admins, expose).await?;
            let mut rendered: Vec<Value> = Vec::new();
            if login_admin
                && !tokens
                    .iter()
                    .any(|t| t.name.eq_ignore_ascii_case(LOGIN_ADMIN))
            {
                rendered.push(login_token());
            }
            // `expose_api_token` "exposes the API token of the current user" (Pure's
            // SDK): another admin's stays masked, whatever the caller's role.
            rendered.extend(
                tokens
                    .iter()
                    .map(|t| render(t, expose && t.name.eq_ignore_ascii_case(&call.caller))),
            );
            Ok(page.reply(&rendered, None))
        }
        Method::POST => {
            call.query.only(&["names", "timeout"])?;
            let admin = admin(call)?;
            let timeout = call.query.u64("timeout")?.map(Duration::from_millis);
            let token = call.state.array.create_api_token(&admin, timeout).await?;
            Ok(Reply::items(&[render(&token, true)]))
        }
        Method::DELETE => {
            call.query.only(&["names"])?;
            let admin = admin(call)?;
            call.state.array.delete_api_token(&admin).await?;
            Ok(Reply::empty())
        }
        _ => Err(call.method_not_allowed()),
    }
}
