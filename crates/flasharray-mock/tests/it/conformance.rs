//! The shared conformance checks of `flasharray_mock::conformance`: each on a fresh
//! mock as its own test, all of them through the registry, and (with the `sim`
//! feature) all of them through the REST client against the HTTPS simulator, where
//! the rules must hold the same over the wire as in memory.

use flasharray_mock::conformance;

use crate::support::mock;

macro_rules! checks {
    ($($module:ident :: $name:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $name() {
            conformance::$module::$name(&mock()).await
        }
    )*};
}

flasharray_mock::conformance_checks!(checks);

/// The registry other runners (e.g. the simulator run below) iterate works, and
/// lists every check (the list `conformance_checks!` gives `checks!` above).
#[tokio::test]
async fn the_conformance_registry_runs_every_check() {
    let checks = conformance::all();
    assert_eq!(
        checks.len(),
        27,
        "a check is missing here or in the registry"
    );
    for (name, check) in checks {
        let m = mock();
        check(&m).await;
        assert!(m.stats().calls > 0, "{name} made no calls");
    }
}

/// Every write kind of the method table, its answer lost or the write dropped, is
/// settled by `flasharray::Settling`: success, and the array as without the fault.
#[tokio::test]
async fn lost_answers_of_every_write_kind_are_settled() {
    conformance::lost_answers::every_write_kind_is_settled().await
}

#[cfg(feature = "sim")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_conformance_check_holds_over_https() {
    use flasharray::rest::RestArray;
    use flasharray_mock::MockArray;
    use flasharray_mock::sim::{SimConfig, Simulator};

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
