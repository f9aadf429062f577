//! Error types: [`FilterSpecError`] (the request text is wrong) apart from [`FilterError`]
//! (a codec failed on a chunk, or a filter is not available).

use std::fmt;
use std::path::PathBuf;

/// What is wrong with one token of a filter spec or `-F` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecProblem {
    /// Nothing where a filter id or parameter must be (`"307,"`, `"|1"`).
    Empty,
    /// A number with a fraction or exponent but no `f`/`d` tag.
    UntaggedFraction,
    /// `0x...`: hexadecimal is not part of the syntax.
    Hex,
    /// A suffix that is not one of the documented tags.
    UnknownTag,
    /// Not a number (nor a known filter name where names are allowed).
    NotANumber,
    /// The value does not fit the type its tag names.
    OutOfRange,
    /// A minus sign on a tag that is unsigned (`-5U`, `-3ub`).
    NegativeUnsigned,
    /// A filter id that is 0 or above 65535.
    BadFilterId,
    /// A filter name where the caller asked for numeric ids only.
    NameNotAllowed,
    /// A filter name nobody knows.
    UnknownName,
    /// A `-F` option with no `,` after the variable list.
    MissingComma,
    /// An empty variable name in a `-F` variable list.
    EmptyVariable,
}

impl fmt::Display for SpecProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SpecProblem::Empty => "empty item (trailing or doubled separator?)",
            SpecProblem::UntaggedFraction => {
                "a fraction or exponent needs a tag: add `f` (float) or `d` (double)"
            }
            SpecProblem::Hex => "hexadecimal constants are not allowed: write the value in decimal",
            SpecProblem::UnknownTag => {
                "unknown type tag: use b, ub, s, us, u, f, d, l or ul (case-insensitive)"
            }
            SpecProblem::NotANumber => "not a number",
            SpecProblem::OutOfRange => {
                "value out of range for its type (untagged positive values must fit 32 bits: use the UL tag for 64-bit values)"
            }
            SpecProblem::NegativeUnsigned => "a negative value cannot have an unsigned tag",
            SpecProblem::BadFilterId => "an HDF5 filter id must be between 1 and 65535",
            SpecProblem::NameNotAllowed => "filter names are not allowed here: use the numeric id",
            SpecProblem::UnknownName => "unknown filter name",
            SpecProblem::MissingComma => {
                "expected `VAR,SPEC`, `VAR,none`, `*,SPEC` or `none`"
            }
            SpecProblem::EmptyVariable => "empty variable name",
        })
    }
}

/// A `_Filter` / `-F` spec text that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FilterSpecError {
    /// One token is not allowed by the filters documentation.
    #[error("bad filter spec {text:?}: token {token:?} at byte {pos}: {problem}")]
    Bad {
        /// The whole text.
        text: String,
        /// The offending token (may be empty).
        token: String,
        /// 0-based byte position of the token in `text`.
        pos: usize,
        /// What is wrong.
        problem: SpecProblem,
    },
    /// Parameters that a known filter does not accept (e.g. deflate without a level).
    #[error("filter spec {text:?}: filter {id} ({name}) {reason}")]
    BadParams {
        /// The whole text.
        text: String,
        /// Filter id.
        id: u32,
        /// Known filter name.
        name: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
}

/// A codec failed on a chunk, or a filter cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// The encoded chunk ends before its framing says it should.
    #[error("filter {id} ({name}): chunk truncated: needed {needed} bytes at byte {at}, chunk has {len}")]
    Truncated {
        /// Filter id.
        id: u32,
        /// Filter name.
        name: &'static str,
        /// Bytes needed from `at`.
        needed: usize,
        /// Position.
        at: usize,
        /// Chunk length.
        len: usize,
    },
    /// The chunk's framing or compressed stream is invalid.
    #[error("filter {id} ({name}): corrupt chunk: {what}")]
    Corrupt {
        /// Filter id.
        id: u32,
        /// Filter name.
        name: &'static str,
        /// What is wrong (the codec library's message where there is one).
        what: String,
    },
    /// A checksum does not match.
    #[error("filter {id} ({name}): checksum mismatch: stored {stored:#010x}, computed {computed:#010x} (data corrupted)")]
    Checksum {
        /// Filter id.
        id: u32,
        /// Filter name.
        name: &'static str,
        /// Checksum stored with the chunk.
        stored: u32,
        /// Checksum of the data.
        computed: u32,
    },
    /// A decoded length is not what the framing or the chunk shape says.
    #[error("filter {id} ({name}): decoded {got} bytes, expected {expected}")]
    Length {
        /// Filter id (0 for the pipeline's final check).
        id: u32,
        /// Filter name.
        name: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// A decoded size beyond the limit of [`crate::FilterContext::max_decoded`].
    #[error(
        "filter {id} ({name}): chunk claims {claimed} decoded bytes, more than the limit {limit}"
    )]
    TooLarge {
        /// Filter id.
        id: u32,
        /// Filter name.
        name: &'static str,
        /// Claimed size.
        claimed: u64,
        /// Limit.
        limit: usize,
    },
    /// Parameters the filter cannot work with.
    #[error("filter {id} ({name}): bad parameters {params:?}: {reason}")]
    BadParams {
        /// Filter id.
        id: u32,
        /// Filter name.
        name: String,
        /// The parameters.
        params: Vec<u32>,
        /// What is wrong.
        reason: String,
    },
    /// A feature of the format we do not implement (e.g. blosc's snappy).
    #[error("filter {id} ({name}): {what} is not supported by the built-in codec{}", cure_plugin(*.id))]
    Unsupported {
        /// Filter id.
        id: u32,
        /// Filter name.
        name: &'static str,
        /// The missing feature.
        what: String,
    },
    /// Neither a built-in codec nor a plugin implements this id.
    #[error("{}", not_available_message(*.id, .name.as_deref(), .variable.as_deref(), .searched))]
    NotAvailable {
        /// Filter id.
        id: u32,
        /// Known name of the filter, if any.
        name: Option<String>,
        /// The variable that needs it (the caller fills this in).
        variable: Option<String>,
        /// Directories searched for plugins.
        searched: Vec<PathBuf>,
    },
    /// A plugin's filter function returned failure.
    #[error("filter {id} ({name}) from plugin {}: the filter function failed on a {nbytes}-byte chunk while {}", .library.display(), if *.decode { "decoding" } else { "encoding" })]
    PluginFailed {
        /// Filter id.
        id: u32,
        /// Name the plugin gives.
        name: String,
        /// The library.
        library: PathBuf,
        /// Input size.
        nbytes: usize,
        /// True when decoding.
        decode: bool,
    },
    /// The filter library has no encoder (or no decoder).
    #[error("filter {id} ({name}): the plugin has no {}", if *.decode { "decoder" } else { "encoder" })]
    NoCoder {
        /// Filter id.
        id: u32,
        /// Name.
        name: String,
        /// True when the decoder is missing.
        decode: bool,
    },
    /// An NCZarr codec plugin's conversion function failed.
    #[error("codec \"{codec}\" of plugin {}: {what} (netCDF error {code})", .library.display())]
    CodecPluginFailed {
        /// Codec id.
        codec: String,
        /// The library.
        library: PathBuf,
        /// What failed.
        what: String,
        /// The netCDF error code returned.
        code: i32,
    },
    /// Re-registering an id without asking to override.
    #[error("filter {id} is already registered (as {existing}); ask to override to replace it")]
    AlreadyRegistered {
        /// Filter id.
        id: u32,
        /// Name of the registered filter.
        existing: String,
    },
}

fn cure_plugin(id: u32) -> String {
    format!("; put an HDF5 plugin for filter {id} in HDF5_PLUGIN_PATH and set NC_FILTERS_PREFER_PLUGIN=1")
}

fn not_available_message(
    id: u32,
    name: Option<&str>,
    variable: Option<&str>,
    searched: &[PathBuf],
) -> String {
    let mut s = String::new();
    if let Some(v) = variable {
        s.push_str(&format!("variable \"{v}\" needs "));
    }
    s.push_str(&format!("filter {id}"));
    if let Some(n) = name {
        s.push_str(&format!(" ({n})"));
    }
    s.push_str(", not available: no built-in codec and no plugin");
    if searched.is_empty() {
        s.push_str(" (no plugin directory searched)");
    } else {
        let dirs: Vec<String> = searched.iter().map(|p| p.display().to_string()).collect();
        s.push_str(&format!(" in {}", dirs.join(":")));
    }
    s.push_str("; add its plugin directory to HDF5_PLUGIN_PATH");
    s
}

impl FilterError {
    /// Fill in the variable name of a [`FilterError::NotAvailable`] (other errors unchanged).
    pub fn for_variable(mut self, var: &str) -> FilterError {
        if let FilterError::NotAvailable { variable, .. } = &mut self {
            *variable = Some(var.to_string());
        }
        self
    }
}
