//! NCZarr / Zarr version 2 backend: directory and zip stores, NCZarr metadata (netCDF-C's
//! layouts, version 1 to 4.10), pure Zarr with xarray's `_ARRAY_DIMENSIONS`, and codecs
//! through the filters engine (`nc-filters`).
//!
//! - [`parse_location`] / [`ZarrLocation`]: `file:///abs#mode=nczarr,file`, `...#mode=zarr,zip`,
//!   plain store paths; remote URLs are recognised and refused.
//! - [`Store`], [`DirStore`], [`ZipStore`]: the key → bytes map.
//! - [`ZarrFile`]: open, [`ZarrFile::dataset`], and [`nc_dataset::DataSource`] reads.
//! - [`write_store`] with [`ZarrWriteOptions`]: write a dataset as NCZarr or pure Zarr.
//! - [`write_references`] with [`ReferenceOptions`]: a kerchunk reference file (virtual Zarr)
//!   pointing at the bytes of a classic or netCDF-4 file in place.
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
mod location;
mod meta;
mod read;
pub mod store;
mod v3;
mod v3write;
mod write;

pub use error::ZarrError;
pub use kerchunk::{write_references, ReferenceOptions};
pub use location::{
    check_mode_words, metadata_rank, parse_location, StorageKind, ZarrLocation, KNOWN_MODE_WORDS,
};
pub use read::ZarrFile;
pub use store::{copy_store, DirStore, MemStore, ObjectWriter, Store, ZipStore};

pub use fanout::{FanoutOutcome, FanoutStep};
pub use write::{write_into, write_store, ChunkScope, NczarrLayout, ZarrWriteOptions};
