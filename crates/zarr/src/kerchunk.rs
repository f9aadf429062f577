//! Virtual Zarr: a kerchunk reference file (version 1) for a dataset whose reader knows where
//! its bytes are ([`nc_dataset::DataSource::placement`]: classic and netCDF-4/HDF5 files), so
//! that fsspec's `ReferenceFileSystem` (and xarray or zarr-python over it) reads the original
//! file's values in place, without a copy.
//!
//! The file is one JSON object, `{"version": 1, "refs": {KEY: VALUE, ...}}`: the Zarr v2
//! metadata objects (`.zgroup`, `.zattrs`, `.zarray`) as JSON text, and per chunk either
//! `[URL, OFFSET, LENGTH]` (a byte range of the original file) or `"base64:..."` (the chunk's
//! bytes inline). Spec: kerchunk "References specification" (version 1); Zarr v2 storage
//! specification; numcodecs codec ids.
//!
//! Choices:
//! - The metadata is what the pure Zarr v2 writer writes (attributes typed alike, through
//!   [`crate::write::attrs_object`]), plus `_ARRAY_DIMENSIONS` on every variable, groups as
//!   nested Zarr groups. Chunks, byte order and filters are the stored ones: `dtype` is the
//!   stored element (`>f4` for a classic float), the HDF5 filters become numcodecs codecs in
//!   `filters` (application order, `compressor` null).
//! - A filter is referenced only when a numcodecs codec decodes its chunks as HDF5 stored them
//!   (deflate, shuffle, fletcher32, bzip2, zstd, blosc); any other (szip, nbit, scaleoffset,
//!   HDF5's lz4 framing, bitshuffle, unknown plugins) is refused, naming the variable. So is a
//!   shuffle that would see a buffer that is not whole elements (after fletcher32 on 8-byte
//!   elements: numcodecs refuses it).
//! - `fill_value`: a variable with chunks never written gets the stored fill (what those
//!   chunks read as); otherwise its `_FillValue`, or null when it has none (xarray then masks
//!   what it masks reading the file itself).
//! - Inline (base64) chunks: strings (variable-length data lives in the HDF5 global heap: read,
//!   encoded as numcodecs `vlen-utf8`, `dtype` `|O`), chunks stored with some filters skipped
//!   or lying partly beyond an extent that grew (read and re-encoded with the variable's
//!   filters), and variables with no byte range of their own (compact, virtual, multi-segment
//!   external storage) up to [`ReferenceOptions::inline_limit`] bytes; larger ones are refused.
//! - User types: enums as their base integers, opaque as `|Vn`, compounds of scalar fields
//!   with no padding as NumPy structured dtypes (what zarr-python 3 reads); other compounds
//!   and vlens are refused. Attributes JSON cannot hold (user types other than enums, text
//!   that is not UTF-8) are left out with a warning.

mod joined;
mod parquet;
mod parquet_refs;

pub use joined::{emit_joined_references, JoinedInputs};

use parquet_refs::ParquetSink;
pub use parquet_refs::{ParquetLayout, MAX_RECORD_SIZE};

use nc_dataset::Slab;
use std::io::Write;
use std::sync::Arc;

use nc_dataset::{
    AtomicType, Attribute, ChunkBytes, ChunkMap, DataSource, Dataset, GroupId, NcType, Placement,
    StoredChunks, StoredType, UserTypeKind, Values, VarId, ROOT,
};
use nc_filters::codec_json::{hdf5_to_codec, ZarrCodec};
use nc_filters::{FilterContext, Pipeline, Registry};
use serde_json::{json, Value};

use crate::convert;
use crate::dtype::{numeric_dtype, Dtype, Endian, Kind};
use crate::error::ZarrError;
use crate::json::{float_value, to_text};
use crate::write::{attrs_object, non_utf8_text, place, MetaStyle, NczarrLayout};

/// Largest chunk (decoded bytes) re-encoded inline.
const MAX_REENCODED: u64 = 1 << 30;

/// Largest number of strings in one inline `vlen-utf8` chunk.
const MAX_STRINGS_PER_CHUNK: u64 = 1 << 20;

/// Options of [`write_references`].
#[derive(Debug, Clone)]
pub struct ReferenceOptions {
    /// The URL written into every reference to the dataset's own file (ncdump-rs: the input's
    /// absolute path, or its URL as given). Bytes in another file (an HDF5 external link's
    /// target, external raw storage) are referenced by that file's absolute path.
    pub url: String,
    /// Only these variables (a name matches in every group; a path such as `/g/v` one
    /// variable); empty: all.
    pub vars: Vec<String>,
    /// Largest size, in bytes, of a variable whose values are inlined because its bytes have no
    /// range of their own (compact, virtual, multi-segment external storage).
    pub inline_limit: u64,
    /// The filter registry that re-encodes chunks that cannot be referenced as stored; `None`:
    /// built-in codecs plus `HDF5_PLUGIN_PATH` plugins.
    pub registry: Option<Arc<Registry>>,
}

impl Default for ReferenceOptions {
    fn default() -> Self {
        ReferenceOptions {
            url: String::new(),
            vars: Vec::new(),
            inline_limit: 1 << 20,
            registry: None,
        }
    }
}

/// How a variable's chunks are written.
enum Content {
    /// Byte ranges of a file (and chunks re-encoded inline), as the source's placement says.
    Refs {
        /// The URL of the file holding the bytes.
        url: String,
        /// The stored element, for chunks re-encoded inline.
        dtype: Option<Dtype>,
        /// Element size.
        es: usize,
        /// The numcodecs codecs (application order) with their HDF5 filters.
        codecs: Vec<ZarrCodec>,
        /// The stored fill element.
        fill: Vec<u8>,
        /// Where the chunks are (the placement planned).
        chunks: StoredChunks,
    },
    /// Values read through the source, inline, little-endian, unfiltered.
    Inline { dtype: Dtype },
    /// Strings read through the source, inline as `vlen-utf8`.
    Strings,
}

/// One variable's plan: keys, metadata, and how its chunks are written.
struct VarPlan {
    var: VarId,
    /// Netcdf path, for messages.
    path: String,
    /// Key prefix (`g/v`).
    key: String,
    zarray: Value,
    zattrs: Value,
    chunk: Vec<u64>,
    content: Content,
}

/// What the reference file holds, in order.
enum Entry {
    Group { key: String, zattrs: Option<Value> },
    Var(Box<VarPlan>),
}

/// One chunk's reference, as a [`ReferenceSink`] receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkRef<'a> {
    /// `len` bytes at `offset` of the file at `url`.
    Range {
        /// The file (a path or URL, as fsspec opens it).
        url: &'a str,
        /// First byte.
        offset: u64,
        /// Length in bytes.
        len: u64,
    },
    /// The chunk's (encoded) bytes themselves.
    Inline(&'a [u8]),
}

/// Where references go: kerchunk JSON ([`write_references`]) or fsspec's Parquet layout
/// ([`write_references_parquet`]). The producer calls, in order: [`ReferenceSink::metadata`]
/// for every metadata object (a group's `.zgroup` and `.zattrs`, an array's `.zarray` and
/// `.zattrs`, before its chunks), for each array with chunks [`ReferenceSink::begin_array`],
/// its chunks in C order of the chunk grid (chunks never written are left out), and
/// [`ReferenceSink::end_array`]; then [`ReferenceSink::finish`] once. A sink holds at most one
/// array's pending references (the Parquet sink: one record file), so a writer of many inputs
/// can stream references into it.
pub trait ReferenceSink {
    /// A metadata object at `key` (`.zgroup`, `g/.zattrs`, `g/v/.zarray`), as JSON text.
    ///
    /// # Errors
    /// Output errors.
    fn metadata(&mut self, key: &str, text: &str) -> Result<(), ZarrError>;
    /// The chunks of the array at `prefix` (`g/v`) follow; `grid` is its number of chunks
    /// along each dimension (empty for a scalar, which has the one chunk `prefix/0`).
    ///
    /// # Errors
    /// Output errors.
    fn begin_array(&mut self, prefix: &str, grid: &[u64]) -> Result<(), ZarrError>;
    /// The chunk at grid index `idx` (C order: each after the one before it).
    ///
    /// # Errors
    /// Output errors; a chunk out of order.
    fn chunk(&mut self, idx: &[u64], r: ChunkRef<'_>) -> Result<(), ZarrError>;
    /// The array's chunks are all given.
    ///
    /// # Errors
    /// Output errors.
    fn end_array(&mut self) -> Result<(), ZarrError>;
    /// Everything is given: write what is left (the consolidated metadata).
    ///
    /// # Errors
    /// Output errors.
    fn finish(&mut self) -> Result<(), ZarrError>;
}

/// Write a kerchunk reference file (version 1 JSON) for `ds`, whose bytes `src` locates, to
/// `out`. Every variable is planned before anything is written, so a variable that cannot be
/// referenced is refused with nothing written. Returns the warnings (attributes left out).
///
/// # Errors
/// A variable that cannot be referenced (filters without a numcodecs codec, a type Zarr
/// cannot hold, a source that cannot say where its bytes are), a name given in
/// [`ReferenceOptions::vars`] that is not a variable, source read errors, output errors.
pub fn write_references(
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &ReferenceOptions,
    out: &mut dyn Write,
) -> Result<Vec<String>, ZarrError> {
    let mut sink = RefWriter::new(out);
    emit_references(ds, src, opts, &mut sink)
}

/// Write references for `ds` in fsspec's Parquet layout (what
/// `fsspec.implementations.reference.LazyReferenceMapper` reads) into `store`, which should
/// be empty: `.zmetadata` and per array `PREFIX/refs.K.parq`. Planned as
/// [`write_references`] plans, so a refusal writes nothing.
///
/// # Errors
/// As [`write_references`]; store errors.
pub fn write_references_parquet(
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &ReferenceOptions,
    layout: &ParquetLayout,
    store: &dyn crate::Store,
) -> Result<Vec<String>, ZarrError> {
    let mut sink = ParquetSink::new(store, layout)?;
    emit_references(ds, src, opts, &mut sink)
}

/// Write one kerchunk reference file (version 1 JSON) for the inputs of a join as one
/// dataset `ds` (the joined dataset, its values read through `src`): see
/// [`emit_joined_references`].
///
/// # Errors
/// As [`emit_joined_references`].
pub fn write_joined_references(
    ds: &Dataset,
    src: &dyn DataSource,
    inputs: &dyn JoinedInputs,
    opts: &ReferenceOptions,
    out: &mut dyn Write,
) -> Result<Vec<String>, ZarrError> {
    let mut sink = RefWriter::new(out);
    emit_joined_references(ds, src, inputs, opts, &mut sink)
}

/// The references of a join as one dataset in fsspec's Parquet layout, into `store`: see
/// [`emit_joined_references`] and [`write_references_parquet`].
///
/// # Errors
/// As [`emit_joined_references`]; store errors.
pub fn write_joined_references_parquet(
    ds: &Dataset,
    src: &dyn DataSource,
    inputs: &dyn JoinedInputs,
    opts: &ReferenceOptions,
    layout: &ParquetLayout,
    store: &dyn crate::Store,
) -> Result<Vec<String>, ZarrError> {
    let mut sink = ParquetSink::new(store, layout)?;
    emit_joined_references(ds, src, inputs, opts, &mut sink)
}

/// Plan every variable of `ds` (refusing what cannot be referenced before anything is given
/// to `sink`), then give `sink` the metadata and chunk references in order. Returns the
/// warnings (attributes left out).
///
/// # Errors
/// As [`write_references`].
pub fn emit_references(
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &ReferenceOptions,
    sink: &mut dyn ReferenceSink,
) -> Result<Vec<String>, ZarrError> {
    let selected = select(ds, &opts.vars)?;
    let mut warnings = Vec::new();
    let mut entries = Vec::new();
    plan_group(
        ds,
        src,
        opts,
        ROOT,
        "",
        &selected,
        &mut entries,
        &mut warnings,
    )?;
    let registry = std::sync::OnceLock::new();
    emit_entries(&entries, sink, |p, sink| {
        write_chunks(ds, src, opts, p, &registry, sink)
    })?;
    sink.finish()?;
    Ok(warnings)
}

/// Give the sink each planned group's and variable's metadata in order, and after each
/// variable's its chunks, by `chunks` (one file's, or a join's).
fn emit_entries(
    entries: &[Entry],
    sink: &mut dyn ReferenceSink,
    mut chunks: impl FnMut(&VarPlan, &mut dyn ReferenceSink) -> Result<(), ZarrError>,
) -> Result<(), ZarrError> {
    let meta =
        |sink: &mut dyn ReferenceSink, key: String, v: &Value| sink.metadata(&key, &to_text(v));
    for e in entries {
        match e {
            Entry::Group { key, zattrs } => {
                meta(sink, join(key, ".zgroup"), &json!({"zarr_format": 2}))?;
                if let Some(z) = zattrs {
                    meta(sink, join(key, ".zattrs"), z)?;
                }
            }
            Entry::Var(p) => {
                meta(sink, join(&p.key, ".zarray"), &p.zarray)?;
                meta(sink, join(&p.key, ".zattrs"), &p.zattrs)?;
                chunks(p, sink)?;
            }
        }
    }
    Ok(())
}

/// The variables named by `names` (all when empty).
fn select(ds: &Dataset, names: &[String]) -> Result<Option<Vec<bool>>, ZarrError> {
    if names.is_empty() {
        return Ok(None);
    }
    let mut keep = vec![false; ds.vars.len()];
    for n in names {
        let path = if n.starts_with('/') {
            n.clone()
        } else {
            format!("/{n}")
        };
        let mut found = false;
        for v in ds.all_vars() {
            let hit = if n.trim_start_matches('/').contains('/') {
                ds.var_path(v) == path
            } else {
                ds.var(v).name == n.trim_start_matches('/')
            };
            if hit {
                keep[v.0] = true;
                found = true;
            }
        }
        if !found {
            return Err(ZarrError::NoSuchVariable { name: n.clone() });
        }
    }
    Ok(Some(keep))
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

/// A group or variable name as a key segment: a safe key, not a Zarr metadata name.
fn check_name(name: &str, what: impl Fn() -> String) -> Result<(), ZarrError> {
    let why = match crate::store::check_key(name) {
        Err(nc_store::StoreError::BadKey { reason, .. }) => Some(reason.to_string()),
        _ if name.contains('/') => Some("a '/' in it".to_string()),
        _ if matches!(name, ".zarray" | ".zattrs" | ".zgroup" | ".zmetadata") => {
            Some("it is a Zarr metadata key".to_string())
        }
        _ => None,
    };
    match why {
        Some(why) => Err(ZarrError::NotRepresentable {
            what: what(),
            why: format!("its name {name:?} is no Zarr key ({why}); leave it out with -v"),
        }),
        None => Ok(()),
    }
}

#[allow(clippy::too_many_arguments)]
fn plan_group(
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &ReferenceOptions,
    g: GroupId,
    key: &str,
    selected: &Option<Vec<bool>>,
    entries: &mut Vec<Entry>,
    warnings: &mut Vec<String>,
) -> Result<(), ZarrError> {
    let grp = ds.group(g);
    let owner = format!("group {}", ds.group_path(g));
    let atts = usable_atts(ds, &grp.atts, &owner, warnings);
    let zattrs = attrs_object(style(), &owner, &atts, Vec::new(), false)?;
    entries.push(Entry::Group {
        key: key.to_string(),
        zattrs,
    });
    for &v in &grp.vars {
        if selected.as_ref().is_some_and(|s| !s[v.0]) {
            continue;
        }
        let var = ds.var(v);
        check_name(&var.name, || format!("variable \"{}\"", ds.var_path(v)))?;
        let plan = plan_var(ds, src, opts, v, &join(key, &var.name), warnings)?;
        entries.push(Entry::Var(Box::new(plan)));
    }
    for &c in &grp.groups {
        let name = &ds.group(c).name;
        check_name(name, || format!("group {}", ds.group_path(c)))?;
        plan_group(
            ds,
            src,
            opts,
            c,
            &join(key, name),
            selected,
            entries,
            warnings,
        )?;
    }
    Ok(())
}

/// Pure Zarr v2 metadata, as the Zarr writer spells it.
fn style() -> MetaStyle {
    MetaStyle {
        pure: true,
        layout: NczarrLayout::default(),
    }
}

/// The attributes JSON can hold: enum-typed ones as their base integers; others of user
/// types, and text that is not UTF-8, are left out with a warning.
fn usable_atts(
    ds: &Dataset,
    atts: &[Attribute],
    owner: &str,
    warnings: &mut Vec<String>,
) -> Vec<Attribute> {
    let mut out = Vec::with_capacity(atts.len());
    for a in atts {
        let ty = match a.ty {
            NcType::Atomic(t) => t,
            NcType::User(t) => match &ds.user_type(t).kind {
                UserTypeKind::Enum { base, .. } => *base,
                _ => {
                    warnings.push(format!(
                        "attribute \"{}\" of {owner} left out: its type \"{}\" is not an \
                         atomic or enum type, which a JSON attribute cannot hold",
                        a.name,
                        ds.user_type(t).name
                    ));
                    continue;
                }
            },
        };
        if let Some(bad) = non_utf8_text(&a.values) {
            warnings.push(format!(
                "attribute \"{}\" of {owner} left out: its text {bad:?} is not UTF-8, which \
                 JSON must be",
                a.name
            ));
            continue;
        }
        out.push(Attribute {
            name: a.name.clone(),
            ty: NcType::Atomic(ty),
            values: a.values.clone(),
        });
    }
    out
}

/// The cure of a filter numcodecs cannot undo as stored.
fn refilter(ds: &Dataset, v: VarId) -> String {
    format!(
        "rewrite it with filters numcodecs decodes (e.g. nccopy-rs -F '{},zstd,3' in.nc \
         out.nc, then reference out.nc), or {LEAVE_OUT}",
        ds.var_path(v).trim_start_matches('/')
    )
}

/// The cure of a type or layout references cannot describe.
const LEAVE_OUT: &str = "leave it out by naming the other variables with -v";

fn plan_var(
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &ReferenceOptions,
    v: VarId,
    key: &str,
    warnings: &mut Vec<String>,
) -> Result<VarPlan, ZarrError> {
    let var = ds.var(v);
    let path = ds.var_path(v);
    let shape = ds.shape(v);
    let rank = shape.len();
    let whole: Vec<u64> = shape.iter().map(|&n| n.max(1)).collect();
    let refuse = |why: String| ZarrError::NotReferenceable {
        var: path.clone(),
        why,
    };
    let dims: Vec<&str> = var.dims.iter().map(|d| ds.dim(*d).name.as_str()).collect();
    let atts = usable_atts(ds, &var.atts, &format!("variable \"{path}\""), warnings);
    let zattrs = attrs_object(
        style(),
        &format!("variable \"{path}\""),
        &atts,
        vec![("_ARRAY_DIMENSIONS".to_string(), json!(dims))],
        true,
    )?
    .unwrap_or_else(|| json!({}));
    // a `_FillValue` of another type than the variable's is no fill value of it (netCDF-C's
    // default is): `fill_value` stays null and the attribute goes as written into `.zattrs`
    let att_fill = var
        .att("_FillValue")
        .filter(|a| !a.values.is_empty() && a.ty == var.ty);
    let zarray = |dtype: Value, chunk: &[u64], fill: Value, filters: Value| {
        json!({
            "zarr_format": 2,
            "shape": shape,
            "chunks": chunk,
            "dtype": dtype,
            "fill_value": fill,
            "order": "C",
            "compressor": null,
            "filters": filters,
            "dimension_separator": ".",
        })
    };

    // strings: the stored bytes are heap references; the values go inline
    if var.ty == NcType::Atomic(AtomicType::String) {
        // our own chunking of the inline copy: the stored one clamped to the shape (no edge
        // padding), halved along its longest dimension while over MAX_STRINGS_PER_CHUNK
        let mut chunk = match &var.storage.chunk_sizes {
            Some(c) if c.len() == rank && !c.contains(&0) => {
                c.iter().zip(&whole).map(|(&c, &n)| c.min(n)).collect()
            }
            _ => whole,
        };
        while chunk
            .iter()
            .try_fold(1u64, |a, &b| a.checked_mul(b))
            .is_none_or(|n| n > MAX_STRINGS_PER_CHUNK)
        {
            if let Some(c) = chunk.iter_mut().max() {
                *c = c.div_ceil(2);
            }
        }
        let fill = match att_fill.map(|a| &a.values) {
            Some(Values::String(s)) => match s.first().and_then(Option::as_ref) {
                Some(x) => x.as_str().map_or(Value::Null, |t| Value::String(t.into())),
                None => Value::Null,
            },
            _ => Value::Null,
        };
        return Ok(VarPlan {
            var: v,
            path: path.clone(),
            key: key.to_string(),
            zarray: zarray(json!("|O"), &chunk, fill, json!([{"id": "vlen-utf8"}])),
            zattrs,
            chunk,
            content: Content::Strings,
        });
    }

    let placement = match src.placement(ds, v) {
        None => {
            return Err(refuse(
                "its reader cannot say where its bytes are (only classic and netCDF-4/HDF5 \
                 files can be referenced; a Zarr store is read by Zarr clients directly)"
                    .into(),
            ))
        }
        Some(Err(e)) => {
            return Err(ZarrError::Source {
                var: path.clone(),
                msg: e.to_string(),
            })
        }
        Some(Ok(p)) => p,
    };
    let mut map = match placement {
        Placement::Chunks(m) => m,
        Placement::Elsewhere { why } => {
            // small atomic variables go inline; the rest are refused
            let Some(t) = var.ty.as_atomic() else {
                return Err(refuse(format!(
                    "its values are stored as {why}, and only atomic variables are inlined; \
                     {LEAVE_OUT}"
                )));
            };
            let bytes = ds
                .num_elements(v)
                .and_then(|n| n.checked_mul(t.size() as u64))
                .unwrap_or(u64::MAX);
            if bytes > opts.inline_limit {
                return Err(refuse(format!(
                    "its values are stored as {why}, which has no byte range to reference, and \
                     its {bytes} bytes are more than the {} that are inlined; a copy by \
                     nccopy-rs stores it chunked, which can be referenced, or {LEAVE_OUT}",
                    opts.inline_limit,
                )));
            }
            let dtype = atomic_dtype(t, false);
            let fill = match att_fill {
                Some(a) => fill_from_values(&a.values, &dtype)?,
                None => Value::Null,
            };
            let text = if t == AtomicType::Char {
                "|S1".to_string()
            } else {
                numeric_dtype(t, false)
            };
            return Ok(VarPlan {
                var: v,
                path: path.clone(),
                key: key.to_string(),
                zarray: zarray(json!(text), &whole, fill, Value::Null),
                zattrs,
                chunk: whole,
                content: Content::Inline { dtype },
            });
        }
    };
    if map.chunk.len() != rank || map.chunk.contains(&0) {
        return Err(refuse(format!(
            "its chunk shape {:?} does not fit its rank {rank}",
            map.chunk
        )));
    }
    // sinks take chunks in C order of the grid (the Parquet layout's rows)
    if let StoredChunks::List(l) = &mut map.chunks {
        if !l.is_sorted_by(|a, b| a.index <= b.index) {
            l.sort_by(|a, b| a.index.cmp(&b.index));
        }
    }
    let dtype_json = stored_dtype(ds, v, &map.elem).map_err(&refuse)?;
    let decoded = match &map.chunks {
        StoredChunks::List(l) => l.iter().find(|c| c.bytes == ChunkBytes::Decoded),
        StoredChunks::Strided { .. } => None,
    };
    if let (Some(c), None) = (decoded, atomic_stored(&map.elem)) {
        return Err(refuse(format!(
            "its chunk {:?} is stored unlike the others (some filters skipped, or partly past \
             the stored extent), and chunks of user types are not re-encoded; {LEAVE_OUT}",
            c.index
        )));
    }
    let chunk_bytes = map
        .chunk
        .iter()
        .try_fold(map.elem.size() as u64, |a, &b| a.checked_mul(b))
        .filter(|&b| b <= MAX_REENCODED);
    if let (Some(c), None) = (decoded, chunk_bytes) {
        return Err(refuse(format!(
            "its chunk {:?} is stored unlike the others and must be re-encoded, but its chunks \
             of {:?} elements are larger than the {MAX_REENCODED} bytes re-encoded; {LEAVE_OUT}",
            c.index, map.chunk
        )));
    }
    let es = map.elem.size();
    let codecs = referenced_codecs(ds, v, &map).map_err(&refuse)?;
    let filters = if codecs.is_empty() {
        Value::Null
    } else {
        Value::Array(codecs.iter().map(|c| c.json.clone()).collect())
    };
    let grid: u64 = shape
        .iter()
        .zip(&map.chunk)
        .map(|(&n, &c)| n.div_ceil(c))
        .product();
    let stored_fill = map
        .fill
        .clone()
        .filter(|f| f.len() == es)
        .unwrap_or_else(|| vec![0u8; es]);
    let dtype = atomic_stored(&map.elem);
    // chunks never written read as the stored fill: that is the Zarr fill then
    let fill = if map.chunks.len() < grid && !shape.contains(&0) {
        fill_from_bytes(&map.elem, &stored_fill)
    } else {
        match (att_fill, &dtype) {
            (Some(a), Some(d)) => fill_from_values(&a.values, d)?,
            _ => Value::Null,
        }
    };
    let url = match &map.file {
        None => opts.url.clone(),
        Some(f) => {
            let abs = std::fs::canonicalize(f)
                .map_err(|e| ZarrError::from(nc_store::StoreError::io(f.display(), e)))?;
            abs.to_str()
                .ok_or_else(|| {
                    refuse(format!(
                        "its bytes are in {}, whose path is not UTF-8, which JSON must be",
                        abs.display()
                    ))
                })?
                .to_string()
        }
    };
    Ok(VarPlan {
        var: v,
        path: path.clone(),
        key: key.to_string(),
        zarray: zarray(dtype_json, &map.chunk, fill, filters),
        zattrs,
        chunk: map.chunk,
        content: Content::Refs {
            url,
            dtype,
            es,
            codecs,
            fill: stored_fill,
            chunks: map.chunks,
        },
    })
}

/// The crate's dtype of an atomic type (little- or big-endian).
fn atomic_dtype(t: AtomicType, big: bool) -> Dtype {
    match t {
        AtomicType::Char => Dtype {
            kind: Kind::Char,
            endian: Endian::NotApplicable,
        },
        t => Dtype {
            kind: Kind::Num(t),
            endian: if t.size() == 1 {
                Endian::NotApplicable
            } else if big {
                Endian::Big
            } else {
                Endian::Little
            },
        },
    }
}

/// The crate's dtype of a stored atomic element (integers, floats, one-byte text); `None`
/// for the others.
fn atomic_stored(e: &StoredType) -> Option<Dtype> {
    Some(match *e {
        StoredType::Int {
            size,
            signed,
            big_endian,
        } => atomic_dtype(AtomicType::integer(size, signed)?, big_endian),
        StoredType::Float {
            size: 2,
            big_endian,
        } => Dtype {
            kind: Kind::Half,
            endian: if big_endian {
                Endian::Big
            } else {
                Endian::Little
            },
        },
        StoredType::Float { size, big_endian } => {
            let t = match size {
                4 => AtomicType::Float,
                8 => AtomicType::Double,
                _ => return None,
            };
            atomic_dtype(t, big_endian)
        }
        StoredType::Text { size: 1 } => atomic_dtype(AtomicType::Char, false),
        _ => return None,
    })
}

/// The NumPy typestr of a stored scalar element (`<f4`, `>i2`, `|S1`, `|V8`).
fn typestr(e: &StoredType) -> Option<String> {
    Some(match *e {
        StoredType::Int {
            size,
            signed,
            big_endian,
        } => {
            let order = match (size, big_endian) {
                (1, _) => '|',
                (_, true) => '>',
                (_, false) => '<',
            };
            format!("{order}{}{size}", if signed { 'i' } else { 'u' })
        }
        StoredType::Float { size, big_endian } => {
            format!("{}f{size}", if big_endian { '>' } else { '<' })
        }
        StoredType::Text { size } => format!("|S{size}"),
        StoredType::Opaque { size } => format!("|V{size}"),
        StoredType::Compound { .. } => return None,
    })
}

/// The Zarr `dtype` of a variable's stored element: a typestr, or for a compound a NumPy
/// structured dtype (list of `[name, typestr]`) when its fields are scalars packed without
/// gaps, which is what zarr-python 3 reads.
fn stored_dtype(ds: &Dataset, v: VarId, e: &StoredType) -> Result<Value, String> {
    let what_type = || match ds.var(v).ty {
        NcType::User(t) => format!("type \"{}\"", ds.user_type(t).name),
        NcType::Atomic(t) => format!("type {}", t.cdl_name()),
    };
    match e {
        StoredType::Compound { size, fields } => {
            let mut sorted: Vec<_> = fields.iter().collect();
            sorted.sort_by_key(|f| f.offset);
            let mut at = 0usize;
            let mut list = Vec::with_capacity(fields.len());
            for f in sorted {
                let t = typestr(&f.ty)
                    .filter(|_| f.dims.is_empty())
                    .ok_or_else(|| {
                        format!(
                            "its compound {} has field \"{}\" that is an array or a compound, and \
                         zarr-python reads structured dtypes of scalar fields only; {}",
                            what_type(),
                            f.name,
                            LEAVE_OUT
                        )
                    })?;
                if f.offset != at {
                    return Err(format!(
                        "its compound {} has {} padding bytes before field \"{}\", which a Zarr \
                         structured dtype cannot describe; {}",
                        what_type(),
                        f.offset.abs_diff(at),
                        f.name,
                        LEAVE_OUT
                    ));
                }
                at += f.ty.size();
                list.push(json!([f.name, t]));
            }
            if at != *size {
                return Err(format!(
                    "its compound {} has {} padding bytes after its last field, which a Zarr \
                     structured dtype cannot describe; {}",
                    what_type(),
                    size.abs_diff(at),
                    LEAVE_OUT
                ));
            }
            Ok(Value::Array(list))
        }
        e => typestr(e)
            .map(Value::String)
            .ok_or_else(|| format!("its {} has no Zarr dtype", what_type())),
    }
}

/// The numcodecs codecs of the stored filter chain, when each decodes HDF5's chunks as they
/// are; the reason otherwise.
fn referenced_codecs(ds: &Dataset, v: VarId, map: &ChunkMap) -> Result<Vec<ZarrCodec>, String> {
    let es = map.elem.size();
    let ctx = FilterContext::new(es, &map.chunk);
    // the size of the buffer each filter sees when encoding (None after a compressor)
    let mut size = map
        .chunk
        .iter()
        .try_fold(es as u64, |a, &b| a.checked_mul(b));
    let mut out = Vec::with_capacity(map.filters.len());
    for f in &map.filters {
        // named when Zarr knows it by a codec id (as a Zarr user would look it up)
        let name = nc_filters::known(f.id)
            .filter(|k| k.numcodecs.id().is_some())
            .map(|k| format!(" ({})", k.name))
            .unwrap_or_default();
        // numcodecs decodes the chunks of deflate (`zlib`), shuffle, fletcher32, bzip2 (`bz2`),
        // blosc and zstd as HDF5 stored them (the filter table says which)
        if !nc_filters::known::numcodecs_reads_stored(f.id) {
            let detail = match f.id {
                4 => "numcodecs has no szip codec",
                5 | 6 => "its packing is HDF5's own, with no numcodecs codec",
                32004 => "HDF5's lz4 framing is not numcodecs' lz4",
                32008 => "numcodecs has no bitshuffle codec",
                _ => "no numcodecs codec is known to decode its chunks as stored",
            };
            return Err(format!(
                "its filter {}{name} cannot be referenced: {detail}; {}",
                f.id,
                refilter(ds, v)
            ));
        }
        let json = hdf5_to_codec(f, &ctx).map_err(|e| format!("filter {}{name}: {e}", f.id))?;
        match f.id {
            2 => {
                let elem = json
                    .get("elementsize")
                    .and_then(Value::as_u64)
                    .unwrap_or(es as u64)
                    .max(1);
                if size.is_none_or(|s| s % elem != 0) {
                    return Err(format!(
                        "its shuffle filter runs on a buffer that is not whole {elem}-byte \
                         elements (after fletcher32 or a compressor), which numcodecs' shuffle \
                         refuses; {}",
                        refilter(ds, v)
                    ));
                }
            }
            3 => size = size.and_then(|s| s.checked_add(4)),
            _ => size = None,
        }
        out.push(ZarrCodec {
            json,
            spec: Some(f.clone()),
        });
    }
    Ok(out)
}

/// `fill_value` for a stored fill element.
fn fill_from_bytes(e: &StoredType, b: &[u8]) -> Value {
    let Some(d) = atomic_stored(e) else {
        return Value::String(crate::v3write::base64(b));
    };
    if d.kind == Kind::Char {
        return Value::String(crate::v3write::base64(b));
    }
    number_value(convert::decode(b, &d))
}

/// The first of `v` as a JSON number (`null` for an integer beyond `i64`, or none).
fn number_value(v: Values) -> Value {
    match v {
        v @ (Values::Float(_) | Values::Double(_)) => float_value(v.get_f64(0).unwrap_or(0.0)),
        Values::UInt64(x) => x.first().map_or(Value::Null, |&n| Value::from(n)),
        v => v
            .get_i128(0)
            .and_then(|n| i64::try_from(n).ok())
            .map_or(Value::Null, Value::from),
    }
}

/// `fill_value` for a `_FillValue` attribute's first value, as element `d` stores it.
fn fill_from_values(values: &Values, d: &Dtype) -> Result<Value, ZarrError> {
    let mut b = Vec::new();
    convert::encode(&values.slice(0, 1), d, &mut b);
    b.resize(d.size(), 0);
    Ok(match d.kind {
        Kind::Char => Value::String(crate::v3write::base64(&b)),
        Kind::Half => fill_from_bytes(
            &StoredType::Float {
                size: 2,
                big_endian: d.big_endian(),
            },
            &b,
        ),
        _ => number_value(convert::decode(&b, d)),
    })
}

/// The JSON sink: keys and values of the `refs` object, comma-separated, gathered in a
/// buffer written out in blocks (a file has one entry per chunk: millions of small pieces).
/// The consolidated metadata (`.zmetadata`) is gathered from the texts as they are given and
/// written last: zarr-python 3 lists the members of a group below the root of a reference
/// file system wrongly (a leading `/`), so without it a subgroup opens empty; with it xarray
/// opens every group, and the default `consolidated=None` opens without a warning.
struct RefWriter<'a> {
    out: &'a mut dyn Write,
    buf: Vec<u8>,
    first: bool,
    /// The opening `{"version":1,"refs":{` is written.
    started: bool,
    /// The key prefix of the array whose chunks are being given.
    prefix: String,
    /// The last URL and its JSON text (most chunks share one).
    url: Option<(String, String)>,
    cons: Option<crate::consolidated::ConsolidatedV2>,
}

impl<'a> RefWriter<'a> {
    /// A JSON sink writing one reference file to `out`.
    fn new(out: &'a mut dyn Write) -> Self {
        RefWriter {
            out,
            buf: Vec::with_capacity(OUT_BLOCK + 4096),
            first: true,
            started: false,
            prefix: String::new(),
            url: None,
            cons: Some(crate::consolidated::ConsolidatedV2::new()),
        }
    }
}

/// Bytes gathered before they are written out.
const OUT_BLOCK: usize = 1 << 16;

impl RefWriter<'_> {
    fn raw(&mut self, b: &[u8]) -> Result<(), ZarrError> {
        if !self.started {
            self.started = true;
            self.buf.extend_from_slice(b"{\"version\":1,\"refs\":{");
        }
        self.buf.extend_from_slice(b);
        if self.buf.len() >= OUT_BLOCK {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ZarrError> {
        self.out.write_all(&self.buf).map_err(output)?;
        self.buf.clear();
        Ok(())
    }

    /// A JSON string (escaped by serde_json; writing to a vector cannot fail).
    fn string(&mut self, s: &str) -> Result<(), ZarrError> {
        serde_json::to_writer(&mut self.buf, s).map_err(json_output)
    }

    fn sep(&mut self) -> Result<(), ZarrError> {
        self.raw(b"")?;
        if !self.first {
            self.buf.extend_from_slice(b",\n");
        }
        self.first = false;
        Ok(())
    }

    /// A metadata object's JSON text, inside a JSON string.
    fn meta_text(&mut self, key: &str, text: &str) -> Result<(), ZarrError> {
        self.sep()?;
        self.string(key)?;
        self.buf.push(b':');
        self.string(text)?;
        self.raw(b"")
    }

    /// The key of the chunk at grid index `idx` of the current array (`prefix/0` for a
    /// scalar), then `:`.
    fn chunk_key(&mut self, idx: &[u64]) -> Result<(), ZarrError> {
        self.sep()?;
        let mut k = String::with_capacity(self.prefix.len() + 2 + 4 * idx.len());
        k.push_str(&self.prefix);
        k.push('/');
        if idx.is_empty() {
            k.push('0');
        }
        for (i, x) in idx.iter().enumerate() {
            if i > 0 {
                k.push('.');
            }
            // digits need no escaping; the prefix does (names are any text)
            use std::fmt::Write as _;
            let _ = write!(k, "{x}");
        }
        self.string(&k)?;
        self.buf.push(b':');
        Ok(())
    }
}

impl ReferenceSink for RefWriter<'_> {
    fn metadata(&mut self, key: &str, text: &str) -> Result<(), ZarrError> {
        if let Some(c) = &mut self.cons {
            c.add(key, text)?;
        }
        self.meta_text(key, text)
    }

    fn begin_array(&mut self, prefix: &str, _grid: &[u64]) -> Result<(), ZarrError> {
        prefix.clone_into(&mut self.prefix);
        Ok(())
    }

    fn chunk(&mut self, idx: &[u64], r: ChunkRef<'_>) -> Result<(), ZarrError> {
        self.chunk_key(idx)?;
        match r {
            ChunkRef::Range { url, offset, len } => {
                if self.url.as_ref().is_none_or(|(u, _)| u != url) {
                    let text = serde_json::to_string(url).map_err(json_output)?;
                    self.url = Some((url.to_string(), text));
                }
                self.buf.push(b'[');
                if let Some((_, text)) = &self.url {
                    self.buf.extend_from_slice(text.as_bytes());
                }
                let _ = write!(self.buf, ",{offset},{len}]");
                self.raw(b"")
            }
            ChunkRef::Inline(bytes) => {
                self.buf.extend_from_slice(b"\"base64:");
                self.buf
                    .extend_from_slice(crate::v3write::base64(bytes).as_bytes());
                self.raw(b"\"")
            }
        }
    }

    fn end_array(&mut self) -> Result<(), ZarrError> {
        Ok(())
    }

    fn finish(&mut self) -> Result<(), ZarrError> {
        if let Some(c) = self.cons.take() {
            self.meta_text(crate::consolidated::V2_KEY, &c.finish())?;
        }
        self.raw(b"}}\n")?;
        self.flush()
    }
}

fn output(source: std::io::Error) -> ZarrError {
    ZarrError::Output { source }
}

fn json_output(e: serde_json::Error) -> ZarrError {
    output(std::io::Error::other(e))
}

/// The hyperslab of chunk `idx`, clipped to the shape.
fn region(idx: &[u64], chunk: &[u64], shape: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let start: Vec<u64> = idx.iter().zip(chunk).map(|(&i, &c)| i * c).collect();
    let count = start
        .iter()
        .zip(chunk)
        .zip(shape)
        .map(|((&s, &c), &n)| c.min(n.saturating_sub(s)))
        .collect();
    (start, count)
}

/// Every grid index of a chunk grid, row-major.
fn grid_indices(shape: &[u64], chunk: &[u64]) -> impl Iterator<Item = Vec<u64>> {
    let grid: Vec<u64> = shape
        .iter()
        .zip(chunk)
        .map(|(&n, &c)| n.div_ceil(c))
        .collect();
    let total: u64 = grid.iter().product();
    (0..total).map(move |mut lin| {
        let mut idx = vec![0u64; grid.len()];
        for d in (0..grid.len()).rev() {
            idx[d] = lin % grid[d];
            lin /= grid[d];
        }
        idx
    })
}

/// The chunk grid of a planned variable (chunks along each dimension); `None` when the
/// variable has no element (no chunk is referenced).
fn chunk_grid(ds: &Dataset, p: &VarPlan) -> Option<Vec<u64>> {
    let shape = ds.shape(p.var);
    if shape.contains(&0) {
        return None;
    }
    Some(
        shape
            .iter()
            .zip(&p.chunk)
            .map(|(&n, &c)| n.div_ceil(c))
            .collect(),
    )
}

fn write_chunks(
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &ReferenceOptions,
    p: &VarPlan,
    registry: &std::sync::OnceLock<Arc<Registry>>,
    w: &mut dyn ReferenceSink,
) -> Result<(), ZarrError> {
    let Some(grid) = chunk_grid(ds, p) else {
        return Ok(());
    };
    w.begin_array(&p.key, &grid)?;
    write_chunk_refs(ds, src, opts, p, registry, w)?;
    w.end_array()
}

/// The chunks of one variable, in C order of its grid.
fn write_chunk_refs(
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &ReferenceOptions,
    p: &VarPlan,
    registry: &std::sync::OnceLock<Arc<Registry>>,
    w: &mut dyn ReferenceSink,
) -> Result<(), ZarrError> {
    let shape = ds.shape(p.var);
    let read_err = |e: nc_dataset::DataError| ZarrError::Source {
        var: p.path.clone(),
        msg: e.to_string(),
    };
    match &p.content {
        Content::Strings => {
            for idx in grid_indices(&shape, &p.chunk) {
                let (start, count) = region(&idx, &p.chunk, &shape);
                let vals = src
                    .read(ds, p.var, Slab::new(&start, &count))
                    .map_err(read_err)?;
                let Values::String(s) = vals else {
                    return Err(ZarrError::Source {
                        var: p.path.clone(),
                        msg: "string variable read as another type".into(),
                    });
                };
                let n = p.chunk.iter().product::<u64>() as usize;
                let mut slots: Vec<Option<&nc_dataset::NcString>> = vec![None; n];
                scatter(&s, &count, &p.chunk, &mut slots);
                let bytes = crate::v3write::vlen_utf8(&slots, &p.path)?;
                w.chunk(&idx, ChunkRef::Inline(&bytes))?;
            }
        }
        Content::Inline { dtype } => {
            for idx in grid_indices(&shape, &p.chunk) {
                let (start, count) = region(&idx, &p.chunk, &shape);
                let vals = src
                    .read(ds, p.var, Slab::new(&start, &count))
                    .map_err(read_err)?;
                let mut b = Vec::new();
                convert::encode(&vals, dtype, &mut b);
                w.chunk(&idx, ChunkRef::Inline(&b))?;
            }
        }
        Content::Refs {
            url,
            dtype,
            es,
            codecs,
            fill,
            chunks,
        } => {
            let mut pipe: Option<Pipeline> = None;
            match chunks {
                StoredChunks::List(list) => {
                    for c in list {
                        match c.bytes {
                            ChunkBytes::Range { offset, len } => {
                                w.chunk(&c.index, ChunkRef::Range { url, offset, len })?;
                            }
                            ChunkBytes::Decoded => {
                                let Some(d) = dtype else {
                                    return Err(ZarrError::NotReferenceable {
                                        var: p.path.clone(),
                                        why: format!(
                                            "its chunk {:?} is stored unlike the others (some \
                                             filters skipped), and chunks of user types are \
                                             not re-encoded; {}",
                                            c.index, LEAVE_OUT
                                        ),
                                    });
                                };
                                let (start, count) = region(&c.index, &p.chunk, &shape);
                                let vals = src
                                    .read(ds, p.var, Slab::new(&start, &count))
                                    .map_err(read_err)?;
                                let mut region_bytes = Vec::new();
                                convert::encode(&vals, d, &mut region_bytes);
                                let want: u64 = count.iter().product::<u64>() * *es as u64;
                                if region_bytes.len() as u64 != want {
                                    return Err(ZarrError::Source {
                                        var: p.path.clone(),
                                        msg: format!(
                                            "chunk {:?} read as {} bytes, expected {want}",
                                            c.index,
                                            region_bytes.len()
                                        ),
                                    });
                                }
                                // bounded by MAX_REENCODED at planning
                                let n = p.chunk.iter().product::<u64>() as usize;
                                let mut buf = fill.repeat(n);
                                if start.is_empty() {
                                    buf.copy_from_slice(&region_bytes);
                                } else {
                                    place(&region_bytes, &count, &p.chunk, *es, &mut buf);
                                }
                                if pipe.is_none() && !codecs.is_empty() {
                                    let reg = registry.get_or_init(|| match &opts.registry {
                                        Some(r) => r.clone(),
                                        None => {
                                            let mut r = Registry::with_builtins();
                                            let _ = r.load_default_plugins();
                                            Arc::new(r)
                                        }
                                    });
                                    let ctx = FilterContext::new(*es, &p.chunk);
                                    pipe = Some(crate::codecs::pipeline(
                                        codecs,
                                        reg,
                                        ctx,
                                        &p.path,
                                        &join(&p.key, ".zarray"),
                                    )?);
                                }
                                let bytes = match &pipe {
                                    Some(pl) => pl.encode(&buf).map_err(|e| ZarrError::Filter {
                                        var: p.path.clone(),
                                        source: e,
                                    })?,
                                    None => buf,
                                };
                                w.chunk(&c.index, ChunkRef::Inline(&bytes))?;
                            }
                        }
                    }
                }
                StoredChunks::Strided {
                    offset,
                    stride,
                    len,
                    count,
                } => {
                    let mut idx = vec![0u64; p.chunk.len().max(1)];
                    for i in 0..*count {
                        idx[0] = i;
                        let at = offset.saturating_add(i.saturating_mul(*stride));
                        w.chunk(
                            &idx,
                            ChunkRef::Range {
                                url,
                                offset: at,
                                len: *len,
                            },
                        )?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Put the strings of a C-order region of shape `count` at their places in a C-order chunk.
fn scatter<'a>(
    region: &'a [Option<nc_dataset::NcString>],
    count: &[u64],
    chunk: &[u64],
    slots: &mut [Option<&'a nc_dataset::NcString>],
) {
    let rank = count.len();
    if rank == 0 {
        if let (Some(s), Some(r)) = (slots.first_mut(), region.first()) {
            *s = r.as_ref();
        }
        return;
    }
    for (i, s) in region.iter().enumerate() {
        // the region index of element i, then its offset in the chunk
        let mut rem = i as u64;
        let mut off = 0u64;
        let mut stride = 1u64;
        for d in (0..rank).rev() {
            let k = rem % count[d].max(1);
            rem /= count[d].max(1);
            off += k * stride;
            stride *= chunk[d];
        }
        if let Some(slot) = slots.get_mut(off as usize) {
            *slot = s.as_ref();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use nc_dataset::{
        CompoundField, DataError, FilterSpec, InMemory, NcString, StoredChunk, StoredField,
    };
    use serde_json::Map;
    use std::collections::HashMap;

    /// Data in memory, placements as the test says.
    struct Mock(HashMap<usize, Placement>);

    impl DataSource for Mock {
        fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
            let Slab { start, count } = slab;

            InMemory.read(ds, var, Slab::new(start, count))
        }

        fn placement(&self, _: &Dataset, var: VarId) -> Option<Result<Placement, DataError>> {
            self.0.get(&var.0).cloned().map(Ok)
        }
    }

    fn int4(big: bool) -> StoredType {
        StoredType::Int {
            size: 4,
            signed: true,
            big_endian: big,
        }
    }

    fn range(index: Vec<u64>, offset: u64, len: u64) -> StoredChunk {
        StoredChunk {
            index,
            bytes: ChunkBytes::Range { offset, len },
        }
    }

    fn chunks(elem: StoredType, chunk: Vec<u64>, list: Vec<StoredChunk>) -> Placement {
        Placement::Chunks(ChunkMap {
            elem,
            chunk,
            filters: Vec::new(),
            fill: None,
            file: None,
            chunks: StoredChunks::List(list),
        })
    }

    /// The reference file of `ds`, parsed strictly (serde_json refuses bare NaN), with the
    /// warnings; every metadata text parses too (NaN allowed there, as Python writes it).
    fn run_refs(
        ds: &Dataset,
        src: &Mock,
        vars: &[&str],
    ) -> Result<(Map<String, Value>, Vec<String>), ZarrError> {
        let opts = ReferenceOptions {
            url: "/data/in.nc".into(),
            vars: vars.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        let mut out = Vec::new();
        let warnings = write_references(ds, src, &opts, &mut out);
        let warnings = match warnings {
            Ok(w) => w,
            Err(e) => {
                assert!(out.is_empty(), "output written before the refusal");
                return Err(e);
            }
        };
        let doc: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(doc["version"], 1);
        let refs = doc["refs"].as_object().unwrap().clone();
        for (k, v) in &refs {
            if k.rsplit('/').next().unwrap().starts_with(".z") {
                crate::json::parse(k, v.as_str().unwrap().as_bytes()).unwrap();
            }
        }
        Ok((refs, warnings))
    }

    fn meta(refs: &Map<String, Value>, key: &str) -> Value {
        crate::json::parse(key, refs[key].as_str().unwrap().as_bytes()).unwrap()
    }

    fn base64_of(v: &Value) -> Vec<u8> {
        let s = v.as_str().unwrap().strip_prefix("base64:").unwrap();
        crate::meta::base64_decode(s).unwrap()
    }

    #[test]
    fn names_and_attributes_are_escaped_and_typed() {
        let mut ds = Dataset::new("t");
        let x = ds.add_dim(ROOT, "x", 4, false);
        let g = ds.add_group(ROOT, "grüppe \"1\"");
        let v = ds.add_var(
            g,
            "we\"ird name ✓",
            NcType::Atomic(AtomicType::Int),
            vec![x],
        );
        ds.var_mut(v)
            .atts
            .push(Attribute::text("units", "m s-1\n\"quoted\""));
        ds.var_mut(v).atts.push(Attribute::new(
            "range",
            Values::Double(vec![f64::NAN, -1.5]),
        ));
        ds.var_mut(v).atts.push(Attribute::new(
            "latin1",
            Values::String(vec![Some(NcString::from_bytes(vec![0xe9]))]),
        ));
        let cmp = ds.add_type(
            ROOT,
            "pair_t",
            UserTypeKind::Compound {
                size: 8,
                fields: vec![CompoundField {
                    name: "a".into(),
                    ty: NcType::Atomic(AtomicType::Double),
                    dims: vec![],
                    offset: 0,
                }],
            },
        );
        ds.group_mut(ROOT).atts.push(Attribute {
            name: "pair".into(),
            ty: NcType::User(cmp),
            values: Values::Compound(vec![vec![Values::Double(vec![1.0])]]),
        });
        ds.group_mut(ROOT)
            .atts
            .push(Attribute::new("inf", Values::Float(vec![f32::INFINITY])));
        let src = Mock(HashMap::from([(
            v.0,
            chunks(
                int4(false),
                vec![2],
                vec![range(vec![0], 10, 8), range(vec![1], 18, 8)],
            ),
        )]));
        let (refs, warnings) = run_refs(&ds, &src, &[]).unwrap();
        let key = "grüppe \"1\"/we\"ird name ✓";
        assert_eq!(
            refs[&format!("{key}/1")],
            json!(["/data/in.nc", 18, 8]),
            "{refs:?}"
        );
        let z = meta(&refs, &format!("{key}/.zattrs"));
        assert_eq!(z["units"], "m s-1\n\"quoted\"");
        assert!(crate::json::as_f64(&z["range"][0]).unwrap().is_nan());
        assert_eq!(z["_ARRAY_DIMENSIONS"], json!(["x"]));
        assert!(z.get("latin1").is_none());
        let root = meta(&refs, ".zattrs");
        assert_eq!(crate::json::as_f64(&root["inf"]), Some(f64::INFINITY));
        assert!(root.get("pair").is_none());
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("attribute \"pair\" of group / left out"));
        assert!(warnings[1].contains("attribute \"latin1\""));
        // consolidated metadata holds every metadata object
        let zm = meta(&refs, ".zmetadata");
        assert_eq!(zm["zarr_consolidated_format"], 1);
        assert_eq!(
            zm["metadata"][format!("{key}/.zarray")]["chunks"],
            json!([2])
        );
        assert_eq!(zm["metadata"]["grüppe \"1\"/.zgroup"]["zarr_format"], 2);
        // a name that is no key is refused, named
        ds.var_mut(v).name = "back\\slash".into();
        let e = run_refs(&ds, &src, &[]).unwrap_err().to_string();
        assert_eq!(
            e,
            "variable \"/grüppe \"1\"/back\\slash\" cannot be stored in Zarr: its name \"back\\\\slash\" is no Zarr key (backslash or NUL in key); leave it out with -v"
        );
    }

    #[test]
    fn fill_value_is_the_stored_fill_only_when_chunks_are_missing() {
        let mut ds = Dataset::new("t");
        let x = ds.add_dim(ROOT, "x", 4, false);
        let mk = |ds: &mut Dataset, name: &str| {
            ds.add_var(ROOT, name, NcType::Atomic(AtomicType::Int), vec![x])
        };
        let (a, b, c) = (mk(&mut ds, "a"), mk(&mut ds, "b"), mk(&mut ds, "c"));
        for v in [a, b] {
            ds.var_mut(v)
                .atts
                .push(Attribute::new("_FillValue", Values::Int(vec![-7])));
        }
        let stored = |list| {
            let Placement::Chunks(mut m) = chunks(int4(true), vec![2], list) else {
                unreachable!()
            };
            m.fill = Some((-9i32).to_be_bytes().to_vec());
            Placement::Chunks(m)
        };
        let both = || vec![range(vec![0], 0, 8), range(vec![1], 8, 8)];
        let src = Mock(HashMap::from([
            (a.0, stored(vec![range(vec![1], 8, 8)])),
            (b.0, stored(both())),
            (c.0, stored(both())),
        ]));
        let (refs, _) = run_refs(&ds, &src, &[]).unwrap();
        assert_eq!(meta(&refs, "a/.zarray")["fill_value"], -9);
        assert_eq!(meta(&refs, "a/.zarray")["dtype"], ">i4");
        assert!(
            refs.get("a/0").is_none(),
            "a chunk never written has no key"
        );
        assert_eq!(meta(&refs, "b/.zarray")["fill_value"], -7);
        assert_eq!(meta(&refs, "c/.zarray")["fill_value"], Value::Null);
    }

    #[test]
    fn filters_map_to_numcodecs_or_are_refused_with_the_variable_named() {
        let mut ds = Dataset::new("t");
        let x = ds.add_dim(ROOT, "x", 4, false);
        let f8 = ds.add_var(ROOT, "d", NcType::Atomic(AtomicType::Double), vec![x]);
        let f4 = ds.add_var(ROOT, "f", NcType::Atomic(AtomicType::Float), vec![x]);
        let with = |elem: StoredType, ids: &[(u32, &[u32])]| {
            let Placement::Chunks(mut m) = chunks(elem, vec![4], vec![range(vec![0], 0, 9)]) else {
                unreachable!()
            };
            m.filters = ids
                .iter()
                .map(|(id, p)| FilterSpec {
                    id: *id,
                    params: p.to_vec(),
                })
                .collect();
            Placement::Chunks(m)
        };
        let float = |size| StoredType::Float {
            size,
            big_endian: false,
        };
        // netCDF-C's order: fletcher32, shuffle, deflate. On 4-byte floats numcodecs' shuffle
        // sees whole elements (data + checksum); on doubles it does not
        let chain: &[(u32, &[u32])] = &[(3, &[]), (2, &[4]), (1, &[5])];
        let src = Mock(HashMap::from([(f4.0, with(float(4), chain))]));
        let (refs, _) = run_refs(&ds, &src, &["f"]).unwrap();
        assert_eq!(
            meta(&refs, "f/.zarray")["filters"],
            json!([{"id": "fletcher32"}, {"id": "shuffle", "elementsize": 4}, {"id": "zlib", "level": 5}])
        );
        let chain8: &[(u32, &[u32])] = &[(3, &[]), (2, &[8]), (1, &[5])];
        let src = Mock(HashMap::from([(f8.0, with(float(8), chain8))]));
        let e = run_refs(&ds, &src, &["d"]).unwrap_err().to_string();
        assert!(
            e.starts_with("variable \"/d\" cannot be referenced as Zarr chunks: its shuffle filter runs on a buffer that is not whole 8-byte elements"),
            "{e}"
        );
        // shuffle first is fine on doubles; szip is not
        let src = Mock(HashMap::from([(
            f8.0,
            with(float(8), &[(2, &[8]), (3, &[])]),
        )]));
        assert!(run_refs(&ds, &src, &["d"]).is_ok());
        let src = Mock(HashMap::from([(f8.0, with(float(8), &[(4, &[141, 32])]))]));
        let e = run_refs(&ds, &src, &["d"]).unwrap_err().to_string();
        assert!(
            e.contains("its filter 4 (szip) cannot be referenced: numcodecs has no szip codec; rewrite it with filters numcodecs decodes (e.g. nccopy-rs -F 'd,zstd,3' in.nc out.nc"),
            "{e}"
        );
    }

    #[test]
    fn compounds_are_structured_dtypes_when_packed_with_scalar_fields() {
        let mut ds = Dataset::new("t");
        let x = ds.add_dim(ROOT, "x", 2, false);
        let t = ds.add_type(
            ROOT,
            "rec_t",
            UserTypeKind::Compound {
                size: 0,
                fields: vec![],
            },
        );
        let v = ds.add_var(ROOT, "r", NcType::User(t), vec![x]);
        let field = |name: &str, offset, dims: Vec<usize>, ty| StoredField {
            name: name.into(),
            offset,
            dims,
            ty,
        };
        let i2 = StoredType::Int {
            size: 2,
            signed: true,
            big_endian: false,
        };
        let packed = StoredType::Compound {
            size: 8,
            fields: vec![
                field("a", 0, vec![], i2.clone()),
                field("s", 2, vec![], StoredType::Text { size: 2 }),
                field("o", 4, vec![], StoredType::Opaque { size: 4 }),
            ],
        };
        let src = Mock(HashMap::from([(
            v.0,
            chunks(packed, vec![2], vec![range(vec![0], 0, 16)]),
        )]));
        let (refs, _) = run_refs(&ds, &src, &[]).unwrap();
        assert_eq!(
            meta(&refs, "r/.zarray")["dtype"],
            json!([["a", "<i2"], ["s", "|S2"], ["o", "|V4"]])
        );
        let padded = StoredType::Compound {
            size: 16,
            fields: vec![
                field("a", 0, vec![], i2.clone()),
                field(
                    "b",
                    8,
                    vec![],
                    StoredType::Float {
                        size: 8,
                        big_endian: false,
                    },
                ),
            ],
        };
        let src = Mock(HashMap::from([(
            v.0,
            chunks(padded, vec![2], vec![range(vec![0], 0, 32)]),
        )]));
        let e = run_refs(&ds, &src, &[]).unwrap_err().to_string();
        assert!(
            e.contains("its compound type \"rec_t\" has 6 padding bytes before field \"b\""),
            "{e}"
        );
        let array = StoredType::Compound {
            size: 6,
            fields: vec![field("a", 0, vec![3], i2)],
        };
        let src = Mock(HashMap::from([(
            v.0,
            chunks(array, vec![2], vec![range(vec![0], 0, 12)]),
        )]));
        let e = run_refs(&ds, &src, &[]).unwrap_err().to_string();
        assert!(
            e.contains("field \"a\" that is an array or a compound"),
            "{e}"
        );
    }

    #[test]
    fn decoded_chunks_are_re_encoded_with_the_filters_and_padded_with_fill() {
        let mut ds = Dataset::new("t");
        let x = ds.add_dim(ROOT, "x", 5, false);
        let v = ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Short), vec![x]);
        ds.var_mut(v).data = Some(Values::Short(vec![1, 2, 3, 4, 5]));
        let Placement::Chunks(mut m) = chunks(
            StoredType::Int {
                size: 2,
                signed: true,
                big_endian: true,
            },
            vec![3],
            vec![
                range(vec![0], 100, 7),
                StoredChunk {
                    index: vec![1],
                    bytes: ChunkBytes::Decoded,
                },
            ],
        ) else {
            unreachable!()
        };
        m.filters = vec![FilterSpec {
            id: 1,
            params: vec![4],
        }];
        m.fill = Some(vec![0x7f, 0xff]);
        let src = Mock(HashMap::from([(v.0, Placement::Chunks(m))]));
        let (refs, _) = run_refs(&ds, &src, &[]).unwrap();
        assert_eq!(refs["v/0"], json!(["/data/in.nc", 100, 7]));
        let packed = base64_of(&refs["v/1"]);
        let mut z = flate2::read::ZlibDecoder::new(packed.as_slice());
        let mut raw = Vec::new();
        std::io::Read::read_to_end(&mut z, &mut raw).unwrap();
        // elements 3 and 4 big-endian, then the edge padded with the stored fill
        assert_eq!(raw, [0, 4, 0, 5, 0x7f, 0xff]);
    }

    #[test]
    fn strided_records_strings_and_inlined_variables() {
        let mut ds = Dataset::new("t");
        let t = ds.add_dim(ROOT, "t", 3, true);
        let x = ds.add_dim(ROOT, "x", 3, false);
        let r = ds.add_var(ROOT, "r", NcType::Atomic(AtomicType::Float), vec![t, x]);
        let s = ds.add_var(ROOT, "s", NcType::Atomic(AtomicType::String), vec![x]);
        ds.var_mut(s).storage.chunk_sizes = Some(vec![2]);
        ds.var_mut(s).data = Some(Values::String(vec![
            Some(NcString::from_bytes("é".as_bytes().to_vec())),
            None,
            Some(NcString::from_bytes(b"end".to_vec())),
        ]));
        let c = ds.add_var(ROOT, "c", NcType::Atomic(AtomicType::Int), vec![x]);
        ds.var_mut(c).data = Some(Values::Int(vec![7, -8, 9]));
        let big = ds.add_var(ROOT, "big", NcType::Atomic(AtomicType::Double), vec![t, x]);
        let elsewhere = || Placement::Elsewhere {
            why: "compact storage (inside the object header)".into(),
        };
        let src = Mock(HashMap::from([
            (
                r.0,
                Placement::Chunks(ChunkMap {
                    elem: StoredType::Float {
                        size: 4,
                        big_endian: true,
                    },
                    chunk: vec![1, 3],
                    filters: vec![],
                    fill: None,
                    file: None,
                    chunks: StoredChunks::Strided {
                        offset: 1000,
                        stride: 40,
                        len: 12,
                        count: 3,
                    },
                }),
            ),
            (c.0, elsewhere()),
            (big.0, elsewhere()),
        ]));
        let (refs, _) = run_refs(&ds, &src, &["r", "/s", "c"]).unwrap();
        assert_eq!(refs["r/2.0"], json!(["/data/in.nc", 1080, 12]));
        assert!(refs.get("big/.zarray").is_none());
        // strings: vlen-utf8, the edge chunk padded with empty strings
        assert_eq!(meta(&refs, "s/.zarray")["dtype"], "|O");
        assert_eq!(
            base64_of(&refs["s/1"]),
            [2, 0, 0, 0, 3, 0, 0, 0, b'e', b'n', b'd', 0, 0, 0, 0]
        );
        assert_eq!(
            &base64_of(&refs["s/0"])[..10],
            [2, 0, 0, 0, 2, 0, 0, 0, 0xc3, 0xa9]
        );
        // a small variable without a byte range: inline, little-endian
        assert_eq!(meta(&refs, "c/.zarray")["dtype"], "<i4");
        assert_eq!(
            base64_of(&refs["c/0"]),
            [7, 0, 0, 0, 0xf8, 0xff, 0xff, 0xff, 9, 0, 0, 0]
        );
        // a larger one is refused; a name that is no variable too
        let opts = ReferenceOptions {
            inline_limit: 8,
            vars: vec!["big".into()],
            ..Default::default()
        };
        let e = write_references(&ds, &src, &opts, &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("stored as compact storage (inside the object header), which has no byte range to reference, and its 72 bytes are more than the 8 that are inlined"),
            "{e}"
        );
        let e = run_refs(&ds, &src, &["/nosuch"]).unwrap_err().to_string();
        assert_eq!(e, "/nosuch: No such variable");
    }
}
