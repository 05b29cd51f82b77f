//! API clients: OAuth2 access tokens from an RS256-signed ID token.
//!
//! An array admin registers an API client: a public key with an issuer and a maximum
//! role; the array answers with the client's `id` and `key_id`. A tool holding the
//! private key signs an ID token (a JWT: header `kid` = key id; claims `iss` =
//! issuer, `aud` = client id, `sub` = array user, `iat`, `exp`) and exchanges it at
//! `POST /oauth2/1.0/token` (RFC 8693 token exchange, form encoded) for an access
//! token, which every later call carries as `Authorization: Bearer`. This is the flow
//! of Pure's SDK (py-pure-client `token_manager.py` and `flasharray/client.py`:
//! <https://github.com/PureStorage-OpenConnect/py-pure-client>) and of the REST 2.x
//! reference (`/oauth2/1.0/token`, `api-clients`).
//!
//! The private key is parsed once, when the credential is made, and lives only
//! inside ring's key pair; ID tokens and access tokens are [`SecretString`]s that
//! leave this crate only in a request body or header. Debug shows the identifiers
//! (client id, key id, issuer, user), which are not secrets, and nothing else.
//!
//! Keys: RSA (2048 to 8192 bits, ring's range) in PEM, as PKCS#8 (`PRIVATE KEY`),
//! encrypted PKCS#8 (`ENCRYPTED PRIVATE KEY`, PBES2: PBKDF2 or scrypt with AES-CBC,
//! what `openssl pkcs8 -topk8 -v2 aes-256-cbc` writes) or PKCS#1 (`RSA PRIVATE
//! KEY`). Legacy OpenSSL-encrypted PKCS#1 (`Proc-Type: 4,ENCRYPTED`) and OpenSSH
//! keys are refused with the command that converts them.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use secrecy::{ExposeSecret, SecretString};

use crate::error::{Error, Result};

/// How long an ID token is valid. Each exchange signs a fresh one, so it only has
/// to outlive its own request; Pure's SDK signs one for 10 years and reuses it,
/// which makes a leaked ID token as good as the key.
pub const ID_TOKEN_LIFETIME: Duration = Duration::from_secs(300);

/// The token endpoint, outside `/api`, unauthenticated.
pub(crate) const TOKEN_PATH: &str = "/oauth2/1.0/token";

/// A clock difference from the array above this is named in a refused exchange.
const SKEW_NOTICE: Duration = Duration::from_secs(30);

/// Who an API client's ID token speaks for. None of these is a secret: the array
/// shows them to every admin (`GET /api-clients`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiClientIdentity {
    /// The API client's `id` on the array: the JWT `aud`.
    pub client_id: String,
    /// The `key_id` the array gave the registered public key: the JWT `kid`.
    pub key_id: String,
    /// The API client's `issuer`: the JWT `iss`.
    pub issuer: String,
    /// The array user the access token acts as: the JWT `sub`. Its rights are the
    /// lesser of this user's and the API client's maximum role.
    pub username: String,
}

impl ApiClientIdentity {
    /// The first field that is empty, or has spaces at an end or control
    /// characters (a CR/LF would end a header line): its name (`client_id`,
    /// `key_id`, `issuer`, `username`) and why, so that a caller can name its flag.
    pub fn invalid_field(&self) -> Option<(&'static str, String)> {
        [
            ("client_id", &self.client_id),
            ("key_id", &self.key_id),
            ("issuer", &self.issuer),
            ("username", &self.username),
        ]
        .into_iter()
        .find_map(|(field, value)| {
            if value.trim().is_empty() {
                Some((field, format!("the API client's {field} is empty")))
            } else if value.trim() != value || value.chars().any(char::is_control) {
                Some((
                    field,
                    format!("the API client's {field} has spaces at an end or control characters"),
                ))
            } else {
                None
            }
        })
    }

    /// Every field set, printable, without spaces at either end.
    fn check(&self) -> Result<()> {
        match self.invalid_field() {
            Some((_, why)) => Err(Error::Config(why)),
            None => Ok(()),
        }
    }
}

/// An API client credential: the identity and its RSA private key.
#[derive(Clone)]
pub struct ApiClientCredential {
    identity: ApiClientIdentity,
    key: Arc<RsaKeyPair>,
}

impl fmt::Debug for ApiClientCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiClientCredential")
            .field("identity", &self.identity)
            .field("private_key", &"[REDACTED]")
            .finish()
    }
}

impl ApiClientCredential {
    /// Parses the PEM private key (decrypting it with `password` when it is an
    /// encrypted PKCS#8 key) and checks the identity. Errors name what is wrong
    /// and never quote the key or the password.
    pub fn from_pem(
        identity: ApiClientIdentity,
        pem: &[u8],
        password: Option<&SecretString>,
    ) -> Result<Self> {
        identity.check()?;
        let key = parse_private_key(pem, password)?;
        Ok(ApiClientCredential {
            identity,
            key: Arc::new(key),
        })
    }

    /// Who the credential signs as (client, key id, issuer, user); the key itself is never
    /// exposed.
    pub fn identity(&self) -> &ApiClientIdentity {
        &self.identity
    }

    /// A signed ID token issued at `now` (seconds since the epoch), valid for
    /// [`ID_TOKEN_LIFETIME`], with a fresh `jti`, so that an array that keeps the
    /// used ones (RFC 7523 §3) can refuse a replay of it.
    pub fn id_token(&self, now: u64) -> Result<SecretString> {
        let header =
            serde_json::json!({ "alg": "RS256", "typ": "JWT", "kid": self.identity.key_id });
        let claims = serde_json::json!({
            "iss": self.identity.issuer,
            "aud": self.identity.client_id,
            "sub": self.identity.username,
            "iat": now,
            "exp": now + ID_TOKEN_LIFETIME.as_secs(),
            "jti": uuid::Uuid::new_v4().to_string(),
        });
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let mut signature = vec![0; self.key.public().modulus_len()];
        self.key
            .sign(
                &RSA_PKCS1_SHA256,
                &SystemRandom::new(),
                signing_input.as_bytes(),
                &mut signature,
            )
            .map_err(|_| Error::Config("cannot sign the API client's ID token".into()))?;
        Ok(SecretString::from(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature)
        )))
    }
}

/// The private key from PEM: PKCS#8, encrypted PKCS#8 or PKCS#1.
fn parse_private_key(pem: &[u8], password: Option<&SecretString>) -> Result<RsaKeyPair> {
    let text = std::str::from_utf8(pem)
        .map_err(|_| Error::Config("the private key is not a PEM text file".into()))?;
    if text.contains("OPENSSH PRIVATE KEY") {
        return Err(Error::Config(
            "the private key is an OpenSSH key; convert it to PKCS#8 PEM \
             (`ssh-keygen -p -m PKCS8 -f KEY`)"
                .into(),
        ));
    }
    if text.contains("Proc-Type: 4,ENCRYPTED") {
        return Err(Error::Config(
            "the private key is a legacy OpenSSL-encrypted PKCS#1 key; convert it to \
             encrypted PKCS#8 (`openssl pkcs8 -topk8 -v2 aes-256-cbc -in KEY`)"
                .into(),
        ));
    }
    let start = text.find("-----BEGIN ").ok_or_else(|| {
        Error::Config("the private key file holds no PEM block (-----BEGIN ...)".into())
    })?;
    let (label, der) = pkcs8::der::pem::decode_vec(text[start..].trim_end().as_bytes())
        .map_err(|e| Error::Config(format!("the private key is not valid PEM: {e}")))?;
    let rejected = |e: ring::error::KeyRejected| {
        Error::Config(format!(
            "the private key is not a usable RSA key (RSA 2048 to 8192 bits): {e}"
        ))
    };
    match (label, password) {
        ("PRIVATE KEY", _) => RsaKeyPair::from_pkcs8(&der).map_err(rejected),
        ("RSA PRIVATE KEY", _) => RsaKeyPair::from_der(&der).map_err(rejected),
        ("ENCRYPTED PRIVATE KEY", None) => Err(Error::Config(
            "the private key is encrypted and no password was given".into(),
        )),
        ("ENCRYPTED PRIVATE KEY", Some(password)) => {
            let info = pkcs8::EncryptedPrivateKeyInfo::try_from(der.as_slice()).map_err(|e| {
                Error::Config(format!("the encrypted private key cannot be read: {e}"))
            })?;
            let plain = info
                .decrypt(password.expose_secret().as_bytes())
                .map_err(|_| {
                    Error::Config(
                        "the private key cannot be decrypted: wrong password, or an encryption \
                         scheme other than PBES2 (PBKDF2 or scrypt with AES-CBC)"
                            .into(),
                    )
                })?;
            RsaKeyPair::from_pkcs8(plain.as_bytes()).map_err(rejected)
        }
        (other, _) => Err(Error::Config(format!(
            "the PEM block is a {other:?}, not an RSA private key"
        ))),
    }
}

/// Seconds since the epoch on this host.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The form body of a token exchange (RFC 8693 §2.1, as Pure's SDK sends it).
pub(crate) fn exchange_form(id_token: &SecretString) -> Vec<u8> {
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair(
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange",
        )
        .append_pair("subject_token_type", "urn:ietf:params:oauth:token-type:jwt")
        .append_pair("subject_token", id_token.expose_secret())
        .finish()
        .into_bytes()
}

/// The next step for an admin, by what the array said when it refused an
/// exchange, and by the clock difference its `Date` header shows (`skew`: the
/// array's time minus this host's, in seconds).
pub(crate) fn refusal_hint(
    identity: &ApiClientIdentity,
    message: &str,
    skew: Option<i64>,
) -> String {
    let lower = message.to_ascii_lowercase();
    let mut hints = Vec::new();
    if let Some(s) = skew.filter(|s| s.unsigned_abs() > SKEW_NOTICE.as_secs()) {
        let (how, by) = if s > 0 {
            ("behind", s)
        } else {
            ("ahead of", -s)
        };
        hints.push(format!(
            "clock skew: this host's clock is {by} s {how} the array's, and the array reads the \
             ID token's iat and exp on its own clock; synchronise both (NTP)"
        ));
    }
    if lower.contains("disabled") {
        hints.push(format!(
            "the API client {} is disabled: an array admin enables it (PATCH /api-clients \
             {{\"enabled\": true}})",
            identity.client_id
        ));
    } else if lower.contains("signature") || lower.contains("key") {
        hints.push(format!(
            "the private key does not match the public key registered as key id {}",
            identity.key_id
        ));
    } else if lower.contains("client") && (lower.contains("not") || lower.contains("unknown")) {
        hints.push(format!(
            "no API client has the id {} on this array (the client id is the API client's `id`, \
             not its name)",
            identity.client_id
        ));
    } else if lower.contains("user") || lower.contains("sub") {
        hints.push(format!(
            "the user {} cannot log in on this array",
            identity.username
        ));
    } else if lower.contains("issuer") || lower.contains("iss") {
        hints.push(format!(
            "the issuer {:?} is not the API client's issuer",
            identity.issuer
        ));
    }
    hints.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rest::transport::token_exchange::parse_token_answer;

    pub(crate) const KEY_PKCS8: &str = include_str!("../../tests/keys/client-pkcs8.pem");
    const KEY_PKCS1: &str = include_str!("../../tests/keys/client-pkcs1.pem");
    const KEY_ENCRYPTED: &str = include_str!("../../tests/keys/client-encrypted.pem");
    const PUBLIC: &str = include_str!("../../tests/keys/client-public.pem");

    fn identity() -> ApiClientIdentity {
        ApiClientIdentity {
            client_id: "6f6b5e9c-client".into(),
            key_id: "key-1".into(),
            issuer: "pxfa".into(),
            username: "pureuser".into(),
        }
    }

    fn public_key_der() -> Vec<u8> {
        let (label, spki) = pkcs8::der::pem::decode_vec(PUBLIC.trim().as_bytes()).unwrap();
        assert_eq!(label, "PUBLIC KEY");
        let info = pkcs8::spki::SubjectPublicKeyInfoRef::try_from(spki.as_slice()).unwrap();
        info.subject_public_key.raw_bytes().to_vec()
    }

    fn decode_json(part: &str) -> serde_json::Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn id_token_is_an_rs256_jwt_the_public_key_verifies() {
        let cred = ApiClientCredential::from_pem(identity(), KEY_PKCS8.as_bytes(), None).unwrap();
        let jwt = cred.id_token(1_700_000_000).unwrap();
        let parts: Vec<&str> = jwt.expose_secret().split('.').collect();
        assert_eq!(parts.len(), 3);
        let header = decode_json(parts[0]);
        assert_eq!(header["alg"], "RS256");
        assert_eq!(header["kid"], "key-1");
        let claims = decode_json(parts[1]);
        assert_eq!(claims["iss"], "pxfa");
        assert_eq!(claims["aud"], "6f6b5e9c-client");
        assert_eq!(claims["sub"], "pureuser");
        assert_eq!(claims["iat"], 1_700_000_000);
        assert_eq!(claims["exp"], 1_700_000_000 + ID_TOKEN_LIFETIME.as_secs());
        assert_eq!(claims["jti"].as_str().map(str::len), Some(36), "a UUID");
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::RSA_PKCS1_2048_8192_SHA256,
            public_key_der(),
        );
        let signed = format!("{}.{}", parts[0], parts[1]);
        public.verify(signed.as_bytes(), &signature).unwrap();
        // A changed claim no longer verifies.
        let forged = format!("{}.{}x", parts[0], parts[1]);
        assert!(public.verify(forged.as_bytes(), &signature).is_err());
    }

    #[test]
    fn every_key_form_gives_the_same_key() {
        let password = SecretString::from("correct horse");
        let pkcs1 = ApiClientCredential::from_pem(identity(), KEY_PKCS1.as_bytes(), None).unwrap();
        let enc =
            ApiClientCredential::from_pem(identity(), KEY_ENCRYPTED.as_bytes(), Some(&password))
                .unwrap();
        let pkcs8 = ApiClientCredential::from_pem(identity(), KEY_PKCS8.as_bytes(), None).unwrap();
        let n = |c: &ApiClientCredential| c.key.public().as_ref().to_vec();
        assert_eq!(n(&pkcs1), n(&pkcs8));
        assert_eq!(n(&enc), n(&pkcs8));
        // Text around the block (openssl's "Bag Attributes") is skipped.
        let noisy = format!("Bag Attributes\n    localKeyID: 01\n{KEY_PKCS8}");
        assert!(ApiClientCredential::from_pem(identity(), noisy.as_bytes(), None).is_ok());
    }

    #[test]
    fn refusals_are_clear_and_never_quote_the_key_or_password() {
        let wrong = SecretString::from("not-the-password");
        let err = |pem: &str, pw: Option<&SecretString>| {
            ApiClientCredential::from_pem(identity(), pem.as_bytes(), pw)
                .unwrap_err()
                .to_string()
        };
        let e = err(KEY_ENCRYPTED, Some(&wrong));
        assert!(e.contains("wrong password"), "{e}");
        assert!(!e.contains("not-the-password"), "{e}");
        assert!(err(KEY_ENCRYPTED, None).contains("no password"));
        assert!(err(PUBLIC, None).contains("not an RSA private key"));
        assert!(err("hello", None).contains("no PEM block"));
        assert!(err("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n", None).contains("ssh-keygen"));
        let body: String = KEY_PKCS8.lines().nth(3).unwrap().to_string();
        let broken = KEY_PKCS8.replace(&body, "");
        let e = err(&broken, None);
        assert!(!e.contains(&body), "{e}");
        let mut id = identity();
        id.key_id = " ".into();
        let e = ApiClientCredential::from_pem(id, KEY_PKCS8.as_bytes(), None).unwrap_err();
        assert!(e.to_string().contains("key_id"), "{e}");
        let cred = ApiClientCredential::from_pem(identity(), KEY_PKCS8.as_bytes(), None).unwrap();
        let shown = format!("{cred:?}");
        assert!(
            shown.contains("key-1") && shown.contains("[REDACTED]"),
            "{shown}"
        );
        assert!(!shown.contains("MII"), "{shown}");
    }

    #[test]
    fn token_answers_in_both_shapes() {
        let top = parse_token_answer(
            br#"{"access_token":"a.b.c","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer","expires_in":3600}"#,
            "POST /oauth2/1.0/token",
        )
        .unwrap();
        assert_eq!(top.token.expose_secret(), "a.b.c");
        assert_eq!(top.expires_in, Some(Duration::from_secs(3600)));
        let items = parse_token_answer(br#"{"items":[{"access_token":"x"}]}"#, "op").unwrap();
        assert_eq!(items.token.expose_secret(), "x");
        assert_eq!(items.expires_in, None);
        assert!(parse_token_answer(br#"{"token_type":"Bearer"}"#, "op").is_err());
    }

    #[test]
    fn hints_name_the_cause() {
        let id = identity();
        assert!(refusal_hint(&id, "API client is disabled.", None).contains("enables it"));
        assert!(refusal_hint(&id, "Invalid signature.", None).contains("key id key-1"));
        assert!(refusal_hint(&id, "API client does not exist.", None).contains("6f6b5e9c-client"));
        let skew = refusal_hint(&id, "ID token expired.", Some(-3600));
        assert!(skew.contains("3600 s ahead of"), "{skew}");
        assert!(refusal_hint(&id, "ID token expired.", Some(5)).is_empty());
        let form = String::from_utf8(exchange_form(&SecretString::from("h.c.s"))).unwrap();
        assert_eq!(
            form,
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Ajwt&subject_token=h.c.s"
        );
    }
}
