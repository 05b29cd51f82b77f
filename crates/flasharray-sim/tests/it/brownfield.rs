//! The brownfield seed served over HTTPS: the REST client's foreign view is the
//! in-memory one.

use flasharray::FlashArray;
use flasharray::rest::RestArray;
use flasharray_mock::foreign::ForeignView;
use flasharray_mock::{MockArray, MockClock, Seed};
use flasharray_sim::{SimConfig, Simulator};

const DAY_MS: u64 = 24 * 3600 * 1000;

fn brownfield() -> MockArray {
    MockArray::builder()
        .clock(MockClock::manual(30 * DAY_MS))
        .seed(Seed::brownfield())
        .build()
}

#[tokio::test]
async fn brownfield_seed_served_over_https_lists_same_objects() {
    let mock = brownfield();
    let token = "5e2a1c3d-0f4b-4e7a-9c1d-2b3a4c5d6e7f";
    let sim = Simulator::start(mock.clone(), SimConfig::new(token.into()))
        .await
        .unwrap();
    let rest = RestArray::builder(sim.url())
        .api_token(token.into())
        .ca_pem(sim.cert_pem().as_bytes().to_vec())
        .build()
        .unwrap();
    let direct = ForeignView::read(&mock, "tenant-demo").await.unwrap();
    let remote = ForeignView::read(&rest, "tenant-demo").await.unwrap();
    assert!(direct.len() > 30, "{}", direct.len());
    assert_eq!(remote.changes_since(&direct), Vec::<String>::new());
    rest.close().await.unwrap();
    sim.shutdown().await;
}
