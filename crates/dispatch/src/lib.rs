//! Open datasets by their magic bytes (never by file extension), create them in a chosen
//! format with atomic output, and choose formats as the tools' documented rules say.
//!
//! It holds format detection, open and create of a backend, the format rules of the tools
//! (`-k`, `-3`..`-8`) and, for now, the tool runtime the three binaries share (exit codes and
//! [`Failure`], the interrupt handler and the temporary outputs it removes, the allocator
//! setting, `--version` text). It does not hold the nccopy engine (crate `nc-copy`) or any
//! format's code (the backend crates).
//!
//! Every function takes a [`Location`] that the binary parsed once at its edge (nc-store's
//! one door); format detection ([`detect`]) is one function reading a location's first bytes
//! or its store's metadata keys, and maps the location's mode words to a backend's options.
//! This crate parses no names itself; callers that still hold a path pass it through
//! [`AsLocation`], which parses it through the same door.

mod about;
mod blame;
mod cleanup;
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
pub use dest::same_dataset;
pub use failure::{Failure, Side};
pub use kind::*;
pub use nc_store::Location;
pub use nc_zarr::{FanoutOutcome, FanoutStep, StorageKind};
pub use open::*;
pub use process::tune_allocator;
pub use references::{reference_url, write_references, ReferenceRequest};
