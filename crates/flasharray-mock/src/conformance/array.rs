//! Rules that hold across collections: case-insensitive names, list parameters, filters and sorts.

use flasharray::models::*;
use flasharray::params::*;
use flasharray::size::GIB;
use flasharray::{ErrorKind, FlashArray};

use super::shorthand::*;

/// Rule: names are case insensitive unique and keep creation case.
pub async fn names_are_case_insensitive_unique_and_keep_creation_case(a: &dyn FlashArray) {
    a.create_volumes(&vs(&["Data01"]), &size(GIB))
        .await
        .unwrap();
    assert_eq!(
        kind(a.create_volumes(&vs(&["DATA01"]), &size(GIB))).await,
        ErrorKind::AlreadyExists
    );
    assert_eq!(vol(a, "data01").await.name, "Data01");
    hosts(a, &["Node1"]).await;
    assert_eq!(
        kind(a.create_hosts(&[h("NODE1")], &HostPost::default())).await,
        ErrorKind::AlreadyExists
    );
    groups(a, &["Grp"]).await;
    assert_eq!(
        kind(a.create_host_groups(&[g("grp")], &Default::default())).await,
        ErrorKind::AlreadyExists
    );
    a.create_pods(&[p("Pod1")], &PodPost::default())
        .await
        .unwrap();
    assert_eq!(
        kind(a.create_pods(&[p("POD1")], &PodPost::default())).await,
        ErrorKind::AlreadyExists
    );
}

/// Rule: list parameters behave like the array.
pub async fn list_parameters_behave_like_the_array(a: &dyn FlashArray) {
    a.create_volumes(&vs(&["px-a"]), &size(GIB)).await.unwrap();
    a.create_volumes(&vs(&["px-b"]), &size(3 * GIB))
        .await
        .unwrap();
    a.create_volumes(&vs(&["other"]), &size(2 * GIB))
        .await
        .unwrap();
    a.patch_volumes(&vs(&["other"]), &VolumePatch::destroy(), false)
        .await
        .unwrap();
    let names = |v: Vec<Volume>| v.into_iter().map(|v| v.name).collect::<Vec<_>>();
    let e = a
        .list_volumes(&ListParams::names(["px-a", "nope"]))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(e.as_api().unwrap().context(), Some("nope"));
    assert_eq!(
        names(
            a.list_volumes(&ListParams::all().destroyed(false))
                .await
                .unwrap()
        ),
        ["px-a", "px-b"]
    );
    assert_eq!(
        names(
            a.list_volumes(&ListParams::all().destroyed(true))
                .await
                .unwrap()
        ),
        ["other"]
    );
    assert_eq!(
        kind(a.list_volumes(&ListParams::names(["other"]).destroyed(false))).await,
        ErrorKind::Destroyed
    );
    let by_filter = a
        .list_volumes(&ListParams::all().filter("name='px-*' and provisioned>1073741824"))
        .await
        .unwrap();
    assert_eq!(names(by_filter), ["px-b"]);
    let sorted = ListParams {
        sort: vec!["provisioned-".into()],
        ..Default::default()
    };
    assert_eq!(
        names(a.list_volumes(&sorted).await.unwrap()),
        ["px-b", "other", "px-a"]
    );
    let sorted = ListParams {
        sort: vec!["-name".into()],
        limit: Some(2),
        ..Default::default()
    };
    assert_eq!(
        names(a.list_volumes(&sorted).await.unwrap()),
        ["px-b", "px-a"]
    );
    let id = vol(a, "px-a").await.id.unwrap();
    let by_id = ListParams {
        ids: vec![id],
        ..Default::default()
    };
    assert_eq!(names(a.list_volumes(&by_id).await.unwrap()), ["px-a"]);
    assert_eq!(
        kind(a.list_volumes(&ListParams::all().filter("name='unterminated"))).await,
        ErrorKind::Invalid
    );
    let hosts_by_ids = ListParams {
        ids: vec!["x".into()],
        ..Default::default()
    };
    assert_eq!(kind(a.list_hosts(&hosts_by_ids)).await, ErrorKind::Invalid);
}

/// Rule: filters and sorts work on every collection.
pub async fn filters_and_sorts_work_on_every_collection(a: &dyn FlashArray) {
    let fc = HostPost::default().with_wwns(vec!["2100000000000001".into()]);
    a.create_hosts(&[h("fc-1")], &fc).await.unwrap();
    a.create_hosts(
        &[h("iscsi-1")],
        &HostPost::default().with_iqns(vec!["iqn.2020-01.io.pxfa:n1".into()]),
    )
    .await
    .unwrap();
    let hosts = a
        .list_hosts(&ListParams::all().filter("wwns='21000000*'"))
        .await
        .unwrap();
    assert_eq!(
        hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
        ["fc-1"]
    );
    let hosts = a
        .list_hosts(&ListParams {
            sort: vec!["name-".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
        ["iscsi-1", "fc-1"]
    );
    a.create_pods(&[p("pa"), p("pb")], &PodPost::default())
        .await
        .unwrap();
    a.patch_pods(
        &[p("pb")],
        &PodPatch::default().with_quota_limit(GIB),
        false,
    )
    .await
    .unwrap();
    let pods = a
        .list_pods(&ListParams::all().filter("quota_limit"))
        .await
        .unwrap();
    assert_eq!(
        pods.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["pb"]
    );
    let pods = a
        .list_pods(&ListParams::all().filter("arrays[any].status='online' and not(name='pb')"))
        .await
        .unwrap();
    assert_eq!(
        pods.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["pa"]
    );
    a.create_volumes(&vs(&["c1", "c2"]), &size(GIB))
        .await
        .unwrap();
    a.create_connections(&ConnectionTarget::Host(h("fc-1")), &vs(&["c1", "c2"]), None)
        .await
        .unwrap();
    let conns = a
        .list_connections(&ConnectionParams {
            filter: Some("lun>1".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(conns.len(), 1);
    assert_eq!(conns[0].volume.name.as_deref(), Some("c2"));
}
