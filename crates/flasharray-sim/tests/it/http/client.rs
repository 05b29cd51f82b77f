//! The typed `RestArray` client end to end against the simulator.

use std::time::Duration;

use flasharray::models::{HostPost, VolumePatch, VolumePost};
use flasharray::rest::RestArray;
use flasharray::{
    ConnectionParams, ConnectionTarget, ErrorKind, FlashArray, HostGroupName, HostName, ListParams,
    PodName, VolumeName,
};

use crate::support::https::start;

#[tokio::test]
async fn rest_client_end_to_end() {
    let s = start().await;
    let rest = s.rest();
    let vols: Vec<VolumeName> = (0..25)
        .map(|i| VolumeName::new(format!("r{i:02}")).unwrap())
        .collect();
    let created = rest
        .create_volumes(&vols, &VolumePost::default().with_provisioned(10 << 20))
        .await
        .unwrap();
    assert_eq!(created.len(), 25);
    // Paging through the simulator with continuation tokens.
    let all = rest
        .list_volumes(&ListParams::all().page_size(4))
        .await
        .unwrap();
    assert_eq!(all.len(), 25);
    assert_eq!(all[24].name, "r24");
    let err = rest
        .list_volumes(&ListParams::names(["missing"]))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert_eq!(err.as_api().unwrap().context(), Some("missing"));

    let h = HostName::new("node-1").unwrap();
    rest.create_hosts(
        std::slice::from_ref(&h),
        &HostPost::default().with_iqns(vec!["iqn.2020-01.io.pxfa:node-1".into()]),
    )
    .await
    .unwrap();
    let g = HostGroupName::new("grp").unwrap();
    rest.create_host_groups(std::slice::from_ref(&g), &Default::default())
        .await
        .unwrap();
    rest.add_host_group_members(&g, std::slice::from_ref(&h))
        .await
        .unwrap();
    let conns = rest
        .create_connections(&ConnectionTarget::HostGroup(g.clone()), &vols[..2], None)
        .await
        .unwrap();
    assert!(!conns.is_empty());
    let rows = rest
        .list_connections(&ConnectionParams {
            host_names: vec!["node-1".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    let mut luns: Vec<u32> = rows.iter().filter_map(|c| c.lun).collect();
    luns.sort();
    assert_eq!(luns, [253, 254]);
    let err = rest
        .delete_hosts(std::slice::from_ref(&h))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InUse);

    rest.patch_volumes(&vols[20..], &VolumePatch::destroy(), false)
        .await
        .unwrap();
    let destroyed = rest
        .list_volumes(&ListParams::all().destroyed(true))
        .await
        .unwrap();
    assert_eq!(destroyed.len(), 5);
    rest.eradicate_volumes(&vols[20..]).await.unwrap();

    let pod = PodName::new("tenant").unwrap();
    rest.create_pods(std::slice::from_ref(&pod), &Default::default())
        .await
        .unwrap();
    assert_eq!(
        rest.list_pod_arrays(std::slice::from_ref(&pod))
            .await
            .unwrap()
            .len(),
        1
    );

    // Busy and rate-limited answers are retried by the client.
    s.array.faults().busy_next(1);
    s.array
        .faults()
        .rate_limit_next(1, Duration::from_millis(10));
    assert_eq!(rest.get_array_space().await.unwrap().name, "pxfa-sim");

    // A token issued by the array logs in too.
    let issued = rest.create_api_token("pureuser", None).await.unwrap();
    let other = RestArray::builder(s.sim.url())
        .api_token(issued.api_token.expose().unwrap().to_string().into())
        .ca_pem(s.sim.cert_pem().as_bytes().to_vec())
        .build()
        .unwrap();
    other.get_array().await.unwrap();
    rest.close().await.unwrap();
    s.sim.shutdown().await;
}
