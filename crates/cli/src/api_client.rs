//! An API client (OAuth2) as the array credential, from flags or the environment.
//!
//! The settings are those of Pure's SDK (`client_id`, `key_id`, `issuer`,
//! `username`, `private_key_file`, `private_key_password`), under the environment
//! names Pure's Ansible collection reads (`PUREFA_CLIENT_ID`, `PUREFA_KEY_ID`,
//! `PUREFA_ISSUER`, `PUREFA_USERNAME`, `PUREFA_PRIVATE_KEY_FILE`,
//! `PUREFA_PRIVATE_KEY_PASSWORD`; `module_utils/purefa.py`). Each field is taken
//! from its flag, else its variable. The private key's password comes from a file
//! (`--private-key-password-file`) or the environment, never from an argument. The
//! key is read and decrypted here, before anything is sent: a missing field, an
//! unreadable key or a wrong password exits 2 naming the flag.

use std::path::{Path, PathBuf};

use anyhow::Result;
use flasharray::rest::oauth::{ApiClientCredential, ApiClientIdentity};
use px_topology::files::{self, InputKind};
use secrecy::SecretString;

use crate::args::GlobalArgs;
use crate::credential_source::{Source, warn_if_shared};
use crate::exit::InvalidInput;

/// The environment names, by field.
pub(crate) const ENV_CLIENT_ID: &str = "PUREFA_CLIENT_ID";
/// The key id's variable.
pub(crate) const ENV_KEY_ID: &str = "PUREFA_KEY_ID";
/// The issuer's variable.
pub(crate) const ENV_ISSUER: &str = "PUREFA_ISSUER";
/// The user's variable.
pub(crate) const ENV_USERNAME: &str = "PUREFA_USERNAME";
/// The private key file's variable.
pub(crate) const ENV_PRIVATE_KEY_FILE: &str = "PUREFA_PRIVATE_KEY_FILE";
/// The private key's password (the value itself, as Pure's Ansible collection).
pub(crate) const ENV_PRIVATE_KEY_PASSWORD: &str = "PUREFA_PRIVATE_KEY_PASSWORD";

/// Every setting's flag and variable, and its value from each.
struct Field<'a> {
    flag: &'static str,
    var: &'static str,
    from_flag: Option<&'a str>,
}

fn fields(global: &GlobalArgs) -> [Field<'_>; 5] {
    let key_file = global.private_key_file.as_deref().and_then(Path::to_str);
    [
        Field {
            flag: "--client-id",
            var: ENV_CLIENT_ID,
            from_flag: global.client_id.as_deref(),
        },
        Field {
            flag: "--key-id",
            var: ENV_KEY_ID,
            from_flag: global.key_id.as_deref(),
        },
        Field {
            flag: "--issuer",
            var: ENV_ISSUER,
            from_flag: global.issuer.as_deref(),
        },
        Field {
            flag: "--username",
            var: ENV_USERNAME,
            from_flag: global.username.as_deref(),
        },
        Field {
            flag: "--private-key-file",
            var: ENV_PRIVATE_KEY_FILE,
            from_flag: key_file,
        },
    ]
}

/// Where API-client settings were given, if anywhere: on the command line (any
/// of its flags) before the environment (any of its variables but the password,
/// which alone says nothing about which credential to use).
pub(crate) fn given(global: &GlobalArgs, env: &dyn Fn(&str) -> Option<String>) -> Option<Source> {
    let set = |v: Option<String>| v.is_some_and(|s| !s.trim().is_empty());
    let fields = fields(global);
    if fields.iter().any(|f| f.from_flag.is_some()) || global.private_key_password_file.is_some() {
        return Some(Source::Flag);
    }
    fields
        .iter()
        .find(|f| set(env(f.var)))
        .map(|f| Source::Env(f.var))
}

/// Reads the settings, the key and its password, and makes the credential.
pub(crate) fn load(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    warn: &mut dyn FnMut(String),
) -> Result<ApiClientCredential> {
    let mut values = Vec::new();
    let mut missing = Vec::new();
    for f in fields(global) {
        let value = f
            .from_flag
            .map(str::to_string)
            .or_else(|| env(f.var))
            .filter(|v| !v.trim().is_empty());
        match value {
            Some(v) => values.push(v),
            None => missing.push(format!("{} ({})", f.flag, f.var)),
        }
    }
    if !missing.is_empty() {
        return Err(InvalidInput::error(format!(
            "an API client needs every one of --client-id, --key-id, --issuer, --username and \
             --private-key-file; missing: {}",
            missing.join(", ")
        )));
    }
    let [client_id, key_id, issuer, username, key_file]: [String; 5] = values
        .try_into()
        .map_err(|_| InvalidInput::error("API client settings"))?;
    let identity = ApiClientIdentity {
        client_id,
        key_id,
        issuer,
        username,
    };
    // Checked here, before the key, so that the error names the setting's flag.
    if let Some((field, why)) = identity.invalid_field() {
        let flag = fields(global)
            .into_iter()
            .find(|f| f.flag.trim_start_matches('-').replace('-', "_") == field)
            .map_or_else(|| field.to_string(), |f| format!("{} ({})", f.flag, f.var));
        return Err(InvalidInput::error(format!("{flag}: {why}")));
    }
    let key_file = PathBuf::from(key_file);
    let password = password(global, env, warn)?;
    warn_if_shared(&key_file, warn);
    let shown = format!("--private-key-file {}", key_file.display());
    let pem = files::read_input(&key_file, InputKind::Credentials)
        .map_err(|e| InvalidInput::error(format!("{shown}: cannot read the private key: {e}")))?;
    ApiClientCredential::from_pem(identity, &pem, password.as_ref())
        .map_err(|e| InvalidInput::error(format!("{shown}: {e}")))
}

/// The key's password: the first line of `--private-key-password-file` (its line
/// ending removed, nothing else), else `PUREFA_PRIVATE_KEY_PASSWORD`.
fn password(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    warn: &mut dyn FnMut(String),
) -> Result<Option<SecretString>> {
    let Some(path) = &global.private_key_password_file else {
        return Ok(env(ENV_PRIVATE_KEY_PASSWORD)
            .filter(|p| !p.is_empty())
            .map(SecretString::from));
    };
    warn_if_shared(path, warn);
    let shown = format!("--private-key-password-file {}", path.display());
    let bytes = files::read_input(path, InputKind::Token)
        .map_err(|e| InvalidInput::error(format!("{shown}: cannot read it: {e}")))?;
    let text = SecretString::from(
        String::from_utf8(bytes)
            .map_err(|_| InvalidInput::error(format!("{shown} is not UTF-8 text")))?,
    );
    let first = secrecy::ExposeSecret::expose_secret(&text)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    if first.is_empty() {
        return Err(InvalidInput::error(format!("{shown} is empty")));
    }
    Ok(Some(SecretString::from(first)))
}
