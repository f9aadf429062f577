//! Reading: the header grammar into a [`Dataset`] and a [`ClassicHeader`], and variable data by
//! hyperslab with positioned reads.
//!
//! Spec: classic format grammar (`header = magic numrecs dim_list gatt_list var_list`),
//! "Notes on Computing File Offsets", "Note on streaming data".

use nc_dataset::{MaybeBytes, Slab};
use std::sync::Arc;

use nc_store::{ByteSource, BytesSource, FileSource, StoreError};
use std::path::Path;

use nc_dataset::{
    records_per_chunk, AtomicType, Attribute, ChunkBytes, ChunkMap, DataError, DataSource, Dataset,
    Format, NcType, Placement, RecordLayout, StoredChunk, StoredChunks, StoredType, Values, VarId,
    ROOT,
};

use crate::cursor::Cursor;
use crate::layout::{
    count_width, decode_be, ext_size, format_of_version, offset_width, pad4, record_size,
    type_from_code, var_size, VarPlace, TAG_ATTRIBUTE, TAG_DIMENSION, TAG_VARIABLE,
};
use crate::ClassicError;

/// Bounds applied while reading untrusted files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest header accepted, in bytes (default 1 GiB). Headers are read in growing
    /// prefixes, so a corrupt count cannot make the reader load more than this.
    pub max_header_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_header_bytes: 1 << 30,
        }
    }
}

/// Where one variable's data lives, as read from the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarHeader {
    /// The variable's type.
    pub ty: AtomicType,
    /// Shape, with the current number of records for a record variable.
    pub shape: Vec<u64>,
    /// True for a record variable (first dimension unlimited).
    pub record: bool,
    /// The `begin` field: file offset of the data (of record 0 for record variables).
    pub begin: u64,
    /// The `vsize` field as stored (may be 2^32 - 1 for very large variables in CDF-1/2).
    pub stored_vsize: u64,
    /// The space the variable takes (per record for record variables), computed from its shape
    /// and rounded up to 4 bytes, as netCDF-C computes it.
    pub vsize: u64,
    /// Unpadded bytes of data (per record for record variables).
    pub bytes: u64,
}

/// The layout facts of a classic file's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassicHeader {
    /// CDF-1 (`Classic`), CDF-2 (`Offset64`) or CDF-5 (`Cdf5`).
    pub format: Format,
    /// Bytes of the header (the offset just past `var_list`).
    pub header_size: u64,
    /// The number of records (computed from the file length when the header says STREAMING).
    pub numrecs: u64,
    /// True when the header's `numrecs` field is STREAMING (all bits set).
    pub streaming: bool,
    /// Bytes per record (sum of the record variables' `vsize`; unpadded for a single record
    /// variable).
    pub recsize: u64,
    /// Offset of the first record (the first record variable's `begin`), or the end of the
    /// fixed-size data when there are no record variables.
    pub begin_rec: u64,
    /// One entry per variable, in file order (index = `VarId`).
    pub vars: Vec<VarHeader>,
}

/// Parse a classic header at the start of `bytes` (a whole file or a prefix holding the whole
/// header). A STREAMING record count is computed from `bytes.len()`.
///
/// The returned dataset has `format` set, an empty `name`, dimensions, variables and attributes
/// in file order, and no data (`Variable::data` is `None`).
///
/// # Errors
/// Bad magic, a header that ends early, counts that cannot fit the bytes that follow, invalid
/// type codes, non-UTF-8 names, bad dimension ids, several unlimited dimensions, overlapping
/// data offsets.
pub fn parse_header(bytes: &[u8]) -> Result<(Dataset, ClassicHeader), ClassicError> {
    parse(bytes, bytes.len() as u64)
}

/// Parse the header in `buf`, a prefix of a file of `file_len` bytes.
pub(crate) fn parse(buf: &[u8], file_len: u64) -> Result<(Dataset, ClassicHeader), ClassicError> {
    if buf.len() < 4 || &buf[..3] != b"CDF" {
        if buf.len() < 4 && file_len >= 4 {
            return Err(ClassicError::Truncated {
                what: "magic number",
                at: 0,
                wanted: 4,
                len: file_len,
            });
        }
        return Err(ClassicError::BadMagic {
            found: buf[..buf.len().min(4)].to_vec(),
        });
    }
    let format = format_of_version(buf[3]).ok_or_else(|| ClassicError::BadMagic {
        found: buf[..4].to_vec(),
    })?;
    let cw = count_width(format);
    let ow = offset_width(format);
    let mut c = Cursor::new(buf, file_len);
    c.take(4, "magic number")?;
    let raw_numrecs = c.uint(cw, "numrecs")?;
    let streaming = raw_numrecs
        == if cw == 8 {
            u64::MAX
        } else {
            u64::from(u32::MAX)
        };

    let mut ds = Dataset::new("");
    ds.format = Some(format);

    // dim_list
    let ndims = list_count(&mut c, cw, TAG_DIMENSION, "dimension list")?;
    let ndims = c.check_count(ndims, 2 * cw as u64, "dimensions")?;
    let mut dim_lens = Vec::with_capacity(ndims);
    let mut unlimited: Option<usize> = None;
    for i in 0..ndims {
        let name = read_name(&mut c, cw)?;
        let len = c.uint(cw, "dimension length")?;
        if len == 0 {
            if let Some(u) = unlimited {
                return Err(ClassicError::SeveralUnlimited {
                    first: ds.dims[u].name.clone(),
                    second: name,
                });
            }
            unlimited = Some(i);
        }
        dim_lens.push(len);
        ds.add_dim(ROOT, name, len, len == 0);
    }

    // gatt_list
    ds.groups[0].atts = read_atts(&mut c, format, "global attribute")?;

    // var_list
    let nvars = list_count(&mut c, cw, TAG_VARIABLE, "variable list")?;
    let min_var = 4 * cw as u64 + 4 + 4 + ow as u64;
    let nvars = c.check_count(nvars, min_var, "variables")?;
    struct Raw {
        ty: AtomicType,
        dims: Vec<usize>,
        stored_vsize: u64,
        begin: u64,
    }
    let mut raws = Vec::with_capacity(nvars);
    for _ in 0..nvars {
        let name = read_name(&mut c, cw)?;
        let rank = c.uint(cw, "variable rank")?;
        let rank = c.check_count(rank, cw as u64, "dimension ids")?;
        let mut dims = Vec::with_capacity(rank);
        for k in 0..rank {
            let id = c.uint(cw, "dimension id")?;
            let d = usize::try_from(id)
                .ok()
                .filter(|&d| d < ndims)
                .ok_or_else(|| ClassicError::BadDimId {
                    var: name.clone(),
                    dimid: id,
                    ndims,
                })?;
            if k > 0 && unlimited == Some(d) {
                return Err(ClassicError::UnlimitedNotFirst { var: name });
            }
            dims.push(d);
        }
        let atts = read_atts(&mut c, format, "variable attribute")?;
        let at = c.pos();
        let code = c.u32("variable type")?;
        let ty = type_from_code(code, format).ok_or_else(|| ClassicError::BadType {
            what: format!("variable \"{name}\""),
            code,
            at,
            version: crate::layout::version_byte(format),
        })?;
        let stored_vsize = c.uint(cw, "vsize")?;
        let begin = c.uint(ow, "begin")?;
        let id = ds.add_var(
            ROOT,
            name,
            NcType::Atomic(ty),
            dims.iter().map(|&d| nc_dataset::DimId(d)).collect(),
        );
        ds.var_mut(id).atts = atts;
        raws.push(Raw {
            ty,
            dims,
            stored_vsize,
            begin,
        });
    }
    let header_size = c.pos();

    // sizes and places, computed from shapes (the stored vsize is redundant and may be clipped)
    let mut places = Vec::with_capacity(raws.len());
    for (i, r) in raws.iter().enumerate() {
        let record = r.dims.first().is_some_and(|&d| unlimited == Some(d));
        let shape: Vec<u64> = r.dims.iter().map(|&d| dim_lens[d]).collect();
        let (elems, bytes, vsize) =
            var_size(r.ty, &shape, record).ok_or_else(|| ClassicError::SizeOverflow {
                var: ds.vars[i].name.clone(),
            })?;
        places.push(VarPlace {
            begin: r.begin,
            elems,
            bytes,
            vsize,
            record,
        });
    }
    let recsize = record_size(&places).ok_or(ClassicError::SizeOverflow {
        var: "(all record variables)".into(),
    })?;
    let fixed_end = check_places(&ds, &places, header_size)?;
    let begin_rec = places
        .iter()
        .find(|p| p.record)
        .map_or(fixed_end, |p| p.begin);
    let numrecs = if streaming {
        file_len
            .saturating_sub(begin_rec)
            .checked_div(recsize)
            .unwrap_or(0)
    } else {
        raw_numrecs
    };
    if let Some(u) = unlimited {
        ds.dims[u].len = numrecs;
    }
    let vars = raws
        .iter()
        .zip(&places)
        .map(|(r, p)| VarHeader {
            ty: r.ty,
            shape: r
                .dims
                .iter()
                .map(|&d| {
                    if unlimited == Some(d) {
                        numrecs
                    } else {
                        dim_lens[d]
                    }
                })
                .collect(),
            record: p.record,
            begin: p.begin,
            stored_vsize: r.stored_vsize,
            vsize: p.vsize,
            bytes: p.bytes,
        })
        .collect();
    let header = ClassicHeader {
        format,
        header_size,
        numrecs,
        streaming,
        recsize,
        begin_rec,
        vars,
    };
    Ok((ds, header))
}

/// Check that data regions follow the header and do not overlap (fixed-size variables in
/// header order, then record variables within a record). Returns the end of the fixed data.
fn check_places(ds: &Dataset, places: &[VarPlace], header_size: u64) -> Result<u64, ClassicError> {
    let mut prev_end = header_size;
    let mut prev_name = "the header".to_string();
    let mut fixed_end = header_size;
    for rec_pass in [false, true] {
        for (i, p) in places
            .iter()
            .enumerate()
            .filter(|(_, p)| p.record == rec_pass)
        {
            let name = &ds.vars[i].name;
            if p.begin < prev_end {
                return Err(ClassicError::Overlap {
                    var: name.clone(),
                    begin: p.begin,
                    other: prev_name,
                    other_end: prev_end,
                });
            }
            prev_end = p
                .begin
                .checked_add(p.vsize)
                .ok_or_else(|| ClassicError::SizeOverflow { var: name.clone() })?;
            prev_name = format!("variable \"{name}\"");
        }
        if !rec_pass {
            fixed_end = prev_end;
        }
    }
    Ok(fixed_end)
}

/// A list header: the tag (or ABSENT) and the element count.
fn list_count(
    c: &mut Cursor<'_>,
    cw: usize,
    expected: u32,
    what: &'static str,
) -> Result<u64, ClassicError> {
    let at = c.pos();
    let tag = c.u32(what)?;
    let n = c.uint(cw, what)?;
    if tag == 0 {
        if n != 0 {
            return Err(ClassicError::BadAbsent { what, at, count: n });
        }
        return Ok(0);
    }
    if tag != expected {
        return Err(ClassicError::BadTag {
            what,
            at,
            tag,
            expected,
        });
    }
    Ok(n)
}

/// `name = nelems namestring`, padded to 4 with zero bytes.
fn read_name(c: &mut Cursor<'_>, cw: usize) -> Result<String, ClassicError> {
    let at = c.pos();
    let len = c.uint(cw, "name length")?;
    c.check_count(len, 1, "name bytes")?;
    let padded = pad4(len).unwrap_or(u64::MAX);
    let bytes = c.take(padded, "name")?;
    let text = &bytes[..bytes.len() - (padded - len) as usize];
    if text.is_empty() {
        return Err(ClassicError::BadName {
            at,
            reason: "it is empty",
        });
    }
    String::from_utf8(text.to_vec()).map_err(|_| ClassicError::BadName {
        at,
        reason: "it is not UTF-8",
    })
}

/// `att_list = ABSENT | NC_ATTRIBUTE nelems [attr ...]`.
fn read_atts(
    c: &mut Cursor<'_>,
    format: Format,
    what: &'static str,
) -> Result<Vec<Attribute>, ClassicError> {
    let cw = count_width(format);
    let n = list_count(c, cw, TAG_ATTRIBUTE, "attribute list")?;
    // name length + type + nelems
    let n = c.check_count(n, 2 * cw as u64 + 4, "attributes")?;
    let mut atts = Vec::with_capacity(n);
    for _ in 0..n {
        let name = read_name(c, cw)?;
        let at = c.pos();
        let code = c.u32("attribute type")?;
        let ty = type_from_code(code, format).ok_or_else(|| ClassicError::BadType {
            what: format!("{what} \"{name}\""),
            code,
            at,
            version: crate::layout::version_byte(format),
        })?;
        let nelems = c.uint(cw, "attribute length")?;
        let size = ext_size(ty);
        c.check_count(nelems, size, "attribute values")?;
        // nelems * size <= remaining, so no overflow
        let bytes = nelems * size;
        let data = c.take(pad4(bytes).unwrap_or(u64::MAX), "attribute values")?;
        let values = decode_be(ty, &data[..bytes as usize]);
        atts.push(Attribute {
            name,
            ty: NcType::Atomic(ty),
            values,
        });
    }
    Ok(atts)
}

/// Where the bytes of a classic file come from: any byte source (a local file, memory, an
/// object in a bucket).
#[derive(Clone)]
struct Backing(Arc<dyn ByteSource>);

impl std::fmt::Debug for Backing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Backing").field(&self.0.name()).finish()
    }
}

impl Backing {
    fn len(&self) -> u64 {
        self.0.len()
    }

    fn past(&self, var: &str, end: u64) -> ClassicError {
        ClassicError::DataPastEof {
            var: var.to_string(),
            end,
            file_len: self.len(),
        }
    }

    fn source_err(&self, var: &str, offset: u64, e: StoreError) -> ClassicError {
        match e {
            StoreError::Range { end, .. } => self.past(var, end),
            e => ClassicError::ByteSource {
                what: format!("reading data of variable \"{var}\" at byte {offset}"),
                source: Box::new(e),
            },
        }
    }

    /// Fill `buf` from `offset`; `var` names the variable for errors.
    fn read_at(&self, offset: u64, buf: &mut [u8], var: &str) -> Result<(), ClassicError> {
        let end = offset.saturating_add(buf.len() as u64);
        if end > self.len() {
            return Err(self.past(var, end));
        }
        self.0
            .read_at(offset, buf)
            .map_err(|e| self.source_err(var, offset, e))
    }
}

/// Reverse the bytes of each `N`-byte element of `raw` in place (big- to little-endian); a
/// constant size lets the compiler do it many elements at a time.
pub(crate) fn reverse_each<const N: usize>(raw: &mut [u8]) {
    for e in raw.chunks_exact_mut(N) {
        e.reverse();
    }
}

/// An open classic file: the header parsed eagerly, data read lazily by hyperslab.
#[derive(Debug)]
pub struct ClassicFile {
    ds: Dataset,
    header: ClassicHeader,
    backing: Backing,
}

/// First prefix read when looking for the end of the header, from a remote source (one
/// request covers the header of nearly every file).
const FIRST_HEADER_READ: u64 = 64 * 1024;
/// The same from a local file: a file keeps its first bytes once the format probe has read
/// its magic number (`nc_store::FileSource`), and a read this small is served from them, so
/// most headers cost no read of their own (a 64 KiB read was a second copy of the file's
/// start for every input of a join).
const FIRST_LOCAL_HEADER_READ: u64 = 8 * 1024;
/// Byte runs smaller than half this are served from a read-ahead window when they are dense.
const WINDOW: usize = 1 << 20;
/// Runs at most this far apart in a local file count as dense. A read costs about what
/// copying a few KiB does, so runs further apart are read one by one: the 24 values of a
/// record coordinate whose records are 16 KiB apart are 24 small reads, not a copy of the
/// 377 KiB between them.
const NEAR: u64 = 4 * 1024;
/// The same for a remote source, where a request costs far more: runs this close are read
/// through the window (a request per window, memory one window), not as one request each.
const NEAR_REMOTE: u64 = 32 * 1024;

impl ClassicFile {
    /// Open a classic file: read its header (in growing prefixes, never the whole file) and
    /// keep the file open for data reads. Works for files of any size (offsets are 64-bit).
    ///
    /// # Errors
    /// The file cannot be opened or read, or its header is invalid (see [`parse_header`]).
    pub fn open(path: &Path) -> Result<ClassicFile, ClassicError> {
        ClassicFile::open_with(path, &Limits::default())
    }

    /// [`ClassicFile::open`] with explicit [`Limits`].
    ///
    /// # Errors
    /// As [`ClassicFile::open`], and [`ClassicError::HeaderTooLarge`].
    pub fn open_with(path: &Path, limits: &Limits) -> Result<ClassicFile, ClassicError> {
        let src = FileSource::open(path).map_err(|e| match e {
            StoreError::Io { source, .. } => ClassicError::Io {
                what: "cannot open the file".into(),
                source,
            },
            e => ClassicError::ByteSource {
                what: "cannot open the file".into(),
                source: Box::new(e),
            },
        })?;
        ClassicFile::open_source(Arc::new(src), limits)
    }

    /// Open a classic file from any byte source: the header is read in growing prefixes from
    /// the start (never the whole file), and data later by range.
    ///
    /// # Errors
    /// As [`ClassicFile::open_with`]; the source's request failures.
    pub fn open_source(
        src: Arc<dyn ByteSource>,
        limits: &Limits,
    ) -> Result<ClassicFile, ClassicError> {
        let len = src.len();
        let first = if src.is_remote() {
            FIRST_HEADER_READ
        } else {
            FIRST_LOCAL_HEADER_READ
        };
        let mut want = len.min(first);
        let (ds, header) = loop {
            let n = usize::try_from(want).map_err(|_| ClassicError::HeaderTooLarge {
                limit: limits.max_header_bytes,
            })?;
            let mut buf = vec![0u8; n];
            src.read_at(0, &mut buf)
                .map_err(|e| ClassicError::ByteSource {
                    what: "reading the header".into(),
                    source: Box::new(e),
                })?;
            match parse(&buf, len) {
                Ok(x) => break x,
                Err(e) => match e.needed_len() {
                    // a longer prefix could help: grow, bounded by the file and the limit
                    Some(needed) if want < len && needed <= len => {
                        let next = needed.max(want.saturating_mul(4)).min(len);
                        if next > limits.max_header_bytes {
                            return Err(ClassicError::HeaderTooLarge {
                                limit: limits.max_header_bytes,
                            });
                        }
                        want = next;
                    }
                    _ => return Err(e),
                },
            }
        };
        Ok(ClassicFile {
            ds,
            header,
            backing: Backing(src),
        })
    }

    /// A classic file held in memory (tests, fuzzing, small files).
    ///
    /// # Errors
    /// The header is invalid (see [`parse_header`]).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<ClassicFile, ClassicError> {
        let (ds, header) = parse_header(&bytes)?;
        Ok(ClassicFile {
            ds,
            header,
            backing: Backing(Arc::new(BytesSource::new(bytes, "memory"))),
        })
    }

    /// The dataset: format set, name empty (the caller sets it), dimensions, variables and
    /// attributes in file order, no data in memory.
    pub fn dataset(&self) -> &Dataset {
        &self.ds
    }

    /// The dataset, consuming the file.
    pub fn into_dataset(self) -> Dataset {
        self.ds
    }

    /// The header's layout facts (offsets, sizes, record count).
    pub fn header(&self) -> &ClassicHeader {
        &self.header
    }

    /// Read a hyperslab of variable `var`: `count[i]` values from `start[i]` along each
    /// dimension, row-major. Memory used is the size of the slab asked for (plus a bounded
    /// read-ahead window for scattered small runs).
    ///
    /// # Errors
    /// Unknown variable, a slab outside the shape, data past the end of the file, I/O errors.
    pub fn read_slab(
        &self,
        var: VarId,
        start: &[u64],
        count: &[u64],
    ) -> Result<Values, ClassicError> {
        let (ty, raw) = self.read_slab_raw(var, start, count)?;
        Ok(decode_be(ty, &raw))
    }

    /// [`Self::read_slab`] as little-endian element bytes (the stored big-endian bytes swapped
    /// in place): what a little-endian writer stores, without a typed vector in between.
    ///
    /// # Errors
    /// As [`Self::read_slab`].
    pub fn read_slab_le(
        &self,
        var: VarId,
        start: &[u64],
        count: &[u64],
    ) -> Result<Vec<u8>, ClassicError> {
        let (ty, mut raw) = self.read_slab_raw(var, start, count)?;
        match ext_size(ty) {
            2 => reverse_each::<2>(&mut raw),
            4 => reverse_each::<4>(&mut raw),
            8 => reverse_each::<8>(&mut raw),
            _ => {}
        }
        Ok(raw)
    }

    /// The header entry of variable `var`, and its name.
    fn var_header(&self, var: VarId) -> Result<(&VarHeader, &str), ClassicError> {
        let vh = self
            .header
            .vars
            .get(var.0)
            .ok_or(ClassicError::NoSuchVar(var.0))?;
        Ok((vh, self.ds.vars[var.0].name.as_str()))
    }

    /// The stored (big-endian) bytes of a hyperslab, and the variable's type.
    fn read_slab_raw(
        &self,
        var: VarId,
        start: &[u64],
        count: &[u64],
    ) -> Result<(AtomicType, Vec<u8>), ClassicError> {
        let (vh, name) = self.var_header(var)?;
        let rank = vh.shape.len();
        let bad = || ClassicError::BadHyperslab {
            var: name.to_string(),
            start: start.to_vec(),
            count: count.to_vec(),
            shape: vh.shape.clone(),
        };
        if start.len() != rank || count.len() != rank {
            return Err(bad());
        }
        for d in 0..rank {
            if start[d]
                .checked_add(count[d])
                .is_none_or(|e| e > vh.shape[d])
            {
                return Err(bad());
            }
        }
        let xsz = ext_size(vh.ty);
        let total = count.iter().try_fold(1u64, |a, &b| a.checked_mul(b));
        let total_bytes = total.and_then(|t| t.checked_mul(xsz));
        let total_bytes = total_bytes
            .and_then(|b| usize::try_from(b).ok())
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| ClassicError::SlabTooLarge {
                var: name.to_string(),
                bytes: total_bytes.unwrap_or(u64::MAX),
            })?;
        if total_bytes == 0 {
            return Ok((vh.ty, Vec::new()));
        }
        // byte strides per dimension; the record dimension steps by recsize
        let mut strides = vec![0u64; rank];
        let mut acc = xsz;
        for d in (0..rank).rev() {
            if d == 0 && vh.record {
                strides[d] = self.header.recsize;
            } else {
                strides[d] = acc;
                acc = acc.saturating_mul(vh.shape[d]);
            }
        }
        // merge trailing full dimensions into one contiguous run
        let records_contiguous = vh.bytes == self.header.recsize;
        let mut m = rank;
        let mut run_elems = 1u64;
        while m > 0 {
            let i = m - 1;
            let inner_full = (m..rank).all(|d| start[d] == 0 && count[d] == vh.shape[d]);
            let contiguous = !(i == 0 && vh.record) || records_contiguous;
            if !(inner_full && contiguous) {
                break;
            }
            run_elems *= count[i];
            m = i;
        }
        let run_bytes = (run_elems * xsz) as usize;
        let offset_of = |idx: &[u64]| -> u64 {
            let mut off = vh.begin;
            for d in 0..rank {
                let k = if d < m { idx[d] } else { 0 };
                off = off.saturating_add((start[d] + k).saturating_mul(strides[d]));
            }
            off
        };
        let last: Vec<u64> = (0..m).map(|d| count[d] - 1).collect();
        let slab_end = offset_of(&last).saturating_add(run_bytes as u64);
        if slab_end > self.backing.len() {
            return Err(ClassicError::DataPastEof {
                var: name.to_string(),
                end: slab_end,
                file_len: self.backing.len(),
            });
        }
        // small runs close together are served from a read-ahead window (bounded by the slab)
        let remote = self.backing.0.is_remote();
        let near = if remote { NEAR_REMOTE } else { NEAR };
        let dense = m > 0
            && (strides[m - 1] <= near || (run_bytes as u64).saturating_mul(4) >= strides[m - 1]);
        let mut out = vec![0u8; total_bytes];
        if remote && !(dense && run_bytes < WINDOW / 2) && run_bytes > 0 {
            // a remote source gets every run at once: it merges the close ones into few
            // requests and runs them concurrently
            let mut ranges = Vec::with_capacity(total_bytes / run_bytes);
            let mut idx = vec![0u64; m];
            loop {
                let off = offset_of(&idx);
                ranges.push(off..off + run_bytes as u64);
                if !nc_dataset::next_index(&mut idx, count) {
                    break;
                }
            }
            let first = ranges.first().map_or(0, |r| r.start);
            let got = self
                .backing
                .0
                .read_ranges(&ranges)
                .map_err(|e| self.backing.source_err(name, first, e))?;
            for (dst, bytes) in out.chunks_exact_mut(run_bytes).zip(got) {
                if bytes.len() != run_bytes {
                    return Err(self.backing.past(name, slab_end));
                }
                dst.copy_from_slice(&bytes);
            }
            return Ok((vh.ty, out));
        }
        let mut window: Vec<u8> = Vec::new();
        let mut wstart = 0u64;
        let mut idx = vec![0u64; m];
        let mut pos = 0usize;
        loop {
            let off = offset_of(&idx);
            let dst = &mut out[pos..pos + run_bytes];
            if dense && run_bytes < WINDOW / 2 {
                let wend = wstart + window.len() as u64;
                if off < wstart || off + run_bytes as u64 > wend {
                    let len = (WINDOW as u64).min(slab_end - off) as usize;
                    window.resize(len, 0);
                    self.backing.read_at(off, &mut window, name)?;
                    wstart = off;
                }
                let s = (off - wstart) as usize;
                dst.copy_from_slice(&window[s..s + run_bytes]);
            } else {
                self.backing.read_at(off, dst, name)?;
            }
            pos += run_bytes;
            // odometer over the outer dimensions
            if !nc_dataset::next_index(&mut idx, count) {
                return Ok((vh.ty, out));
            }
        }
    }
}

/// Reads by hyperslab. `var` indexes `ds`; when `ds` is not this file's own dataset (a subset
/// or a modified copy), the variable is found here by name.
impl DataSource for ClassicFile {
    fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        let Slab { start, count } = slab;

        let own = self.own_var(ds, var);
        self.read_slab(own, start, count).map_err(DataError::from)
    }

    fn read_le_bytes(&self, ds: &Dataset, var: VarId, slab: Slab) -> MaybeBytes {
        let Slab { start, count } = slab;

        let own = self.own_var(ds, var);
        Some(
            self.read_slab_le(own, start, count)
                .map_err(DataError::from),
        )
    }

    fn placement(&self, ds: &Dataset, var: VarId) -> Option<Result<Placement, DataError>> {
        let own = self.own_var(ds, var);
        Some(
            self.chunk_map(own)
                .map(Placement::Chunks)
                .map_err(DataError::from),
        )
    }

    fn stored_records(
        &self,
        ds: &Dataset,
        first: u64,
        n: u64,
        layout: &RecordLayout,
        out: &mut Vec<u8>,
    ) -> Option<Result<(), DataError>> {
        let h = &self.header;
        if h.recsize != layout.recsize || first.checked_add(n)? > h.numrecs {
            return None;
        }
        // this file's record variables in the order they are stored
        let mut own: Vec<(u64, usize)> = (h.vars.iter().enumerate())
            .filter(|(_, vh)| vh.record)
            .map(|(i, vh)| (vh.begin, i))
            .collect();
        own.sort_unstable();
        if own.len() != layout.vars.len() {
            return None;
        }
        let rec0 = own.first()?.0;
        let mut at = 0u64;
        for (&(begin, i), &(var, bytes)) in own.iter().zip(&layout.vars) {
            let vh = &h.vars[i];
            let same_type = ds.vars.get(var.0)?.ty == NcType::Atomic(vh.ty);
            if self.own_var(ds, var).0 != i || !same_type || vh.bytes != bytes || begin - rec0 != at
            {
                return None;
            }
            at += bytes;
        }
        let len = n.checked_mul(h.recsize)?;
        let start = rec0.checked_add(first.checked_mul(h.recsize)?)?;
        // records cut short: the variable-by-variable read says where
        if at != h.recsize || start.checked_add(len)? > self.backing.len() {
            return None;
        }
        let mark = out.len();
        let name = self.ds.vars[own[0].1].name.as_str();
        let got = (self.backing.0).read_append(start, usize::try_from(len).ok()?, out);
        Some(got.map_err(|e| {
            out.truncate(mark);
            DataError::from(self.backing.source_err(name, start, e))
        }))
    }
}

impl ClassicFile {
    /// Where variable `var`'s data is: a non-record variable is one chunk of its whole shape at
    /// `begin`; a record variable is one chunk per record at `begin + r * recsize`, or, when
    /// its records lie back to back (a single record variable), chunks of as many whole records
    /// as divide the record count and stay within [`nc_dataset::RECORD_CHUNK_BYTES`] bytes. Elements are
    /// big-endian, unfiltered; nothing is unwritten.
    ///
    /// # Errors
    /// Unknown variable, or data past the end of the file.
    pub fn chunk_map(&self, var: VarId) -> Result<ChunkMap, ClassicError> {
        let (vh, name) = self.var_header(var)?;
        let size = ext_size(vh.ty) as usize;
        let big_endian = size > 1;
        let elem = match vh.ty {
            AtomicType::Char => StoredType::Text { size: 1 },
            AtomicType::Float | AtomicType::Double => StoredType::Float { size, big_endian },
            t => StoredType::Int {
                size,
                signed: matches!(
                    t,
                    AtomicType::Byte | AtomicType::Short | AtomicType::Int | AtomicType::Int64
                ),
                big_endian,
            },
        };
        let past = |end: u64| ClassicError::DataPastEof {
            var: name.to_string(),
            end,
            file_len: self.backing.len(),
        };
        let check = |end: Option<u64>| match end {
            Some(e) if e <= self.backing.len() => Ok(()),
            e => Err(past(e.unwrap_or(u64::MAX))),
        };
        let whole: Vec<u64> = vh.shape.iter().map(|&n| n.max(1)).collect();
        let empty = vh.bytes == 0 || vh.shape.contains(&0);
        let (chunk, chunks) = if !vh.record {
            let chunks = if empty {
                Vec::new()
            } else {
                check(vh.begin.checked_add(vh.bytes))?;
                vec![StoredChunk {
                    index: vec![0; vh.shape.len()],
                    bytes: ChunkBytes::Range {
                        offset: vh.begin,
                        len: vh.bytes,
                    },
                }]
            };
            (whole, StoredChunks::List(chunks))
        } else {
            let numrecs = vh.shape.first().copied().unwrap_or(0);
            // records back to back: several per chunk, a divisor of the record count so that
            // the last chunk is whole (a Zarr edge chunk is stored whole)
            let per = if vh.bytes == self.header.recsize && vh.bytes > 0 {
                records_per_chunk(vh.bytes, numrecs)
            } else {
                1
            };
            let mut chunk = whole;
            if let Some(c) = chunk.first_mut() {
                *c = per;
            }
            let count = if empty { 0 } else { numrecs / per };
            if count > 0 {
                let last = (count - 1)
                    .checked_mul(per)
                    .and_then(|r| r.checked_mul(self.header.recsize))
                    .and_then(|o| o.checked_add(vh.begin))
                    .and_then(|o| o.checked_add(vh.bytes.checked_mul(per)?));
                check(last)?;
            }
            let chunks = StoredChunks::Strided {
                offset: vh.begin,
                stride: self.header.recsize.saturating_mul(per),
                len: vh.bytes.saturating_mul(per),
                count,
            };
            (chunk, chunks)
        };
        Ok(ChunkMap {
            elem,
            chunk,
            filters: Vec::new(),
            fill: None,
            file: None,
            chunks,
        })
    }

    /// `var` of `ds` as a variable of this file: the same index when the names agree, else
    /// found by name (a subset or modified copy of this file's dataset).
    fn own_var(&self, ds: &Dataset, var: VarId) -> VarId {
        match ds.vars.get(var.0) {
            Some(v) if self.ds.vars.get(var.0).is_some_and(|m| m.name == v.name) => var,
            Some(v) => self
                .ds
                .vars
                .iter()
                .position(|m| m.name == v.name)
                .map_or(var, VarId),
            None => var,
        }
    }
}
