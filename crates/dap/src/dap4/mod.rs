//! DAP4: see the dap4 branch

use crate::{DapData, DapError};

/// Decode a DAP4 response (the bytes of `PATH.dap`: the DMR, then the chunked data) into a
/// dataset, the values of its variables and the warnings to show.
///
/// # Errors
/// Always, for now: DAP4 is read on the dap4 branch.
pub fn open_response(
    bytes: &[u8],
    display_name: &str,
) -> Result<(nc_dataset::Dataset, DapData, Vec<String>), DapError> {
    let _ = bytes;
    Err(DapError::Unsupported {
        url: display_name.to_string(),
        what: "DAP4 is not read yet".to_string(),
    })
}
