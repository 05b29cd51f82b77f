//! What a new mock array holds: nothing ([`Seed::Empty`]) or a production-like shared
//! array ([`Seed::Brownfield`]) on which a tenant must find its way among objects that
//! are not its own.
//!
//! The brownfield site is the one of the issue-10 design: a management Portworx with
//! its FlashArray Cloud Drives and FADA volumes, hosts for the management nodes whose
//! names are *not* the Kubernetes node names (plus one that happens to be, and a decoy
//! of another server called `worker-02`), a VMware host group, another pxfa tenant
//! (another namespace's), an earlier pxfa's tenant whose tags name no namespace, an
//! analytics pod, a destroyed volume and SafeMode. Every object goes through the
//! state's own create rules, so the seed cannot hold anything a real array would
//! refuse. Its management nodes match `examples/tenant-direct-access.yaml`.

use std::time::Duration;

use flasharray::models::{HostGroupPost, HostPost, PodPost, Tag, VolumePatch, VolumePost};
use flasharray::size::{GIB, TIB};
use flasharray::{
    ConnectionTarget, HostGroupName, HostName, PodName, Result, Size, TagResource, VolumeName,
};

use crate::foreign::PXFA_TAG_NAMESPACE;
use crate::state::{Ctx, State};

/// The contents a [`crate::MockArrayBuilder`] starts the array with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Seed {
    /// No objects (besides `pureuser`).
    #[default]
    Empty,
    /// A shared production array, see [`BrownfieldSeed`].
    Brownfield(BrownfieldSeed),
}

impl Seed {
    /// The brownfield site with its default fill.
    pub fn brownfield() -> Seed {
        Seed::Brownfield(BrownfieldSeed::default())
    }
}

/// The management Portworx cluster's UUID prefix in every volume name it made.
pub const MGMT_CLUSTER_PREFIX: &str = "5c1e7a3b";

/// The other pxfa tenant on the brownfield array (another team's: its namespace is
/// [`OTHER_TENANT_NAMESPACE`]).
pub const OTHER_TENANT: &str = "tenant-blue";
/// The namespace of [`OTHER_TENANT`]'s TenantStorage, as its tags record it.
pub const OTHER_TENANT_NAMESPACE: &str = "team-blue";
/// A tenant an earlier pxfa made, whose tags name no namespace (its pod only: a
/// cloud-drive tenant whose Portworx has made no drives yet). No namespace's until
/// claimed (`pxfa claim`).
pub const LEGACY_TENANT: &str = "tenant-gray";

/// A production-like shared array. The sizes and written bytes are fields so that a
/// test can make the array fuller or emptier than the default (≈ 73 TiB written of
/// 100 TiB).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrownfieldSeed {
    /// Array name (replaces the builder's name).
    pub array_name: String,
    /// Usable capacity (replaces the builder's capacity).
    pub capacity: Size,
    /// SafeMode on: manual eradication refused.
    pub safemode: bool,
    /// Size and written bytes of each management Cloud Drive data drive (3).
    pub mgmt_data: (Size, Size),
    /// Size and written bytes of each management metadata drive (3).
    pub mgmt_metadata: (Size, Size),
    /// Size and written bytes of each management FADA PVC volume (2).
    pub mgmt_pvc: (Size, Size),
    /// Size and written bytes of each of tenant-blue's data drives (3).
    pub blue_data: (Size, Size),
    /// Size of each of tenant-blue's metadata drives (3), written nothing.
    pub blue_metadata: Size,
    /// tenant-blue's pod quota.
    pub blue_quota: Size,
    /// Number of analytics volumes, their size and written bytes each.
    pub analytics: (usize, Size, Size),
    /// Size and written bytes of each VMware datastore (2).
    pub esx_datastore: (Size, Size),
    /// Size and written bytes of the destroyed `old-scratch`.
    pub old_scratch: (Size, Size),
    /// How long `old-scratch` has been destroyed (its `time_remaining` is the
    /// eradication delay minus this, on a clock that is past it).
    pub old_scratch_destroyed_for: Duration,
}

impl Default for BrownfieldSeed {
    fn default() -> Self {
        BrownfieldSeed {
            array_name: "fa-prod-01".into(),
            capacity: Size::tib(100),
            safemode: true,
            mgmt_data: (Size::tib(1), Size::gib(700)),
            mgmt_metadata: (Size::gib(64), Size::gib(8)),
            mgmt_pvc: (Size::gib(500), Size::gib(300)),
            blue_data: (Size::tib(4), Size::bytes(3 * TIB / 2)),
            blue_metadata: Size::gib(64),
            blue_quota: Size::tib(14),
            analytics: (4, Size::tib(16), Size::tib(15)),
            esx_datastore: (Size::tib(8), Size::tib(3)),
            old_scratch: (Size::tib(2), Size::bytes(20 * GIB)),
            old_scratch_destroyed_for: Duration::from_secs(18 * 3600),
        }
    }
}

/// The management node hosts: name and FC WWNs. `px-mgmt-worker-01` lacks the second
/// port of node worker-01; `worker-03` carries its node's name; `worker-02` is a
/// different server.
pub const BROWNFIELD_HOSTS: [(&str, &[&str]); 4] = [
    ("px-mgmt-worker-01", &["2100F4C7AA002706"]),
    (
        "px-mgmt-worker-02",
        &["2100F4C7AA002806", "2100F4C7AA002807"],
    ),
    ("worker-03", &["2100F4C7AA002906", "2100F4C7AA002907"]),
    ("worker-02", &["2100F4C7AA00FF01"]),
];

/// The admin whose token the management Portworx uses (its `px-pure-secret`).
pub const MGMT_ADMIN: &str = "px-mgmt";

fn vol(name: &str) -> VolumeName {
    VolumeName::new(name).unwrap_or_else(|e| panic!("seed volume name {name}: {e}"))
}

fn host(name: &str) -> HostName {
    HostName::new(name).unwrap_or_else(|e| panic!("seed host name {name}: {e}"))
}

fn pxfa_tags(resource: &str, pairs: &[(&str, &str)]) -> Vec<Tag> {
    pairs
        .iter()
        .map(|(k, v)| Tag::new(resource, PXFA_TAG_NAMESPACE, *k, *v))
        .collect()
}

/// The name of tenant-blue's volume `i` (0–2 data, 3–5 metadata).
pub fn blue_volume(i: usize) -> String {
    format!(
        "{OTHER_TENANT}::px_{MGMT_CLUSTER_PREFIX}-pvc-b{i}b{i}b{i}b{i}-0000-4000-8000-0000000000b{i}"
    )
}

impl State {
    /// Creates a volume through the create rules and records its written bytes.
    fn seed_volume(&mut self, ctx: Ctx, name: &str, size: Size, written: Size) -> Result<()> {
        let body = VolumePost::default().with_provisioned(size.as_u64());
        for id in self.insert_volumes(ctx, &[vol(name)], &body)? {
            if let Some(r) = self.volumes.get_mut(&id) {
                r.written = written.as_u64();
            }
        }
        Ok(())
    }

    fn seed_connect(&mut self, target: ConnectionTarget, volume: &str, lun: u32) -> Result<()> {
        self.create_connections(&target, &[vol(volume)], Some(lun))
            .map(|_| ())
    }

    /// Fills an empty state with the brownfield site.
    pub(crate) fn seed_brownfield(&mut self, ctx: Ctx, b: &BrownfieldSeed) -> Result<()> {
        self.add_admin(MGMT_ADMIN);
        self.create_api_token(ctx.now, MGMT_ADMIN, None)?;

        for (name, wwns) in BROWNFIELD_HOSTS {
            let body = HostPost::default().with_wwns(wwns.iter().map(|w| w.to_string()).collect());
            self.create_hosts(&[host(name)], &body)?;
        }
        let esx = [
            ("esx-01", "iqn.1998-01.com.vmware:esx-01-6f1a"),
            ("esx-02", "iqn.1998-01.com.vmware:esx-02-8c2d"),
        ];
        for (name, iqn) in esx {
            let body = HostPost::default().with_iqns(vec![iqn.to_string()]);
            self.create_hosts(&[host(name)], &body)?;
        }
        let group =
            HostGroupName::new("esx-prod").unwrap_or_else(|e| panic!("seed host group name: {e}"));
        self.create_host_groups(std::slice::from_ref(&group), &HostGroupPost::default())?;
        self.add_host_group_members(&group, &[host("esx-01"), host("esx-02")])?;

        // The management Portworx: one data and one metadata Cloud Drive per node,
        // privately connected to the node's host.
        let mgmt_hosts = ["px-mgmt-worker-01", "px-mgmt-worker-02", "worker-03"];
        for (i, h) in mgmt_hosts.iter().enumerate() {
            let data = format!("px_{MGMT_CLUSTER_PREFIX}-1f0e9a2{}", i + 1);
            let meta = format!("px_{MGMT_CLUSTER_PREFIX}-2a7c4b1{}", i + 1);
            self.seed_volume(ctx, &data, b.mgmt_data.0, b.mgmt_data.1)?;
            self.seed_volume(ctx, &meta, b.mgmt_metadata.0, b.mgmt_metadata.1)?;
            self.seed_connect(ConnectionTarget::Host(host(h)), &data, 1)?;
            self.seed_connect(ConnectionTarget::Host(host(h)), &meta, 2)?;
        }
        for (lun, suffix) in [(3, "4a51"), (4, "4a52")] {
            let name =
                format!("px_{MGMT_CLUSTER_PREFIX}-pvc-0b6f3c1e-5d2a-4f7e-9a10-6c1d2e3f{suffix}");
            self.seed_volume(ctx, &name, b.mgmt_pvc.0, b.mgmt_pvc.1)?;
            self.seed_connect(
                ConnectionTarget::Host(host("px-mgmt-worker-02")),
                &name,
                lun,
            )?;
        }

        // Another pxfa tenant, tagged as pxfa tags its own objects.
        let blue = PodName::new(OTHER_TENANT).unwrap_or_else(|e| panic!("seed pod name: {e}"));
        let quota = PodPost::default().with_quota_limit(b.blue_quota.as_u64());
        self.create_pods(ctx, std::slice::from_ref(&blue), &quota)?;
        self.set_tags(
            TagResource::Pod,
            &pxfa_tags(
                OTHER_TENANT,
                &[
                    ("managed-by", "pxfa"),
                    ("tenant", OTHER_TENANT),
                    ("tenant-namespace", OTHER_TENANT_NAMESPACE),
                    ("role", "tenant-pod"),
                ],
            ),
        )?;
        for i in 0..6 {
            let name = blue_volume(i);
            let node = (i % 3).to_string();
            let (role, disk, size, written) = if i < 3 {
                ("px-data", "0", b.blue_data.0, b.blue_data.1)
            } else {
                ("px-metadata", "meta", b.blue_metadata, Size::bytes(0))
            };
            self.seed_volume(ctx, &name, size, written)?;
            self.set_tags(
                TagResource::Volume,
                &pxfa_tags(
                    &name,
                    &[
                        ("managed-by", "pxfa"),
                        ("tenant", OTHER_TENANT),
                        ("tenant-namespace", OTHER_TENANT_NAMESPACE),
                        ("role", role),
                        ("node-index", &node),
                        ("disk-index", disk),
                    ],
                ),
            )?;
        }
        // Its worker 0 runs on management node 1: the drive is connected there, at
        // the LUN the array picks.
        self.create_connections(
            &ConnectionTarget::Host(host("px-mgmt-worker-01")),
            &[vol(&blue_volume(0))],
            None,
        )?;

        // The earlier pxfa's tenant: tenant tag, no namespace.
        let gray = PodName::new(LEGACY_TENANT).unwrap_or_else(|e| panic!("seed pod name: {e}"));
        self.create_pods(ctx, std::slice::from_ref(&gray), &PodPost::default())?;
        self.set_tags(
            TagResource::Pod,
            &pxfa_tags(
                LEGACY_TENANT,
                &[
                    ("managed-by", "pxfa"),
                    ("tenant", LEGACY_TENANT),
                    ("role", "tenant-pod"),
                ],
            ),
        )?;

        let analytics = PodName::new("analytics").unwrap_or_else(|e| panic!("seed pod name: {e}"));
        self.create_pods(ctx, &[analytics], &PodPost::default())?;
        let (count, size, written) = b.analytics;
        for i in 1..=count {
            self.seed_volume(ctx, &format!("analytics::warehouse{i:02}"), size, written)?;
        }

        for (lun, name) in [(254, "esx-ds01"), (253, "esx-ds02")] {
            self.seed_volume(ctx, name, b.esx_datastore.0, b.esx_datastore.1)?;
            self.seed_connect(ConnectionTarget::HostGroup(group.clone()), name, lun)?;
        }

        self.seed_volume(ctx, "old-scratch", b.old_scratch.0, b.old_scratch.1)?;
        let destroy = VolumePatch::destroy();
        self.patch_volumes(ctx, &[vol("old-scratch")], &destroy, false)?;
        let ago = u64::try_from(b.old_scratch_destroyed_for.as_millis()).unwrap_or(u64::MAX);
        if let Some(id) = self.volumes.id_of("old-scratch").map(str::to_string)
            && let Some(r) = self.volumes.get_mut(&id)
        {
            r.destroyed_at = Some(ctx.now.saturating_sub(ago));
        }
        // The sweep must see the earlier destruction time.
        self.sweep_due = 0;
        Ok(())
    }
}
