//! netCDF-4 over HDF5, pure Rust. Reads netCDF-4 and netCDF-4 classic files (and plain HDF5
//! files, with phony dimensions) into the [`nc_dataset`] model, with variable data by
//! hyperslab through [`nc_dataset::DataSource`]; writes a [`nc_dataset::Dataset`] as a
//! netCDF-4 file in one pass ([`write_file`]).
//!
//! Layout: `format/` holds each HDF5 on-disk structure (superblock, object headers and their
//! messages, datatypes, global heap, fractal heap, v1 and v2 B-trees, dense storage, the
//! checksum; see its table): the writer's encoders, and beside them the reader's own walks
//! where hdf5-reader's parsers fall short (`object_header::read`, `fractal_heap::read`,
//! `verify`); `meta` and `read` are the netCDF-4 reader, `write/` the netCDF-4 writer.
//!
//! The reader takes a byte source from nc-store ([`Nc4File::open_source`]) and a dataset
//! name; it never parses a location or asks whether its bytes are remote (a local file's
//! positional reads straight into the buffer are nc-store's `FileSource`); files it names
//! (external links, virtual dataset sources, external raw data) are opened through the byte
//! source (`ByteSource::open_named`). [`Nc4File::open`] is the same for a local path.
//!
//! ```no_run
//! use nc_dataset::{DataSource, Slab};
//! let file = nc_hdf5::Nc4File::open("in.nc")?;
//! let ds = file.dataset();
//! for v in ds.all_vars() {
//!     let shape = ds.shape(v);
//!     let values = file.read(ds, v, Slab::new(&vec![0; shape.len()], &shape))?;
//!     println!("{} has {} values", ds.var(v).name, values.len());
//! }
//! # Ok::<(), nc_dataset::DataError>(())
//! ```
//!
//! Spec: netCDF File Formats, "The NetCDF-4 Format"; HDF5 File Format Specification v3.

mod convert;
mod error;
mod filters;
mod format;
mod h5;
mod meta;
mod read;
mod vds;
pub mod write;

use nc_dataset::{ChunkRequest, MaybeBytes, Slab};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nc_dataset::{AtomicType, DataError, DataSource, Dataset, NcType, Values, VarId};

pub use error::Hdf5Error;
pub use filters::{chunk_decoder, filter_name};
pub use nc_filters::ChunkDecoder;
pub use write::{write_file, write_open_file, Nc4WriteOptions};

/// An opened netCDF-4 / HDF5 file: its dataset model (metadata only) and a data source.
pub struct Nc4File {
    /// Every file the dataset reads from: this one, external link targets, virtual sources
    /// (each variable's [`meta::VarInfo`] holds its own).
    _files: h5::Files,
    /// The file's path when opened from one: data read errors name it, as open errors do.
    path: Option<PathBuf>,
    ds: Dataset,
    vars: Vec<Option<meta::VarInfo>>,
    decoder: Arc<ChunkDecoder>,
    cache: read::ReadCache,
    warnings: Vec<String>,
}

impl std::fmt::Debug for Nc4File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nc4File")
            .field("dataset", &self.ds.name)
            .finish_non_exhaustive()
    }
}

impl Nc4File {
    /// Open a file and read its metadata (no variable data is decoded). Chunks are decoded
    /// with [`chunk_decoder`] (every built-in codec, HDF5's nbit and scaleoffset, and the
    /// plugins of `HDF5_PLUGIN_PATH`, loaded on the first chunk).
    ///
    /// # Errors
    /// When the file cannot be read, is not HDF5, or its structures are corrupt or truncated;
    /// the error names the file.
    pub fn open(path: impl AsRef<Path>) -> Result<Nc4File, Hdf5Error> {
        Nc4File::open_with(path, Arc::new(chunk_decoder()))
    }

    /// [`Nc4File::open`] with a chosen chunk decoder (e.g. one that loads filter plugins).
    ///
    /// # Errors
    /// As [`Nc4File::open`].
    pub fn open_with(
        path: impl AsRef<Path>,
        decoder: Arc<ChunkDecoder>,
    ) -> Result<Nc4File, Hdf5Error> {
        let path = path.as_ref();
        let src = nc_store::FileSource::open(path).map_err(|e| Hdf5Error::Io {
            path: path.to_path_buf(),
            error: match e {
                nc_store::StoreError::Io { source, .. } => source,
                e => std::io::Error::other(e.to_string()),
            },
        })?;
        let name = nc_store::Location::local(path).dataset_name();
        Nc4File::open_source(Arc::new(src), &name, decoder)
    }

    /// Open a file from any byte source (a local file, an object in a bucket, a file on a
    /// web server): its structures and data are read by range. `name` is the dataset name
    /// (`netcdf NAME {`); errors about the file's bytes name the source.
    ///
    /// # Errors
    /// As [`Nc4File::open`].
    pub fn open_source(
        src: Arc<dyn nc_store::ByteSource>,
        name: &str,
        decoder: Arc<ChunkDecoder>,
    ) -> Result<Nc4File, Hdf5Error> {
        let shown = PathBuf::from(src.name());
        let in_file = |e: Hdf5Error| match e {
            e @ Hdf5Error::Io { .. } => e,
            e => Hdf5Error::InFile {
                path: shown.clone(),
                inner: Box::new(e),
            },
        };
        let h5 = Arc::new(h5::H5::from_source(src).map_err(in_file)?);
        let files = h5::Files::default();
        // links back to this file find it
        files.register(&h5);
        let mut file = Nc4File::build(h5, files, name, decoder).map_err(in_file)?;
        file.path = Some(shown);
        Ok(file)
    }

    /// Open a file held in memory; `name` is the dataset name (`netcdf NAME {`).
    ///
    /// # Errors
    /// As [`Nc4File::open`], without the file name.
    pub fn from_bytes(
        bytes: Vec<u8>,
        name: &str,
        decoder: Arc<ChunkDecoder>,
    ) -> Result<Nc4File, Hdf5Error> {
        let h5 = Arc::new(h5::H5::from_bytes(bytes)?);
        Nc4File::build(h5, h5::Files::default(), name, decoder)
    }

    fn build(
        h5: Arc<h5::H5>,
        files: h5::Files,
        name: &str,
        decoder: Arc<ChunkDecoder>,
    ) -> Result<Nc4File, Hdf5Error> {
        let (ds, vars, warnings) = meta::build(&h5, &files, name)?;
        Ok(Nc4File {
            _files: files,
            path: None,
            ds,
            vars,
            decoder,
            cache: read::ReadCache::default(),
            warnings,
        })
    }

    /// What the file holds that the dataset leaves out or shows differently, one sentence
    /// each naming the object (datasets of types netCDF lacks, links not followed); a tool
    /// prints them on stderr.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The dataset model: groups, dimensions, types, variables with attributes and storage
    /// settings; `format` is `Netcdf4` or `Netcdf4Classic` (from `_nc3_strict`), `info` holds
    /// `_NCProperties`, `_SuperblockVersion` and `_IsNetcdf4` as `ncdump -s` shows them.
    /// Variables carry no data: read it through [`DataSource::read`].
    pub fn dataset(&self) -> &Dataset {
        &self.ds
    }

    /// Take the dataset model out (the file stays usable as a data source for it).
    pub fn to_dataset(&self) -> Dataset {
        self.ds.clone()
    }

    /// Read a hyperslab of variable `var` of this file's dataset.
    ///
    /// # Errors
    /// A bad request, corrupt storage, or a filter that is missing or fails.
    pub fn read_var(&self, var: VarId, start: &[u64], count: &[u64]) -> Result<Values, Hdf5Error> {
        self.read_in(&self.ds, var, start, count)
    }

    /// `e` annotated with the file's path when it says the file's bytes are bad (corrupt or
    /// truncated structures) and the file was opened from a path. Errors about the request or
    /// about missing or failing filters stay as they are.
    fn in_file(&self, e: Hdf5Error) -> Hdf5Error {
        let corrupt = matches!(
            e,
            Hdf5Error::Checksum { .. }
                | Hdf5Error::Structure { .. }
                | Hdf5Error::Invalid { .. }
                | Hdf5Error::TooDeep { .. }
        );
        match (&self.path, e) {
            (Some(path), e) if corrupt => Hdf5Error::InFile {
                path: path.clone(),
                inner: Box::new(e),
            },
            (_, e) => e,
        }
    }

    /// The data reader of a variable: over the storage of the file holding it (this one, or
    /// another reached through an external link), the decoder and this file's caches.
    fn reader<'a>(&'a self, info: &'a meta::VarInfo) -> read::Reader<'a> {
        read::Reader {
            h5: &info.file,
            decoder: self.decoder.as_ref(),
            cache: &self.cache,
        }
    }

    fn read_in(
        &self,
        ds: &Dataset,
        var: VarId,
        start: &[u64],
        count: &[u64],
    ) -> Result<Values, Hdf5Error> {
        let name = || {
            ds.vars
                .get(var.0)
                .map(|v| v.name.clone())
                .unwrap_or_else(|| format!("#{}", var.0))
        };
        let info = self
            .vars
            .get(var.0)
            .and_then(Option::as_ref)
            .ok_or_else(|| Hdf5Error::BadRequest {
                var: name(),
                message: "not a variable of this file, or its storage cannot be read".to_string(),
            })?;
        self.reader(info)
            .read(ds, var, info, start, count)
            .map_err(|e| self.in_file(e))
    }
}

impl DataSource for Nc4File {
    fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        let Slab { start, count } = slab;

        Ok(self.read_in(ds, var, start, count)?)
    }

    fn read_le_bytes(&self, ds: &Dataset, var: VarId, slab: Slab) -> MaybeBytes {
        let Slab { start, count } = slab;

        let info = self.vars.get(var.0).and_then(Option::as_ref)?;
        let r = self.reader(info).read_le(ds, var, info, start, count)?;
        Some(r.map_err(|e| DataError::from(self.in_file(e))))
    }

    fn raw_chunk(&self, ds: &Dataset, var: VarId, chunk: ChunkRequest) -> Option<Vec<u8>> {
        let info = self.vars.get(var.0).and_then(Option::as_ref)?;
        let name = &ds.vars.get(var.0)?.name;
        self.reader(info)
            .raw_chunk(var, name, info, chunk.offsets, chunk.shape, chunk.chain)
    }

    fn placement(
        &self,
        ds: &Dataset,
        var: VarId,
    ) -> Option<Result<nc_dataset::Placement, DataError>> {
        let info = self.vars.get(var.0).and_then(Option::as_ref)?;
        let name = &ds.vars.get(var.0)?.name;
        let placement = self
            .reader(info)
            .placement(var, name, info, &ds.shape(var))
            .map(|p| match p {
                // bytes in another file (an external link's target): say which
                nc_dataset::Placement::Chunks(mut m) if m.file.is_none() => {
                    if info.file.path.is_some() && info.file.path != self.path {
                        m.file.clone_from(&info.file.path);
                    }
                    nc_dataset::Placement::Chunks(m)
                }
                p => p,
            });
        Some(placement.map_err(|e| DataError::from(self.in_file(e))))
    }

    fn unwritten(&self, ds: &Dataset, var: VarId, slab: Slab) -> bool {
        let Slab { start, count } = slab;

        let Some(info) = self.unwritten_reads_fill(ds, var) else {
            return false;
        };
        let name = &ds.var(var).name;
        self.reader(info).unwritten(var, name, info, start, count)
    }

    fn stored_regions(&self, ds: &Dataset, var: VarId) -> Option<Vec<nc_dataset::Region>> {
        let info = self.unwritten_reads_fill(ds, var)?;
        let name = &ds.var(var).name;
        self.reader(info).stored_regions(var, name, info)
    }
}

impl Nc4File {
    /// The variable's HDF5 facts when what an unwritten element of it reads as (the HDF5 fill
    /// value in the file's byte order, or zeros) is its stored fill (`Dataset::stored_fill`:
    /// `_FillValue`, else the fill value property kept as it, else the default), bit for bit (a NaN
    /// fill included), for a fixed-size atomic type: only then may unwritten regions of it be
    /// left unwritten by a copy.
    fn unwritten_reads_fill(&self, ds: &Dataset, var: VarId) -> Option<&meta::VarInfo> {
        let info = self.vars.get(var.0).and_then(Option::as_ref)?;
        let v = ds.vars.get(var.0)?;
        if !matches!(v.ty, NcType::Atomic(a) if a != AtomicType::String) {
            return None;
        }
        let want = ds.stored_fill(var)?;
        let big = matches!(
            info.dt,
            hdf5_reader::messages::datatype::Datatype::FixedPoint {
                byte_order: hdf5_reader::ByteOrder::BigEndian,
                ..
            } | hdf5_reader::messages::datatype::Datatype::FloatingPoint {
                byte_order: hdf5_reader::ByteOrder::BigEndian,
                ..
            }
        );
        let got = info
            .fill
            .clone()
            .unwrap_or_else(|| vec![0u8; info.elem_size]);
        crate::write::types::atomic_bytes(&want, big)
            .is_some_and(|w| w == got)
            .then_some(info)
    }
}
