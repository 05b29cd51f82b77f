//! API clients (`/api-clients`) and the OAuth2 token endpoint (`/oauth2/1.0/token`).
//!
//! An admin registers an API client with a PEM RSA public key, an issuer and a
//! maximum role; it starts disabled and is enabled with `PATCH {"enabled": true}`.
//! A tool exchanges an RS256 ID token signed with the matching private key for an
//! access token (RFC 8693 token exchange, form encoded), then sends
//! `Authorization: Bearer <access token>` on every call. Shapes follow the REST 2.x
//! reference and Pure's SDK models (`ApiClient`, `ApiClientPost`, `ApiClientPatch`,
//! `OauthTokenResponse`, `Oauth210TokenPost400Response`/`401Response`); the flow is
//! py-pure-client's `token_manager.py`.
//!
//! The token endpoint checks, in order: the grant and token types, the JWT's form,
//! the client (`aud`), the key id (`kid`), that the client is enabled, the RS256
//! signature against the registered key, `iss`, `exp` and `iat` (on the array's
//! clock, [`CLOCK_LEEWAY_MS`] of slack for `iat`), and that `sub` is a user of the
//! array. Refusals are `400 invalid_request` (a malformed request) or
//! `401 invalid_client` with an `error_description`; the exact texts of a real
//! array are not documented, so these name the failing check.
//!
//! Access tokens are JWTs (Pure's SDK reads their `exp` without checking the
//! signature) with the client's TTL, kept in memory only, like sessions.
//!
//! Rights, one check for both credentials ([`Caller::authorize`]): an access
//! token's are the lesser of its client's maximum role and its user's role, and a
//! session's (from an API token) its user's role, each read again on every request,
//! so a demoted user loses the rights at once. `readonly` and `ops_admin` read,
//! `storage_admin` also writes storage objects ([`STORAGE_RESOURCES`]), and
//! `array_admin` writes everything; any admin may make or remove its own API token,
//! and `expose_api_token` shows the caller's own token only. Deleting a client
//! revokes its access tokens; deleting a user its access tokens and sessions;
//! disabling a client stops new exchanges only [L]. API clients are not part of the
//! mock's saved state.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hyper::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::accounts::ROLES;
use super::paging::{PAGING_PARAMS, PageRequest};
use super::query::Query;
use super::response::{Fail, Reply, bad_request, unauthorized};
use super::{Call, SimState};

/// The token endpoint's path.
pub(crate) const TOKEN_PATH: &str = "/oauth2/1.0/token";

/// Access-token TTL when the client was created without one (`ApiClientPost`:
/// "defaults to 86400000").
const DEFAULT_TTL_MS: u64 = 86_400_000;

/// How far in the future an ID token's `iat` may be (clocks are never exact).
pub(crate) const CLOCK_LEEWAY_MS: u64 = 60_000;

/// The longest an ID token may be valid (`exp - iat`): Pure's SDK signs its ID token
/// once for 10 years and sends it again at every refresh (py-pure-client
/// `token_manager.py`: `EXP_TIME_IN_SECONDS = 315360000`), so an array takes that;
/// [L] whether it refuses anything longer, and with which text.
pub(crate) const MAX_ID_TOKEN_LIFETIME_MS: u64 = 315_360_000_000 + CLOCK_LEEWAY_MS;

/// The range of `access_token_ttl_in_ms`: [L] 1 second to 1 day (the default), as
/// Purity's `pureapiclient create --access-token-ttl` is understood to allow.
const TTL_RANGE_MS: std::ops::RangeInclusive<u64> = 1_000..=DEFAULT_TTL_MS;

/// RSA key sizes an API client may register: those an RS256 signature is checked
/// with (2048 to 8192 bits); a smaller key could never log in.
const KEY_BITS: std::ops::RangeInclusive<usize> = 2048..=8192;

/// Collections a `storage_admin` may write (REST reference, `max_role`: "storage
/// related operations, such as administering volumes, hosts, and host groups").
const STORAGE_RESOURCES: &[&str] = &[
    "volumes",
    "volume-groups",
    "volume-snapshots",
    "hosts",
    "host-groups",
    "connections",
    "pods",
    "protection-groups",
    "protection-group-snapshots",
];

/// One registered client.
#[derive(Debug, Clone)]
struct Client {
    name: String,
    id: String,
    key_id: String,
    issuer: String,
    public_key: String,
    /// The RSAPublicKey DER ring verifies with.
    public_der: Vec<u8>,
    max_role: String,
    ttl_ms: u64,
    enabled: bool,
}

impl Client {
    fn render(&self) -> Value {
        json!({
            "name": self.name, "id": self.id, "key_id": self.key_id, "issuer": self.issuer,
            "public_key": self.public_key, "max_role": self.max_role,
            "access_policies": [{"name": self.max_role, "resource_type": "policies"}],
            "access_token_ttl_in_ms": self.ttl_ms, "enabled": self.enabled,
        })
    }
}

/// What an access token may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grant {
    /// The user it acts as.
    pub(crate) username: String,
    /// The lesser of the client's maximum role and the user's.
    pub(crate) role: String,
    client_id: String,
    expires_ms: u64,
}

/// Why a bearer token was refused (401).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccessRefusal {
    /// Not issued here, revoked, or not `Bearer <token>`.
    Unknown,
    /// Past its TTL.
    Expired,
}

impl AccessRefusal {
    /// The message of the 401 answer.
    pub(crate) fn message(self) -> &'static str {
        match self {
            AccessRefusal::Unknown => "Invalid access token.",
            AccessRefusal::Expired => "Access token expired.",
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    /// By lower-case name.
    clients: BTreeMap<String, Client>,
    /// Live access tokens.
    tokens: HashMap<String, Grant>,
    /// The `jti` of every exchanged ID token that carried one, until its `exp`.
    used_jti: HashMap<String, u64>,
}

/// Every API client and access token of one simulator.
#[derive(Debug, Default)]
pub(crate) struct ApiClients {
    inner: Mutex<Inner>,
}

/// `POST /api-clients` body.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
struct ClientPost {
    issuer: Option<String>,
    public_key: Option<String>,
    max_role: Option<String>,
    access_policies: Option<Vec<PolicyRef>>,
    access_token_ttl_in_ms: Option<u64>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
struct PolicyRef {
    name: Option<String>,
}

/// `PATCH /api-clients` body.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClientPatch {
    enabled: Option<bool>,
}

/// The rank of a role, lowest first.
fn rank(role: &str) -> usize {
    ROLES.iter().position(|r| *r == role).unwrap_or(0)
}

/// The lesser of two roles.
fn lesser<'a>(a: &'a str, b: &'a str) -> &'a str {
    if rank(a) <= rank(b) { a } else { b }
}

/// Whether `role` may send `method` to `resource`. Every role reads; a token's
/// value is shown to its own admin only (`routes/tokens.rs`), and any admin may
/// make or remove its own API token (`own_token`: `admins/api-tokens` naming the
/// caller alone), as `pureadmin create --api-token` does for the logged-in user [L].
fn role_allows(role: &str, method: &Method, resource: &str, own_token: bool) -> bool {
    if method == Method::GET || (own_token && resource == "admins/api-tokens") {
        return true;
    }
    match role {
        "array_admin" => true,
        "storage_admin" => {
            let collection = resource.split('/').next().unwrap_or(resource);
            STORAGE_RESOURCES.contains(&collection)
        }
        _ => false,
    }
}

/// Who is calling and with which role, as the array knows them now.
pub(crate) struct Caller {
    /// The admin.
    pub(crate) name: String,
    role: String,
    /// Through an API client's access token (else an API-token session).
    bearer: bool,
}

/// The role `name` holds now, when it is still an unlocked admin of the array.
fn user_role(state: &SimState, name: &str) -> Option<String> {
    let exists = state
        .mock
        .admin_names()
        .iter()
        .any(|n| n.eq_ignore_ascii_case(name));
    let account = state.accounts.get(name);
    (exists && !account.locked).then_some(account.role)
}

/// The caller of an access token. Its rights are read again on every request, the
/// lesser of its client's maximum role and its user's role as they are now, so a
/// demoted user's token loses the rights at once; a token whose client or user is
/// gone (or locked) is revoked (401). Deleting a user revokes its tokens
/// ([`ApiClients::revoke_user`]), so one made again under the same name does not
/// inherit them.
pub(crate) fn token_caller(state: &SimState, token: &str) -> Result<Caller, Fail> {
    let grant = state
        .api_clients
        .check(token, state.now_ms())
        .map_err(|refusal| unauthorized(refusal.message()))?;
    let client_role = state
        .api_clients
        .lock()
        .clients
        .values()
        .find(|c| c.id == grant.client_id)
        .map(|c| c.max_role.clone());
    match (client_role, user_role(state, &grant.username)) {
        (Some(client), Some(user)) => Ok(Caller {
            name: grant.username,
            role: lesser(&client, &user).to_string(),
            bearer: true,
        }),
        _ => {
            state.api_clients.end(token);
            Err(unauthorized(AccessRefusal::Unknown.message()))
        }
    }
}

/// The caller of an API-token session, with its user's role as it is now: the same
/// rights check as an access token's (a readonly user's API token reads only).
pub(crate) fn session_caller(state: &SimState, name: String) -> Result<Caller, Fail> {
    let role = user_role(state, &name).ok_or_else(|| unauthorized("Invalid session token."))?;
    Ok(Caller {
        name,
        role,
        bearer: false,
    })
}

impl Caller {
    /// Whether the caller may send `method` to `resource` with these `names`; else
    /// the 403 answer.
    pub(crate) fn authorize(
        &self,
        method: &Method,
        resource: &str,
        names: &[String],
    ) -> Result<(), Fail> {
        let own_token = matches!(names, [n] if n.eq_ignore_ascii_case(&self.name));
        if role_allows(&self.role, method, resource, own_token) {
            return Ok(());
        }
        let via = if self.bearer {
            "access token"
        } else {
            "API token"
        };
        Err(Fail::Reply(Reply::json(
            StatusCode::FORBIDDEN,
            &json!({ "message": format!(
                "Forbidden: {method} /{resource} needs more than the role {} of this {via}.",
                self.role
            ) }),
        )))
    }
}

/// The size in bits of an RSAPublicKey's modulus.
fn modulus_bits(der: &[u8]) -> Option<usize> {
    use pkcs8::der::asn1::UintRef;
    use pkcs8::der::{Decode, Reader, SliceReader};
    let mut reader = SliceReader::new(der).ok()?;
    let modulus = reader
        .sequence(|seq| {
            let n = UintRef::decode(seq)?;
            UintRef::decode(seq)?;
            Ok(n.as_bytes().to_vec())
        })
        .ok()?;
    let first = *modulus.first()?;
    Some((modulus.len() - 1) * 8 + (8 - first.leading_zeros() as usize))
}

/// The RSAPublicKey DER of a PEM public key (SPKI `PUBLIC KEY` or PKCS#1
/// `RSA PUBLIC KEY`), or why it is not one.
fn public_key_der(pem: &str) -> Result<Vec<u8>, String> {
    let start = pem.find("-----BEGIN ").ok_or("no PEM block")?;
    let (label, der) = pkcs8::der::pem::decode_vec(pem[start..].trim_end().as_bytes())
        .map_err(|e| format!("not valid PEM ({e})"))?;
    let der = match label {
        "RSA PUBLIC KEY" => der,
        "PUBLIC KEY" => {
            let spki = pkcs8::spki::SubjectPublicKeyInfoRef::try_from(der.as_slice())
                .map_err(|e| format!("not a public key ({e})"))?;
            if spki.algorithm.oid.to_string() != "1.2.840.113549.1.1.1" {
                return Err("not an RSA key".into());
            }
            spki.subject_public_key.raw_bytes().to_vec()
        }
        other => return Err(format!("a {other:?} block, not a public key")),
    };
    Ok(der)
}

impl ApiClients {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The user and rights of a live access token.
    pub(crate) fn check(&self, token: &str, now_ms: u64) -> Result<Grant, AccessRefusal> {
        let mut inner = self.lock();
        let grant = inner.tokens.get(token).ok_or(AccessRefusal::Unknown)?;
        if now_ms >= grant.expires_ms {
            inner.tokens.remove(token);
            return Err(AccessRefusal::Expired);
        }
        Ok(grant.clone())
    }

    /// Ends an access token (an `expire` fault). Unknown tokens are ignored.
    pub(crate) fn end(&self, token: &str) {
        self.lock().tokens.remove(token);
    }

    /// Ends every access token of a user (the user was deleted).
    pub(crate) fn revoke_user(&self, username: &str) {
        self.lock()
            .tokens
            .retain(|_, g| !g.username.eq_ignore_ascii_case(username));
    }

    /// Creates and enables a client (tests); its `id` and `key_id`.
    pub(crate) fn register(
        &self,
        name: &str,
        public_key: &str,
        max_role: &str,
        ttl: std::time::Duration,
    ) -> Result<(String, String), String> {
        let body = ClientPost {
            issuer: Some(name.to_string()),
            public_key: Some(public_key.to_string()),
            max_role: Some(max_role.to_string()),
            access_policies: None,
            access_token_ttl_in_ms: Some(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)),
        };
        let refused = |f: Fail| match f {
            Fail::Reply(r) => String::from_utf8_lossy(&r.body).into_owned(),
            Fail::Drop => "dropped".into(),
        };
        let client = self.create(name, body).map_err(refused)?;
        self.update(&[name.to_string()], |c| c.enabled = true)
            .map_err(refused)?;
        Ok((client.id, client.key_id))
    }

    fn create(&self, name: &str, body: ClientPost) -> Result<Client, Fail> {
        let public_key = body
            .public_key
            .ok_or_else(|| bad_request(Some("public_key"), "public_key is required."))?;
        let public_der = public_key_der(&public_key).map_err(|e| {
            bad_request(
                Some("public_key"),
                format!("Invalid public_key: {e}; a PEM RSA public key is required."),
            )
        })?;
        let bits = modulus_bits(&public_der).unwrap_or(0);
        if !KEY_BITS.contains(&bits) {
            return Err(bad_request(
                Some("public_key"),
                format!(
                    "Invalid public_key: a {bits}-bit RSA key; the key must have {} to {} bits.",
                    KEY_BITS.start(),
                    KEY_BITS.end()
                ),
            ));
        }
        let ttl_ms = body.access_token_ttl_in_ms.unwrap_or(DEFAULT_TTL_MS);
        if !TTL_RANGE_MS.contains(&ttl_ms) {
            return Err(bad_request(
                Some("access_token_ttl_in_ms"),
                format!(
                    "Invalid access_token_ttl_in_ms: {ttl_ms}; it must be from {} (1 second) to {} (1 day).",
                    TTL_RANGE_MS.start(),
                    TTL_RANGE_MS.end()
                ),
            ));
        }
        let max_role = match (body.max_role, body.access_policies) {
            (Some(role), None) => role,
            (None, Some(policies)) if policies.len() == 1 => {
                let name = policies[0].name.clone().unwrap_or_default();
                name.strip_prefix("pure:policy/")
                    .unwrap_or(&name)
                    .to_string()
            }
            _ => {
                return Err(bad_request(
                    Some("max_role"),
                    "Exactly one of max_role or access_policies (one policy) is required.",
                ));
            }
        };
        if !ROLES.contains(&max_role.as_str()) {
            return Err(bad_request(
                Some(&max_role),
                format!("Invalid max_role; valid roles are {}.", ROLES.join(", ")),
            ));
        }
        let mut inner = self.lock();
        if inner.clients.contains_key(&name.to_ascii_lowercase()) {
            return Err(bad_request(Some(name), "API client already exists."));
        }
        let client = Client {
            name: name.to_string(),
            id: uuid::Uuid::new_v4().to_string(),
            key_id: uuid::Uuid::new_v4().to_string(),
            issuer: body.issuer.unwrap_or_else(|| name.to_string()),
            public_key,
            public_der,
            max_role,
            ttl_ms,
            enabled: false,
        };
        inner
            .clients
            .insert(name.to_ascii_lowercase(), client.clone());
        Ok(client)
    }

    /// The named clients (every one when `names` is empty); a missing name fails.
    fn named(&self, names: &[String]) -> Result<Vec<Client>, Fail> {
        let inner = self.lock();
        if names.is_empty() {
            return Ok(inner.clients.values().cloned().collect());
        }
        names
            .iter()
            .map(|n| {
                inner
                    .clients
                    .get(&n.to_ascii_lowercase())
                    .cloned()
                    .ok_or_else(|| bad_request(Some(n), "API client does not exist."))
            })
            .collect()
    }

    fn update(&self, names: &[String], change: impl Fn(&mut Client)) -> Result<Vec<Client>, Fail> {
        self.named(names)?;
        let mut inner = self.lock();
        let mut out = Vec::new();
        for n in names {
            if let Some(c) = inner.clients.get_mut(&n.to_ascii_lowercase()) {
                change(c);
                out.push(c.clone());
            }
        }
        Ok(out)
    }

    fn delete(&self, names: &[String]) -> Result<(), Fail> {
        let gone = self.named(names)?;
        let mut inner = self.lock();
        for c in gone {
            inner.clients.remove(&c.name.to_ascii_lowercase());
            inner.tokens.retain(|_, g| g.client_id != c.id);
        }
        Ok(())
    }
}

/// `/api-clients`: list, create (disabled), enable or disable, delete.
pub(crate) async fn handle(call: &Call<'_>) -> Result<Reply, Fail> {
    let clients = &call.state.api_clients;
    match call.method {
        Method::GET => {
            let mut allowed = vec!["names"];
            allowed.extend_from_slice(PAGING_PARAMS);
            call.query.only(&allowed)?;
            let items: Vec<Value> = clients
                .named(&call.query.csv("names"))?
                .iter()
                .map(Client::render)
                .collect();
            Ok(PageRequest::from_query("api-clients", &call.query)?.reply(&items, None))
        }
        Method::POST => {
            call.query.only(&["names"])?;
            let names = one_or_more(call)?;
            let body: ClientPost = call.body(&[
                "issuer",
                "public_key",
                "max_role",
                "access_policies",
                "access_token_ttl_in_ms",
            ])?;
            let mut out = Vec::new();
            for name in &names {
                out.push(clients.create(name, body.clone())?.render());
            }
            Ok(Reply::items(&out))
        }
        Method::PATCH => {
            call.query.only(&["names"])?;
            let names = one_or_more(call)?;
            let patch: ClientPatch = call.body(&["enabled"])?;
            let enabled = patch
                .enabled
                .ok_or_else(|| bad_request(Some("enabled"), "enabled is required."))?;
            let out: Vec<Value> = clients
                .update(&names, |c| c.enabled = enabled)?
                .iter()
                .map(Client::render)
                .collect();
            Ok(Reply::items(&out))
        }
        Method::DELETE => {
            call.query.only(&["names"])?;
            clients.delete(&one_or_more(call)?)?;
            Ok(Reply::empty())
        }
        _ => Err(call.method_not_allowed()),
    }
}

fn one_or_more(call: &Call<'_>) -> Result<Vec<String>, Fail> {
    let names = call.query.csv("names");
    if names.is_empty() {
        return Err(bad_request(
            Some("names"),
            "Parameter \"names\" is required.",
        ));
    }
    Ok(names)
}

/// An OAuth2 error answer (RFC 6749 §5.2), dated by the array's clock so that a
/// client can tell a clock difference.
fn oauth_error(state: &SimState, status: StatusCode, error: &str, description: &str) -> Reply {
    Reply::json(
        status,
        &json!({ "error": error, "error_description": description }),
    )
    .with_header("date", &http_date(state.now_ms()))
}

fn http_date(ms: u64) -> String {
    httpdate::fmt_http_date(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
}

/// A decoded, not yet checked, ID token.
struct IdToken {
    header: Value,
    claims: Value,
    signing_input: String,
    signature: Vec<u8>,
}

fn decode_id_token(token: &str) -> Option<IdToken> {
    let mut parts = token.split('.');
    let (h, c, s) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let json = |p: &str| -> Option<Value> {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p).ok()?).ok()
    };
    Some(IdToken {
        header: json(h)?,
        claims: json(c)?,
        signing_input: format!("{h}.{c}"),
        signature: URL_SAFE_NO_PAD.decode(s).ok()?,
    })
}

/// `POST /oauth2/1.0/token`.
pub(crate) fn token(state: &SimState, method: &Method, body: &[u8]) -> Reply {
    let invalid_request =
        |d: &str| oauth_error(state, StatusCode::BAD_REQUEST, "invalid_request", d);
    if method != Method::POST {
        return invalid_request("Use POST for the token endpoint.");
    }
    let form = Query::parse(std::str::from_utf8(body).ok());
    let field = |k: &str| form.all(k).into_iter().next();
    if field("grant_type").as_deref() != Some("urn:ietf:params:oauth:grant-type:token-exchange") {
        return invalid_request(
            "grant_type must be urn:ietf:params:oauth:grant-type:token-exchange.",
        );
    }
    if field("subject_token_type").as_deref() != Some("urn:ietf:params:oauth:token-type:jwt") {
        return invalid_request("subject_token_type must be urn:ietf:params:oauth:token-type:jwt.");
    }
    let Some(id_token) = field("subject_token").as_deref().and_then(decode_id_token) else {
        return invalid_request("subject_token is not a JWT.");
    };
    match exchange(state, &id_token) {
        Ok((access, ttl_ms)) => Reply::json(
            StatusCode::OK,
            &json!({
                "access_token": access,
                "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
                "token_type": "Bearer",
                "expires_in": ttl_ms / 1000,
            }),
        )
        .with_header("date", &http_date(state.now_ms())),
        Err(description) => oauth_error(
            state,
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            description,
        ),
    }
}

/// Checks the ID token and issues an access token and its TTL, or says which
/// check failed.
fn exchange(state: &SimState, t: &IdToken) -> Result<(String, u64), &'static str> {
    let claim = |k: &str| t.claims.get(k).and_then(Value::as_str).unwrap_or_default();
    let client = state
        .api_clients
        .lock()
        .clients
        .values()
        .find(|c| c.id == claim("aud"))
        .cloned()
        .ok_or("API client does not exist (aud).")?;
    if t.header.get("alg").and_then(Value::as_str) != Some("RS256") {
        return Err("The ID token must be signed with RS256.");
    }
    if t.header.get("kid").and_then(Value::as_str) != Some(client.key_id.as_str()) {
        return Err("The key id (kid) is not the API client's key.");
    }
    if !client.enabled {
        return Err("API client is disabled.");
    }
    ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        &client.public_der,
    )
    .verify(t.signing_input.as_bytes(), &t.signature)
    .map_err(|_| "Invalid signature: the ID token was not signed with the API client's key.")?;
    if claim("iss") != client.issuer {
        return Err("The issuer (iss) is not the API client's issuer.");
    }
    let now = state.now_ms();
    let secs = |k: &str| {
        t.claims
            .get(k)
            .and_then(Value::as_u64)
            .map(|s| s.saturating_mul(1000))
    };
    let exp = secs("exp").ok_or("The ID token has no expiry (exp).")?;
    let iat = secs("iat").ok_or("The ID token has no issue time (iat).")?;
    if exp <= now {
        return Err("The ID token is expired (exp is before the array's time).");
    }
    if iat > now + CLOCK_LEEWAY_MS {
        return Err("The ID token was issued in the future (iat is after the array's time).");
    }
    if exp.saturating_sub(iat) > MAX_ID_TOKEN_LIFETIME_MS {
        return Err("The ID token is valid for too long (exp - iat is over 10 years).");
    }
    let username = state
        .mock
        .admin_names()
        .into_iter()
        .find(|n| n.eq_ignore_ascii_case(claim("sub")))
        .ok_or("The user (sub) does not exist on the array.")?;
    let account = state.accounts.get(&username);
    if account.locked {
        return Err("The user (sub) is locked.");
    }
    let grant = Grant {
        role: lesser(&client.max_role, &account.role).to_string(),
        username,
        client_id: client.id.clone(),
        expires_ms: now.saturating_add(client.ttl_ms),
    };
    let access = access_token(&grant, now);
    let mut inner = state.api_clients.lock();
    // An ID token with a `jti` is exchanged once (RFC 7523 §3: the server may keep
    // the used `jti` values against replay). One without (Pure's SDK sends none,
    // and re-sends its one ID token at every refresh) may be exchanged again [L].
    if let Some(jti) = t.claims.get("jti").and_then(Value::as_str) {
        inner.used_jti.retain(|_, until| *until > now);
        if inner.used_jti.contains_key(jti) {
            return Err("The ID token was already exchanged (its jti was used).");
        }
        inner.used_jti.insert(jti.to_string(), exp);
    }
    inner.tokens.insert(access.clone(), grant);
    Ok((access, client.ttl_ms))
}

/// A JWT naming the grant; its signature part is random (only this simulator reads
/// it back, through its table), which also makes every token unique.
fn access_token(grant: &Grant, now_ms: u64) -> String {
    let header = json!({ "alg": "HS256", "typ": "JWT" });
    let claims = json!({
        "sub": grant.username, "aud": grant.client_id, "role": grant.role,
        "iat": now_ms / 1000, "exp": grant.expires_ms / 1000,
    });
    let random = [
        uuid::Uuid::new_v4().into_bytes(),
        uuid::Uuid::new_v4().into_bytes(),
    ]
    .concat();
    format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string()),
        URL_SAFE_NO_PAD.encode(random)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_meet_at_the_lesser() {
        assert_eq!(lesser("array_admin", "readonly"), "readonly");
        assert_eq!(lesser("storage_admin", "array_admin"), "storage_admin");
        assert!(role_allows("readonly", &Method::GET, "admins", false));
        assert!(!role_allows("readonly", &Method::POST, "volumes", false));
        assert!(!role_allows("ops_admin", &Method::PATCH, "volumes", false));
        assert!(role_allows(
            "storage_admin",
            &Method::POST,
            "volumes",
            false
        ));
        assert!(role_allows(
            "storage_admin",
            &Method::PUT,
            "hosts/tags/batch",
            false
        ));
        assert!(!role_allows(
            "storage_admin",
            &Method::POST,
            "admins/api-tokens",
            false
        ));
        // Any admin makes or removes its own token; only an array_admin another's.
        assert!(role_allows(
            "readonly",
            &Method::POST,
            "admins/api-tokens",
            true
        ));
        assert!(!role_allows("readonly", &Method::POST, "volumes", true));
        assert!(!role_allows(
            "storage_admin",
            &Method::POST,
            "api-clients",
            false
        ));
        assert!(role_allows(
            "array_admin",
            &Method::DELETE,
            "api-clients",
            false
        ));
    }

    #[test]
    fn public_keys_in_both_pem_forms() {
        let spki = include_str!("../../flasharray-client/tests/keys/client-public.pem");
        let der = public_key_der(spki).unwrap();
        assert_eq!(der[0], 0x30, "a DER SEQUENCE");
        assert!(
            public_key_der("-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----").is_err()
        );
        assert!(public_key_der("nothing").unwrap_err().contains("no PEM"));
        assert_eq!(modulus_bits(&der), Some(2048));
        assert_eq!(modulus_bits(&[0x30, 0x00]), None);
    }

    #[test]
    fn tokens_expire_and_end() {
        let clients = ApiClients::default();
        let grant = Grant {
            username: "pureuser".into(),
            role: "readonly".into(),
            client_id: "c".into(),
            expires_ms: 2_000,
        };
        let t = access_token(&grant, 1_000);
        assert_eq!(t.split('.').count(), 3);
        clients.lock().tokens.insert(t.clone(), grant.clone());
        assert_eq!(clients.check(&t, 1_999).unwrap(), grant);
        assert_eq!(clients.check(&t, 2_000), Err(AccessRefusal::Expired));
        assert_eq!(clients.check(&t, 2_000), Err(AccessRefusal::Unknown));
        clients.lock().tokens.insert(t.clone(), grant);
        clients.end(&t);
        assert_eq!(clients.check(&t, 0), Err(AccessRefusal::Unknown));
    }
}
