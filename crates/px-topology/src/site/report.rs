//! `SiteReport`: what `pxfa doctor -o json|yaml` prints, `docs/site-report.schema.json`
//! describes and `render --site` reads back (its `facts`). Fields are only ever added
//! within one `apiVersion`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::facts::SiteFacts;

/// The report's `apiVersion`.
pub(super) const SITE_REPORT_API_VERSION: &str = "pxfa.io/v1alpha1";
/// The report's `kind`.
pub(super) const SITE_REPORT_KIND: &str = "SiteReport";

/// A check's verdict.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// As the bundle needs it.
    Ok,
    /// It could not be read, so it is not known to be right.
    Unknown,
    /// It works, with a caveat or a step the bundle takes care of.
    Warn,
    /// The bundle will not work until it is fixed.
    Fail,
}

impl CheckStatus {
    /// `ok`, `unknown`, `warn`, `fail`.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Ok => "ok",
            CheckStatus::Unknown => "unknown",
            CheckStatus::Warn => "warn",
            CheckStatus::Fail => "fail",
        }
    }
}

/// Which part of the site a check is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// The FlashArray.
    Array,
    /// The management cluster.
    Management,
    /// The tenant (hosted) cluster.
    Tenant,
}

/// One prerequisite, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// What was checked: the array, the management cluster or the tenant cluster.
    pub layer: Layer,
    /// A stable name (`hotplug-gate`, `uplink-mtu`).
    pub name: String,
    /// Whether the prerequisite holds (ok), holds with a caveat (warn), fails, or
    /// could not be read (unknown).
    pub status: CheckStatus,
    /// What was read: the object and the field.
    pub read: String,
    /// What was found there.
    pub found: String,
    /// What to do; `null` when the check is ok.
    pub fix: Option<String>,
}

impl Check {
    /// A check of `layer` named `name`, reading `read`.
    pub(crate) fn of(layer: Layer, name: &str, read: impl Into<String>) -> CheckBuilder {
        CheckBuilder {
            layer,
            name: name.to_string(),
            read: read.into(),
        }
    }
}

/// The first half of a [`Check`]: what it reads.
pub(crate) struct CheckBuilder {
    layer: Layer,
    name: String,
    read: String,
}

impl CheckBuilder {
    fn done(self, status: CheckStatus, found: String, fix: Option<String>) -> Check {
        Check {
            layer: self.layer,
            name: self.name,
            status,
            read: self.read,
            found,
            fix,
        }
    }

    /// As needed.
    pub(crate) fn ok(self, found: impl Into<String>) -> Check {
        self.done(CheckStatus::Ok, found.into(), None)
    }

    /// A caveat, and what to do about it.
    pub(crate) fn warn(self, found: impl Into<String>, fix: impl Into<String>) -> Check {
        self.done(CheckStatus::Warn, found.into(), Some(fix.into()))
    }

    /// Broken, and the fix.
    pub(crate) fn fail(self, found: impl Into<String>, fix: impl Into<String>) -> Check {
        self.done(CheckStatus::Fail, found.into(), Some(fix.into()))
    }

    /// Not readable: `why`, and how to make it readable.
    pub(crate) fn unknown(self, why: impl Into<String>, fix: impl Into<String>) -> Check {
        self.done(CheckStatus::Unknown, why.into(), Some(fix.into()))
    }
}

/// An array credential found on a cluster, and whether it belongs there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Credential {
    /// The layer that holds it.
    pub layer: Layer,
    /// `Secret <namespace>/<name>`.
    pub holder: String,
    /// What it is (`pure.json`, and whose token when known).
    pub kind: String,
    /// What this layer should hold instead, when it should not hold this.
    pub problem: Option<String>,
}

/// Counts per status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Checks that are ok.
    pub ok: usize,
    /// Checks that could not be read.
    pub unknown: usize,
    /// Checks with a caveat.
    pub warn: usize,
    /// Checks that fail.
    pub fail: usize,
}

/// `pxfa doctor`'s report: the facts read, and every check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SiteReport {
    /// Always `pxfa.io/v1alpha1`.
    #[schemars(schema_with = "api_version_schema")]
    pub api_version: String,
    /// Always `SiteReport`.
    #[schemars(schema_with = "kind_schema")]
    pub kind: String,
    /// The tenant the checks are for.
    pub tenant: String,
    /// The site facts read (what `render --site` uses).
    pub facts: SiteFacts,
    /// Every check, array first, then the management and the tenant cluster.
    pub checks: Vec<Check>,
    /// The array credentials each layer holds.
    pub credentials: Vec<Credential>,
    /// Counts per status.
    pub summary: Summary,
}

impl SiteReport {
    /// The report of `checks` for `tenant`.
    pub fn new(
        tenant: &str,
        facts: SiteFacts,
        checks: Vec<Check>,
        credentials: Vec<Credential>,
    ) -> SiteReport {
        let mut summary = Summary::default();
        for c in &checks {
            match c.status {
                CheckStatus::Ok => summary.ok += 1,
                CheckStatus::Unknown => summary.unknown += 1,
                CheckStatus::Warn => summary.warn += 1,
                CheckStatus::Fail => summary.fail += 1,
            }
        }
        SiteReport {
            api_version: SITE_REPORT_API_VERSION.to_string(),
            kind: SITE_REPORT_KIND.to_string(),
            tenant: tenant.to_string(),
            facts,
            checks,
            credentials,
            summary,
        }
    }

    /// The worst verdict; a misplaced credential counts as a failure.
    pub fn worst(&self) -> CheckStatus {
        let checks = self.checks.iter().map(|c| c.status);
        let creds = self
            .credentials
            .iter()
            .filter(|c| c.problem.is_some())
            .map(|_| CheckStatus::Fail);
        checks.chain(creds).max().unwrap_or(CheckStatus::Ok)
    }

    /// The JSON Schema (draft 2020-12), as committed in `docs/site-report.schema.json`.
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(SiteReport)).unwrap_or_default()
    }

    /// The facts of a report read back (`render --site`): YAML or JSON, checked to be a
    /// `SiteReport` of this `apiVersion`.
    pub fn facts_from_text(text: &str) -> Result<SiteFacts, String> {
        let value: serde_json::Value =
            serde_saphyr::from_str_with_options(text, crate::spec::yaml_options())
                .map_err(|e| format!("not valid YAML: {e}"))?;
        let field = |k: &str| value.get(k).and_then(serde_json::Value::as_str);
        if field("kind") != Some(SITE_REPORT_KIND)
            || field("apiVersion") != Some(SITE_REPORT_API_VERSION)
        {
            return Err(format!(
                "not a {SITE_REPORT_KIND} (apiVersion {SITE_REPORT_API_VERSION}): write one with `pxfa doctor -o yaml`"
            ));
        }
        let facts = value.get("facts").cloned().unwrap_or_default();
        serde_path_to_error::deserialize(facts)
            .map_err(|e| format!("facts.{}: {}", e.path(), e.inner()))
    }
}

fn api_version_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "const": SITE_REPORT_API_VERSION })
}

fn kind_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "const": SITE_REPORT_KIND })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::HotplugGate;

    /// `docs/site-report.schema.json` is what schemars generates from the types
    /// (regenerate with `PXFA_WRITE_SCHEMAS=1`), and a report validates against it.
    #[test]
    fn site_report_schema_is_committed() {
        let file = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/site-report.schema.json");
        let generated = serde_json::to_string_pretty(&SiteReport::json_schema()).unwrap() + "\n";
        if std::env::var_os("PXFA_WRITE_SCHEMAS").is_some() {
            std::fs::write(&file, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(&file).expect("docs/site-report.schema.json");
        assert_eq!(
            committed, generated,
            "docs/site-report.schema.json is stale: run the test with PXFA_WRITE_SCHEMAS=1"
        );
        let checks = vec![Check::of(Layer::Array, "reachable", "x").fail("no", "fix it")];
        let r = SiteReport::new("t", SiteFacts::default(), checks, vec![]);
        let schema: serde_json::Value = serde_json::from_str(&committed).unwrap();
        let doc = serde_json::to_value(&r).unwrap();
        assert!(jsonschema::is_valid(&schema, &doc), "{doc}");
        assert!(!jsonschema::is_valid(
            &schema,
            &serde_json::json!({"kind": "Status"})
        ));
    }

    #[test]
    fn worst_and_round_trip() {
        let checks = vec![
            Check::of(Layer::Management, "a", "x").ok("fine"),
            Check::of(Layer::Management, "b", "y").warn("meh", "do z"),
        ];
        let facts = SiteFacts {
            hotplug_gate: Some(HotplugGate::DeclarativeHotplugVolumes),
            uplink_mtu: Some(1500),
            ..Default::default()
        };
        let r = SiteReport::new("t", facts.clone(), checks, vec![]);
        assert_eq!(r.worst(), CheckStatus::Warn);
        assert_eq!((r.summary.ok, r.summary.warn), (1, 1));
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(SiteReport::facts_from_text(&text).unwrap(), facts);
        let e = SiteReport::facts_from_text("kind: TenantStorage\n").unwrap_err();
        assert!(e.contains("pxfa doctor -o yaml"), "{e}");
        let e = SiteReport::facts_from_text(
            "apiVersion: pxfa.io/v1alpha1\nkind: SiteReport\nfacts: {uplinkMtu: lots}\n",
        )
        .unwrap_err();
        assert!(e.starts_with("facts.uplinkMtu"), "{e}");
        let mut bad = r.clone();
        bad.credentials.push(Credential {
            layer: Layer::Tenant,
            holder: "Secret portworx/px-pure-secret".into(),
            kind: "pure.json".into(),
            problem: Some("none expected".into()),
        });
        assert_eq!(bad.worst(), CheckStatus::Fail);
    }
}
