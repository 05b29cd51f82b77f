//! The shared conformance checks of `flasharray_mock::conformance`: each on a fresh
//! mock as its own test, and all of them through the registry (`flasharray-sim`'s
//! tests run them through the REST client against the HTTPS simulator).

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
