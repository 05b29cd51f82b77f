//! Shared by the converge, render, schema and golden tests: the example specs and
//! their sizing; [`tenant`] is the hand-built tenant of the converge tests.

use std::path::PathBuf;

use px_topology::spec::{Provisioning, TenantStorage, Version, load_spec};
use px_topology::{ArrayFacts, Manifest, RenderOptions, Sizing, render};

pub(crate) mod tenant;

/// The examples (`tenant-<name>.yaml`): one per mode, plus variants (cloud-drive
/// over NVMe/TCP, cloud-drive in a realm), in a fixed order.
pub(crate) const MODES: [&str; 5] = [
    "cloud-drive",
    "cloud-drive-nvme",
    "cloud-drive-realm",
    "direct-access",
    "kubevirt-csi",
];

/// `examples/tenant-<mode>.yaml` of the workspace.
pub(crate) fn example_path(mode: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/tenant-{mode}.yaml"))
}

/// Every example, parsed and validated.
pub(crate) fn example_specs() -> Vec<(&'static str, TenantStorage)> {
    MODES
        .iter()
        .map(|m| {
            let spec = load_spec(example_path(m)).unwrap_or_else(|e| panic!("example {m}: {e}"));
            (*m, spec)
        })
        .collect()
}

/// The sizing of a valid spec.
pub(crate) fn sizing(spec: &TenantStorage) -> Sizing {
    px_topology::size(spec, None).unwrap_or_else(|e| panic!("sizing {}: {e}", spec.tenant_name()))
}

/// The example of one mode, parsed and validated.
pub(crate) fn example(mode: &str) -> TenantStorage {
    example_specs()
        .into_iter()
        .find(|(m, _)| *m == mode)
        .map(|(_, spec)| spec)
        .unwrap_or_else(|| panic!("no example for {mode}"))
}

/// The manifests of a spec with its own sizing, no array facts and the default
/// options (what `pxfa render` writes).
pub(crate) fn rendered(spec: &TenantStorage) -> Vec<Manifest> {
    render(
        spec,
        &sizing(spec),
        &ArrayFacts::default(),
        RenderOptions::default(),
    )
    .unwrap_or_else(|e| panic!("render {}: {e}", spec.tenant_name()))
}

/// The direct-access example switched to pre-created volumes (import), which needs
/// Portworx 3.7 with the FA/FB driver.
pub(crate) fn as_import(mut spec: TenantStorage) -> TenantStorage {
    spec.spec.portworx.version = Version::new(3, 7, 0);
    spec.spec.management.fa_fb_driver = true;
    spec.spec.storage.provisioning = Provisioning::Import;
    spec
}

/// The array objects `spec` needs (its driver's desired state at its sizing).
pub(crate) fn desired_of(spec: &TenantStorage) -> px_topology::DesiredState {
    px_topology::driver_for(spec)
        .desired_state(spec, &sizing(spec))
        .unwrap_or_else(|e| panic!("desired state of {}: {e}", spec.tenant_name()))
}

/// A mock array from `seed`, its clock 30 days after the epoch (so that SafeMode and
/// eradication timers have room in both directions).
pub(crate) fn seeded_mock(seed: flasharray_mock::Seed) -> flasharray_mock::MockArray {
    flasharray_mock::MockArray::builder()
        .clock(flasharray_mock::MockClock::manual(30 * 24 * 3600 * 1000))
        .seed(seed)
        .build()
}
