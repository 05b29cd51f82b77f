//! `/admins/api-tokens`: list, create and delete an admin's API token.

use std::time::Duration;

use reqwest::Method;

use crate::error::{Error, Result};
use crate::models::AdminApiToken;
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;

/// `GET /admins/api-tokens?names=...`; `expose` asks for the token values.
pub(super) async fn list(
    array: &RestArray,
    admins: &[String],
    expose: bool,
) -> Result<Vec<AdminApiToken>> {
    let mut q = Query::new().csv("names", admins);
    if expose {
        q = q.flag("expose_api_token", true);
    }
    array
        .transport
        .collect_pages(Pager::new("admins/api-tokens", q, None))
        .await
}

/// `POST /admins/api-tokens?names=...[&timeout=ms]`.
pub(super) async fn create(
    array: &RestArray,
    admin: &str,
    timeout: Option<Duration>,
) -> Result<AdminApiToken> {
    if admin.is_empty() {
        return Err(Error::InvalidRequest(
            "create API token: no admin name".into(),
        ));
    }
    let mut q = Query::new().csv("names", &[admin]);
    if let Some(t) = timeout {
        q = q.number("timeout", t.as_millis().min(u128::from(u64::MAX)) as u64);
    }
    let created: Vec<AdminApiToken> = array
        .transport
        .write(Method::POST, "admins/api-tokens", q, None)
        .await?
        .items()?;
    created.into_iter().next().ok_or_else(|| Error::Decode {
        operation: "POST admins/api-tokens".into(),
        path: "items".into(),
        message: "the array answered with no token".into(),
    })
}

/// `DELETE /admins/api-tokens?names=...`.
pub(super) async fn delete(array: &RestArray, admin: &str) -> Result<()> {
    if admin.is_empty() {
        return Err(Error::InvalidRequest(
            "delete API token: no admin name".into(),
        ));
    }
    array
        .transport
        .write(
            Method::DELETE,
            "admins/api-tokens",
            Query::new().csv("names", &[admin]),
            None,
        )
        .await
        .map(drop)
}
