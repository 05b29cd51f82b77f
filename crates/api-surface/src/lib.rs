//! The public API of a workspace crate as a sorted list of paths, read from its source, and the
//! check that compares it with the list checked in beside the crate (`public-api.txt`), so that a
//! change to a crate's API is a deliberate edit of that list (#22 item 5).
//!
//! Each library crate has a `tests/public_api.rs` that calls [`assert_public_api`]. On a mismatch
//! the test prints the added and removed lines; `PXFA_UPDATE_API=1` rewrites the list instead.
//!
//! The walker reads source, not compiled metadata: it sees what is written (items, `mod`
//! declarations, `pub use`), not what a macro expands to, and it lists items under every `cfg`
//! except `test` and `doctest`, each with the `cfg`s that gate it, so one list holds for all
//! feature sets.

mod list;
mod surface;

pub use list::{UPDATE_VAR, assert_public_api, check};
pub use surface::{SurfaceError, public_paths};
