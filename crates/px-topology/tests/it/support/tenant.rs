//! The tenant the converge, destroy, plan-document, preflight, brownfield and wire
//! tests share (and the converge benchmark, by path): a direct-access-like desired
//! state built by hand, a mock array with its admins, and plan-then-apply.

use flasharray::FlashArray;
use flasharray::{ConnectionTarget, HostGroupName, HostName, PodName, Size, VolumeName};
use flasharray_mock::MockArray;
use px_topology::{
    ApplyOptions, ApplyReport, ArrayOnly, DesiredApiToken, DesiredConnection, DesiredHost,
    DesiredHostGroup, DesiredPod, DesiredState, DesiredVolume, DestroyError, DestroyOptions,
    DestroyPlan, DestroyReport, Observation, ObserveError, Plan, PlanOptions, ProgressEvent,
    RealmGateError, Scope, Site, Subject, TAG_DISK, TAG_NODE, TenantId, ownership_tags,
};

/// The tenant of [`tenant_state`].
pub(crate) const TENANT: &str = "t1";
/// Its token admin.
pub(crate) const ADMIN: &str = "px-t1";

/// [`direct_access_like`] with two management hosts and [`ADMIN`]'s token.
pub(crate) fn desired(tenant: &str, workers: u32, data_size: Size) -> DesiredState {
    direct_access_like(tenant, ADMIN, workers, 2, data_size)
}

/// A direct-access-like tenant: a pod, `workers` x (2 data + 1 metadata) volumes,
/// all connected to the shared management host group with `mgmt_hosts` hosts, and a
/// token for `admin`. The converge benchmark provisions the same tenant.
pub(crate) fn direct_access_like(
    tenant: &str,
    admin: &str,
    workers: u32,
    mgmt_hosts: u32,
    data_size: Size,
) -> DesiredState {
    let id = TenantId::from(tenant);
    let pod = PodName::new(tenant).unwrap();
    let mgmt = HostGroupName::new("hcp-mgmt").unwrap();
    let mut volumes = Vec::new();
    for w in 0..workers {
        for (disk, size, role) in [
            ("data0", data_size, "px-data"),
            ("data1", data_size, "px-data"),
            ("meta", Size::gib(64), "px-metadata"),
        ] {
            let mut tags = ownership_tags(&id, Scope::Tenant, role);
            tags.insert(TAG_NODE.into(), w.to_string());
            tags.insert(TAG_DISK.into(), disk.into());
            volumes.push(DesiredVolume {
                name: VolumeName::in_pod(&pod, &format!("{tenant}-w{w:02}-{disk}")).unwrap(),
                size,
                tags,
            });
        }
    }
    let hosts = (1..=mgmt_hosts)
        .map(|i| DesiredHost {
            node: format!("worker-{i:02}"),
            name: HostName::new(format!("mgmt-worker-{i:02}")).unwrap(),
            wwns: vec![format!("2100F4C7AA0027{i:02}")],
            iqns: vec![],
            nqns: vec![],
            personality: None,
            host_group: Some(mgmt.clone()),
            scope: Scope::Shared,
            tags: ownership_tags(&id, Scope::Shared, "mgmt-host"),
        })
        .collect();
    let connections = volumes
        .iter()
        .map(|v| DesiredConnection {
            target: ConnectionTarget::HostGroup(mgmt.clone()),
            volume: v.name.clone(),
            lun: None,
        })
        .collect();
    DesiredState {
        tenant: id.clone(),
        realm: None,
        pod: Some(DesiredPod {
            name: pod,
            quota: None,
            tags: ownership_tags(&id, Scope::Tenant, "tenant-pod"),
        }),
        host_groups: vec![DesiredHostGroup {
            name: mgmt,
            scope: Scope::Shared,
            tags: ownership_tags(&id, Scope::Shared, "mgmt-hosts"),
        }],
        hosts,
        volumes,
        connections,
        api_token: Some(DesiredApiToken {
            admin: admin.into(),
            lifetime: None,
        }),
        drives: Vec::new(),
        notes: Vec::new(),
    }
}

/// The tenant most converge tests use: three workers, 512 GiB data drives.
pub(crate) fn tenant_state() -> DesiredState {
    desired(TENANT, 3, Size::gib(512))
}

/// A fresh array with the token admins of tenants `t1` and `t2`.
pub(crate) fn array() -> MockArray {
    MockArray::builder().admin(ADMIN).admin("px-t2").build()
}

/// Progress that goes nowhere.
pub(crate) fn quiet(_: ProgressEvent) {}

/// A plan of a hand-built state, the stage before its apply.
pub(crate) type Planned<'a> = px_topology::Planned<'a, DesiredState>;

/// Observes `d` on `array` through the pipeline (the door for a state built by hand).
pub(crate) async fn observe<'a>(
    array: &'a dyn FlashArray,
    d: &DesiredState,
) -> Observation<'a, DesiredState> {
    d.observe(Site::array(array)).await.expect("observe")
}

/// The pipeline's realm gate alone: `d` observed on `array`, its gate's refusal
/// returned (any other error fails the test).
pub(crate) async fn realm_gate(
    array: &dyn FlashArray,
    d: &DesiredState,
) -> Result<(), RealmGateError> {
    match d.observe(Site::array(array)).await {
        Ok(_) => Ok(()),
        Err(ObserveError::Realm(e)) => Err(e),
        Err(e) => panic!("observe: {e:?}"),
    }
}

/// Observes `d` on `array` and plans it.
pub(crate) async fn planned<'a>(
    array: &'a dyn FlashArray,
    d: &DesiredState,
    opts: PlanOptions,
) -> Planned<'a> {
    observe(array, d).await.plan(&opts)
}

/// Observes `d` on the array and plans it.
pub(crate) async fn plan_for(array: &MockArray, d: &DesiredState, opts: PlanOptions) -> Plan {
    planned(array, d, opts).await.plan().clone()
}

/// The pipeline's apply of `planned` with no clusters; the test keeps a token the
/// plan creates (the adapter's copy), so a plan creating one is not refused.
pub(crate) async fn apply<S: Subject>(
    planned: px_topology::Planned<'_, S>,
    opts: &ApplyOptions,
    progress: &(dyn Fn(ProgressEvent) + Send + Sync),
) -> ApplyReport {
    let applied = planned
        .with_token_copy(true)
        .apply(&ArrayOnly, opts.clone(), progress)
        .await
        .expect("apply");
    applied.report().clone()
}

/// Plans and applies `d` (the plan must not be blocked).
pub(crate) async fn converge(array: &MockArray, d: &DesiredState) -> (Plan, ApplyReport) {
    let planned = planned(array, d, PlanOptions::default()).await;
    let p = planned.plan().clone();
    assert!(!p.is_blocked(), "{}", p.to_text(false));
    let r = apply(planned, &ApplyOptions::default(), &quiet).await;
    (p, r)
}

/// The destroy plan of `d` (observe, then the destroy's plan); writes nothing.
pub(crate) async fn preview_destroy(
    array: &dyn FlashArray,
    d: &DesiredState,
    opts: &DestroyOptions,
) -> Result<DestroyPlan, DestroyError> {
    Ok(observe(array, d).await.plan_destroy(opts)?.into_plan())
}

/// The pipeline's destroy of `d`: observe, plan the destroy, run it.
pub(crate) async fn destroy(
    array: &dyn FlashArray,
    d: &DesiredState,
    opts: &DestroyOptions,
    progress: &(dyn Fn(ProgressEvent) + Send + Sync),
) -> Result<DestroyReport, DestroyError> {
    let planned = observe(array, d).await.plan_destroy(opts)?;
    Ok(planned.destroy(opts, progress).await)
}

/// `destroy` of `d` with these options; the call itself must not fail.
pub(crate) async fn destroy_with(
    array: &MockArray,
    d: &DesiredState,
    opts: DestroyOptions,
) -> DestroyReport {
    destroy(array, d, &opts, &quiet).await.expect("destroy")
}

/// The options of `destroy --eradicate`.
pub(crate) fn eradicating() -> DestroyOptions {
    DestroyOptions {
        eradicate: true,
        ..Default::default()
    }
}
