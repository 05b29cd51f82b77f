//! The crate's public paths against `public-api.txt`: a change to the API is a deliberate
//! edit of that list (`PXFA_UPDATE_API=1 cargo test -p px-cluster --test public_api`).

#[test]
fn public_api_matches_the_checked_in_list() {
    api_surface::assert_public_api(env!("CARGO_MANIFEST_DIR"), "px_cluster");
}
