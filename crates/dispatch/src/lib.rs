//! Open datasets by their magic bytes (never by file extension), create them in a chosen
//! format with atomic output, and choose formats as the tools' documented rules say.
//!
//! It holds format detection, open and create of a backend and the format rules of the tools
//! (`-k`, `-3`..`-8`). It does not hold the nccopy engine (crate `nc-copy`), the tool runtime
//! the three binaries share (exit codes, [`Failure`], signals and temporary outputs: crate
//! `nc-runtime`) or any format's code (the backend crates).
//!
//! Every function takes a [`Location`] that the binary parsed once at its edge (nc-store's
//! one door); format detection ([`detect`]) is one function reading a location's first bytes
//! or its store's metadata keys, and maps the location's mode words to a backend's options.
//! This crate parses no names.

mod blame;
mod dest;
mod kind;
mod open;
mod quantize;
mod references;

pub use dest::output_is_an_input;
pub use kind::*;
pub use nc_runtime::{Failure, Side};
pub use nc_store::remote::Access;
pub use nc_store::Location;
pub use nc_zarr::{FanoutOutcome, FanoutStep, StorageKind};
pub use nc_zarr::{JoinedInputs, ParquetLayout, ZarrError, MAX_RECORD_SIZE};
pub use open::*;
pub use references::{
    reference_url, write_joined_references, write_joined_references_parquet, write_references,
    write_references_parquet, write_view_references, write_view_references_parquet,
    ReferenceRequest,
};
