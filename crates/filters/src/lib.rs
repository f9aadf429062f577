//! Filters engine (stub: being written by issue 3).
use nc_dataset::FilterSpec;

/// A `_Filter` / `-F` spec text that cannot be parsed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilterSpecError {
    /// Bad token.
    #[error("bad filter spec {text:?} at {pos}: {msg}")]
    Bad {
        /// the whole text
        text: String,
        /// 0-based byte position
        pos: usize,
        /// what is wrong
        msg: String,
    },
}

/// Parse `speclist := spec ('|' spec)*`, `spec := filterid (',' param)*`.
///
/// # Errors
/// On any token the filters documentation does not allow.
pub fn parse_spec_list(text: &str) -> Result<Vec<FilterSpec>, FilterSpecError> {
    let mut out = Vec::new();
    for spec in text.split('|') {
        let mut it = spec.split(',');
        let id = it.next().unwrap_or("").trim().parse::<u32>().map_err(|e| FilterSpecError::Bad { text: text.into(), pos: 0, msg: e.to_string() })?;
        let params = it.map(|p| p.trim().parse::<u32>().map_err(|e| FilterSpecError::Bad { text: text.into(), pos: 0, msg: e.to_string() })).collect::<Result<Vec<_>, _>>()?;
        out.push(FilterSpec { id, params });
    }
    Ok(out)
}
