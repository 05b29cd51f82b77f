//! `orphans`: a thin adapter over [`px_topology::orphans`] (the rules, the scan and
//! the cleanup) and [`px_cluster::orphans`] (the management cluster's reads and
//! deletes, and the TenantStorage objects).

use std::path::PathBuf;

use anyhow::Result;
use px_cluster::ClusterOrphans;
use px_cluster::orphans::tenant_storage_id;
use px_topology::Tenant;
use px_topology::orphans::{
    self, CleanupReport, ClusterReader, Evidence, Known, OrphanReport, ScanOptions, Target,
};

use super::pipeline::load_tenant;
use crate::args::{GlobalArgs, OrphansArgs};
use crate::confirm::confirm;
use crate::exit::{InvalidInput, Outcome};
use crate::output::{Printer, human_ms};
use crate::session::Session;

/// Every spec file the `-f` arguments name: files as given, folders by their
/// `.yaml`/`.yml` files (not recursive), in name order.
fn spec_files(given: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in given {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let mut inside: Vec<PathBuf> = std::fs::read_dir(p)
            .map_err(|e| InvalidInput::error(format!("-f {}: cannot list: {e}", p.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|f| {
                f.is_file()
                    && f.extension()
                        .and_then(|e| e.to_str())
                        .is_some_and(|e| e == "yaml" || e == "yml")
            })
            .collect();
        if inside.is_empty() {
            return Err(InvalidInput::error(format!(
                "-f {}: no .yaml or .yml tenant spec in the folder",
                p.display()
            )));
        }
        inside.sort();
        out.extend(inside);
    }
    Ok(out)
}

/// The tenants that exist: the specs (every one must load), or the TenantStorage
/// objects (one that does not load still exists, by identity); and the evidence
/// for the others: the cluster's TenantStorage objects when it is read, else the
/// user's statement (--all-tenants-given).
async fn known_tenants(a: &OrphansArgs, cluster: Option<&px_cluster::Client>) -> Result<Known> {
    if a.files.is_empty() && cluster.is_none() {
        return Err(InvalidInput::error(
            "pxfa orphans: name the tenants that exist: -f SPEC|DIR (repeatable), or --kubeconfig for the TenantStorage objects",
        ));
    }
    let mut known = Known::default();
    for f in spec_files(&a.files)? {
        known.tenants.push(load_tenant(&f)?);
    }
    let Some(client) = cluster else {
        known.evidence = Evidence::Specs {
            complete: a.all_tenants_given,
        };
        return Ok(known);
    };
    let objects = px_cluster::orphans::tenant_storages(client).await?;
    known.evidence = Evidence::Cluster {
        storages: objects.iter().map(tenant_storage_id).collect(),
    };
    if a.files.is_empty() {
        for obj in objects {
            match px_controller::load_tenant(&obj) {
                Ok(t) => known.tenants.push(t),
                Err(why) => known.unloaded.push((tenant_storage_id(&obj), why)),
            }
        }
    }
    Ok(known)
}

/// The management kubeconfig: the flag, or for a scan alone `$KUBECONFIG` (not when
/// the user stated the specs are every tenant: that scan reads the array alone).
fn kubeconfig(a: &OrphansArgs) -> Option<PathBuf> {
    a.kubeconfig.clone().or_else(|| {
        (!a.cleanup && !a.all_tenants_given)
            .then(|| std::env::var_os("KUBECONFIG"))
            .flatten()
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
}

/// The scan's clock (this machine's) and the drive grace.
fn scan_options(a: &OrphansArgs) -> ScanOptions {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    ScanOptions {
        now_ms,
        drive_grace_ms: u64::try_from(a.drive_grace.as_millis()).unwrap_or(u64::MAX),
    }
}

/// `orphans [-f SPEC|DIR]... [--kubeconfig FILE] [--cleanup]`.
pub(crate) async fn run(a: &OrphansArgs, g: &GlobalArgs, p: &Printer) -> Result<Outcome> {
    // Loaded before anything is sent: a kubeconfig that does not load exits 2.
    let path = kubeconfig(a);
    let client = super::kube_clients::connect(
        "--kubeconfig",
        path.as_deref(),
        a.context.as_deref(),
        g.kube_bounds(true),
    )
    .await?;
    let known = known_tenants(a, client.as_ref()).await?;
    let users: Vec<String> = known.tenants.iter().flat_map(Tenant::token_users).collect();
    let session = Session::open(g, p, &users)?;
    let reader = client.map(ClusterOrphans::new);
    let cluster = reader.as_ref().map(|r| r as &dyn ClusterReader);
    let result = scan_and_clean(a, g, p, &session, cluster, &known).await;
    let closed = session.close().await;
    let outcome = result?;
    closed?;
    Ok(outcome)
}

async fn scan_and_clean(
    a: &OrphansArgs,
    g: &GlobalArgs,
    p: &Printer,
    session: &Session,
    cluster: Option<&dyn ClusterReader>,
    known: &Known,
) -> Result<Outcome> {
    let array = session.array.as_ref();
    let report = orphans::scan(array, cluster, known, &scan_options(a)).await?;
    p.emit_text(&report, &report_text(&report, &session.label))?;
    if !a.cleanup || report.is_empty() {
        return Ok(Outcome::Success);
    }
    let what = cleanup_summary(&report, &session.label, cluster.is_some());
    if g.yes {
        p.info(format!("{what}: confirmed by --yes"));
    }
    confirm(g.yes, &format!("{what}; proceed"))?;
    let done = orphans::cleanup(array, cluster, &report).await;
    p.emit_text(&done, &cleanup_text(&done))?;
    Ok(if done.is_success() {
        Outcome::Success
    } else {
        Outcome::PartialFailure
    })
}

/// What the cleanup will do, as asked: each tenant to be destroyed as gone with its
/// object count, then the other orphans (each listed above with its age and
/// evidence).
fn cleanup_summary(r: &OrphanReport, array: &str, cluster: bool) -> String {
    let mut gone: std::collections::BTreeMap<&str, usize> = Default::default();
    for o in &r.orphans {
        if let Target::GoneTenant { tenant } | Target::Realm { tenant, .. } = &o.cleanup {
            *gone.entry(tenant.as_str()).or_default() += 1;
        }
    }
    let tenants: Vec<String> = gone
        .iter()
        .map(|(t, n)| format!("tenant {t} ({n} object(s))"))
        .collect();
    let others = r.orphans.len() - gone.values().sum::<usize>();
    let mut what = Vec::new();
    if !tenants.is_empty() {
        what.push(format!(
            "soft-destroy every object of {} as gone",
            tenants.join(", ")
        ));
    }
    if others > 0 {
        what.push(format!("clean up {others} other orphan(s) listed above"));
    }
    format!(
        "on {array}{}: {} (array volumes and pods soft-destroyed, never eradicated; {}; hosts and connections deleted; Kubernetes objects deleted or detached)",
        if cluster {
            " and the management cluster"
        } else {
            ""
        },
        what.join(", and "),
        recoverable(r)
    )
}

/// How long soft-destroyed objects stay recoverable, as the array says.
fn recoverable(r: &OrphanReport) -> String {
    let delay = r
        .safe_mode
        .eradication_delay_ms
        .map_or("the array's eradication delay".to_string(), human_ms);
    if r.safe_mode.enabled {
        format!("SafeMode is on: recoverable for {delay}, then the array eradicates them")
    } else {
        format!("recoverable for {delay}")
    }
}

/// The report for people: one block per orphan with its evidence, then what is
/// waiting for eradication and what was not checked.
fn report_text(r: &OrphanReport, array: &str) -> String {
    let mut out = vec![format!(
        "Tenants that exist: {}",
        if r.tenants.is_empty() {
            "(none)".to_string()
        } else {
            r.tenants.join(", ")
        }
    )];
    if r.orphans.is_empty() {
        out.push(format!("No orphans on {array}{}.", checked_scope(r)));
    } else {
        out.push(format!(
            "{} orphan(s) on {array}{}:",
            r.orphans.len(),
            checked_scope(r)
        ));
    }
    for o in &r.orphans {
        out.push(format!(
            "  {:<24} {}{}{}",
            o.kind.as_str(),
            o.object,
            o.tenant
                .as_deref()
                .map(|t| format!("  (tenant {t})"))
                .unwrap_or_default(),
            o.age_ms
                .map(|ms| format!("  age {}", human_ms(ms)))
                .unwrap_or_default()
        ));
        out.push(format!("  {:<24} {}", "", o.evidence));
    }
    for u in &r.unaccounted {
        out.push(format!(
            "Not accounted for, kept (no evidence it is gone): tenant {}, {} object(s): {}",
            u.tenant,
            u.objects.len(),
            u.objects.join(", ")
        ));
        out.push(format!("  {}", u.evidence));
    }
    if !r.pending_eradication.is_empty() {
        out.push(format!(
            "Destroyed, waiting for eradication by the array (not orphans; {}):",
            recoverable(r)
        ));
        for e in &r.pending_eradication {
            out.push(format!(
                "  {}{}",
                e.object,
                e.time_remaining_ms
                    .map(|ms| format!(", eradicated in {}", human_ms(ms)))
                    .unwrap_or_default()
            ));
        }
    }
    for n in &r.not_checked {
        out.push(format!("Not checked: {}: {}", n.kind.as_str(), n.why));
    }
    out.join("\n")
}

fn checked_scope(r: &OrphanReport) -> &'static str {
    if r.not_checked.is_empty() {
        " and the management cluster"
    } else {
        ""
    }
}

fn cleanup_text(r: &CleanupReport) -> String {
    let ok = r.items.iter().filter(|i| i.ok).count();
    let mut out = vec![format!(
        "Cleaned up {ok} of {} orphan(s); {} failed.",
        r.items.len(),
        r.items.len() - ok
    )];
    for i in &r.items {
        out.push(format!(
            "  {} {}: {}",
            if i.ok { "ok" } else { "!!" },
            i.object,
            i.outcome
        ));
    }
    out.join("\n")
}
