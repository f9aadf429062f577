//! ncdump-style CDL printer (stub: being written).
use nc_dataset::{DataSource, Dataset};

/// ncdump options.
#[derive(Debug, Clone, Default)]
pub struct DumpOptions {}

/// Printing failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrintError {
    /// Writing the output failed.
    #[error("writing output: {0}")]
    Io(#[from] std::io::Error),
}

/// Print `ds` as CDL, reading data through `src`.
///
/// # Errors
/// On write errors or data read errors.
pub fn print(ds: &Dataset, src: &dyn DataSource, opts: &DumpOptions, out: &mut dyn std::io::Write) -> Result<(), PrintError> {
    let _ = (ds, src, opts, out);
    Ok(())
}
