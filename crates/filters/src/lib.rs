//! Filters engine shared by the format backends and the three tools.
//!
//! - [`spec`]: `_Filter` / `-F` spec text with the documented tagged constants
//!   ([`parse_spec_list`], [`format_spec_list`], [`normalize_chain`]).
//! - [`Filter`], [`FilterFactory`], [`FilterContext`]: one codec applied to one chunk.
//! - [`Registry`] (built-in codecs and HDF5 plugins, by id and by Zarr codec name) and
//!   [`Pipeline`] (a chain applied in order on encode, in reverse on decode).
//! - Built-in codecs bit-compatible with the HDF5 filters: deflate 1, shuffle 2,
//!   fletcher32 3, szip 4, bzip2 307, blosc 32001, lz4 32004, zstd 32015.
//! - [`ChunkDecoder`]: how every reader undoes a chunk's filters (the registry, loaded on
//!   first need).
//! - [`plugin`]: HDF5 filter plugins loaded from `HDF5_PLUGIN_PATH`.
//! - [`known`]: the one table of filter ids, names and Zarr codec ids every crate uses.
//! - [`codec_json`]: numcodecs JSON ↔ HDF5 id + parameters.
//! - [`rules`]: the `nccopy -F` rule engine.
//!
//! Specification: netCDF-C "NetCDF-4 Filter Support" (docs/filters.md of 4.9.0) and the
//! NCZarr filter proposal.

pub mod bits;
pub mod codec_json;
mod codecs;
mod decoder;
mod error;
mod filter;
pub mod known;
pub mod plugin;
mod registry;
pub mod rules;
pub mod spec;

pub use codecs::{
    builtin_codecs, crc32c, fletcher32, shuffle_bytes, unshuffle_bytes, BuiltinCodec,
    BLOSC_MAX_OVERHEAD, BLOSC_VERSION_FORMAT,
};
pub use decoder::ChunkDecoder;
pub use error::{FilterError, FilterSpecError, SpecProblem};
pub use filter::{
    Filter, FilterContext, FilterFactory, FilterId, FilterSource, DEFAULT_MAX_DECODED,
};
pub use known::{filter_id_by_name, filter_name, known, KnownFilter};
pub use registry::{Pipeline, Registry, PREFER_PLUGIN_ENV};
pub use spec::{
    check_params, format_spec, format_spec_list, normalize_chain, parse_constant, parse_spec_list,
    ParamWords, SpecParser,
};

/// Re-export of the data model's filter spec (id + parameters).
pub use nc_dataset::FilterSpec;

#[cfg(test)]
mod tests;
