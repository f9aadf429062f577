//! Open datasets by their magic bytes (never by file extension), create them in a chosen
//! format with atomic output, and choose formats as the tools' documented rules say.

mod about;
mod cleanup;
mod copy;
mod dest;
mod failure;
mod kind;
mod open;
mod process;
mod quantize;
mod references;

pub use about::{
    exit, remote_io_line, report_io, set_threads, version_text, IO_STATS_ENV, THREADS_ENV,
};
pub use cleanup::{
    commit_unless_interrupted, install_interrupt_handler, interrupt, is_interrupted, register_temp,
    temps_in_flight, wait_if_interrupted, TempGuard,
};
pub use copy::*;
pub use dest::same_dataset;
pub use failure::{Failure, Side};
pub use kind::*;
pub use nc_zarr::{FanoutOutcome, FanoutStep};
pub use open::*;
pub use process::tune_allocator;
pub use references::{reference_url, write_references, ReferenceRequest};
