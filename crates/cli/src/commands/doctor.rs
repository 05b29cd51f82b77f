//! `doctor -f SPEC`: every prerequisite of the tenant's bundle, checked on the array,
//! the management cluster and (with `--tenant-kubeconfig`) the tenant cluster, read
//! only. The reads are px-cluster's (`site`: the clusters) and px-topology's
//! (`site::read_array`: the array, through the pipeline's observe and plan); the
//! checks and the report are px-topology's (`site`); this is options and output.

use anyhow::Result;
use px_topology::Tenant;
use px_topology::site::{self, Check, CheckStatus, Layer, ManagementView, SiteFacts, SiteReport};
use secrecy::SecretString;

use super::kube_clients::connect;
use crate::args::{DoctorArgs, GlobalArgs, OutputFormat};
use crate::config::{self, Target};
use crate::exit::Outcome;
use crate::output::{Printer, inert_cell, to_json, to_yaml};
use crate::session::Session;

/// `doctor`.
pub(crate) async fn run(a: &DoctorArgs, g: &GlobalArgs, p: &Printer) -> Result<Outcome> {
    let t = Tenant::load(&a.file)?;
    // Every input is checked before the first read: kubeconfigs, contexts, the array.
    let bounds = g.kube_bounds(true);
    let management = connect(
        "--kubeconfig",
        a.kubeconfig.as_deref(),
        a.context.as_deref(),
        bounds,
    )
    .await?;
    let tenant = connect(
        "--tenant-kubeconfig",
        a.tenant_kubeconfig.as_deref(),
        a.tenant_context.as_deref(),
        bounds,
    )
    .await?;
    let target = array_target(g, p)?;
    // An API client has no token to look for in the clusters: its key never leaves
    // this host, and its access tokens live minutes.
    let admin_token = match &target {
        Some(Target::Rest(r)) if r.api_client.is_none() => Some(r.token.clone()),
        _ => None,
    };
    let mut checks = match target {
        Some(_) => array_checks(&t, g, p).await?,
        None => vec![Check {
            layer: Layer::Array,
            name: "reachable".into(),
            status: CheckStatus::Unknown,
            read: "no array given".into(),
            found: "not checked".into(),
            fix: Some("pass --array (or PUREFA_URL, --pure-json) to check the array too".into()),
        }],
    };
    let report = clusters(&t, management, tenant, admin_token.as_ref(), &mut checks).await?;
    print(&report, p)?;
    match report.worst() {
        CheckStatus::Ok => Ok(Outcome::Success),
        CheckStatus::Warn | CheckStatus::Unknown => Ok(Outcome::Found),
        CheckStatus::Fail => Err(anyhow::anyhow!(
            "doctor: {} check(s) fail{}; see the FIX column",
            report.summary.fail,
            if report.credentials.iter().any(|c| c.problem.is_some()) {
                ", and a credential is where it does not belong"
            } else {
                ""
            }
        )),
    }
}

/// The array to check: `None` when none is configured at all (the array layer is
/// then unknown); a configuration that is given but wrong is bad input (exit 2).
fn array_target(g: &GlobalArgs, p: &Printer) -> Result<Option<Target>> {
    let env = |k: &str| std::env::var(k).ok();
    let configured = g.array.is_some()
        || g.pure_json.is_some()
        || env(config::ENV_URL).is_some_and(|u| !u.trim().is_empty());
    if !configured {
        return Ok(None);
    }
    Ok(Some(config::resolve(g, &env, &mut |w| p.warn(w))?))
}

/// The management and tenant layers, the facts, the contradictions, and the report.
async fn clusters(
    t: &Tenant,
    management: Option<px_cluster::Client>,
    tenant: Option<px_cluster::Client>,
    admin_token: Option<&SecretString>,
    checks: &mut Vec<Check>,
) -> Result<SiteReport> {
    let spec = &t.spec;
    let (view, facts) = match &management {
        Some(c) => {
            let view = px_cluster::read_management(c, spec, admin_token).await;
            let facts = SiteFacts::from_management(&view, &spec.hcp_namespace());
            (view, facts)
        }
        None => (
            ManagementView::unread("no --kubeconfig (or $KUBECONFIG)"),
            SiteFacts::default(),
        ),
    };
    let mut credentials = Vec::new();
    if management.is_some() {
        let (c, creds) = site::management_checks(spec, &view);
        checks.extend(c);
        credentials.extend(creds);
    } else {
        checks.push(Check {
            layer: Layer::Management,
            name: "kubeconfig".into(),
            status: CheckStatus::Unknown,
            read: "--kubeconfig, $KUBECONFIG".into(),
            found: "no management kubeconfig".into(),
            fix: Some(
                "pass --kubeconfig (or set $KUBECONFIG) to check the management cluster".into(),
            ),
        });
    }
    checks.extend(contradictions(spec, &facts));
    if let Some(c) = &tenant {
        let manifests = t.manifests()?;
        let view = px_cluster::read_tenant(c, spec, &manifests, admin_token).await;
        let (c, creds) = site::tenant_checks(spec, &view);
        checks.extend(c);
        credentials.extend(creds);
    }
    Ok(SiteReport::new(
        spec.tenant_name(),
        facts,
        std::mem::take(checks),
        credentials,
    ))
}

/// One failed check per spec field the site contradicts (`apply --kubeconfig` refuses
/// the same spec, exit 2).
fn contradictions(spec: &px_topology::TenantStorage, facts: &SiteFacts) -> Vec<Check> {
    match site::resolve(spec, facts) {
        Ok(_) => Vec::new(),
        Err(e) => {
            e.0.into_iter()
                .map(|c| Check {
                    layer: Layer::Management,
                    name: "spec-vs-site".into(),
                    status: CheckStatus::Fail,
                    read: c.field.to_string(),
                    found: format!("the spec says {}, the site says {}", c.stated, c.fact),
                    fix: Some(format!(
                        "correct {} to what the site says (or change the site)",
                        c.field
                    )),
                })
                .collect()
        }
    }
}

/// The array layer: `px_topology::site::read_array` (the pipeline's observe and
/// plan, read only, the array's own details and the management nodes' hosts).
async fn array_checks(t: &Tenant, g: &GlobalArgs, p: &Printer) -> Result<Vec<Check>> {
    let session = Session::open(g, p, &t.token_users())?;
    let view = site::read_array(t, session.array.as_ref()).await;
    let closed = session.close().await;
    closed?;
    Ok(site::array_checks(&view))
}

fn print(report: &SiteReport, p: &Printer) -> Result<()> {
    match p.format {
        OutputFormat::Json => p.stdout(&to_json(report)?),
        OutputFormat::Yaml => p.stdout(&to_yaml(report)?),
        OutputFormat::Table | OutputFormat::Wide => p.stdout(&table(report, p)),
        f => Err(crate::output::unsupported(f)),
    }
}

fn table(r: &SiteReport, p: &Printer) -> String {
    let mut t = p.table(&["LAYER", "CHECK", "STATUS", "FOUND", "READ", "FIX"]);
    for c in &r.checks {
        let status = match c.status {
            CheckStatus::Ok => p.paint_out("32", "ok"),
            CheckStatus::Warn | CheckStatus::Unknown => p.paint_out("33", c.status.as_str()),
            CheckStatus::Fail => p.paint_out("31;1", "fail"),
        };
        let layer = match c.layer {
            Layer::Array => "array",
            Layer::Management => "management",
            Layer::Tenant => "tenant",
        };
        // What the clusters said (names, phases, messages) is shown escaped.
        t.add_row(vec![
            layer.to_string(),
            inert_cell(&c.name),
            status,
            inert_cell(&c.found),
            inert_cell(&c.read),
            inert_cell(c.fix.as_deref().unwrap_or_default()),
        ]);
    }
    let mut out = t.to_string();
    for c in &r.credentials {
        out.push_str(&format!(
            "\ncredential {}: {}",
            inert_cell(&c.holder),
            inert_cell(&c.kind)
        ));
        if let Some(pr) = &c.problem {
            out.push_str(&format!(" -- {}", p.paint_out("31;1", &inert_cell(pr))));
        }
    }
    let s = r.summary;
    out.push_str(&format!(
        "\n{} ok, {} warn, {} unknown, {} fail",
        s.ok, s.warn, s.unknown, s.fail
    ));
    out
}
