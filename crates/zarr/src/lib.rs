//! NCZarr and Zarr (versions 2 and 3, sharding included) over nc-store's key → bytes stores:
//! NCZarr metadata (netCDF-C's layouts, version 1 to 4.10), pure Zarr with xarray's
//! `_ARRAY_DIMENSIONS` or v3 `dimension_names`, and codecs through the filters engine
//! (`nc-filters`); kerchunk reference files.
//!
//! This crate takes a [`Store`] (directory, zip, memory or object storage: it does not know
//! which) and a name to show; it never parses a location, reads a mode word or asks whether
//! its bytes are remote. nc-store parses names; nc-dispatch maps a location's mode words to
//! [`ZarrModes`].
//!
//! - [`ZarrModes`]: NCZarr or pure Zarr, XArray's names, v3; [`NczarrLayout`]: the spelling.
//! - [`Store`], [`DirStore`], [`ZipStore`]: the key → bytes map; [`metadata_rank`]: which
//!   keys are metadata (written last on object storage).
//! - [`ZarrFile`]: open, [`ZarrFile::dataset`], and [`nc_dataset::DataSource`] reads.
//! - [`write_store`] with [`ZarrWriteOptions`]: write a dataset as NCZarr or pure Zarr.
//! - [`fanout`]: one store written by parts.
//! - [`write_references`] with [`ReferenceOptions`]: a kerchunk reference file (virtual Zarr)
//!   pointing at the bytes of a classic or netCDF-4 file in place; [`write_references_parquet`]
//!   the same references in fsspec's Parquet layout; [`ReferenceSink`]: where references go.
//!
//! Specification: netCDF-C "The NetCDF NCZarr Implementation" (`/work/shared/spec/nczarr.txt`),
//! the Zarr v2 storage specification, and the NCZarr filter proposal.

mod attrs;
mod codecs;
mod consolidated;
mod convert;
mod dtype;
mod error;
pub mod fanout;
pub mod json;
mod kerchunk;
mod meta;
mod modes;
mod read;
pub mod store;
mod v3;
mod v3write;
mod write;

pub use error::ZarrError;
pub use kerchunk::{
    emit_joined_references, emit_references, write_joined_references,
    write_joined_references_parquet, write_references, write_references_parquet, ChunkRef,
    JoinedInputs, ParquetLayout, ReferenceOptions, ReferenceSink, MAX_RECORD_SIZE,
};
pub use modes::ZarrModes;
pub use read::ZarrFile;
pub use store::{copy_store, metadata_rank, DirStore, MemStore, ObjectWriter, Store, ZipStore};

pub use fanout::{FanoutOutcome, FanoutStep};
pub use write::{write_into, write_store, ChunkScope, NczarrLayout, ZarrWriteOptions};

/// For the copy engine in nc-dispatch until it moves to its own crate (issue 30), which then
/// asks the location; not part of this crate's interface.
#[doc(hidden)]
pub use nc_store::StorageKind;
