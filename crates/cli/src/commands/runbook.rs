//! `runbook`: the day-2 steps for one tenant, from the spec alone (no array, no
//! cluster): a thin adapter over [`px_topology::runbook`].

use anyhow::Result;
use px_topology::Tenant;
use px_topology::runbook::{self, Operation};

use crate::args::RunbookArgs;
use crate::exit::{InvalidInput, Outcome};
use crate::output::Printer;

/// `runbook OPERATION -f SPEC [--worker N]... [--edited SPEC]`: the steps as text, or `-o json|yaml`
/// as a `kind: Runbook` document. An operation that does not apply to the spec's
/// mode, or a worker index it cannot take, exits 2 with the reason.
pub(crate) fn run(a: &RunbookArgs, p: &Printer) -> Result<Outcome> {
    let op: Operation = a.operation.parse().map_err(InvalidInput::error)?;
    let t = Tenant::load(&a.file)?;
    let spec = a.file.display().to_string();
    let edited = a.edited.as_deref().map(Tenant::load).transpose()?;
    let book = runbook::build_edited(&t, &spec, op, &a.workers, edited.as_ref())
        .map_err(|e| InvalidInput::error(format!("pxfa runbook {}: {e}", op.as_str())))?;
    p.emit_text(&book, &runbook::to_text(&book))?;
    Ok(Outcome::Success)
}
