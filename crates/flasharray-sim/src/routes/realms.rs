//! Secure multi-tenancy: `/realms`, `/policies/management-access` and `/admins`.
//! Every call reaches the array as the session's admin, so a realm-scoped session
//! sees and changes only its realms (see `crate::realm`).

use flasharray::models::{AdminPost, ManagementAccessPolicyPost, RealmPatch, RealmPost};
use flasharray::{ListParams, RealmName};
use hyper::Method;

use super::Call;
use crate::paging::{PAGING_PARAMS, PageRequest};
use crate::response::{Fail, Reply};

fn with_paging(keys: &[&'static str]) -> Vec<&'static str> {
    let mut v = keys.to_vec();
    v.extend_from_slice(PAGING_PARAMS);
    v
}

pub(super) async fn realms(call: &Call<'_>) -> Result<Reply, Fail> {
    let array = &call.state.array;
    match call.method {
        Method::GET => {
            call.query.only(&with_paging(&["names", "destroyed"]))?;
            let page = PageRequest::from_query("realms", &call.query)?;
            let params = ListParams {
                names: call.query.csv("names"),
                destroyed: call.query.bool("destroyed")?,
                ..ListParams::default()
            };
            Ok(page.reply(&array.list_realms(&params).await?, None))
        }
        Method::POST => {
            call.query.only(&["names"])?;
            let names: Vec<RealmName> = call.required_names("names")?;
            let body: RealmPost = call.body(&["quota_limit", "qos"])?;
            Ok(Reply::items(&array.create_realms(&names, &body).await?))
        }
        Method::PATCH => {
            call.query.only(&["names", "destroy_contents"])?;
            let names: Vec<RealmName> = call.required_names("names")?;
            let destroy_contents = call.query.bool("destroy_contents")?.unwrap_or(false);
            let patch: RealmPatch = call.body(&["name", "destroyed"])?;
            Ok(Reply::items(
                &array.patch_realms(&names, &patch, destroy_contents).await?,
            ))
        }
        Method::DELETE => {
            call.query.only(&["names", "eradicate_contents"])?;
            let names: Vec<RealmName> = call.required_names("names")?;
            let eradicate_contents = call.query.bool("eradicate_contents")?.unwrap_or(false);
            array.eradicate_realms(&names, eradicate_contents).await?;
            Ok(Reply::empty())
        }
        _ => Err(call.method_not_allowed()),
    }
}

/// `/policies/management-access`.
pub(super) async fn management_access(call: &Call<'_>) -> Result<Reply, Fail> {
    let array = &call.state.array;
    let names = call.query.csv("names");
    match call.method {
        Method::GET => {
            call.query.only(&with_paging(&["names"]))?;
            let page = PageRequest::from_query("policies/management-access", &call.query)?;
            let items = array.list_management_access_policies(&names).await?;
            Ok(page.reply(&items, None))
        }
        Method::POST => {
            call.query.only(&["names"])?;
            let body: ManagementAccessPolicyPost =
                call.body(&["enabled", "aggregation_strategy", "rules"])?;
            Ok(Reply::items(
                &array
                    .create_management_access_policies(&names, &body)
                    .await?,
            ))
        }
        Method::DELETE => {
            call.query.only(&["names"])?;
            array.delete_management_access_policies(&names).await?;
            Ok(Reply::empty())
        }
        _ => Err(call.method_not_allowed()),
    }
}

/// `/admins`.
/// Whether an `/admins` call is one for the array's own admin rules: a create with
/// management access policies (a realm-scoped user), or any call by a realm-scoped
/// admin, who may see only itself and create nothing. Classic role/password admins of
/// array-wide callers (Ansible's `purefa_user`) are local accounts (`admins.rs`).
pub(super) fn is_policy_admin_call(call: &Call<'_>) -> bool {
    let with_policies = call.method == Method::POST
        && serde_json::from_slice::<serde_json::Value>(&call.body)
            .is_ok_and(|b| b.get("management_access_policies").is_some());
    with_policies || !call.state.mock.caller_is_array_wide()
}

pub(super) async fn admins(call: &Call<'_>) -> Result<Reply, Fail> {
    let array = &call.state.array;
    let names = call.query.csv("names");
    match call.method {
        Method::GET => {
            call.query.only(&with_paging(&["names"]))?;
            let page = PageRequest::from_query("admins", &call.query)?;
            Ok(page.reply(&array.list_admins(&names).await?, None))
        }
        Method::POST => {
            call.query.only(&["names"])?;
            let body: AdminPost = call.body(&["management_access_policies", "role"])?;
            Ok(Reply::items(&array.create_admins(&names, &body).await?))
        }
        Method::DELETE => {
            call.query.only(&["names"])?;
            array.delete_admins(&names).await?;
            for name in &names {
                call.state.api_clients.revoke_user(name);
                call.state.sessions.end_user(name);
            }
            Ok(Reply::empty())
        }
        _ => Err(call.method_not_allowed()),
    }
}
