//! The site: what the management and tenant clusters and the array say about
//! themselves, and what `pxfa doctor` makes of it.
//!
//! px-cluster reads the clusters; the array is read here ([`read_array`]: through
//! the `FlashArray` trait and the pipeline's observe and plan, read only). Besides,
//! this module holds what was read (the views: [`ManagementView`],
//! [`TenantView`], [`ArrayView`]), the facts that drive rendering ([`SiteFacts`],
//! [`resolve`]), and the checks and their report ([`SiteReport`]). No
//! network code: apart from the read, every function here is pure, so the checks
//! are tested on plain values and the fake API server tests only test the reading.
//!
//! The facts are the ones `docs/design.md` lists under "Site facts": KubeVirt's
//! hotplug gate, the OpenShift and OpenShift Virtualization versions, the management
//! Portworx's version and FA/FB driver, the load balancer, the storage uplink's MTU
//! and the whereabouts reconciler.

mod array_checks;
mod array_read;
pub(crate) mod facts;
mod management_checks;
mod placement_checks;
mod report;
mod resolve;
mod snapshot_checks;
mod tenant_checks;
mod views;

pub use array_checks::array_checks;
pub use array_read::read_array;
pub use facts::{LoadBalancerFact, SiteFacts};
pub use management_checks::management_checks;
pub use placement_checks::shared_nodes;
pub use report::{Check, CheckStatus, Credential, Layer, SiteReport, Summary};
pub use resolve::{Contradiction, Contradictions, ResolveError, resolve, resolve_tenant};
pub use tenant_checks::tenant_checks;
pub use views::{
    ArrayView, CredentialView, EvictionView, MachineConfigView, ManagementView, MetallbView,
    ObjectRead, PoolView, Read, StorageClusterView, TenantView, UplinkView, WorkerPlacement,
};

/// The shipped example spec of `mode` (`examples/tenant-<mode>.yaml`), for the
/// checks' unit tests.
#[cfg(test)]
fn example_spec(mode: &str) -> crate::spec::TenantStorage {
    let path = format!(
        "{}/../../examples/tenant-{mode}.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    crate::parse_valid_spec(&std::fs::read_to_string(path).unwrap()).unwrap()
}
