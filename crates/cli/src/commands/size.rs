//! `size`: the Portworx pool sizing, line by line, from the spec alone or (with
//! `--on-array`) against the drives in use and the array's space.

use anyhow::{Context, Result};
use px_topology::{ArraySpaceInfo, Tenant, read_drives_in_use};

use super::pipeline::{load_tenant, warn_offline};
use crate::args::{GlobalArgs, SizeArgs};
use crate::exit::{InvalidInput, Outcome};
use crate::output::Printer;
use crate::session::Session;

/// `size`: the sizing explained, from the spec alone, or with `--on-array` against
/// the drives in use and the array's space (reads only).
pub(crate) async fn size(a: &SizeArgs, g: &GlobalArgs, p: &Printer) -> Result<Outcome> {
    if !a.on_array {
        warn_offline("size", g, p);
    }
    // Against the array the tenant's identity picks its drives (see `load_tenant`).
    let t = if a.on_array {
        load_tenant(&a.file)?
    } else {
        Tenant::load(&a.file)?
    };
    let sizing = if a.on_array {
        sized_on_array(&t, g, p).await?
    } else {
        t.sizing
    };
    let mut lines = sizing.explain();
    lines.extend(capacity_bars(&sizing));
    p.emit_text(&sizing, &lines.join("\n"))?;
    Ok(Outcome::Success)
}

/// The sizing's proportions as bars for people (text output only; JSON has the
/// numbers): the drives' share of the pod quota, usable space of raw space, and —
/// when the array's space is known (`--on-array`) — the array filled as if the
/// tenant wrote every byte it provisions.
fn capacity_bars(s: &px_topology::Sizing) -> Vec<String> {
    use crate::output::capacity_bar;
    let mut lines = Vec::new();
    if s.pod_quota.as_u64() > 0 {
        lines.push(format!(
            "quota in use      = {} drives {} of pod quota {}",
            capacity_bar(s.total_provisioned.as_u64(), s.pod_quota.as_u64()),
            s.total_provisioned,
            s.pod_quota
        ));
    }
    if s.raw_capacity.as_u64() > 0 && s.effective_usable.as_u64() > 0 {
        lines.push(format!(
            "usable of raw     = {} {} usable of {} raw (replication {})",
            capacity_bar(s.effective_usable.as_u64(), s.raw_capacity.as_u64()),
            s.effective_usable,
            s.raw_capacity,
            s.replication
        ));
    }
    if let Some(h) = &s.array {
        let cap = h.array.capacity.as_u64();
        let after = h
            .array
            .used
            .as_u64()
            .saturating_add(s.total_provisioned.as_u64());
        lines.push(format!(
            "array {:<11} = {} used {} + tenant {} of {}",
            h.array.name,
            capacity_bar(after, cap),
            h.array.used,
            s.total_provisioned,
            h.array.capacity
        ));
    }
    lines
}

/// The tenant's sizing against the array: its space and the drives in use.
async fn sized_on_array(t: &Tenant, g: &GlobalArgs, p: &Printer) -> Result<px_topology::Sizing> {
    let session = Session::open(g, p, &t.token_users())?;
    let array = session.array.as_ref();
    let (in_use, space) = tokio::join!(
        read_drives_in_use(array, &t.desired.tenant),
        array.get_array_space()
    );
    session.close().await?;
    let in_use =
        in_use.with_context(|| format!("cannot read the drives of tenant {}", t.desired.tenant))?;
    let space = space.context("cannot read the array's space")?;
    let fresh = px_topology::size(&t.spec, Some(ArraySpaceInfo::from(&space)))
        .map_err(|e| InvalidInput::error(e.to_string()))?;
    Ok(px_topology::keep_drives_in_use(&t.spec, fresh, &in_use))
}
