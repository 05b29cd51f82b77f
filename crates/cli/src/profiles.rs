//! Named array profiles: a config file that says, per name, which array and where its
//! credential is, so that day-2 work is `pxfa --profile prod-east volume list`.
//!
//! The file is `$PXFA_CONFIG`, else `$XDG_CONFIG_HOME/pxfa/config.yaml`, else
//! `~/.config/pxfa/config.yaml`:
//!
//! ```yaml
//! current-profile: lab
//! profiles:
//!   prod-east:
//!     array: https://fa-east.example.com
//!     api-token-file: ~/.config/pxfa/prod-east.token
//!   lab:
//!     array: sim
//!     sim-state: lab.json          # relative paths are the config file's folder's
//! ```
//!
//! A profile holds the array options of [`GlobalArgs`] and nothing else; a token is
//! never in it, only the path of a file that holds one (a key that would hold a
//! token is refused by name). Precedence, highest first: a flag on the command line
//! (one field of the profile), a profile chosen by name (`--profile`, `PXFA_PROFILE`),
//! the `PUREFA_*` environment, the file's `current-profile`. A profile in effect is a
//! unit: the `PUREFA_*` variables are not read beside it (a warning names those
//! set), so a token from the environment never goes to the profile's array.
//! `--array` or `--pure-json` beside a profile chosen by name is refused: the
//! profile's token would go to another array.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use flasharray::redact::redact_addr;
use px_topology::files::{self, InputKind};
use serde::Serialize;
use serde_json::Value;

use crate::args::{GlobalArgs, ProfileInEffect};
use crate::config::ARRAY_ENV;
use crate::exit::InvalidInput;

/// Environment variable naming the profile to use.
pub(crate) const ENV_PROFILE: &str = "PXFA_PROFILE";
/// Environment variable with the config file's path.
pub(crate) const ENV_CONFIG: &str = "PXFA_CONFIG";

/// The key of the default profile.
const CURRENT: &str = "current-profile";
/// The key of the profiles.
const PROFILES: &str = "profiles";

/// Keys that would put a secret in the file, refused with a pointer to the
/// `*-file` key that names a file instead.
const SECRET_KEYS: &[(&str, &str)] = &[
    ("api-token", "api-token-file"),
    ("token", "api-token-file"),
    ("apitoken", "api-token-file"),
    ("password", "private-key-password-file"),
    ("private-key", "private-key-file"),
    ("private-key-password", "private-key-password-file"),
];

/// One profile: the array options it sets. Paths are resolved (`~/`, relative to the
/// file's folder). Nothing in it is a secret, so Debug and the printed forms show it
/// whole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct Profile {
    /// `--array`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) array: Option<String>,
    /// `--api-token-file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) api_token_file: Option<PathBuf>,
    /// `--pure-json`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pure_json: Option<PathBuf>,
    /// `--array-name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) array_name: Option<String>,
    /// `--ca-file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ca_file: Option<PathBuf>,
    /// `--insecure`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) insecure: bool,
    /// `--client-id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) client_id: Option<String>,
    /// `--key-id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) key_id: Option<String>,
    /// `--issuer`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) issuer: Option<String>,
    /// `--username`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) username: Option<String>,
    /// `--private-key-file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) private_key_file: Option<PathBuf>,
    /// `--private-key-password-file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) private_key_password_file: Option<PathBuf>,
    /// `--sim-state` (with `array: sim`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sim_state: Option<PathBuf>,
}

/// The keys of a profile, each with how its value is read.
const FIELDS: &[(&str, Kind)] = &[
    ("array", Kind::Text),
    ("api-token-file", Kind::Path),
    ("pure-json", Kind::Path),
    ("array-name", Kind::Text),
    ("ca-file", Kind::Path),
    ("insecure", Kind::Bool),
    ("client-id", Kind::Text),
    ("key-id", Kind::Text),
    ("issuer", Kind::Text),
    ("username", Kind::Text),
    ("private-key-file", Kind::Path),
    ("private-key-password-file", Kind::Path),
    ("sim-state", Kind::Path),
];

#[derive(Clone, Copy)]
enum Kind {
    Text,
    Path,
    Bool,
}

/// A read config file.
#[derive(Debug)]
pub(crate) struct Config {
    /// Where it is.
    pub(crate) path: PathBuf,
    /// `current-profile`.
    pub(crate) current: Option<String>,
    /// The profiles by name.
    pub(crate) profiles: BTreeMap<String, Profile>,
    /// The file's text, as read (`use-profile` edits one line of it).
    pub(crate) text: String,
}

/// The config file's path: `$PXFA_CONFIG`, `$XDG_CONFIG_HOME/pxfa/config.yaml` or
/// `$HOME/.config/pxfa/config.yaml`; `None` without any of them.
pub(crate) fn config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|s| !s.trim().is_empty());
    if let Some(p) = set(ENV_CONFIG) {
        return Some(PathBuf::from(p));
    }
    let base = match set("XDG_CONFIG_HOME") {
        Some(x) => PathBuf::from(x),
        None => PathBuf::from(set("HOME")?).join(".config"),
    };
    Some(base.join("pxfa").join("config.yaml"))
}

/// Reads the config file; `Ok(None)` when it does not exist. A file that cannot be
/// read or parsed is bad input (exit 2), named with the key at fault.
pub(crate) fn load(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Config>> {
    let text = match files::read_input_text(path, InputKind::Credentials) {
        Ok(t) => t,
        Err(files::FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(e) => {
            return Err(InvalidInput::error(format!(
                "cannot read the pxfa config file {}: {e}",
                path.display()
            )));
        }
    };
    parse(path, &text, env).map(Some)
}

/// Parses the config file's text. Messages name the file and the key, never a value.
pub(crate) fn parse(
    path: &Path,
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config> {
    let bad = |at: &str, what: &str| {
        InvalidInput::error(format!("pxfa config file {}: {at}: {what}", path.display()))
    };
    let doc: Value = if text.trim().is_empty() {
        Value::Object(serde_json::Map::new())
    } else {
        serde_saphyr::from_str(text).map_err(|e| {
            InvalidInput::error(format!(
                "pxfa config file {} is not valid YAML ({})",
                path.display(),
                yaml_error_place(&e.to_string())
            ))
        })?
    };
    let Value::Object(top) = doc else {
        return Err(bad(
            "the document",
            "expected a mapping (current-profile, profiles)",
        ));
    };
    let mut current = None;
    let mut profiles = BTreeMap::new();
    let dir = path.parent().unwrap_or(Path::new("."));
    for (key, value) in top {
        match key.as_str() {
            CURRENT => match value {
                Value::String(s) => current = Some(s),
                Value::Null => {}
                _ => return Err(bad(CURRENT, "expected a profile name")),
            },
            PROFILES => match value {
                Value::Object(m) => {
                    for (name, body) in m {
                        check_name(&name).map_err(|w| bad(&format!("{PROFILES}.{name}"), &w))?;
                        let p = profile(&name, body, dir, env)
                            .map_err(|(k, w)| bad(&format!("{PROFILES}.{name}{k}"), &w))?;
                        profiles.insert(name, p);
                    }
                }
                Value::Null => {}
                _ => return Err(bad(PROFILES, "expected a mapping of profile names")),
            },
            other => {
                return Err(bad(
                    other,
                    "unknown key (the file has current-profile and profiles)",
                ));
            }
        }
    }
    Ok(Config {
        path: path.to_path_buf(),
        current,
        profiles,
        text: text.to_string(),
    })
}

/// The position part of a YAML parser's message (`line 3 column 7`), without the
/// rest: the message may quote the text around the fault.
fn yaml_error_place(msg: &str) -> String {
    msg.find("line ")
        .map(|at| {
            msg[at..]
                .split(|c: char| c != ' ' && !c.is_ascii_alphanumeric())
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "position unknown".to_string())
}

/// A profile name: letters, digits, `-`, `_` and `.`, as a flag value and a shell
/// word take it whole.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok {
        Ok(())
    } else {
        Err("a profile name is 1 to 63 letters, digits, '-', '_' or '.'".to_string())
    }
}

/// One profile's mapping; the error is the key path under the profile and why.
fn profile(
    name: &str,
    body: Value,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Profile, (String, String)> {
    let Value::Object(m) = body else {
        return Err((String::new(), "expected a mapping of array options".into()));
    };
    let mut p = Profile::default();
    for (key, value) in m {
        let at = format!(".{key}");
        let lower = key.to_ascii_lowercase();
        if let Some((_, instead)) = SECRET_KEYS.iter().find(|(k, _)| *k == lower) {
            return Err((
                at,
                format!(
                    "a secret is never kept in the config file: put it in a file readable by you \
                     alone (chmod 600) and give its path as {instead}"
                ),
            ));
        }
        let Some((_, kind)) = FIELDS.iter().find(|(k, _)| *k == key) else {
            let keys: Vec<&str> = FIELDS.iter().map(|(k, _)| *k).collect();
            return Err((
                at,
                format!("unknown key; a profile has {}", keys.join(", ")),
            ));
        };
        set_field(&mut p, &key, *kind, value, dir, env).map_err(|w| (at, w))?;
    }
    if p.array.is_none() && p.pure_json.is_none() {
        return Err((
            String::new(),
            format!("profile `{name}` names no array: give array or pure-json"),
        ));
    }
    Ok(p)
}

fn set_field(
    p: &mut Profile,
    key: &str,
    kind: Kind,
    value: Value,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), String> {
    if let Kind::Bool = kind {
        p.insecure = value.as_bool().ok_or("expected true or false")?;
        return Ok(());
    }
    let text = match value {
        Value::String(s) if !s.trim().is_empty() => s.trim().to_string(),
        _ => return Err("expected a non-empty string".into()),
    };
    if looks_like_token(&text) {
        return Err(
            "this looks like an API token, not a path or name: a token is never kept in the \
             config file (put it in a file and give its path as api-token-file)"
                .into(),
        );
    }
    let path = || resolve_path(&text, dir, env);
    match key {
        "array" => p.array = Some(text.clone()),
        "array-name" => p.array_name = Some(text.clone()),
        "client-id" => p.client_id = Some(text.clone()),
        "key-id" => p.key_id = Some(text.clone()),
        "issuer" => p.issuer = Some(text.clone()),
        "username" => p.username = Some(text.clone()),
        "api-token-file" => p.api_token_file = Some(path()?),
        "pure-json" => p.pure_json = Some(path()?),
        "ca-file" => p.ca_file = Some(path()?),
        "private-key-file" => p.private_key_file = Some(path()?),
        "private-key-password-file" => p.private_key_password_file = Some(path()?),
        "sim-state" => p.sim_state = Some(path()?),
        _ => unreachable!("FIELDS lists {key}"),
    }
    Ok(())
}

/// A path as the file gives it: `~/` is the home folder, a relative path is the
/// config file's folder's (as kubeconfig paths are).
fn resolve_path(
    text: &str,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, String> {
    if let Some(rest) = text.strip_prefix("~/") {
        let home = env("HOME")
            .filter(|h| !h.is_empty())
            .ok_or("starts with ~/ but HOME is not set")?;
        return Ok(Path::new(&home).join(rest));
    }
    let p = Path::new(text);
    Ok(if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    })
}

/// What an array's API token looks like: a UUID, or a JWT (`eyJ...` with two dots).
fn looks_like_token(s: &str) -> bool {
    let uuid = s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        });
    let jwt = s.starts_with("eyJ") && s.matches('.').count() == 2 && !s.contains('/');
    uuid || jwt
}

/// Which profile applies and why, when any: a name given (`--profile`,
/// `PXFA_PROFILE`) is explicit; else the file's `current-profile` applies when no
/// flag or `PUREFA_URL` names an array.
fn wanted(g: &GlobalArgs, env: &dyn Fn(&str) -> Option<String>) -> Option<(String, bool)> {
    let named = g
        .profile
        .clone()
        .or_else(|| env(ENV_PROFILE))
        .filter(|n| !n.trim().is_empty());
    if let Some(n) = named {
        return Some((n.trim().to_string(), true));
    }
    let array_given = g.array.is_some()
        || g.pure_json.is_some()
        || env(crate::config::ENV_URL).is_some_and(|u| !u.trim().is_empty());
    (!array_given).then(|| (String::new(), false))
}

/// Applies the profile in effect to `g`: each array option not given on the command
/// line takes the profile's value, and `g.profile_in_effect` records it. Nothing
/// happens when no profile applies; a profile that is named but cannot be used is
/// bad input (exit 2) before anything is sent.
pub(crate) fn apply(
    g: &mut GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    warn: &mut dyn FnMut(String),
) -> Result<()> {
    let Some((name, explicit)) = wanted(g, env) else {
        return Ok(());
    };
    if explicit && (g.array.is_some() || g.pure_json.is_some()) {
        return Err(InvalidInput::error(format!(
            "--array/--pure-json and profile `{name}` both name an array; use one (the \
             profile's credential would go to the other array)"
        )));
    }
    let Some(path) = config_path(env) else {
        return match explicit {
            true => Err(InvalidInput::error(format!(
                "profile `{name}`: no config file (set {ENV_CONFIG}, XDG_CONFIG_HOME or HOME)"
            ))),
            false => Ok(()),
        };
    };
    let config = match load(&path, env)? {
        Some(c) => c,
        None if explicit => {
            return Err(InvalidInput::error(format!(
                "profile `{name}`: the pxfa config file {} does not exist",
                path.display()
            )));
        }
        None => return Ok(()),
    };
    let name = match (explicit, &config.current) {
        (true, _) => name,
        (false, Some(c)) => c.clone(),
        (false, None) => return Ok(()),
    };
    let profile = config.get(&name, explicit)?;
    let shadowed: Vec<&str> = ARRAY_ENV
        .iter()
        .copied()
        .filter(|k| env(k).is_some_and(|v| !v.trim().is_empty()))
        .collect();
    if !shadowed.is_empty() {
        warn(format!(
            "profile `{name}` is in effect: {} not read (the profile names the array and its \
             credential)",
            shadowed.join(", ")
        ));
    }
    merge(g, profile);
    g.profile_in_effect = Some(ProfileInEffect {
        name,
        file: config.path.clone(),
    });
    Ok(())
}

impl Config {
    /// The profile `name`; an unknown one is bad input naming the file, the name and
    /// the names it has.
    pub(crate) fn get(&self, name: &str, explicit: bool) -> Result<&Profile> {
        self.profiles.get(name).ok_or_else(|| {
            let has: Vec<&str> = self.profiles.keys().map(String::as_str).collect();
            let whence = if explicit {
                String::new()
            } else {
                format!(" ({CURRENT})")
            };
            InvalidInput::error(format!(
                "no profile `{name}`{whence} in the pxfa config file {} (it has: {})",
                self.path.display(),
                if has.is_empty() {
                    "none".to_string()
                } else {
                    has.join(", ")
                }
            ))
        })
    }

    /// The array a profile names, for people: the address (credentials in it
    /// redacted), else the pure.json and its entry.
    pub(crate) fn array_shown(p: &Profile) -> String {
        match (&p.array, &p.pure_json, &p.array_name) {
            (Some(a), _, _) => redact_addr(a),
            (None, Some(j), Some(n)) => format!("{} ({n})", j.display()),
            (None, Some(j), None) => j.display().to_string(),
            (None, None, _) => "-".to_string(),
        }
    }
}

/// Each option the command line left unset takes the profile's value.
fn merge(g: &mut GlobalArgs, p: &Profile) {
    fn fill<T: Clone>(slot: &mut Option<T>, from: &Option<T>) {
        if slot.is_none() {
            slot.clone_from(from);
        }
    }
    fill(&mut g.array, &p.array);
    fill(&mut g.api_token_file, &p.api_token_file);
    fill(&mut g.pure_json, &p.pure_json);
    fill(&mut g.array_name, &p.array_name);
    fill(&mut g.ca_file, &p.ca_file);
    g.insecure |= p.insecure;
    fill(&mut g.client_id, &p.client_id);
    fill(&mut g.key_id, &p.key_id);
    fill(&mut g.issuer, &p.issuer);
    fill(&mut g.username, &p.username);
    fill(&mut g.private_key_file, &p.private_key_file);
    fill(
        &mut g.private_key_password_file,
        &p.private_key_password_file,
    );
    fill(&mut g.sim_state, &p.sim_state);
}

/// The config file's text with `current-profile` set to `name`: the line replaced
/// where the file has one at the top level, else added first, so that comments and
/// the rest of the file stay as the admin wrote them.
pub(crate) fn with_current(text: &str, name: &str) -> String {
    let line = format!("{CURRENT}: {name}");
    let mut out = Vec::new();
    let mut replaced = false;
    for l in text.lines() {
        if !replaced && l.starts_with(&format!("{CURRENT}:")) {
            out.push(line.clone());
            replaced = true;
        } else {
            out.push(l.to_string());
        }
    }
    if !replaced {
        out.insert(0, line);
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    const UUID: &str = "6f1e0c6a-9d3f-4d10-8bbf-2b8c3e1f0a11";

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    fn global(args: &[&str]) -> GlobalArgs {
        let mut argv = vec!["pxfa"];
        argv.extend_from_slice(args);
        argv.extend_from_slice(&["volume", "list"]);
        crate::args::Cli::try_parse_from(argv).unwrap().global
    }

    const FILE: &str = "\
# my arrays
current-profile: lab
profiles:
  lab:
    array: sim
    sim-state: lab.json
  prod-east:
    array: https://fa-east.example.com
    api-token-file: ~/tokens/east
    ca-file: /etc/pki/east.pem
  dr:
    pure-json: pure.json
    array-name: fa-dr.example:443
";

    fn parsed(text: &str) -> Result<Config> {
        parse(
            Path::new("/cfg/pxfa/config.yaml"),
            text,
            &env_of(&[("HOME", "/home/a")]),
        )
    }

    #[test]
    fn a_file_reads_with_paths_resolved() {
        let c = parsed(FILE).unwrap();
        assert_eq!(c.current.as_deref(), Some("lab"));
        assert_eq!(
            c.profiles["lab"].sim_state.as_deref(),
            Some(Path::new("/cfg/pxfa/lab.json"))
        );
        let east = &c.profiles["prod-east"];
        assert_eq!(
            east.api_token_file.as_deref(),
            Some(Path::new("/home/a/tokens/east"))
        );
        assert_eq!(
            east.ca_file.as_deref(),
            Some(Path::new("/etc/pki/east.pem"))
        );
        assert_eq!(
            Config::array_shown(&c.profiles["dr"]),
            "/cfg/pxfa/pure.json (fa-dr.example:443)"
        );
    }

    #[test]
    fn bad_files_name_the_key_and_never_the_value() {
        let cases: &[(&str, &str)] = &[
            (
                "profiles:\n  p:\n    api-token: SECRETVALUE\n",
                "profiles.p.api-token: a secret is never kept",
            ),
            (
                "profiles:\n  p:\n    array: sim\n    insecure: SECRETVALUE\n",
                "profiles.p.insecure: expected true or false",
            ),
            (
                "profiles:\n  p:\n    array: sim\n    colour: SECRETVALUE\n",
                "profiles.p.colour: unknown key",
            ),
            (
                "profiles:\n  p:\n    username: x\n",
                "profiles.p: profile `p` names no array",
            ),
            (
                "profiles:\n  \"a b\":\n    array: sim\n",
                "profiles.a b: a profile name is",
            ),
            (
                "current-profile: [SECRETVALUE]\n",
                "current-profile: expected a profile name",
            ),
            ("contexts: {}\n", "contexts: unknown key"),
            ("profiles: SECRETVALUE\n", "profiles: expected a mapping"),
            (
                "profiles:\n  p:\n    array: [SECRETVALUE\n",
                "is not valid YAML",
            ),
        ];
        for (text, want) in cases {
            let e = parsed(text).unwrap_err();
            let shown = format!("{e:#}");
            assert!(shown.contains(want), "{text}: {shown}");
            assert!(shown.contains("/cfg/pxfa/config.yaml"), "{shown}");
            assert!(!shown.contains("SECRETVALUE"), "{shown}");
            assert_eq!(crate::exit::code_for(&e), 2, "{shown}");
        }
        let text = format!("profiles:\n  p:\n    array: sim\n    api-token-file: {UUID}\n");
        let e = format!("{:#}", parsed(&text).unwrap_err());
        assert!(
            e.contains("looks like an API token") && !e.contains(UUID),
            "{e}"
        );
    }

    #[test]
    fn precedence_flag_then_named_profile_then_env_then_current() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("config.yaml");
        std::fs::write(&cfg, FILE).unwrap();
        let cfgs: &'static str = Box::leak(cfg.to_str().unwrap().to_string().into_boxed_str());
        let run = |args: &[&str], env: &dyn Fn(&str) -> Option<String>| {
            let mut g = global(args);
            let mut warns = Vec::new();
            apply(&mut g, env, &mut |w| warns.push(w)).map(|()| (g, warns))
        };
        let none: &'static [(&str, &str)] =
            Box::leak(Box::new([(ENV_CONFIG, cfgs), ("HOME", "/h")]));
        // current-profile when nothing names an array.
        let (g, w) = run(&[], &env_of(none)).unwrap();
        assert_eq!(g.array.as_deref(), Some("sim"));
        assert_eq!(g.profile_in_effect.unwrap().name, "lab");
        assert!(w.is_empty(), "{w:?}");
        // A flag naming an array: no profile.
        let (g, _) = run(&["--array", "fa9"], &env_of(none)).unwrap();
        assert!(g.profile_in_effect.is_none());
        assert!(g.sim_state.is_none());
        // PUREFA_URL beats current-profile.
        let url: &'static [(&str, &str)] = Box::leak(Box::new([
            (ENV_CONFIG, cfgs),
            ("PUREFA_URL", "fa9"),
            ("HOME", "/h"),
        ]));
        let (g, _) = run(&[], &env_of(url)).unwrap();
        assert!(g.profile_in_effect.is_none() && g.array.is_none());
        // A named profile beats PUREFA_URL, with a warning naming it.
        let (g, w) = run(&["--profile", "prod-east"], &env_of(url)).unwrap();
        assert_eq!(g.array.as_deref(), Some("https://fa-east.example.com"));
        assert!(w[0].contains("PUREFA_URL not read"), "{w:?}");
        // PXFA_PROFILE names one too; --profile beats it.
        let named: &'static [(&str, &str)] = Box::leak(Box::new([
            (ENV_CONFIG, cfgs),
            (ENV_PROFILE, "dr"),
            ("HOME", "/h"),
        ]));
        let (g, _) = run(&[], &env_of(named)).unwrap();
        assert_eq!(g.array_name.as_deref(), Some("fa-dr.example:443"));
        let (g, _) = run(&["--profile", "lab"], &env_of(named)).unwrap();
        assert_eq!(g.array.as_deref(), Some("sim"));
        // A flag replaces one field of the profile.
        let (g, _) = run(
            &["--profile", "prod-east", "--ca-file", "/mine.pem"],
            &env_of(none),
        )
        .unwrap();
        assert_eq!(g.ca_file.as_deref(), Some(Path::new("/mine.pem")));
        assert!(g.api_token_file.unwrap().ends_with("tokens/east"));
        // --array beside a named profile: refused.
        let e = run(&["--profile", "lab", "--array", "fa9"], &env_of(none)).unwrap_err();
        assert_eq!(crate::exit::code_for(&e), 2);
        assert!(e.to_string().contains("both name an array"), "{e}");
        // An unknown name: exit 2 naming it and the names there are.
        let e = run(&["--profile", "prod-west"], &env_of(none)).unwrap_err();
        assert_eq!(crate::exit::code_for(&e), 2);
        let e = e.to_string();
        assert!(
            e.contains("no profile `prod-west`") && e.contains("dr, lab, prod-east"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_file_is_an_error_only_when_a_profile_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing: &'static str = Box::leak(
            dir.path()
                .join("nope.yaml")
                .to_str()
                .unwrap()
                .to_string()
                .into_boxed_str(),
        );
        let env: &'static [(&str, &str)] = Box::leak(Box::new([(ENV_CONFIG, missing)]));
        let mut g = global(&[]);
        apply(&mut g, &env_of(env), &mut |_| {}).unwrap();
        assert!(g.profile_in_effect.is_none());
        let mut g = global(&["--profile", "lab"]);
        let e = apply(&mut g, &env_of(env), &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert_eq!(crate::exit::code_for(&e), 2);
    }

    #[test]
    fn the_default_path_follows_xdg_then_home() {
        assert_eq!(
            config_path(&env_of(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/pxfa/config.yaml"))
        );
        assert_eq!(
            config_path(&env_of(&[("HOME", "/h")])),
            Some(PathBuf::from("/h/.config/pxfa/config.yaml"))
        );
        assert_eq!(
            config_path(&env_of(&[(ENV_CONFIG, "/c.yaml"), ("HOME", "/h")])),
            Some(PathBuf::from("/c.yaml"))
        );
        assert_eq!(config_path(&env_of(&[])), None);
    }

    #[test]
    fn setting_the_current_profile_keeps_the_rest_of_the_file() {
        let out = with_current(FILE, "prod-east");
        assert!(
            out.starts_with("# my arrays\ncurrent-profile: prod-east\n"),
            "{out}"
        );
        assert_eq!(out.matches("current-profile").count(), 1);
        assert_eq!(out.lines().count(), FILE.lines().count());
        let out = with_current("profiles:\n  a:\n    array: sim\n", "a");
        assert!(out.starts_with("current-profile: a\nprofiles:"), "{out}");
        let c = parsed(&out).unwrap();
        assert_eq!(c.current.as_deref(), Some("a"));
    }
}
