//! What a rule reports.

use std::fmt;

use serde::Serialize;

/// How bad a finding is. Ordered: `Info < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing to fix.
    Info,
    /// Likely to hurt; fix unless you know why not.
    Warning,
    /// Known to break the tenant's storage or lose data; must be fixed.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// A rule in the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Stable id, `PXFA` + three digits.
    pub id: &'static str,
    /// The severity the rule usually reports with (some findings are downgraded, e.g.
    /// when a version is unknown rather than known bad).
    pub severity: Severity,
    /// One line: what the rule checks.
    pub title: &'static str,
}

impl Rule {
    /// A catalogue entry.
    pub const fn new(id: &'static str, severity: Severity, title: &'static str) -> Self {
        Rule {
            id,
            severity,
            title,
        }
    }
}

/// One problem found by a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Rule id (`PXFA001`).
    pub rule: &'static str,
    /// The rule's severity: an error fails `pxfa lint`, a warning does not.
    pub severity: Severity,
    /// What it is about: a spec field path (`spec.hostedCluster.cores`) or a manifest
    /// (`NodePool/clusters/tenant1-workers`).
    pub object: String,
    /// Why it matters and how to fix it.
    pub message: String,
    /// The file it was found in, when linting files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Finding {
    /// A finding not yet tied to a file. Control characters in the object (a
    /// manifest's kind or name as written) and the message are escaped: findings
    /// are printed, and a linted file must never drive the terminal.
    pub fn new(
        rule: &'static str,
        severity: Severity,
        object: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        let (object, message) = (object.into(), message.into());
        Finding {
            rule,
            severity,
            object: crate::spec::escape_unprintable(&object).into_owned(),
            message: crate::spec::escape_unprintable(&message).into_owned(),
            source: None,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.source {
            write!(f, "{s}: ")?;
        }
        write!(
            f,
            "{} {} {}: {}",
            self.severity, self.rule, self.object, self.message
        )
    }
}
