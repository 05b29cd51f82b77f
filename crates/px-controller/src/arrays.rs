//! One shared array client per array endpoint and credential. An array's sessions and
//! its 429s are global to the array, so every tenant on one array shares one client
//! (one login session), one bound on how many tenants talk to it at once, and one
//! [`ObservationCache`] (the array's listings, read once per interval by every
//! tenant's drift check).
//!
//! Credentials come from the Secret the object names (`spec.credentialsSecret`:
//! pure.json, optional CA, and optionally an API client: [`API_CLIENT_KEYS`]), never
//! from the object itself; the token (or the API client's key) is hashed into the
//! pool key in memory only and never logged.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flasharray::FlashArray;
use flasharray::rest::RestArray;
use flasharray::rest::oauth::{ApiClientCredential, ApiClientIdentity};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use px_topology::PureJson;
use px_topology::spec::{CredentialsSecretRef, TenantStorage};
use secrecy::{ExposeSecret, SecretString};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::{Error, Reason};
use crate::metered::Metered;
use crate::metrics::Metrics;
use crate::observations::{DEFAULT_LISTING_INTERVAL, ObservationCache};

/// How the controller logs in to an array.
#[derive(Clone)]
pub enum ArrayCredential {
    /// The pure.json entry's `APIToken`.
    Token(SecretString),
    /// An API client from the Secret's [`API_CLIENT_KEYS`] (OAuth2), and a hash of
    /// its private key for the pool key.
    ApiClient(ApiClientCredential, u64),
}

/// The Secret keys of an API client, beside pure.json (which then needs no
/// `APIToken`): every one of them, or none. `private-key-password` is optional.
pub(crate) const API_CLIENT_KEYS: [&str; 5] =
    ["client-id", "key-id", "issuer", "username", "private-key"];
/// The Secret key of an encrypted private key's password.
pub(crate) const API_CLIENT_PASSWORD_KEY: &str = "private-key-password";

/// What an array client is built from.
#[derive(Clone)]
pub struct Credentials {
    /// Management endpoint (host, maybe with port).
    pub endpoint: String,
    /// API token or API client.
    pub credential: ArrayCredential,
    /// CA certificate (PEM), when the Secret has one.
    pub ca_pem: Option<Vec<u8>>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("endpoint", &self.endpoint)
            .field(
                "credential",
                &match &self.credential {
                    ArrayCredential::Token(_) => "API token [REDACTED]".to_string(),
                    ArrayCredential::ApiClient(c, _) => format!("{c:?}"),
                },
            )
            .field("ca_pem", &self.ca_pem.as_ref().map(Vec::len))
            .finish()
    }
}

/// Builds an array client from credentials: REST in production, a mock in tests.
pub trait Connector: Send + Sync {
    /// A bare client for `creds`: the pool puts the one `flasharray::Settling`
    /// layer around it, so a connector must not (see [`ArrayPool::acquire`]).
    fn connect(&self, creds: &Credentials) -> Result<Arc<dyn FlashArray>, Error>;
}

/// Items per request the controller's listings ask for ([`RestArray`]'s `limit`).
///
/// A drift check's listing of every pxfa tag grows with the tenants (about 60 volume
/// tags per tenant with twelve volumes): at the client's default of 1,000 items per
/// page the requests of a resync pass grew with the tenants (13 per array at 62
/// tenants, 31 at 250). With 20,000 each listing is one request up to about 330
/// such tenants per array. The array's own largest page
/// is not documented (\[L\]): the REST reference says a larger `limit` is answered
/// with the array's maximum and the client follows the continuation token, so on an
/// array whose cap is lower the requests grow again, by one per cap's worth of items
/// (see [`flasharray::rest::RestArrayBuilder::page_size`]).
pub const LISTING_PAGE_SIZE: u32 = 20_000;

/// The production connector: [`RestArray`] over HTTPS, asking for
/// [`LISTING_PAGE_SIZE`] items per page unless told otherwise
/// ([`RestConnector::with_page_size`], `pxfa controller run --listing-page-size`).
#[derive(Debug, Clone, Copy)]
pub struct RestConnector {
    page_size: u32,
}

impl Default for RestConnector {
    fn default() -> Self {
        RestConnector {
            page_size: LISTING_PAGE_SIZE,
        }
    }
}

impl RestConnector {
    /// Asks for `page_size` items per listing page (at least 1): lower it for an
    /// array that refuses [`LISTING_PAGE_SIZE`], the cap being undocumented.
    pub fn with_page_size(page_size: u32) -> Self {
        RestConnector {
            page_size: page_size.max(1),
        }
    }
}

impl Connector for RestConnector {
    fn connect(&self, creds: &Credentials) -> Result<Arc<dyn FlashArray>, Error> {
        let b = RestArray::builder(format!("https://{}", creds.endpoint)).page_size(self.page_size);
        let mut b = match &creds.credential {
            ArrayCredential::Token(t) => b.api_token(t.clone()),
            ArrayCredential::ApiClient(c, _) => b.api_client(c.clone()),
        };
        if let Some(ca) = &creds.ca_pem {
            b = b.ca_pem(ca.clone());
        }
        let array = b.build().map_err(|e| {
            Error::new(
                Reason::CredentialsInvalid,
                format!("cannot set up the client for array {}: {e}", creds.endpoint),
            )
        })?;
        Ok(Arc::new(array))
    }
}

/// A shared client and the permit that bounds concurrent tenants on its array.
pub struct Lease {
    /// The array as its listings show it: for observing (see [`ObservationCache`]).
    pub array: Arc<dyn FlashArray>,
    /// The array itself for every read: for a plan that will write, the apply and
    /// the delete path. Its writes mark the listings too.
    pub fresh: Arc<dyn FlashArray>,
    /// The array endpoint, for messages.
    pub endpoint: String,
    _permit: OwnedSemaphorePermit,
}

struct Entry {
    cache: Arc<ObservationCache>,
    permits: Arc<Semaphore>,
}

/// The pool of array clients.
pub struct ArrayPool {
    connector: Box<dyn Connector>,
    per_array: usize,
    listing_interval: Duration,
    entries: Mutex<HashMap<u64, Entry>>,
    metrics: Arc<Metrics>,
}

impl ArrayPool {
    /// A pool building clients with `connector`, letting at most `per_array` tenants
    /// use one array at a time; every client's calls are counted in `metrics`.
    pub fn new(connector: Box<dyn Connector>, per_array: usize, metrics: Arc<Metrics>) -> Self {
        ArrayPool {
            connector,
            per_array: per_array.max(1),
            listing_interval: DEFAULT_LISTING_INTERVAL,
            entries: Mutex::new(HashMap::new()),
            metrics,
        }
    }

    /// How long an array's listings answer the drift checks' reads (default
    /// `DEFAULT_LISTING_INTERVAL`; zero: every read goes to the array).
    pub fn with_listing_interval(mut self, interval: Duration) -> Self {
        self.listing_interval = interval;
        self
    }

    /// Ends every array's listing interval now: the next read of each kind lists
    /// it again (a resync pass that must see the arrays as they are).
    pub fn expire_listings(&self) {
        if let Ok(entries) = self.entries.lock() {
            entries.values().for_each(|e| e.cache.expire());
        }
    }

    /// The metrics the pool's clients count into.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Number of distinct arrays (endpoint + credential) with a client.
    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }

    /// Whether no client was built yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shared client for `creds` (its writes settled: see [`Connector::connect`]),
    /// waiting for a permit on its array.
    pub async fn acquire(&self, creds: &Credentials) -> Result<Lease, Error> {
        let key = key_of(creds);
        let (cache, permits) = {
            let mut entries = self
                .entries
                .lock()
                .map_err(|_| Error::new(Reason::Internal, "array pool lock poisoned"))?;
            if let Some(e) = entries.get(&key) {
                (e.cache.clone(), e.permits.clone())
            } else {
                // Counted below the cache: the metrics count the array's calls.
                let array: Arc<dyn FlashArray> = Arc::new(Metered::new(
                    settled(self.connector.connect(creds)?),
                    &creds.endpoint,
                    self.metrics.clone(),
                ));
                let cache = ObservationCache::new(array, self.listing_interval);
                let permits = Arc::new(Semaphore::new(self.per_array));
                entries.insert(
                    key,
                    Entry {
                        cache: cache.clone(),
                        permits: permits.clone(),
                    },
                );
                (cache, permits)
            }
        };
        let permit = permits
            .acquire_owned()
            .await
            .map_err(|_| Error::new(Reason::Internal, "array pool closed"))?;
        Ok(Lease {
            array: cache.cached(),
            fresh: cache.fresh(),
            endpoint: creds.endpoint.clone(),
            _permit: permit,
        })
    }
}

/// The one `flasharray::Settling` layer of the controller, around whatever the
/// connector built: every write of a reconcile (converge's, the orphan passes', the
/// token rotation's) goes through a [`Lease`], and converge adds no layer of its
/// own, so a write whose answer was lost is settled once. Inside the metering: a
/// settled write counts as one call, with its settled outcome.
fn settled(array: Arc<dyn FlashArray>) -> Arc<dyn FlashArray> {
    Arc::new(flasharray::Settling::new(array))
}

fn key_of(creds: &Credentials) -> u64 {
    let mut h = DefaultHasher::new();
    creds.endpoint.hash(&mut h);
    match &creds.credential {
        ArrayCredential::Token(t) => t.expose_secret().hash(&mut h),
        ArrayCredential::ApiClient(c, key) => {
            format!("{:?}", c.identity()).hash(&mut h);
            key.hash(&mut h);
        }
    }
    creds.ca_pem.hash(&mut h);
    h.finish()
}

/// Reads the credentials a tenant references from its namespace.
pub(crate) async fn read_credentials(
    client: &kube::Client,
    namespace: &str,
    spec: &TenantStorage,
) -> Result<Credentials, Error> {
    let Some(reference) = &spec.spec.credentials_secret else {
        return Err(Error::new(
            Reason::CredentialsMissing,
            "spec.credentialsSecret is not set: the controller needs a Secret with the array's pure.json",
        ));
    };
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let secret = secrets.get_opt(&reference.name).await.map_err(|e| {
        Error::new(
            Reason::CredentialsMissing,
            format!("cannot read Secret {namespace}/{}: {e}", reference.name),
        )
    })?;
    let Some(secret) = secret else {
        return Err(Error::new(
            Reason::CredentialsMissing,
            format!("Secret {namespace}/{} does not exist", reference.name),
        ));
    };
    credentials_from_secret(
        &secret,
        namespace,
        reference,
        spec.spec.array.endpoint.as_deref(),
    )
}

/// The credentials in a Secret: the pure.json entry for `endpoint` (or its only
/// entry), and the CA when present. Errors name the Secret and key, never a value.
pub fn credentials_from_secret(
    secret: &Secret,
    namespace: &str,
    reference: &CredentialsSecretRef,
    endpoint: Option<&str>,
) -> Result<Credentials, Error> {
    let name = format!("{namespace}/{}", reference.name);
    let invalid = |m: String| Error::new(Reason::CredentialsInvalid, format!("Secret {name}: {m}"));
    let data = secret.data.clone().unwrap_or_default();
    let pure = data
        .get(&reference.pure_json_key)
        .ok_or_else(|| invalid(format!("has no key {}", reference.pure_json_key)))?;
    let text = SecretString::from(
        String::from_utf8(pure.0.clone())
            .map_err(|_| invalid(format!("{} is not UTF-8", reference.pure_json_key)))?,
    );
    let pure = PureJson::parse(text.expose_secret())
        .map_err(|e| invalid(format!("{}: {e}", reference.pure_json_key)))?;
    let client = api_client_from_secret(&data).map_err(invalid)?;
    let entries: Vec<(String, ArrayCredential)> = pure
        .flash_arrays
        .into_iter()
        .filter_map(|a| {
            let ep = a.mgmt_endpoint.filter(|s| !s.trim().is_empty())?;
            let credential = match &client {
                Some(c) => c.clone(),
                None => ArrayCredential::Token(
                    a.api_token
                        .filter(|t| !t.expose_secret().trim().is_empty())?,
                ),
            };
            Some((ep.trim().to_string(), credential))
        })
        .collect();
    let chosen = match endpoint {
        Some(want) => entries
            .into_iter()
            .find(|(ep, _)| ep == want)
            .ok_or_else(|| {
                invalid(format!(
                    "{} has no FlashArrays entry with MgmtEndPoint {want} and an APIToken",
                    reference.pure_json_key
                ))
            })?,
        None => {
            let mut entries = entries;
            if entries.len() != 1 {
                return Err(invalid(format!(
                    "{} has {} usable FlashArrays entries; set spec.array.endpoint to choose one",
                    reference.pure_json_key,
                    entries.len()
                )));
            }
            entries.remove(0)
        }
    };
    Ok(Credentials {
        endpoint: chosen.0,
        credential: chosen.1,
        ca_pem: data.get(&reference.ca_key).map(|b| b.0.clone()),
    })
}

/// The API client in the Secret's [`API_CLIENT_KEYS`], if it has them; a partial
/// set, an unreadable key or a wrong password is named (never quoted).
fn api_client_from_secret(
    data: &std::collections::BTreeMap<String, k8s_openapi::ByteString>,
) -> Result<Option<ArrayCredential>, String> {
    let text = |k: &str| -> Result<Option<String>, String> {
        data.get(k)
            .map(|b| String::from_utf8(b.0.clone()).map_err(|_| format!("{k} is not UTF-8")))
            .transpose()
    };
    let present: Vec<&str> = API_CLIENT_KEYS
        .into_iter()
        .filter(|k| data.contains_key(*k))
        .collect();
    if present.is_empty() {
        return Ok(None);
    }
    if present.len() < API_CLIENT_KEYS.len() {
        let missing: Vec<&str> = API_CLIENT_KEYS
            .into_iter()
            .filter(|k| !present.contains(k))
            .collect();
        return Err(format!(
            "has API client keys but lacks {}",
            missing.join(", ")
        ));
    }
    let field =
        |k: &str| -> Result<String, String> { Ok(text(k)?.unwrap_or_default().trim().to_string()) };
    let identity = ApiClientIdentity {
        client_id: field("client-id")?,
        key_id: field("key-id")?,
        issuer: field("issuer")?,
        username: field("username")?,
    };
    let password = text(API_CLIENT_PASSWORD_KEY)?
        .map(|p| p.trim_end_matches(['\r', '\n']).to_string())
        .map(SecretString::from);
    let pem = &data["private-key"].0;
    let mut h = DefaultHasher::new();
    pem.hash(&mut h);
    let credential = ApiClientCredential::from_pem(identity, pem, password.as_ref())
        .map_err(|e| format!("private-key: {e}"))?;
    Ok(Some(ArrayCredential::ApiClient(credential, h.finish())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flasharray::PodName;
    use flasharray::models::PodPost;
    use flasharray::settle::WRITE_ROUNDS;
    use flasharray_mock::MockArray;

    /// Hands out one in-memory array, bare, as a connector must.
    struct Bare(MockArray);

    impl Connector for Bare {
        fn connect(&self, _: &Credentials) -> Result<Arc<dyn FlashArray>, Error> {
            Ok(Arc::new(self.0.clone()))
        }
    }

    /// Creates a pod through the lease's `which` array with its first `drops`
    /// sends dropped: how often the create went out, and whether it succeeded.
    async fn create_with_sends_dropped(
        drops: u64,
        which: fn(&Lease) -> &Arc<dyn FlashArray>,
    ) -> (u64, bool) {
        let mock = MockArray::new();
        let pool = ArrayPool::new(Box::new(Bare(mock.clone())), 1, Arc::default());
        let creds = Credentials {
            endpoint: "fa1".into(),
            credential: ArrayCredential::Token(SecretString::from("t")),
            ca_pem: None,
        };
        let lease = pool.acquire(&creds).await.expect("lease");
        for nth in 1..=drops {
            mock.faults().drop_write(nth);
        }
        let pod = PodName::new("pod1").unwrap();
        let r = which(&lease).create_pods(&[pod], &PodPost::default()).await;
        (mock.stats().op(flasharray_mock::Op::CreatePods), r.is_ok())
    }

    /// The pool settles a lost write once, whatever the connector built: a dropped
    /// create is sent again and succeeds; with every send dropped it goes out
    /// `WRITE_ROUNDS` times (one layer, not none and not two), through either array.
    #[tokio::test]
    async fn the_pool_settles_every_array_once() {
        let every = u64::from(WRITE_ROUNDS * WRITE_ROUNDS);
        fn fresh(l: &Lease) -> &Arc<dyn FlashArray> {
            &l.fresh
        }
        fn cached(l: &Lease) -> &Arc<dyn FlashArray> {
            &l.array
        }
        for which in [fresh, cached] {
            assert_eq!(create_with_sends_dropped(1, which).await, (2, true));
            assert_eq!(
                create_with_sends_dropped(every, which).await,
                (u64::from(WRITE_ROUNDS), false)
            );
        }
    }
}
