//! A simulated management Portworx for FlashArray Direct Access dynamic
//! provisioning, so that a tenant's flow converges without a cluster.
//!
//! On a real management cluster, a claim from the tenant's FADA StorageClass
//! (`pure_fa_pod_name` = the tenant's pod) makes the management Portworx create the
//! array volume when the claim binds; the PV is `pvc-<claim uid>` and the volume
//! `<pod>::px_<cluster-uuid-prefix>-pvc-<claim uid>` (the naming pxfa's
//! `plan::is_fada_volume_for` documents). [`SimFada`] does the same through any
//! [`FlashArray`] (the in-memory [`crate::MockArray`] or a `RestArray` talking to the
//! HTTPS simulator): idempotent, with a claim uid derived from the claim's namespace
//! and name, so that the same claim always gets the same volume. It connects
//! nothing: Portworx connects a FADA volume only when a VM using it starts.
//!
//! It knows nothing of pxfa's types (the mock does not depend on px-topology);
//! callers adapt [`SimFada::bound`] to px-topology's `DriveLocator`.

use std::collections::{BTreeMap, BTreeSet};

use flasharray::models::VolumePost;
use flasharray::{FlashArray, FlashArrayExt, PodName, Result, Size, VolumeName};

use crate::seed::MGMT_CLUSTER_PREFIX;

/// A management claim the simulated Portworx provisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimClaim {
    /// The claim's namespace on the management cluster; with `name` it fixes the claim uid,
    /// so the same claim always gets the same volume.
    pub namespace: String,
    /// The claim's name within `namespace`.
    pub name: String,
    /// Requested size; the volume is provisioned at exactly this size.
    pub size: Size,
}

/// A claim bound to its PV.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimBinding {
    /// Claim namespace.
    pub namespace: String,
    /// Claim name.
    pub name: String,
    /// The PV name, `pvc-<claim uid>`.
    pub pv: String,
}

/// What [`SimFada::provision`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provisioned {
    /// Volumes created by this call (full names).
    pub created: Vec<String>,
    /// Every claim's binding (the new and the existing ones).
    pub bindings: Vec<SimBinding>,
}

/// The simulated management Portworx (see the module text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimFada {
    cluster_prefix: String,
}

impl Default for SimFada {
    fn default() -> Self {
        SimFada::new()
    }
}

/// FNV-1a over `bytes` from `seed`: a stable hash with no dependency (the uid only
/// needs to be deterministic and spread, not cryptographic).
fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(seed, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl SimFada {
    /// The management Portworx of the brownfield seed (cluster UUID prefix
    /// [`MGMT_CLUSTER_PREFIX`]).
    pub fn new() -> Self {
        SimFada::with_cluster_prefix(MGMT_CLUSTER_PREFIX)
    }

    /// A management Portworx whose cluster UUID starts with `prefix`.
    pub fn with_cluster_prefix(prefix: &str) -> Self {
        SimFada {
            cluster_prefix: prefix.to_string(),
        }
    }

    /// The claim's uid, derived from `namespace/name` in the UUID text form
    /// Kubernetes uses (version nibble 8: name-based, implementation-defined).
    pub fn claim_uid(namespace: &str, name: &str) -> String {
        let key = format!("{namespace}/{name}");
        let hi = fnv1a(0xcbf2_9ce4_8422_2325, key.as_bytes());
        let lo = fnv1a(hi ^ 0x9e37_79b9_7f4a_7c15, key.as_bytes());
        let hi = (hi & !0xf000) | 0x8000;
        let lo = (lo & !(0b11 << 62)) | (0b10 << 62);
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            hi >> 32,
            (hi >> 16) & 0xffff,
            hi & 0xffff,
            lo >> 48,
            lo & 0xffff_ffff_ffff
        )
    }

    /// The PV a claim binds: `pvc-<claim uid>`.
    pub fn pv_name(namespace: &str, name: &str) -> String {
        format!("pvc-{}", SimFada::claim_uid(namespace, name))
    }

    /// The array volume the claim's binding creates, in `pod` when the class names
    /// one.
    pub fn volume_name(&self, pod: Option<&PodName>, namespace: &str, name: &str) -> String {
        let short = format!(
            "px_{}-{}",
            self.cluster_prefix,
            SimFada::pv_name(namespace, name)
        );
        match pod {
            Some(p) => format!("{p}::{short}"),
            None => short,
        }
    }

    /// Binds every claim: creates its volume of the claim's size in `pod` unless it
    /// exists already (destroyed ones included, as Portworx would not make a second
    /// volume for a bound PV). The pod must exist.
    pub async fn provision(
        &self,
        array: &dyn FlashArray,
        pod: Option<&PodName>,
        claims: &[SimClaim],
    ) -> Result<Provisioned> {
        let names: Vec<String> = claims
            .iter()
            .map(|c| self.volume_name(pod, &c.namespace, &c.name))
            .collect();
        let existing: BTreeSet<String> = array
            .lookup_volumes(&names)
            .await?
            .into_iter()
            .map(|v| v.name.to_ascii_lowercase())
            .collect();
        let mut by_size: BTreeMap<u64, Vec<VolumeName>> = BTreeMap::new();
        let mut out = Provisioned::default();
        for (c, n) in claims.iter().zip(&names) {
            if !existing.contains(&n.to_ascii_lowercase())
                && !out.created.iter().any(|x| x.eq_ignore_ascii_case(n))
            {
                by_size
                    .entry(c.size.as_u64())
                    .or_default()
                    .push(VolumeName::new(n.as_str())?);
                out.created.push(n.clone());
            }
            out.bindings.push(SimBinding {
                namespace: c.namespace.clone(),
                name: c.name.clone(),
                pv: SimFada::pv_name(&c.namespace, &c.name),
            });
        }
        for (size, names) in by_size {
            let body = VolumePost::default().with_provisioned(size);
            array.create_volumes(&names, &body).await?;
        }
        Ok(out)
    }

    /// The bindings of the claims (namespace, name) whose volume exists in `pod`:
    /// a claim is bound once the simulated Portworx provisioned it.
    pub async fn bound(
        &self,
        array: &dyn FlashArray,
        pod: Option<&PodName>,
        claims: &[(String, String)],
    ) -> Result<Vec<SimBinding>> {
        let names: Vec<String> = claims
            .iter()
            .map(|(ns, n)| self.volume_name(pod, ns, n))
            .collect();
        let existing: BTreeSet<String> = array
            .lookup_volumes(&names)
            .await?
            .into_iter()
            .map(|v| v.name.to_ascii_lowercase())
            .collect();
        Ok(claims
            .iter()
            .zip(&names)
            .filter(|(_, v)| existing.contains(&v.to_ascii_lowercase()))
            .map(|((ns, n), _)| SimBinding {
                namespace: ns.clone(),
                name: n.clone(),
                pv: SimFada::pv_name(ns, n),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_are_stable_uuid_text_and_differ_per_claim() {
        let a = SimFada::claim_uid("clusters-tenant-demo", "tenant-demo-w00-data0");
        assert_eq!(
            a,
            SimFada::claim_uid("clusters-tenant-demo", "tenant-demo-w00-data0")
        );
        assert_ne!(
            a,
            SimFada::claim_uid("clusters-tenant-demo", "tenant-demo-w01-data0")
        );
        let parts: Vec<usize> = a.split('-').map(str::len).collect();
        assert_eq!(parts, [8, 4, 4, 4, 12], "{a}");
        assert_eq!(&a[14..15], "8", "version nibble: {a}");
        let pod = PodName::new("tenant-demo").unwrap();
        let v = SimFada::new().volume_name(Some(&pod), "ns", "c");
        assert!(v.starts_with("tenant-demo::px_5c1e7a3b-pvc-"), "{v}");
        assert!(v.len() <= 63 + "tenant-demo::".len(), "{v}");
    }
}
