//! netCDF-4 over HDF5, write side: lays a [`Dataset`] out the way netCDF-C 4.9.0 does
//! (superblock 2, creation order tracked and indexed, dimension scales, `_Netcdf4Dimid`,
//! `_Netcdf4Coordinates`, `_NCProperties`, `_nc3_strict`) with our own HDF5 structures
//! (`crate::format`), in one pass, and writes the data chunk by chunk: each chunk is read
//! from the [`DataSource`], encoded by *our* filter engine (`nc-filters`, in parallel) and
//! stored as it is, so memory stays bounded by a few chunks.
//!
//! One pass: the metadata (object headers, dense link and attribute storage, the global heap
//! collections of attribute and fill values and dimension lists) is measured first (`meta`:
//! no size depends on an address), its region reserved after the superblock, then the data is
//! written behind it (contiguous storage, chunks, each variable's chunk index after its
//! chunks, string and vlen data in collections appended as they fill), and last the metadata
//! region is encoded with every address known and written once. Nothing is written twice,
//! nothing is read back.
//!
//! Deviations from netCDF-C:
//! - variables holding heap references are never filtered (netCDF-C refuses that too);
//! - an unknown filter is accepted only when no chunk has to be encoded (netCDF-C refuses it
//!   at definition; we keep the metadata so such a variable can still be described);
//! - attribute messages over 64 KiB are refused (libhdf5 keeps them as "huge" fractal heap
//!   objects, which we do not write yet); heap objects of dense storage over 4 KiB raise the
//!   heap's managed-object limit instead of becoming huge objects.
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

mod data;
mod heap;
mod meta;
mod ordered;
mod out;
pub(crate) mod types;
mod user;

use nc_dataset::Slab;
use std::collections::HashMap;
use std::path::Path;

use nc_dataset::{
    AtomicType, DataSource, Dataset, DimId, Endianness, FilterSpec, Layout, NcString, NcType,
    Values, VarId, FILTER_FLETCHER32, FILTER_SHUFFLE,
};
use nc_filters::{FilterContext, Registry};

// the rule moved to the data model (nc-copy's plan uses it too); kept here for the writer's callers
pub use nc_dataset::chunking::default_chunk_sizes;

use crate::format::datatype::Datatype;
use crate::format::superblock;
use crate::Hdf5Error;
use heap::{DataHeap, MetaHeap};
use meta::{Addrs, Objects};
use out::Out;
use user::HeapSink;

/// The text of `_NCProperties` in files we write (netCDF-C writes
/// `version=2,netcdf=4.9.0,hdf5=1.10.8`; readers only show it).
pub const NC_PROPERTIES: &str = concat!(
    "version=2,ncgen-rs=",
    env!("CARGO_PKG_VERSION"),
    ",hdf5=nc-hdf5-",
    env!("CARGO_PKG_VERSION")
);

/// The `NAME` netCDF-C gives the dimension scale of a dimension without a coordinate variable
/// (followed by the length, `%10d`).
const DIM_WITHOUT_VAR: &str = "This is a netCDF dimension but not a netCDF variable.";
/// Dataset name prefix for a variable named like a dimension it is not the coordinate of.
const NON_COORD_PREFIX: &str = "_nc4_non_coord_";
/// Contiguous data is written in slabs of at most this many elements.
const SLAB_ELEMENTS: u64 = 1 << 20;
/// At most this many chunks of a variable are listed as the ones to visit (see
/// `Writer::sparse_source`: 32 MiB of chunk numbers); past it chunks are asked about.
pub(super) const MAX_VISIT: u64 = 1 << 22;
/// A contiguous variable the CDL gives only part of, larger than this, is stored chunked
/// (see `plan`): the rest of it would be written as fill.
const BIG_PARTIAL_BYTES: u64 = 64 << 20;

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

/// The filters a netCDF-4 output can encode: the built-in codecs, the default plugins, and
/// HDF5's own nbit and scaleoffset (encoded in nc-hdf5: no nc-filters codec has their ids).
fn registry() -> Result<Registry, Hdf5Error> {
    let mut registry = Registry::with_builtins();
    registry.load_default_plugins();
    for f in crate::filters::hdf5_only() {
        registry
            .register(f, true)
            .map_err(|e| Hdf5Error::invalid("filter registry", e.to_string()))?;
    }
    Ok(registry)
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
    let w = Writer::new(ds, src, opts, registry()?);
    w.and_then(|w| w.write(|| Out::create_file(path)))
        .map_err(|e| Hdf5Error::InFile {
            path: path.to_path_buf(),
            inner: Box::new(e),
        })
}

/// Write `ds` as a netCDF-4 file into `file`, an open, empty file (written through this
/// handle only, never reopened by name: it may have none yet); errors name it as `name`.
///
/// # Errors
/// As [`write_file`].
pub fn write_open_file(
    file: std::fs::File,
    name: &Path,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &Nc4WriteOptions,
) -> Result<(), Hdf5Error> {
    let w = Writer::new(ds, src, opts, registry()?);
    w.and_then(|w| w.write(|| Ok(file)))
        .map_err(|e| Hdf5Error::InFile {
            path: name.to_path_buf(),
            inner: Box::new(e),
        })
}

/// How one variable is stored.
struct VarPlan {
    layout: Layout,
    chunk: Vec<u64>,
    /// Filter chain in application order, working parameters.
    chain: Vec<FilterSpec>,
    big: bool,
    datatype: Datatype,
    /// Chunks the source never stored stay unwritten, and the variable keeps its fill value
    /// even in a "no fill" output (see `Writer::sparse_source`).
    sparse: Sparse,
    /// Fill time "never", no fill value.
    no_fill: bool,
}

/// What of a copied variable the source never stored (see `Writer::sparse_source`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sparse {
    /// Every chunk (or the whole contiguous storage) is written.
    No,
    /// Each chunk is asked about (`DataSource::unwritten`) and left unwritten when it is fill.
    Ask,
    /// Only these chunks (linear numbers in the chunk grid, ascending) can hold stored data;
    /// the others are left unwritten. Contiguous storage with none: left unallocated.
    Only(Vec<u64>),
}

struct Writer<'a> {
    ds: &'a Dataset,
    src: &'a dyn DataSource,
    opts: &'a Nc4WriteOptions,
    registry: Registry,
    /// The coordinate variable of each dimension that has one (see `coord_var`).
    coords: HashMap<DimId, VarId>,
    /// Each variable's storage, by variable index.
    plans: Vec<Option<VarPlan>>,
    /// The values of compact variables (kept in their object headers).
    compact: HashMap<VarId, Values>,
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

impl<'a> Writer<'a> {
    /// Plan every variable (refusing what cannot be written before anything is) and read
    /// the data of compact ones.
    fn new(
        ds: &'a Dataset,
        src: &'a dyn DataSource,
        opts: &'a Nc4WriteOptions,
        registry: Registry,
    ) -> Result<Writer<'a>, Hdf5Error> {
        check_reserved_names(ds)?;
        let mut w = Writer {
            ds,
            src,
            opts,
            registry,
            coords: coordinate_vars(ds),
            plans: Vec::new(),
            compact: HashMap::new(),
        };
        let mut plans = Vec::with_capacity(ds.vars.len());
        for i in 0..ds.vars.len() {
            plans.push(Some(w.plan(VarId(i))?));
        }
        for (i, p) in plans.iter().enumerate() {
            let v = VarId(i);
            if matches!(p, Some(p) if p.layout == Layout::Compact) && w.gets_data(v) {
                let shape = ds.shape(v);
                if !shape.contains(&0) {
                    let vals = data::read_slab(ds, src, v, &vec![0; shape.len()], &shape)?;
                    w.compact.insert(v, vals);
                }
            }
        }
        w.plans = plans;
        Ok(w)
    }

    /// Measure the metadata, write the data behind its region, then the metadata.
    /// `open` gives the file, asked for once the layout is known.
    fn write(
        &self,
        open: impl FnOnce() -> Result<std::fs::File, Hdf5Error>,
    ) -> Result<(), Hdf5Error> {
        let objs = Objects::collect(self);
        let n = objs.list.len();
        // pass 1: sizes (every address 0)
        let zero = Addrs::zero(n);
        let mut heap = MetaHeap::measure();
        let mut sizes = Vec::with_capacity(n);
        for k in 0..n {
            let p = meta::parts(self, &objs, k, &zero, &mut heap)?;
            sizes.push((
                p.header.encoded_len(),
                p.links.map_or(0, |l| l.len),
                p.attrs.map_or(0, |l| l.len),
            ));
        }
        let heap_sizes = heap.sizes();
        // the metadata region: superblock, headers, dense storage, heap collections
        let mut at = Addrs::zero(n);
        let mut next = superblock::LEN;
        for (k, s) in sizes.iter().enumerate() {
            at.header[k] = next;
            next += s.0;
        }
        for (k, s) in sizes.iter().enumerate() {
            at.dense_links[k] = next;
            next += s.1;
            at.dense_attrs[k] = next;
            next += s.2;
        }
        let mut heap_addrs = Vec::with_capacity(heap_sizes.len());
        for s in &heap_sizes {
            heap_addrs.push(next);
            next += s;
        }
        let region = next;
        let out = Out::new(open()?, region);
        // the data, behind the region
        let mut dheap = DataHeap::new(&out);
        for obj in &objs.list {
            if let meta::Obj::Var(v) = *obj {
                // a failed write names the variable (the error of the write says where)
                let addr = self.write_data(&out, &mut dheap, v).map_err(|e| match e {
                    Hdf5Error::Write { what, message } => Hdf5Error::Write {
                        what: format!("variable {}: writing data: {what}", self.ds.var(v).name),
                        message,
                    },
                    e => e,
                })?;
                at.data.insert(v, addr);
            }
        }
        dheap.finish()?;
        // pass 2: the metadata with every address known, once
        let mut image = vec![0u8; region as usize];
        let mut heap = MetaHeap::replay(heap_sizes, heap_addrs);
        let mut put =
            |addr: u64, bytes: &[u8], what: &dyn Fn() -> String| -> Result<(), Hdf5Error> {
                let a = addr as usize;
                match image.get_mut(a..a + bytes.len()) {
                    Some(dst) => {
                        dst.copy_from_slice(bytes);
                        Ok(())
                    }
                    None => Err(Hdf5Error::invalid(
                        what(),
                        "metadata past its measured region (writer bug)",
                    )),
                }
            };
        for (k, s) in sizes.iter().enumerate() {
            let what = || format!("object {k} of the file");
            let p = meta::parts(self, &objs, k, &at, &mut heap)?;
            let bytes = p.header.encode();
            let laid = (
                p.links.as_ref().map_or(0, |l| l.len),
                p.attrs.as_ref().map_or(0, |l| l.len),
            );
            if bytes.len() as u64 != s.0 || laid != (s.1, s.2) {
                return Err(Hdf5Error::invalid(
                    what(),
                    "metadata size changed between the two passes (writer bug)",
                ));
            }
            put(at.header[k], &bytes, &what)?;
            for d in [p.links, p.attrs].into_iter().flatten() {
                for (addr, b) in &d.blocks {
                    put(*addr, b, &what)?;
                }
            }
        }
        for (addr, b) in heap.images() {
            put(addr, &b, &|| "global heap".to_string())?;
        }
        let root = at.header.first().copied().unwrap_or(superblock::LEN);
        let sb = superblock::encode(root, out.end());
        put(0, &sb, &|| "superblock".to_string())?;
        out.write_at(0, &image)?;
        // no fsync, as netCDF-C (and our classic writer): the data is in the page cache and
        // the rename that publishes the file follows; a forced flush costs seconds
        out.finish()
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
        let any_unlim = var.dims.iter().any(|d| ds.dim(*d).unlimited);
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
        let heap_refs = !user::is_fixed_size(ds, var.ty);
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
        // ncgen: a big variable the CDL gives only the first values of would cost its whole
        // declared size in fill values if contiguous; chunked, the chunks past the given
        // values are left unwritten and read as fill (cost proportional to what is given)
        let partial_bytes = self
            .given_prefix(v)
            .and_then(|_| ds.num_elements(v))
            .map_or(0, |n| n.saturating_mul(type_size as u64));
        let layout = if said.is_none()
            && layout == Layout::Contiguous
            && partial_bytes > BIG_PARTIAL_BYTES
        {
            Layout::Chunked
        } else {
            layout
        };
        let chunk = if layout == Layout::Chunked {
            match &st.chunk_sizes {
                Some(c) if c.len() == rank => c.iter().map(|&x| x.max(1)).collect(),
                _ => nc_dataset::chunking::default_var_chunk_sizes(ds, v),
            }
        } else {
            Vec::new()
        };
        if layout == Layout::Chunked {
            check_chunk_shape(ds, v, &chunk, user::disk_size(ds, var.ty) as u64)?;
        }
        let sparse = self.sparse_source(v, layout, &chunk);
        // netCDF-C: a fill value on every variable, or (no fill) fill time "never" and no
        // value; file-level "no fill" (nccopy) applies to fixed-size atomic types only:
        // strings, vlens and user types keep their fill value
        let file_nofill = !self.opts.fill
            && matches!(var.ty, NcType::Atomic(a) if a != AtomicType::String)
            && sparse == Sparse::No;
        let no_fill = st.no_fill == Some(true) || file_nofill;
        // netCDF-C refuses filters on variable-length data
        let chain = if layout == Layout::Chunked && !heap_refs {
            let ordered = netcdf_filter_order(&st.filters);
            let ctx = FilterContext::new(type_size, &chunk);
            let mut chain = self.registry.working_chain(&ordered, &ctx);
            self.hdf5_only_params(v, &datatype, &chunk, no_fill, &mut chain)?;
            chain
        } else {
            Vec::new()
        };
        Ok(VarPlan {
            layout,
            chunk,
            chain,
            big,
            datatype,
            sparse,
            no_fill,
        })
    }

    /// The parameters libhdf5's `set_local` would store for nbit (5) and scaleoffset (6) in
    /// `chain`, from the variable's HDF5 type, its chunk and its fill value: the user's
    /// parameters (`_Filter = "6,0,2"`, or the 20 of a copied input) give scaleoffset's
    /// scale type and factor only; nbit takes none.
    fn hdf5_only_params(
        &self,
        v: VarId,
        datatype: &Datatype,
        chunk: &[u64],
        no_fill: bool,
        chain: &mut [FilterSpec],
    ) -> Result<(), Hdf5Error> {
        let ds = self.ds;
        let var = ds.var(v);
        let elems = chunk.iter().product::<u64>();
        let why = |e: String, id: u32| {
            Hdf5Error::invalid(
                format!("variable {}", ds.var_path(v)),
                format!("filter {id} ({}): {e}", crate::filter_name(id)),
            )
        };
        for f in chain.iter_mut() {
            match f.id {
                crate::filters::NBIT => {
                    f.params = crate::filters::nbit::params_for(datatype, elems)
                        .map_err(|e| why(e, f.id))?;
                }
                crate::filters::SCALEOFFSET => {
                    // libhdf5's fill value, in its memory's (little-endian) order; "no fill"
                    // leaves libhdf5's default, zero
                    let fill = if no_fill {
                        None
                    } else {
                        ds.stored_fill(v)
                            .and_then(|x| user::value_bytes(ds, var.ty, &x, false))
                    };
                    f.params = crate::filters::scaleoffset::params_for(
                        datatype,
                        elems,
                        &f.params,
                        fill.as_deref(),
                    )
                    .map_err(|e| why(e, f.id))?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A copy whose source never stored part of variable `v` (see
    /// `DataSource::unwritten` and `DataSource::stored_regions`): those chunks stay
    /// unwritten in the output and read as the fill value, so the variable keeps its fill
    /// (not the "no fill" of the rest of an nccopy output, under which unwritten chunks would
    /// read as garbage). When the source lists what it stores, only the output chunks that
    /// overlap it are visited (cost follows what is stored, not the declared shape), and a
    /// contiguous variable the source stores nothing of is left unallocated; otherwise chunks
    /// are asked about one by one, up to a million of them. Never for a variable that is
    /// "no fill" itself, or for strings and user types.
    fn sparse_source(&self, v: VarId, layout: Layout, chunk: &[u64]) -> Sparse {
        let ds = self.ds;
        let var = ds.var(v);
        if var.storage.no_fill == Some(true)
            || !matches!(var.ty, NcType::Atomic(a) if a != AtomicType::String)
            || !self.gets_data(v)
        {
            return Sparse::No;
        }
        let shape = ds.shape(v);
        if shape.is_empty() || shape.contains(&0) {
            return Sparse::No;
        }
        let chunked = layout == Layout::Chunked;
        if chunked && chunk.len() != shape.len() {
            return Sparse::No;
        }
        if !chunked && layout != Layout::Contiguous {
            return Sparse::No;
        }
        if !chunked {
            // contiguous: written whole (fill included, "no fill" as netCDF-C's nccopy makes
            // it) unless the source stores none of it and writing its fill would cost more
            // than BIG_PARTIAL_BYTES; then it stays unallocated and keeps its fill value
            let bytes = ds
                .num_elements(v)
                .map_or(u64::MAX, |n| n.saturating_mul(ds.type_size(var.ty) as u64));
            let zeros = vec![0u64; shape.len()];
            return if bytes > BIG_PARTIAL_BYTES
                && self.src.unwritten(ds, v, Slab::new(&zeros, &shape))
            {
                Sparse::Only(Vec::new())
            } else {
                Sparse::No
            };
        }
        let grid = data::chunk_grid(&shape, chunk);
        let n = grid.iter().try_fold(1u64, |a, &g| a.checked_mul(g));
        if let Some(regions) = self.src.stored_regions(ds, v) {
            if let Some(cells) =
                nc_dataset::cells_touched(&regions, chunk, &grid, n.map_or(0, |n| n.min(MAX_VISIT)))
            {
                // every output chunk holds stored data: written as any copy, "no fill"
                return if n == Some(cells.len() as u64) {
                    Sparse::No
                } else {
                    Sparse::Only(cells)
                };
            }
        }
        // a source that stores nothing anywhere says so at once
        let zeros = vec![0u64; shape.len()];
        if self.src.unwritten(ds, v, Slab::new(&zeros, &shape)) {
            return Sparse::Only(Vec::new());
        }
        if n.is_none_or(|n| n > 1 << 20) {
            return Sparse::No;
        }
        let any = (0..n.unwrap_or(0)).any(|k| {
            let (_, start, count) = data::chunk_region(k, &grid, chunk, &shape);
            self.src.unwritten(ds, v, Slab::new(&start, &count))
        });
        if any {
            Sparse::Ask
        } else {
            Sparse::No
        }
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

    /// The dataspace of variable `v`: like netCDF-C, a variable that gets no data keeps its
    /// unlimited dimensions at 0.
    fn stored_shape(&self, v: VarId) -> Vec<u64> {
        let gets_data = self.gets_data(v);
        self.ds
            .var(v)
            .dims
            .iter()
            .map(|d| {
                let dim = self.ds.dim(*d);
                if dim.unlimited && !gets_data {
                    0
                } else {
                    dim.len
                }
            })
            .collect()
    }

    /// The fill value's stored bytes (in the variable's byte order; strings and vlens as
    /// heap references into `heap`), `None` for the library default.
    fn fill_bytes(
        &self,
        v: VarId,
        plan: &VarPlan,
        heap: &mut dyn HeapSink,
    ) -> Result<Option<Vec<u8>>, Hdf5Error> {
        let ds = self.ds;
        let var = ds.var(v);
        let es = plan.datatype.size() as usize;
        if !user::is_fixed_size(ds, var.ty) {
            // netCDF-C's fill for strings is `_FillValue` or "", stored in the global heap
            let fill = ds.fill_value(v).or_else(|| {
                (var.ty == NcType::Atomic(AtomicType::String))
                    .then(|| Values::String(vec![Some(NcString::default())]))
            });
            return Ok(Some(match fill {
                Some(f) => user::heap_value_bytes(ds, var.ty, &f, heap)?,
                None => vec![0; es],
            }));
        }
        // `_FillValue`, else the input's stored fill (a pure Zarr `fill_value`), else the default
        let fill = ds
            .stored_fill(v)
            .and_then(|f| user::value_bytes(ds, var.ty, &f, plan.big));
        Ok(match fill {
            Some(f) => Some(f),
            // netCDF-C's fill for user types without `_FillValue`: all zero bytes
            None if matches!(var.ty, NcType::User(_)) => Some(vec![0; es]),
            None => None,
        })
    }

    /// The bytes of a compact variable: its values, or its fill value throughout.
    fn compact_bytes(
        &self,
        v: VarId,
        plan: &VarPlan,
        fill: Option<&[u8]>,
        heap: &mut dyn HeapSink,
    ) -> Result<Vec<u8>, Hdf5Error> {
        let ds = self.ds;
        let ty = ds.var(v).ty;
        let n: u64 = self.stored_shape(v).iter().product();
        let es = plan.datatype.size() as usize;
        match self.compact.get(&v) {
            Some(vals) if user::is_fixed_size(ds, ty) => user::value_bytes(ds, ty, vals, plan.big)
                .ok_or_else(|| {
                    Hdf5Error::invalid(
                        format!("variable {}", ds.var(v).name),
                        "values do not match the type",
                    )
                }),
            Some(vals) => user::heap_value_bytes(ds, ty, vals, heap),
            None => {
                let one = fill.map_or_else(|| vec![0; es], <[u8]>::to_vec);
                Ok(one.repeat(n as usize))
            }
        }
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

/// HDF5's limits on a chunk (File Format Specification, layout message: a chunk's byte size
/// is a 32-bit value; the library refuses a chunk longer than a fixed-size dimension), checked
/// before anything is written, as netCDF-C does ("NetCDF: Bad chunk sizes").
/// Refuses an attribute with one of netCDF-C's reserved names (`CLASS`, `NAME`, ...): every
/// reader hides them, so what it holds would be lost silently (netCDF-C refuses them too).
fn check_reserved_names(ds: &Dataset) -> Result<(), Hdf5Error> {
    let reserved = |atts: &[nc_dataset::Attribute]| {
        atts.iter()
            .find(|a| crate::meta::RESERVED_ATTS.contains(&a.name.as_str()))
            .map(|a| a.name.clone())
    };
    // the owner is named only for the error: nothing is formatted on the way
    let refuse = |owner: String, name: String| {
        Hdf5Error::invalid(
            owner,
            format!(
                "attribute \"{name}\": the name is reserved by netCDF-4 (dimension scales and \
                 netCDF's own bookkeeping), and readers do not show it; rename the attribute \
                 (netCDF-C refuses it too: \"String match to name in use\")"
            ),
        )
    };
    for (g, grp) in ds.groups.iter().enumerate() {
        if let Some(name) = reserved(&grp.atts) {
            let path = ds.group_path(nc_dataset::GroupId(g));
            return Err(refuse(format!("group {path}"), name));
        }
    }
    for v in ds.all_vars() {
        if let Some(name) = reserved(&ds.var(v).atts) {
            return Err(refuse(format!("variable {}", ds.var_path(v)), name));
        }
    }
    Ok(())
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
