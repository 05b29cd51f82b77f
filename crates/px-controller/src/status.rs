//! The `status` the controller writes on a TenantStorage object: typed conditions
//! (the CRD's `status` schema in px-topology `crd.rs` lists the same types), counts of
//! the tenant's array objects and the last plan's summary.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One condition type; the set is closed so a typo cannot invent a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ConditionType {
    /// The spec parses and validates.
    Valid,
    /// The array holds every object the spec needs.
    ArrayReady,
    /// The management manifests are applied and ready.
    ManagementApplied,
    /// The tenant manifests are applied and ready.
    TenantApplied,
    /// Everything above: the tenant is converged.
    Ready,
    /// The array differed from the spec without a spec change.
    Drifted,
    /// Something outside the spec stops the controller (credentials, array, cluster).
    Degraded,
}

/// `True`, `False` or `Unknown`, as Kubernetes spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConditionStatus {
    /// Holds.
    True,
    /// Does not hold.
    False,
    /// Not known (not checked yet).
    Unknown,
}

impl From<bool> for ConditionStatus {
    fn from(b: bool) -> Self {
        if b {
            ConditionStatus::True
        } else {
            ConditionStatus::False
        }
    }
}

/// One entry of `status.conditions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Which condition.
    #[serde(rename = "type")]
    pub type_: ConditionType,
    /// Whether it holds.
    pub status: ConditionStatus,
    /// CamelCase machine-readable cause (`ApprovalPending`, `ArrayUnreachable`).
    pub reason: String,
    /// What happened, naming the object and the array request id on failure.
    pub message: String,
    /// The object generation this was computed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// When `status` last changed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

/// Counts of the last plan, and its pending changes when it waits for approval.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSummary {
    /// Objects to create.
    pub create: u64,
    /// Objects to change (recover included).
    pub update: u64,
    /// Objects to delete.
    pub delete: u64,
    /// Objects already as specified.
    pub noop: u64,
    /// One line per change not yet applied (`spec.apply: manual`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
}

impl PlanSummary {
    /// The summary of a plan; `pending` lists its actionable changes when `waiting`.
    pub fn of(plan: &px_topology::Plan, waiting: bool) -> Self {
        PlanSummary {
            create: plan.summary.create as u64,
            update: plan.summary.update as u64,
            delete: plan.summary.delete as u64,
            noop: plan.summary.noop as u64,
            pending: if waiting {
                plan.actionable().map(|c| c.to_line()).collect()
            } else {
                Vec::new()
            },
        }
    }
}

/// The whole `status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TenantStatus {
    /// The generation the conditions describe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions, one per type at most.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The tenant's array objects by kind (`volume: 8`), as last observed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub array_objects: BTreeMap<String, u64>,
    /// The last plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_plan: Option<PlanSummary>,
}

impl TenantStatus {
    /// Reads `status` from an object's JSON; anything unreadable is an empty status
    /// (the controller rewrites it whole).
    pub fn from_object(obj: &serde_json::Value) -> Self {
        obj.get("status")
            .cloned()
            .and_then(|s| serde_json::from_value(s).ok())
            .unwrap_or_default()
    }

    /// The condition of `type_`, if set.
    pub fn get(&self, type_: ConditionType) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    /// Whether `type_` is set and `True`.
    pub fn is_true(&self, type_: ConditionType) -> bool {
        self.get(type_)
            .is_some_and(|c| c.status == ConditionStatus::True)
    }

    /// Sets a condition, keeping its transition time when the status did not change,
    /// and keeps the list ordered by type.
    pub fn set(
        &mut self,
        type_: ConditionType,
        status: impl Into<ConditionStatus>,
        reason: &str,
        message: impl Into<String>,
        now: &str,
    ) {
        let status = status.into();
        let transition = match self.get(type_) {
            Some(old) if old.status == status => old.last_transition_time.clone(),
            _ => Some(now.to_string()),
        };
        self.conditions.retain(|c| c.type_ != type_);
        self.conditions.push(Condition {
            type_,
            status,
            reason: reason.to_string(),
            message: message.into(),
            observed_generation: self.observed_generation,
            last_transition_time: transition,
        });
        self.conditions.sort_by_key(|c| c.type_);
    }
}

/// Now, RFC 3339 in UTC, as condition times are written.
pub(crate) fn now() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .round(k8s_openapi::jiff::Unit::Second)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_time_moves_only_on_change() {
        let mut s = TenantStatus {
            observed_generation: Some(2),
            ..TenantStatus::default()
        };
        s.set(ConditionType::Ready, false, "Pending", "x", "t1");
        s.set(ConditionType::Ready, false, "StillPending", "y", "t2");
        let c = s.get(ConditionType::Ready).unwrap();
        assert_eq!(c.last_transition_time.as_deref(), Some("t1"));
        assert_eq!(c.reason, "StillPending");
        s.set(ConditionType::Ready, true, "Converged", "z", "t3");
        assert_eq!(
            s.get(ConditionType::Ready)
                .unwrap()
                .last_transition_time
                .as_deref(),
            Some("t3")
        );
        s.set(ConditionType::Valid, true, "Valid", "ok", "t3");
        assert_eq!(
            s.conditions[0].type_,
            ConditionType::Valid,
            "ordered by type"
        );
        assert_eq!(s.conditions.len(), 2);
    }

    #[test]
    fn round_trips_through_json() {
        let mut s = TenantStatus {
            observed_generation: Some(4),
            ..TenantStatus::default()
        };
        s.set(ConditionType::Degraded, true, "ArrayUnreachable", "m", "t");
        s.array_objects.insert("volume".into(), 3);
        s.last_plan = Some(PlanSummary {
            create: 1,
            pending: vec!["+ volume v".into()],
            ..PlanSummary::default()
        });
        let json = serde_json::json!({ "status": serde_json::to_value(&s).unwrap() });
        assert_eq!(json["status"]["conditions"][0]["type"], "Degraded");
        assert_eq!(json["status"]["conditions"][0]["status"], "True");
        assert_eq!(TenantStatus::from_object(&json), s);
    }
}
