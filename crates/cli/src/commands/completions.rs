//! Shell completion: the static scripts (`pxfa completions bash|zsh|fish`: commands
//! and options) and the dynamic completion of object names (`source <(COMPLETE=bash
//! pxfa)`: also volume, host, host group, pod and tenant names, asked of the array).
//!
//! Dynamic completion is clap_complete's `CompleteEnv` (the `unstable-dynamic`
//! feature; its shell glue may change between clap_complete releases, so the
//! registration is sourced anew at each shell start, never written to a file). The
//! shell runs `COMPLETE=SHELL pxfa -- pxfa WORDS...` at each TAB; the names come from
//! the array the config selects for a command without flags: `PXFA_PROFILE`, else
//! `PUREFA_URL`/`PUREFA_API`, else the config file's `current-profile`
//! ([`crate::profiles`]); the words typed so far are not read for it. Completion must
//! never spoil a shell: the array is given [`BOUND`] in all, no retries, nothing is
//! ever asked on the terminal, and any failure (no array, a bad token file, a slow
//! array) completes no names and prints nothing.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::{Arg, Command, CommandFactory, Parser};
use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};
use flasharray::{FlashArray, ListParams};

use crate::args::{Cli, CompletionsArgs};
use crate::config::{self, Target};
use crate::exit::Outcome;
use crate::session::{load_sim_warning, rest_client};

/// The environment variable the shell glue sets (clap_complete's default).
pub(crate) const COMPLETE_VAR: &str = "COMPLETE";

/// The longest the array is given to name objects, login included.
pub(crate) const BOUND: Duration = Duration::from_secs(2);

/// The most names one completion lists.
const MAX_NAMES: usize = 1000;

/// Writes the completion script for the shell to stdout. The script is generated into
/// memory first: the generator panics on write errors, and a closed pipe
/// (`pxfa completions bash | head`) must not be a crash.
pub(crate) fn run(a: &CompletionsArgs) -> Result<Outcome> {
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "pxfa", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(Outcome::Success)
}

/// What [`complete_from_env`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Completion {
    /// `COMPLETE` is not set: run the command line.
    NotAsked,
    /// The registration or the candidates were written: exit 0.
    Done,
    /// It failed (a closed pipe, a panic): exit 1, printing nothing.
    Failed,
}

/// Answers the shell when `COMPLETE` is set; `main` calls it before anything else.
pub(crate) fn complete_from_env() -> Completion {
    // Only a shell clap_complete knows is a request: a `COMPLETE=1` exported for
    // something else must not turn every pxfa command into a silent exit.
    let asked = std::env::var_os(COMPLETE_VAR).is_some_and(|v| {
        let shell = std::path::Path::new(&v)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned());
        shell.is_some_and(|s| {
            clap_complete::env::Shells::builtins()
                .completer(&s)
                .is_some()
        })
    });
    if !asked {
        return Completion::NotAsked;
    }
    // Not even a panic's message may reach the shell.
    std::panic::set_hook(Box::new(|_| {}));
    let cwd = std::env::current_dir().ok();
    let done = std::panic::catch_unwind(|| {
        clap_complete::CompleteEnv::with_factory(command)
            .try_complete(std::env::args_os(), cwd.as_deref())
    });
    match done {
        Ok(Ok(true)) => Completion::Done,
        Ok(Ok(false)) => Completion::NotAsked,
        Ok(Err(_)) | Err(_) => Completion::Failed,
    }
}

/// The command line with name candidates on the arguments that take object names.
fn command() -> Command {
    with_names(crate::args::help::command(), None)
}

/// Objects whose names are completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Volume,
    Host,
    HostGroup,
    Pod,
    /// `NAMESPACE/NAME` of the tenants the array's pxfa.io tags name.
    Tenant,
}

/// The object a top-level resource command is about.
fn family(name: &str) -> Option<Kind> {
    match name {
        "volume" => Some(Kind::Volume),
        "host" => Some(Kind::Host),
        "hostgroup" => Some(Kind::HostGroup),
        "pod" => Some(Kind::Pod),
        _ => None,
    }
}

/// Which names an argument of subcommand `sub` (of `family`) takes: options by
/// their name everywhere (`--host`, `--hostgroup`, `--tenant`), positionals by their
/// value name (`VOLUME`, `HOST`) or as the family's existing objects (`NAME`, not
/// for `create` nor a rename's new name).
fn kind_of(family: Option<Kind>, sub: &str, a: &Arg) -> Option<Kind> {
    match a.get_long() {
        Some("tenant") => return Some(Kind::Tenant),
        Some("host") => return Some(Kind::Host),
        Some("hostgroup") => return Some(Kind::HostGroup),
        Some(_) => return None,
        None if !a.is_positional() => return None,
        None => {}
    }
    let value = a
        .get_value_names()
        .and_then(|v| v.first())
        .map(|v| v.as_str());
    match value {
        Some("VOLUME") => Some(Kind::Volume),
        Some("HOST") => Some(Kind::Host),
        _ if sub == "create" || a.get_id() == "new_name" => None,
        Some("NAME") | None => family,
        Some(_) => None,
    }
}

/// `cmd` and its subcommands with [`ArgValueCandidates`] where [`kind_of`] says.
fn with_names(cmd: Command, family_of_parent: Option<Kind>) -> Command {
    let name = cmd.get_name().to_owned();
    let fam = family_of_parent.or_else(|| family(&name));
    let named: Vec<(String, Kind)> = cmd
        .get_arguments()
        .filter_map(|a| kind_of(fam, &name, a).map(|k| (a.get_id().to_string(), k)))
        .collect();
    // `mut_arg` puts the argument last: positionals get their index first, so that
    // their order stays the parser's.
    let positionals: Vec<String> = if named.is_empty() {
        Vec::new()
    } else {
        cmd.get_positionals()
            .map(|a| a.get_id().to_string())
            .collect()
    };
    let cmd = positionals
        .into_iter()
        .enumerate()
        .fold(cmd, |cmd, (i, id)| cmd.mut_arg(id, |a| a.index(i + 1)));
    let mut cmd = named.into_iter().fold(cmd, |cmd, (id, kind)| {
        cmd.mut_arg(id, |a| {
            a.add(ArgValueCandidates::new(move || candidates(kind)))
        })
    });
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    for sub in subs {
        cmd = cmd.mut_subcommand(sub, |c| with_names(c, fam));
    }
    cmd
}

/// The names of `kind` on the selected array, sorted; none on any failure.
fn candidates(kind: Kind) -> Vec<CompletionCandidate> {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    let env = |k: &str| std::env::var(k).ok();
    let names = rt.block_on(async {
        tokio::time::timeout(BOUND, names(kind, &env))
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default()
    });
    // A resolver thread still waiting on DNS is left behind, not waited for.
    rt.shutdown_background();
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// The array the config selects for a command without array flags: the profile,
/// the `PUREFA_*` environment, no retries, a short connect timeout, no warnings.
fn selected_array(env: &dyn Fn(&str) -> Option<String>) -> Result<Arc<dyn FlashArray>> {
    let mut g = Cli::try_parse_from(["pxfa", "array", "info"])?.global;
    g.retries = 0;
    g.connect_timeout = BOUND / 2;
    crate::profiles::apply(&mut g, env, &mut |_| {})?;
    Ok(match config::resolve(&g, env, &mut |_| {})? {
        Target::Sim => {
            let state = g.sim_state.as_deref().map(|p| (p, "--sim-state"));
            Arc::new(load_sim_warning(state, g.sim_seed.seed(), &mut |_| {})?)
        }
        Target::Rest(t) => Arc::new(rest_client(t, &g)?),
    })
}

/// Lists the names (a REST session is logged out again, within the same bound).
pub(crate) async fn names(kind: Kind, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<String>> {
    let array = selected_array(env)?;
    let listed = list(array.as_ref(), kind).await;
    let _ = array.close().await;
    let mut names = listed?;
    names.sort();
    names.dedup();
    names.truncate(MAX_NAMES);
    Ok(names)
}

async fn list(array: &dyn FlashArray, kind: Kind) -> Result<Vec<String>> {
    let params = ListParams {
        limit: Some(MAX_NAMES),
        ..ListParams::default()
    };
    Ok(match kind {
        Kind::Volume => array
            .list_volumes(&params)
            .await?
            .into_iter()
            .filter(|v| !v.destroyed)
            .map(|v| v.name)
            .collect(),
        Kind::Host => array
            .list_hosts(&params)
            .await?
            .into_iter()
            .map(|h| h.name)
            .collect(),
        Kind::HostGroup => array
            .list_host_groups(&params)
            .await?
            .into_iter()
            .map(|h| h.name)
            .collect(),
        Kind::Pod => array
            .list_pods(&params)
            .await?
            .into_iter()
            .map(|p| p.name)
            .collect(),
        Kind::Tenant => px_topology::read_usage(array)
            .await?
            .rows
            .into_iter()
            .filter_map(|r| match r.holder {
                px_topology::UsageHolder::Tenant { namespace, name } => {
                    Some(format!("{namespace}/{name}"))
                }
                _ => None,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds_at(path: &[&str]) -> Vec<(String, Kind)> {
        let mut cmd = command();
        cmd.build();
        let mut c = &cmd;
        for p in path {
            c = c.find_subcommand(p).unwrap();
        }
        let fam = family(path[0]);
        c.get_arguments()
            .filter_map(|a| {
                kind_of(fam, path[path.len() - 1], a).map(|k| (a.get_id().to_string(), k))
            })
            .collect()
    }

    #[test]
    fn object_arguments_get_names_and_new_names_do_not() {
        assert_eq!(
            kinds_at(&["volume", "get"]),
            [("name".to_string(), Kind::Volume)]
        );
        assert!(kinds_at(&["volume", "create"]).is_empty());
        let list = kinds_at(&["volume", "list"]);
        assert!(
            list.contains(&("tenant".to_string(), Kind::Tenant)),
            "{list:?}"
        );
        assert!(
            list.contains(&("names".to_string(), Kind::Volume)),
            "{list:?}"
        );
        assert_eq!(
            kinds_at(&["volume", "rename"]),
            [("name".to_string(), Kind::Volume)]
        );
        let add = kinds_at(&["hostgroup", "add-host"]);
        assert!(
            add.contains(&("hosts".to_string(), Kind::Host))
                || add.iter().any(|(_, k)| *k == Kind::Host),
            "{add:?}"
        );
        let conn = kinds_at(&["connection", "create"]);
        assert!(conn.iter().any(|(_, k)| *k == Kind::Volume), "{conn:?}");
        assert!(conn.iter().any(|(_, k)| *k == Kind::Host), "{conn:?}");
        assert!(conn.iter().any(|(_, k)| *k == Kind::HostGroup), "{conn:?}");
        assert!(kinds_at(&["usage"]).contains(&("tenant".to_string(), Kind::Tenant)));
        assert!(kinds_at(&["pod", "create"]).is_empty());
        assert_eq!(kinds_at(&["pod", "destroy"]).len(), 1);
    }
}
