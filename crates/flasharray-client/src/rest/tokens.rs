//! `/admins/api-tokens`: list, create and delete an admin's API token.

use std::time::Duration;

use reqwest::Method;

use crate::error::{Error, Result};
use crate::models::AdminApiToken;
use crate::rest::RestArray;
use crate::rest::paging::Pager;
use crate::rest::query::Query;
use crate::rest::reconcile::Verdict;

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

/// Lost answer: if the admin now holds a token, it is read back (exposed) and
/// returned instead of creating a second one; without one, the token is created
/// again. Arrays are believed (low confidence) to refuse a second token while one
/// exists, which this rule relies on.
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
    let admins = [admin.to_string()];
    let admins = &admins;
    let created = array
        .settle(
            "POST admins/api-tokens",
            vec![admin.to_string()],
            |_| {
                Box::pin(async move {
                    let mut q = Query::new().csv("names", &[admin]);
                    if let Some(t) = timeout {
                        q = q.number("timeout", t.as_millis().min(u128::from(u64::MAX)) as u64);
                    }
                    array
                        .transport
                        .write(Method::POST, "admins/api-tokens", q, None)
                        .await?
                        .items()
                })
            },
            |pending| {
                Box::pin(async move {
                    let found = list(array, admins, true).await?;
                    match found
                        .into_iter()
                        .find(|t| t.name.eq_ignore_ascii_case(admin) && t.api_token.token.is_some())
                    {
                        Some(t) => Ok(Verdict::Known {
                            done: vec![t],
                            pending: Vec::new(),
                        }),
                        None => Ok(Verdict::Known {
                            done: Vec::new(),
                            pending,
                        }),
                    }
                })
            },
        )
        .await?;
    created.into_iter().next().ok_or_else(|| Error::Decode {
        operation: "POST admins/api-tokens".into(),
        path: "items".into(),
        message: "the array answered with no token".into(),
    })
}

/// Lost answer: an admin without a token is done.
pub(super) async fn delete(array: &RestArray, admin: &str) -> Result<()> {
    if admin.is_empty() {
        return Err(Error::InvalidRequest(
            "delete API token: no admin name".into(),
        ));
    }
    let admins = [admin.to_string()];
    let admins = &admins;
    array
        .settle(
            "DELETE admins/api-tokens",
            vec![admin.to_string()],
            |_| {
                Box::pin(async move {
                    array
                        .transport
                        .write(
                            Method::DELETE,
                            "admins/api-tokens",
                            Query::new().csv("names", &[admin]),
                            None,
                        )
                        .await
                        .map(|_| Vec::<()>::new())
                })
            },
            |pending| {
                Box::pin(async move {
                    let found = list(array, admins, false).await?;
                    let has = found.iter().any(|t| {
                        t.name.eq_ignore_ascii_case(admin)
                            && (t.api_token.created_at.is_some() || t.api_token.token.is_some())
                    });
                    Ok(Verdict::Known {
                        done: Vec::new(),
                        pending: if has { pending } else { Vec::new() },
                    })
                })
            },
        )
        .await
        .map(drop)
}
