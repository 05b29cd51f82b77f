//! PXFA026: a file pxfa rendered holds exactly what pxfa put there. pxfa writes one
//! YAML document per file, under a header of comment lines that starts with
//! `# Apply to:`, in a file named `NN-<kind>-<name>[-patch|-fragment].yaml` after
//! the object's kind. A second document, a `List`, a kind the name does not say, or
//! a header line that is no longer a comment means text was added to the file (by
//! hand, or by a spec value that escaped a comment in an older pxfa): applying it
//! would create objects nobody reviewed.

use std::path::Path;

use serde_json::Value;

use super::finding::{Finding, Severity};
use super::manifest_doc;
use crate::render::HEADER_MARK;

/// The rule id.
const RULE: &str = "PXFA026";

/// The findings for one file: none unless it starts with pxfa's header.
pub(super) fn check(path: &Path, text: &str, docs: &[Value]) -> Vec<Finding> {
    if !text.starts_with(HEADER_MARK) {
        return Vec::new();
    }
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let at = |object: String, message: String| {
        let mut f = Finding::new(RULE, Severity::Error, object, message);
        f.source = Some(path.display().to_string());
        f
    };
    let mut out = Vec::new();
    if let Some((n, line)) = text
        .lines()
        .enumerate()
        .take_while(|(_, l)| *l != "---")
        .find(|(_, l)| !l.starts_with('#'))
    {
        out.push(at(
            file.clone(),
            format!(
                "line {} of pxfa's header is not a comment ({:?}): YAML was added to the \
                 header; do not apply this file, render it again",
                n + 1,
                line.chars().take(60).collect::<String>()
            ),
        ));
    }
    let real: Vec<&Value> = docs.iter().filter(|d| !d.is_null()).collect();
    if real.len() != 1 {
        let kinds: Vec<String> = real.iter().map(|d| manifest_doc::object(d)).collect();
        out.push(at(
            file.clone(),
            format!(
                "holds {} YAML documents ({}); pxfa renders exactly one per file: something \
                 was added, do not apply this file, render it again",
                real.len(),
                kinds.join(", ")
            ),
        ));
    }
    for d in real {
        if let Some(why) = kind_problem(&file, d) {
            out.push(at(manifest_doc::object(d), why));
        }
    }
    out
}

/// Why `d` is not the kind the file name `NN-<kind>-...` says, or `None`.
fn kind_problem(file: &str, d: &Value) -> Option<String> {
    let b = file.as_bytes();
    let numbered = b.len() > 3 && b[..2].iter().all(u8::is_ascii_digit) && b[2] == b'-';
    if !numbered {
        return None;
    }
    let stem = file[3..].trim_end_matches(".yaml").trim_end_matches(".yml");
    let kind = manifest_doc::kind(d);
    if kind == "List" || d.get("items").is_some_and(Value::is_array) && kind.ends_with("List") {
        return Some(format!(
            "is a {kind}: pxfa renders one object per file, never a list; do not apply this \
             file, render it again"
        ));
    }
    if d.is_array() {
        return (!stem.ends_with("-patch")).then(|| {
            "a JSON patch in a file whose name is not a patch's (-patch.yaml)".to_string()
        });
    }
    let want = format!("{}-", kind.to_ascii_lowercase());
    (kind.is_empty() || !stem.starts_with(&want)).then(|| {
        format!(
            "kind {kind:?} is not the kind the file name {file:?} says; pxfa names each file \
             after its object: do not apply this file, render it again"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings(name: &str, text: &str) -> Vec<Finding> {
        let docs: Vec<Value> = serde_saphyr::from_multiple(text).unwrap();
        check(Path::new(name), text, &docs)
    }

    const HC: &str = "# Apply to: the MANAGEMENT cluster (step 07 of 10)\n# How: oc apply -f \
                      <this file>\n---\napiVersion: v1\nkind: HostedCluster\nmetadata:\n  name: a\n";

    #[test]
    fn quiet_on_what_pxfa_writes() {
        assert!(findings("07-hostedcluster-a.yaml", HC).is_empty());
        let patch = "# Apply to: x\n---\n- op: add\n  path: /a\n  value: 1\n";
        assert!(findings("01-ingresscontroller-default-patch.yaml", patch).is_empty());
        // Without pxfa's header the file is the admin's own: any number of documents.
        let own = "apiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: B\n";
        assert!(findings("own.yaml", own).is_empty());
    }

    #[test]
    fn fires_on_added_documents_kinds_and_header_lines() {
        let injected = HC.replace(
            "# How: oc apply -f <this file>\n",
            "# Same: x\nkind: ClusterRoleBinding\nmetadata: {name: pwn}\n",
        );
        let f = findings("07-hostedcluster-a.yaml", &injected);
        assert!(
            f.iter()
                .all(|x| x.rule == RULE && x.severity == Severity::Error)
        );
        assert!(
            f.iter().any(|x| x.message.contains("not a comment")),
            "{f:?}"
        );
        assert!(
            f.iter().any(|x| x.message.contains("2 YAML documents")),
            "{f:?}"
        );
        assert!(
            f.iter().any(|x| x.object.starts_with("ClusterRoleBinding")),
            "{f:?}"
        );
        let appended = format!("{HC}---\nkind: Secret\nmetadata: {{name: s}}\n");
        let f = findings("07-hostedcluster-a.yaml", &appended);
        assert_eq!(f.len(), 2, "{f:?}");
        let list = HC.replace("kind: HostedCluster", "kind: List\nitems: []");
        assert_eq!(findings("07-hostedcluster-a.yaml", &list).len(), 1);
    }
}
