//! The shared conformance checks of `flasharray_mock::conformance`, all of them through
//! the REST client against the HTTPS simulator: the rules must hold the same over the
//! wire as in memory.

use flasharray::rest::RestArray;
use flasharray_mock::{MockArray, conformance};
use flasharray_sim::{SimConfig, Simulator};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_conformance_check_holds_over_https() {
    const TOKEN: &str = "0b7d4c2e-8f1a-4d3b-9e6c-5a2f1b0c9d8e";

    let mut failed = Vec::new();
    for (name, check) in conformance::all() {
        // Each check runs in its own task so that one broken rule (a panic) is
        // reported by name instead of hiding the others.
        let outcome = tokio::spawn(async move {
            let array = MockArray::new();
            let sim = Simulator::start(array.clone(), SimConfig::new(TOKEN.into()))
                .await
                .expect("simulator starts");
            let rest = RestArray::builder(sim.url())
                .api_token(TOKEN.into())
                .ca_pem(sim.cert_pem().as_bytes().to_vec())
                .build()
                .expect("client builds");
            check(&rest).await;
            sim.shutdown().await;
            assert!(array.stats().calls > 0, "the check never reached the array");
        })
        .await;
        if let Err(e) = outcome {
            failed.push(format!("{name}: {e}"));
        }
    }
    assert!(
        failed.is_empty(),
        "broken over HTTPS:\n{}",
        failed.join("\n")
    );
}
