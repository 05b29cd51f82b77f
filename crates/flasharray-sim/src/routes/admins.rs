//! `/admins`: local admin accounts (`purefa_user`, `purefa_info`'s admins subset).
//! `pureuser` owns the token the simulator was started with. The mock holds the
//! names; role, password, public key and lock state are kept by the simulator
//! ([`crate::accounts`]), not in the mock's saved state. Passwords are never
//! echoed or logged.

use std::collections::BTreeMap;

use hyper::Method;
use secrecy::SecretString;
use serde_json::{Value, json};

use super::Call;
use crate::accounts::{Account, PasswordRefusal, ROLES};
use crate::paging::{PAGING_PARAMS, PageRequest};
use crate::response::{Fail, Reply, bad_request};
use flasharray_mock::BUILTIN_ADMIN;

fn render(name: &str, account: &Account) -> Value {
    json!({
        "name": name, "api_token": {"created_at": 0, "expires_at": null, "token": null},
        "is_local": true, "locked": account.locked, "lockout_remaining": 0,
        "management_access_policies": [{"name": format!("pure:policy/{}", account.role)}],
        "password": null, "public_key": account.public_key, "role": {"name": account.role},
    })
}

pub(super) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.method {
        Method::GET => list(call).await,
        Method::POST => create(call),
        Method::PATCH => patch(call),
        Method::DELETE => {
            call.query.only(&["names"])?;
            let name: String = single(call)?;
            call.state.mock.delete_admin(&name)?;
            call.state.accounts.remove(&name);
            // A user made again under this name is another user: nothing of the
            // old one's carries over.
            call.state.api_clients.revoke_user(&name);
            call.state.sessions.end_user(&name);
            Ok(Reply::empty())
        }
        _ => Err(call.method_not_allowed()),
    }
}

fn single(call: &Call<'_>) -> Result<String, Fail> {
    let mut names = call.query.csv("names");
    if names.len() != 1 {
        return Err(bad_request(
            Some("names"),
            "Parameter \"names\" must name one admin.",
        ));
    }
    Ok(names.remove(0))
}

/// The admin's name as the array spells it; a name it does not have is an error.
fn existing(call: &Call<'_>, name: &str) -> Result<String, Fail> {
    call.state
        .mock
        .admin_names()
        .into_iter()
        .find(|n| n.eq_ignore_ascii_case(name))
        .ok_or_else(|| bad_request(Some(name), "Admin does not exist."))
}

/// Every admin; those whose rights come from management access policies (realm
/// users, `POST /admins` with `management_access_policies`) as the mock holds them,
/// not as classic role accounts, so that an array-wide caller sees their real rights.
async fn list(call: &Call<'_>) -> Result<Reply, Fail> {
    let mut allowed = vec!["names", "filter", "sort", "expose_api_token"];
    allowed.extend_from_slice(PAGING_PARAMS);
    call.query.only(&allowed)?;
    let page = PageRequest::from_query("admins", &call.query)?;
    let all = call.state.mock.admin_names();
    let wanted = call.query.csv("names");
    if let Some(missing) = wanted
        .iter()
        .find(|w| !all.iter().any(|n| n.eq_ignore_ascii_case(w)))
    {
        return Err(bad_request(Some(missing), "Admin does not exist."));
    }
    let policy_admins: BTreeMap<String, Value> = call
        .state
        .array
        .list_admins(&[])
        .await?
        .into_iter()
        .filter(|a| !a.management_access_policies.is_empty())
        .filter_map(|a| Some((a.name.to_ascii_lowercase(), serde_json::to_value(&a).ok()?)))
        .collect();
    let items: Vec<Value> = all
        .iter()
        .filter(|n| wanted.is_empty() || wanted.iter().any(|w| w.eq_ignore_ascii_case(n)))
        .map(|n| match policy_admins.get(&n.to_ascii_lowercase()) {
            Some(v) => v.clone(),
            None => render(n, &call.state.accounts.get(n)),
        })
        .collect();
    Ok(page.reply(&items, None))
}

fn role_name(role: Option<&Value>) -> Result<Option<String>, Fail> {
    let Some(role) = role else { return Ok(None) };
    let name = role
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| bad_request(Some("role"), "Field \"role\" needs a \"name\"."))?;
    if !ROLES.contains(&name) {
        return Err(bad_request(Some("role"), format!("Invalid role {name:?}.")));
    }
    Ok(Some(name.to_string()))
}

fn create(call: &Call<'_>) -> Result<Reply, Fail> {
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Body {
        role: Option<Value>,
        password: Option<String>,
    }
    call.query.only(&["names"])?;
    let name = single(call)?;
    let body: Body = call.body(&["role", "password"])?;
    let Some(password) = body.password.filter(|p| !p.is_empty()) else {
        return Err(bad_request(Some("password"), "A password is required."));
    };
    let role = role_name(body.role.as_ref())?.unwrap_or_else(|| "readonly".into());
    call.state.mock.create_admin(&name)?;
    call.state
        .accounts
        .create(&name, &role, SecretString::from(password));
    Ok(Reply::items(&[render(
        &name,
        &call.state.accounts.get(&name),
    )]))
}

/// `PATCH /admins?names=x`: what `purefa_user` sends (password with the old one,
/// role, SSH public key; an empty key removes it) and unlocking (`locked: false`;
/// arrays lock accounts themselves, so `locked: true` is refused).
fn patch(call: &Call<'_>) -> Result<Reply, Fail> {
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Body {
        role: Option<Value>,
        password: Option<String>,
        old_password: Option<String>,
        public_key: Option<String>,
        locked: Option<bool>,
    }
    call.query.only(&["names"])?;
    let name = existing(call, &single(call)?)?;
    let body: Body = call.body(&["role", "password", "old_password", "public_key", "locked"])?;
    let role = role_name(body.role.as_ref())?;
    if role.is_some() && name.eq_ignore_ascii_case(BUILTIN_ADMIN) {
        return Err(bad_request(
            Some(&name),
            "The role of the built-in admin cannot be changed.",
        ));
    }
    if body.locked == Some(true) {
        return Err(bad_request(
            Some("locked"),
            "An admin can only be unlocked (locked=false); the array locks accounts itself.",
        ));
    }
    if body.old_password.is_some() && body.password.is_none() {
        return Err(bad_request(
            Some("password"),
            "Field \"old_password\" needs \"password\".",
        ));
    }
    // The password is checked first, so that a refused change leaves nothing applied.
    if let Some(new) = body.password.as_deref() {
        call.state
            .accounts
            .change_password(&name, body.old_password.as_deref(), new)
            .map_err(|refusal| match refusal {
                PasswordRefusal::OldPasswordWrong => {
                    bad_request(Some("old_password"), "The old password is incorrect.")
                }
                PasswordRefusal::Empty => bad_request(Some("password"), "A password is required."),
            })?;
    }
    call.state.accounts.update(&name, |account| {
        if let Some(role) = role {
            account.role = role;
        }
        if let Some(key) = body.public_key {
            account.public_key = (!key.is_empty()).then_some(key);
        }
        if body.locked == Some(false) {
            account.locked = false;
        }
    });
    Ok(Reply::items(&[render(
        &name,
        &call.state.accounts.get(&name),
    )]))
}
