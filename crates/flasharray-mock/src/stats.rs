//! Call counting, so benchmarks and tests can assert how many round trips work took.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Calls made to a mock array since it was built or `reset_stats` was called.
/// Faulted calls count too: they were round trips.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallStats {
    /// Every call.
    pub calls: u64,
    /// Calls that only read.
    pub reads: u64,
    /// Calls that may change the array.
    pub writes: u64,
    /// Calls per trait method name (`create_volumes`, `list_hosts`, ...).
    pub per_op: BTreeMap<String, u64>,
}

impl CallStats {
    pub(crate) fn record(&mut self, op: &str, is_write: bool) {
        self.calls += 1;
        if is_write {
            self.writes += 1;
        } else {
            self.reads += 1;
        }
        *self.per_op.entry(op.to_string()).or_default() += 1;
    }

    /// Calls of one trait method.
    pub fn op(&self, name: &str) -> u64 {
        self.per_op.get(name).copied().unwrap_or(0)
    }
}
