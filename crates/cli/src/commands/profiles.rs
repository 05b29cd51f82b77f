//! `pxfa config get-profiles|current-profile|use-profile`: the named array profiles
//! of the pxfa config file ([`crate::profiles`]). Only `use-profile` writes, and only
//! the file's `current-profile` line.

use anyhow::Result;
use serde::Serialize;

use crate::args::ConfigCmd;
use crate::exit::{InvalidInput, Outcome};
use crate::output::{Printer, inert_cell};
use crate::profiles::{self, Config, Profile};

/// One row of `get-profiles`.
#[derive(Serialize)]
struct Row<'a> {
    name: &'a str,
    current: bool,
    #[serde(flatten)]
    profile: &'a Profile,
}

/// Runs a `config` subcommand.
pub(crate) fn run(cmd: &ConfigCmd, p: &Printer) -> Result<Outcome> {
    let env = |k: &str| std::env::var(k).ok();
    let path = profiles::config_path(&env).ok_or_else(|| {
        InvalidInput::error(format!(
            "no pxfa config file: set {}, XDG_CONFIG_HOME or HOME",
            profiles::ENV_CONFIG
        ))
    })?;
    let config = profiles::load(&path, &env)?;
    match cmd {
        ConfigCmd::GetProfiles => get_profiles(config.as_ref(), p),
        ConfigCmd::CurrentProfile => {
            let current = config.as_ref().and_then(|c| c.current.as_deref());
            let Some(name) = current else {
                return Err(anyhow::anyhow!(
                    "{} sets no current-profile (`pxfa config use-profile NAME` sets it)",
                    path.display()
                ));
            };
            p.stdout(name)?;
            Ok(Outcome::Success)
        }
        ConfigCmd::UseProfile(a) => {
            let Some(config) = config else {
                return Err(InvalidInput::error(format!(
                    "no profile `{}`: the pxfa config file {} does not exist",
                    a.name,
                    path.display()
                )));
            };
            use_profile(&config, &a.name, p)
        }
    }
}

fn get_profiles(config: Option<&Config>, p: &Printer) -> Result<Outcome> {
    let rows: Vec<Row<'_>> = config
        .map(|c| {
            c.profiles
                .iter()
                .map(|(name, profile)| Row {
                    name,
                    current: c.current.as_deref() == Some(name.as_str()),
                    profile,
                })
                .collect()
        })
        .unwrap_or_default();
    p.emit_list(
        "profile",
        &rows,
        |r| r.name.to_string(),
        || {
            let mut t = p.table(&["CURRENT", "NAME", "ARRAY", "CREDENTIAL"]);
            for r in &rows {
                t.add_row(vec![
                    if r.current { "*" } else { "" }.to_string(),
                    inert_cell(r.name),
                    inert_cell(&Config::array_shown(r.profile)),
                    inert_cell(&credential_shown(r.profile)),
                ]);
            }
            t
        },
    )?;
    Ok(Outcome::Success)
}

/// Where a profile's credential comes from, for people: a file's path, never its
/// content.
fn credential_shown(p: &Profile) -> String {
    match (&p.api_token_file, &p.client_id, &p.pure_json, &p.array) {
        (Some(f), _, _, _) => format!("api-token-file {}", f.display()),
        (None, Some(id), _, _) => format!("api client {id}"),
        (None, None, Some(_), _) => "pure.json's APIToken".to_string(),
        (None, None, None, Some(a)) if a.trim().eq_ignore_ascii_case("sim") => "-".to_string(),
        _ => "none given".to_string(),
    }
}

fn use_profile(config: &Config, name: &str, p: &Printer) -> Result<Outcome> {
    config.get(name, true)?;
    let text = profiles::with_current(&config.text, name);
    crate::secret_file::write_replacing(&config.path, text.as_bytes(), file_mode(&config.path))?;
    p.done(format!(
        "current profile: {name} ({})",
        config.path.display()
    ));
    Ok(Outcome::Success)
}

/// The file's permission bits, kept when it is rewritten (0600 when unknown).
fn file_mode(path: &std::path::Path) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = std::fs::metadata(path) {
            return m.permissions().mode() & 0o777;
        }
    }
    let _ = path;
    0o600
}
