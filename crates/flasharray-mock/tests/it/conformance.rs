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

checks!(
    array::names_are_case_insensitive_unique_and_keep_creation_case,
    volumes::a_destroyed_volume_still_owns_its_name,
    volumes::pod_volumes_need_a_live_pod,
    volumes::volume_sizes_follow_the_array_rules,
    volumes::batch_create_is_all_or_nothing,
    volumes::volumes_batch_sizes_tags_and_all_or_nothing,
    volumes::serials_and_creation_times,
    volumes::resize_needs_truncate_to_shrink,
    volumes::rename_keeps_the_pod_and_refuses_taken_names,
    volumes::volumes_move_between_pods_with_connections_and_tags,
    volumes::copies_take_the_source_size,
    hosts::host_initiators_are_normalised_and_owned_once,
    hosts::host_initiators_add_remove_replace,
    host_groups::a_host_is_in_at_most_one_group,
    host_groups::hosts_and_groups_in_use_cannot_be_deleted,
    connections::luns_are_allocated_as_the_array_does,
    connections::connection_rows_counts_and_removal,
    connections::destroyed_volumes_cannot_be_connected,
    pods::pods_quota_destroy_recover_eradicate,
    pods::pod_quota_cannot_drop_below_usage_and_rename_carries_volumes,
    tags::tags_upsert_filter_delete_and_follow_their_object,
    array::list_parameters_behave_like_the_array,
    host_groups::joining_a_group_cannot_create_lun_or_volume_clashes,
    array::filters_and_sorts_work_on_every_collection,
    tags::creation_tags_arrive_with_every_object_of_the_call,
);

/// The registry other runners (e.g. the simulator run below) iterate works, and
/// lists every check above.
#[tokio::test]
async fn the_conformance_registry_runs_every_check() {
    let checks = conformance::all();
    assert_eq!(
        checks.len(),
        25,
        "a check is missing here or in the registry"
    );
    for (name, check) in checks {
        let m = mock();
        check(&m).await;
        assert!(m.stats().calls > 0, "{name} made no calls");
    }
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
