//! The array's rules as checks that any [`FlashArray`] must pass, so that the mock,
//! the simulator behind the REST client, and (read-only parts aside) a lab array can
//! be held to the same behaviour. Built with the `testing` feature.
//!
//! Each check takes a fresh, empty array with the default settings (24 h
//! eradication delay, connected volumes not destroyable) and panics with a message
//! naming the broken rule, like a test assertion: these are test helpers, called
//! from `#[test]` functions or iterated through [`all`]. The checks are grouped by
//! the resource whose rule they hold; [`shorthand`] has the helpers they are written
//! with. Rules that need the mock's clock, faults or statistics stay in the crate's
//! tests.

use flasharray::FlashArray;
use futures_util::future::BoxFuture;

pub mod array;
pub mod connections;
pub mod host_groups;
pub mod hosts;
pub mod lost_answers;
pub mod pods;
pub mod shorthand;
pub mod tags;
pub mod volumes;

/// One conformance check: give it a fresh array, await it; it panics on a broken rule.
pub type Check = for<'a> fn(&'a dyn FlashArray) -> BoxFuture<'a, ()>;

macro_rules! registry {
    ($($module:ident :: $name:ident),* $(,)?) => {
        /// Every check with its name, for runners that build a fresh array per check.
        pub fn all() -> Vec<(&'static str, Check)> {
            vec![$((stringify!($name), (|a| Box::pin($module::$name(a))) as Check)),*]
        }
    };
}

/// Calls `$callback!(module::check, ...)` with every conformance check, so that a test
/// binary can make one `#[test]` per check without keeping its own copy of the list:
///
/// ```ignore
/// macro_rules! one_test_each {
///     ($($module:ident :: $name:ident),* $(,)?) => {$(
///         #[tokio::test]
///         async fn $name() {
///             flasharray_mock::conformance::$module::$name(&MockArray::new()).await
///         }
///     )*};
/// }
/// flasharray_mock::conformance_checks!(one_test_each);
/// ```
#[macro_export]
macro_rules! conformance_checks {
    ($callback:ident) => {
        $callback!(
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
            volumes::rename_and_destroy_are_separate_requests,
            hosts::host_initiators_are_normalised_and_owned_once,
            hosts::host_initiators_add_remove_replace,
            hosts::an_nvme_host_holds_no_iqn_or_wwn,
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
    };
}

conformance_checks!(registry);
