//! The converge engine against MockArray: fresh apply, idempotence, resume after a
//! lost answer or a dropped write at every write of an apply, ownership conflicts,
//! adoption, recovery, resizing and throttling. Removal (orphans, destroy, SafeMode)
//! is in [`super::destroy`], on the fixtures defined here.

use crate::support as examples;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use flasharray::models::{HostPost, Tag, VolumePatch, VolumePost};
use flasharray::{
    ConnectionParams, ConnectionTarget, FlashArray, HostGroupName, HostName, ListParams, PodName,
    Size, TagParams, TagResource, VolumeName,
};
use flasharray_mock::{MockArray, Op};
use px_topology::converge::{
    ApplyOptions, ApplyReport, DestroyOptions, ProgressEvent, apply, destroy,
};
use px_topology::desired::{
    DesiredApiToken, DesiredConnection, DesiredHost, DesiredHostGroup, DesiredPod, DesiredState,
    DesiredVolume, Scope, TAG_DISK, TAG_NAMESPACE, TAG_NODE, ownership_tags,
};
use px_topology::plan::{Action, Kind, Plan, PlanOptions, observe, plan};
use secrecy::ExposeSecret;

pub(super) const TENANT: &str = "t1";
pub(super) const ADMIN: &str = "px-t1";

/// A direct-access-like tenant: a pod, `workers` x (2 data + 1 metadata) volumes,
/// all connected to the shared management host group with two hosts, and a token.
pub(super) fn desired(tenant: &str, workers: u32, data_size: Size) -> DesiredState {
    let pod = PodName::new(tenant).unwrap();
    let mgmt = HostGroupName::new("hcp-mgmt").unwrap();
    let mut volumes = Vec::new();
    for w in 0..workers {
        for (disk, size, role) in [
            ("data0", data_size, "px-data"),
            ("data1", data_size, "px-data"),
            ("meta", Size::gib(64), "px-metadata"),
        ] {
            let mut tags = ownership_tags(tenant, Scope::Tenant, role);
            tags.insert(TAG_NODE.into(), w.to_string());
            tags.insert(TAG_DISK.into(), disk.into());
            volumes.push(DesiredVolume {
                name: VolumeName::in_pod(&pod, &format!("{tenant}-w{w:02}-{disk}")).unwrap(),
                size,
                tags,
            });
        }
    }
    let hosts = (1..=2)
        .map(|i| DesiredHost {
            node: format!("worker-{i:02}"),
            name: HostName::new(format!("mgmt-worker-{i:02}")).unwrap(),
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
        notes: Vec::new(),
    }
}

pub(super) fn tenant_state() -> DesiredState {
    desired(TENANT, 3, Size::gib(512))
}

pub(super) fn array() -> MockArray {
    MockArray::builder().admin(ADMIN).admin("px-t2").build()
}

pub(super) fn quiet(_: ProgressEvent) {}

pub(super) async fn plan_for(array: &MockArray, d: &DesiredState, opts: PlanOptions) -> Plan {
    let obs = observe(array, d).await.expect("observe");
    plan(d, &obs, &opts)
}

pub(super) async fn converge(array: &MockArray, d: &DesiredState) -> (Plan, ApplyReport) {
    let p = plan_for(array, d, PlanOptions::default()).await;
    assert!(!p.is_blocked(), "{}", p.to_text(false));
    let r = apply(array, d, &p, &ApplyOptions::default(), &quiet).await;
    (p, r)
}

/// The array as an admin sees it, without ids, serials, times or LUN numbers (the
/// array allocates those): what must be equal after any interrupted apply is resumed.
pub(super) async fn view(array: &MockArray) -> serde_json::Value {
    let vols: Vec<_> = array
        .list_volumes(&ListParams::all())
        .await
        .unwrap()
        .into_iter()
        .map(|v| serde_json::json!([v.name, v.provisioned, v.destroyed, v.pod.name]))
        .collect();
    let hosts: Vec<_> = array
        .list_hosts(&ListParams::all())
        .await
        .unwrap()
        .into_iter()
        .map(|h| serde_json::json!([h.name, h.wwns, h.host_group.name]))
        .collect();
    let groups: Vec<_> = array
        .list_host_groups(&ListParams::all())
        .await
        .unwrap()
        .into_iter()
        .map(|g| g.name)
        .collect();
    let pods: Vec<_> = array
        .list_pods(&ListParams::all())
        .await
        .unwrap()
        .into_iter()
        .map(|p| serde_json::json!([p.name, p.destroyed]))
        .collect();
    let mut conns: Vec<_> = array
        .list_connections(&ConnectionParams::default())
        .await
        .unwrap()
        .into_iter()
        .map(|c| serde_json::json!([c.host.name, c.host_group.name, c.volume.name]))
        .collect();
    conns.sort_by_key(|c| c.to_string());
    let mut tags = BTreeMap::new();
    for kind in [
        TagResource::Volume,
        TagResource::Host,
        TagResource::HostGroup,
        TagResource::Pod,
    ] {
        let mut t: Vec<_> = array
            .list_tags(kind, &TagParams::default())
            .await
            .unwrap()
            .into_iter()
            .map(|t| serde_json::json!([t.resource.name, t.namespace, t.key, t.value]))
            .collect();
        t.sort_by_key(|x| x.to_string());
        tags.insert(kind.collection(), t);
    }
    let tokens: Vec<_> = array
        .list_api_tokens(&[ADMIN.to_string()], false)
        .await
        .unwrap()
        .into_iter()
        .map(|a| serde_json::json!([a.name, a.api_token.created_at.is_some()]))
        .collect();
    serde_json::json!({"volumes": vols, "hosts": hosts, "groups": groups, "pods": pods,
                       "connections": conns, "tags": tags, "tokens": tokens})
}

#[tokio::test]
async fn fresh_apply_creates_everything_in_few_rounds() {
    let a = array();
    let d = tenant_state();
    let events = Mutex::new(Vec::new());
    let p = plan_for(&a, &d, PlanOptions::default()).await;
    assert_eq!(
        p.summary.create,
        1 + 1 + 2 + 2 + 9 + 9 + 1,
        "{}",
        p.to_text(true)
    );
    assert_eq!(p.summary.noop, 0);
    let text = p.to_text(false);
    assert!(
        text.contains("+ create volume t1::t1-w00-data0 (512 GiB)"),
        "{text}"
    );
    let json = p.to_json();
    assert_eq!(json["summary"]["create"], 25);
    assert_eq!(json["changes"][0]["action"], "create");
    assert_eq!(json["changes"][0]["kind"], "pod");

    a.reset_stats();
    let r = apply(&a, &d, &p, &ApplyOptions::default(), &|e| {
        events.lock().unwrap().push(e)
    })
    .await;
    assert!(r.is_success(), "{r:?}");
    assert_eq!(r.applied.len(), 25);
    assert_eq!(
        r.rounds, 3,
        "pod/groups/hosts/token, then volumes/members, then connections"
    );
    let stats = a.stats();
    // 1 pod + 1 group POST + 2 host POSTs + 1 token, 1 volume batch (every size and
    // role, each volume with its node/disk-index tags), 1 membership POST, 1
    // connection POST. Ownership tags travel in the create calls; no tag PUT.
    assert_eq!(stats.writes, 8, "{stats:?}");
    assert_eq!(stats.op(Op::SetTags), 0, "{stats:?}");
    assert_eq!(stats.op(Op::CreateVolumesBatch), 1);
    assert_eq!(stats.op(Op::CreateVolumes), 0);
    assert_eq!(stats.op(Op::CreateConnections), 1);

    assert_eq!(r.facts.volume_serials.len(), 9);
    let token = r.facts.api_token.as_ref().expect("token created");
    let secret = token.expose_secret().to_string();
    assert!(!secret.is_empty());
    assert!(!format!("{r:?}").contains(&secret));
    assert!(!serde_json::to_string(&r).unwrap().contains(&secret));

    let events = events.into_inner().unwrap();
    let started = events
        .iter()
        .filter(|e| matches!(e, ProgressEvent::ChangeStarted { .. }))
        .count();
    let finished = events
        .iter()
        .filter(|e| matches!(e, ProgressEvent::ChangeFinished { .. }))
        .count();
    let rounds = events
        .iter()
        .filter(|e| matches!(e, ProgressEvent::RoundStarted { .. }))
        .count();
    assert_eq!((started, finished, rounds), (25, 25, 3));

    let conns = a
        .list_connections(&ConnectionParams::default())
        .await
        .unwrap();
    assert_eq!(conns.len(), 9 * 2, "one row per member host");
}

#[tokio::test]
async fn second_apply_plans_nothing_and_writes_nothing() {
    let a = array();
    let d = tenant_state();
    let (_, r) = converge(&a, &d).await;
    assert!(r.is_success(), "{r:?}");
    a.reset_stats();
    let p = plan_for(&a, &d, PlanOptions::default()).await;
    assert!(!p.has_changes(), "{}", p.to_text(false));
    assert_eq!(p.summary.create + p.summary.update + p.summary.delete, 0);
    assert_eq!(p.summary.noop, 25);
    let r = apply(&a, &d, &p, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success());
    assert!(r.applied.is_empty());
    assert_eq!(
        r.facts.volume_serials.len(),
        9,
        "serials come from the observation"
    );
    let stats = a.stats();
    assert_eq!(stats.writes, 0, "{stats:?}");
    assert!(stats.reads <= 12, "observation stays cheap: {stats:?}");
}

async fn reference_view(d: &DesiredState) -> (serde_json::Value, u64) {
    let a = array();
    a.reset_stats();
    let (_, r) = converge(&a, d).await;
    assert!(r.is_success());
    (view(&a).await, a.stats().writes)
}

async fn resume_after(
    d: &DesiredState,
    inject: impl Fn(&MockArray),
    want: &serde_json::Value,
    label: &str,
) {
    let a = array();
    let p = plan_for(&a, d, PlanOptions::default()).await;
    inject(&a);
    let first = apply(&a, d, &p, &ApplyOptions::default(), &quiet).await;
    a.faults().clear();
    // Whatever the first attempt managed, a new plan and apply must converge.
    let p2 = plan_for(&a, d, PlanOptions::default()).await;
    assert!(
        !p2.is_blocked(),
        "{label}: {}\nfirst: {first:?}",
        p2.to_text(false)
    );
    let second = apply(&a, d, &p2, &ApplyOptions::default(), &quiet).await;
    assert!(second.is_success(), "{label}: {second:?}");
    let p3 = plan_for(&a, d, PlanOptions::default()).await;
    assert!(!p3.has_changes(), "{label}: {}", p3.to_text(false));
    assert_eq!(&view(&a).await, want, "{label}");
}

#[tokio::test]
async fn every_cut_point_resumes_without_duplicates() {
    let d = tenant_state();
    let (want, writes) = reference_view(&d).await;
    assert!(writes >= 8);
    for n in 1..=writes {
        resume_after(
            &d,
            |a| a.faults().fail_write_after_effect(n),
            &want,
            &format!("answer lost at write {n}"),
        )
        .await;
        resume_after(
            &d,
            |a| a.faults().drop_write(n),
            &want,
            &format!("write {n} dropped"),
        )
        .await;
    }
}

/// A fresh array for `d`, with the admin its token needs.
fn array_for(d: &DesiredState) -> MockArray {
    let mut b = MockArray::builder().admin(ADMIN);
    if let Some(t) = &d.api_token {
        b = b.admin(t.admin.clone());
    }
    b.build()
}

/// Kills an apply right after its `n`th write took effect, then runs a new plan and
/// apply without adoption: it must converge to `want`, the fault-free result.
async fn kill_after_write(d: &DesiredState, n: u64, want: &serde_json::Value) {
    let label = format!("{}: killed after write {n}", d.tenant);
    let a = array_for(d);
    let p = plan_for(&a, d, PlanOptions::default()).await;
    a.faults().stall_after_write(n);
    // The stalled array never answers again; the timeout drops the apply future
    // mid-flight, which is what a killed process amounts to. The clock is paused,
    // so the timeout costs no real time.
    let killed = tokio::time::timeout(
        Duration::from_secs(3600),
        apply(&a, d, &p, &ApplyOptions::default(), &quiet),
    )
    .await;
    assert!(killed.is_err(), "{label}: the apply finished anyway");
    assert!(a.faults().stalled(), "{label}: write {n} never happened");
    a.faults().clear();
    every_volume_fully_tagged(&a, d, &label).await;

    let p2 = plan_for(&a, d, PlanOptions::default()).await;
    assert!(!p2.is_blocked(), "{label}: {}", p2.to_text(false));
    assert!(p2.conflicts.is_empty(), "{label}: {:?}", p2.conflicts);
    let second = apply(&a, d, &p2, &ApplyOptions::default(), &quiet).await;
    assert!(second.is_success(), "{label}: {second:?}");
    let p3 = plan_for(&a, d, PlanOptions::default()).await;
    assert!(!p3.has_changes(), "{label}: {}", p3.to_text(false));
    assert_eq!(&view_of(&a, d).await, want, "{label}");
}

/// Volumes are born with every tag (`POST /volumes/batch`): whenever the apply
/// stops, each volume that exists carries all its desired tags, never a part.
async fn every_volume_fully_tagged(a: &MockArray, d: &DesiredState, label: &str) {
    let tags = a
        .list_tags(TagResource::Volume, &Default::default())
        .await
        .unwrap();
    for v in a.list_volumes(&ListParams::all()).await.unwrap() {
        let Some(want) = d
            .volumes
            .iter()
            .find(|w| w.name.as_str().eq_ignore_ascii_case(&v.name))
        else {
            continue;
        };
        for (key, value) in &want.tags {
            assert!(
                tags.iter().any(|t| t.key == *key
                    && t.value == *value
                    && t.resource
                        .name
                        .as_deref()
                        .is_some_and(|r| r.eq_ignore_ascii_case(&v.name))),
                "{label}: volume {} exists without {key}={value}",
                v.name
            );
        }
    }
}

/// [`view`] for any desired state (its token admin, not only [`ADMIN`]).
async fn view_of(a: &MockArray, d: &DesiredState) -> serde_json::Value {
    let mut v = view(a).await;
    if let Some(t) = &d.api_token {
        let tokens: Vec<_> = a
            .list_api_tokens(std::slice::from_ref(&t.admin), false)
            .await
            .unwrap()
            .into_iter()
            .map(|x| serde_json::json!([x.name, x.api_token.created_at.is_some()]))
            .collect();
        v["tenant_tokens"] = tokens.into();
    }
    v
}

/// Every write position of a full apply of `d`.
async fn every_kill_point_converges(d: &DesiredState) -> u64 {
    let a = array_for(d);
    a.reset_stats();
    let (_, r) = converge(&a, d).await;
    assert!(r.is_success(), "{r:?}");
    let writes = a.stats().writes;
    let want = view_of(&a, d).await;
    for n in 1..=writes {
        kill_after_write(d, n, &want).await;
    }
    writes
}

#[tokio::test]
async fn an_owned_volume_missing_its_detail_tags_gets_a_tag_update_not_a_conflict() {
    let d = tenant_state();
    let a = array();
    let (_, r) = converge(&a, &d).await;
    assert!(r.is_success(), "{r:?}");
    let v = d.volumes[0].name.to_string();
    a.delete_tags(
        TagResource::Volume,
        std::slice::from_ref(&v),
        &[TAG_NODE.to_string(), TAG_DISK.to_string()],
        &[TAG_NAMESPACE.to_string()],
    )
    .await
    .unwrap();
    let p = plan_for(&a, &d, PlanOptions::default()).await;
    assert!(p.conflicts.is_empty(), "{}", p.to_text(false));
    let changed: Vec<_> = p
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp)
        .map(|c| (c.action, c.kind, c.name.clone()))
        .collect();
    assert_eq!(changed, [(Action::Update, Kind::Tag, v.clone())]);
    let r = apply(&a, &d, &p, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    assert!(!plan_for(&a, &d, PlanOptions::default()).await.has_changes());
}

#[tokio::test(start_paused = true)]
async fn an_apply_killed_after_any_write_converges_on_the_next_run() {
    let writes = every_kill_point_converges(&tenant_state()).await;
    assert!(writes >= 8, "{writes}");
}

#[tokio::test(start_paused = true)]
async fn killed_applies_of_the_example_tenants_converge_too() {
    for mode in ["direct-access", "cloud-drive"] {
        let spec = examples::example_specs()
            .into_iter()
            .find(|(m, _)| *m == mode)
            .map(|(_, s)| s)
            .unwrap();
        // Import: the direct-access tenant whose drive volumes pxfa creates.
        let spec = if mode == "direct-access" {
            examples::as_import(spec)
        } else {
            spec
        };
        let sizing = examples::sizing(&spec);
        let d = px_topology::driver::driver_for(&spec)
            .desired_state(&spec, &sizing)
            .unwrap();
        let writes = every_kill_point_converges(&d).await;
        assert!(writes >= 2, "{mode}: {writes}");
    }
}

#[tokio::test]
async fn lost_answer_is_reconciled_within_the_same_apply() {
    let d = tenant_state();
    let a = array();
    let p = plan_for(&a, &d, PlanOptions::default()).await;
    // The first write is the pod or another round-1 create; its answer is lost.
    a.faults().fail_write_after_effect(1);
    a.faults().drop_write(6);
    let r = apply(&a, &d, &p, &ApplyOptions::default(), &quiet).await;
    assert!(
        r.is_success(),
        "re-read, then resend only what is missing: {r:?}"
    );
    assert!(r.facts.api_token.is_some());
    assert_eq!(a.list_volumes(&ListParams::all()).await.unwrap().len(), 9);
}

#[tokio::test]
async fn untagged_same_named_volume_is_a_conflict_and_adopt_takes_it() {
    let a = array();
    let d = desired(TENANT, 1, Size::gib(100));
    a.create_pods(&[PodName::new(TENANT).unwrap()], &Default::default())
        .await
        .unwrap();
    let foreign = d.volumes[0].name.clone();
    a.create_volumes(
        std::slice::from_ref(&foreign),
        &VolumePost {
            tags: Vec::new(),
            provisioned: Some(Size::gib(100).as_u64()),
            source: None,
        },
    )
    .await
    .unwrap();

    let p = plan_for(&a, &d, PlanOptions::default()).await;
    assert!(p.is_blocked());
    assert!(
        p.conflicts
            .iter()
            .any(|c| c.name == foreign.as_str() && c.reason.contains("without pxfa's tags")),
        "{:?}",
        p.conflicts
    );
    a.reset_stats();
    let r = apply(&a, &d, &p, &ApplyOptions::default(), &quiet).await;
    assert!(r.applied.is_empty() && !r.skipped.is_empty());
    assert_eq!(a.stats().writes, 0, "a blocked plan writes nothing");

    let p = plan_for(
        &a,
        &d,
        PlanOptions {
            adopt: true,
            allow_shrink: false,
            ..PlanOptions::default()
        },
    )
    .await;
    assert!(!p.is_blocked(), "{:?}", p.conflicts);
    assert!(
        p.changes.iter().any(|c| c.kind == Kind::Tag
            && c.action == Action::Create
            && c.name == foreign.as_str())
    );
    let r = apply(&a, &d, &p, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    let tags = a
        .list_tags(
            TagResource::Volume,
            &TagParams {
                resource_names: vec![foreign.to_string()],
                namespaces: vec![TAG_NAMESPACE.into()],
                resource_destroyed: None,
            },
        )
        .await
        .unwrap();
    assert!(tags.iter().any(|t| t.key == "tenant" && t.value == TENANT));
    assert!(!plan_for(&a, &d, PlanOptions::default()).await.has_changes());
}

#[tokio::test]
async fn object_of_another_tenant_is_a_conflict_even_with_adopt() {
    let a = array();
    let d = desired(TENANT, 1, Size::gib(100));
    let other = desired("t2", 1, Size::gib(100));
    let (_, r) = converge(&a, &other).await;
    assert!(r.is_success());
    // t1 wants a volume t2 owns: same name as t2's (renamed desired state).
    let mut clash = d.clone();
    clash.pod = other.pod.clone().map(|mut p| {
        p.tags = ownership_tags(TENANT, Scope::Tenant, "tenant-pod");
        p
    });
    clash.volumes[0].name = other.volumes[0].name.clone();
    clash.connections.retain(|c| c.volume != d.volumes[0].name);
    for opts in [
        PlanOptions::default(),
        PlanOptions {
            adopt: true,
            allow_shrink: false,
            ..PlanOptions::default()
        },
    ] {
        let p = plan_for(&a, &clash, opts).await;
        assert!(p.is_blocked());
        assert!(
            p.conflicts
                .iter()
                .any(|c| c.name == other.volumes[0].name.as_str() && c.reason.contains("\"t2\"")),
            "{:?}",
            p.conflicts
        );
    }
}

#[tokio::test]
async fn destroyed_volume_is_recovered_not_duplicated() {
    let a = array();
    let d = tenant_state();
    converge(&a, &d).await;
    let v = d.volumes[4].name.clone();
    a.delete_connections(&d.connections[4].target, std::slice::from_ref(&v))
        .await
        .unwrap();
    a.patch_volumes(
        std::slice::from_ref(&v),
        &VolumePatch {
            destroyed: Some(true),
            ..Default::default()
        },
        false,
    )
    .await
    .unwrap();
    let serial_before = a
        .list_volumes(&ListParams::names([v.as_str()]))
        .await
        .unwrap()[0]
        .serial
        .clone();

    let p = plan_for(&a, &d, PlanOptions::default()).await;
    let actions: Vec<(Action, Kind, &str)> = p
        .actionable()
        .map(|c| (c.action, c.kind, c.name.as_str()))
        .collect();
    assert_eq!(actions.len(), 2, "{actions:?}");
    assert_eq!(actions[0], (Action::Recover, Kind::Volume, v.as_str()));
    assert_eq!(actions[1].1, Kind::Connection);
    assert_eq!(p.summary.update, 1);
    let r = apply(&a, &d, &p, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    let after = a
        .list_volumes(&ListParams::names([v.as_str()]))
        .await
        .unwrap();
    assert_eq!(after.len(), 1);
    assert!(!after[0].destroyed);
    assert_eq!(
        after[0].serial, serial_before,
        "the same volume, data intact"
    );
    assert!(!plan_for(&a, &d, PlanOptions::default()).await.has_changes());
}

#[tokio::test]
async fn grow_is_applied_and_shrink_is_refused_unless_allowed() {
    let a = array();
    converge(&a, &tenant_state()).await;
    let bigger = desired(TENANT, 3, Size::gib(768));
    let p = plan_for(&a, &bigger, PlanOptions::default()).await;
    assert_eq!(p.summary.update, 6, "{}", p.to_text(false));
    a.reset_stats();
    let r = apply(&a, &bigger, &p, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    assert_eq!(
        a.stats().op(Op::PatchVolumes),
        1,
        "one PATCH for the six volumes of one size"
    );
    let v = a
        .list_volumes(&ListParams::names([bigger.volumes[0].name.as_str()]))
        .await
        .unwrap();
    assert_eq!(v[0].provisioned, Size::gib(768).as_u64());

    let smaller = tenant_state();
    let p = plan_for(&a, &smaller, PlanOptions::default()).await;
    assert_eq!(p.refusals.len(), 6);
    assert!(p.refusals[0].reason.contains("loses data"));
    assert!(!p.has_changes(), "refused changes are not planned");
    let p = plan_for(
        &a,
        &smaller,
        PlanOptions {
            adopt: false,
            allow_shrink: true,
            ..PlanOptions::default()
        },
    )
    .await;
    assert!(p.refusals.is_empty());
    let r = apply(&a, &smaller, &p, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    assert!(
        !plan_for(&a, &smaller, PlanOptions::default())
            .await
            .has_changes()
    );
}

#[tokio::test]
async fn throttling_surfaces_as_failures_and_a_rerun_converges() {
    for busy in [false, true] {
        let a = array();
        let d = tenant_state();
        let p = plan_for(&a, &d, PlanOptions::default()).await;
        if busy {
            a.faults().busy_next(1000);
        } else {
            a.faults().rate_limit_next(1000, Duration::from_secs(1));
        }
        let r = apply(&a, &d, &p, &ApplyOptions::default(), &quiet).await;
        assert!(!r.is_success());
        assert!(!r.failed.is_empty());
        assert!(
            !r.skipped.is_empty(),
            "dependents of failed changes are skipped"
        );
        let want = if busy { "busy" } else { "429" };
        assert!(
            r.failed.iter().all(|f| f.error.contains(want)),
            "{:?}",
            r.failed
        );
        assert!(
            r.skipped
                .iter()
                .all(|s| s.reason.contains("did not succeed"))
        );
        a.faults().clear();
        let (_, r) = converge(&a, &d).await;
        assert!(r.is_success(), "{r:?}");
    }
}

#[tokio::test]
async fn host_initiators_are_added_to_pxfa_hosts_only() {
    let a = array();
    let d = tenant_state();
    converge(&a, &d).await;
    // The node got a new port: pxfa's own host gains it and keeps the old one.
    let mut changed = d.clone();
    changed.hosts[1].wwns = vec!["2100F4C7AA0027FF".into()];
    let p = plan_for(&a, &changed, PlanOptions::default()).await;
    let upd: Vec<_> = p.actionable().collect();
    assert_eq!(upd.len(), 1, "{}", p.to_text(true));
    assert_eq!((upd[0].kind, upd[0].action), (Kind::Host, Action::Update));
    let r = apply(&a, &changed, &p, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    let h = a
        .list_hosts(&ListParams::names(["mgmt-worker-02"]))
        .await
        .unwrap();
    assert_eq!(h[0].wwns, ["2100F4C7AA002702", "2100F4C7AA0027FF"]);
    assert!(
        !plan_for(&a, &changed, PlanOptions::default())
            .await
            .has_changes()
    );

    // A foreign host with the spec's name and none of the node's initiators is a
    // conflict naming the host field; pxfa creates no second host.
    let b = array();
    b.create_hosts(
        &[HostName::new("mgmt-worker-01").unwrap()],
        &HostPost::default(),
    )
    .await
    .unwrap();
    let p = plan_for(&b, &d, PlanOptions::default()).await;
    let c = p
        .conflicts
        .iter()
        .find(|c| c.kind == Kind::Host && c.name == "mgmt-worker-01")
        .unwrap_or_else(|| panic!("{:?}", p.conflicts));
    assert!(
        c.resolution.contains("spec.management.nodes[0].host"),
        "{c:?}"
    );
    // The same host tagged as pxfa's shared host is the node.
    b.set_tags(
        TagResource::Host,
        &[
            Tag::new("mgmt-worker-01", TAG_NAMESPACE, "managed-by", "pxfa"),
            Tag::new("mgmt-worker-01", TAG_NAMESPACE, "scope", "shared"),
        ],
    )
    .await
    .unwrap();
    let p = plan_for(&b, &d, PlanOptions::default()).await;
    assert!(!p.is_blocked(), "{:?}", p.conflicts);

    // A foreign host holding the node's initiator is used as it is, under its name.
    let c = array();
    c.create_hosts(
        &[HostName::new("server-a").unwrap()],
        &HostPost {
            wwns: vec!["2100F4C7AA002701".into()],
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let p = plan_for(&c, &d, PlanOptions::default()).await;
    assert!(!p.is_blocked(), "{:?}", p.conflicts);
    assert_eq!(p.host_map[0].hosts, ["server-a"]);
    assert!(
        p.actionable()
            .all(|ch| !(ch.kind == Kind::Host && ch.name.eq_ignore_ascii_case("server-a")))
    );
    let r = apply(&c, &d, &p, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    let hosts = c.list_hosts(&ListParams::all()).await.unwrap();
    assert_eq!(hosts.len(), 2, "one created (node 2), none for node 1");
    let server_a = hosts.iter().find(|h| h.name == "server-a").unwrap();
    assert_eq!(server_a.host_group.name.as_deref(), Some("hcp-mgmt"));
}

#[tokio::test]
async fn two_tenants_share_management_objects_without_touching_each_other() {
    let a = array();
    let t1 = tenant_state();
    let t2 = desired("t2", 2, Size::gib(256));
    let (_, r) = converge(&a, &t1).await;
    assert!(r.is_success(), "{r:?}");
    let p = plan_for(&a, &t2, PlanOptions::default()).await;
    assert!(!p.is_blocked(), "{:?}", p.conflicts);
    let noop_shared = p
        .changes
        .iter()
        .filter(|c| c.action == Action::NoOp && matches!(c.kind, Kind::Host | Kind::HostGroup))
        .count();
    assert_eq!(
        noop_shared,
        3,
        "shared hosts and group are reused: {}",
        p.to_text(true)
    );
    let r = apply(&a, &t2, &p, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    assert!(
        !plan_for(&a, &t1, PlanOptions::default())
            .await
            .has_changes()
    );

    let d = destroy(
        &a,
        &t1,
        &DestroyOptions {
            eradicate: true,
            ..Default::default()
        },
        &quiet,
    )
    .await
    .unwrap();
    assert!(d.is_success(), "{d:?}");
    assert!(
        !plan_for(&a, &t2, PlanOptions::default())
            .await
            .has_changes(),
        "t2 untouched"
    );
    let left = a.list_volumes(&ListParams::all()).await.unwrap();
    assert_eq!(left.len(), 6);
    assert!(left.iter().all(|v| v.name.starts_with("t2::")));
}
