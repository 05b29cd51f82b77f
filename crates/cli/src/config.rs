//! Where the array address and API token come from.
//!
//! Precedence, highest first: command-line flags (`--array`, `--api-token-file`),
//! environment (`PUREFA_URL`, `PUREFA_API`, the names Pure's own tooling uses), then a
//! px-pure-secret `pure.json` file (`--pure-json`). Address and token are resolved
//! independently, so a pure.json can supply the token for an address given by flag.
//! A token is never taken from an argument value: argv is visible to every user of
//! the machine through `ps`.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use flasharray::redact::redact_addr;
use px_topology::PureJson;
use px_topology::files::{self, InputKind};
use secrecy::{ExposeSecret, SecretString};
use url::Url;

use crate::api_client;
use crate::args::GlobalArgs;
use crate::credential_source::{Source, warn_if_shared};
use crate::exit::InvalidInput;
use flasharray::rest::oauth::ApiClientCredential;

/// Environment variable with the array address.
pub(crate) const ENV_URL: &str = "PUREFA_URL";
/// Environment variable with the API token.
pub(crate) const ENV_TOKEN: &str = "PUREFA_API";

/// The environment variables a profile in effect (`profiles`) stands in for.
pub(crate) const ARRAY_ENV: &[&str] = &[
    ENV_URL,
    ENV_TOKEN,
    crate::api_client::ENV_CLIENT_ID,
    crate::api_client::ENV_KEY_ID,
    crate::api_client::ENV_ISSUER,
    crate::api_client::ENV_USERNAME,
    crate::api_client::ENV_PRIVATE_KEY_FILE,
    crate::api_client::ENV_PRIVATE_KEY_PASSWORD,
];

/// Which array to talk to.
#[derive(Debug)]
pub(crate) enum Target {
    /// The embedded simulated array (`--array sim`).
    Sim,
    /// A real array (or the HTTPS simulator) over REST.
    Rest(RestTarget),
}

/// A resolved REST target. Debug never shows the token or key.
pub(crate) struct RestTarget {
    /// Base URL, `https://host[:port]`.
    pub(crate) url: Url,
    /// Where the URL came from.
    pub(crate) url_source: Source,
    /// The API token; empty when an API client is the credential.
    pub(crate) token: SecretString,
    /// The API client (OAuth2), when it is the credential instead of a token.
    pub(crate) api_client: Option<Box<ApiClientCredential>>,
    /// Where the credential came from.
    pub(crate) token_source: Source,
    /// CA bundle to trust.
    pub(crate) ca_file: Option<PathBuf>,
    /// Skip certificate verification.
    pub(crate) insecure: bool,
}

impl fmt::Debug for RestTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestTarget")
            .field("url", &self.url.as_str())
            .field("url_source", &self.url_source)
            .field("token", &"[REDACTED]")
            .field("api_client", &self.api_client)
            .field("token_source", &self.token_source)
            .field("ca_file", &self.ca_file)
            .field("insecure", &self.insecure)
            .finish()
    }
}

/// One usable pure.json entry.
struct PureEntry {
    endpoint: String,
    token: SecretString,
}

/// Resolves the target from flags, environment (`env`) and pure.json. `warn` receives
/// warnings (insecure mode, readable credential files). An error with a profile in
/// effect names the profile: its values show as the flags they stand for.
pub(crate) fn resolve(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    warn: &mut dyn FnMut(String),
) -> Result<Target> {
    let target = resolve_options(global, env, warn);
    match &global.profile_in_effect {
        Some(p) => target.with_context(|| format!("profile `{}` of {}", p.name, p.file.display())),
        None => target,
    }
}

fn resolve_options(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    warn: &mut dyn FnMut(String),
) -> Result<Target> {
    // A profile in effect names the array and its credential as a unit: the PUREFA_*
    // environment is not read beside it (profiles::apply warned about those set).
    let env = &|k: &str| match &global.profile_in_effect {
        Some(_) if ARRAY_ENV.contains(&k) => None,
        _ => env(k),
    };
    let env_url = env(ENV_URL).filter(|s| !s.trim().is_empty());
    let flag_or_env_url = match (&global.array, env_url) {
        (Some(a), _) => Some((a.clone(), Source::Flag)),
        (None, Some(u)) => Some((u, Source::Env(ENV_URL))),
        (None, None) => None,
    };
    if let Some((addr, _)) = &flag_or_env_url
        && addr.trim().eq_ignore_ascii_case("sim")
    {
        return Ok(Target::Sim);
    }

    let pure = match &global.pure_json {
        Some(path) => Some((
            select_entry(
                path,
                load_pure_json(path, warn)?,
                global.array_name.as_deref(),
                flag_or_env_url.as_ref().map(|(a, _)| a.as_str()),
            )?,
            path.clone(),
        )),
        None => {
            if global.array_name.is_some() {
                return Err(InvalidInput::error("--array-name needs --pure-json"));
            }
            None
        }
    };

    let (addr, url_source) = match (flag_or_env_url, &pure) {
        (Some(a), _) => a,
        (None, Some((entry, path))) => (entry.endpoint.clone(), Source::PureJson(path.clone())),
        (None, None) => {
            return Err(InvalidInput::error(format!(
                "no array given: use --array URL (or `--array sim`), {ENV_URL}, or --pure-json FILE"
            )));
        }
    };
    let url = parse_array_url(&addr).with_context(|| format!("array address from {url_source}"))?;

    let (token, api_client, token_source) = match api_client_wins(global, env)? {
        Some(source) => (
            SecretString::from(String::new()),
            Some(Box::new(api_client::load(global, env, warn)?)),
            source,
        ),
        None => {
            let (token, source) = resolve_token(global, env, pure, &url, warn)?;
            (token, None, source)
        }
    };

    if let Some(ca) = &global.ca_file {
        read_ca_file(ca)?;
    }
    if global.insecure {
        warn(format!(
            "--insecure: the certificate of {url} is not verified; anyone between here and the \
             array can read the API token. Prefer --ca-file."
        ));
    }
    Ok(Target::Rest(RestTarget {
        url,
        url_source,
        token,
        api_client,
        token_source,
        ca_file: global.ca_file.clone(),
        insecure: global.insecure,
    }))
}

/// Whether an API client is the credential, and where its settings came from. A
/// flag beats the environment; an API client and an API token given at the same
/// level are refused (exit 2) rather than one silently chosen.
fn api_client_wins(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Source>> {
    let client = api_client::given(global, env);
    let token_flag = global.api_token_file.is_some();
    let token_env = env(ENV_TOKEN).is_some_and(|s| !s.trim().is_empty());
    match client {
        Some(Source::Flag) if token_flag => Err(InvalidInput::error(
            "--api-token-file and the API client flags (--client-id ...) were both given; use one",
        )),
        Some(Source::Env(var)) if !token_flag && token_env => Err(InvalidInput::error(format!(
            "{ENV_TOKEN} and {var} are both set: an API token and an API client; unset one, or \
             choose on the command line"
        ))),
        Some(Source::Env(_)) if token_flag => Ok(None),
        other => Ok(other),
    }
}

/// The API token: `--api-token-file`, then `PUREFA_API`, then the pure.json entry.
fn resolve_token(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    pure: Option<(PureEntry, PathBuf)>,
    url: &Url,
    warn: &mut dyn FnMut(String),
) -> Result<(SecretString, Source)> {
    let env_token = env(ENV_TOKEN).filter(|s| !s.trim().is_empty());
    Ok(match (&global.api_token_file, env_token, pure) {
        (Some(file), _, _) => (read_token_file(file, warn)?, Source::Flag),
        (None, Some(t), _) => (
            checked_token(&t, &Source::Env(ENV_TOKEN))?,
            Source::Env(ENV_TOKEN),
        ),
        (None, None, Some((entry, path))) => {
            let shown = format!("--pure-json {} (its APIToken)", path.display());
            let token = checked_token(entry.token.expose_secret(), &shown)?;
            (token, Source::PureJson(path))
        }
        (None, None, None) => {
            return Err(InvalidInput::error(format!(
                "no API token given for {url}: use --api-token-file FILE, {ENV_TOKEN}, --pure-json \
                 FILE, or an API client (--client-id ...)"
            )));
        }
    })
}

/// Parses `host`, `host:port` or `https://host[:port]` into a base URL. Plain HTTP
/// is refused: the API token would travel in clear text. Credentials are checked
/// first, and messages show the address only through [`redact_addr`], so a password
/// or `?api_token=` pasted into it is never echoed.
pub(crate) fn parse_array_url(addr: &str) -> Result<Url> {
    let addr = addr.trim();
    if addr.is_empty() {
        return Err(InvalidInput::error("the array address is empty"));
    }
    let shown = redact_addr(addr);
    let (url, carries_credentials) = flasharray::redact::parse_address(addr);
    if carries_credentials {
        return Err(InvalidInput::error(format!(
            "invalid array address {shown}: credentials in the URL are not accepted (use --api-token-file)"
        )));
    }
    let url =
        url.map_err(|e| InvalidInput::error(format!("invalid array address {shown}: {e}")))?;
    if let Some(problem) = flasharray::redact::address_form_problem(addr, &url) {
        return Err(InvalidInput::error(format!(
            "invalid array address {shown}: it {problem}"
        )));
    }
    if url.scheme() != "https" {
        return Err(InvalidInput::error(format!(
            "invalid array address {shown}: only https:// is supported (the API token must not travel in clear text)"
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(InvalidInput::error(format!(
            "invalid array address {shown}: no host"
        )));
    }
    if url.path() != "/" && !url.path().is_empty()
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return Err(InvalidInput::error(format!(
            "invalid array address {shown}: give only scheme, host and port"
        )));
    }
    Ok(url)
}

/// Reads a token file: its one non-empty line, trimmed. A file that cannot be
/// read is the user's input being wrong (exit 2): nothing was sent.
pub(crate) fn read_token_file(path: &Path, warn: &mut dyn FnMut(String)) -> Result<SecretString> {
    warn_if_shared(path, warn);
    let bytes = files::read_input(path, InputKind::Token).map_err(|e| {
        InvalidInput::error(format!(
            "--api-token-file: cannot read API token file {}: {e}",
            path.display()
        ))
    })?;
    let text = SecretString::from(String::from_utf8_lossy(&bytes).into_owned());
    drop(bytes);
    let mut lines = text
        .expose_secret()
        .lines()
        .map(|l| l.trim_start_matches(BOM).trim())
        .filter(|l| !l.is_empty());
    let shown = format!("--api-token-file {}", path.display());
    match (lines.next(), lines.next()) {
        (Some(l), None) => checked_token(l, &shown),
        // A second line may be the real token, or the first a stray: refuse to guess.
        (Some(_), Some(_)) => Err(InvalidInput::error(format!(
            "{shown} holds more than one non-empty line; an API token file holds the token alone"
        ))),
        (None, _) => Err(InvalidInput::error(format!("{shown} is empty"))),
    }
}

/// A UTF-8 byte order mark, which editors on Windows put before the token.
const BOM: char = '\u{feff}';

/// An API token, trimmed, as the array issues them: a UUID or a JWT, so printable
/// ASCII with no spaces. Anything else (a CR, a NUL, a second line, a BOM in the
/// middle) is refused before it reaches an HTTP header; the message says where, never
/// what.
pub(crate) fn checked_token(raw: &str, source: &dyn fmt::Display) -> Result<SecretString> {
    let token = raw.trim_start_matches(BOM).trim();
    if token.is_empty() {
        return Err(InvalidInput::error(format!(
            "the API token from {source} is empty"
        )));
    }
    if let Some(pos) = token.chars().position(|c| !c.is_ascii_graphic()) {
        return Err(InvalidInput::error(format!(
            "the API token from {source} holds a character no API token has (a space, a \
             control character or non-ASCII, at character {}); check the file or variable",
            pos + 1
        )));
    }
    Ok(SecretString::from(token.to_string()))
}

/// Reads a CA bundle and checks that it holds at least one PEM `CERTIFICATE`
/// block. An unreadable or foreign file exits 2 before anything is sent, instead of
/// surfacing later as a client setup failure.
pub(crate) fn read_ca_file(path: &Path) -> Result<Vec<u8>> {
    let pem = files::read_input(path, InputKind::Credentials).map_err(|e| {
        InvalidInput::error(format!(
            "--ca-file: cannot read CA file {}: {e}",
            path.display()
        ))
    })?;
    let text = String::from_utf8_lossy(&pem);
    let has_cert = text
        .lines()
        .any(|l| l.trim() == "-----BEGIN CERTIFICATE-----");
    if !has_cert {
        return Err(InvalidInput::error(format!(
            "--ca-file {} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
            path.display()
        )));
    }
    Ok(pem)
}

fn load_pure_json(path: &Path, warn: &mut dyn FnMut(String)) -> Result<PureJson> {
    warn_if_shared(path, warn);
    let bytes = files::read_input(path, InputKind::Credentials).map_err(|e| {
        InvalidInput::error(format!(
            "--pure-json: cannot read pure.json {}: {e}",
            path.display()
        ))
    })?;
    let text = SecretString::from(String::from_utf8_lossy(&bytes).into_owned());
    drop(bytes);
    // The parse error gives only where and what kind of problem, never the text: it
    // may be a token.
    PureJson::parse(text.expose_secret())
        .map_err(|e| InvalidInput::error(format!("--pure-json {}: {e}", path.display())))
}

fn select_entry(
    path: &Path,
    pure: PureJson,
    array_name: Option<&str>,
    address: Option<&str>,
) -> Result<PureEntry> {
    let mut entries = Vec::new();
    for (i, a) in pure.flash_arrays.into_iter().enumerate() {
        let endpoint = a
            .mgmt_endpoint
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| {
                InvalidInput::error(format!(
                    "{}: FlashArrays[{i}].MgmtEndPoint is missing",
                    path.display()
                ))
            })?;
        let token = a
            .api_token
            .filter(|t| !t.expose_secret().trim().is_empty())
            .ok_or_else(|| {
                InvalidInput::error(format!(
                    "{}: FlashArrays[{i}].APIToken is missing",
                    path.display()
                ))
            })?;
        entries.push(PureEntry {
            endpoint: endpoint.trim().to_string(),
            token,
        });
    }
    if entries.is_empty() {
        return Err(InvalidInput::error(format!(
            "{}: FlashArrays is empty",
            path.display()
        )));
    }
    let listed = || {
        entries
            .iter()
            .map(|e| e.endpoint.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let wanted = array_name.or(address).map(str::to_string);
    match wanted {
        None if entries.len() == 1 => Ok(entries.remove(0)),
        None => Err(InvalidInput::error(format!(
            "{} lists {} arrays ({}); choose one with --array-name",
            path.display(),
            entries.len(),
            listed()
        ))),
        Some(w) => {
            let found = entries
                .iter()
                .position(|e| endpoint_matches(&e.endpoint, &w));
            match found {
                Some(i) => Ok(entries.remove(i)),
                None if array_name.is_none() && entries.len() == 1 => Ok(entries.remove(0)),
                None => Err(InvalidInput::error(format!(
                    "{}: no FlashArrays entry with MgmtEndPoint {w:?} (it lists {})",
                    path.display(),
                    listed()
                ))),
            }
        }
    }
}

/// `MgmtEndPoint` is a bare host (maybe with port); compare it with a host or address:
/// the same host **and** port (443 when none is written), so `127.0.0.1:2` never takes
/// the entry (and the token) of `127.0.0.1:1`.
fn endpoint_matches(endpoint: &str, wanted: &str) -> bool {
    if endpoint.eq_ignore_ascii_case(wanted) {
        return true;
    }
    let host_port = |s: &str| {
        parse_array_url(s).ok().and_then(|u| {
            let host = u.host_str()?.to_ascii_lowercase();
            Some((host, u.port_or_known_default()))
        })
    };
    match (host_port(endpoint), host_port(wanted)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::io::Write;

    const TOKEN: &str = "6f1e0c6a-9d3f-4d10-8bbf-2b8c3e1f0a11";

    fn global(args: &[&str]) -> GlobalArgs {
        let mut argv = vec!["pxfa"];
        argv.extend_from_slice(args);
        argv.extend_from_slice(&["array", "info"]);
        crate::args::Cli::try_parse_from(argv).unwrap().global
    }

    fn private_file(dir: &Path, name: &str, body: &str) -> PathBuf {
        let p = dir.join(name);
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(body.as_bytes()).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        p
    }

    fn rest(t: Target) -> RestTarget {
        match t {
            Target::Rest(r) => r,
            Target::Sim => panic!("expected a REST target"),
        }
    }

    #[test]
    fn flags_beat_env_beat_pure_json() {
        let dir = tempfile::tempdir().unwrap();
        let tok = private_file(dir.path(), "tok", "flag-token\n");
        let pj = private_file(
            dir.path(),
            "pure.json",
            &format!(r#"{{"FlashArrays":[{{"MgmtEndPoint":"10.0.0.9","APIToken":"{TOKEN}"}}]}}"#),
        );
        let env_all = |k: &str| match k {
            ENV_URL => Some("env-array:8443".to_string()),
            ENV_TOKEN => Some("env-token".to_string()),
            _ => None,
        };
        let no_env = |_: &str| None;
        let mut warns = Vec::new();
        let pjs = pj.to_str().unwrap();

        let t = rest(
            resolve(&global(&["--pure-json", pjs]), &no_env, &mut |w| {
                warns.push(w)
            })
            .unwrap(),
        );
        assert_eq!(t.url.as_str(), "https://10.0.0.9/");
        assert_eq!(t.token.expose_secret(), TOKEN);
        assert!(matches!(t.token_source, Source::PureJson(_)));

        let t = rest(
            resolve(&global(&["--pure-json", pjs]), &env_all, &mut |w| {
                warns.push(w)
            })
            .unwrap(),
        );
        assert_eq!(t.url.as_str(), "https://env-array:8443/");
        assert_eq!(t.token.expose_secret(), "env-token");

        let args = global(&[
            "--pure-json",
            pjs,
            "--array",
            "https://flag-array",
            "--api-token-file",
            tok.to_str().unwrap(),
        ]);
        let t = rest(resolve(&args, &env_all, &mut |w| warns.push(w)).unwrap());
        assert_eq!(t.url.as_str(), "https://flag-array/");
        assert_eq!(t.token.expose_secret(), "flag-token");
        assert_eq!(t.token_source, Source::Flag);
        assert!(warns.is_empty(), "{warns:?}");
        assert!(!format!("{t:?}").contains("flag-token"));
    }

    #[test]
    fn sim_from_flag_or_env() {
        let no_env = |_: &str| None;
        assert!(matches!(
            resolve(&global(&["--array", "sim"]), &no_env, &mut |_| {}).unwrap(),
            Target::Sim
        ));
        let env = |k: &str| (k == ENV_URL).then(|| "SIM".to_string());
        assert!(matches!(
            resolve(&global(&[]), &env, &mut |_| {}).unwrap(),
            Target::Sim
        ));
    }

    #[test]
    fn several_arrays_need_a_name() {
        let dir = tempfile::tempdir().unwrap();
        let pj = private_file(
            dir.path(),
            "pure.json",
            r#"{"FlashArrays":[{"MgmtEndPoint":"fa1.example","APIToken":"t1"},{"MgmtEndPoint":"fa2.example","APIToken":"t2"}]}"#,
        );
        let pjs = pj.to_str().unwrap();
        let no_env = |_: &str| None;
        let e = resolve(&global(&["--pure-json", pjs]), &no_env, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("--array-name"), "{e}");
        assert_eq!(crate::exit::code_for(&e), 2);
        let t = rest(
            resolve(
                &global(&["--pure-json", pjs, "--array-name", "FA2.example"]),
                &no_env,
                &mut |_| {},
            )
            .unwrap(),
        );
        assert_eq!(t.token.expose_secret(), "t2");
        let t = rest(
            resolve(
                &global(&["--pure-json", pjs, "--array", "https://fa1.example"]),
                &no_env,
                &mut |_| {},
            )
            .unwrap(),
        );
        assert_eq!(t.token.expose_secret(), "t1");
    }

    #[test]
    fn entries_match_by_host_and_port() {
        let dir = tempfile::tempdir().unwrap();
        let pj = private_file(
            dir.path(),
            "pure.json",
            r#"{"FlashArrays":[{"MgmtEndPoint":"127.0.0.1:1","APIToken":"t1"},{"MgmtEndPoint":"127.0.0.1:2","APIToken":"t2"},{"MgmtEndPoint":"fa3.example","APIToken":"t3"}]}"#,
        );
        let pjs = pj.to_str().unwrap();
        let no_env = |_: &str| None;
        let token = |args: &[&str]| {
            let mut all = vec!["--pure-json", pjs];
            all.extend_from_slice(args);
            resolve(&global(&all), &no_env, &mut |_| {})
                .map(|t| rest(t).token.expose_secret().to_string())
        };
        assert_eq!(token(&["--array-name", "127.0.0.1:2"]).unwrap(), "t2");
        assert_eq!(token(&["--array-name", "127.0.0.1:1"]).unwrap(), "t1");
        assert_eq!(token(&["--array", "https://127.0.0.1:2"]).unwrap(), "t2");
        // No port is 443, on both sides.
        assert_eq!(token(&["--array-name", "fa3.example:443"]).unwrap(), "t3");
        let e = token(&["--array-name", "127.0.0.1:3"]).unwrap_err();
        assert_eq!(crate::exit::code_for(&e), 2, "{e}");
        let e = token(&["--array-name", "127.0.0.1"]).unwrap_err();
        assert!(e.to_string().contains("no FlashArrays entry"), "{e}");
    }

    #[test]
    fn broken_pure_json_never_quotes_the_token() {
        let dir = tempfile::tempdir().unwrap();
        let pj = private_file(
            dir.path(),
            "pure.json",
            &format!(r#"{{"FlashArrays":[{{"MgmtEndPoint":"a","APIToken":"{TOKEN}"}}], "x": }}"#),
        );
        let e = resolve(
            &global(&["--pure-json", pj.to_str().unwrap()]),
            &|_| None,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(!format!("{e:#}").contains(TOKEN));
        let pj = private_file(
            dir.path(),
            "p2.json",
            r#"{"FlashArrays":[{"MgmtEndPoint":"a"}]}"#,
        );
        let e = resolve(
            &global(&["--pure-json", pj.to_str().unwrap()]),
            &|_| None,
            &mut |_| {},
        )
        .unwrap_err();
        assert!(e.to_string().contains("FlashArrays[0].APIToken"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn shared_token_file_warns() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let tok = private_file(dir.path(), "tok", "t\n");
        std::fs::set_permissions(&tok, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut warns = Vec::new();
        let args = global(&["--array", "fa", "--api-token-file", tok.to_str().unwrap()]);
        resolve(&args, &|_| None, &mut |w| warns.push(w)).unwrap();
        assert_eq!(warns.len(), 1);
        assert!(warns[0].contains("chmod 600"));
    }

    #[test]
    fn addresses() {
        assert_eq!(
            parse_array_url("fa.example").unwrap().as_str(),
            "https://fa.example/"
        );
        assert_eq!(
            parse_array_url("127.0.0.1:8443").unwrap().port(),
            Some(8443)
        );
        assert!(parse_array_url("http://fa").is_err());
        assert!(parse_array_url("https://u:p@fa").is_err());
        assert!(parse_array_url("https://fa/api").is_err());
        assert!(parse_array_url("").is_err());
    }

    #[test]
    fn address_errors_never_echo_secrets() {
        for input in [
            "http://u:SECRET@h",
            "https://SECRET@h:8443",
            "https://h/?api_token=SECRET&x=1",
            "h?api-token=SECRET",
            "https://h/#SECRET",
            "ht!tp://u:SECRET@h",
            "ftp://SECRET@h",
        ] {
            let e = parse_array_url(input).unwrap_err();
            let shown = format!("{e:#}");
            assert!(!shown.contains("SECRET"), "{input}: {shown}");
            assert!(shown.contains('h'), "{input}: {shown}");
            assert_eq!(crate::exit::code_for(&e), 2, "{input}");
        }
    }

    #[test]
    fn an_api_client_and_a_token_at_one_level_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let tok = private_file(dir.path(), "tok", "flag-token\n");
        let tok = tok.to_str().unwrap();
        let none = |_: &str| None;
        let both = global(&["--array", "fa", "--api-token-file", tok, "--client-id", "c"]);
        let e = resolve(&both, &none, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("both given"), "{e}");
        assert_eq!(crate::exit::code_for(&e), 2);
        let env = |k: &str| match k {
            ENV_TOKEN => Some("env-token".to_string()),
            api_client::ENV_CLIENT_ID => Some("c".to_string()),
            _ => None,
        };
        let e = resolve(&global(&["--array", "fa"]), &env, &mut |_| {}).unwrap_err();
        assert!(
            e.to_string().contains("PUREFA_API and PUREFA_CLIENT_ID"),
            "{e}"
        );
        // A flag beats the environment, either way round.
        let Target::Rest(t) = resolve(
            &global(&["--array", "fa", "--api-token-file", tok]),
            &env,
            &mut |_| {},
        )
        .unwrap() else {
            panic!("a REST target")
        };
        assert!(t.api_client.is_none());
        assert_eq!(t.token.expose_secret(), "flag-token");
        let e = resolve(
            &global(&["--array", "fa", "--client-id", "c"]),
            &env,
            &mut |_| {},
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("--key-id (PUREFA_KEY_ID)") && e.contains("--private-key-file"),
            "{e}"
        );
        assert!(!e.contains("--client-id (PUREFA_CLIENT_ID)"), "{e}");
    }

    #[test]
    fn unreadable_token_and_ca_files_are_usage_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let e = read_token_file(&missing, &mut |_| {}).unwrap_err();
        assert_eq!(crate::exit::code_for(&e), 2, "{e}");
        // A directory cannot be read as a file, even by root.
        let e = read_token_file(dir.path(), &mut |_| {}).unwrap_err();
        assert_eq!(crate::exit::code_for(&e), 2, "{e}");
        let garbage = private_file(dir.path(), "ca.pem", "not a certificate\n");
        let e = read_ca_file(&garbage).unwrap_err();
        assert!(e.to_string().contains("CERTIFICATE"), "{e}");
        assert_eq!(crate::exit::code_for(&e), 2);
        let e = read_ca_file(&missing).unwrap_err();
        assert_eq!(crate::exit::code_for(&e), 2);
        let args = global(&["--array", "fa", "--ca-file", garbage.to_str().unwrap()]);
        let env = |k: &str| (k == ENV_TOKEN).then(|| "t".to_string());
        let e = resolve(&args, &env, &mut |_| {}).unwrap_err();
        assert_eq!(crate::exit::code_for(&e), 2);
    }

    #[test]
    fn missing_pieces_are_usage_errors() {
        let e = resolve(&global(&[]), &|_| None, &mut |_| {}).unwrap_err();
        assert_eq!(crate::exit::code_for(&e), 2);
        let e = resolve(&global(&["--array", "fa"]), &|_| None, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("no API token"), "{e}");
    }
}
