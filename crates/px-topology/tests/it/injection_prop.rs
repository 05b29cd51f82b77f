//! Generated values in every string field of the spec (issue #28): whatever
//! validation accepts, the rendered files hold exactly the documents pxfa means —
//! one document per file, equal to the manifest's body, of its kind, under a header
//! whose every line is still a comment — and the suggested `hcp create cluster`
//! line, split the way a POSIX shell splits words, gives back exactly the words
//! pxfa meant (no second command, no expansion, no redirection).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};

use px_topology::spec::{TenantStorage, from_value};
use px_topology::{
    ArrayFacts, Form, RenderOptions, driver_for, hcp_create_command, render, shell_join, to_yaml,
};

/// Cases per field.
const CASES: u32 = 40;

/// What a field's generated values look like when they follow its grammar.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// DNS labels and subdomains.
    Name,
    /// Image references.
    Image,
    /// Versions.
    Version,
    /// Linux interface names.
    Iface,
    /// Secret keys.
    SecretKey,
    /// Label values.
    LabelValue,
    /// Annotation values: free text.
    Text,
    /// Array user names.
    User,
    /// iSCSI names.
    Iqn,
}

/// The spec a field is set in: the one whose output the field reaches.
#[derive(Clone, Copy, Debug)]
enum Base {
    Full,
    Kubevirt,
    CloudDrive,
}

/// Every free string field with its base and grammar.
const FIELDS: &[(&str, Base, Kind)] = &[
    ("/metadata/name", Base::Full, Kind::Name),
    ("/metadata/namespace", Base::Full, Kind::Name),
    ("/metadata/labels/team", Base::Full, Kind::LabelValue),
    (
        "/metadata/annotations/pxfa.io~1owner",
        Base::Full,
        Kind::Text,
    ),
    ("/spec/hostedCluster/name", Base::Full, Kind::Name),
    ("/spec/hostedCluster/namespace", Base::Full, Kind::Name),
    ("/spec/hostedCluster/nodePool", Base::Full, Kind::Name),
    (
        "/spec/hostedCluster/releaseImage",
        Base::Kubevirt,
        Kind::Image,
    ),
    ("/spec/hostedCluster/ocpVersion", Base::Full, Kind::Version),
    (
        "/spec/hostedCluster/rootStorageClass",
        Base::Full,
        Kind::Name,
    ),
    ("/spec/hostedCluster/pullSecret", Base::Full, Kind::Name),
    ("/spec/hostedCluster/sshKeySecret", Base::Full, Kind::Name),
    (
        "/spec/hostedCluster/etcdStorageClass",
        Base::Full,
        Kind::Name,
    ),
    ("/spec/storage/fadaStorageClass", Base::Full, Kind::Name),
    ("/spec/storage/appStorageClass", Base::Full, Kind::Name),
    (
        "/spec/storage/guestStorageClass",
        Base::Kubevirt,
        Kind::Name,
    ),
    (
        "/spec/storage/infraSnapshotClass",
        Base::Kubevirt,
        Kind::Name,
    ),
    (
        "/spec/storage/guestSnapshotClass",
        Base::Kubevirt,
        Kind::Name,
    ),
    ("/spec/array/endpoint", Base::CloudDrive, Kind::Name),
    ("/spec/array/tokenUser", Base::CloudDrive, Kind::User),
    ("/spec/management/nodes/0/name", Base::Full, Kind::Name),
    ("/spec/management/nodes/0/iqns/0", Base::Full, Kind::Iqn),
    ("/spec/network/bridge", Base::Full, Kind::Iface),
    ("/spec/network/uplink", Base::Full, Kind::Iface),
    ("/spec/network/guestInterface", Base::Full, Kind::Iface),
    ("/spec/network/nadName", Base::Full, Kind::Name),
    ("/spec/portworx/version", Base::Full, Kind::Version),
    ("/spec/portworx/namespace", Base::Full, Kind::Name),
    ("/spec/portworx/clusterName", Base::Full, Kind::Name),
    ("/spec/credentialsSecret/name", Base::Full, Kind::Name),
    (
        "/spec/credentialsSecret/pureJsonKey",
        Base::Full,
        Kind::SecretKey,
    ),
    ("/spec/credentialsSecret/caKey", Base::Full, Kind::SecretKey),
];

fn read(rel: &str) -> Value {
    let text =
        std::fs::read_to_string(format!("{}/../../{rel}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

fn base(b: Base) -> Value {
    let mut v = match b {
        Base::Full => read("fixtures/tenants/valid-full.yaml"),
        Base::Kubevirt => read("examples/tenant-kubevirt-csi.yaml"),
        Base::CloudDrive => read("examples/tenant-cloud-drive.yaml"),
    };
    v["spec"].as_object_mut().unwrap().insert(
        "credentialsSecret".into(),
        json!({"name": "pxfa-array", "pureJsonKey": "pure.json", "caKey": "ca.crt"}),
    );
    let storage = v["spec"]["storage"].as_object_mut().unwrap();
    if matches!(b, Base::Kubevirt) {
        storage.insert("infraSnapshotClass".into(), json!("px-csi-snapclass"));
        storage.insert("guestSnapshotClass".into(), json!("px-kubevirt-csi-snap"));
    }
    v
}

/// Characters that mean something to YAML, a shell or a terminal.
const HOSTILE: &str =
    "[a-z0-9 .:/@_=,%+~#!&*?|;<>(){}\\[\\]$`'\"\\\\\n\r\t\u{1b}\u{7}\u{85}\u{2028}-]{0,24}";

fn grammar(kind: Kind) -> BoxedStrategy<String> {
    let s = match kind {
        Kind::Name => "[a-z0-9]([a-z0-9.-]{0,14}[a-z0-9])?",
        Kind::Image => {
            "(quay\\.io|reg\\.example\\.com:5000|localhost)/[a-z0-9]{1,6}(/[a-z0-9]{1,4}([._]|__|-{1,2})[a-z0-9]{1,4}){0,2}(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,12}|@sha256:[0-9a-f]{64}|:[0-9]\\.[0-9]{1,2}@sha256:[0-9a-f]{64})"
        }
        Kind::Version => "v?[0-9]\\.[0-9]{1,2}(\\.[0-9]{1,2})?([-+][A-Za-z0-9_.]{1,8})?",
        Kind::Iface => "[A-Za-z0-9][A-Za-z0-9._-]{0,14}",
        Kind::SecretKey => "[-._a-zA-Z0-9]{1,20}",
        Kind::LabelValue => "([A-Za-z0-9]([A-Za-z0-9._-]{0,20}[A-Za-z0-9])?)?",
        Kind::Text => "[ -~]{0,40}",
        Kind::User => "[A-Za-z][A-Za-z0-9_-]{0,20}",
        Kind::Iqn => {
            "iqn\\.20[0-2][0-9]-(0[1-9]|1[0-2])\\.[a-z]{2,4}\\.[a-z0-9-]{1,8}(:[A-Za-z0-9.:_-]{1,16})?"
        }
    };
    s.boxed()
}

fn values(kind: Kind) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => grammar(kind),
        1 => HOSTILE.boxed(),
        1 => (grammar(kind), HOSTILE).prop_map(|(a, b)| format!("{a}{b}")),
        1 => "\\PC{0,16}".boxed(),
    ]
}

/// Splits `line` into words as a POSIX shell does (quote removal included), and
/// refuses what a shell would not take as plain word text: operators (`; | & < >
/// ( )`), expansions (`$`, backquotes, globs, `~` or `=` starting a word) and `#`
/// starting a comment, all unquoted.
fn shell_split(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur: Option<String> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if let Some(w) = cur.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => w.push(x),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x @ ('$' | '`' | '"' | '\\')) => w.push(x),
                            Some('\n') => {}
                            Some(x) => {
                                w.push('\\');
                                w.push(x);
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(x @ ('$' | '`')) => return Err(format!("expansion {x} in \"\"")),
                        Some(x) => w.push(x),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(x) => cur.get_or_insert_with(String::new).push(x),
                None => return Err("trailing backslash".into()),
            },
            ';' | '|' | '&' | '<' | '>' | '(' | ')' | '$' | '`' | '*' | '?' | '[' => {
                return Err(format!("unquoted {c:?} in {line:?}"));
            }
            '#' | '~' | '=' if cur.is_none() => {
                return Err(format!("unquoted {c:?} starting a word in {line:?}"));
            }
            x if x.is_control() => return Err(format!("control character {x:?}")),
            x => cur.get_or_insert_with(String::new).push(x),
        }
    }
    if let Some(w) = cur {
        words.push(w);
    }
    Ok(words)
}

#[test]
fn the_splitter_splits_like_a_shell() {
    assert_eq!(
        shell_split("a 'b c' d\\ e \"f\\\"g\" 'it'\\''s'").unwrap(),
        ["a", "b c", "d e", "f\"g", "it's"]
    );
    for bad in [
        "a;b", "a | b", "$(id)", "`id`", "a > f", "*", "~root", "=ls", "# x",
    ] {
        assert!(shell_split(bad).is_err(), "{bad}");
    }
}

/// The header lines before the document marker, and whether every one is a comment.
fn header_is_comments(text: &str) -> Result<(), TestCaseError> {
    let mut seen_marker = false;
    for line in text.lines() {
        if line == "---" {
            seen_marker = true;
            break;
        }
        prop_assert!(
            line.starts_with('#'),
            "header line {line:?} is not a comment"
        );
    }
    prop_assert!(seen_marker, "no document marker");
    Ok(())
}

/// Renders an accepted spec and checks every file and the hcp line.
fn rendered_as_meant(t: &TenantStorage) -> Result<(), TestCaseError> {
    let Ok(sizing) = px_topology::size(t, None) else {
        return Ok(());
    };
    let Ok(ms) = render(t, &sizing, &ArrayFacts::default(), RenderOptions::default()) else {
        return Ok(());
    };
    let steps = ms.iter().map(|m| m.order).max().unwrap_or(0);
    for m in &ms {
        let text = to_yaml(m, steps).map_err(|e| TestCaseError::fail(e.to_string()))?;
        header_is_comments(&text)?;
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
            .map_err(|e| TestCaseError::fail(format!("{}: {e}", m.file_name)))?;
        let docs: Vec<&Value> = docs.iter().filter(|d| !d.is_null()).collect();
        prop_assert_eq!(
            docs.len(),
            1,
            "{} holds {} documents",
            m.file_name,
            docs.len()
        );
        prop_assert_eq!(docs[0], &m.body, "{} reads back differently", &m.file_name);
        if m.form == Form::Resource {
            prop_assert_eq!(docs[0]["kind"].as_str(), Some(m.kind.as_str()));
        }
    }
    let storage = driver_for(t).guest_storage(t);
    if let Ok(words) = hcp_create_command(t, &storage) {
        let line = shell_join(&words);
        let split = shell_split(&line).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&split, &words, "{}", line);
        let hc = ms.iter().find(|m| m.kind == "HostedCluster").unwrap();
        let note = format!("Same cluster with hcp: {line}");
        prop_assert!(hc.purpose.contains(&note));
    }
    Ok(())
}

#[test]
fn every_accepted_string_renders_exactly_the_documents_pxfa_means() {
    let mut never_accepted = Vec::new();
    for &(ptr, b, kind) in FIELDS {
        let start = base(b);
        assert!(start.pointer(ptr).is_some(), "{ptr} is not in {b:?}");
        let accepted = std::cell::Cell::new(0u32);
        let mut runner = TestRunner::new(Config {
            cases: CASES,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&values(kind), |value| {
            let mut v = start.clone();
            *v.pointer_mut(ptr).unwrap() = json!(value);
            let Ok(t) = from_value(v) else {
                return Ok(());
            };
            if !t.validate().is_empty() {
                return Ok(());
            }
            accepted.set(accepted.get() + 1);
            rendered_as_meant(&t)
        });
        if let Err(e) = result {
            panic!("{ptr}: {e}");
        }
        if accepted.get() == 0 {
            never_accepted.push(ptr);
        }
    }
    assert!(
        never_accepted.is_empty(),
        "no generated value was accepted for {never_accepted:?}: the test checked nothing there"
    );
}
