//! netCDF-4 over HDF5, write side: lays a [`Dataset`] out the way netCDF-C 4.9.0 does
//! (superblock 2, creation order tracked, dimension scales, `_Netcdf4Dimid`,
//! `_Netcdf4Coordinates`, `_NCProperties`, `_nc3_strict`) with `rust-hdf5`, and writes the data
//! chunk by chunk: each chunk is read from the [`DataSource`], encoded by *our* filter engine
//! (`nc-filters`, in parallel) and stored raw, so memory stays bounded by a few chunks.
//!
//! What rust-hdf5 0.7.9 cannot write — global heap data (strings of any rank, vlens, compounds
//! holding them) and attributes that are arrays of a user type or hold heap references — is
//! written by the [`heap`] pass after the crate closes the file.
//!
//! Deviations (rust-hdf5 0.7.9 limits):
//! - variables holding heap references are never filtered (netCDF-C refuses that too), and
//!   their fill value is the null reference;
//! - a contiguous variable that gets no data and is bigger than 64 MiB is stored chunked: the
//!   crate allocates contiguous storage at creation and fills it from one in-memory buffer;
//! - an unknown filter is accepted only when no chunk has to be encoded (netCDF-C refuses it
//!   at definition; we keep the metadata so such a variable can still be described);
//! - filter pipeline entries carry no filter names (h5dump shows no `COMMENT`).
//!
//! ```no_run
//! use nc_dataset::{AtomicType, Dataset, InMemory, Values, ROOT};
//! let mut ds = Dataset::new("x");
//! let d = ds.add_dim(ROOT, "n", 3, false);
//! let v = ds.add_var(ROOT, "v", AtomicType::Int.into(), vec![d]);
//! ds.var_mut(v).data = Some(Values::Int(vec![1, 2, 3]));
//! nc_hdf5::write::write_file("x.nc".as_ref(), &ds, &InMemory, &Default::default())?;
//! # Ok::<(), nc_hdf5::Hdf5Error>(())
//! ```

mod dense;
mod dimscale;
mod heap;
mod locate;
mod ordered;
mod strtype;
pub(crate) mod types;
mod user;

use std::collections::HashMap;
use std::path::Path;

use nc_dataset::{
    AtomicType, Attribute, DataSource, Dataset, DimId, Endianness, FilterSpec, GroupId, Layout,
    NcString, NcType, Values, VarId, FILTER_FLETCHER32, FILTER_SHUFFLE,
};
use nc_filters::{FilterContext, Pipeline, Registry};
use rust_hdf5::{
    DatatypeMessage, FillTime, Filter, FilterPipeline, H5Dataset, H5File, H5Group, LibverBound,
};

// the rule moved to the data model (nc-copy's plan uses it too); kept here for the writer's callers
pub use nc_dataset::chunking::default_chunk_sizes;

use crate::Hdf5Error;

/// The text of `_NCProperties` in files we write (netCDF-C writes
/// `version=2,netcdf=4.9.0,hdf5=1.10.8`; readers only show it).
pub const NC_PROPERTIES: &str = concat!(
    "version=2,ncgen-rs=",
    env!("CARGO_PKG_VERSION"),
    ",rust-hdf5=0.7.9"
);

/// The `NAME` netCDF-C gives the dimension scale of a dimension without a coordinate variable
/// (followed by the length, `%10d`).
const DIM_WITHOUT_VAR: &str = "This is a netCDF dimension but not a netCDF variable.";
/// Dataset name prefix for a variable named like a dimension it is not the coordinate of.
const NON_COORD_PREFIX: &str = "_nc4_non_coord_";
/// Longest dimension (elements) whose scale of its own is contiguous, as netCDF-C makes it.
const MAX_CONTIGUOUS_SCALE: usize = 1 << 16;
/// Chunk length of a longer dimension's scale (never written, so only its index costs space).
const SCALE_CHUNK: usize = 1 << 20;
/// Contiguous variables without data larger than this are stored chunked (see `plan`).
const BIG_UNWRITTEN_BYTES: u64 = 64 << 20;
/// Contiguous and compact data are written in slabs of at most this many elements.
const SLAB_ELEMENTS: u64 = 1 << 20;

/// Options of [`write_file`]. The default is netCDF's: enhanced model, fill on, every
/// variable's data read from the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nc4WriteOptions {
    /// netCDF-4 classic model: marks the file with `_nc3_strict`.
    pub classic_model: bool,
    /// Write fill values for data the source does not give (netCDF's fill mode). When false,
    /// every variable is written as `_NoFill`.
    pub fill: bool,
    /// ncgen mode: variables whose `Variable::data` is None get no data at all (reads give
    /// the fill value); otherwise every variable's data is read from the source.
    pub only_given_data: bool,
}

impl Default for Nc4WriteOptions {
    fn default() -> Self {
        Nc4WriteOptions {
            classic_model: false,
            fill: true,
            only_given_data: false,
        }
    }
}

/// Write `ds` as a netCDF-4 file at `path`, reading variable data from `src` chunk by chunk.
///
/// # Errors
/// When the file cannot be created or written, a variable needs a filter that is not
/// available (and has data to encode), a filter fails, or the source fails; the error names
/// the file and the variable.
pub fn write_file(
    path: &Path,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &Nc4WriteOptions,
) -> Result<(), Hdf5Error> {
    let in_file = |e: Hdf5Error| Hdf5Error::InFile {
        path: path.to_path_buf(),
        inner: Box::new(e),
    };
    let file = H5File::options()
        .track_order(true)
        .libver(LibverBound::V18)
        .create(path)
        .map_err(|e| in_file(h5err("creating the file", e)))?;
    let mut registry = Registry::with_builtins();
    registry.load_default_plugins();
    let mut w = Writer {
        ds,
        src,
        opts,
        registry,
        dim_scales: HashMap::new(),
        var_sets: Vec::new(),
        deferred: heap::Deferred::new(),
        coords: coordinate_vars(ds),
    };
    w.write_all(&file).map_err(in_file)?;
    // no fsync, as netCDF-C (and our classic writer): the data is in the page cache and the
    // rename that publishes the file follows; a forced flush of a large file costs seconds
    file.close_no_sync()
        .map_err(|e| in_file(h5err("closing the file", e)))?;
    // string datatypes as libhdf5 writes them (before the heap pass reopens the file)
    if strtype::needs_finish(ds) {
        strtype::finish(path).map_err(in_file)?;
    }
    // strings, vlens and user-typed attribute arrays: what rust-hdf5 cannot write
    w.deferred.finish(path, ds, src).map_err(in_file)?;
    Ok(())
}

fn h5err(what: impl Into<String>, e: rust_hdf5::Hdf5Error) -> Hdf5Error {
    Hdf5Error::Write {
        what: what.into(),
        message: e.to_string(),
    }
}

/// Chunk coordinates (in chunks) and the stored bytes of one chunk.
type EncodedChunk = (Vec<usize>, Vec<u8>);

/// How one variable is stored.
struct VarPlan {
    layout: Layout,
    chunk: Vec<u64>,
    /// Filter chain in application order, working parameters.
    chain: Vec<FilterSpec>,
    big: bool,
    datatype: DatatypeMessage,
    /// Path of the committed datatype (user-defined types).
    committed: Option<String>,
    /// Chunks the source never stored stay unwritten, and the variable keeps its fill value
    /// even in a "no fill" output (see `Writer::sparse_source`).
    skip_unwritten: bool,
}

struct Writer<'a> {
    ds: &'a Dataset,
    src: &'a dyn DataSource,
    opts: &'a Nc4WriteOptions,
    registry: Registry,
    dim_scales: HashMap<DimId, H5Dataset>,
    var_sets: Vec<(VarId, H5Dataset, VarPlan)>,
    /// Heap data and attributes written after rust-hdf5 closes the file.
    deferred: heap::Deferred,
    /// The coordinate variable of each dimension that has one (see `coord_var`).
    coords: HashMap<DimId, VarId>,
}

/// The coordinate variable of each dimension that has one: the variable of the same name in
/// the dimension's group whose first dimension it is (one pass, where looking each name up
/// in its group would make many variables quadratic).
fn coordinate_vars(ds: &Dataset) -> HashMap<DimId, VarId> {
    let mut out = HashMap::new();
    for v in ds.all_vars() {
        let var = ds.var(v);
        if let Some(&d) = var.dims.first() {
            let dim = ds.dim(d);
            if dim.group == var.group && dim.name == var.name {
                out.insert(d, v);
            }
        }
    }
    out
}

impl Writer<'_> {
    fn write_all(&mut self, file: &H5File) -> Result<(), Hdf5Error> {
        let root = file.root_group();
        root.set_attr_typed(
            "_NCProperties",
            DatatypeMessage::FixedString {
                size: NC_PROPERTIES.len() as u32,
                padding: 0,
                charset: 0,
            },
            NC_PROPERTIES.as_bytes().to_vec(),
        )
        .map_err(|e| h5err("root group: _NCProperties", e))?;
        if self.opts.classic_model {
            root.set_attr_typed(
                "_nc3_strict",
                DatatypeMessage::i32_type(),
                1i32.to_le_bytes().to_vec(),
            )
            .map_err(|e| h5err("root group: _nc3_strict", e))?;
        }
        self.write_group(nc_dataset::ROOT, &root)?;
        self.attach_scales()?;
        let sets = std::mem::take(&mut self.var_sets);
        for (v, h, plan) in &sets {
            self.write_data(*v, h, plan)?;
        }
        Ok(())
    }

    fn write_group(&mut self, g: GroupId, h: &H5Group) -> Result<(), Hdf5Error> {
        let ds = self.ds;
        let grp = ds.group(g);
        let gpath = ds.group_path(g);
        if dense::wanted(grp.atts.len()) {
            // many attributes: dense storage written by us after close (see `dense`)
            for (name, dt, value) in dense::stand_ins() {
                h.set_attr_typed(&name, dt, value)
                    .map_err(|e| h5err(format!("group {gpath}: attributes"), e))?;
            }
            self.deferred.dense.add_group(g);
        }
        for a in grp.atts.iter().filter(|_| !dense::wanted(grp.atts.len())) {
            let what = || format!("group {gpath}: attribute {}", a.name);
            if heap::attr_is_deferred(ds, a) {
                let (dt, value) = self.deferred.placeholder(ds, format!("group {gpath}"), a)?;
                h.set_attr_typed(&a.name, dt, value)
                    .map_err(|e| h5err(what(), e))?;
            } else {
                group_attr(h, a, ds).map_err(|e| h5err(what(), e))?;
            }
        }
        for &t in &grp.types {
            let ut = ds.user_type(t);
            let dt = user::datatype(ds, NcType::User(t), false)?;
            h.commit_datatype(&ut.name, dt)
                .map_err(|e| h5err(format!("group {gpath}: type {}", ut.name), e))?;
        }
        // dimensions without a coordinate variable get a scale of their own
        for &d in &grp.dims {
            if self.coord_var(d).is_some() {
                continue;
            }
            let dim = ds.dim(d);
            let what = || format!("group {gpath}: dimension {}", dim.name);
            // netCDF-C leaves the scale of an unlimited dimension at length 0: readers take
            // the current length from the variables
            let len = if dim.unlimited { 0 } else { dim.len as usize };
            let mut b = h
                .new_dataset::<f32>()
                .datatype(types::atomic_datatype(AtomicType::Float, true))
                .shape([len]);
            if dim.unlimited {
                b = b.chunk(&[1]).max_shape(&[None]);
            } else if len > MAX_CONTIGUOUS_SCALE {
                // netCDF-C's scale is contiguous with no storage allocated; the HDF5 writer
                // allocates contiguous storage at once, so a long one is chunked instead and
                // its chunks, never written, take no space (the file's size stays that of its
                // data: a 4e9 dimension would otherwise make a 16 GB file)
                b = b.chunk(&[len.min(SCALE_CHUNK)]);
            }
            let sd = b.create(&dim.name).map_err(|e| h5err(what(), e))?;
            let name = format!("{DIM_WITHOUT_VAR}{:>10}", dim.len);
            sd.set_scale(Some(&name)).map_err(|e| h5err(what(), e))?;
            sd.set_attr_typed(
                "_Netcdf4Dimid",
                DatatypeMessage::i32_type(),
                (d.0 as i32).to_le_bytes().to_vec(),
            )
            .map_err(|e| h5err(what(), e))?;
            self.dim_scales.insert(d, sd);
        }
        for &v in &grp.vars {
            self.define_var(v, h)?;
        }
        for &c in &grp.groups {
            let name = &ds.group(c).name;
            let ch = h
                .create_group(name)
                .map_err(|e| h5err(format!("group {gpath}: subgroup {name}"), e))?;
            self.write_group(c, &ch)?;
        }
        Ok(())
    }

    /// The coordinate variable of dimension `d`: the variable of the same name in the
    /// dimension's group whose first dimension is `d` (netCDF-C makes a multi-dimensional one
    /// the dimension scale too, and records its dimensions in `_Netcdf4Coordinates`).
    fn coord_var(&self, d: DimId) -> Option<VarId> {
        self.coords.get(&d).copied()
    }

    /// True if `v` is the coordinate variable of its first dimension.
    fn is_coord(&self, v: VarId) -> bool {
        self.ds
            .var(v)
            .dims
            .first()
            .is_some_and(|&d| self.coord_var(d) == Some(v))
    }

    fn plan(&self, v: VarId) -> Result<VarPlan, Hdf5Error> {
        let ds = self.ds;
        let var = ds.var(v);
        let st = &var.storage;
        let rank = var.dims.len();
        let unlim: Vec<bool> = var.dims.iter().map(|d| ds.dim(*d).unlimited).collect();
        let any_unlim = unlim.iter().any(|&u| u);
        // codecs only Zarr has (numcodecs' delta, gzip, lz4, lzma, ...) cannot be written
        // here: refused, never dropped (a copy from Zarr clears them, with a warning)
        if let Some(text) = st.codecs.as_deref() {
            let zarr_only = nc_filters::codec_json::zarr_only_ids(text);
            if !zarr_only.is_empty() {
                return Err(Hdf5Error::unsupported(
                    format!("variable {}", ds.var_path(v)),
                    format!(
                        "_Codecs asks for the Zarr codec(s) {}, which have no HDF5 filter; \
                         write an NCZarr or Zarr store (#mode=nczarr,file), or remove them",
                        zarr_only.join(", ")
                    ),
                ));
            }
        }
        let big = st.endianness == Some(Endianness::Big);
        let datatype = user::datatype(ds, var.ty, big)?;
        let committed = match var.ty {
            NcType::User(t) => Some(type_path(ds, t)),
            NcType::Atomic(_) => None,
        };
        let heap_refs = heap::var_is_deferred(ds, var.ty);
        if heap_refs && !st.filters.is_empty() {
            return Err(Hdf5Error::invalid(
                format!("variable {}", var.name),
                "filters cannot be applied to variable-length data (strings, vlens and \
                 compounds holding them), as in netCDF-C: remove its _Filter, _DeflateLevel, \
                 _Shuffle or _Fletcher32 attribute",
            ));
        }
        // a virtual dataset read from HDF5 is written as if no layout were said
        let said = st.layout.filter(|&l| l != Layout::Virtual);
        let layout = match said {
            Some(l) if rank > 0 || l != Layout::Chunked => l,
            _ if rank == 0 => Layout::Contiguous,
            _ if any_unlim || !st.filters.is_empty() || st.chunk_sizes.is_some() => Layout::Chunked,
            _ => Layout::Contiguous,
        };
        let type_size = ds.type_size(var.ty);
        // rust-hdf5 allocates contiguous storage when the dataset is created and tiles the fill
        // value through it from one in-memory buffer; a big variable that gets no data is stored
        // chunked instead, so nothing is allocated (netCDF-C leaves it contiguous, unallocated)
        let bytes = ds
            .num_elements(v)
            .and_then(|n| n.checked_mul(user::disk_size(ds, var.ty) as u64))
            .unwrap_or(u64::MAX);
        let layout = if layout == Layout::Contiguous
            && said.is_none()
            && rank > 0
            && (!self.gets_data(v) || self.given_prefix(v).is_some())
            && bytes > BIG_UNWRITTEN_BYTES
        {
            Layout::Chunked
        } else {
            layout
        };
        let chunk = if layout == Layout::Chunked {
            match &st.chunk_sizes {
                Some(c) if c.len() == rank => c.iter().map(|&x| x.max(1)).collect(),
                _ => {
                    let shape: Vec<u64> = var
                        .dims
                        .iter()
                        .map(|d| {
                            let dim = ds.dim(*d);
                            if dim.unlimited {
                                0
                            } else {
                                dim.len
                            }
                        })
                        .collect();
                    default_chunk_sizes(&shape, &unlim, type_size)
                }
            }
        } else {
            Vec::new()
        };
        if layout == Layout::Chunked {
            check_chunk_shape(ds, v, &chunk, user::disk_size(ds, var.ty) as u64)?;
        }
        // netCDF-C refuses filters on variable-length data
        let chain = if layout == Layout::Chunked && !heap_refs {
            let ordered = netcdf_filter_order(&st.filters);
            let ctx = FilterContext::new(type_size, &chunk);
            self.registry.working_chain(&ordered, &ctx)
        } else {
            Vec::new()
        };
        if unlim.iter().filter(|&&u| u).count() >= 2 {
            check_edge_codecs(&var.name, &chain)?;
        }
        let skip_unwritten = layout == Layout::Chunked && self.sparse_source(v, &chunk);
        Ok(VarPlan {
            layout,
            chunk,
            chain,
            big,
            datatype,
            committed,
            skip_unwritten,
        })
    }

    /// A copy whose source never stored part of variable `v` (see
    /// `DataSource::unwritten`), checked chunk by chunk over the output's chunk grid: those
    /// chunks stay unwritten in the output and read as the fill value, so the variable keeps
    /// its fill (not the "no fill" of the rest of an nccopy output, under which unwritten
    /// chunks would read as garbage). Never for a variable that is "no fill" itself, for
    /// strings and user types, or past a million chunks (then every chunk is written).
    fn sparse_source(&self, v: VarId, chunk: &[u64]) -> bool {
        let ds = self.ds;
        let var = ds.var(v);
        if var.storage.no_fill == Some(true)
            || !matches!(var.ty, NcType::Atomic(a) if a != AtomicType::String)
            || !self.gets_data(v)
        {
            return false;
        }
        let shape = ds.shape(v);
        if shape.is_empty() || shape.contains(&0) || chunk.len() != shape.len() {
            return false;
        }
        // a source that stores nothing anywhere says so at once
        let zeros = vec![0u64; shape.len()];
        if self.src.unwritten(ds, v, &zeros, &shape) {
            return true;
        }
        let grid = chunk_grid(&shape, chunk);
        let n = grid.iter().try_fold(1u64, |a, &g| a.checked_mul(g));
        if n.is_none_or(|n| n > 1 << 20) {
            return false;
        }
        (0..n.unwrap_or(0)).any(|k| {
            let (_, start, count) = chunk_region(k, &grid, chunk, &shape);
            self.src.unwritten(ds, v, &start, &count)
        })
    }

    fn define_var(&mut self, v: VarId, h: &H5Group) -> Result<(), Hdf5Error> {
        let ds = self.ds;
        let var = ds.var(v);
        let what = || format!("variable {}", var.name);
        let plan = self.plan(v)?;
        // like netCDF-C, a variable that gets no data keeps its unlimited dimensions at 0
        let gets_data = self.gets_data(v);
        let shape: Vec<usize> = var
            .dims
            .iter()
            .map(|d| {
                let dim = ds.dim(*d);
                if dim.unlimited && !gets_data {
                    0
                } else {
                    dim.len as usize
                }
            })
            .collect();
        let is_coord = self.is_coord(v);
        // a variable named like a dimension it is not the coordinate of gets a prefix
        let h5name = self.dataset_name(v);
        let mut b = h
            .new_dataset::<u8>()
            .datatype(plan.datatype.clone())
            .shape(&shape);
        if let Some(path) = &plan.committed {
            b = b.committed_type(path);
        }
        match plan.layout {
            Layout::Compact => b = b.compact(),
            Layout::Chunked => {
                let c: Vec<usize> = plan.chunk.iter().map(|&x| x as usize).collect();
                b = b.chunk(&c);
                let max: Vec<Option<usize>> = var
                    .dims
                    .iter()
                    .zip(&shape)
                    .map(|(d, &n)| (!ds.dim(*d).unlimited).then_some(n))
                    .collect();
                b = b.max_shape(&max);
                if !plan.chain.is_empty() {
                    b = b.filter_pipeline(hdf5_pipeline(&plan.chain, &var.name)?);
                }
            }
            // (a plan's layout is never virtual: see `plan`)
            Layout::Contiguous | Layout::Virtual => {}
        }
        // netCDF-C: a fill value on every variable, or (no fill) fill time "never" and no value
        // file-level "no fill" (nccopy) applies to fixed-size atomic types only, as in netCDF-C:
        // strings, vlens and user types keep their fill value
        let file_nofill = !self.opts.fill
            && matches!(var.ty, NcType::Atomic(a) if a != AtomicType::String)
            && !plan.skip_unwritten;
        let no_fill = var.storage.no_fill == Some(true) || file_nofill;
        if no_fill {
            b = b.fill_time(FillTime::Never);
        } else if heap::var_is_deferred(ds, var.ty) {
            // strings, vlens, compounds holding them: netCDF-C's fill is `_FillValue`, or ""
            // for a string, stored in the global heap. It is written by the heap pass in place
            // of a placeholder; rust-hdf5 must not tile the placeholder through contiguous or
            // compact storage (fill time "never": the heap pass writes every element of it,
            // fill values included), while chunks it never writes read as the fill
            let es = plan.datatype.element_size() as usize;
            let fill = ds.fill_value(v).or_else(|| {
                (var.ty == NcType::Atomic(AtomicType::String))
                    .then(|| Values::String(vec![Some(NcString::default())]))
            });
            match fill {
                Some(f) if es >= 16 => {
                    if plan.layout != Layout::Chunked {
                        b = b.fill_time(FillTime::Never);
                    }
                    let placeholder = self.deferred.fill_placeholder(var.ty, f, es);
                    b = b.fill_value_bytes(&placeholder);
                }
                _ => b = b.fill_value_bytes(&vec![0u8; es]),
            }
        } else {
            let fill = match ds.fill_value(v).as_ref().and_then(|f| match var.ty {
                NcType::Atomic(_) => types::native_bytes(f),
                NcType::User(_) => user::value_bytes(ds, var.ty, f, false),
            }) {
                Some(f) => Some(f),
                // netCDF-C's fill for user types without `_FillValue`: all zero bytes (an empty
                // sequence for a vlen)
                None if matches!(var.ty, NcType::User(_)) => {
                    Some(vec![0u8; plan.datatype.element_size() as usize])
                }
                None => None,
            };
            if let Some(fill) = fill {
                // a contiguous variable we write whole needs no fill pass: fill time "never"
                // keeps rust-hdf5 from tiling the fill value through its storage in memory
                if plan.layout == Layout::Contiguous && gets_data && !shape.is_empty() {
                    b = b.fill_time(FillTime::Never);
                }
                b = b.fill_value_bytes(&fill);
            }
        }
        let hd = b.create(&h5name).map_err(|e| h5err(what(), e))?;
        if dense::wanted(var.atts.len()) {
            // many attributes: dense storage written by us after close (see `dense`)
            for (name, dt, value) in dense::stand_ins() {
                hd.set_attr_typed(&name, dt, value)
                    .map_err(|e| h5err(format!("variable {}: attributes", var.name), e))?;
            }
            self.deferred.dense.add_var(v, &h5name);
        }
        for a in var.atts.iter().filter(|_| !dense::wanted(var.atts.len())) {
            let what = || format!("variable {}: attribute {}", var.name, a.name);
            if heap::attr_is_deferred(ds, a) {
                let (dt, value) =
                    self.deferred
                        .placeholder(ds, format!("variable {}", var.name), a)?;
                hd.set_attr_typed(&a.name, dt, value)
                    .map_err(|e| h5err(what(), e))?;
            } else {
                var_attr(&hd, a, ds).map_err(|e| h5err(what(), e))?;
            }
        }
        if is_coord {
            hd.set_scale(Some(&var.name))
                .map_err(|e| h5err(what(), e))?;
            hd.set_attr_typed(
                "_Netcdf4Dimid",
                DatatypeMessage::i32_type(),
                (var.dims[0].0 as i32).to_le_bytes().to_vec(),
            )
            .map_err(|e| h5err(what(), e))?;
        }
        if !var.dims.is_empty() && (var.dims.len() > 1 || is_coord) {
            let ids: Vec<i32> = var.dims.iter().map(|d| d.0 as i32).collect();
            hd.new_attr::<i32>()
                .shape([ids.len()])
                .create("_Netcdf4Coordinates")
                .and_then(|a| a.write_array(&ids))
                .map_err(|e| h5err(what(), e))?;
        }
        if is_coord {
            // keep a second handle for attaching; the variable data goes through `var_sets`
            self.dim_scales.insert(
                var.dims[0],
                h.dataset_writer(&h5name).map_err(|e| h5err(what(), e))?,
            );
        }
        self.var_sets.push((v, hd, plan));
        Ok(())
    }

    /// True if the variable's data is written (ncgen mode writes only what the CDL gives).
    fn gets_data(&self, v: VarId) -> bool {
        !(self.opts.only_given_data && self.ds.var(v).given_len().is_none())
    }

    /// ncgen: the number of leading elements (in row-major order) the CDL gives for a
    /// variable of an atomic type read as fill past them, when that is fewer than all. Chunks
    /// past them are left unwritten: HDF5 reads them as the fill value, as netCDF-C's ncgen
    /// leaves them. `None` when every chunk is written.
    fn given_prefix(&self, v: VarId) -> Option<u64> {
        let var = self.ds.var(v);
        let file_nofill =
            !self.opts.fill && matches!(var.ty, NcType::Atomic(a) if a != AtomicType::String);
        if !self.opts.only_given_data
            || var.storage.no_fill == Some(true)
            || file_nofill
            || !matches!(var.ty, NcType::Atomic(a) if a != AtomicType::String)
        {
            return None;
        }
        let given = var.given_len()?;
        let all = self.ds.num_elements(v)?;
        (given < all).then_some(given)
    }

    /// Attach each variable's dimension scales: `DIMENSION_LIST` and `REFERENCE_LIST`
    /// placeholders now, the real messages after close (see `dimscale`).
    fn attach_scales(&mut self) -> Result<(), Hdf5Error> {
        let ds = self.ds;
        let mut scales = std::mem::take(&mut self.deferred.scales);
        let objects: HashMap<DimId, dimscale::Object> = self
            .dim_scales
            .keys()
            .map(|&d| {
                let object = match self.coord_var(d) {
                    Some(cv) => dimscale::Object {
                        group: ds.var(cv).group,
                        name: self.dataset_name(cv),
                    },
                    None => dimscale::Object {
                        group: ds.dim(d).group,
                        name: ds.dim(d).name.clone(),
                    },
                };
                (d, object)
            })
            .collect();
        for (v, hd, _) in &self.var_sets {
            let var = ds.var(*v);
            // a dimension scale cannot have scales attached: readers take the other
            // dimensions of a multi-dimensional coordinate variable from _Netcdf4Coordinates
            if self.is_coord(*v) {
                continue;
            }
            let axes: Vec<Option<dimscale::Object>> =
                var.dims.iter().map(|d| objects.get(d).cloned()).collect();
            if axes.iter().all(Option::is_none) {
                continue;
            }
            let what = format!("variable {}: dimension scale", var.name);
            let object = dimscale::Object {
                group: var.group,
                name: self.dataset_name(*v),
            };
            let (dt, value) = scales.attach(&mut self.deferred, object, &axes, &what)?;
            hd.set_attr_typed(dimscale::DIMENSION_LIST, dt, value)
                .map_err(|e| h5err(what, e))?;
        }
        let mut handles: HashMap<dimscale::Object, &H5Dataset> = HashMap::new();
        for (d, h) in &self.dim_scales {
            if let Some(object) = objects.get(d) {
                handles.insert(object.clone(), h);
            }
        }
        for (object, dt, value) in scales.reference_lists(&mut self.deferred)? {
            let what = || format!("dimension scale {}", object.name);
            let h = handles
                .get(&object)
                .ok_or_else(|| Hdf5Error::invalid(what(), "no dataset handle for the scale"))?;
            h.set_attr_typed(dimscale::REFERENCE_LIST, dt, value)
                .map_err(|e| h5err(what(), e))?;
        }
        self.deferred.scales = scales;
        Ok(())
    }

    /// The dataset name of variable `v`: its name, or, when it is named like a dimension of
    /// its group it is not the coordinate variable of, that name with a prefix.
    fn dataset_name(&self, v: VarId) -> String {
        let ds = self.ds;
        let var = ds.var(v);
        let clash = ds
            .find_dim(var.group, &var.name)
            .is_some_and(|d| ds.dim(d).group == var.group && self.coord_var(d).is_none());
        if clash {
            format!("{NON_COORD_PREFIX}{}", var.name)
        } else {
            var.name.clone()
        }
    }

    fn write_data(&mut self, v: VarId, hd: &H5Dataset, plan: &VarPlan) -> Result<(), Hdf5Error> {
        let ds = self.ds;
        let var = ds.var(v);
        if self.opts.only_given_data && var.given_len().is_none() {
            // contiguous and compact storage of heap references is allocated at creation, so
            // it gets the fill values (netCDF-C leaves it unallocated, which reads as fill);
            // other variables without data keep no data
            let fixed = var.dims.iter().all(|d| !ds.dim(*d).unlimited);
            if !(heap::var_is_deferred(ds, var.ty) && plan.layout != Layout::Chunked && fixed) {
                return Ok(());
            }
        }
        let shape = ds.shape(v);
        if shape.contains(&0) {
            return Ok(());
        }
        if heap::var_is_deferred(ds, var.ty) {
            return self.write_heap_placeholders(v, hd, plan, &shape);
        }
        match plan.layout {
            Layout::Chunked => self.write_chunked(v, hd, plan, &shape),
            Layout::Contiguous if var.ty.as_atomic().is_some() => self.write_slabs(v, hd, &shape),
            // compact data lives in the object header (at most 64 KiB): one piece
            Layout::Compact if var.ty.as_atomic().is_some() => {
                let vals = self.read(v, &vec![0; shape.len()], &shape)?;
                write_scalar(hd, &vals)
                    .map_err(|e| h5err(format!("variable {}: writing data", var.name), e))
            }
            // (a plan's layout is never virtual: see `plan`)
            Layout::Contiguous | Layout::Compact | Layout::Virtual => {
                self.write_whole(v, hd, plan, &shape)
            }
        }
    }

    fn read(&self, v: VarId, start: &[u64], count: &[u64]) -> Result<Values, Hdf5Error> {
        read_slab(self.ds, self.src, v, start, count)
    }

    /// Contiguous / compact data: hyperslabs of at most [`SLAB_ELEMENTS`] elements.
    /// The next slab is read on another thread while this one is written. Numbers the source
    /// offers as little-endian bytes go to the file as those bytes, without a typed copy.
    fn write_slabs(&self, v: VarId, hd: &H5Dataset, shape: &[u64]) -> Result<(), Hdf5Error> {
        let name = &self.ds.var(v).name;
        let (ds, src) = (self.ds, self.src);
        let list = slabs(shape, SLAB_ELEMENTS);
        let le_size = match ds.var(v).ty.as_atomic() {
            Some(AtomicType::String) | None => None,
            Some(t) if !shape.is_empty() && cfg!(target_endian = "little") => Some(t.size()),
            Some(_) => None,
        };
        let read = |s: &[u64], c: &[u64]| -> Result<Slab, Hdf5Error> {
            if let Some(size) = le_size {
                if let Some(b) = read_le_slab(ds, src, v, s, c, size) {
                    return Ok(Slab::Le(b?, size));
                }
            }
            read_slab(ds, src, v, s, c).map(Slab::Values)
        };
        let write = |k: usize, slab: &Slab| -> Result<(), Hdf5Error> {
            let (start, count) = &list[k];
            let s: Vec<usize> = start.iter().map(|&x| x as usize).collect();
            let c: Vec<usize> = count.iter().map(|&x| x as usize).collect();
            let r = match slab {
                Slab::Values(vals) if shape.is_empty() => write_scalar(hd, vals),
                Slab::Values(vals) => write_slice(hd, &s, &c, vals),
                Slab::Le(bytes, size) => write_le_slice(hd, &s, &c, bytes, *size),
            };
            r.map_err(|e| h5err(format!("variable {name}: writing data"), e))
        };
        let Some((s0, c0)) = list.first() else {
            return Ok(());
        };
        let mut current = read(s0, c0)?;
        for k in 0..list.len() {
            let next = list.get(k + 1);
            let (next_slab, written) = std::thread::scope(|scope| {
                let job = next.map(|(s, c)| scope.spawn(move || read(s, c)));
                let written = write(k, &current);
                (job.map(|j| j.join()), written)
            });
            written?;
            match next_slab {
                Some(Ok(slab)) => current = slab?,
                Some(Err(_)) => {
                    return Err(Hdf5Error::invalid(
                        format!("variable {name}"),
                        "a slab reader thread panicked",
                    ))
                }
                None => {}
            }
        }
        Ok(())
    }

    /// Contiguous / compact data of a user type, in one piece (rust-hdf5 writes raw bytes only
    /// for the whole dataset).
    fn write_whole(
        &self,
        v: VarId,
        hd: &H5Dataset,
        plan: &VarPlan,
        shape: &[u64],
    ) -> Result<(), Hdf5Error> {
        let ds = self.ds;
        let name = &ds.var(v).name;
        let vals = self.read(v, &vec![0; shape.len()], shape)?;
        let bytes = user::value_bytes(ds, ds.var(v).ty, &vals, plan.big).ok_or_else(|| {
            Hdf5Error::invalid(format!("variable {name}"), "values do not match the type")
        })?;
        hd.write_raw_bytes(&bytes)
            .map_err(|e| h5err(format!("variable {name}: writing data"), e))
    }

    /// Storage for a variable whose elements are heap references, filled in by
    /// [`heap::Deferred::finish`] after close. Contiguous storage is allocated when the
    /// dataset is created; chunks are written here holding null references (one shared zero
    /// buffer: nothing is read or encoded).
    fn write_heap_placeholders(
        &mut self,
        v: VarId,
        hd: &H5Dataset,
        plan: &VarPlan,
        shape: &[u64],
    ) -> Result<(), Hdf5Error> {
        let ds = self.ds;
        let var = ds.var(v);
        let name = &var.name;
        if plan.layout == Layout::Compact {
            let n: u64 = shape.iter().product();
            let bytes = n * plan.datatype.element_size() as u64;
            if bytes > 0 {
                let placeholder = self.deferred.compact_placeholder(v, bytes as usize);
                if placeholder.len() as u64 != bytes {
                    return Err(Hdf5Error::unsupported(
                        format!("variable {name}"),
                        "compact data of less than 16 bytes",
                    ));
                }
                hd.write_raw_bytes(&placeholder)
                    .map_err(|e| h5err(format!("variable {name}: writing data"), e))?;
            }
            return Ok(());
        }
        if plan.layout == Layout::Chunked {
            let what = || format!("variable {name}: writing data");
            let dims: Vec<usize> = shape.iter().map(|&x| x as usize).collect();
            hd.set_extent(&dims).map_err(|e| h5err(what(), e))?;
            let es = plan.datatype.element_size() as u64;
            let chunk_bytes = plan
                .chunk
                .iter()
                .try_fold(es, |a, &c| a.checked_mul(c))
                .and_then(|b| usize::try_from(b).ok())
                .ok_or_else(|| Hdf5Error::invalid(format!("variable {name}"), "chunk too large"))?;
            let zeros = vec![0u8; chunk_bytes];
            let grid = chunk_grid(shape, &plan.chunk);
            for k in 0..grid.iter().product::<u64>() {
                let coords: Vec<usize> = unravel(k, &grid).iter().map(|&c| c as usize).collect();
                hd.write_chunk_at(&coords, &zeros)
                    .map_err(|e| h5err(what(), e))?;
            }
            // an edge chunk grew the extent to the chunk's end: cut it back
            hd.set_extent(&dims).map_err(|e| h5err(what(), e))?;
        }
        self.deferred.defer_var(v, ds.group_path(var.group));
        Ok(())
    }

    fn write_chunked(
        &self,
        v: VarId,
        hd: &H5Dataset,
        plan: &VarPlan,
        shape: &[u64],
    ) -> Result<(), Hdf5Error> {
        let ds = self.ds;
        let var = ds.var(v);
        let name = var.name.clone();
        let type_size = ds.type_size(var.ty);
        let pipeline: Option<Pipeline> = if plan.chain.is_empty() {
            None
        } else {
            let ctx = FilterContext::new(type_size, &plan.chunk);
            Some(
                self.registry
                    .pipeline_stored(&plan.chain, ctx)
                    .map_err(|e| missing_filter(&self.registry, &name, &plan.chain, e))?,
            )
        };
        let fill = ds
            .fill_value(v)
            .and_then(|f| user::value_bytes(ds, var.ty, &f, plan.big))
            .unwrap_or_else(|| vec![0; type_size]);
        let grid = chunk_grid(shape, &plan.chunk);
        let n_chunks: u64 = grid.iter().product();
        // a batch: a few chunks per thread and at least ~8 MiB, so small chunks do not pay a
        // thread hand-over each
        let chunk_bytes = plan.chunk.iter().product::<u64>().max(1) * type_size.max(1) as u64;
        let batch = ((rayon::current_num_threads() * 4) as u64)
            .max((8 << 20) / chunk_bytes)
            .clamp(1, 1 << 16);
        // little-endian output of an integer, float or char type: take the source's bytes as
        // they are when it offers them (no typed vector in between)
        let raw_le = !plan.big
            && matches!(var.ty, NcType::Atomic(a) if a != AtomicType::String)
            && type_size == var.ty.as_atomic().map_or(0, AtomicType::size);
        let src = self.src;
        let ty = var.ty;
        let pipeline = &pipeline;
        let fill = &fill;
        let grid = &grid;
        // Set the final extent first. Writing a chunk past the end of an unlimited dimension
        // would grow the extent to the chunk's end, and cutting it back afterwards makes
        // rust-hdf5 re-filter the edge chunks with its own codecs (which know only a few ids).
        // So edge chunks of the one unlimited dimension are placed by their linear index,
        // which does not move the extent.
        let dims: Vec<usize> = shape.iter().map(|&x| x as usize).collect();
        hd.set_extent(&dims)
            .map_err(|e| h5err(format!("variable {name}: setting the extent"), e))?;
        let unlimited: Vec<usize> = (0..var.dims.len())
            .filter(|&k| ds.dim(var.dims[k]).unlimited)
            .collect();
        let edge_axis = match unlimited.as_slice() {
            [u] if !shape[*u].is_multiple_of(plan.chunk[*u]) => Some(*u),
            _ => None,
        };
        // ncgen: chunks that begin past the data the CDL gives stay unwritten (fill)
        let given = self.given_prefix(v);
        // a copy: chunks the source never stored stay unwritten too, when the output reads
        // them as the same fill (fill enabled; the source checks that the values agree)
        let keep_unwritten = plan.skip_unwritten;
        let encode_one = |k: u64| -> Result<EncodedChunk, Hdf5Error> {
            let (coords, start, count) = chunk_region(k, grid, &plan.chunk, shape);
            if let Some(n) = given {
                if row_major_index(&start, shape) >= u128::from(n) {
                    return Ok((Vec::new(), Vec::new()));
                }
            }
            if keep_unwritten && src.unwritten(ds, v, &start, &count) {
                return Ok((Vec::new(), Vec::new()));
            }
            // Same chunk shape and filters in the source: its stored bytes as they are. They are
            // still decoded once (not re-encoded) so that a corrupt chunk fails the copy here
            // instead of passing on to the output.
            if raw_le {
                if let Some(stored) = src.raw_chunk(ds, v, &start, &plan.chunk, &plan.chain) {
                    if let Some(p) = pipeline {
                        let want = plan.chunk.iter().product::<u64>() * type_size as u64;
                        // worded as the reader words it: the input is what is corrupt
                        let corrupt = |message: String| Hdf5Error::Source {
                            var: name.clone(),
                            message: format!("variable \"{name}\": chunk at {start:?}: {message}"),
                        };
                        let decoded = p.decode(&stored).map_err(|e| corrupt(e.to_string()))?;
                        if (decoded.len() as u64) < want {
                            return Err(corrupt(format!(
                                "decoded chunk has {} bytes, expected {want}",
                                decoded.len()
                            )));
                        }
                    }
                    return Ok((coords.iter().map(|&c| c as usize).collect(), stored));
                }
            }
            let le = if raw_le {
                read_le_slab(ds, src, v, &start, &count, type_size)
            } else {
                None
            };
            let bytes = match le {
                Some(b) => b?,
                None => {
                    let vals = read_slab(ds, src, v, &start, &count)?;
                    user::value_bytes(ds, ty, &vals, plan.big).ok_or_else(|| {
                        Hdf5Error::unsupported(
                            format!("variable {name}"),
                            "chunked data of this type is not written yet",
                        )
                    })?
                }
            };
            let full = pad_chunk(bytes, &count, &plan.chunk, fill);
            let stored = match pipeline {
                Some(p) => p.encode(&full).map_err(|e| Hdf5Error::Filter {
                    var: name.clone(),
                    offsets: start.clone(),
                    message: e.to_string(),
                })?,
                None => full,
            };
            Ok((coords.iter().map(|&c| c as usize).collect(), stored))
        };
        let write_one = |(coords, bytes): EncodedChunk| -> Result<(), Hdf5Error> {
            if coords.is_empty() {
                // a chunk past the given data (see `given_prefix`)
                return Ok(());
            }
            let edge = edge_axis.filter(|&u| coords[u] as u64 + 1 == grid[u]);
            let r = if let (Some(u), Some(_)) = (edge, pipeline) {
                hd.write_chunk_raw(linear_slot(&coords, u, grid), &bytes, 0)
            } else if pipeline.is_some() {
                hd.write_chunk_raw_at(&coords, &bytes, 0)
            } else {
                hd.write_chunk_at(&coords, &bytes)
            };
            r.map_err(|e| h5err(format!("variable {name}: chunk {coords:?}"), e))
        };
        // Chunks are read and encoded on all cores, this thread's included, and this thread
        // writes them in order; at most two batches are in flight (memory: two batches of
        // chunks).
        ordered::run(
            n_chunks,
            2 * batch,
            rayon::current_num_threads(),
            encode_one,
            write_one,
            || {
                Hdf5Error::invalid(
                    format!("variable {name}"),
                    "a chunk encoder thread panicked",
                )
            },
        )?;
        // an unfiltered edge chunk grew the extent to the chunk's end: cut it back
        hd.set_extent(&dims)
            .map_err(|e| h5err(format!("variable {name}: setting the extent"), e))?;
        Ok(())
    }
}

fn write_slice(hd: &H5Dataset, s: &[usize], c: &[usize], vals: &Values) -> rust_hdf5::Result<()> {
    match vals {
        Values::Byte(x) => hd.write_slice(s, c, x),
        Values::Char(x) | Values::UByte(x) => hd.write_slice(s, c, x),
        Values::Short(x) => hd.write_slice(s, c, x),
        Values::UShort(x) => hd.write_slice(s, c, x),
        Values::Int(x) => hd.write_slice(s, c, x),
        Values::UInt(x) => hd.write_slice(s, c, x),
        Values::Int64(x) => hd.write_slice(s, c, x),
        Values::UInt64(x) => hd.write_slice(s, c, x),
        Values::Float(x) => hd.write_slice(s, c, x),
        Values::Double(x) => hd.write_slice(s, c, x),
        _ => Err(rust_hdf5::Hdf5Error::InvalidState(
            "data of this type is not written yet".into(),
        )),
    }
}

/// One slab of a contiguous variable: typed values, or little-endian bytes of elements of
/// this many bytes.
enum Slab {
    Values(Values),
    Le(Vec<u8>, usize),
}

/// Little-endian element bytes of `size`-byte numbers into a hyperslab: written as unsigned
/// integers of that size, which rust-hdf5 stores in the dataset's byte order (the bytes are
/// the same whatever the numbers mean). A buffer not aligned for them is copied once.
fn write_le_slice(
    hd: &H5Dataset,
    s: &[usize],
    c: &[usize],
    bytes: &[u8],
    size: usize,
) -> rust_hdf5::Result<()> {
    fn typed<T: bytemuck::Pod + rust_hdf5::H5Type>(
        hd: &H5Dataset,
        s: &[usize],
        c: &[usize],
        bytes: &[u8],
    ) -> rust_hdf5::Result<()> {
        match bytemuck::try_cast_slice::<u8, T>(bytes) {
            Ok(x) => hd.write_slice(s, c, x),
            Err(_) => {
                let mut v = vec![T::zeroed(); bytes.len() / std::mem::size_of::<T>()];
                bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(bytes);
                hd.write_slice(s, c, &v)
            }
        }
    }
    match size {
        1 => hd.write_slice(s, c, bytes),
        2 => typed::<u16>(hd, s, c, bytes),
        4 => typed::<u32>(hd, s, c, bytes),
        8 => typed::<u64>(hd, s, c, bytes),
        _ => Err(rust_hdf5::Hdf5Error::InvalidState(format!(
            "no {size}-byte number type to write"
        ))),
    }
}

/// The whole dataset's values at once (scalars, compact data).
fn write_scalar(hd: &H5Dataset, vals: &Values) -> rust_hdf5::Result<()> {
    match vals {
        Values::Byte(x) => hd.write_raw(x),
        Values::Char(x) | Values::UByte(x) => hd.write_raw(x),
        Values::Short(x) => hd.write_raw(x),
        Values::UShort(x) => hd.write_raw(x),
        Values::Int(x) => hd.write_raw(x),
        Values::UInt(x) => hd.write_raw(x),
        Values::Int64(x) => hd.write_raw(x),
        Values::UInt64(x) => hd.write_raw(x),
        Values::Float(x) => hd.write_raw(x),
        Values::Double(x) => hd.write_raw(x),
        _ => Err(rust_hdf5::Hdf5Error::InvalidState(
            "data of this type is not written yet".into(),
        )),
    }
}

fn read_slab(
    ds: &Dataset,
    src: &dyn DataSource,
    v: VarId,
    start: &[u64],
    count: &[u64],
) -> Result<Values, Hdf5Error> {
    src.read(ds, v, start, count)
        .map_err(|e| Hdf5Error::Source {
            var: ds.var(v).name.clone(),
            message: e.to_string(),
        })
}

/// [`DataSource::read_le_bytes`] of a hyperslab of `size`-byte elements, checked to be as
/// long as the hyperslab; `None` when the source does not offer the bytes.
fn read_le_slab(
    ds: &Dataset,
    src: &dyn DataSource,
    v: VarId,
    start: &[u64],
    count: &[u64],
    size: usize,
) -> Option<Result<Vec<u8>, Hdf5Error>> {
    let name = || ds.var(v).name.clone();
    let r = src.read_le_bytes(ds, v, start, count)?;
    Some(
        r.map_err(|e| Hdf5Error::Source {
            var: name(),
            message: e.to_string(),
        })
        .and_then(|b| {
            let want = count.iter().product::<u64>() * size as u64;
            if b.len() as u64 == want {
                Ok(b)
            } else {
                Err(Hdf5Error::Source {
                    var: name(),
                    message: format!("the source gave {} bytes for {want} bytes of data", b.len()),
                })
            }
        }),
    )
}

/// netCDF-C stores fletcher32 first and shuffle second, then the other filters in the order
/// they were defined.
fn netcdf_filter_order(chain: &[FilterSpec]) -> Vec<FilterSpec> {
    let mut out: Vec<FilterSpec> = chain
        .iter()
        .filter(|f| f.id == FILTER_FLETCHER32)
        .take(1)
        .cloned()
        .collect();
    out.extend(
        chain
            .iter()
            .filter(|f| f.id == FILTER_SHUFFLE)
            .take(1)
            .cloned(),
    );
    out.extend(
        chain
            .iter()
            .filter(|f| f.id != FILTER_SHUFFLE && f.id != FILTER_FLETCHER32)
            .cloned(),
    );
    out
}

fn hdf5_pipeline(chain: &[FilterSpec], var: &str) -> Result<FilterPipeline, Hdf5Error> {
    let mut filters = Vec::with_capacity(chain.len());
    for f in chain {
        let id = u16::try_from(f.id).map_err(|_| {
            Hdf5Error::invalid(
                format!("variable {var}"),
                format!("filter id {} does not fit HDF5's 16-bit filter ids", f.id),
            )
        })?;
        // HDF5's H5Pset_deflate / H5Pset_shuffle / H5Pset_szip (which netCDF-C calls) mark the
        // filter optional; fletcher32 and plugin filters (H5Pset_filter) are mandatory
        let optional = matches!(f.id, 1 | 2 | 4);
        filters.push(Filter {
            id,
            flags: u16::from(optional),
            cd_values: f.params.clone(),
        });
    }
    Ok(FilterPipeline { filters })
}

fn missing_filter(
    reg: &Registry,
    var: &str,
    chain: &[FilterSpec],
    e: nc_filters::FilterError,
) -> Hdf5Error {
    match chain.iter().find(|f| !reg.is_available(f.id)) {
        Some(f) => Hdf5Error::MissingFilter {
            var: var.to_string(),
            id: f.id,
            name: crate::filter_name(f.id).to_string(),
            cure: format!(
                "cannot encode its data; add the plugin's directory to HDF5_PLUGIN_PATH (searched: {:?})",
                reg.searched_dirs()
            ),
        },
        None => Hdf5Error::Filter {
            var: var.to_string(),
            offsets: Vec::new(),
            message: e.to_string(),
        },
    }
}

/// Chunk index `k` (row-major over `grid`) as chunk coordinates.
/// The chunk index's linear slot of chunk `coords` when dimension `seed` is the one unlimited
/// dimension: its coordinate varies slowest, the others row-major over the chunk grid.
fn linear_slot(coords: &[usize], seed: usize, grid: &[u64]) -> usize {
    let mut k = coords[seed];
    for (d, &c) in coords.iter().enumerate() {
        if d != seed {
            k = k * grid[d] as usize + c;
        }
    }
    k
}

/// Chunks along each dimension of `shape` for chunks of shape `chunk`.
/// Filters the HDF5 layer can run itself (rust-hdf5 with the features the workspace turns
/// on): deflate, shuffle, fletcher32, bzip2, blosc, lz4, zstd.
const EDGE_CODECS: [u32; 7] = [1, 2, 3, 307, 32001, 32004, 32015];

/// A variable with two or more unlimited dimensions has its chunks indexed by coordinates:
/// writing an edge chunk grows the extent to the chunk's end, and cutting it back makes the
/// HDF5 layer re-encode that chunk with its own codecs. Refuse, before anything is written, a
/// filter it has no codec for.
fn check_edge_codecs(name: &str, chain: &[FilterSpec]) -> Result<(), Hdf5Error> {
    match chain.iter().find(|f| !EDGE_CODECS.contains(&f.id)) {
        None => Ok(()),
        Some(f) => Err(Hdf5Error::unsupported(
            format!("variable {name}"),
            format!(
                "filter {} ({}) on a variable with two or more unlimited dimensions: its \
                 edge chunks would have to be re-encoded by the HDF5 writer, which has no such \
                 codec; use deflate, zstd, bzip2, lz4 or blosc, or give it at most one \
                 unlimited dimension",
                f.id,
                crate::filter_name(f.id)
            ),
        )),
    }
}

/// HDF5's limits on a chunk (File Format Specification, layout message: a chunk's byte size
/// is a 32-bit value; the library refuses a chunk longer than a fixed-size dimension), checked
/// before anything is written, as netCDF-C does ("NetCDF: Bad chunk sizes").
fn check_chunk_shape(ds: &Dataset, v: VarId, chunk: &[u64], elem: u64) -> Result<(), Hdf5Error> {
    let var = ds.var(v);
    let what = || format!("variable {}", var.name);
    for (&c, &d) in chunk.iter().zip(&var.dims) {
        let dim = ds.dim(d);
        if !dim.unlimited && dim.len > 0 && c > dim.len {
            return Err(Hdf5Error::invalid(
                what(),
                format!(
                    "NetCDF: Bad chunk sizes: chunk length {c} along dimension {} is longer than the dimension ({}); give chunk sizes at most the dimension lengths",
                    dim.name, dim.len
                ),
            ));
        }
    }
    let bytes = chunk
        .iter()
        .try_fold(elem.max(1), |acc, &c| acc.checked_mul(c));
    match bytes {
        Some(b) if b < (1u64 << 32) => Ok(()),
        _ => Err(Hdf5Error::invalid(
            what(),
            format!(
                "NetCDF: Bad chunk sizes: a chunk of {} elements of {elem} bytes is {}, and HDF5 holds at most 4 GiB - 1 bytes in one chunk; give smaller chunk sizes",
                chunk
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(" x "),
                bytes.map_or_else(|| "more than 2^64 bytes".to_string(), |b| format!("{b} bytes"))
            ),
        )),
    }
}

/// The row-major position of element `at` in an array of `shape`.
fn row_major_index(at: &[u64], shape: &[u64]) -> u128 {
    at.iter()
        .zip(shape)
        .fold(0u128, |acc, (&i, &n)| acc * u128::from(n) + u128::from(i))
}

fn chunk_grid(shape: &[u64], chunk: &[u64]) -> Vec<u64> {
    shape
        .iter()
        .zip(chunk)
        .map(|(&n, &c)| n.div_ceil(c))
        .collect()
}

fn unravel(mut k: u64, grid: &[u64]) -> Vec<u64> {
    let mut out = vec![0; grid.len()];
    for i in (0..grid.len()).rev() {
        let g = grid[i].max(1);
        out[i] = k % g;
        k /= g;
    }
    out
}

/// Chunk `k` (row-major) of a grid of `chunk`-shaped chunks over `shape`: its grid
/// coordinates, its first element and its element counts (edge chunks clipped to `shape`).
fn chunk_region(
    k: u64,
    grid: &[u64],
    chunk: &[u64],
    shape: &[u64],
) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let coords = unravel(k, grid);
    let start: Vec<u64> = coords.iter().zip(chunk).map(|(&i, &c)| i * c).collect();
    let count = start
        .iter()
        .zip(chunk)
        .zip(shape)
        .map(|((&s, &c), &n)| c.min(n - s))
        .collect();
    (coords, start, count)
}

/// A full chunk of `chunk` elements holding the `count`-shaped slab `bytes` at its origin,
/// the rest filled with `fill` (one element's bytes).
fn pad_chunk(bytes: Vec<u8>, count: &[u64], chunk: &[u64], fill: &[u8]) -> Vec<u8> {
    if count == chunk {
        return bytes;
    }
    let es = fill.len();
    let total: u64 = chunk.iter().product();
    let mut out = fill.repeat(total as usize);
    let rank = chunk.len();
    let inner = count[rank - 1] as usize * es;
    let rows: u64 = count[..rank - 1].iter().product();
    let mut idx = vec![0u64; rank - 1];
    for r in 0..rows as usize {
        let mut off = 0u64;
        for (i, &k) in idx.iter().enumerate() {
            let stride: u64 = chunk[i + 1..].iter().product();
            off += k * stride;
        }
        let dst = off as usize * es;
        out[dst..dst + inner].copy_from_slice(&bytes[r * inner..(r + 1) * inner]);
        for i in (0..idx.len()).rev() {
            idx[i] += 1;
            if idx[i] < count[i] {
                break;
            }
            idx[i] = 0;
        }
    }
    out
}

/// Hyperslabs covering `shape` row-major, each at most `limit` elements (at least one row of
/// the innermost split dimension).
fn slabs(shape: &[u64], limit: u64) -> Vec<(Vec<u64>, Vec<u64>)> {
    let rank = shape.len();
    if rank == 0 {
        return vec![(Vec::new(), Vec::new())];
    }
    // split dimension k: the first whose trailing product fits the limit
    let mut k = 0;
    while k < rank && shape[k + 1..].iter().product::<u64>() > limit {
        k += 1;
    }
    let k = k.min(rank - 1);
    let tail: u64 = shape[k + 1..].iter().product::<u64>().max(1);
    let step = (limit / tail).max(1);
    let outer: u64 = shape[..k].iter().product();
    let mut out = Vec::new();
    for o in 0..outer {
        let prefix = unravel(o, &shape[..k]);
        let mut s = 0;
        while s < shape[k] {
            let n = step.min(shape[k] - s);
            let mut start = prefix.clone();
            start.push(s);
            start.extend(std::iter::repeat_n(0, rank - k - 1));
            let mut count = vec![1; k];
            count.push(n);
            count.extend_from_slice(&shape[k + 1..]);
            out.push((start, count));
            s += n;
        }
    }
    out
}

macro_rules! numeric_attr {
    ($vals:expr, $x:ident => $body:expr) => {
        match $vals {
            Values::Byte($x) => $body,
            Values::UByte($x) => $body,
            Values::Short($x) => $body,
            Values::UShort($x) => $body,
            Values::Int($x) => $body,
            Values::UInt($x) => $body,
            Values::Int64($x) => $body,
            Values::UInt64($x) => $body,
            Values::Float($x) => $body,
            Values::Double($x) => $body,
            _ => Err(rust_hdf5::Hdf5Error::InvalidState(
                "attributes of this type are not written yet".into(),
            )),
        }
    };
}

/// The datatype and bytes of a one-value attribute of a user type (rust-hdf5 writes typed
/// attributes of runtime datatypes only as scalars).
fn user_attr(a: &Attribute, ds: &Dataset) -> rust_hdf5::Result<Option<(DatatypeMessage, Vec<u8>)>> {
    let NcType::User(_) = a.ty else {
        return Ok(None);
    };
    let refuse = |why: &str| rust_hdf5::Hdf5Error::InvalidState(why.to_string());
    if a.values.len() != 1 {
        return Err(refuse(
            "attributes of a user-defined type with other than one value are not written yet",
        ));
    }
    let dt = user::datatype(ds, a.ty, false).map_err(|e| refuse(&e.to_string()))?;
    let bytes = user::value_bytes(ds, a.ty, &a.values, false)
        .ok_or_else(|| refuse("values of variable-length user types are not written yet"))?;
    Ok(Some((dt, bytes)))
}

/// The path rust-hdf5 knows a committed type by: `g/h/name` (no leading slash).
fn type_path(ds: &Dataset, t: nc_dataset::TypeId) -> String {
    let ut = ds.user_type(t);
    let g = ds.group_path(ut.group);
    let g = g.trim_start_matches('/');
    if g.is_empty() {
        ut.name.clone()
    } else {
        format!("{g}/{}", ut.name)
    }
}

fn char_type(len: usize) -> DatatypeMessage {
    DatatypeMessage::FixedString {
        size: len.max(1) as u32,
        padding: 0,
        charset: 0,
    }
}

fn char_bytes(x: &[u8]) -> Vec<u8> {
    if x.is_empty() {
        vec![0]
    } else {
        x.to_vec()
    }
}

/// String attributes are written by the heap pass (`heap::attr_is_deferred`), with the string
/// datatype libhdf5 writes (`strtype`), never by rust-hdf5.
fn string_attr_refused() -> rust_hdf5::Result<()> {
    Err(rust_hdf5::Hdf5Error::InvalidState(
        "a string attribute reached rust-hdf5; the heap pass should have written it".into(),
    ))
}

fn group_attr(h: &H5Group, a: &Attribute, ds: &Dataset) -> rust_hdf5::Result<()> {
    if let Some((dt, bytes)) = user_attr(a, ds)? {
        return h.set_attr_typed(&a.name, dt, bytes);
    }
    match &a.values {
        Values::Char(x) => h.set_attr_typed(&a.name, char_type(x.len()), char_bytes(x)),
        Values::String(_) => string_attr_refused(),
        v => numeric_attr!(v, x => h.set_attr_array_numeric(&a.name, x)),
    }
}

fn var_attr(h: &H5Dataset, a: &Attribute, ds: &Dataset) -> rust_hdf5::Result<()> {
    if let Some((dt, bytes)) = user_attr(a, ds)? {
        return h.set_attr_typed(&a.name, dt, bytes);
    }
    match &a.values {
        Values::Char(x) => h.set_attr_typed(&a.name, char_type(x.len()), char_bytes(x)),
        Values::String(_) => string_attr_refused(),
        v => {
            fn arr<T: rust_hdf5::H5Type>(
                h: &H5Dataset,
                name: &str,
                x: &[T],
            ) -> rust_hdf5::Result<()> {
                h.new_attr::<T>()
                    .shape([x.len()])
                    .create(name)?
                    .write_array(x)
            }
            numeric_attr!(v, x => arr(h, &a.name, x))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slabs_cover_the_shape() {
        assert_eq!(
            slabs(&[3, 4], 8),
            vec![(vec![0, 0], vec![2, 4]), (vec![2, 0], vec![1, 4])]
        );
        assert_eq!(
            slabs(&[2, 3], 2),
            vec![
                (vec![0, 0], vec![1, 2]),
                (vec![0, 2], vec![1, 1]),
                (vec![1, 0], vec![1, 2]),
                (vec![1, 2], vec![1, 1])
            ]
        );
        assert_eq!(slabs(&[], 8), vec![(vec![], vec![])]);
    }

    #[test]
    fn edge_chunks_are_padded_with_fill() {
        let got = pad_chunk(vec![1, 2, 3, 4], &[2, 2], &[3, 3], &[9]);
        assert_eq!(got, vec![1, 2, 9, 3, 4, 9, 9, 9, 9]);
    }

    #[test]
    fn fletcher_then_shuffle_then_the_rest() {
        let f = |id: u32| FilterSpec { id, params: vec![] };
        let got: Vec<u32> = netcdf_filter_order(&[f(307), f(2), f(1), f(3)])
            .iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(got, vec![3, 2, 307, 1]);
    }
}
