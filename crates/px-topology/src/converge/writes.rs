//! What an apply did on the array, counted per successful write operation and per
//! object it wrote, so that a report says what happened rather than how many plan
//! changes it touched.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;

use super::ops::Op;

/// Objects written on the array by successful operations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WriteCounts {
    /// Realms, access policies, realm users, pods, host groups, hosts, volumes and
    /// API tokens created.
    pub created: usize,
    /// Hosts patched and volumes resized.
    pub updated: usize,
    /// Volumes and pods soft-destroyed, eradicated or deleted (hosts, groups, tokens).
    pub destroyed: usize,
    /// Volumes and pods recovered.
    pub recovered: usize,
    /// Objects whose tags were set after their creation.
    pub tagged: usize,
    /// Volumes connected.
    pub connected: usize,
    /// Volumes disconnected.
    pub disconnected: usize,
    /// Hosts that joined or left a group.
    pub memberships: usize,
    /// Pod quota changes.
    pub quota: usize,
}

impl WriteCounts {
    /// Counts one successful operation.
    pub(crate) fn add(&mut self, op: &Op) {
        match op {
            Op::CreatePod { .. } | Op::CreateHost { .. } | Op::CreateToken { .. } => {
                self.created += 1
            }
            Op::CreateHostGroups { names, .. } => self.created += names.len(),
            Op::CreateVolumes { items } => self.created += items.len(),
            Op::RecoverPods { names } => self.recovered += names.len(),
            Op::RecoverVolumes { names } => self.recovered += names.len(),
            Op::SetPodQuota { .. } => self.quota += 1,
            Op::DestroyPods { names } | Op::EradicatePods { names } => {
                self.destroyed += names.len()
            }
            Op::DestroyVolumes { names } | Op::EradicateVolumes { names } => {
                self.destroyed += names.len()
            }
            Op::DeleteHostGroups { names } => self.destroyed += names.len(),
            Op::DeleteHosts { names } => self.destroyed += names.len(),
            Op::DeleteToken { .. } => self.destroyed += 1,
            Op::PatchHost { .. } => self.updated += 1,
            Op::ResizeVolumes { names, .. } => self.updated += names.len(),
            Op::AddMembers { hosts, .. } | Op::RemoveMembers { hosts, .. } => {
                self.memberships += hosts.len()
            }
            Op::SetTags { tags, .. } => {
                let objects: BTreeSet<String> = tags
                    .iter()
                    .filter_map(|t| t.resource.name.as_deref())
                    .map(str::to_ascii_lowercase)
                    .collect();
                self.tagged += objects.len();
            }
            Op::Connect { volumes, .. } => self.connected += volumes.len(),
            Op::Disconnect { volumes, .. } => self.disconnected += volumes.len(),
            Op::Realm(r) => {
                let (created, destroyed, recovered) = r.counts();
                self.created += created;
                self.destroyed += destroyed;
                self.recovered += recovered;
            }
        }
    }

    /// Every object written.
    pub fn total(&self) -> usize {
        self.created
            + self.updated
            + self.destroyed
            + self.recovered
            + self.tagged
            + self.connected
            + self.disconnected
            + self.memberships
            + self.quota
    }

    /// `Wrote 5 objects on the array (4 created, 1 tagged); 0 failed.`
    pub fn summary_line(&self, failed: usize) -> String {
        let parts: Vec<String> = [
            (self.created, "created"),
            (self.updated, "updated"),
            (self.destroyed, "destroyed"),
            (self.recovered, "recovered"),
            (self.tagged, "tagged"),
            (self.connected, "connected"),
            (self.disconnected, "disconnected"),
            (self.memberships, "memberships"),
            (self.quota, "quota"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect();
        let mut s = format!("Wrote {} objects on the array", self.total());
        if !parts.is_empty() {
            let _ = write!(s, " ({})", parts.join(", "));
        }
        let _ = write!(s, "; {failed} failed.");
        s
    }
}

#[cfg(test)]
mod tests {
    use flasharray::models::{Tag, VolumeBatchPost};
    use flasharray::{TagResource, VolumeName};

    use super::*;

    #[test]
    fn counts_objects_not_operations() {
        let mut w = WriteCounts::default();
        w.add(&Op::CreateVolumes {
            items: ["a", "b"]
                .map(|n| VolumeBatchPost::new(VolumeName::new(n).unwrap(), 1 << 30))
                .to_vec(),
        });
        w.add(&Op::SetTags {
            resource: TagResource::Volume,
            tags: vec![
                Tag::new("a", "pxfa.io", "k1", "v"),
                Tag::new("A", "pxfa.io", "k2", "v"),
            ],
        });
        assert_eq!((w.created, w.tagged, w.total()), (2, 1, 3));
        assert_eq!(
            w.summary_line(0),
            "Wrote 3 objects on the array (2 created, 1 tagged); 0 failed."
        );
        assert_eq!(
            WriteCounts::default().summary_line(1),
            "Wrote 0 objects on the array; 1 failed."
        );
    }
}
