//! Secure multi-tenancy (REST 2.36+): `/realms`, `/policies/management-access` and
//! `/admins`, the three pieces of a realm-scoped user: a realm, a policy giving a role
//! inside it, and a token-only admin holding that policy.

use reqwest::Method;

use crate::error::{Error, Result};
use crate::models::{
    Admin, AdminPost, ManagementAccessPolicy, ManagementAccessPolicyPost, Realm, RealmPatch,
    RealmPost,
};
use crate::name::RealmName;
use crate::params::ListParams;
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::session::ApiVersion;
use crate::rest::writes::{json, require, strings};

const REALMS: &str = "realms";
const POLICIES: &str = "policies/management-access";
const ADMINS: &str = "admins";

/// Refuses, before sending anything, on a session older than
/// [`ApiVersion::REALMS`]: an older array has none of these paths (it would
/// answer 404), and saying which version is needed is clearer.
async fn multi_tenancy(array: &RestArray) -> Result<()> {
    let version = array.transport.session().await?.version;
    if version < ApiVersion::REALMS {
        return Err(Error::Version(format!(
            "realms, management access policies and realm users need REST {} or later; \
             this array's session is at REST {version}",
            ApiVersion::REALMS
        )));
    }
    Ok(())
}

/// `GET /realms`.
pub(super) async fn list(array: &RestArray, params: &ListParams) -> Result<Vec<Realm>> {
    multi_tenancy(array).await?;
    array
        .transport
        .collect_pages(Pager::for_list(REALMS, params))
        .await
}

/// `POST /realms?names=...`.
pub(super) async fn create(
    array: &RestArray,
    names: &[RealmName],
    body: &RealmPost,
) -> Result<Vec<Realm>> {
    multi_tenancy(array).await?;
    require("create realms", names)?;
    array
        .named_write(
            Method::POST,
            REALMS,
            &strings(names),
            None,
            Some(json(body)?),
        )
        .await
}

/// `PATCH /realms?names=...[&destroy_contents=true]`.
pub(super) async fn patch(
    array: &RestArray,
    names: &[RealmName],
    patch: &RealmPatch,
    destroy_contents: bool,
) -> Result<Vec<Realm>> {
    multi_tenancy(array).await?;
    require("patch realms", names)?;
    array
        .named_write(
            Method::PATCH,
            REALMS,
            &strings(names),
            destroy_contents.then_some("destroy_contents"),
            Some(json(patch)?),
        )
        .await
}

/// `DELETE /realms?names=...[&eradicate_contents=true]`.
pub(super) async fn eradicate(
    array: &RestArray,
    names: &[RealmName],
    eradicate_contents: bool,
) -> Result<()> {
    multi_tenancy(array).await?;
    require("eradicate realms", names)?;
    array
        .named_write::<()>(
            Method::DELETE,
            REALMS,
            &strings(names),
            eradicate_contents.then_some("eradicate_contents"),
            None,
        )
        .await
        .map(drop)
}

/// `GET /policies/management-access[?names=...]`.
pub(super) async fn list_policies(
    array: &RestArray,
    names: &[String],
) -> Result<Vec<ManagementAccessPolicy>> {
    multi_tenancy(array).await?;
    let q = Query::new().csv("names", names);
    array
        .transport
        .collect_pages(Pager::new(POLICIES, q, None))
        .await
}

/// `POST /policies/management-access?names=...`.
pub(super) async fn create_policies(
    array: &RestArray,
    names: &[String],
    body: &ManagementAccessPolicyPost,
) -> Result<Vec<ManagementAccessPolicy>> {
    multi_tenancy(array).await?;
    require("create management access policies", names)?;
    array
        .named_write(Method::POST, POLICIES, names, None, Some(json(body)?))
        .await
}

/// `DELETE /policies/management-access?names=...`.
pub(super) async fn delete_policies(array: &RestArray, names: &[String]) -> Result<()> {
    multi_tenancy(array).await?;
    require("delete management access policies", names)?;
    array
        .named_write::<()>(Method::DELETE, POLICIES, names, None, None)
        .await
        .map(drop)
}

/// `GET /admins[?names=...]`.
pub(super) async fn list_admins(array: &RestArray, names: &[String]) -> Result<Vec<Admin>> {
    multi_tenancy(array).await?;
    let q = Query::new().csv("names", names);
    array
        .transport
        .collect_pages(Pager::new(ADMINS, q, None))
        .await
}

/// `POST /admins?names=...`.
pub(super) async fn create_admins(
    array: &RestArray,
    names: &[String],
    body: &AdminPost,
) -> Result<Vec<Admin>> {
    multi_tenancy(array).await?;
    require("create admins", names)?;
    array
        .named_write(Method::POST, ADMINS, names, None, Some(json(body)?))
        .await
}

/// `DELETE /admins?names=...`.
pub(super) async fn delete_admins(array: &RestArray, names: &[String]) -> Result<()> {
    multi_tenancy(array).await?;
    require("delete admins", names)?;
    array
        .named_write::<()>(Method::DELETE, ADMINS, names, None, None)
        .await
        .map(drop)
}
