//! CDL parser (stub: being written).
use nc_dataset::Dataset;

/// Options for parsing CDL.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions {}

/// A CDL syntax or semantic error with its position.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CdlError {
    /// Syntax error.
    #[error("{file}:{line}:{col}: {msg}")]
    Syntax {
        /// file name
        file: String,
        /// 1-based line
        line: usize,
        /// 1-based column
        col: usize,
        /// message
        msg: String,
    },
}

/// Parse CDL text. `file` names the source in error messages.
///
/// # Errors
/// On any syntax or semantic error.
pub fn parse_cdl(text: &str, file: &str, opts: &ParseOptions) -> Result<Dataset, CdlError> {
    let _ = (text, opts);
    Err(CdlError::Syntax { file: file.into(), line: 1, col: 1, msg: "not implemented".into() })
}

/// Parse a CDL file from disk (streaming the data section).
///
/// # Errors
/// On I/O, syntax or semantic errors.
pub fn parse_cdl_file(path: &std::path::Path, opts: &ParseOptions) -> Result<Dataset, CdlError> {
    let _ = opts;
    Err(CdlError::Syntax { file: path.display().to_string(), line: 1, col: 1, msg: "not implemented".into() })
}
