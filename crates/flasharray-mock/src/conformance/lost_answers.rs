//! Lost answers: every write kind of the method table, sent through
//! [`flasharray::Settling`] over the mock while its answer is lost (the write took
//! effect, the connection broke) or the write is dropped (it never arrived). Either
//! way the caller must get success, and the array must end exactly as it does
//! without the fault: the object exists once, nothing is duplicated, nothing is left
//! behind. A lost write is never sent again; a dropped one is sent once more.
//!
//! The re-sends are bounded: with every send dropped, a write through the one
//! `Settling` layer goes out [`WRITE_ROUNDS`] times, and the caller hears the lost
//! answer.
//!
//! Unlike the other checks these need the mock's fault switches, so they build
//! their own fresh mocks instead of taking one array.

use flasharray::models::{
    AdminPost, HostGroupPost, HostPatch, HostPost, ManagementAccessPolicyPost,
    ManagementAccessRule, PodPatch, PodPost, RealmPatch, RealmPost, ReferenceWithType, Tag,
    TagBody, VolumeBatchPost, VolumePatch,
};
use flasharray::params::{ConnectionParams, ListParams, TagParams, TagResource};
use flasharray::settle::WRITE_ROUNDS;
use flasharray::{ConnectionTarget, FlashArray, RealmName, Result, Settling};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::shorthand::{g, groups, h, hosts, owner_tags, p, size, v, vs};
use crate::{MockArray, Op};

/// One step of a case, on any array.
type Step = for<'a> fn(&'a dyn FlashArray) -> BoxFuture<'a, Result<()>>;

/// A write kind: what to set up, the write, and the operation that sends it.
struct Case {
    op: Op,
    arrange: Step,
    act: Step,
}

macro_rules! step {
    (|$a:ident| $body:expr) => {
        (|$a: &dyn FlashArray| -> BoxFuture<'_, Result<()>> {
            Box::pin(async move {
                $body;
                Ok(())
            })
        }) as Step
    };
}

/// The admin that tokens are made for.
const USER: &str = "px-lost-user";

/// Runs every write kind on fresh mocks without a fault, with its answer lost, and
/// with the write dropped; panics naming the kind and the fault.
pub async fn every_write_kind_is_settled() {
    let fresh = || MockArray::builder().admin(USER).build();
    let cases = cases();
    let writes = Op::ALL.iter().filter(|o| o.is_write()).count();
    assert_eq!(cases.len(), writes, "a write kind has no lost-answer case");
    for case in &cases {
        let want = run(case, fresh(), None).await;
        for lose in [true, false] {
            let got = run(case, fresh(), Some(lose)).await;
            let fault = if lose { "answer lost" } else { "write dropped" };
            assert_eq!(got, want, "{} with its {fault}", case.op);
        }
        every_send_dropped(case, fresh()).await;
    }
}

/// Drops every send of the write (more than it may make) and writes through
/// `Settling`: it goes out [`WRITE_ROUNDS`] times in all and fails flagged
/// `maybe_applied`.
async fn every_send_dropped(case: &Case, mock: MockArray) {
    (case.arrange)(&mock).await.expect("arrange");
    mock.reset_stats();
    for nth in 1..=u64::from(WRITE_ROUNDS * WRITE_ROUNDS) {
        mock.faults().drop_write(nth);
    }
    let settling = Settling::new(mock.clone());
    let r = (case.act)(&settling).await;
    mock.faults().clear();
    let label = format!("{} (every send dropped)", case.op);
    let err = r.expect_err(&label);
    assert!(err.maybe_applied(), "{label}: {err}");
    let sends = mock.stats().op(case.op);
    assert_eq!(
        sends,
        u64::from(WRITE_ROUNDS),
        "{label}: sent {sends} times"
    );
}

/// Arranges, arms the fault, writes through `Settling`; the array's view after.
async fn run(case: &Case, mock: MockArray, lose: Option<bool>) -> Value {
    (case.arrange)(&mock).await.expect("arrange");
    mock.reset_stats();
    match lose {
        Some(true) => mock.faults().fail_write_after_effect(1),
        Some(false) => mock.faults().drop_write(1),
        None => {}
    }
    let settling = Settling::new(mock.clone());
    let r = (case.act)(&settling).await;
    let label = format!("{} (lost: {lose:?})", case.op);
    r.unwrap_or_else(|e| panic!("{label}: the caller must get success, got {e}"));
    let sends = mock.stats().op(case.op);
    let want = if lose == Some(false) { 2 } else { 1 };
    assert_eq!(sends, want, "{label}: sent {sends} times");
    mock.faults().clear();
    view(&mock).await
}

/// Everything a write can change, in a form that ignores ids, serials and times.
async fn view(a: &dyn FlashArray) -> Value {
    let all = ListParams::all();
    let vols: Vec<Value> = a
        .list_volumes(&all)
        .await
        .unwrap()
        .iter()
        .map(|v| json!([v.name, v.provisioned, v.destroyed, v.pod.name]))
        .collect();
    let hosts: Vec<Value> = a
        .list_hosts(&all)
        .await
        .unwrap()
        .iter()
        .map(|h| json!([h.name, h.iqns, h.wwns, h.nqns, h.host_group.name]))
        .collect();
    let groups: Vec<String> = a
        .list_host_groups(&all)
        .await
        .unwrap()
        .into_iter()
        .map(|g| g.name)
        .collect();
    let pods: Vec<Value> = a
        .list_pods(&all)
        .await
        .unwrap()
        .iter()
        .map(|p| json!([p.name, p.quota_limit, p.destroyed]))
        .collect();
    let conns: Vec<Value> = a
        .list_connections(&ConnectionParams::default())
        .await
        .unwrap()
        .iter()
        .map(|c| json!([c.volume.name, c.host.name, c.host_group.name, c.lun]))
        .collect();
    let mut tags = Vec::new();
    for kind in [
        TagResource::Volume,
        TagResource::Host,
        TagResource::HostGroup,
        TagResource::Pod,
    ] {
        let listed = a.list_tags(kind, &TagParams::default()).await.unwrap();
        tags.extend(
            listed
                .iter()
                .map(|t| json!([t.resource.name, t.namespace, t.key, t.value])),
        );
    }
    let realms: Vec<Value> = a
        .list_realms(&all)
        .await
        .unwrap()
        .iter()
        .map(|r| json!([r.name, r.destroyed]))
        .collect();
    let policies: Vec<String> = a
        .list_management_access_policies(&[])
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    let admins: Vec<Value> = a
        .list_admins(&[])
        .await
        .unwrap()
        .iter()
        .map(|u| {
            json!([
                u.name,
                u.api_token.as_ref().is_some_and(|t| t.created_at.is_some())
            ])
        })
        .collect();
    json!({"volumes": vols, "hosts": hosts, "host_groups": groups, "pods": pods,
        "connections": conns, "tags": tags, "realms": realms, "policies": policies, "admins": admins})
}

fn realm() -> RealmName {
    RealmName::new("lost-realm").unwrap()
}

fn policy_body() -> ManagementAccessPolicyPost {
    ManagementAccessPolicyPost::default()
        .with_enabled(true)
        .with_rules(vec![ManagementAccessRule::in_realm(
            "storage",
            realm().as_str(),
        )])
}

fn admin_body() -> AdminPost {
    AdminPost::default().with_management_access_policies(vec![
        ReferenceWithType::management_access_policy("lost-policy"),
    ])
}

fn tag(resource: &str, key: &str, value: &str) -> Tag {
    TagBody::new("pxfa.io", key, value).on(resource.to_string())
}

/// Nothing to set up.
fn nothing() -> Step {
    |_| Box::pin(async { Ok(()) })
}

/// Every write kind of the table, one case each.
fn cases() -> Vec<Case> {
    let mut out = volume_cases();
    out.extend(host_cases());
    out.extend(pod_and_token_cases());
    out.extend(realm_cases());
    out
}

fn volume_cases() -> Vec<Case> {
    let v1 = step!(|a| a.create_volumes(&vs(&["v1"]), &size(1 << 30)).await?);
    vec![
        Case {
            op: Op::CreateVolumes,
            arrange: nothing(),
            act: step!(|a| a
                .create_volumes(&vs(&["v1", "v2"]), &size(1 << 30).with_tags(owner_tags()))
                .await?),
        },
        Case {
            op: Op::CreateVolumesBatch,
            arrange: nothing(),
            act: step!(|a| a
                .create_volumes_batch(&[
                    VolumeBatchPost::new(v("v1"), 1 << 30).with_tags(owner_tags()),
                    VolumeBatchPost::new(v("v2"), 2 << 30),
                ])
                .await?),
        },
        Case {
            op: Op::PatchVolumes,
            arrange: v1,
            act: step!(|a| a
                .patch_volumes(
                    &vs(&["v1"]),
                    &VolumePatch::default().with_provisioned(2 << 30),
                    false
                )
                .await?),
        },
        Case {
            op: Op::EradicateVolumes,
            arrange: step!(|a| {
                a.create_volumes(&vs(&["v1"]), &size(1 << 30)).await?;
                a.patch_volumes(&vs(&["v1"]), &VolumePatch::destroy(), false)
                    .await?
            }),
            act: step!(|a| a.eradicate_volumes(&vs(&["v1"])).await?),
        },
        Case {
            op: Op::SetTags,
            arrange: v1,
            act: step!(|a| a
                .set_tags(TagResource::Volume, &[tag("v1", "tenant", "t2")])
                .await?),
        },
        Case {
            op: Op::DeleteTags,
            arrange: step!(|a| a
                .create_volumes(&vs(&["v1"]), &size(1 << 30).with_tags(owner_tags()))
                .await?),
            act: step!(|a| a
                .delete_tags(
                    TagResource::Volume,
                    &["v1".into()],
                    &["tenant".into()],
                    &["pxfa.io".into()]
                )
                .await?),
        },
    ]
}

fn host_cases() -> Vec<Case> {
    let h1 = step!(|a| hosts(a, &["h1", "h2"]).await);
    let grouped = step!(|a| {
        hosts(a, &["h1"]).await;
        groups(a, &["g1"]).await;
        a.add_host_group_members(&g("g1"), &[h("h1")]).await?
    });
    let connectable = step!(|a| {
        hosts(a, &["h1"]).await;
        a.create_volumes(&vs(&["v1"]), &size(1 << 30)).await?
    });
    vec![
        Case {
            op: Op::CreateHosts,
            arrange: nothing(),
            act: step!(|a| a
                .create_hosts(
                    &[h("h1")],
                    &HostPost::default()
                        .with_iqns(vec!["iqn.2024-01.io.pxfa:lost".into()])
                        .with_tags(owner_tags())
                )
                .await?),
        },
        Case {
            op: Op::PatchHosts,
            arrange: h1,
            act: step!(|a| a
                .patch_hosts(
                    &[h("h1")],
                    &HostPatch::default().with_add_iqns(vec!["iqn.2024-01.io.pxfa:lost".into()])
                )
                .await?),
        },
        Case {
            op: Op::DeleteHosts,
            arrange: h1,
            act: step!(|a| a.delete_hosts(&[h("h1")]).await?),
        },
        Case {
            op: Op::CreateHostGroups,
            arrange: nothing(),
            act: step!(|a| a
                .create_host_groups(
                    &[g("g1")],
                    &HostGroupPost::default().with_tags(owner_tags())
                )
                .await?),
        },
        Case {
            op: Op::DeleteHostGroups,
            arrange: step!(|a| groups(a, &["g1"]).await),
            act: step!(|a| a.delete_host_groups(&[g("g1")]).await?),
        },
        Case {
            op: Op::AddHostGroupMembers,
            arrange: step!(|a| {
                hosts(a, &["h1", "h2"]).await;
                groups(a, &["g1"]).await
            }),
            act: step!(|a| a
                .add_host_group_members(&g("g1"), &[h("h1"), h("h2")])
                .await?),
        },
        Case {
            op: Op::RemoveHostGroupMembers,
            arrange: grouped,
            act: step!(|a| a.remove_host_group_members(&g("g1"), &[h("h1")]).await?),
        },
        Case {
            op: Op::CreateConnections,
            arrange: connectable,
            act: step!(|a| a
                .create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["v1"]), Some(7))
                .await?),
        },
        Case {
            op: Op::DeleteConnections,
            arrange: step!(|a| {
                hosts(a, &["h1"]).await;
                a.create_volumes(&vs(&["v1"]), &size(1 << 30)).await?;
                a.create_connections(&ConnectionTarget::Host(h("h1")), &vs(&["v1"]), None)
                    .await?
            }),
            act: step!(|a| a
                .delete_connections(&ConnectionTarget::Host(h("h1")), &vs(&["v1"]))
                .await?),
        },
    ]
}

fn pod_and_token_cases() -> Vec<Case> {
    let pod = step!(|a| a.create_pods(&[p("pod1")], &PodPost::default()).await?);
    let token = step!(|a| a.create_api_token(USER, None).await?);
    vec![
        Case {
            op: Op::CreatePods,
            arrange: nothing(),
            act: step!(|a| {
                let mut body = PodPost::default().with_tags(owner_tags());
                body.quota_limit = Some(1 << 40);
                a.create_pods(&[p("pod1")], &body).await?
            }),
        },
        Case {
            op: Op::PatchPods,
            arrange: pod,
            act: step!(|a| a
                .patch_pods(
                    &[p("pod1")],
                    &PodPatch::default().with_quota_limit(1 << 40),
                    false
                )
                .await?),
        },
        Case {
            op: Op::EradicatePods,
            arrange: step!(|a| {
                a.create_pods(&[p("pod1")], &PodPost::default()).await?;
                a.patch_pods(&[p("pod1")], &PodPatch::destroy(), false)
                    .await?
            }),
            act: step!(|a| a.eradicate_pods(&[p("pod1")], false).await?),
        },
        Case {
            op: Op::CreateApiToken,
            arrange: nothing(),
            act: step!(|a| a.create_api_token(USER, None).await?),
        },
        Case {
            op: Op::DeleteApiToken,
            arrange: token,
            act: step!(|a| a.delete_api_token(USER).await?),
        },
    ]
}

fn realm_cases() -> Vec<Case> {
    let made = step!(|a| a.create_realms(&[realm()], &RealmPost::default()).await?);
    let with_policy = step!(|a| {
        a.create_realms(&[realm()], &RealmPost::default()).await?;
        a.create_management_access_policies(&["lost-policy".into()], &policy_body())
            .await?
    });
    vec![
        Case {
            op: Op::CreateRealms,
            arrange: nothing(),
            act: step!(|a| a.create_realms(&[realm()], &RealmPost::default()).await?),
        },
        Case {
            op: Op::PatchRealms,
            arrange: made,
            act: step!(|a| a
                .patch_realms(
                    &[realm()],
                    &RealmPatch::default().with_destroyed(true),
                    false
                )
                .await?),
        },
        Case {
            op: Op::EradicateRealms,
            arrange: step!(|a| {
                a.create_realms(&[realm()], &RealmPost::default()).await?;
                a.patch_realms(
                    &[realm()],
                    &RealmPatch::default().with_destroyed(true),
                    false,
                )
                .await?
            }),
            act: step!(|a| a.eradicate_realms(&[realm()], false).await?),
        },
        Case {
            op: Op::CreateManagementAccessPolicies,
            arrange: made,
            act: step!(|a| a
                .create_management_access_policies(&["lost-policy".into()], &policy_body())
                .await?),
        },
        Case {
            op: Op::DeleteManagementAccessPolicies,
            arrange: with_policy,
            act: step!(|a| a
                .delete_management_access_policies(&["lost-policy".into()])
                .await?),
        },
        Case {
            op: Op::CreateAdmins,
            arrange: with_policy,
            act: step!(|a| a
                .create_admins(&["lost-admin".into()], &admin_body())
                .await?),
        },
        Case {
            op: Op::DeleteAdmins,
            arrange: step!(|a| {
                a.create_realms(&[realm()], &RealmPost::default()).await?;
                a.create_management_access_policies(&["lost-policy".into()], &policy_body())
                    .await?;
                a.create_admins(&["lost-admin".into()], &admin_body())
                    .await?
            }),
            act: step!(|a| a.delete_admins(&["lost-admin".into()]).await?),
        },
    ]
}
