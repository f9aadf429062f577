//! CDL text <-> dataset: the ncgen-side parser ([`parse`]) and the ncdump-side printer ([`print`]).

pub mod parse;
pub mod print;

pub use parse::{parse_cdl, parse_cdl_file, CdlError, ParseOptions};
pub use print::{print, DumpOptions, PrintError};
