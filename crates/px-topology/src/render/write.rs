//! Manifests to files: `management/NN-kind-name.yaml`, `tenant/NN-kind-name.yaml` and
//! an `README.txt` apply listing, byte-for-byte deterministic.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::Value;

use super::RenderError;
use super::manifest::{Cluster, Form, Manifest};
use crate::pure_json::PureJson;

/// First line of every file pxfa writes; also how stale files of an earlier render
/// are recognised (files without it are never touched).
pub(crate) const HEADER_MARK: &str = "# Apply to: ";

/// Name of the apply listing.
pub(super) const README: &str = "README.txt";

/// The header lines of one manifest, before they are written as comments.
fn header_lines(m: &Manifest, total_steps: u32) -> Vec<String> {
    let mut lines = vec![format!(
        "{}{} (step {:02} of {:02})",
        HEADER_MARK.trim_start_matches("# "),
        m.cluster.shout(),
        m.order,
        total_steps
    )];
    match &m.form {
        Form::Resource => lines.push("How: oc apply -f <this file>".to_string()),
        Form::JsonPatch { target } => {
            lines.push(format!(
                "How: this is an RFC 6902 JSON patch, not an object. Apply it to {target}:"
            ));
            let kind = m.kind.to_ascii_lowercase();
            let mut words = vec!["oc", "patch", kind.as_str(), "<name>"];
            if let Some(ns) = m.namespace.as_deref() {
                words.extend(["-n", ns]);
            }
            words.extend(["--type=json", "--patch-file", "<this file>"]);
            lines.push(format!("  {}", super::shell::join(&words)));
        }
        Form::MergePatch { target } => {
            lines.push(format!(
                "How: this is an RFC 7386 JSON merge patch (maps merge, other fields stay). Apply it to {target}:"
            ));
            let kind = m.kind.to_ascii_lowercase();
            let mut words = vec!["oc", "patch", kind.as_str(), m.name.as_str()];
            if let Some(ns) = m.namespace.as_deref() {
                words.extend(["-n", ns]);
            }
            words.extend(["--type=merge", "--patch-file", "<this file>"]);
            lines.push(format!("  {}", super::shell::join(&words)));
        }
        Form::Fragment { path } => {
            lines.push(
                "How: this is a FRAGMENT, not a complete object; `oc apply` will reject it."
                    .to_string(),
            );
            lines.push(format!(
                "  Copy `{path}` into your {} {} before creating it.",
                m.kind, m.name
            ));
        }
    }
    lines.extend(m.purpose.iter().cloned());
    if m.secret {
        lines.push(
            "SECRET: this file holds (or must be completed with) a credential. Do not commit it."
                .to_string(),
        );
    }
    lines
}

/// Whether `c` ends a line for some YAML reader: `\n` and `\r` (YAML 1.2), NEL,
/// LINE SEPARATOR and PARAGRAPH SEPARATOR (YAML 1.1).
fn line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Appends `line` to `out` as YAML comment lines: the one place pxfa writes a
/// comment. Each line break in `line` starts a new `# ` line (so no text can end the
/// comment and become YAML) and every other control character is written escaped
/// (`\u{1b}`), so a header shows the same on a terminal as in an editor.
pub(crate) fn push_comment(out: &mut String, line: &str) {
    for part in line.split(line_break) {
        out.push('#');
        if !part.is_empty() {
            out.push(' ');
        }
        push_escaped(out, part);
        out.push('\n');
    }
}

/// Appends `text` with every control character but tab written escaped (`\u{1b}`).
fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        if c.is_control() && c != '\t' {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
}

/// The YAML text of one manifest, header comment included.
pub fn to_yaml(m: &Manifest, total_steps: u32) -> Result<String, RenderError> {
    let mut out = String::new();
    for line in header_lines(m, total_steps) {
        push_comment(&mut out, &line);
    }
    out.push_str("---\n");
    let yaml = serde_saphyr::to_string(&m.body).map_err(|e| RenderError::Yaml {
        file: m.file_name.clone(),
        // The serializer's message may quote the value it choked on; for a secret
        // that could be the token, so only the file is named.
        message: if m.secret {
            "cannot serialise a secret manifest".to_string()
        } else {
            e.to_string()
        },
    })?;
    out.push_str(&yaml);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// The number of distinct steps of `cluster` in `manifests`.
fn steps(manifests: &[Manifest], cluster: Cluster) -> u32 {
    manifests
        .iter()
        .filter(|m| m.cluster == cluster)
        .map(|m| m.order)
        .max()
        .unwrap_or(0)
}

/// The apply listing: every file, per cluster, in order, with why.
pub(super) fn readme(manifests: &[Manifest]) -> String {
    let mut out = String::new();
    out.push_str("pxfa manifests\n==============\n\n");
    out.push_str(
        "Generated by `pxfa render`/`pxfa apply`. Regenerate instead of editing by hand:\n",
    );
    out.push_str("the next render overwrites these files and removes the ones no longer needed.\n");
    out.push_str("Apply the management cluster first, step by step, then the tenant cluster.\n");
    out.push_str("Files sharing a step number can be applied together.\n");
    out.push_str(
        "Patches (`patch`) change objects that already exist; their headers say which ops apply.\n",
    );
    out.push_str(
        "The HostedCluster's control plane namespace, which holds the worker VMs, exists once it is created.\n",
    );
    for cluster in [Cluster::Management, Cluster::Tenant] {
        let in_cluster: Vec<&Manifest> =
            manifests.iter().filter(|m| m.cluster == cluster).collect();
        if in_cluster.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n{} -> {}/\n",
            cluster.shout(),
            cluster.dir_name()
        ));
        for m in in_cluster {
            let how = match m.form {
                Form::Resource => "apply",
                Form::JsonPatch { .. } | Form::MergePatch { .. } => "patch",
                Form::Fragment { .. } => "merge",
            };
            out.push_str(&format!(
                "  {:<7} {}/{}",
                how,
                cluster.dir_name(),
                m.file_name
            ));
            if m.secret {
                out.push_str("  [SECRET]");
            }
            out.push('\n');
            for line in index_lines(&m.purpose) {
                out.push_str("          ");
                push_escaped(&mut out, &line.replace(line_break, " "));
                out.push('\n');
            }
        }
    }
    out
}

/// What the index shows of a manifest's purpose: its first paragraph, and every later
/// one that shouts a warning (`APPLYING IT REBOOTS the worker pool`, `TEMPLATE:`,
/// `IMMUTABLE`), so that no warning of a header is left out of the listing people read.
fn index_lines(purpose: &[String]) -> Vec<String> {
    paragraphs(purpose)
        .into_iter()
        .enumerate()
        .filter(|(i, p)| *i == 0 || shouts(p))
        .map(|(_, p)| p)
        .collect()
}

/// The purpose's lines joined into paragraphs: a header wraps long sentences, so a
/// line that does not end one (`.`, `:`, `!`, `?`) goes on in the next.
fn paragraphs(lines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for line in lines {
        let line = line.trim();
        match out.last_mut() {
            Some(last) if open => {
                last.push(' ');
                last.push_str(line);
            }
            _ => out.push(line.to_string()),
        }
        open = !line.ends_with(['.', ':', '!', '?']);
    }
    out
}

/// Whether `text` shouts: a word of six or more capital letters (`REBOOTS`,
/// `TEMPLATE`), not part of an identifier (`CAPACITY_DATA_HAS_CHANGED`,
/// `PURE_ISCSI_ALLOWED_IFACES`). Acronyms (`FADA`, `JSON`) are shorter.
fn shouts(text: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w.len() >= 6 && w.chars().all(|c| c.is_ascii_uppercase()))
}

/// What [`write_dir`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOutcome {
    /// The files written, in apply order, `README` last.
    pub written: Vec<PathBuf>,
    /// Secret files left exactly as they were: they hold a real API token and this
    /// render has only a template for them (or no longer renders them). The file may
    /// be the only copy of the token; the array never shows a token twice.
    pub kept: Vec<PathBuf>,
}

/// Writes every manifest under `dir` plus `README`.
///
/// Files left from an earlier render (recognised by pxfa's header) that are not part
/// of this one are removed, so the directory never holds, say, the PVC of a worker
/// that no longer exists. Secret manifests are written owner-readable only. Every file
/// is written to a temporary name and renamed, so a reader (or a crash) never sees
/// half a file.
///
/// A secret file that holds a real API token (see [`PureJson::holds_real_token`]) is
/// never replaced by a template nor removed as stale: it is reported in
/// [`WriteOutcome::kept`]. A manifest holding a real token always replaces the file;
/// that is how a new or rotated token is delivered.
pub fn write_dir(manifests: &[Manifest], dir: &Path) -> Result<WriteOutcome, RenderError> {
    check_out_dir(dir, &[])?;
    own_dir(dir)?;
    let mut out = WriteOutcome::default();
    for cluster in [Cluster::Management, Cluster::Tenant] {
        let sub = dir.join(cluster.dir_name());
        let mine: Vec<&Manifest> = manifests.iter().filter(|m| m.cluster == cluster).collect();
        let total = steps(manifests, cluster);
        let wanted: BTreeSet<&str> = mine.iter().map(|m| m.file_name.as_str()).collect();
        if sub.is_dir() {
            out.kept.extend(remove_stale(&sub, &wanted)?);
        }
        if mine.is_empty() {
            continue;
        }
        own_dir(&sub)?;
        for m in mine {
            let path = sub.join(&m.file_name);
            if m.secret && !secret_holds_real_token(&m.body) && file_holds_real_token(&path)? {
                out.kept.push(path);
                continue;
            }
            let text = to_yaml(m, total)?;
            write_file(&path, text.as_bytes(), m.secret)?;
            out.written.push(path);
        }
    }
    let readme_path = dir.join(README);
    write_file(&readme_path, readme(manifests).as_bytes(), false)?;
    out.written.push(readme_path);
    Ok(out)
}

/// Checks, without writing, that `dir`, its cluster folders and `extra` folders
/// under it are real folders of the user running pxfa (or absent): a symbolic link
/// (git stores them, and output folders go to git), a file or another user's folder
/// in their place is refused before anything is written anywhere.
pub fn check_out_dir(dir: &Path, extra: &[&str]) -> Result<(), RenderError> {
    let subs = [Cluster::Management, Cluster::Tenant]
        .map(Cluster::dir_name)
        .into_iter()
        .chain(extra.iter().copied());
    for path in std::iter::once(dir.to_path_buf()).chain(subs.map(|s| dir.join(s))) {
        crate::files::check_own_dir(&path)
            .map_err(|problem| RenderError::OutDir { path, problem })?;
    }
    Ok(())
}

/// Creates `dir` if missing, refusing a link or another user's folder.
fn own_dir(dir: &Path) -> Result<(), RenderError> {
    crate::files::ensure_own_dir(dir, 0o755)
        .map(|_| ())
        .map_err(|problem| RenderError::OutDir {
            path: dir.to_path_buf(),
            problem,
        })
}

/// Whether a Secret body's `pure.json` (in `stringData`, or base64 in `data`) holds a
/// real API token.
fn secret_holds_real_token(body: &Value) -> bool {
    let text = match (
        body.pointer("/stringData/pure.json")
            .and_then(Value::as_str),
        body.pointer("/data/pure.json").and_then(Value::as_str),
    ) {
        (Some(t), _) => t.to_string(),
        (None, Some(b64)) => {
            let compact: String = b64.split_whitespace().collect();
            match base64::engine::general_purpose::STANDARD.decode(compact) {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(_) => return false,
            }
        }
        (None, None) => return false,
    };
    PureJson::parse(&text).is_ok_and(|p| p.holds_real_token())
}

/// Whether the file at `path` is a Secret whose `pure.json` holds a real token. A
/// missing file or one that is not such a Secret does not; a file that exists but
/// cannot be read is an error, since it might.
fn file_holds_real_token(path: &Path) -> Result<bool, RenderError> {
    let text = match crate::files::read_input_text(path, crate::files::InputKind::Spec) {
        Ok(t) => t,
        Err(crate::files::FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(false);
        }
        Err(e) => return Err(RenderError::io(path, std::io::Error::other(e.to_string()))),
    };
    // Comments (pxfa's header) and the document marker are plain YAML.
    Ok(serde_saphyr::from_str::<Value>(&text).is_ok_and(|body| secret_holds_real_token(&body)))
}

/// Removes pxfa's files that are not `wanted`, except secrets holding a real token,
/// which are returned instead.
fn remove_stale(sub: &Path, wanted: &BTreeSet<&str>) -> Result<Vec<PathBuf>, RenderError> {
    let entries = fs::read_dir(sub).map_err(|e| RenderError::io(sub, e))?;
    let mut stale = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| RenderError::io(sub, e))?;
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        // The entry's own type: a link is never followed, read or removed.
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if !name.ends_with(".yaml") || wanted.contains(name) || !is_file {
            continue;
        }
        let head = crate::files::read_input(&path, crate::files::InputKind::Spec)
            .map_err(|e| RenderError::io(&path, std::io::Error::other(e.to_string())))?;
        if head.starts_with(HEADER_MARK.as_bytes()) {
            stale.push(path);
        }
    }
    stale.sort();
    let mut kept = Vec::new();
    for path in stale {
        if file_holds_real_token(&path)? {
            kept.push(path);
        } else {
            fs::remove_file(&path).map_err(|e| RenderError::io(&path, e))?;
        }
    }
    Ok(kept)
}

/// Whether `path` already holds `bytes` with the mode [`write_file`] would give it.
fn unchanged(path: &Path, bytes: &[u8], secret: bool) -> bool {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.is_file() || meta.len() != bytes.len() as u64 {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let want = if secret { 0o600 } else { 0o644 };
        if meta.permissions().mode() & 0o777 != want {
            return false;
        }
    }
    #[cfg(not(unix))]
    let _ = secret;
    fs::read(path).is_ok_and(|have| have == bytes)
}

/// Writes `bytes` to a temporary file next to `path` (created with the final mode)
/// and renames it over `path`, so a reader sees the old file or the new one, never
/// half of one. Only secrets are synced to disk before the rename: a Secret may hold
/// an API token that exists nowhere else, while every other manifest is rendered
/// again from the spec and the array by the next run. Syncing each of a 64-worker
/// bundle's 160 files made `render` wait about half a second on the disk.
fn write_file(path: &Path, bytes: &[u8], secret: bool) -> Result<(), RenderError> {
    // A file that already says exactly this (with its mode) is left alone: renaming
    // over an existing file makes ext4 flush the new data at once (auto_da_alloc),
    // which is most of what a re-render of an unchanged bundle would cost.
    if unchanged(path, bytes, secret) {
        return Ok(());
    }
    // Only secrets are synced: every other manifest is rendered again by the next run.
    crate::files::write_replacing(path, bytes, if secret { 0o600 } else { 0o644 }, secret)
        .map_err(|e| RenderError::io(path, e))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A purpose line and a patch namespace that would end the comment or the
    /// command if they were written as they are.
    fn hostile() -> Manifest {
        let mut m = Manifest::resource(
            Cluster::Management,
            3,
            json!([{"op": "add", "path": "/a", "value": 1}]),
            &[
                "x\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: pwn}",
                "cr\rkind: Pod",
                "esc \u{1b}]0;title\u{7} and \u{1b}[2J",
                "nel\u{85}kind: A\u{2028}kind: B\u{2029}kind: C",
            ],
        );
        m.kind = "VirtualMachine".into();
        m.name = "vm".into();
        m.namespace = Some("ns; rm -rf / #".into());
        m.form = Form::JsonPatch {
            target: "the VM\nkind: Secret".into(),
        };
        m.file_name = "03-virtualmachine-vm-patch.yaml".into();
        m
    }

    #[test]
    fn comments_never_end_early_and_hold_no_control_characters() {
        let m = hostile();
        let text = to_yaml(&m, 9).unwrap();
        let (header, body) = text.split_once("\n---\n").unwrap();
        for line in header.lines() {
            assert!(line.starts_with('#'), "{line:?} in\n{text}");
        }
        assert!(
            !text
                .chars()
                .any(|c| c != '\n' && crate::spec::is_unprintable(c)),
            "{text:?}"
        );
        assert!(header.contains("# kind: ClusterRoleBinding"), "{header}");
        assert!(header.contains("\\u{1b}]0;title\\u{7}"), "{header}");
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
        let docs: Vec<&Value> = docs.iter().filter(|d| !d.is_null()).collect();
        assert_eq!(docs, [&m.body]);
        assert!(!body.contains('#'));
    }

    #[test]
    fn the_patch_command_quotes_the_namespace() {
        let text = to_yaml(&hostile(), 9).unwrap();
        assert!(
            text.contains(
                "#   oc patch virtualmachine '<name>' -n 'ns; rm -rf / #' --type=json \
                 --patch-file '<this file>'\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn push_comment_splits_every_line_break() {
        let mut out = String::new();
        push_comment(&mut out, "a\r\nb\u{2028}c");
        push_comment(&mut out, "");
        assert_eq!(out, "# a\n#\n# b\n# c\n#\n");
    }

    #[test]
    fn the_index_keeps_the_warnings_of_a_header() {
        let purpose: Vec<String> = [
            "FlashArray host settings for the management workers (multipath.conf, udev rules with the",
            "CAPACITY_DATA_HAS_CHANGED rescan, iscsid, multipathd), which run the VM disks.",
            "APPLYING IT REBOOTS the worker pool node by node. Shared by tenants; NVMe/TCP nodes",
            "also need nvme_core.multipath=N.",
            "A plain remark about FADA and JSON.",
        ]
        .map(String::from)
        .to_vec();
        let lines = super::index_lines(&purpose);
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(
            lines[0].ends_with("which run the VM disks."),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with("APPLYING IT REBOOTS") && lines[1].ends_with("multipath=N."),
            "{}",
            lines[1]
        );
    }
}
