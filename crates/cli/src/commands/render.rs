//! `render`: every manifest of both clusters to a folder, from the spec alone; and
//! the writing of manifests that `apply --out` shares.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use px_topology::{ArrayFacts, RenderOptions, Tenant, hcp_create_command, shell_join, write_dir};
use serde::Serialize;

use super::pipeline::warn_offline;
use crate::args::{GlobalArgs, RenderArgs};
use crate::exit::{InvalidInput, Outcome};
use crate::output::Printer;

/// `render`: manifests to a folder, no array access.
pub(crate) fn render(a: &RenderArgs, g: &GlobalArgs, p: &Printer) -> Result<Outcome> {
    warn_offline("render", g, p);
    let t = Tenant::load(&a.file)?;
    let t = match &a.site {
        Some(site) => with_site(&t, site, &a.file)?,
        None => t,
    };
    lint_gate(&t, a.force, p)?;
    let opts = render_options(a.include_secrets, a.pull_secret_file.as_deref())?;
    write_manifests(&t, &ArrayFacts::default(), &a.out, opts, p)?;
    Ok(Outcome::Success)
}

/// The spec's lint findings before anything is written: warnings on stderr, and
/// error-level findings refuse the render (exit 2, nothing written) unless `force`.
/// render is the GitOps path, so what `pxfa lint` rejects must not reach git quietly.
fn lint_gate(t: &Tenant, force: bool, p: &Printer) -> Result<()> {
    let findings = px_topology::lint_spec(&t.spec);
    let line = |f: &px_topology::Finding| format!("{} {}: {}", f.rule, f.object, f.message);
    for f in findings
        .iter()
        .filter(|f| f.severity == px_topology::Severity::Warning)
    {
        p.warn(line(f));
    }
    let errors: Vec<String> = findings
        .iter()
        .filter(|f| f.severity == px_topology::Severity::Error)
        .map(line)
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    if force {
        for e in &errors {
            p.warn(format!("--force: rendering despite {e}"));
        }
        return Ok(());
    }
    Err(InvalidInput::error(format!(
        "the spec has {} error-level lint finding(s); nothing written (fix them, or render anyway with --force):\n  - {}",
        errors.len(),
        errors.join("\n  - ")
    )))
}

/// `t` resolved against the facts of the `doctor -o yaml` report at `site`; a report
/// that does not read, or a spec field the facts contradict, is bad input (exit 2).
fn with_site(t: &Tenant, site: &Path, spec_path: &Path) -> Result<Tenant> {
    let text = px_topology::files::read_input_text(site, px_topology::files::InputKind::Spec)
        .map_err(|e| InvalidInput::error(format!("--site: cannot read {}: {e}", site.display())))?;
    let facts = px_topology::site::SiteReport::facts_from_text(&text)
        .map_err(|e| InvalidInput::error(format!("--site {}: {e}", site.display())))?;
    px_topology::site::resolve_tenant(t, &facts, spec_path)
        .map_err(|e| InvalidInput::error(format!("--site {}: {e}", site.display())))
}

/// The render switches; the pull secret is read from its file and checked to be a
/// `.dockerconfigjson` (JSON with `auths`), never echoed in an error.
pub(super) fn render_options(
    include_secrets: bool,
    pull_secret_file: Option<&Path>,
) -> Result<RenderOptions> {
    let pull_secret = match pull_secret_file {
        None => None,
        Some(f) => {
            let text =
                px_topology::files::read_input_text(f, px_topology::files::InputKind::Credentials)
                    .map_err(|e| {
                        InvalidInput::error(format!(
                            "--pull-secret-file: cannot read {}: {e}",
                            f.display()
                        ))
                    })?;
            let ok = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .is_some_and(|v| v.get("auths").is_some_and(serde_json::Value::is_object));
            if !ok {
                return Err(InvalidInput::error(format!(
                    "--pull-secret-file {}: not a pull secret (expected JSON with an \"auths\" object)",
                    f.display()
                )));
            }
            Some(secrecy::SecretString::from(text.trim().to_string()))
        }
    };
    Ok(RenderOptions {
        include_secrets,
        pull_secret,
    })
}

#[derive(Serialize)]
struct Written {
    dir: String,
    files: Vec<String>,
}

/// Writes the manifests; returns the files kept instead of a template (they hold a
/// real token).
pub(super) fn write_manifests(
    t: &Tenant,
    facts: &ArrayFacts,
    dir: &Path,
    opts: RenderOptions,
    p: &Printer,
) -> Result<Vec<PathBuf>> {
    let include_secrets = opts.include_secrets;
    let manifests = px_topology::render(&t.spec, &t.sizing, facts, opts)
        .with_context(|| format!("cannot render the manifests of {}", t.spec.tenant_name()))?;
    let storage = px_topology::driver_for(&t.spec).guest_storage(&t.spec);
    let hcp = hcp_create_command(&t.spec, &storage)
        .with_context(|| format!("cannot render the hcp command of {}", t.spec.tenant_name()))?;
    let outcome = write_dir(&manifests, dir)
        .with_context(|| format!("cannot write manifests to {}", dir.display()))?;
    for kept in &outcome.kept {
        p.warn(format!(
            "kept {}: it holds the API token of array user {}, which this run does not know; not replaced by a template",
            kept.display(),
            t.spec.token_user()
        ));
    }
    let files = outcome.written;
    let kept = outcome.kept;
    let written = Written {
        dir: dir.display().to_string(),
        files: files.iter().map(|f| f.display().to_string()).collect(),
    };
    p.done(format!(
        "wrote {} manifest file(s) to {}{}",
        files.len(),
        dir.display(),
        if include_secrets {
            " (including secrets: keep this folder out of git)"
        } else {
            ""
        }
    ));
    p.info(format!(
        "the same HostedCluster with hcp (storageDriver aside, see its file): {}",
        shell_join(&hcp)
    ));
    let text = written.files.join("\n");
    p.emit_text(&written, &text)?;
    Ok(kept)
}
