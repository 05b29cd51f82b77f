//! `/arrays` and `/arrays/space`: the array itself.

use crate::error::Result;
use crate::models::{ArrayInfo, ArraySpace};
use crate::rest::RestArray;

/// `GET /arrays`.
pub(super) async fn get(array: &RestArray) -> Result<ArrayInfo> {
    array.transport.single("arrays").await
}

/// `GET /arrays/space`.
pub(super) async fn space(array: &RestArray) -> Result<ArraySpace> {
    array.transport.single("arrays/space").await
}
