//! The cluster side's notices on stderr: one printer for what
//! [`px_cluster::TenantClusters`] and the drive tagging report while they work, used
//! by `apply`, `plan --kubeconfig` and the drive step alike.

use std::sync::Mutex;

use px_cluster::Notice;
use px_cluster::tenant_clusters::Notices;
use px_topology::ProgressEvent;

use crate::output::{ChangeProgress, Printer};

/// Shows the cluster side's notices ([`px_cluster::TenantClusters`],
/// [`px_cluster::tenant_clusters::tag_bound_drives`]) on stderr, the drive
/// tagging's progress included.
pub(crate) fn notices(p: &Printer) -> Notices<'_> {
    let progress: Mutex<Option<ChangeProgress>> = Mutex::new(None);
    Box::new(move |n| show_notice(p, &progress, n))
}

fn show_notice(p: &Printer, progress: &Mutex<Option<ChangeProgress>>, n: Notice<'_>) {
    match n {
        Notice::GuestInterfaceReplaced { specified, found } => p.warn(format!(
            "the worker VMs name the storage interface {found}, not {specified} (spec.network.guestInterface); using {found}"
        )),
        Notice::GuestInterfaceUnknown { specified, error } => p.warn(format!(
            "cannot discover the guest storage interface, using {specified}: {}",
            chain(error)
        )),
        Notice::NotApplied(s) => p.warn(format!("not applied: {s}")),
        Notice::ClaimsUnbound(w) => {
            let names: Vec<String> = w.unbound.iter().map(ToString::to_string).collect();
            p.warn(format!(
                "{} drive claim(s) not bound after {}: {}; their drives stay pending and the next `pxfa apply --kubeconfig` tags them",
                w.unbound.len(),
                humantime::format_duration(std::time::Duration::from_secs(w.waited.as_secs())),
                names.join(", ")
            ));
        }
        Notice::BindingsUnreadable(e) => p.warn(format!("cannot read the drive claims: {e}")),
        Notice::ClaimsUnreadable(e) => p.warn(format!(
            "cannot read which drive claims are bound, their drives stay pending: {e}"
        )),
        Notice::DrivesPending(n) => p.warn(format!(
            "{n} drive(s) pending: their claims are not bound yet; the next `pxfa apply` that can read them tags them"
        )),
        Notice::DrivesTagging { changes } => {
            *lock(progress) = Some(ChangeProgress::new(p, changes));
        }
        Notice::DriveProgress(ev) => {
            let last = matches!(ev, ProgressEvent::RoundFinished { round, rounds } if round == rounds);
            let mut bar = lock(progress);
            if let Some(b) = bar.as_ref() {
                b.event(ev.clone());
            }
            if last && let Some(b) = bar.take() {
                b.finish();
            }
        }
        _ => {}
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `error: cause: cause`, as anyhow's `{:#}` shows a chain.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(&format!(": {c}"));
        cause = c.source();
    }
    s
}
