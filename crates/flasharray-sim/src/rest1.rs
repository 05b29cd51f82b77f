//! The REST 1.x subset that Pure's Ansible collection still uses: `purefa_token`
//! (collection 1.40, through Pure's REST 1.x SDK `purestorage` 1.19) logs in with a
//! username and password and reads, creates or deletes that admin's API token.
//!
//! Real arrays list 1.x versions before 2.x in `GET /api/api_version` and serve
//! both, so the simulator answers these paths under every 1.x version it
//! advertises:
//!
//! | path | what |
//! | --- | --- |
//! | `POST auth/apitoken` `{username, password}` | the admin's API token |
//! | `POST auth/session` `{api_token}`, `DELETE auth/session` | the session cookie |
//! | `GET array` | id, name, Purity version |
//! | `GET/POST/DELETE admin/<name>/apitoken` | the admin's token |
//!
//! The REST 1.x API token of an admin is the same token as REST 2.x
//! `/admins/api-tokens` shows. An admin without one can still log in with its
//! password: `auth/apitoken` then hands out a credential good only for starting
//! sessions, which is not listed as the admin's token. `purefa_token` reads the
//! admin's token right after logging in with the password and creates one when it
//! is `null`, so an array must allow exactly that. [L] Everything else under 1.x is
//! 404 in REST 1.x's error shape (`[{"msg", "ctx"}]`).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use flasharray_mock::MockArray;
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use super::SimState;
use super::response::Reply;

/// Credentials `auth/apitoken` issued to admins without an API token, by value.
#[derive(Debug, Default)]
pub(crate) struct LoginCredentials {
    by_value: Mutex<HashMap<String, String>>,
}

impl LoginCredentials {
    fn issue(&self, username: &str) -> String {
        let value = uuid::Uuid::new_v4().to_string();
        self.by_value
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(value.clone(), username.to_string());
        value
    }

    fn owner(&self, value: &str) -> Option<String> {
        self.by_value
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(value)
            .cloned()
    }
}

/// Whether `version` is a 1.x version this simulator advertises.
pub(crate) fn serves(state: &SimState, version: &str) -> bool {
    version.starts_with("1.") && state.versions.iter().any(|v| v == version)
}

fn error(status: StatusCode, ctx: Option<&str>, msg: &str) -> Reply {
    Reply::json(status, &json!([{ "msg": msg, "ctx": ctx }]))
}

fn session_cookie(headers: &hyper::HeaderMap) -> Option<String> {
    headers
        .get_all(hyper::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == "session")
        .map(|(_, v)| v.to_string())
}

fn with_session(reply: Reply, session: &str) -> Reply {
    reply.with_header(
        "set-cookie",
        &format!("session={session}; Path=/; Secure; HttpOnly"),
    )
}

/// Answers one REST 1.x request (`resource` is the path after `/api/1.N/`).
pub(crate) async fn route(
    state: &SimState,
    method: &Method,
    resource: &str,
    headers: &hyper::HeaderMap,
    body: &[u8],
) -> Reply {
    let field = |key: &str| -> Option<String> {
        serde_json::from_slice::<Value>(body)
            .ok()?
            .get(key)?
            .as_str()
            .map(str::to_string)
    };
    match (method, resource) {
        (&Method::POST, "auth/apitoken") => {
            let (Some(user), Some(password)) = (field("username"), field("password")) else {
                return error(
                    StatusCode::BAD_REQUEST,
                    None,
                    "username and password are required.",
                );
            };
            let Some(name) = state
                .mock
                .admin_names()
                .into_iter()
                .find(|n| n.eq_ignore_ascii_case(&user))
                .filter(|n| state.accounts.check_password(n, &password))
            else {
                return error(StatusCode::BAD_REQUEST, None, "invalid credentials");
            };
            let token = match state
                .array
                .list_api_tokens(std::slice::from_ref(&name), true)
                .await
            {
                Ok(tokens) => tokens
                    .into_iter()
                    .find_map(|t| t.api_token.expose().map(str::to_string)),
                Err(_) => None,
            };
            let token = token.unwrap_or_else(|| state.login_credentials.issue(&name));
            Reply::json(StatusCode::OK, &json!({ "api_token": token }))
        }
        (&Method::POST, "auth/session") => {
            let Some(presented) = field("api_token").filter(|t| !t.is_empty()) else {
                return error(
                    StatusCode::BAD_REQUEST,
                    Some("api_token"),
                    "api_token is required.",
                );
            };
            let user = if state.is_configured_token(&presented) {
                Some(flasharray_mock::BUILTIN_ADMIN.to_string())
            } else {
                state
                    .mock
                    .api_token_owner(&presented)
                    .or_else(|| state.login_credentials.owner(&presented))
            };
            let Some(user) = user else {
                return error(StatusCode::UNAUTHORIZED, None, "invalid credentials");
            };
            let session = state.sessions.login(&user, state.now_ms());
            with_session(
                Reply::json(StatusCode::OK, &json!({ "username": user })),
                &session,
            )
        }
        _ => authenticated(state, method, resource, headers).await,
    }
}

async fn authenticated(
    state: &SimState,
    method: &Method,
    resource: &str,
    headers: &hyper::HeaderMap,
) -> Reply {
    let Some(session) = session_cookie(headers) else {
        return error(StatusCode::UNAUTHORIZED, None, "Authentication required.");
    };
    let Ok(user) = state.sessions.check(Some(&session), state.now_ms()) else {
        return error(
            StatusCode::UNAUTHORIZED,
            None,
            "Session expired or invalid.",
        );
    };
    // As under 2.x, the array learns who calls from the session.
    MockArray::calling_as(&user, async {
        session_call(state, method, resource, &session, &user).await
    })
    .await
}

async fn session_call(
    state: &SimState,
    method: &Method,
    resource: &str,
    session: &str,
    user: &str,
) -> Reply {
    let reply = match (method, resource) {
        (&Method::DELETE, "auth/session") => {
            state.sessions.end(session);
            return Reply::json(StatusCode::OK, &json!({}));
        }
        (&Method::GET, "array") => match state.array.get_array().await {
            Ok(info) => Reply::json(
                StatusCode::OK,
                &json!({
                    "array_name": info.name, "id": info.id,
                    "revision": "sim", "version": info.version,
                }),
            ),
            Err(e) => error(StatusCode::BAD_REQUEST, None, &e.to_string()),
        },
        _ => match resource
            .strip_prefix("admin/")
            .and_then(|r| r.strip_suffix("/apitoken"))
        {
            Some(admin) if !admin.is_empty() && !admin.contains('/') => {
                let admin = super::query::percent_decode(admin);
                // The rights of REST 2.x: a user's own token, or array_admin.
                let allowed =
                    super::api_clients::session_caller(state, user.to_string()).and_then(|c| {
                        c.authorize(method, "admins/api-tokens", std::slice::from_ref(&admin))
                    });
                if allowed.is_err() {
                    return with_session(
                        error(StatusCode::FORBIDDEN, Some(&admin), "Permission denied."),
                        session,
                    );
                }
                api_token(state, method, &admin, user).await
            }
            _ => error(
                StatusCode::NOT_FOUND,
                Some(resource),
                "Not found: the simulator serves only the REST 1.x token calls.",
            ),
        },
    };
    with_session(reply, session)
}

/// `admin/<name>/apitoken`: the REST 1.x view of the admin's REST 2.x token; its
/// value is shown to that admin only, as under 2.x.
async fn api_token(state: &SimState, method: &Method, admin: &str, caller: &str) -> Reply {
    let own = admin.eq_ignore_ascii_case(caller);
    let fail = |e: flasharray::Error| error(StatusCode::BAD_REQUEST, Some(admin), &e.to_string());
    let shown = |token: Option<&str>, created: Option<u64>, expires: Option<u64>| {
        json!({
            "name": admin, "api_token": token,
            "created": created.map(iso8601), "expires": expires.map(iso8601),
        })
    };
    match *method {
        Method::GET => match state
            .array
            .list_api_tokens(&[admin.to_string()], true)
            .await
        {
            Ok(tokens) => {
                let t = tokens.first().map(|t| &t.api_token);
                Reply::json(
                    StatusCode::OK,
                    &shown(
                        t.and_then(|t| t.expose())
                            .map(|v| if own { v } else { "****" }),
                        t.and_then(|t| t.created_at),
                        t.and_then(|t| t.expires_at),
                    ),
                )
            }
            Err(e) => fail(e),
        },
        Method::POST => match state.array.create_api_token(admin, None).await {
            Ok(t) => Reply::json(
                StatusCode::OK,
                &shown(
                    t.api_token.expose(),
                    t.api_token.created_at,
                    t.api_token.expires_at,
                ),
            ),
            Err(e) => fail(e),
        },
        Method::DELETE => match state.array.delete_api_token(admin).await {
            Ok(()) => Reply::json(StatusCode::OK, &json!({ "name": admin, "api_token": null })),
            Err(e) => fail(e),
        },
        _ => error(StatusCode::BAD_REQUEST, None, "Method not supported."),
    }
}

/// Milliseconds since the epoch as REST 1.x writes times (`2017-12-16T05:12:52Z`).
fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil-from-days, for days since 1970-01-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_cookies() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(1_513_401_172_000), "2017-12-16T05:12:52Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00Z");
        let mut h = hyper::HeaderMap::new();
        h.insert(hyper::header::COOKIE, "a=1; session=xyz".parse().unwrap());
        assert_eq!(session_cookie(&h).as_deref(), Some("xyz"));
        assert_eq!(session_cookie(&hyper::HeaderMap::new()), None);
    }
}
