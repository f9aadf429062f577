//! CDL text <-> dataset: the ncgen-side parser ([`parse`](mod@parse)) and the ncdump-side printer ([`print`](mod@print)).

pub mod parse;
pub mod print;

pub use parse::{
    parse_cdl, parse_cdl_file, parse_cdl_file_spilling, parse_cdl_reader_spilling, CdlData,
    CdlError, ParseOptions,
};
pub use print::{print, DumpOptions, PrintError};
