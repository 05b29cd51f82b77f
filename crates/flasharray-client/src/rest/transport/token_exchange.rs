//! The OAuth2 token exchange over the transport: an API client's fresh ID token
//! (`oauth`) sent to the token endpoint, and the array's answer read as an access
//! token or, when refused, as an error with the next step for an admin.

use std::time::{Duration, UNIX_EPOCH};

use reqwest::Method;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use super::{Auth, Body, Transport};
use crate::error::{Error, Result};
use crate::rest::oauth::{ApiClientCredential, TOKEN_PATH, exchange_form, refusal_hint, unix_now};
use crate::rest::query::Query;

/// A token answer: the fields at the top or, as some arrays answer, in `items[0]`
/// (Pure's SDK reads both).
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: Option<SecretString>,
    expires_in: Option<u64>,
    #[serde(default)]
    items: Vec<TokenAnswer>,
}

/// An access token and how long the array said it lives.
pub(crate) struct AccessToken {
    pub(crate) token: SecretString,
    pub(crate) expires_in: Option<Duration>,
}

/// Reads a 200 token answer.
pub(crate) fn parse_token_answer(body: &[u8], operation: &str) -> Result<AccessToken> {
    let answer: TokenAnswer = crate::rest::transport::decode_bytes(body, operation)?;
    let answer = match answer {
        TokenAnswer {
            access_token: None,
            mut items,
            ..
        } if !items.is_empty() => items.swap_remove(0),
        a => a,
    };
    let token = answer
        .access_token
        .filter(|t| !t.expose_secret().is_empty())
        .ok_or_else(|| Error::Decode {
            operation: operation.to_string(),
            path: "access_token".into(),
            message: "the token answer carries no access token".into(),
        })?;
    Ok(AccessToken {
        token,
        expires_in: answer.expires_in.map(Duration::from_secs),
    })
}

/// The array's clock minus this host's, in seconds, from the answer's `Date`.
fn array_clock_skew(headers: &reqwest::header::HeaderMap) -> Option<i64> {
    let date = headers.get(reqwest::header::DATE)?.to_str().ok()?;
    let array = httpdate::parse_http_date(date).ok()?;
    let array = array.duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(i64::try_from(array).ok()? - i64::try_from(unix_now()).ok()?)
}

impl Transport {
    /// Exchanges a fresh ID token for an access token. Only overload (429, 503,
    /// busy) is retried: a refusal is final for every caller waiting on it.
    pub(crate) async fn exchange(&self, client: &ApiClientCredential) -> Result<AccessToken> {
        let id_token = client.id_token(unix_now())?;
        let form = exchange_form(&id_token);
        let no_query = Query::new();
        let raw = self
            .with_retries(true, TOKEN_PATH, || async {
                let raw = self
                    .send_raw(
                        Method::POST,
                        TOKEN_PATH,
                        &no_query,
                        Some(Body::Form(&form)),
                        Auth::None,
                        false,
                    )
                    .await?;
                // Overload becomes an error, for the retry rules to judge.
                if matches!(raw.status.as_u16(), 429 | 500 | 503) {
                    return Err(raw.into_error());
                }
                Ok(raw)
            })
            .await?;
        if raw.status.is_success() {
            tracing::debug!(array = %self.base, client_id = %client.identity().client_id, "access token received");
            return parse_token_answer(&raw.body, &raw.operation);
        }
        let skew = array_clock_skew(&raw.headers);
        let Error::Api(mut api) = raw.into_error() else {
            unreachable!("an answer becomes an API error")
        };
        let identity = client.identity();
        let hint = refusal_hint(identity, api.message(), skew);
        if let Some(first) = api.errors.first_mut() {
            first.context = Some(format!(
                "API client {} (key {}, user {})",
                identity.client_id, identity.key_id, identity.username
            ));
            if !hint.is_empty() {
                first.message = format!("{} ({hint})", first.message);
            }
        }
        Err(Error::Api(api))
    }
}
