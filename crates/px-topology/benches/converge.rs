//! Converge benchmark: provisioning a direct-access-like tenant on MockArray with a
//! fixed injected round-trip latency, pxfa's batched rounds against the naive way
//! (one call per object, sequentially), in the same run.
//!
//! Run: `cargo bench -p px-topology --bench converge` (add `-- --latency-ms 5` to
//! change the latency, `-- --workers 3,16` to change the sizes).

use std::time::{Duration, Instant};

use flasharray::models::{HostPost, PodPost, Tag, VolumePost};
use flasharray::{
    ConnectionTarget, FlashArray, HostGroupName, HostName, ListParams, PodName, Size, TagResource,
    VolumeName,
};
use flasharray_mock::MockArray;
use px_topology::converge::{ApplyOptions, apply};
use px_topology::desired::{
    DesiredApiToken, DesiredConnection, DesiredHost, DesiredHostGroup, DesiredPod, DesiredState,
    DesiredVolume, Scope, TAG_DISK, TAG_NAMESPACE, TAG_NODE, ownership_tags,
};
use px_topology::plan::{PlanOptions, observe, plan};

/// Dependent read rounds of `observe`: names (and, for missing names, the filter
/// fallback) with tags and token concurrently, then connections of what exists.
const OBSERVE_ROUNDS: usize = 2;
const MGMT_HOSTS: usize = 3;
const ADMIN: &str = "px-bench";

/// `workers` worker VMs x 2 data disks + 1 metadata disk in the tenant pod, shared
/// management hosts in one host group, every volume connected to the group.
fn direct_access(workers: usize) -> DesiredState {
    let tenant = "bench";
    let pod = PodName::new(tenant).expect("pod name");
    let mgmt = HostGroupName::new("hcp-mgmt").expect("group name");
    let mut volumes = Vec::new();
    for w in 0..workers {
        for (disk, size, role) in [
            ("data0", Size::gib(512), "px-data"),
            ("data1", Size::gib(512), "px-data"),
            ("meta", Size::gib(64), "px-metadata"),
        ] {
            let mut tags = ownership_tags(tenant, Scope::Tenant, role);
            tags.insert(TAG_NODE.into(), w.to_string());
            tags.insert(TAG_DISK.into(), disk.into());
            volumes.push(DesiredVolume {
                name: VolumeName::in_pod(&pod, &format!("{tenant}-w{w:02}-{disk}"))
                    .expect("volume name"),
                size,
                tags,
            });
        }
    }
    let hosts = (1..=MGMT_HOSTS)
        .map(|i| DesiredHost {
            name: HostName::new(format!("mgmt-worker-{i:02}")).expect("host name"),
            wwns: vec![format!("2100F4C7AA0027{i:02}")],
            iqns: vec![],
            nqns: vec![],
            personality: None,
            host_group: Some(mgmt.clone()),
            scope: Scope::Shared,
            tags: ownership_tags(tenant, Scope::Shared, "mgmt-host"),
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
        tenant: tenant.into(),
        pod: Some(DesiredPod {
            name: pod,
            quota: None,
            tags: ownership_tags(tenant, Scope::Tenant, "tenant-pod"),
        }),
        host_groups: vec![DesiredHostGroup {
            name: mgmt,
            scope: Scope::Shared,
            tags: ownership_tags(tenant, Scope::Shared, "mgmt-hosts"),
        }],
        hosts,
        volumes,
        connections,
        api_token: Some(DesiredApiToken {
            admin: ADMIN.into(),
            lifetime: None,
        }),
    }
}

fn tags(name: &str, t: &std::collections::BTreeMap<String, String>) -> Vec<Tag> {
    t.iter()
        .map(|(k, v)| Tag::new(name, TAG_NAMESPACE, k, v))
        .collect()
}

/// Whether an object exists, the naive way: one GET per name.
fn exists<T>(r: flasharray::Result<Vec<T>>) -> bool {
    r.map(|v| !v.is_empty()).unwrap_or(false)
}

/// The naive applier: for each object in dependency order, one GET to see whether it
/// exists, then one call to create it, one call to tag it; one call per membership and
/// per connection. Sequential, as a simple script would do it.
async fn naive_apply(array: &MockArray, d: &DesiredState) -> Result<(), flasharray::Error> {
    if let Some(p) = &d.pod {
        if !exists(array.list_pods(&ListParams::names([p.name.as_str()])).await) {
            array
                .create_pods(std::slice::from_ref(&p.name), &PodPost::default())
                .await?;
        }
        array
            .set_tags(TagResource::Pod, &tags(p.name.as_str(), &p.tags))
            .await?;
    }
    for g in &d.host_groups {
        if !exists(
            array
                .list_host_groups(&ListParams::names([g.name.as_str()]))
                .await,
        ) {
            array
                .create_host_groups(std::slice::from_ref(&g.name), &Default::default())
                .await?;
        }
        array
            .set_tags(TagResource::HostGroup, &tags(g.name.as_str(), &g.tags))
            .await?;
    }
    for h in &d.hosts {
        if !exists(
            array
                .list_hosts(&ListParams::names([h.name.as_str()]))
                .await,
        ) {
            let post = HostPost {
                wwns: h.wwns.clone(),
                ..HostPost::default()
            };
            array
                .create_hosts(std::slice::from_ref(&h.name), &post)
                .await?;
        }
        array
            .set_tags(TagResource::Host, &tags(h.name.as_str(), &h.tags))
            .await?;
        if let Some(g) = &h.host_group {
            array
                .add_host_group_members(g, std::slice::from_ref(&h.name))
                .await?;
        }
    }
    for v in &d.volumes {
        if !exists(
            array
                .list_volumes(&ListParams::names([v.name.as_str()]))
                .await,
        ) {
            let body = VolumePost {
                tags: Vec::new(),
                provisioned: Some(v.size.as_u64()),
                source: None,
            };
            array
                .create_volumes(std::slice::from_ref(&v.name), &body)
                .await?;
        }
        array
            .set_tags(TagResource::Volume, &tags(v.name.as_str(), &v.tags))
            .await?;
    }
    for c in &d.connections {
        array
            .create_connections(&c.target, std::slice::from_ref(&c.volume), c.lun)
            .await?;
    }
    if let Some(t) = &d.api_token {
        array.create_api_token(&t.admin, t.lifetime).await?;
    }
    Ok(())
}

struct Row {
    workers: usize,
    objects: usize,
    wall: Duration,
    calls: u64,
    rounds: usize,
    floor: Duration,
    steady_wall: Duration,
    steady_calls: u64,
    steady_writes: u64,
    naive_wall: Duration,
    naive_calls: u64,
}

fn fresh_array(latency: Duration) -> MockArray {
    let a = MockArray::builder().admin(ADMIN).build();
    a.faults().set_latency(latency);
    a
}

async fn measure(workers: usize, latency: Duration) -> Row {
    let d = direct_access(workers);
    let objects = 1 + d.host_groups.len() + d.hosts.len() * 2 + d.volumes.len() * 2 + 1;

    let a = fresh_array(latency);
    let start = Instant::now();
    let obs = observe(&a, &d).await.expect("observe");
    let p = plan(&d, &obs, &PlanOptions::default());
    let r = apply(&a, &d, &p, &ApplyOptions::default(), &|_| {}).await;
    let wall = start.elapsed();
    assert!(r.is_success(), "apply failed: {:?}", r.failed);
    let calls = a.stats().calls;
    let rounds = OBSERVE_ROUNDS + r.rounds;
    let floor = latency * u32::try_from(rounds).expect("few rounds");

    a.reset_stats();
    let start = Instant::now();
    let obs = observe(&a, &d).await.expect("observe");
    let p = plan(&d, &obs, &PlanOptions::default());
    let r = apply(&a, &d, &p, &ApplyOptions::default(), &|_| {}).await;
    let steady_wall = start.elapsed();
    assert!(
        r.is_success() && r.applied.is_empty(),
        "second apply changed things"
    );
    let steady = a.stats();

    let n = fresh_array(latency);
    let start = Instant::now();
    naive_apply(&n, &d).await.expect("naive apply");
    let naive_wall = start.elapsed();
    let naive_calls = n.stats().calls;

    Row {
        workers,
        objects,
        wall,
        calls,
        rounds,
        floor,
        steady_wall,
        steady_calls: steady.calls,
        steady_writes: steady.writes,
        naive_wall,
        naive_calls,
    }
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let latency = Duration::from_millis(
        arg("--latency-ms")
            .and_then(|s| s.parse().ok())
            .unwrap_or(20),
    );
    let sizes: Vec<usize> = arg("--workers")
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![3, 16, 64]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_time()
        .build()
        .expect("tokio runtime");
    println!(
        "converge benchmark: MockArray, {} ms injected latency per call, concurrency {}",
        latency.as_millis(),
        ApplyOptions::default().concurrency
    );
    println!(
        "{:>7} {:>7} | {:>9} {:>6} {:>6} {:>8} {:>6} | {:>9} {:>6} {:>6} | {:>9} {:>6} {:>7}",
        "workers",
        "objects",
        "pxfa ms",
        "calls",
        "rounds",
        "floor ms",
        "ratio",
        "again ms",
        "calls",
        "writes",
        "naive ms",
        "calls",
        "speedup"
    );
    for w in sizes {
        let r = rt.block_on(measure(w, latency));
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "{:>7} {:>7} | {:>9.0} {:>6} {:>6} {:>8.0} {:>6.2} | {:>9.0} {:>6} {:>6} | {:>9.0} {:>6} {:>6.1}x",
            r.workers,
            r.objects,
            ms(r.wall),
            r.calls,
            r.rounds,
            ms(r.floor),
            ms(r.wall) / ms(r.floor),
            ms(r.steady_wall),
            r.steady_calls,
            r.steady_writes,
            ms(r.naive_wall),
            r.naive_calls,
            ms(r.naive_wall) / ms(r.wall)
        );
    }
}
