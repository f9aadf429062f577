//! CDL parser: the language `ncgen` (netCDF-C 4.9.0) reads, into a [`Dataset`].
//!
//! The grammar is written down in `cdl-grammar/cdl.ebnf`; `cdl-grammar/NOTES.md` lists the
//! ncgen behaviours found by experiment (literal types, attribute type inference, char data).
//!
//! One streaming tokenizer (`lexer.rs`) reads the input in large buffered chunks, so a file's
//! data section never sits in memory as text: values go straight into typed vectors. Numeric
//! literals are recognized with nom (`literal.rs`). [`parse_cdl_file_spilling`] sends large
//! variables' values on to a temporary file instead (`spill.rs`), so a data section bigger
//! than memory parses in bounded memory.

mod convert;
mod data;
mod lexer;
mod literal;
mod parser;
mod special;
mod spill;

use std::io::Read;

use nc_dataset::Dataset;

pub use spill::CdlData;

/// Options for parsing CDL.
#[derive(Debug, Clone)]
pub struct ParseOptions {
    /// Deepest nesting of groups and `{...}` value braces accepted (guards the stack).
    pub max_depth: usize,
    /// The output format asked for on the command line (`ncgen -k`), if any: it decides which
    /// type names are reserved words (see the grammar notes).
    pub format: Option<nc_dataset::Format>,
    /// With [`parse_cdl_file_spilling`] and [`parse_cdl_reader_spilling`]: bytes of parsed
    /// numeric values kept in memory, all variables together, before they go to the
    /// temporary file (a variable larger than a sixteenth of this, at most 4 MiB, goes there
    /// as it is parsed). Default 64 MiB.
    pub memory_budget: u64,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            max_depth: 64,
            format: None,
            memory_budget: 64 << 20,
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
    /// Writing the temporary file that holds a large data section failed.
    #[error(
        "{file}: cannot keep the data section in a temporary file in {dir}: {msg} (set TMPDIR \
         to a directory with room for the values)"
    )]
    Spill {
        /// the CDL file name
        file: String,
        /// the directory of the temporary file
        dir: String,
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
            CdlError::Io { .. } | CdlError::Spill { .. } => None,
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
    parse_cdl_reader(open(path, &name)?, &name, opts)
}

/// Parse CDL from a reader keeping at most [`ParseOptions::memory_budget`] bytes of numeric
/// values in memory: the values of larger variables go to a temporary file (in the
/// directory `std::env::temp_dir` names: `TMPDIR` on Unix) that the returned [`CdlData`]
/// reads back, by hyperslab, for a writer. The dataset is the one [`parse_cdl_reader`] gives
/// except that those variables have no `data` but `data_elsewhere` (their value count).
/// Every error is found as [`parse_cdl_reader`] finds it.
///
/// # Errors
/// On I/O, syntax or semantic errors, or when the temporary file cannot be written.
pub fn parse_cdl_reader_spilling<R: Read>(
    src: R,
    file: &str,
    opts: &ParseOptions,
) -> Result<(Dataset, CdlData), CdlError> {
    let mut p = parser::Parser::new(lexer::Lexer::new(src, file), opts.clone());
    p.spill = Some(spill::Spill::new(opts.memory_budget));
    let ds = p.parse()?;
    let data = p
        .spill
        .take()
        .map(spill::Spill::into_data)
        .unwrap_or_default();
    Ok((ds, data))
}

/// [`parse_cdl_reader_spilling`] of a file on disk.
///
/// # Errors
/// On I/O, syntax or semantic errors, or when the temporary file cannot be written.
pub fn parse_cdl_file_spilling(
    path: &std::path::Path,
    opts: &ParseOptions,
) -> Result<(Dataset, CdlData), CdlError> {
    let name = path.display().to_string();
    parse_cdl_reader_spilling(open(path, &name)?, &name, opts)
}

fn open(path: &std::path::Path, name: &str) -> Result<std::fs::File, CdlError> {
    std::fs::File::open(path).map_err(|e| CdlError::Io {
        file: name.to_string(),
        msg: e.to_string(),
    })
}

#[cfg(test)]
mod tests;
