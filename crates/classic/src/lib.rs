//! netCDF classic files: CDF-1 (classic), CDF-2 (64-bit offset) and CDF-5 (64-bit data).
//!
//! Reading: [`ClassicFile::open`] parses the header eagerly with bounded reads and serves data
//! lazily by hyperslab through [`nc_dataset::DataSource`] (positioned reads; files over 4 GiB
//! work). [`parse_header`] parses a header from bytes (used by the fuzz target).
//!
//! Writing: [`write_file`] / [`write_to`] lay the whole file out first, then write it
//! sequentially, reading data from any [`nc_dataset::DataSource`] in bounded slabs. The bytes
//! equal what netCDF-C 4.9.0 writes for the same dataset.
//!
//! # Matching netCDF-C 4.9.0 byte for byte
//!
//! * Data begins right after the header; fixed-size variables follow in definition order, then
//!   the records. Names and attribute values are padded to 4 bytes with zero bytes; names are
//!   stored NFC-normalised.
//! * Each variable's data is padded to 4 bytes with its fill pattern (`_FillValue` or the
//!   type's default) in fill mode, with zero bytes otherwise or when it has `_NoFill`.
//!   Record padding is filled in fill mode even for `_NoFill` variables (netCDF-C fills
//!   whole new records).
//! * A single record variable is not padded between records (`recsize` = its unpadded size).
//! * `vsize` is stored as 2^32 - 1 when it does not fit 32 bits (CDF-1/2).
//! * A header longer than netCDF-C's 8192-byte I/O chunk makes the file at least the header
//!   size rounded up to 8192 (zero bytes after the data).
//! * A file with no dimensions, attributes or variables is 4096 bytes (the header, then zeros).
//! * `ncgen` writes CDL data with fill mode on ([`WriteOptions::fill`]) and only for variables
//!   with a data section ([`WriteOptions::only_given_data`]); `nccopy` writes every variable
//!   with fill mode off.
//! * Unlike `ncgen -k cdf5` 4.9.0, which writes int64 variables as int, int64 variables keep
//!   their type.
//!
//! Spec: netCDF "File Format Specifications" (classic and 64-bit offset grammar); CDF-5 is the
//! CDF-2 grammar with version 5, 64-bit counts and the types ubyte .. uint64.

mod cursor;
mod error;
mod layout;
mod read;
mod write;

pub use error::ClassicError;
pub use read::{parse_header, ClassicFile, ClassicHeader, Limits, VarHeader};
pub use write::{write_file, write_open_file, write_to, WriteOptions};
