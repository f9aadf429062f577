//! CDL parser: the language `ncgen` (netCDF-C 4.9.0) reads, into a [`Dataset`].
//!
//! The grammar is written down in `cdl-grammar/cdl.ebnf`; `cdl-grammar/NOTES.md` lists the
//! ncgen behaviours found by experiment (literal types, attribute type inference, char data).
//!
//! One streaming tokenizer (`lexer.rs`) reads the input in large buffered chunks, so a file's
//! data section never sits in memory as text: values go straight into typed vectors. Numeric
//! literals are recognized with nom (`literal.rs`).

mod convert;
mod data;
mod lexer;
mod literal;
mod parser;
mod special;

use std::io::Read;

use nc_dataset::Dataset;

/// Options for parsing CDL.
#[derive(Debug, Clone)]
pub struct ParseOptions {
    /// Deepest nesting of groups and `{...}` value braces accepted (guards the stack).
    pub max_depth: usize,
    /// The output format asked for on the command line (`ncgen -k`), if any: it decides which
    /// type names are reserved words (see the grammar notes).
    pub format: Option<nc_dataset::Format>,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            max_depth: 64,
            format: None,
        }
    }
}

/// A CDL syntax or semantic error with its position.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CdlError {
    /// The text does not follow the grammar (`expected ';' ..., found 'float'`).
    #[error("{file}:{line}:{col}: {msg}")]
    Syntax {
        /// file name
        file: String,
        /// 1-based line
        line: usize,
        /// 1-based column (bytes)
        col: usize,
        /// what was expected and what was found
        msg: String,
    },
    /// The text parses but means nothing valid (undefined name, duplicate, bad value).
    #[error("{file}:{line}:{col}: {msg}")]
    Semantic {
        /// file name
        file: String,
        /// 1-based line
        line: usize,
        /// 1-based column (bytes)
        col: usize,
        /// what is wrong
        msg: String,
    },
    /// Reading the input failed.
    #[error("{file}: cannot read: {msg}")]
    Io {
        /// file name
        file: String,
        /// the I/O error
        msg: String,
    },
}

impl CdlError {
    /// The (line, column) of the error, if it has one.
    pub fn position(&self) -> Option<(usize, usize)> {
        match self {
            CdlError::Syntax { line, col, .. } | CdlError::Semantic { line, col, .. } => {
                Some((*line, *col))
            }
            CdlError::Io { .. } => None,
        }
    }
}

/// Parse CDL text. `file` names the source in error messages.
///
/// # Errors
/// On any syntax or semantic error.
pub fn parse_cdl(text: &str, file: &str, opts: &ParseOptions) -> Result<Dataset, CdlError> {
    parse_cdl_reader(text.as_bytes(), file, opts)
}

/// Parse CDL from any reader, streaming (used by [`parse_cdl_file`]).
///
/// # Errors
/// On I/O, syntax or semantic errors.
pub fn parse_cdl_reader<R: Read>(
    src: R,
    file: &str,
    opts: &ParseOptions,
) -> Result<Dataset, CdlError> {
    let mut p = parser::Parser::new(lexer::Lexer::new(src, file), opts.clone());
    p.parse()
}

/// Parse a CDL file from disk (streaming the data section).
///
/// # Errors
/// On I/O, syntax or semantic errors.
pub fn parse_cdl_file(path: &std::path::Path, opts: &ParseOptions) -> Result<Dataset, CdlError> {
    let name = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| CdlError::Io {
        file: name.clone(),
        msg: e.to_string(),
    })?;
    parse_cdl_reader(f, &name, opts)
}

#[cfg(test)]
mod tests;
