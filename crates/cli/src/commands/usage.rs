//! `pxfa usage`: per tenant the volumes' provisioned and used bytes, the pods'
//! quota and the share of the array's capacity; per worker the drive sizes. Read
//! only: one listing of volumes, pods, `pxfa.io` tags and the array's space.

use anyhow::{Context, Result};
use px_topology::orphans::TenantRef;
use px_topology::{UsageReport, UsageRow, WorkerUsage, read_usage};

use crate::args::{GlobalArgs, OutputFormat, UsageArgs};
use crate::exit::{InvalidInput, Outcome};
use crate::output::{Printer, human_size, human_size_opt, unsupported};
use crate::session::Session;

/// Runs `usage`.
pub(crate) async fn run(a: &UsageArgs, g: &GlobalArgs, p: &Printer) -> Result<Outcome> {
    if matches!(
        p.format,
        OutputFormat::Name | OutputFormat::Mermaid | OutputFormat::Dot
    ) {
        return Err(unsupported(p.format));
    }
    let filter = a.tenant.as_deref().map(tenant_filter).transpose()?;
    let session = Session::open(g, p, &[])?;
    let read = read_usage(session.array.as_ref()).await;
    let closed = session.close().await;
    let mut report = read.context("cannot read the array's usage")?;
    closed?;
    if let Some(f) = &filter {
        report.rows.retain(|r| r.holder.is_named_by(f));
        report.workers.retain(|w| w.holder.is_named_by(f));
        if report.rows.is_empty() {
            p.warn(format!(
                "no volume or pod on the array is tagged for tenant {f}"
            ));
        }
    }
    if a.workers {
        p.emit_rows(&report, &WORKER_HEADERS, |raw| worker_rows(&report, raw))?;
    } else {
        p.emit_rows(&report, &TENANT_HEADERS, |raw| tenant_rows(&report, raw))?;
    }
    if matches!(p.format, OutputFormat::Table | OutputFormat::Wide) {
        p.info(array_line(&report));
    }
    Ok(Outcome::Success)
}

/// `--tenant`: `NAMESPACE/NAME` or a bare name, as `orphans` reads tenant names.
pub(crate) fn tenant_filter(s: &str) -> Result<TenantRef> {
    let r = TenantRef::parse(s.trim());
    let bad_ns = s.contains('/') && r.namespace.is_none();
    if r.name.is_empty() || r.name.contains('/') || bad_ns {
        return Err(InvalidInput::error(format!(
            "--tenant {s:?}: expected NAMESPACE/NAME or NAME"
        )));
    }
    Ok(r)
}

const TENANT_HEADERS: [&str; 8] = [
    "TENANT",
    "VOLUMES",
    "PROVISIONED",
    "USED",
    "QUOTA",
    "SHARE",
    "PODS",
    "VIA POD",
];

fn size(raw: bool, bytes: u64) -> String {
    if raw {
        bytes.to_string()
    } else {
        human_size(bytes)
    }
}

fn tenant_rows(r: &UsageReport, raw: bool) -> Vec<Vec<String>> {
    r.rows.iter().map(|row| tenant_row(row, raw)).collect()
}

fn tenant_row(row: &UsageRow, raw: bool) -> Vec<String> {
    let quota = if raw {
        row.quota.map(|q| q.to_string()).unwrap_or_default()
    } else {
        human_size_opt(row.quota)
    };
    let share = if raw {
        format!("{:.2}", row.share_of_capacity)
    } else {
        format!("{:.1}%", row.share_of_capacity)
    };
    let pods = if raw || !row.pods.is_empty() {
        row.pods.join(" ")
    } else {
        "-".to_string()
    };
    vec![
        row.holder.to_string(),
        row.volumes.to_string(),
        size(raw, row.provisioned),
        size(raw, row.used),
        quota,
        share,
        pods,
        row.volumes_through_pod.to_string(),
    ]
}

const WORKER_HEADERS: [&str; 6] = ["TENANT", "WORKER", "DISK", "VOLUME", "SIZE", "USED"];

fn worker_rows(r: &UsageReport, raw: bool) -> Vec<Vec<String>> {
    r.workers.iter().flat_map(|w| drive_rows(w, raw)).collect()
}

fn drive_rows(w: &WorkerUsage, raw: bool) -> Vec<Vec<String>> {
    w.drives
        .iter()
        .map(|d| {
            vec![
                w.tenant.clone(),
                w.worker.to_string(),
                d.disk.clone(),
                d.volume.clone(),
                size(raw, d.provisioned),
                size(raw, d.used),
            ]
        })
        .collect()
}

/// `array fa-prod-01: 100 TiB usable, 73.5 TiB used (73.5%)` under the table.
fn array_line(r: &UsageReport) -> String {
    let used = match r.array_used {
        Some(u) if r.capacity > 0 => format!(
            ", {} used ({:.1}%)",
            human_size(u),
            u as f64 * 100.0 / r.capacity as f64
        ),
        Some(u) => format!(", {} used", human_size(u)),
        None => String::new(),
    };
    format!("array {}: {} usable{used}", r.array, human_size(r.capacity))
}

#[cfg(test)]
mod tests {
    #[test]
    fn tenant_filters_read_as_orphans_reads_them() {
        let r = super::tenant_filter("team-b/blue").unwrap();
        assert_eq!(
            (r.namespace.as_deref(), r.name.as_str()),
            (Some("team-b"), "blue")
        );
        assert_eq!(super::tenant_filter("blue").unwrap().namespace, None);
        for bad in ["", "a/b/c", "/blue", "team-b/"] {
            let e = super::tenant_filter(bad).unwrap_err();
            assert_eq!(crate::exit::code_for(&e), 2, "{bad}");
        }
    }
}
