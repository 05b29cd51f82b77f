//! The cluster commands: `apply --kubeconfig`'s output (after the array), `status`,
//! `token rotate` and `crd`. The work is in [`px_cluster`]; this is options and
//! output.

use std::path::PathBuf;

use anyhow::{Context, Result};
use async_trait::async_trait;
use flasharray::{FlashArray, RestArray};
use px_cluster::status::{Item, Layer};
use px_cluster::{
    ApplyReport, BoxError, RotateOptions, StatusDocument, StatusReport, TokenProbe, cluster_status,
    connect, rotate_token,
};
use px_topology::{Action, Kind, Plan, PlanOptions, Site, Tenant};
use secrecy::{ExposeSecret, SecretString};

use super::kube_clients::connect as kube_connect;
use super::pipeline::load_tenant;
use crate::args::{GlobalArgs, OutputFormat, StatusArgs, TokenRotateArgs};
use crate::config::{self, Target};
use crate::exit::Outcome;
use crate::graph::{Graph, Verdicts};
use crate::output::{Printer, inert_cell, to_json, to_yaml};
use crate::session::Session;

/// The clusters' part of `apply`'s output: what the apply did on them, and a
/// warning when they are not finished.
pub(crate) fn clusters_outcome(p: &Printer, report: &ApplyReport) -> Result<Outcome> {
    let text = apply_text(report);
    match p.format {
        OutputFormat::Table => p.stdout(&text)?,
        // stdout already holds the array report as one document.
        _ => p.info(&text),
    }
    if report.complete() {
        Ok(Outcome::Success)
    } else {
        p.warn(
            "the clusters are not finished (see above); fix the cause and run the same apply again: \
             it continues where this one stopped",
        );
        Ok(Outcome::PartialFailure)
    }
}

fn apply_text(r: &ApplyReport) -> String {
    let mut out = Vec::new();
    for a in &r.applied {
        out.push(format!("applied  {a}"));
    }
    for w in &r.workers {
        let mut line = format!("worker {:02} -> VM {}", w.index, w.vm);
        if !w.attached.is_empty() {
            line.push_str(&format!(", attached {}", w.attached.join(", ")));
        }
        if !w.present.is_empty() {
            line.push_str(&format!(", already had {}", w.present.join(", ")));
        }
        out.push(line);
    }
    for s in &r.skipped {
        out.push(format!("skipped  {}: {}", s.object, s.reason));
    }
    for c in &r.conflicts {
        out.push(format!(
            "CONFLICT {}: {} (re-run with --force-conflicts to take these fields over)",
            c.object, c.message
        ));
        for f in &c.fields {
            out.push(format!("           {f}"));
        }
    }
    for pnd in &r.pending {
        out.push(format!("PENDING  {}: {}", pnd.object, pnd.state));
    }
    if let Some(at) = &r.stopped_at {
        out.push(format!("stopped at {at}"));
    } else if r.complete() {
        out.push("clusters: done".to_string());
    }
    out.join("\n")
}

/// `status -f SPEC`: exit 0 when healthy, 3 when it found problems (marked `!!`).
pub(crate) async fn status(a: &StatusArgs, g: &GlobalArgs, p: &Printer) -> Result<Outcome> {
    let t = load_tenant(&a.file)?;
    // The kubeconfigs load before the array is opened: one that does not is bad
    // input (exit 2), with nothing sent anywhere.
    let bounds = g.kube_bounds(true);
    let management = kube_connect(
        "--kubeconfig",
        a.kubeconfig.as_deref(),
        a.context.as_deref(),
        bounds,
    )
    .await?;
    let tenant = kube_connect(
        "--tenant-kubeconfig",
        a.tenant_kubeconfig.as_deref(),
        a.tenant_context.as_deref(),
        bounds,
    )
    .await?;
    let session = Session::open(g, p, &t.token_users())?;
    let array = array_layer(&session, &t, management.as_ref(), a).await;
    let closed = session.close().await;
    let (array, plan) = array?;
    let mut report = StatusReport {
        layers: vec![array],
    };
    closed?;
    if let Some(management) = &management {
        let manifests = t.manifests()?;
        let clusters = cluster_status(&t.spec, &manifests, management, tenant.as_ref()).await?;
        report.layers.extend(clusters.layers);
        // The runbook steps pxfa can verify (#24): none for modes without worker drives.
        let steps =
            px_cluster::status::runbook_checks(&t.spec, &manifests, management, tenant.as_ref())
                .await?;
        if !steps.items.is_empty() {
            report.layers.push(steps);
        }
    }
    print_status(&t, &plan, &report, p)?;
    Ok(if report.healthy() {
        Outcome::Success
    } else {
        Outcome::Found
    })
}

fn print_status(t: &Tenant, plan: &Plan, report: &StatusReport, p: &Printer) -> Result<()> {
    let tenant = t.desired.tenant.to_string();
    match p.format {
        OutputFormat::Json => p.stdout(&to_json(&StatusDocument::new(&tenant, report))?)?,
        OutputFormat::Yaml => p.stdout(&to_yaml(&StatusDocument::new(&tenant, report))?)?,
        OutputFormat::Table | OutputFormat::Wide => p.stdout(&format!(
            "tenant {}\n{}",
            inert_cell(&tenant),
            status_text(report, p)
        ))?,
        OutputFormat::Mermaid | OutputFormat::Dot => {
            let manifests = t.manifests()?;
            let g = Graph::tenant(plan, &manifests, &Verdicts::Status(report));
            p.stdout(&if p.format == OutputFormat::Dot {
                g.to_dot()
            } else {
                g.to_mermaid()
            })?;
        }
        f @ (OutputFormat::Name | OutputFormat::Csv) => return Err(crate::output::unsupported(f)),
    }
    Ok(())
}

/// How a pending drive's state begins: ok (nothing anyone here can do makes its claim
/// bind; a dynamic tenant without a kubeconfig stays so), shown as `??` with why.
const PENDING_STATE: &str = "pending";

/// Whether `i` is a pending drive (see [`PENDING_STATE`]).
fn is_pending(i: &Item) -> bool {
    i.ok && i.state.starts_with(PENDING_STATE)
}

/// The array's layer of the status: the pipeline's first two stages (the drives in
/// use keep their size, as `plan` and `apply` see them), read only. With the
/// management cluster's client the drive claims are read as `plan` reads them, so a
/// drive whose claim is bound shows as a tag to add.
async fn array_layer(
    session: &Session,
    t: &Tenant,
    management: Option<&px_cluster::Client>,
    a: &StatusArgs,
) -> Result<(Layer, Plan)> {
    let locator = super::drives::locator_for(session, t, management);
    let site = Site {
        array: session.array.as_ref(),
        claims: locator.as_deref(),
        journal: None,
    };
    let (_, observed, plan) = t
        .observe(site)
        .await
        .map_err(super::pipeline::observe_error)?
        .plan(&PlanOptions::default())
        .into_parts();
    let mut items = Vec::new();
    for c in &plan.changes {
        let ok = c.action == Action::NoOp;
        let state = match c.action {
            Action::NoOp => "present, tagged, as specified".to_string(),
            Action::Retain => "retained, of a removed worker".to_string(),
            Action::Pending => {
                items.push(Item {
                    object: format!("{} {}", c.kind.label(), c.name),
                    state: format!("{PENDING_STATE}: {}", c.reason),
                    ok: true,
                    problem: None,
                });
                continue;
            }
            action => format!(
                "needs {}",
                serde_json::to_value(action)?.as_str().unwrap_or("change")
            ),
        };
        // A retained drive is released by the steps its reason names, not by a
        // plain apply.
        let problem = match c.action {
            _ if ok => None,
            Action::Retain => Some(c.reason.clone()),
            _ => Some(format!("{}: run pxfa apply", c.reason)),
        };
        let mut item = Item {
            object: format!("{} {}", c.kind.label(), c.name),
            state,
            ok,
            problem,
        };
        if ok && c.kind == Kind::ApiToken {
            token_expiry(&mut item, observed.token_expires_at, a);
        }
        items.push(item);
    }
    for b in &plan.conflicts {
        items.push(Item {
            object: format!("{} {}", b.kind.label(), b.name),
            state: "conflict".to_string(),
            ok: false,
            problem: Some(b.reason.clone()),
        });
    }
    items.extend(unclaimed_items(&observed, t, &items));
    Ok((
        Layer {
            name: format!("array ({})", session.label),
            items,
        },
        plan,
    ))
}

/// The tenant's token as it is, with its expiry: a problem when it expires within
/// `--token-expiry-warning` (or has expired), naming the rotation that replaces it
/// without a gap. Times are the array's (`expires_at`) against this machine's clock.
fn token_expiry(item: &mut Item, expires_at: Option<u64>, a: &StatusArgs) {
    let Some(expires) = expires_at else {
        item.state = "present, never expires".to_string();
        return;
    };
    let now = u64::try_from(jiff::Timestamp::now().as_millisecond()).unwrap_or(0);
    let within = u64::try_from(a.token_expiry_warning.as_millis()).unwrap_or(u64::MAX);
    let when = crate::output::local_time(expires);
    if expires > now.saturating_add(within) {
        item.state = format!(
            "present, expires {when} (in {})",
            crate::output::human_ms(expires - now)
        );
        return;
    }
    item.ok = false;
    item.state = if expires <= now {
        format!("EXPIRED {when}")
    } else {
        format!(
            "expires {when} (in {})",
            crate::output::human_ms(expires - now)
        )
    };
    item.problem = Some(format!(
        "rotate it before Portworx loses the array: `pxfa token rotate -f {} --tenant-kubeconfig FILE` \
         (or `--out DIR` through the px-pure-secret file); the new token lives spec.array.tokenLifetime \
         (default 365d). This warning starts {} before expiry (--token-expiry-warning)",
        a.file.display(),
        humantime::format_duration(a.token_expiry_warning)
    ));
}

/// What an earlier pxfa tagged for this tenant's name without a namespace and no
/// item names yet (the plan's conflicts name the desired objects): left alone until
/// claimed, and the status says so.
fn unclaimed_items(observed: &px_topology::Observed, t: &Tenant, listed: &[Item]) -> Vec<Item> {
    use flasharray::TagResource as R;
    let kinds = [
        (R::Pod, "pod"),
        (R::HostGroup, "host group"),
        (R::Host, "host"),
        (R::Volume, "volume"),
    ];
    let mut out = Vec::new();
    for (kind, label) in kinds {
        for name in observed.tags.unclaimed_by(kind, &t.desired.tenant) {
            let object = format!("{label} {name}");
            if listed
                .iter()
                .any(|i| i.object.eq_ignore_ascii_case(&object))
            {
                continue;
            }
            out.push(Item {
                object,
                state: "unclaimed".to_string(),
                ok: false,
                problem: Some(format!(
                    "tagged by an earlier pxfa for a tenant named {:?} with no namespace: left alone until claimed for one namespace (pxfa claim -f SPEC)",
                    t.desired.tenant.name
                )),
            });
        }
    }
    out
}

fn status_text(r: &StatusReport, p: &Printer) -> String {
    let mut out = Vec::new();
    // Names, states and messages come from the array and the clusters: escaped
    // as doctor's cells are, so none can drive the terminal or break a line.
    for l in &r.layers {
        out.push(format!("{}:", inert_cell(&l.name)));
        if l.items.is_empty() {
            out.push("  (nothing)".to_string());
        }
        for i in &l.items {
            let mark = if is_pending(i) {
                p.paint_out("33", "?? ")
            } else if i.ok {
                p.paint_out("32", "ok ")
            } else {
                p.paint_out("31;1", "!! ")
            };
            out.push(format!(
                "  {mark}{}: {}",
                inert_cell(&i.object),
                inert_cell(&i.state)
            ));
            if let Some(pr) = &i.problem {
                out.push(format!("      {}", inert_cell(pr)));
            }
        }
    }
    let pending = r
        .layers
        .iter()
        .flat_map(|l| &l.items)
        .filter(|i| is_pending(i))
        .count();
    out.push(if r.healthy() && pending > 0 {
        format!("healthy; {pending} drive(s) pending (marked ??): not a problem, see why above")
    } else if r.healthy() {
        "healthy".to_string()
    } else {
        "problems found (marked !!)".to_string()
    });
    out.join("\n")
}

/// Refuses, before any array write, to rotate a token user that another tenant's
/// objects on the array may use (its pod's `token-user` tag names it, or it is a
/// same-named tenant's default token user, which derives from the name alone).
async fn refuse_anothers_token(t: &Tenant, session: &Session) -> Result<()> {
    let others = t.token_user_claimants(session.array.as_ref()).await?;
    if others.is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "refused: array user {} is {others} too, whose objects are on the array; \
         rotating its token would take it from that tenant. Nothing changed. Give this tenant a token user of \
         its own (spec.array.tokenUser) and apply",
        t.spec.token_user()
    )
}

/// `token rotate -f SPEC`.
pub(crate) async fn token_rotate(
    a: &TokenRotateArgs,
    g: &GlobalArgs,
    p: &Printer,
) -> Result<Outcome> {
    let t = Tenant::load(&a.file)?;
    // Also refused by px-cluster; checked here first to name the file and to open no
    // session for nothing.
    if !t.spec.spec.storage.mode.needs_token() {
        return Err(crate::exit::InvalidInput::error(format!(
            "{}: token rotation is for cloud-drive tenants (storage.mode is {})",
            a.file.display(),
            t.spec.spec.storage.mode
        )));
    }
    let mut opts = RotateOptions::for_spec(&t.spec);
    if let Some(alt) = &a.alternate_user {
        opts.alternate_user = alt.clone();
    }
    if a.lifetime.is_some() {
        opts.lifetime = a.lifetime;
    }
    opts.grace = a.grace;
    let mut admins = t.token_users();
    admins.push(opts.alternate_user.clone());
    let session = Session::open(g, p, &admins)?;
    refuse_anothers_token(&t, &session).await?;
    let env = |k: &str| std::env::var(k).ok();
    let probe: Box<dyn TokenProbe> = match config::resolve(g, &env, &mut |_| {})? {
        Target::Rest(target) => Box::new(LoginProbe {
            url: target.url.to_string(),
            ca_file: target.ca_file.clone(),
            insecure: target.insecure,
        }),
        Target::Sim => Box::new(ExposedTokenProbe {
            array: session.array.clone(),
        }),
    };
    let (Some(kubeconfig), None) = (&a.tenant_kubeconfig, &a.out) else {
        return token_rotate_file(a, g, p, &t, &opts, session, probe.as_ref()).await;
    };
    let tenant = connect(
        kubeconfig,
        a.tenant_context.as_deref(),
        g.kube_bounds(false),
    )
    .await?;
    // Journaled in the state folder, so a killed rotation resumes where it stopped.
    let mut opts = opts;
    opts.journal = crate::token_journal::default_state_dir(&env).map(|dir| {
        std::sync::Arc::new(crate::token_journal::FileTokenJournal::new(
            &session.array_key(),
            &t.desired.tenant,
            vec![dir],
        )) as std::sync::Arc<dyn px_topology::token_journal::TokenJournal>
    });
    let result = rotate_token(
        session.array.as_ref(),
        probe.as_ref(),
        &tenant,
        &t.spec,
        &opts,
    )
    .await;
    let closed = session.close().await;
    let report = result?;
    closed?;
    match p.format {
        OutputFormat::Json => p.stdout(&to_json(&report)?)?,
        OutputFormat::Yaml => p.stdout(&to_yaml(&report)?)?,
        f
        @ (OutputFormat::Name | OutputFormat::Mermaid | OutputFormat::Dot | OutputFormat::Csv) => {
            return Err(crate::output::unsupported(f));
        }
        OutputFormat::Table | OutputFormat::Wide => {
            let mut text = report.steps.join("\n");
            text.push_str(&format!(
                "\nrotated: px-pure-secret holds a new token of {}",
                report.active_user
            ));
            p.stdout(&text)?;
        }
    }
    Ok(Outcome::Success)
}

/// `token rotate -f SPEC --out DIR`: one step of the file-only rotation.
async fn token_rotate_file(
    a: &TokenRotateArgs,
    g: &GlobalArgs,
    p: &Printer,
    t: &Tenant,
    opts: &RotateOptions,
    session: Session,
    probe: &dyn TokenProbe,
) -> Result<Outcome> {
    let out = a
        .out
        .as_deref()
        .context("--out DIR or --tenant-kubeconfig is required")?;
    let rotator = super::rotate_file::Rotator {
        array: session.array.as_ref(),
        probe,
        tenant: t,
        opts,
        out,
        array_key: session.array_key(),
        yes: g.yes,
    };
    let result = rotator.run().await;
    let closed = session.close().await;
    let run = result?;
    closed?;
    match p.format {
        OutputFormat::Json => p.stdout(&to_json(
            &serde_json::json!({"steps": run.steps, "done": run.done}),
        )?)?,
        OutputFormat::Yaml => p.stdout(&to_yaml(
            &serde_json::json!({"steps": run.steps, "done": run.done}),
        )?)?,
        f
        @ (OutputFormat::Name | OutputFormat::Mermaid | OutputFormat::Dot | OutputFormat::Csv) => {
            return Err(crate::output::unsupported(f));
        }
        OutputFormat::Table | OutputFormat::Wide => p.stdout(&run.steps.join("\n"))?,
    }
    Ok(Outcome::Success)
}

/// Logs in to the array with the new token (a separate REST session, closed at once).
struct LoginProbe {
    url: String,
    ca_file: Option<PathBuf>,
    insecure: bool,
}

#[async_trait]
impl TokenProbe for LoginProbe {
    async fn verify(&self, user: &str, token: &SecretString) -> Result<(), BoxError> {
        self.login(user, token).await.map_err(Into::into)
    }
}

impl LoginProbe {
    async fn login(&self, user: &str, token: &SecretString) -> Result<()> {
        let mut b = RestArray::builder(self.url.as_str())
            .api_token(token.clone())
            .insecure(self.insecure);
        if let Some(ca) = &self.ca_file {
            b = b.ca_file(ca.clone());
        }
        let array = b.build()?;
        array
            .get_array()
            .await
            .with_context(|| format!("logging in as {user} with the new token failed"))?;
        array.close().await?;
        Ok(())
    }
}

/// The embedded simulator: compare with the token the array exposes for the user.
struct ExposedTokenProbe {
    array: std::sync::Arc<dyn FlashArray>,
}

#[async_trait]
impl TokenProbe for ExposedTokenProbe {
    async fn verify(&self, user: &str, token: &SecretString) -> Result<(), BoxError> {
        let listed = self
            .array
            .list_api_tokens(&[user.to_string()], true)
            .await?;
        let matches = listed
            .iter()
            .any(|t| t.api_token.expose() == Some(token.expose_secret()));
        if !matches {
            return Err(format!("the array does not know this token for {user}").into());
        }
        Ok(())
    }
}

/// `crd`: the TenantStorage CustomResourceDefinition as YAML (or JSON with `-o json`).
pub(crate) fn crd(p: &Printer) -> Result<Outcome> {
    let crd = px_topology::crd::tenant_storage_crd();
    match p.format {
        OutputFormat::Json => p.stdout(&to_json(&crd)?)?,
        _ => p.stdout(&format!("---\n{}", to_yaml(&crd)?))?,
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn status_text_escapes_what_the_array_and_clusters_say() {
        let cli = crate::args::Cli::try_parse_from(["pxfa", "--color", "never", "crd"]).unwrap();
        let p = Printer::from_args(&cli.global);
        let report = StatusReport {
            layers: vec![Layer {
                name: "array (fa\u{1b}]0;x\u{7})".into(),
                items: vec![Item {
                    object: "volume v\u{1b}[2J".into(),
                    state: "gone\nok".into(),
                    ok: false,
                    problem: Some("run \u{9b}31m".into()),
                }],
            }],
        };
        let text = status_text(&report, &p);
        assert!(!text.contains(['\u{1b}', '\u{7}', '\u{9b}']), "{text:?}");
        assert!(text.contains(r"volume v\u{1b}[2J: gone\u{a}ok"), "{text}");
        assert_eq!(text.lines().count(), 4, "{text}");
    }
}
