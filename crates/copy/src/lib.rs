//! The nccopy engine behind `nccopy-rs`: copy a dataset opened by nc-dispatch to an output of
//! any format, as netCDF-C 4.9.0's nccopy options ask.
//!
//! A copy runs in two steps. **Planning** builds the output dataset from the input's metadata:
//! the groups and variables selected (`-v`, `-V`, `-g`, `-G`, `-u`), each
//! variable's storage (the `-F` table, `-d`, `-s`, `-c`, `--shard`) and
//! quantization (`-Q`). **Execution** hands that dataset to nc-dispatch's writer for the
//! output format with a data source that reads the input through the output-to-input map,
//! counting progress. `--explain` is the plan without the execution.
//!
//! This crate holds no format code: it sees backends only through the dataset model and the
//! data-source trait, and opens and creates them through nc-dispatch.

mod chunkspec;
mod explain;
mod options;
mod progress;
mod quantize;
mod run;
mod select;
mod source;
mod storage;

pub use options::{CopyOptions, CopyReport};
pub use progress::{ProgressEvent, ProgressFn};
pub use run::{copy, copy_view, explain, explain_view};
pub use source::InputReadError;
