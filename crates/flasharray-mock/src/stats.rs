//! Call counting, so benchmarks and tests can assert how many round trips work took.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::op::Op;

/// Calls made to a mock array since it was built or `reset_stats` was called.
/// Faulted calls count too: they were round trips.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallStats {
    /// Every call, faulted ones included: `reads + writes`.
    pub calls: u64,
    /// Calls that only read.
    pub reads: u64,
    /// Calls that may change the array.
    pub writes: u64,
    /// Calls per operation; operations never called are absent.
    pub per_op: BTreeMap<Op, u64>,
}

impl CallStats {
    pub(crate) fn record(&mut self, op: Op) {
        self.calls += 1;
        if op.is_write() {
            self.writes += 1;
        } else {
            self.reads += 1;
        }
        *self.per_op.entry(op).or_default() += 1;
    }

    /// Calls of one operation.
    pub fn op(&self, op: Op) -> u64 {
        self.per_op.get(&op).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_split_by_kind_and_operation_and_serialize_by_method_name() {
        let mut s = CallStats::default();
        s.record(Op::ListVolumes);
        s.record(Op::ListVolumes);
        s.record(Op::CreateVolumes);
        assert_eq!((s.calls, s.reads, s.writes), (3, 2, 1));
        assert_eq!(s.op(Op::ListVolumes), 2);
        assert_eq!(s.op(Op::CreateVolumes), 1);
        assert_eq!(s.op(Op::DeleteHosts), 0);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["per_op"]["list_volumes"], 2);
        let back: CallStats = serde_json::from_value(json).unwrap();
        assert_eq!(back, s);
    }
}
