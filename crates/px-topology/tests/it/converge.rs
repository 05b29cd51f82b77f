//! The converge engine against MockArray: fresh apply, idempotence, ownership
//! conflicts, adoption, recovery, resizing and throttling. Resuming interrupted
//! applies is in [`super::resume`], removal (orphans, destroy, SafeMode) in
//! [`super::destroy`], on the tenant of [`crate::support::tenant`].

use std::sync::Mutex;
use std::time::Duration;

use flasharray::models::{HostPost, Tag, VolumePatch, VolumePost};
use flasharray::{
    ConnectionParams, FlashArray, HostName, ListParams, PodName, Size, TagParams, TagResource,
};
use flasharray_mock::Op;
use px_topology::{
    Action, ApplyOptions, Kind, PlanOptions, ProgressEvent, Scope, TAG_DISK, TAG_NAMESPACE,
    TAG_NODE, ownership_tags,
};
use secrecy::ExposeSecret;

use crate::support::tenant::{
    TENANT, apply, array, converge, desired, destroy_with, eradicating, plan_for, planned, quiet,
    tenant_state,
};

#[tokio::test]
async fn fresh_apply_creates_everything_in_few_rounds() {
    let a = array();
    let d = tenant_state();
    let events = Mutex::new(Vec::new());
    let staged = planned(&a, &d, PlanOptions::default()).await;
    let p = staged.plan().clone();
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
    let r = apply(staged, &ApplyOptions::default(), &|e| {
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
    let staged = planned(&a, &d, PlanOptions::default()).await;
    let p = staged.plan().clone();
    assert!(!p.has_changes(), "{}", p.to_text(false));
    assert_eq!(p.summary.create + p.summary.update + p.summary.delete, 0);
    assert_eq!(p.summary.noop, 25);
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
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
    let staged = planned(&a, &d, PlanOptions::default()).await;
    let p = staged.plan().clone();
    assert!(p.conflicts.is_empty(), "{}", p.to_text(false));
    let changed: Vec<_> = p
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp)
        .map(|c| (c.action, c.kind, c.name.clone()))
        .collect();
    assert_eq!(changed, [(Action::Update, Kind::Tag, v.clone())]);
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    assert!(!plan_for(&a, &d, PlanOptions::default()).await.has_changes());
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
        &VolumePost::default().with_provisioned(Size::gib(100).as_u64()),
    )
    .await
    .unwrap();

    let staged = planned(&a, &d, PlanOptions::default()).await;
    let p = staged.plan().clone();
    assert!(p.is_blocked());
    assert!(
        p.conflicts
            .iter()
            .any(|c| c.name == foreign.as_str() && c.reason.contains("without pxfa's tags")),
        "{:?}",
        p.conflicts
    );
    a.reset_stats();
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.applied.is_empty() && !r.skipped.is_empty());
    assert_eq!(a.stats().writes, 0, "a blocked plan writes nothing");

    let staged = planned(
        &a,
        &d,
        PlanOptions {
            adopt: true,
            allow_shrink: false,
            ..PlanOptions::default()
        },
    )
    .await;
    let p = staged.plan().clone();
    assert!(!p.is_blocked(), "{:?}", p.conflicts);
    assert!(
        p.changes.iter().any(|c| c.kind == Kind::Tag
            && c.action == Action::Create
            && c.name == foreign.as_str())
    );
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
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
        p.tags = ownership_tags(&TENANT.into(), Scope::Tenant, "tenant-pod");
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
            p.conflicts.iter().any(
                |c| c.name == other.volumes[0].name.as_str() && c.reason.contains("default/t2")
            ),
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
    a.patch_volumes(std::slice::from_ref(&v), &VolumePatch::destroy(), false)
        .await
        .unwrap();
    let serial_before = a
        .list_volumes(&ListParams::names([v.as_str()]))
        .await
        .unwrap()[0]
        .serial
        .clone();

    let staged = planned(&a, &d, PlanOptions::default()).await;
    let p = staged.plan().clone();
    let actions: Vec<(Action, Kind, &str)> = p
        .actionable()
        .map(|c| (c.action, c.kind, c.name.as_str()))
        .collect();
    assert_eq!(actions.len(), 2, "{actions:?}");
    assert_eq!(actions[0], (Action::Recover, Kind::Volume, v.as_str()));
    assert_eq!(actions[1].1, Kind::Connection);
    assert_eq!(p.summary.update, 1);
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
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
    let staged = planned(&a, &bigger, PlanOptions::default()).await;
    let p = staged.plan().clone();
    assert_eq!(p.summary.update, 6, "{}", p.to_text(false));
    a.reset_stats();
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
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
    let staged = planned(
        &a,
        &smaller,
        PlanOptions {
            adopt: false,
            allow_shrink: true,
            ..PlanOptions::default()
        },
    )
    .await;
    let p = staged.plan().clone();
    assert!(p.refusals.is_empty());
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
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
        let staged = planned(&a, &d, PlanOptions::default()).await;
        if busy {
            a.faults().busy_next(1000);
        } else {
            a.faults().rate_limit_next(1000, Duration::from_secs(1));
        }
        let r = apply(staged, &ApplyOptions::default(), &quiet).await;
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
    let staged = planned(&a, &changed, PlanOptions::default()).await;
    let p = staged.plan().clone();
    let upd: Vec<_> = p.actionable().collect();
    assert_eq!(upd.len(), 1, "{}", p.to_text(true));
    assert_eq!((upd[0].kind, upd[0].action), (Kind::Host, Action::Update));
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
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
        &HostPost::default().with_wwns(vec!["2100F4C7AA002701".into()]),
    )
    .await
    .unwrap();
    let staged = planned(&c, &d, PlanOptions::default()).await;
    let p = staged.plan().clone();
    assert!(!p.is_blocked(), "{:?}", p.conflicts);
    assert_eq!(p.host_map[0].hosts, ["server-a"]);
    assert!(
        p.actionable()
            .all(|ch| !(ch.kind == Kind::Host && ch.name.eq_ignore_ascii_case("server-a")))
    );
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
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
    let staged = planned(&a, &t2, PlanOptions::default()).await;
    let p = staged.plan().clone();
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
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(r.is_success(), "{r:?}");
    assert!(
        !plan_for(&a, &t1, PlanOptions::default())
            .await
            .has_changes()
    );

    let d = destroy_with(&a, &t1, eradicating()).await;
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
