//! The plan as a versioned document: what `pxfa plan -o json|yaml` prints and what
//! `docs/plan.schema.json` describes.
//!
//! Scripts key on `apiVersion` and `kind`; every field is always present (empty lists
//! and maps included). New fields are only ever added, so a script that ignores
//! unknown keys keeps working; a change that removes or retypes a field gets a new
//! `apiVersion`.

use schemars::JsonSchema;
use serde::Serialize;

use super::change::{Blocker, Change, Plan, Summary};

/// `apiVersion` of the plan document.
pub(super) const PLAN_API_VERSION: &str = "pxfa.io/v1alpha1";
/// `kind` of the plan document.
pub(super) const PLAN_KIND: &str = "Plan";

/// A [`Plan`] with its `apiVersion` and `kind`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanDocument<'a> {
    /// Always `pxfa.io/v1alpha1`.
    #[schemars(schema_with = "api_version_schema")]
    pub api_version: &'static str,
    /// Always `Plan`.
    #[schemars(schema_with = "kind_schema")]
    pub kind: &'static str,
    /// The tenant planned for, `namespace/name` (its `tenant-namespace` and
    /// `tenant` tag values).
    pub tenant: &'a str,
    /// Every change, no-ops included, in the order they take effect.
    pub changes: &'a [Change],
    /// Objects pxfa must not touch; any conflict blocks the whole plan.
    pub conflicts: &'a [Blocker],
    /// Changes refused because they would lose data; the rest still applies.
    pub refusals: &'a [Blocker],
    /// Counts per action.
    pub summary: Summary,
}

impl<'a> PlanDocument<'a> {
    /// The document of `plan`.
    pub fn new(plan: &'a Plan) -> Self {
        PlanDocument {
            api_version: PLAN_API_VERSION,
            kind: PLAN_KIND,
            tenant: &plan.tenant,
            changes: &plan.changes,
            conflicts: &plan.conflicts,
            refusals: &plan.refusals,
            summary: plan.summary,
        }
    }

    /// The JSON Schema (draft 2020-12) of the document, as committed in
    /// `docs/plan.schema.json`.
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(PlanDocument<'static>)).unwrap_or_default()
    }
}

fn api_version_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "const": PLAN_API_VERSION })
}

fn kind_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "const": PLAN_KIND })
}

impl Plan {
    /// The plan as its versioned document: `{"apiVersion": ..., "kind": "Plan",
    /// "changes": [...], "summary": {...}, ...}` (see [`PlanDocument`]).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self.document())
            .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }))
    }

    /// The plan with its `apiVersion` and `kind`, for JSON and YAML output.
    pub fn document(&self) -> PlanDocument<'_> {
        PlanDocument::new(self)
    }
}
