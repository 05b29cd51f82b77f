//! From an HTTP request to a trait call and back.
//!
//! `route` handles what exists only over HTTP (versions, login, sessions, HTTP
//! faults) and then dispatches `/api/2.N/<resource>` to one module per resource.
//! Every `2.N` prefix reaches the same handlers, since clients pin different
//! versions (LXD uses 2.21, Pure's SDK the highest both sides know).

mod admins;
mod array;
mod array_connections;
mod connections;
mod controllers;
mod default_protections;
mod host_groups;
mod hosts;
mod inventory;
mod members;
mod pods;
mod realms;
mod settings;
mod tags;
mod tokens;
mod volumes;

use std::str::FromStr;

use flasharray::TagResource;
use flasharray::name::NameError;
use flasharray_mock::MockArray;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::faults::HttpFaultKind;
use super::query::Query;
use super::response::{
    Fail, Reply, bad_request, busy, not_found, rate_limited, request_timeout, unauthorized,
    unavailable,
};
use super::{Call, SimState};

/// Largest request body accepted; real requests are a few KiB.
const MAX_BODY: usize = 4 * 1024 * 1024;

impl Call<'_> {
    /// The error for a method this path does not have.
    pub(crate) fn method_not_allowed(&self) -> Fail {
        bad_request(
            None,
            format!(
                "Method {} is not supported on /{}.",
                self.method, self.resource
            ),
        )
    }

    /// The body as `T`, refusing any field outside `allowed` with a 400 naming it,
    /// so that a client never believes a setting was applied when the simulator
    /// does not model it. An empty body is `T::default()`.
    pub(crate) fn body<T: DeserializeOwned + Default>(&self, allowed: &[&str]) -> Result<T, Fail> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(T::default());
        }
        let value: Value = serde_json::from_slice(&self.body)
            .map_err(|e| bad_request(None, format!("Invalid JSON in the request body: {e}")))?;
        let Some(object) = value.as_object() else {
            return Err(bad_request(None, "The request body must be a JSON object."));
        };
        for key in object.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(bad_request(
                    Some(key),
                    format!("Field {key:?} is not supported by the simulator for this request."),
                ));
            }
        }
        serde_json::from_value(value)
            .map_err(|e| bad_request(None, format!("Invalid request body: {e}")))
    }

    /// The body as a JSON list (tag batches).
    pub(crate) fn body_list<T: DeserializeOwned>(&self) -> Result<Vec<T>, Fail> {
        serde_json::from_slice(&self.body).map_err(|e| {
            bad_request(
                None,
                format!("Invalid request body: expected a JSON list: {e}"),
            )
        })
    }

    /// Validated names from a csv parameter; an invalid name is a 400 naming it.
    pub(crate) fn names<N>(&self, key: &str) -> Result<Vec<N>, Fail>
    where
        N: FromStr<Err = NameError>,
    {
        self.query
            .csv(key)
            .iter()
            .map(|n| N::from_str(n).map_err(|e| bad_request(Some(n), e.to_string())))
            .collect()
    }

    /// Like [`Call::names`], but at least one name is required.
    pub(crate) fn required_names<N>(&self, key: &str) -> Result<Vec<N>, Fail>
    where
        N: FromStr<Err = NameError>,
    {
        let names = self.names(key)?;
        if names.is_empty() {
            return Err(bad_request(
                Some(key),
                format!("Parameter {key:?} is required."),
            ));
        }
        Ok(names)
    }

    /// Exactly one validated name (e.g. `group_names` on membership writes).
    pub(crate) fn single_name<N>(&self, key: &str) -> Result<N, Fail>
    where
        N: FromStr<Err = NameError>,
    {
        let mut names = self.required_names::<N>(key)?;
        if names.len() > 1 {
            return Err(bad_request(
                Some(key),
                format!("Parameter {key:?} accepts only one name here."),
            ));
        }
        Ok(names.remove(0))
    }

    /// Refuses `ids` where the simulator only addresses objects by name.
    pub(crate) fn no_ids(&self, key: &str) -> Result<(), Fail> {
        if self.query.has(key) {
            return Err(bad_request(
                Some(key),
                format!("Parameter {key:?} is not supported by the simulator; use names."),
            ));
        }
        Ok(())
    }
}

/// The whole request body, within [`SimState::body_timeout`]: a sender slower than
/// that gets `408` in the array's error shape, and the connection is closed.
async fn read_body(state: &SimState, body: Incoming) -> Result<Bytes, Fail> {
    let read = axum::body::to_bytes(axum::body::Body::new(body), MAX_BODY);
    let read = match state.body_timeout {
        Some(limit) => tokio::time::timeout(limit, read)
            .await
            .map_err(|_| request_timeout())?,
        None => read.await,
    };
    read.map_err(|e| bad_request(None, format!("Cannot read the request body: {e}")))
}

/// The fault a test queued for this request, if any: `Ok(true)` when the write is
/// to be done and its answer lost, `Err` when the request is answered by the fault.
fn injected_fault(
    state: &SimState,
    is_write: bool,
    session: Option<&str>,
    bearer: Option<&str>,
) -> Result<bool, Fail> {
    match state.faults.next(is_write) {
        None => Ok(false),
        Some(HttpFaultKind::ExpireSession) => {
            if let Some(token) = session {
                state.sessions.end(token);
            }
            if let Some(token) = bearer {
                state.api_clients.end(token);
            }
            Err(unauthorized("Session expired."))
        }
        Some(HttpFaultKind::RateLimit { retry_after }) => Err(rate_limited(
            retry_after.as_secs(),
            "API rate limit exceeded",
        )),
        Some(HttpFaultKind::Busy) => Err(busy()),
        Some(HttpFaultKind::Unavailable) => {
            Err(unavailable("Service unavailable. Please retry later."))
        }
        Some(HttpFaultKind::DropWrite) => Err(Fail::Drop),
        Some(HttpFaultKind::LoseAnswer) => Ok(true),
    }
}

/// Answers one request (`Err(Fail::Drop)` closes the connection unanswered).
pub(crate) async fn route(state: &SimState, req: Request<Incoming>) -> Result<Reply, Fail> {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path();
    if path == "/api/api_version" {
        if parts.method != Method::GET {
            return Err(bad_request(
                None,
                "Only GET is supported on /api/api_version.",
            ));
        }
        return Ok(Reply::json(
            StatusCode::OK,
            &json!({ "version": state.versions }),
        ));
    }
    if path == super::api_clients::TOKEN_PATH {
        let body = read_body(state, body).await?;
        return Ok(super::api_clients::token(state, &parts.method, &body));
    }
    if let Some(action) = path.strip_prefix(array_connections::PEER_PREFIX) {
        if parts.method != Method::POST {
            return Err(bad_request(None, "Use POST for replication calls."));
        }
        let action = action.to_string();
        let body = read_body(state, body).await?;
        return array_connections::peer(state, &action, &body).await;
    }
    let Some((version, resource)) = path
        .strip_prefix("/api/")
        .and_then(|rest| rest.split_once('/'))
    else {
        return Err(not_found(path));
    };
    if super::rest1::serves(state, version) {
        let resource = resource.trim_end_matches('/').to_string();
        let body = read_body(state, body).await?;
        return Ok(
            super::rest1::route(state, &parts.method, &resource, &parts.headers, &body).await,
        );
    }
    // Only what `GET /api/api_version` lists is served: `/api/3.0/`, `/api/2.99/`,
    // `/api/2.99999999999999999999/` and `/api/2.039/` are paths the array does not
    // have.
    let Some(minor) = advertised_rest2_minor(&state.versions, version) else {
        return Err(not_found(path));
    };
    let resource = resource.trim_end_matches('/').to_string();
    // A path newer than the version asked for is one the array does not have at
    // that version (`versions.rs`).
    if super::versions::endpoint_since(&resource).is_some_and(|since| minor < since) {
        return Err(not_found(path));
    }
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    match (parts.method.clone(), resource.as_str()) {
        (Method::POST, "login") => return login(state, header("api-token").as_deref()).await,
        (Method::POST, "logout") => {
            if let Some(token) = header("x-auth-token") {
                state.sessions.end(&token);
            }
            if !state.logout_latency.is_zero() {
                tokio::time::sleep(state.logout_latency).await;
            }
            return Ok(Reply::empty());
        }
        (_, "login" | "logout") => {
            return Err(bad_request(None, format!("Use POST for /{resource}.")));
        }
        _ => {}
    }

    let session = header("x-auth-token");
    // An API client's access token (`Authorization: Bearer`), else the session.
    let bearer =
        header("authorization").and_then(|h| h.strip_prefix("Bearer ").map(str::to_string));
    let caller = match &bearer {
        Some(token) => super::api_clients::token_caller(state, token)?,
        None => match state.sessions.check(session.as_deref(), state.now_ms()) {
            Ok(admin) => super::api_clients::session_caller(state, admin)?,
            Err(refusal) => return Err(unauthorized(refusal.message())),
        },
    };
    let query = Query::parse(parts.uri.query());
    // One rights check for both kinds of credential, before anything is read.
    caller.authorize(&parts.method, &resource, &query.csv("names"))?;
    let admin = caller.name;
    let lose_answer = injected_fault(
        state,
        parts.method != Method::GET,
        session.as_deref(),
        bearer.as_deref(),
    )?;

    let body = read_body(state, body).await?;
    // A parameter or body field newer than the version asked for is one the array
    // does not have at that version (`versions.rs`).
    super::versions::refuse_later(&resource, parts.method.as_str(), minor, &query, &body)?;
    let call = Call {
        state,
        caller: admin.clone(),
        method: parts.method,
        resource,
        minor,
        query,
        body,
    };
    // The array learns who calls from the session: a realm-scoped admin's requests
    // reach only its realms.
    let result = MockArray::calling_as(&admin, async {
        match dispatch(&call).await {
            Ok(reply) if super::fields::completes(&call.resource) => {
                Ok(to_version(&call, complete(&call, reply)))
            }
            Ok(reply) => Ok(to_version(&call, reply)),
            other => other,
        }
    })
    .await;
    if lose_answer {
        return Err(Fail::Drop);
    }
    result
}

/// Completes the items of `reply` to the top version's model (see `fields`).
fn complete(call: &Call<'_>, mut reply: Reply) -> Reply {
    // List and item answers are kept as values (`Reply::items`, `PageRequest::reply`)
    // until sent; answers built as bytes are errors and empty bodies.
    if reply.status != StatusCode::OK {
        return reply;
    }
    let Some(value) = reply.json.as_mut() else {
        return reply;
    };
    let (id, name) = call.state.mock.identity();
    let array = json!({ "id": id, "name": name });
    super::fields::complete(&call.resource, &array, value);
    reply
}

/// Leaves out of the answer's items the fields their model has only from a later
/// version than the one the client asked for (`versions.rs`).
fn to_version(call: &Call<'_>, mut reply: Reply) -> Reply {
    if let Some(value) = reply.json.as_mut() {
        super::versions::strip(&call.resource, call.minor, value);
    }
    reply
}

/// The `N` of `2.N` when `v` is one of the advertised `versions`, spelled exactly
/// as listed.
fn advertised_rest2_minor(versions: &[String], v: &str) -> Option<u32> {
    let minor: u32 = v.strip_prefix("2.")?.parse().ok()?;
    versions.iter().any(|listed| listed == v).then_some(minor)
}

/// `POST /login`: the configured token, or any unexpired token the array issued.
async fn login(state: &SimState, api_token: Option<&str>) -> Result<Reply, Fail> {
    let Some(presented) = api_token.filter(|t| !t.is_empty()) else {
        return Err(bad_request(Some("api-token"), "Missing api-token header."));
    };
    let username = if state.is_configured_token(presented) {
        Some("pureuser".to_string())
    } else {
        // Tokens the array issued through /admins/api-tokens log in as their admin.
        state.mock.api_token_owner(presented)
    };
    let Some(username) = username else {
        return Err(unauthorized("Invalid API token."));
    };
    let session = state.sessions.login(&username, state.now_ms());
    Ok(Reply::json(
        StatusCode::OK,
        &json!({ "items": [{ "username": username }] }),
    )
    .with_header("x-auth-token", &session))
}

async fn dispatch(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.resource.as_str() {
        "volumes" => volumes::handle(call).await,
        "volumes/batch" => volumes::batch(call).await,
        "hosts" => hosts::handle(call).await,
        "host-groups" => host_groups::handle(call).await,
        "host-groups/hosts" | "hosts/host-groups" => members::host_group_hosts(call).await,
        "connections" => connections::handle(call).await,
        "pods" => pods::handle(call).await,
        "pods/arrays" => members::pod_arrays(call).await,
        "arrays" => array::arrays(call).await,
        "arrays/space" => array::space(call).await,
        "hardware" => array::hardware(call).await,
        "controllers" => controllers::handle(call).await,
        "array-connections" => array_connections::handle(call).await,
        "array-connections/connection-key" => array_connections::connection_key(call).await,
        "container-default-protections" => default_protections::handle(call).await,
        "admins/api-tokens" => tokens::handle(call).await,
        "api-clients" => super::api_clients::handle(call).await,
        // Admins made with management access policies (realm-scoped users) go
        // through the array's own rules; classic role/password admins (Ansible's
        // purefa_user) through the local-account handler.
        "admins" if realms::is_policy_admin_call(call) => realms::admins(call).await,
        "admins" => admins::handle(call).await,
        "realms" => realms::realms(call).await,
        "policies/management-access" => realms::management_access(call).await,
        other if inventory::is_empty_collection(other) => inventory::empty(call).await,
        other if settings::is_singleton(other) => settings::handle(call).await,
        other => match tag_path(other) {
            Some((kind, false)) => tags::tags(call, kind).await,
            Some((kind, true)) => tags::batch(call, kind).await,
            None => Err(not_found(&format!("/{other}"))),
        },
    }
}

/// `volumes/tags` -> (Volume, false); `hosts/tags/batch` -> (Host, true).
fn tag_path(resource: &str) -> Option<(TagResource, bool)> {
    let (collection, rest) = resource.split_once("/tags")?;
    let batch = match rest {
        "" => false,
        "/batch" => true,
        _ => return None,
    };
    let kind = [
        TagResource::Volume,
        TagResource::Host,
        TagResource::HostGroup,
        TagResource::Pod,
    ]
    .into_iter()
    .find(|k| k.collection() == collection)?;
    Some((kind, batch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_tag_paths() {
        let listed = crate::default_versions();
        let minor = |v: &str| advertised_rest2_minor(&listed, v);
        assert_eq!(minor("2.39"), Some(39));
        assert_eq!(minor("2.0"), Some(0));
        for refused in [
            "1.19",
            "2.",
            "2.x",
            "2.40",
            "2.039",
            "2.+39",
            "2.99999999999999999999",
            "3.0",
        ] {
            assert_eq!(minor(refused), None, "{refused}");
        }
        let custom = ["2.5".to_string(), "2.4294967296".to_string()];
        assert_eq!(advertised_rest2_minor(&custom, "2.5"), Some(5));
        // Listed, but beyond any minor the simulator can hold: not served.
        assert_eq!(advertised_rest2_minor(&custom, "2.4294967296"), None);
        assert_eq!(tag_path("volumes/tags"), Some((TagResource::Volume, false)));
        assert_eq!(
            tag_path("host-groups/tags/batch"),
            Some((TagResource::HostGroup, true))
        );
        assert_eq!(tag_path("pods/tags/x"), None);
        assert_eq!(tag_path("arrays/tags"), None);
    }
}
