//! Linting files: a spec, a multi-document YAML file, or a directory of them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::finding::{Finding, Severity};
use super::manifest_rules::lint_manifests;
use super::spec_rules::lint_spec;
use crate::spec::{self, KIND};

/// A file that could not be read or is not YAML.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct LintError {
    /// The file or directory.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

fn err(path: &Path, message: impl Into<String>) -> LintError {
    LintError {
        path: path.display().to_string(),
        message: message.into(),
    }
}

/// Lints a file or every `*.yaml`/`*.yml` file under a directory (recursively, in
/// name order). `TenantStorage` documents get the spec checks (validation errors as
/// `PXFA000`, then the spec rules); every other document is linted as a manifest,
/// all of them together so that rules relating objects across files work.
pub fn lint_path(path: impl AsRef<Path>) -> Result<Vec<Finding>, LintError> {
    lint_paths([path])
}

/// [`lint_path`] over several files and directories at once (`pxfa lint FILE...`):
/// the manifests of all of them are linted together.
pub fn lint_paths<P: AsRef<Path>>(
    paths: impl IntoIterator<Item = P>,
) -> Result<Vec<Finding>, LintError> {
    let mut files = Vec::new();
    for path in paths {
        let path = path.as_ref();
        if path.is_dir() {
            collect_yaml(path, &mut files)?;
        } else if path.exists() {
            files.push(path.to_path_buf());
        } else {
            return Err(err(path, "no such file or directory"));
        }
    }
    let mut findings = Vec::new();
    let mut manifests: Vec<(Value, String)> = Vec::new();
    let mut specs: Vec<(spec::TenantStorage, String)> = Vec::new();
    for f in &files {
        let text = crate::files::read_input_text(f, crate::files::InputKind::Spec)
            .map_err(|e| err(f, format!("cannot read: {e}")))?;
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
            .map_err(|e| err(f, format!("not valid YAML: {e}")))?;
        // An empty file (or a FIFO nobody wrote to) is a wrong path, not a clean lint.
        if docs.iter().all(Value::is_null) {
            return Err(err(f, "holds no YAML document"));
        }
        let source = f.display().to_string();
        findings.extend(super::rendered::check(f, &text, &docs));
        let tags = spec::tags::unknown_tags(&text);
        for (i, d) in docs.into_iter().enumerate().filter(|(_, d)| !d.is_null()) {
            if d.get("kind").and_then(Value::as_str) == Some(KIND) {
                let tagged = tags
                    .iter()
                    .filter(|t| t.document == i)
                    .map(|t| Finding::new("PXFA000", Severity::Error, t.path.clone(), t.message()));
                let (own, parsed) = lint_spec_value(d);
                findings.extend(tagged.chain(own).map(|mut x| {
                    x.source = Some(source.clone());
                    x
                }));
                specs.extend(parsed.map(|t| (t, source.clone())));
            } else {
                manifests.push((d, source.clone()));
            }
        }
    }
    findings.extend(super::spec_rules::lint_spec_set(&specs));
    let docs: Vec<Value> = manifests.iter().map(|(d, _)| d.clone()).collect();
    for mut f in lint_manifests(&docs) {
        f.source = source_of(&f.object, &manifests);
        findings.push(f);
    }
    Ok(findings)
}

/// The file holding the object a manifest finding names.
fn source_of(object: &str, manifests: &[(Value, String)]) -> Option<String> {
    manifests.iter().find_map(|(d, src)| {
        let kind = d.get("kind").and_then(Value::as_str)?;
        let name = d.pointer("/metadata/name").and_then(Value::as_str)?;
        let obj = match d.pointer("/metadata/namespace").and_then(Value::as_str) {
            Some(ns) => format!("{kind}/{ns}/{name}"),
            None => format!("{kind}/{name}"),
        };
        (obj == object).then(|| src.clone())
    })
}

/// The spec's size fields, as JSON pointers and field paths.
const SIZE_FIELDS: &[(&str, &str)] = &[
    ("/spec/hostedCluster/memory", "spec.hostedCluster.memory"),
    (
        "/spec/hostedCluster/rootVolumeSize",
        "spec.hostedCluster.rootVolumeSize",
    ),
    ("/spec/storage/capacity", "spec.storage.capacity"),
    ("/spec/storage/metadataSize", "spec.storage.metadataSize"),
    ("/spec/portworx/maxPoolSize", "spec.portworx.maxPoolSize"),
];

/// PXFA034: a size written with a bare decimal unit letter (`capacity: 4T`). It keeps
/// its Kubernetes meaning (4 × 10^12 bytes), but a Pure admin writes it by habit for
/// the binary size Purity's CLI reads, so the finding names both.
fn ambiguous_sizes(d: &Value) -> Vec<Finding> {
    SIZE_FIELDS
        .iter()
        .filter_map(|(pointer, path)| {
            let written = d.pointer(pointer)?.as_str()?;
            let r = flasharray::Size::ambiguous_readings(written)?;
            Some(Finding::new(
                "PXFA034",
                Severity::Warning,
                *path,
                format!(
                    "{written} is a Kubernetes quantity: {} bytes ({}), not the {} Purity's CLI \
                     means by {written}; write {}{}i for {} or {}{}B to keep {}",
                    r.decimal.as_u64(),
                    r.decimal,
                    r.binary,
                    r.number,
                    r.unit.to_ascii_uppercase(),
                    r.binary,
                    r.number,
                    r.unit.to_ascii_uppercase(),
                    r.decimal,
                ),
            ))
        })
        .collect()
}

/// Spec checks on one `TenantStorage` document, and the spec when it is valid (for
/// the rules that relate the specs of one call).
fn lint_spec_value(d: Value) -> (Vec<Finding>, Option<spec::TenantStorage>) {
    let mut findings = ambiguous_sizes(&d);
    let (own, parsed) = lint_parsed_spec(d);
    findings.extend(own);
    (findings, parsed)
}

fn lint_parsed_spec(d: Value) -> (Vec<Finding>, Option<spec::TenantStorage>) {
    match spec::from_value(d) {
        Err(e) => (
            vec![Finding::new("PXFA000", Severity::Error, e.path, e.message)],
            None,
        ),
        Ok(t) => {
            let errors = t.validate();
            if errors.is_empty() {
                (lint_spec(&t), Some(t))
            } else {
                let f = errors
                    .into_iter()
                    .map(|e| Finding::new("PXFA000", Severity::Error, e.path, e.message))
                    .collect();
                (f, None)
            }
        }
    }
}

fn collect_yaml(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), LintError> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| err(dir, format!("cannot list: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_yaml(&p, out)?;
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e == "yaml" || e == "yml")
        {
            out.push(p);
        }
    }
    Ok(())
}
