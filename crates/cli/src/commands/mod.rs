//! One module per command area; [`run`] dispatches.
//!
//! Every command validates its input with the library types before opening the
//! array, so that an invalid name or size exits 2 with nothing sent.

pub(crate) mod array;
pub(crate) mod cluster;
pub(crate) mod cluster_notices;
pub(crate) mod cluster_preview;
pub(crate) mod completions;
pub(crate) mod connection;
pub(crate) mod controller;
pub(crate) mod demo;
pub(crate) mod doctor;
pub(crate) mod drives;
pub(crate) mod host;
pub(crate) mod hostgroup;
pub(crate) mod kube_clients;
pub(crate) mod man;
pub(crate) mod orphans;
pub(crate) mod pipeline;
pub(crate) mod pod;
pub(crate) mod profiles;
pub(crate) mod render;
pub(crate) mod rotate_file;
pub(crate) mod runbook;
pub(crate) mod sim;
pub(crate) mod size;
pub(crate) mod tenant;
pub(crate) mod token;
pub(crate) mod token_delivery;
pub(crate) mod usage;
pub(crate) mod volume;

use anyhow::Result;
use flasharray::{HostGroupName, HostName, PodName, VolumeName};
use px_topology::Cancel;

use crate::args::{Cli, Command, ControllerCmd, ListArgs, ResourceCmd, SimCmd, TokenCmd};
use crate::exit::{InvalidInput, Outcome};
use crate::output::Printer;
use crate::profiles::apply as apply_profile;
use crate::session::Session;

/// What a resource command gets: the open array, the output, and `--yes`.
pub(crate) struct Ctx<'a> {
    /// The array.
    pub(crate) session: &'a Session,
    /// Output.
    pub(crate) printer: &'a Printer,
    /// `--yes` was given.
    pub(crate) yes: bool,
}

impl Ctx<'_> {
    pub(crate) fn array(&self) -> &dyn flasharray::FlashArray {
        self.session.array.as_ref()
    }
}

/// Runs the parsed command line. Ctrl-C ends every command but `sim serve` (which
/// shuts its server down itself) with exit 130; see [`interruptible`].
pub(crate) async fn run(mut cli: Cli, printer: &Printer) -> Result<Outcome> {
    if reaches_array(&cli.command) {
        let env = |k: &str| std::env::var(k).ok();
        apply_profile(&mut cli.global, &env, &mut |w| printer.warn(w))?;
    }
    if let Command::Sim(SimCmd::Serve(a)) = &cli.command {
        return sim::serve(a, &cli.global, printer).await;
    }
    // apply and destroy stop starting calls at the first Ctrl-C and finish the ones
    // in flight; every other command is simply ended.
    let graceful = matches!(cli.command, Command::Apply(_) | Command::Destroy(_));
    let cancel = Cancel::new();
    interruptible(
        dispatch(cli, printer, &cancel),
        printer,
        graceful.then_some(&cancel),
    )
    .await
}

/// The commands that open an array through the array options, and so take a
/// profile's (`render`, `lint`, `size` without `--on-array`, `demo`, `sim serve` and
/// the controller never do; `sim serve`'s token file is the one it serves).
fn reaches_array(cmd: &Command) -> bool {
    match cmd {
        Command::Resource(_)
        | Command::Plan(_)
        | Command::Apply(_)
        | Command::Destroy(_)
        | Command::Claim(_)
        | Command::Status(_)
        | Command::Doctor(_)
        | Command::Orphans(_)
        | Command::Usage(_) => true,
        Command::Size(a) => a.on_array,
        Command::Render(_)
        | Command::Lint(_)
        | Command::Runbook(_)
        | Command::Crd
        | Command::Demo(_)
        | Command::Sim(_)
        | Command::Controller(_)
        | Command::Config(_)
        | Command::Man(_)
        | Command::Completions(_) => false,
    }
}

async fn ctrl_c() {
    if tokio::signal::ctrl_c().await.is_err() {
        // No signal handler: the command simply runs to its end.
        std::future::pending::<()>().await;
    }
}

/// Runs `command` until it ends or Ctrl-C arrives. With `cancel`, the first Ctrl-C
/// raises it (the command starts no more array calls, lets the ones in flight finish
/// and ends by itself, exit 130) and a second one ends it at once. Ending a command
/// drops its future: the array keeps the writes that finished (an embedded simulated
/// array's session saves them to `--sim-state` as it is dropped), and the next apply
/// continues from what it observes.
async fn interruptible(
    command: impl std::future::Future<Output = Result<Outcome>>,
    printer: &Printer,
    cancel: Option<&Cancel>,
) -> Result<Outcome> {
    let mut command = Box::pin(command);
    tokio::select! {
        r = &mut command => return r,
        () = ctrl_c() => {}
    }
    if let Some(cancel) = cancel {
        cancel.cancel();
        printer.warn(
            "interrupting: no new calls are started, the ones in flight finish (Ctrl-C again to stop at once)",
        );
        tokio::select! {
            r = &mut command => return r,
            () = ctrl_c() => {}
        }
    }
    drop(command);
    printer.warn(
        "interrupted: the changes that finished are kept; run the same command again to continue",
    );
    Ok(Outcome::Interrupted)
}

async fn dispatch(cli: Cli, printer: &Printer, cancel: &Cancel) -> Result<Outcome> {
    let g = &cli.global;
    match cli.command {
        Command::Completions(a) => completions::run(&a),
        Command::Man(a) => man::run(&a, printer),
        Command::Config(c) => profiles::run(&c, printer),
        Command::Sim(SimCmd::Serve(a)) => sim::serve(&a, g, printer).await,
        Command::Controller(ControllerCmd::Run(a)) => controller::run(&a, printer).await,
        Command::Render(a) => render::render(&a, g, printer),
        Command::Lint(a) => tenant::lint(&a, g, printer),
        Command::Size(a) => size::size(&a, g, printer).await,
        Command::Plan(a) => tenant::plan(&a, g, printer).await,
        Command::Apply(a) => tenant::apply(&a, g, printer, cancel).await,
        Command::Destroy(a) => tenant::destroy(&a, g, printer, cancel).await,
        Command::Claim(a) => tenant::claim(&a, g, printer).await,
        Command::Status(a) => cluster::status(&a, g, printer).await,
        Command::Crd => cluster::crd(printer),
        Command::Doctor(a) => doctor::run(&a, g, printer).await,
        Command::Runbook(a) => runbook::run(&a, printer),
        Command::Orphans(a) => orphans::run(&a, g, printer).await,
        Command::Usage(a) => usage::run(&a, g, printer).await,
        // Rotation opens its own session (with the tenant's token users on a
        // simulated array) and a tenant cluster client.
        Command::Resource(ResourceCmd::Token(TokenCmd::Rotate(a))) => {
            cluster::token_rotate(&a, g, printer).await
        }
        Command::Demo(a) => demo::run(&a, g, printer).await,
        Command::Resource(c) => {
            let session = Session::open(g, printer, &[])?;
            let ctx = Ctx {
                session: &session,
                printer,
                yes: g.yes,
            };
            let result = run_resource(c, &ctx).await;
            // Close (log out, save simulator state) whatever happened: a failed
            // command may still have changed the array.
            let closed = session.close().await;
            let outcome = result?;
            closed?;
            Ok(outcome)
        }
    }
}

async fn run_resource(cmd: ResourceCmd, ctx: &Ctx<'_>) -> Result<Outcome> {
    match cmd {
        ResourceCmd::Volume(c) => volume::run(c, ctx).await,
        ResourceCmd::Host(c) => host::run(c, ctx).await,
        ResourceCmd::HostGroup(c) => hostgroup::run(c, ctx).await,
        ResourceCmd::Connection(c) => connection::run(c, ctx).await,
        ResourceCmd::Pod(c) => pod::run(c, ctx).await,
        ResourceCmd::Token(c) => token::run(c, ctx).await,
        ResourceCmd::Array(c) => array::run(c, ctx).await,
    }
}

/// Validated volume names; the first invalid one is reported (exit 2).
pub(crate) fn volume_names(names: &[String]) -> Result<Vec<VolumeName>> {
    let v = names
        .iter()
        .map(|n| VolumeName::new(n.as_str()))
        .collect::<Result<Vec<_>, _>>()?;
    no_duplicates("volume", v.iter().map(|n| n.key()))?;
    Ok(v)
}

/// Validated host names.
pub(crate) fn host_names(names: &[String]) -> Result<Vec<HostName>> {
    let v = names
        .iter()
        .map(|n| HostName::new(n.as_str()))
        .collect::<Result<Vec<_>, _>>()?;
    no_duplicates("host", v.iter().map(|n| n.key()))?;
    Ok(v)
}

/// Validated host group names.
pub(crate) fn host_group_names(names: &[String]) -> Result<Vec<HostGroupName>> {
    let v = names
        .iter()
        .map(|n| HostGroupName::new(n.as_str()))
        .collect::<Result<Vec<_>, _>>()?;
    no_duplicates("host group", v.iter().map(|n| n.key()))?;
    Ok(v)
}

/// Validated pod names.
pub(crate) fn pod_names(names: &[String]) -> Result<Vec<PodName>> {
    let v = names
        .iter()
        .map(|n| PodName::new(n.as_str()))
        .collect::<Result<Vec<_>, _>>()?;
    no_duplicates("pod", v.iter().map(|n| n.key()))?;
    Ok(v)
}

/// Names are case-insensitive on the array: `v1 V1` would be the same object twice.
fn no_duplicates(kind: &str, keys: impl Iterator<Item = String>) -> Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    for k in keys {
        if !seen.insert(k.clone()) {
            return Err(InvalidInput::error(format!(
                "{kind} name {k:?} is given twice (names are case-insensitive)"
            )));
        }
    }
    Ok(())
}

/// List parameters from the command line; a `--filter` that does not parse is
/// refused here (exit 2), before the listing is sent.
pub(crate) fn list_params(l: &ListArgs, destroyed: Option<bool>) -> Result<flasharray::ListParams> {
    if let Some(f) = &l.filter {
        check_filter(f)?;
    }
    Ok(flasharray::ListParams {
        names: l.names.clone(),
        filter: l.filter.clone(),
        sort: l.sort.clone(),
        limit: l.limit,
        destroyed,
        ..Default::default()
    })
}

/// Checks a `--filter` against the array's filter grammar, as the simulator reads it
/// (`flasharray_mock::listing::parse_filter`). Functions the simulator does not
/// evaluate (`tags(...)`) are left for the array to judge: the grammar refuses them
/// only because the simulator cannot answer them.
fn check_filter(filter: &str) -> Result<()> {
    let Err(e) = flasharray_mock::listing::parse_filter(Some(filter)) else {
        return Ok(());
    };
    let why = e
        .as_api()
        .map_or_else(|| e.to_string(), |a| a.message().to_string());
    if why.contains("() is not supported") {
        return Ok(());
    }
    Err(InvalidInput::error(format!(
        "--filter {filter:?}: {why} Nothing was sent."
    )))
}

/// `--destroyed` / `--live` as the array's tri-state.
pub(crate) fn destroyed_filter(d: &crate::args::DestroyedArgs) -> Option<bool> {
    match (d.destroyed, d.live) {
        (true, _) => Some(true),
        (false, true) => Some(false),
        (false, false) => None,
    }
}

/// `3 volumes (v1, v2, v3)` for confirmations and messages.
pub(crate) fn describe(kind: &str, names: &[String]) -> String {
    let plural = if names.len() == 1 { "" } else { "s" };
    format!("{} {kind}{plural} ({})", names.len(), names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_validated_and_unique() {
        assert!(volume_names(&["v1".into(), "pod1::v2".into()]).is_ok());
        let e = volume_names(&["v1".into(), "V1".into()]).unwrap_err();
        assert_eq!(crate::exit::code_for(&e), 2);
        let e = host_names(&["bad name".into()]).unwrap_err();
        assert_eq!(crate::exit::code_for(&e), 2);
        assert!(pod_names(&["-p".into()]).is_err());
        assert!(host_group_names(&["g".repeat(64)]).is_err());
    }

    #[test]
    fn describe_counts() {
        assert_eq!(describe("volume", &["a".into()]), "1 volume (a)");
        assert_eq!(
            describe("host", &["a".into(), "b".into()]),
            "2 hosts (a, b)"
        );
    }
}
