//! Secure multi-tenancy (REST 2.36+): `/realms`, `/policies/management-access` and
//! `/admins`, the three pieces of a realm-scoped user: a realm, a policy giving a role
//! inside it, and a token-only admin holding that policy.
//!
//! Lost answers are settled by re-reading the whole (small) collection: a realm,
//! policy or admin that exists is a create that worked; a name that is gone is a
//! delete that worked.

use reqwest::Method;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};
use crate::models::{
    Admin, AdminPost, ManagementAccessPolicy, ManagementAccessPolicyPost, Realm, RealmPatch,
    RealmPost,
};
use crate::name::{RealmName, same_name};
use crate::params::ListParams;
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::reconcile::{Verdict, json, require, strings};
use crate::rest::session::ApiVersion;

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

/// `POST /realms?names=...`. Lost answer: a live realm of that name is done.
pub(super) async fn create(
    array: &RestArray,
    names: &[RealmName],
    body: &RealmPost,
) -> Result<Vec<Realm>> {
    multi_tenancy(array).await?;
    require("create realms", names)?;
    let bytes = json(body)?;
    write_settled(
        array,
        Method::POST,
        REALMS,
        strings(names),
        None,
        Some(bytes),
        |r: &Realm, n| same_name(&r.name, n) && !r.destroyed,
        true,
    )
    .await
}

/// `PATCH /realms?names=...[&destroy_contents=true]`. Lost answer: a realm showing
/// the asked `destroyed` state is done.
pub(super) async fn patch(
    array: &RestArray,
    names: &[RealmName],
    patch: &RealmPatch,
    destroy_contents: bool,
) -> Result<Vec<Realm>> {
    multi_tenancy(array).await?;
    require("patch realms", names)?;
    let bytes = json(patch)?;
    let want = patch.destroyed;
    let renamed = patch.name.clone();
    write_settled(
        array,
        Method::PATCH,
        REALMS,
        strings(names),
        destroy_contents.then_some("destroy_contents"),
        Some(bytes),
        move |r: &Realm, n| {
            let name_ok = renamed
                .as_deref()
                .map_or_else(|| same_name(&r.name, n), |new| same_name(&r.name, new));
            name_ok && want.is_none_or(|d| d == r.destroyed)
        },
        true,
    )
    .await
}

/// `DELETE /realms?names=...[&eradicate_contents=true]`. Lost answer: gone is done.
pub(super) async fn eradicate(
    array: &RestArray,
    names: &[RealmName],
    eradicate_contents: bool,
) -> Result<()> {
    multi_tenancy(array).await?;
    require("eradicate realms", names)?;
    write_settled::<Realm>(
        array,
        Method::DELETE,
        REALMS,
        strings(names),
        eradicate_contents.then_some("eradicate_contents"),
        None,
        |r, n| same_name(&r.name, n),
        false,
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

/// `POST /policies/management-access?names=...`. Lost answer: existing is done.
pub(super) async fn create_policies(
    array: &RestArray,
    names: &[String],
    body: &ManagementAccessPolicyPost,
) -> Result<Vec<ManagementAccessPolicy>> {
    multi_tenancy(array).await?;
    require("create management access policies", names)?;
    write_settled(
        array,
        Method::POST,
        POLICIES,
        names.to_vec(),
        None,
        Some(json(body)?),
        |p: &ManagementAccessPolicy, n| same_name(&p.name, n),
        true,
    )
    .await
}

/// `DELETE /policies/management-access?names=...`. Lost answer: gone is done.
pub(super) async fn delete_policies(array: &RestArray, names: &[String]) -> Result<()> {
    multi_tenancy(array).await?;
    require("delete management access policies", names)?;
    write_settled::<ManagementAccessPolicy>(
        array,
        Method::DELETE,
        POLICIES,
        names.to_vec(),
        None,
        None,
        |p, n| same_name(&p.name, n),
        false,
    )
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

/// `POST /admins?names=...`. Lost answer: an existing admin is done.
pub(super) async fn create_admins(
    array: &RestArray,
    names: &[String],
    body: &AdminPost,
) -> Result<Vec<Admin>> {
    multi_tenancy(array).await?;
    require("create admins", names)?;
    write_settled(
        array,
        Method::POST,
        ADMINS,
        names.to_vec(),
        None,
        Some(json(body)?),
        |a: &Admin, n| same_name(&a.name, n),
        true,
    )
    .await
}

/// `DELETE /admins?names=...`. Lost answer: gone is done.
pub(super) async fn delete_admins(array: &RestArray, names: &[String]) -> Result<()> {
    multi_tenancy(array).await?;
    require("delete admins", names)?;
    write_settled::<Admin>(
        array,
        Method::DELETE,
        ADMINS,
        names.to_vec(),
        None,
        None,
        |a, n| same_name(&a.name, n),
        false,
    )
    .await
    .map(drop)
}

/// Names of the objects a collection lists, for the re-read after a lost answer.
trait Listed: DeserializeOwned + Clone + Send + Sync + 'static {}
impl Listed for Realm {}
impl Listed for ManagementAccessPolicy {}
impl Listed for Admin {}

/// One write over `names`; after a lost answer, re-reads the whole collection. With
/// `present`, a name whose object passes `shows` is done; without, a name no object
/// passes `shows` for is done (deletes).
#[allow(clippy::too_many_arguments)]
async fn write_settled<T: Listed>(
    array: &RestArray,
    method: Method,
    path: &'static str,
    names: Vec<String>,
    flag: Option<&'static str>,
    body: Option<Vec<u8>>,
    shows: impl Fn(&T, &str) -> bool + Sync,
    present: bool,
) -> Result<Vec<T>> {
    let (body, shows, method) = (&body, &shows, &method);
    array
        .settle(
            &format!("{method} {path}"),
            names,
            |pending| {
                Box::pin(async move {
                    let mut q = Query::new().csv("names", &pending);
                    if let Some(f) = flag {
                        q = q.flag(f, true);
                    }
                    let reply = array
                        .transport
                        .write(method.clone(), path, q, body.clone())
                        .await?;
                    if *method == Method::DELETE {
                        Ok(Vec::new())
                    } else {
                        reply.items()
                    }
                })
            },
            |pending| {
                Box::pin(async move {
                    let all: Vec<T> = array
                        .transport
                        .collect_pages(Pager::new(path, Query::new(), None))
                        .await?;
                    if present {
                        let mut done = Vec::new();
                        let mut rest = Vec::new();
                        for n in pending {
                            match all.iter().find(|o| shows(o, &n)) {
                                Some(o) => done.push(o.clone()),
                                None => rest.push(n),
                            }
                        }
                        Ok(Verdict::Known {
                            done,
                            pending: rest,
                        })
                    } else {
                        let still: Vec<String> = pending
                            .into_iter()
                            .filter(|n| all.iter().any(|o| shows(o, n)))
                            .collect();
                        Ok(Verdict::Known {
                            done: Vec::new(),
                            pending: still,
                        })
                    }
                })
            },
        )
        .await
}
