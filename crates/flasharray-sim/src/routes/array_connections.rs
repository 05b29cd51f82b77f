//! `/array-connections`: replication links to other simulators (see
//! [`crate::replication`]), and the peer side of the link
//! (`/_sim/replication/connect` and `/disconnect`).

use hyper::Method;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Call;
use crate::SimState;
use crate::paging::{PAGING_PARAMS, PageRequest};
use crate::peer;
use crate::replication::{Link, TYPES};
use crate::response::{Fail, Reply, bad_request};

/// The peer endpoints, under the simulator's own prefix.
pub(super) const PEER_PREFIX: &str = "/_sim/replication/";

async fn this_array(state: &SimState) -> Result<(String, String, String), Fail> {
    let info = state.array.get_array().await?;
    Ok((
        info.id.unwrap_or_default(),
        info.name,
        info.version.unwrap_or_default(),
    ))
}

pub(super) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    match call.method {
        Method::GET => list(call).await,
        Method::POST => connect(call).await,
        Method::PATCH => patch(call).await,
        Method::DELETE => disconnect(call).await,
        _ => Err(call.method_not_allowed()),
    }
}

/// The connections named by `names` (every one must exist), or all.
fn selected(call: &Call<'_>) -> Result<Vec<Link>, Fail> {
    let mut wanted = call.query.csv("names");
    wanted.extend(call.query.csv("remote_names"));
    let links = call.state.replication.links();
    if let Some(missing) = wanted
        .iter()
        .find(|w| !links.iter().any(|l| l.remote_name.eq_ignore_ascii_case(w)))
    {
        return Err(bad_request(
            Some(missing),
            "Array connection does not exist.",
        ));
    }
    Ok(links
        .into_iter()
        .filter(|l| {
            wanted.is_empty() || wanted.iter().any(|w| l.remote_name.eq_ignore_ascii_case(w))
        })
        .collect())
}

async fn context(call: &Call<'_>) -> Result<Value, Fail> {
    let (id, name, _) = this_array(call.state).await?;
    Ok(json!({ "id": id, "name": name }))
}

async fn list(call: &Call<'_>) -> Result<Reply, Fail> {
    let mut allowed = vec!["names", "remote_names", "sort"];
    allowed.extend_from_slice(PAGING_PARAMS);
    call.query.only(&allowed)?;
    let page = PageRequest::from_query("array-connections", &call.query)?;
    let array = context(call).await?;
    let items: Vec<Value> = selected(call)?.iter().map(|l| l.render(&array)).collect();
    Ok(page.reply(&items, None))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ConnectBody {
    connection_key: Option<String>,
    management_address: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    replication_transport: Option<String>,
    encryption: Option<String>,
    replication_addresses: Option<Vec<String>>,
}

fn kind(value: Option<&str>) -> Result<String, Fail> {
    let kind = value.unwrap_or(TYPES[0]);
    if !TYPES.contains(&kind) {
        return Err(bad_request(
            Some("type"),
            format!("Invalid value {kind:?} for type: expected one of {TYPES:?}."),
        ));
    }
    Ok(kind.to_string())
}

/// `replication_transport`: `ip` (the default) or `fc`. Pure's collection 1.40
/// (`purefa_connect`) sends the replication type here (`async-replication`); an
/// array evidently accepts that, so it is taken as the default transport. [L]
fn transport(value: Option<&str>) -> Result<String, Fail> {
    match value {
        None | Some("ip") => Ok("ip".into()),
        Some("fc") => Ok("fc".into()),
        Some(t) if TYPES.contains(&t) => Ok("ip".into()),
        Some(t) => Err(bad_request(
            Some("replication_transport"),
            format!("Invalid value {t:?} for replication_transport: expected ip or fc."),
        )),
    }
}

async fn connect(call: &Call<'_>) -> Result<Reply, Fail> {
    call.query.only(&[])?;
    let body: ConnectBody = call.body(&[
        "connection_key",
        "management_address",
        "type",
        "replication_transport",
        "encryption",
        "replication_addresses",
    ])?;
    let kind = kind(body.kind.as_deref())?;
    let transport = transport(body.replication_transport.as_deref())?;
    if body
        .encryption
        .as_deref()
        .is_some_and(|e| e != "unencrypted")
    {
        return Err(bad_request(
            Some("encryption"),
            "Encrypted array connections are not supported by the simulator.",
        ));
    }
    if body.replication_addresses.is_some_and(|a| !a.is_empty()) {
        return Err(bad_request(
            Some("replication_addresses"),
            "Field \"replication_addresses\" is not supported by the simulator.",
        ));
    }
    let Some(address) = body.management_address.filter(|a| !a.is_empty()) else {
        return Err(bad_request(
            Some("management_address"),
            "Field \"management_address\" is required.",
        ));
    };
    let Some(key) = body.connection_key.filter(|k| !k.is_empty()) else {
        return Err(bad_request(
            Some("connection_key"),
            "Field \"connection_key\" is required.",
        ));
    };
    let state = call.state;
    if state.replication.connected_to(None, Some(&address)) {
        return Err(bad_request(
            Some(&address),
            "Array connection already exists.",
        ));
    }
    let (id, name, version) = this_array(state).await?;
    let secret = uuid::Uuid::new_v4().to_string();
    let request = json!({
        "connection_key": key, "id": id, "name": name, "version": version,
        "type": kind, "replication_transport": transport, "secret": secret,
    });
    let (status, answer) = peer::post(
        state.tls,
        &address,
        &format!("{PEER_PREFIX}connect"),
        &request,
    )
    .await
    .map_err(|e| {
        bad_request(
            Some(&address),
            format!("Unable to connect to the remote array: {e}"),
        )
    })?;
    if status != 200 {
        // The peer's refusal (wrong key, already connected) is the array's answer.
        return Err(Fail::Reply(Reply::json(
            hyper::StatusCode::BAD_REQUEST,
            &answer,
        )));
    }
    let field = |k: &str| answer.get(k).and_then(Value::as_str).map(str::to_string);
    let (Some(remote_id), Some(remote_name)) = (field("id"), field("name")) else {
        return Err(bad_request(
            Some(&address),
            "The remote array gave no identity.",
        ));
    };
    let link = Link {
        id: uuid::Uuid::new_v4().to_string(),
        remote_id,
        remote_name,
        remote_version: field("version").unwrap_or_default(),
        management_address: Some(address.clone()),
        peer_url: Some(address),
        kind,
        transport,
        secret: SecretString::from(secret),
    };
    if !state.replication.add(link.clone()) {
        return Err(bad_request(
            Some(&link.remote_name),
            "Array connection already exists.",
        ));
    }
    let array = json!({ "id": id, "name": name });
    Ok(Reply::items(&[link.render(&array)]))
}

/// The one connection a write names.
fn single(call: &Call<'_>) -> Result<Link, Fail> {
    let links = selected(call)?;
    match links.as_slice() {
        [one] if call.query.has("names") || call.query.has("remote_names") => Ok(one.clone()),
        _ => Err(bad_request(
            Some("names"),
            "Parameter \"names\" must name one array connection.",
        )),
    }
}

/// `PATCH`: a new `type`, or `refresh` / `renew_encryption_key` (which have
/// nothing to update between simulators and answer the connection as it is).
async fn patch(call: &Call<'_>) -> Result<Reply, Fail> {
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Body {
        #[serde(rename = "type")]
        kind: Option<String>,
    }
    call.query
        .only(&["names", "remote_names", "refresh", "renew_encryption_key"])?;
    let link = single(call)?;
    let body: Body = call.body(&["type"])?;
    let flags = call.query.bool("refresh")?.unwrap_or(false)
        || call.query.bool("renew_encryption_key")?.unwrap_or(false);
    if flags && body.kind.is_some() {
        return Err(bad_request(
            None,
            "With refresh or renew_encryption_key, no other attribute may be changed.",
        ));
    }
    if let Some(k) = body.kind.as_deref() {
        let k = kind(Some(k))?;
        call.state.replication.set_kind(&link.id, &k);
    }
    let array = context(call).await?;
    let now = call
        .state
        .replication
        .by_name(&link.remote_name)
        .unwrap_or(link);
    Ok(Reply::items(&[now.render(&array)]))
}

async fn disconnect(call: &Call<'_>) -> Result<Reply, Fail> {
    call.query.only(&["names", "remote_names"])?;
    let link = single(call)?;
    let Some(address) = link.peer_url.clone() else {
        return Err(bad_request(
            Some(&link.remote_name),
            "The connection can only be removed from the array that formed it.",
        ));
    };
    let (id, _, _) = this_array(call.state).await?;
    call.state.replication.remove(&link.id);
    // The local side goes in any case, as on an array whose peer is unreachable.
    let request = json!({ "id": id, "secret": link.secret.expose_secret() });
    if let Err(e) = peer::post(
        call.state.tls,
        &address,
        &format!("{PEER_PREFIX}disconnect"),
        &request,
    )
    .await
    {
        tracing::debug!(peer = %link.remote_name, error = %e, "peer not told of the disconnect");
    }
    Ok(Reply::empty())
}

/// `GET /array-connections/connection-key`: the key a remote array presents to
/// connect to this one (made at start, kept until the simulator stops).
pub(super) async fn connection_key(call: &Call<'_>) -> Result<Reply, Fail> {
    if call.method != Method::GET {
        return Err(call.method_not_allowed());
    }
    let mut allowed = vec!["encrypted"];
    allowed.extend_from_slice(PAGING_PARAMS);
    call.query.only(&allowed)?;
    call.query.bool("encrypted")?;
    let page = PageRequest::from_query(&call.resource, &call.query)?;
    Ok(page.reply(
        &[json!({ "connection_key": call.state.replication.key() })],
        None,
    ))
}

/// The peer side: `connect` records a connection formed by another simulator that
/// presents this array's key; `disconnect` removes it given the link secret.
pub(super) async fn peer(state: &SimState, action: &str, body: &[u8]) -> Result<Reply, Fail> {
    #[derive(Deserialize)]
    struct PeerBody {
        id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        version: String,
        #[serde(default)]
        connection_key: String,
        #[serde(rename = "type", default)]
        kind: String,
        #[serde(default)]
        replication_transport: String,
        secret: String,
    }
    let req: PeerBody = serde_json::from_slice(body)
        .map_err(|e| bad_request(None, format!("Invalid replication request: {e}")))?;
    match action {
        "connect" => {
            if !state.replication.key_matches(&req.connection_key) {
                return Err(bad_request(
                    Some("connection_key"),
                    "Invalid connection key.",
                ));
            }
            let (id, name, version) = this_array(state).await?;
            if req.id == id {
                return Err(bad_request(
                    Some(&name),
                    "An array cannot be connected to itself.",
                ));
            }
            let link = Link {
                id: uuid::Uuid::new_v4().to_string(),
                remote_id: req.id,
                remote_name: req.name,
                remote_version: req.version,
                management_address: None,
                peer_url: None,
                kind: kind(Some(&req.kind))?,
                transport: transport(Some(&req.replication_transport))?,
                secret: SecretString::from(req.secret),
            };
            if !state.replication.add(link) {
                return Err(bad_request(Some(&name), "Array connection already exists."));
            }
            Ok(Reply::json(
                hyper::StatusCode::OK,
                &json!({ "id": id, "name": name, "version": version }),
            ))
        }
        "disconnect" if state.replication.remove_by_peer(&req.id, &req.secret) => {
            Ok(Reply::empty())
        }
        "disconnect" => Err(bad_request(None, "Array connection does not exist.")),
        other => Err(bad_request(
            None,
            format!("Unknown replication call {other:?}."),
        )),
    }
}
