//! `/admins`: local admin accounts (`purefa_user`, `purefa_info`'s admins subset).
//! `pureuser` owns the token the simulator was started with. Roles of admins made
//! here are kept by the simulator, not in the mock's saved state. Passwords are
//! required on create as on an array, and dropped at once: they are never stored,
//! echoed or logged, and nothing logs in with them.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use hyper::Method;
use serde_json::{Value, json};

use super::Call;
use crate::admins::BUILTIN_ADMIN;
use crate::sim::paging::{PAGING_PARAMS, PageRequest};
use crate::sim::response::{Fail, Reply, bad_request};

/// The roles an admin may have (REST 2.x `role.name`).
const ROLES: &[&str] = &["readonly", "ops_admin", "storage_admin", "array_admin"];

fn roles<'a>(call: &Call<'a>) -> MutexGuard<'a, BTreeMap<String, String>> {
    lock(&call.state.admin_roles)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn render(name: &str, role: &str) -> Value {
    json!({
        "name": name, "api_token": {"created_at": 0, "expires_at": null, "token": null},
        "is_local": true, "locked": false, "lockout_remaining": 0,
        "management_access_policies": [{"name": format!("pure:policy/{role}")}],
        "password": null, "public_key": null, "role": {"name": role},
    })
}

fn role_of(call: &Call<'_>, name: &str) -> String {
    if name.eq_ignore_ascii_case(BUILTIN_ADMIN) {
        return "array_admin".into();
    }
    roles(call)
        .get(&name.to_ascii_lowercase())
        .cloned()
        .unwrap_or_else(|| "storage_admin".into())
}

pub(super) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.method {
        Method::GET => list(call).await,
        Method::POST => create(call),
        Method::DELETE => {
            call.query.only(&["names"])?;
            let name: String = single(call)?;
            call.state.mock.delete_admin(&name)?;
            roles(call).remove(&name.to_ascii_lowercase());
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
            None => render(n, &role_of(call, n)),
        })
        .collect();
    Ok(page.reply(&items, None))
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
    if body.password.as_deref().is_none_or(str::is_empty) {
        return Err(bad_request(Some("password"), "A password is required."));
    }
    let role = body
        .role
        .as_ref()
        .and_then(|r| r.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("readonly")
        .to_string();
    if !ROLES.contains(&role.as_str()) {
        return Err(bad_request(Some("role"), format!("Invalid role {role:?}.")));
    }
    call.state.mock.create_admin(&name)?;
    roles(call).insert(name.to_ascii_lowercase(), role.clone());
    Ok(Reply::items(&[render(&name, &role)]))
}
