//! Building a [`RestArray`]: address, credentials, TLS trust, timeouts, retries.
//!
//! Everything is checked in [`RestArrayBuilder::build`] without touching the network,
//! so that a bad CA file or URL is reported before any array call.

use std::path::PathBuf;
use std::time::Duration;

use secrecy::SecretString;
use url::Url;

use crate::error::{Error, Result};
use crate::redact::redact_addr;
use crate::rest::RestArray;
use crate::rest::oauth::ApiClientCredential;
use crate::rest::paging::DEFAULT_PAGE_SIZE;
use crate::rest::retry::RetryConfig;
use crate::rest::session::ApiVersion;
use crate::rest::transport::Credential;

/// Connect timeout used unless [`RestArrayBuilder::connect_timeout`] says otherwise.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Per-request timeout used unless [`RestArrayBuilder::request_timeout`] says otherwise.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the trust anchors come from.
enum Trust {
    /// The platform's trust store (reqwest's default).
    System,
    /// Only the CA certificates in this PEM file.
    CaFile(PathBuf),
    /// Only the CA certificates in these PEM bytes.
    CaPem(Vec<u8>),
}

/// Configures a [`RestArray`]. Obtain one with [`RestArray::builder`].
pub struct RestArrayBuilder {
    url: String,
    api_token: Option<SecretString>,
    api_client: Option<ApiClientCredential>,
    trust: Trust,
    insecure: bool,
    allow_http: bool,
    api_version: Option<String>,
    connect_timeout: Duration,
    request_timeout: Duration,
    retry: RetryConfig,
    user_agent: String,
    page_size: u32,
}

impl std::fmt::Debug for RestArrayBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestArrayBuilder")
            .field("url", &redact_addr(&self.url))
            .field("api_token", &self.api_token.as_ref().map(|_| "[REDACTED]"))
            .field("api_client", &self.api_client)
            .field("insecure", &self.insecure)
            .field("allow_http", &self.allow_http)
            .field("api_version", &self.api_version)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("retry", &self.retry)
            .field("user_agent", &self.user_agent)
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

impl RestArrayBuilder {
    pub(crate) fn new(url: impl Into<String>) -> Self {
        RestArrayBuilder {
            url: url.into(),
            api_token: None,
            api_client: None,
            trust: Trust::System,
            insecure: false,
            allow_http: false,
            api_version: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            retry: RetryConfig::default(),
            user_agent: concat!("pxfa/", env!("CARGO_PKG_VERSION")).to_string(),
            page_size: DEFAULT_PAGE_SIZE,
        }
    }

    /// The admin API token used to log in (`api-token` header). This or
    /// [`RestArrayBuilder::api_client`] is required, not both.
    pub fn api_token(mut self, token: SecretString) -> Self {
        self.api_token = Some(token);
        self
    }

    /// Authenticates as an API client: each login exchanges a freshly signed ID
    /// token for an access token (see [`crate::rest::oauth`]). This or
    /// [`RestArrayBuilder::api_token`] is required, not both.
    pub fn api_client(mut self, client: ApiClientCredential) -> Self {
        self.api_client = Some(client);
        self
    }

    /// Trusts only the CA certificates in this PEM file (typically the array's
    /// self-signed management certificate or the site CA); the platform store is not
    /// consulted.
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.trust = Trust::CaFile(path.into());
        self
    }

    /// Like [`RestArrayBuilder::ca_file`], with the PEM bytes at hand.
    pub fn ca_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.trust = Trust::CaPem(pem.into());
        self
    }

    /// Skips certificate verification. Anyone on the path can then read the API
    /// token, so this logs a warning when the client is built.
    pub fn insecure(mut self, insecure: bool) -> Self {
        self.insecure = insecure;
        self
    }

    /// Allows `http://` URLs. Meant for local test servers: over plain HTTP the API
    /// token travels in clear text.
    pub fn allow_http(mut self, allow: bool) -> Self {
        self.allow_http = allow;
        self
    }

    /// Pins the REST version (`"2.26"`) instead of taking the highest both sides
    /// support; logging in fails with [`Error::Version`] when the array lacks it.
    pub fn api_version(mut self, version: impl Into<String>) -> Self {
        self.api_version = Some(version.into());
        self
    }

    /// TCP + TLS connect timeout (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Timeout of one HTTP request, answer included (default 60 s).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Retry limits (default [`RetryConfig::default`]).
    pub fn retry(mut self, retry: RetryConfig) -> Self {
        self.retry = retry;
        self
    }

    /// The `User-Agent` header (default `pxfa/<version>`).
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// Items a listing asks for per request (`limit`) when the call sets no page size
    /// of its own (default [`DEFAULT_PAGE_SIZE`]). Larger pages cost fewer round trips
    /// on large arrays. The array's largest page is not documented; the REST 2.x
    /// reference says a larger `limit` is answered with the array's maximum, "disregarding
    /// the requested page size" (the `limit` parameter of every list endpoint, e.g.
    /// <https://github.com/pure-shared/go-pure-client> `flasharray/FA_2_38` docs,
    /// `ProtectionGroupsGet`), and the client then follows the continuation token, so a
    /// page size above the cap costs requests, never items.
    pub fn page_size(mut self, page_size: u32) -> Self {
        self.page_size = page_size;
        self
    }

    /// Checks the configuration and builds the client. No request is sent: the first
    /// call logs in.
    pub fn build(self) -> Result<RestArray> {
        let base = parse_base_url(&self.url, self.allow_http)?;
        let credential = match (self.api_token, self.api_client) {
            (Some(token), None) => Credential::ApiToken(token),
            (None, Some(client)) => Credential::ApiClient(client),
            (None, None) => {
                return Err(Error::Config(
                    "an API token or an API client is required".into(),
                ));
            }
            (Some(_), Some(_)) => {
                return Err(Error::Config(
                    "give an API token or an API client, not both".into(),
                ));
            }
        };
        let pinned = match &self.api_version {
            Some(v) => {
                let parsed = ApiVersion::parse(v).ok_or_else(|| {
                    Error::Config(format!("api_version {v:?} is not a REST 2.x version"))
                })?;
                if !parsed.is_supported() {
                    return Err(Error::Config(format!(
                        "api_version {parsed} is outside the versions this client speaks ({}..={})",
                        ApiVersion::MIN,
                        ApiVersion::MAX
                    )));
                }
                Some(parsed)
            }
            None => None,
        };
        if self.page_size == 0 {
            return Err(Error::Config("page_size must be at least 1".into()));
        }
        if self.retry.max_delay < self.retry.min_delay {
            return Err(Error::Config(
                "retry max_delay is shorter than min_delay".into(),
            ));
        }

        install_crypto_provider();
        let mut http = reqwest::Client::builder()
            .connect_timeout(self.connect_timeout)
            .timeout(self.request_timeout)
            .user_agent(self.user_agent)
            // x-auth-token is not a header reqwest strips on cross-host redirects, and
            // arrays do not redirect API calls: never follow one.
            .redirect(reqwest::redirect::Policy::none())
            // Typed DNS failures, so that a name that does not exist fails at once.
            .dns_resolver(crate::rest::transport::resolve::SystemResolver)
            .https_only(!self.allow_http);
        match self.trust {
            Trust::System => {}
            Trust::CaFile(path) => {
                let pem = std::fs::read(&path).map_err(|e| {
                    Error::Config(format!("cannot read CA file {}: {e}", path.display()))
                })?;
                http = http.tls_certs_only(parse_ca(&pem, &path.display().to_string())?);
            }
            Trust::CaPem(pem) => {
                http = http.tls_certs_only(parse_ca(&pem, "the given CA PEM")?);
            }
        }
        if self.insecure {
            tracing::warn!(
                array = %base,
                "TLS certificate verification is disabled: the API token can be intercepted"
            );
            http = http.tls_danger_accept_invalid_certs(true);
        }
        let http = http
            .build()
            .map_err(|e| Error::Config(format!("cannot build the HTTP client: {e}")))?;
        let mut array = RestArray::from_parts(http, base, credential, pinned, self.retry);
        array.transport.page_size = self.page_size;
        Ok(array)
    }
}

/// Makes ring the process's rustls provider unless one is installed already.
///
/// reqwest is built without a provider of its own (`rustls-no-provider`) and takes
/// the process default. ring, unlike aws-lc-rs, does not seed a DRBG through CPU
/// jitter entropy (~40 ms per process) before the first handshake. A program that
/// installed a provider itself keeps it; installing twice is harmless.
/// Call it before building any other reqwest client in a process that uses this crate.
pub fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Err means another thread installed one in between: that one is used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

fn parse_ca(pem: &[u8], what: &str) -> Result<Vec<reqwest::Certificate>> {
    let certs = reqwest::Certificate::from_pem_bundle(pem)
        .map_err(|e| Error::Config(format!("{what} is not a PEM certificate bundle: {e}")))?;
    if certs.is_empty() {
        return Err(Error::Config(format!("{what} holds no certificate")));
    }
    Ok(certs)
}

/// Accepts `host`, `host:port`, `https://host[:port]` (and `http://` when allowed);
/// returns the origin with an empty path. Credentials are refused first, and a
/// message only ever shows the address through [`redact_addr`]: whatever the user
/// pasted (a password, `?api_token=`) is never echoed.
pub(crate) fn parse_base_url(input: &str, allow_http: bool) -> Result<Url> {
    let trimmed = input.trim().trim_end_matches('/');
    if trimmed.is_empty() {
        return Err(Error::Config("the array address is empty".into()));
    }
    let shown = redact_addr(trimmed);
    let (url, carries_credentials) = crate::redact::parse_address(trimmed);
    if carries_credentials {
        return Err(Error::Config(format!(
            "array address {shown} must not carry credentials; use an API token"
        )));
    }
    // The parser's own message never quotes the input.
    let url = url.map_err(|e| Error::Config(format!("array address {shown}: {e}")))?;
    if let Some(problem) = crate::redact::address_form_problem(trimmed, &url) {
        return Err(Error::Config(format!("array address {shown} {problem}")));
    }
    match url.scheme() {
        "https" => {}
        "http" if allow_http => {}
        "http" => {
            return Err(Error::Config(format!(
                "array address {shown} uses plain http; the API token would travel in clear text (allow_http to override)"
            )));
        }
        other => {
            return Err(Error::Config(format!(
                "array address {shown}: unsupported scheme {other:?}"
            )));
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(Error::Config(format!("array address {shown} has no host")));
    }
    if url.path() != "/" && !url.path().is_empty() {
        return Err(Error::Config(format!(
            "array address {shown} has a path; give only host and port"
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(Error::Config(format!(
            "array address {shown} has a query or fragment"
        )));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_size_reaches_the_transport_and_zero_is_refused() {
        let token = || SecretString::from("t".to_string());
        let built = |n: Option<u32>| {
            let b = RestArray::builder("array1").api_token(token());
            match n {
                Some(n) => b.page_size(n).build(),
                None => b.build(),
            }
        };
        let default = built(None).unwrap();
        assert_eq!(default.transport.page_size, DEFAULT_PAGE_SIZE);
        assert_eq!(built(Some(20_000)).unwrap().transport.page_size, 20_000);
        let e = built(Some(0)).unwrap_err().to_string();
        assert!(e.contains("page_size"), "{e}");
    }

    #[test]
    fn address_forms() {
        let ok = |s: &str| parse_base_url(s, false).unwrap().to_string();
        assert_eq!(ok("array1"), "https://array1/");
        assert_eq!(
            ok("array1.example.com:8443"),
            "https://array1.example.com:8443/"
        );
        assert_eq!(ok("https://10.0.0.5/"), "https://10.0.0.5/");
        assert_eq!(ok("[fd00::5]:443"), "https://[fd00::5]/");
        assert!(parse_base_url("http://array1", false).is_err());
        assert_eq!(
            parse_base_url("http://127.0.0.1:1234", true)
                .unwrap()
                .as_str(),
            "http://127.0.0.1:1234/"
        );
        assert!(parse_base_url("https://array1/api", false).is_err());
        assert!(parse_base_url("ftp://array1", false).is_err());
        assert!(parse_base_url("", false).is_err());
        assert!(parse_base_url("https://u:p@array1", false).is_err());
    }

    #[test]
    fn messages_never_echo_secrets() {
        for input in [
            "http://u:SECRET@h",
            "https://SECRET@h:8443",
            "https://h/?api_token=SECRET&x=1",
            "h?api-token=SECRET",
            "https://h/#SECRET",
            "ht!tp://u:SECRET@h",
            "ftp://u:SECRET@h",
        ] {
            for allow_http in [false, true] {
                let e = parse_base_url(input, allow_http).unwrap_err().to_string();
                assert!(!e.contains("SECRET"), "{input}: {e}");
                assert!(e.contains('h'), "{input}: {e}");
            }
        }
        let debug = format!("{:?}", RestArray::builder("https://u:SECRET@h"));
        assert!(!debug.contains("SECRET"), "{debug}");
    }

    #[test]
    fn build_installs_ring_as_the_process_provider() {
        RestArray::builder("array.example")
            .api_token("t".into())
            .build()
            .unwrap();
        let installed = rustls::crypto::CryptoProvider::get_default().expect("a provider");
        let ring = rustls::crypto::ring::default_provider();
        let suites = |p: &rustls::crypto::CryptoProvider| -> Vec<_> {
            p.cipher_suites.iter().map(|s| s.suite()).collect()
        };
        assert_eq!(suites(installed), suites(&ring));
        assert_eq!(installed.kx_groups.len(), ring.kx_groups.len());
    }

    #[test]
    fn build_checks_without_network() {
        let token = || SecretString::from("t");
        assert!(matches!(
            RestArray::builder("a").build(),
            Err(Error::Config(_))
        ));
        assert!(matches!(
            RestArray::builder("a")
                .api_token(token())
                .api_version("1.19")
                .build(),
            Err(Error::Config(_))
        ));
        assert!(matches!(
            RestArray::builder("a")
                .api_token(token())
                .api_version("2.99")
                .build(),
            Err(Error::Config(_))
        ));
        assert!(matches!(
            RestArray::builder("a")
                .api_token(token())
                .ca_pem(b"nope".to_vec())
                .build(),
            Err(Error::Config(_))
        ));
        let missing = RestArray::builder("a")
            .api_token(token())
            .ca_file("/nonexistent/ca.pem")
            .build()
            .unwrap_err()
            .to_string();
        assert!(missing.contains("/nonexistent/ca.pem"), "{missing}");
        assert!(
            RestArray::builder("a")
                .api_token(token())
                .api_version("2.26")
                .build()
                .is_ok()
        );
    }
}
