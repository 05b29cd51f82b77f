//! Resuming an interrupted apply: after a lost answer or a dropped write at every
//! write of an apply, and after an apply killed at any write, a new plan and apply
//! converge to the fault-free result without duplicates.

use crate::support as examples;

use std::collections::BTreeMap;
use std::time::Duration;

use flasharray::{ConnectionParams, FlashArray, ListParams, TagParams, TagResource};
use flasharray_mock::MockArray;
use px_topology::{ApplyOptions, DesiredState, PlanOptions};

use crate::support::tenant::{
    ADMIN, apply, array, converge, plan_for, planned, quiet, tenant_state,
};

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
    // Settled by the one layer a caller puts around the array.
    let settling = flasharray::Settling::new(&a);
    let staged = planned(&settling, d, PlanOptions::default()).await;
    inject(&a);
    let first = apply(staged, &ApplyOptions::default(), &quiet).await;
    a.faults().clear();
    // Whatever the first attempt managed, a new plan and apply must converge.
    let p2_planned = planned(&a, d, PlanOptions::default()).await;
    let p2 = p2_planned.plan().clone();
    assert!(
        !p2.is_blocked(),
        "{label}: {}\nfirst: {first:?}",
        p2.to_text(false)
    );
    let second = apply(p2_planned, &ApplyOptions::default(), &quiet).await;
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
    // A plain token user must exist; a realm user is pxfa's to create.
    if let Some(t) = &d.api_token
        && d.realm.as_ref().and_then(|r| r.user.as_ref()).is_none()
    {
        b = b.admin(t.admin.clone());
    }
    b.build()
}

/// Kills an apply right after its `n`th write took effect, then runs a new plan and
/// apply without adoption: it must converge to `want`, the fault-free result.
async fn kill_after_write(d: &DesiredState, n: u64, want: &serde_json::Value) {
    let label = format!("{}: killed after write {n}", d.tenant);
    let a = array_for(d);
    let staged = planned(&a, d, PlanOptions::default()).await;
    a.faults().stall_after_write(n);
    // The stalled array never answers again; the timeout drops the apply future
    // mid-flight, which is what a killed process amounts to. The clock is paused,
    // so the timeout costs no real time.
    let killed = tokio::time::timeout(
        Duration::from_secs(3600),
        apply(staged, &ApplyOptions::default(), &quiet),
    )
    .await;
    assert!(killed.is_err(), "{label}: the apply finished anyway");
    assert!(a.faults().stalled(), "{label}: write {n} never happened");
    a.faults().clear();
    every_volume_fully_tagged(&a, d, &label).await;

    let p2_planned = planned(&a, d, PlanOptions::default()).await;
    let p2 = p2_planned.plan().clone();
    assert!(!p2.is_blocked(), "{label}: {}", p2.to_text(false));
    assert!(p2.conflicts.is_empty(), "{label}: {:?}", p2.conflicts);
    let second = apply(p2_planned, &ApplyOptions::default(), &quiet).await;
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

#[tokio::test(start_paused = true)]
async fn an_apply_killed_after_any_write_converges_on_the_next_run() {
    let writes = every_kill_point_converges(&tenant_state()).await;
    assert!(writes >= 8, "{writes}");
}

#[tokio::test(start_paused = true)]
async fn killed_applies_of_the_example_tenants_converge_too() {
    for mode in ["direct-access", "cloud-drive", "cloud-drive-realm"] {
        let spec = examples::example(mode);
        // Import: the direct-access tenant whose drive volumes pxfa creates.
        let spec = if mode == "direct-access" {
            examples::as_import(spec)
        } else {
            spec
        };
        let sizing = examples::sizing(&spec);
        let d = px_topology::driver_for(&spec)
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
    let settling = flasharray::Settling::new(&a);
    let staged = planned(&settling, &d, PlanOptions::default()).await;
    // The first write is the pod or another round-1 create; its answer is lost.
    a.faults().fail_write_after_effect(1);
    a.faults().drop_write(6);
    let r = apply(staged, &ApplyOptions::default(), &quiet).await;
    assert!(
        r.is_success(),
        "re-read, then resend only what is missing: {r:?}"
    );
    assert!(r.facts.api_token.is_some());
    assert_eq!(a.list_volumes(&ListParams::all()).await.unwrap().len(), 9);
}
