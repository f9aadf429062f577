//! Writing: a layout pass (validation, header size, each `begin`, `vsize`, record size, format
//! limits), then one sequential write pass that streams data from a [`DataSource`] in bounded
//! slabs.
//!
//! The output matches netCDF-C 4.9.0 (`ncgen -b`, `nccopy`) byte for byte: data starts right
//! after the header (no extra header space), fixed-size variables follow in definition order,
//! each padded to 4 bytes with its fill pattern, then the records; a single record variable is
//! not padded between records.

use nc_dataset::Slab;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use nc_dataset::{
    AtomicType, Attribute, DataSource, Dataset, Format, NcType, RecordLayout, Values, VarId,
    FILTER_DEFLATE, FILTER_FLETCHER32, FILTER_SHUFFLE,
};
use unicode_normalization::UnicodeNormalization;

use crate::layout::{
    count_width, encode_be, ext_size, offset_width, record_size, type_in_format, var_size,
    version_byte, VarPlace, TAG_ATTRIBUTE, TAG_DIMENSION, TAG_VARIABLE,
};
use crate::ClassicError;

/// How to write a classic file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOptions {
    /// `Classic` (CDF-1), `Offset64` (CDF-2) or `Cdf5`; other formats are refused.
    pub format: Format,
    /// Fill mode (netCDF-C's default, `NC_FILL`): padding and unwritten data hold the fill
    /// value. When false (`NC_NOFILL`, `ncgen -x`), padding holds zero bytes.
    pub fill: bool,
    /// Write data only for variables that hold data in memory, as `ncgen` writes a CDL data
    /// section: a variable with `data == None` is not read from the source, its bytes are its
    /// fill value, or zeros when `fill` is false or the variable has `_NoFill` (netCDF-C
    /// leaves them unwritten). When false (the default, for copying), every variable is read
    /// whole from the source.
    pub only_given_data: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            format: Format::Classic,
            fill: true,
            only_given_data: false,
        }
    }
}

/// Length netCDF-C gives a file with no dimensions, attributes or variables.
const EMPTY_FILE_LEN: u64 = 4096;

/// netCDF-C writes a header larger than its I/O chunk in whole chunks, so the file is at
/// least the header rounded up to this (netCDF-C takes it from the file system's block size:
/// 2 x 4096 on common Linux file systems).
const HEADER_CHUNK: u64 = 8192;

/// Bytes of data read from the source and written at a time (per variable).
const SLAB: u64 = 4 << 20;

/// Write `ds` to the file `path` (created or truncated), reading variable data from `src`.
///
/// # Errors
/// The dataset does not fit the format (see [`write_to`]), the source fails, or I/O fails.
pub fn write_file(
    path: &Path,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &WriteOptions,
) -> Result<(), ClassicError> {
    // validate and lay out before touching the file system
    let plan = Plan::new(ds, opts)?;
    let file = File::create(path).map_err(|e| ClassicError::Io {
        what: "cannot create the file".into(),
        source: e,
    })?;
    plan.write_file(file, ds, src, opts)
}

/// Write `ds` into `file`, an open, empty file (written through this handle only, never
/// reopened by name: it may have none yet), reading variable data from `src`.
///
/// # Errors
/// As [`write_file`].
pub fn write_open_file(
    file: File,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &WriteOptions,
) -> Result<(), ClassicError> {
    Plan::new(ds, opts)?.write_file(file, ds, src, opts)
}

/// Write `ds` as a classic file to `out` (written strictly sequentially), reading variable
/// data from `src` in slabs of a few MB.
///
/// Validation: CDF-1/2 take only the six classic types, CDF-5 adds ubyte .. uint64; strings,
/// user types, groups, several unlimited dimensions and netCDF-4 storage settings (chunking,
/// filters, endianness, quantization) are refused; `_FillValue` must have the variable's type
/// and one value; the format's size limits are those of netCDF-C (`NC_EVARSIZE`).
///
/// # Errors
/// See above; also source and I/O failures.
pub fn write_to<W: Write>(
    out: &mut W,
    ds: &Dataset,
    src: &dyn DataSource,
    opts: &WriteOptions,
) -> Result<(), ClassicError> {
    let plan = Plan::new(ds, opts)?;
    plan.write(out, ds, src, opts)
}

/// One variable in the plan.
struct PlanVar {
    id: VarId,
    name: String,
    ty: AtomicType,
    dimids: Vec<u64>,
    shape: Vec<u64>,
    atts: Vec<(String, AtomicType, Vec<u8>, u64)>,
    place: VarPlace,
    /// One value of the fill pattern, big-endian.
    fill: Vec<u8>,
    /// Fill the padding and unwritten parts of this (fixed-size) variable.
    fill_on: bool,
    /// Records (or, for fixed variables, 0/1 = whole) to read from the source.
    given_records: u64,
}

/// The layout pass's result.
struct Plan {
    format: Format,
    numrecs: u64,
    dims: Vec<(String, u64)>,
    gatts: Vec<(String, AtomicType, Vec<u8>, u64)>,
    vars: Vec<PlanVar>,
    recsize: u64,
    header: Vec<u8>,
}

fn fmt_name(format: Format) -> &'static str {
    format.kind_name()
}

fn nfc(name: &str, what: &'static str) -> Result<String, ClassicError> {
    let bad = |reason| ClassicError::InvalidName {
        what,
        name: name.to_string(),
        reason,
    };
    if name.is_empty() {
        return Err(bad("names cannot be empty"));
    }
    if name.contains('/') {
        return Err(bad("names cannot contain '/'"));
    }
    if name.contains('\0') {
        return Err(bad("names cannot contain NUL"));
    }
    // names are stored NFC-normalised (classic spec, "Note on names")
    Ok(name.nfc().collect())
}

/// The atomic type of `t` if the format can store it, else the error for `what`.
fn check_type(
    ds: &Dataset,
    t: NcType,
    format: Format,
    what: impl Fn() -> String,
) -> Result<AtomicType, ClassicError> {
    match t {
        NcType::Atomic(a) if type_in_format(a, format) => Ok(a),
        NcType::Atomic(a) => Err(ClassicError::TypeNotInFormat {
            what: what(),
            ty: a.cdl_name().into(),
            format: fmt_name(format),
            cure: if a == AtomicType::String {
                "the netCDF-4 format"
            } else {
                "the cdf5 or netCDF-4 format"
            },
        }),
        NcType::User(_) => Err(ClassicError::Netcdf4Only {
            what: what(),
            feature: format!("user-defined type {}", ds.type_name(t)),
        }),
    }
}

/// Validate and encode an attribute: (NFC name, type, big-endian values, count).
fn encode_att(
    ds: &Dataset,
    a: &Attribute,
    format: Format,
    owner: &str,
) -> Result<(String, AtomicType, Vec<u8>, u64), ClassicError> {
    let what = || format!("attribute \"{owner}:{}\"", a.name);
    let ty = check_type(ds, a.ty, format, what)?;
    if a.values.atomic_type() != Some(ty) {
        return Err(ClassicError::ValuesMismatch {
            what: what(),
            ty: ty.cdl_name().into(),
        });
    }
    let mut bytes = Vec::new();
    encode_be(&a.values, &mut bytes);
    Ok((nfc(&a.name, "attribute")?, ty, bytes, a.values.len() as u64))
}

/// Refuse netCDF-4-only storage settings (netCDF-C: "Attempting netcdf-4 operation on
/// netcdf-3 file").
fn check_storage(ds: &Dataset, v: VarId) -> Result<(), ClassicError> {
    let var = ds.var(v);
    let s = &var.storage;
    let feature = if s.layout.is_some() {
        Some("_Storage".to_string())
    } else if s.chunk_sizes.is_some() {
        Some("_ChunkSizes".into())
    } else if let Some(f) = s.filters.first() {
        Some(match f.id {
            FILTER_DEFLATE => "_DeflateLevel".into(),
            FILTER_SHUFFLE => "_Shuffle".into(),
            FILTER_FLETCHER32 => "_Fletcher32".into(),
            id => format!("_Filter (filter {id})"),
        })
    } else if s.codecs.is_some() {
        Some("_Codecs".into())
    } else if s.endianness.is_some() {
        Some("_Endianness".into())
    } else {
        s.quantize.map(|(m, _)| m.attribute_name().to_string())
    };
    match feature {
        Some(feature) => Err(ClassicError::Netcdf4Only {
            what: format!("variable \"{}\"", var.name),
            feature,
        }),
        None => Ok(()),
    }
}

impl Plan {
    /// Write the planned file into `file` through a large buffer, then flush it.
    fn write_file(
        &self,
        file: File,
        ds: &Dataset,
        src: &dyn DataSource,
        opts: &WriteOptions,
    ) -> Result<(), ClassicError> {
        // every byte of a classic file is written (fill included): refuse up front what the
        // file system cannot hold, instead of a long run that ends full
        let need = self.file_len();
        if let Some(free) = nc_store::free_bytes(&file) {
            if need > free {
                return Err(ClassicError::NoSpace { need, free });
            }
        }
        let mut out = BufWriter::with_capacity(1 << 20, file);
        self.write(&mut out, ds, src, opts)?;
        // flushed, not synced: like netCDF-C, durability is left to the caller
        out.into_inner().map_err(|e| ClassicError::Io {
            what: "writing the file".into(),
            source: e.into_error(),
        })?;
        Ok(())
    }

    /// Length of the file this plan writes: the header, the fixed-size variables, and
    /// `numrecs` records (an upper bound when the format pads the last variable).
    fn file_len(&self) -> u64 {
        let mut end = self.header.len() as u64;
        for v in &self.vars {
            let e = if v.place.record {
                v.place
                    .begin
                    .saturating_add(self.numrecs.saturating_mul(self.recsize))
            } else {
                v.place.begin.saturating_add(v.place.vsize)
            };
            end = end.max(e);
        }
        end
    }

    /// Validate `ds` for the format and compute the whole layout.
    fn new(ds: &Dataset, opts: &WriteOptions) -> Result<Plan, ClassicError> {
        let format = opts.format;
        if !format.is_classic_file() {
            return Err(ClassicError::Netcdf4Only {
                what: "the output".into(),
                feature: format!("the {} format", format.kind_name()),
            });
        }
        if let Some(&g) = ds.groups[0].groups.first() {
            return Err(ClassicError::Netcdf4Only {
                what: format!("group \"{}\"", ds.groups[g.0].name),
                feature: "groups".into(),
            });
        }
        let root = &ds.groups[0];

        // dimensions
        let mut dim_index = vec![None; ds.dims.len()];
        let mut dims = Vec::with_capacity(root.dims.len());
        let mut unlimited: Option<usize> = None;
        let max_len = match format {
            Format::Classic => i32::MAX as u64 - 3,
            Format::Offset64 => u64::from(u32::MAX) - 3,
            _ => u64::MAX - 3,
        };
        let mut numrecs = 0;
        for (i, &d) in root.dims.iter().enumerate() {
            let dim = ds.dim(d);
            let name = nfc(&dim.name, "dimension")?;
            if dim.unlimited {
                if let Some(u) = unlimited {
                    return Err(ClassicError::SeveralUnlimited {
                        first: ds.dims[u].name.clone(),
                        second: dim.name.clone(),
                    });
                }
                unlimited = Some(d.0);
                numrecs = dim.len;
                let max_recs = if format == Format::Cdf5 {
                    u64::MAX - 1
                } else {
                    u64::from(u32::MAX) - 1
                };
                if numrecs > max_recs {
                    return Err(ClassicError::DimTooLong {
                        dim: dim.name.clone(),
                        len: numrecs,
                        format: fmt_name(format),
                        max: max_recs,
                    });
                }
                dims.push((name, 0));
            } else {
                if dim.len == 0 {
                    return Err(ClassicError::ZeroLengthDim {
                        dim: dim.name.clone(),
                    });
                }
                if dim.len > max_len {
                    return Err(ClassicError::DimTooLong {
                        dim: dim.name.clone(),
                        len: dim.len,
                        format: fmt_name(format),
                        max: max_len,
                    });
                }
                dims.push((name, dim.len));
            }
            dim_index[d.0] = Some(i as u64);
        }

        // global attributes
        let gatts = root
            .atts
            .iter()
            .map(|a| encode_att(ds, a, format, ""))
            .collect::<Result<Vec<_>, _>>()?;

        // variables
        let mut vars = Vec::with_capacity(root.vars.len());
        for &v in &root.vars {
            let var = ds.var(v);
            let what = || format!("variable \"{}\"", var.name);
            let ty = check_type(ds, var.ty, format, what)?;
            check_storage(ds, v)?;
            let mut dimids = Vec::with_capacity(var.dims.len());
            for (k, d) in var.dims.iter().enumerate() {
                let idx = dim_index.get(d.0).copied().flatten().ok_or_else(|| {
                    ClassicError::Netcdf4Only {
                        what: what(),
                        feature: format!(
                            "dimension \"{}\" of another group",
                            ds.dims.get(d.0).map_or("?", |x| x.name.as_str())
                        ),
                    }
                })?;
                if k > 0 && ds.dims[d.0].unlimited {
                    return Err(ClassicError::UnlimitedNotFirst {
                        var: var.name.clone(),
                    });
                }
                dimids.push(idx);
            }
            let record = ds.is_record_var(v);
            let shape = ds.shape(v);
            let (elems, bytes, vsize) =
                var_size(ty, &shape, record).ok_or_else(|| ClassicError::SizeOverflow {
                    var: var.name.clone(),
                })?;
            let atts = var
                .atts
                .iter()
                .map(|a| encode_att(ds, a, format, &var.name))
                .collect::<Result<Vec<_>, _>>()?;
            let fill = match var.att("_FillValue") {
                Some(a) => {
                    if a.ty != NcType::Atomic(ty) {
                        return Err(ClassicError::BadFillValue {
                            var: var.name.clone(),
                            reason: format!(
                                "has type {}, but the variable has type {}",
                                ds.type_name(a.ty),
                                ty.cdl_name()
                            ),
                        });
                    }
                    if a.values.len() != 1 {
                        return Err(ClassicError::BadFillValue {
                            var: var.name.clone(),
                            reason: format!("has {} values; it needs exactly one", a.values.len()),
                        });
                    }
                    let mut b = Vec::new();
                    encode_be(&a.values, &mut b);
                    b
                }
                None => {
                    let mut b = Vec::new();
                    encode_be(&nc_dataset::default_fill(ty), &mut b);
                    b
                }
            };
            // ncgen writes a variable's data section whole (padded with fill values), and
            // nothing for a variable without one
            let given_records = if opts.only_given_data && var.given_len().is_none() {
                0
            } else if record {
                numrecs
            } else {
                1
            };
            vars.push(PlanVar {
                id: v,
                name: nfc(&var.name, "variable")?,
                ty,
                dimids,
                shape,
                atts,
                place: VarPlace {
                    begin: 0,
                    elems,
                    bytes,
                    vsize,
                    record,
                },
                fill,
                fill_on: opts.fill && var.storage.no_fill != Some(true),
                given_records,
            });
        }

        let mut plan = Plan {
            format,
            numrecs,
            dims,
            gatts,
            vars,
            recsize: 0,
            header: Vec::new(),
        };
        plan.check_vlens()?;
        // the header's length does not depend on the begins (fixed widths)
        let header_size = plan.encode_header().len() as u64;
        plan.place(header_size)?;
        plan.header = plan.encode_header();
        Ok(plan)
    }

    /// netCDF-C's `NC_check_vlens`: in CDF-1/2 a variable (or one record of it) larger than the
    /// 32-bit limit must be the last fixed-size variable with no record variables, or the last
    /// record variable.
    fn check_vlens(&self) -> Result<(), ClassicError> {
        let vlen_max = match self.format {
            Format::Classic => i32::MAX as u64 - 3,
            Format::Offset64 => u64::from(u32::MAX) - 3,
            _ => return Ok(()),
        };
        let too_large = |p: &PlanVar| p.place.bytes > vlen_max;
        let fixed: Vec<&PlanVar> = self.vars.iter().filter(|v| !v.place.record).collect();
        let recs: Vec<&PlanVar> = self.vars.iter().filter(|v| v.place.record).collect();
        let (limit, cure) = if self.format == Format::Classic {
            (
                "2^31 - 4 bytes (CDF-1)",
                "use the 64-bit offset or cdf5 format",
            )
        } else {
            ("2^32 - 4 bytes (CDF-2)", "use the cdf5 format")
        };
        for (list, kind) in [(&fixed, "fixed-size"), (&recs, "record")] {
            if let Some(pos) = list.iter().position(|v| too_large(v)) {
                let v = list[pos];
                if pos + 1 != list.len() {
                    return Err(ClassicError::VarTooLarge {
                        var: v.name.clone(),
                        reason: format!(
                            "{} bytes{} exceeds {limit}, allowed only for the last {kind} variable",
                            v.place.bytes,
                            if v.place.record { " per record" } else { "" }
                        ),
                        cure,
                    });
                }
                if !v.place.record && !recs.is_empty() {
                    return Err(ClassicError::VarTooLarge {
                        var: v.name.clone(),
                        reason: format!(
                            "{} bytes exceeds {limit}, allowed only when there are no record variables",
                            v.place.bytes
                        ),
                        cure,
                    });
                }
            }
        }
        Ok(())
    }

    /// Assign `begin`s: fixed-size variables right after the header, then record variables.
    fn place(&mut self, header_size: u64) -> Result<(), ClassicError> {
        let max_begin = if self.format == Format::Classic {
            i32::MAX as u64
        } else {
            u64::MAX
        };
        let mut index = header_size;
        for rec_pass in [false, true] {
            for v in self.vars.iter_mut().filter(|v| v.place.record == rec_pass) {
                if index > max_begin {
                    return Err(ClassicError::VarTooLarge {
                        var: v.name.clone(),
                        reason: format!(
                            "its data would begin at byte {index}, past the 2^31 - 1 offset limit of CDF-1"
                        ),
                        cure: "use the 64-bit offset or cdf5 format",
                    });
                }
                v.place.begin = index;
                index =
                    index
                        .checked_add(v.place.vsize)
                        .ok_or_else(|| ClassicError::SizeOverflow {
                            var: v.name.clone(),
                        })?;
            }
        }
        let places: Vec<VarPlace> = self.vars.iter().map(|v| v.place.clone()).collect();
        self.recsize = record_size(&places).ok_or(ClassicError::SizeOverflow {
            var: "(all record variables)".into(),
        })?;
        Ok(())
    }

    /// The header bytes with the current begins.
    fn encode_header(&self) -> Vec<u8> {
        let cw = count_width(self.format);
        let ow = offset_width(self.format);
        let mut h = Vec::with_capacity(1024);
        let put = |h: &mut Vec<u8>, x: u64, w: usize| {
            if w == 8 {
                h.extend_from_slice(&x.to_be_bytes());
            } else {
                h.extend_from_slice(&(x as u32).to_be_bytes());
            }
        };
        let put_name = |h: &mut Vec<u8>, name: &str| {
            put(h, name.len() as u64, cw);
            h.extend_from_slice(name.as_bytes());
            // header padding is zero bytes
            h.resize(h.len().next_multiple_of(4), 0);
        };
        let put_atts = |h: &mut Vec<u8>, atts: &[(String, AtomicType, Vec<u8>, u64)]| {
            if atts.is_empty() {
                put(h, 0, 4);
                put(h, 0, cw);
                return;
            }
            put(h, u64::from(TAG_ATTRIBUTE), 4);
            put(h, atts.len() as u64, cw);
            for (name, ty, bytes, n) in atts {
                put_name(h, name);
                put(h, u64::from(ty.code()), 4);
                put(h, *n, cw);
                h.extend_from_slice(bytes);
                h.resize(h.len().next_multiple_of(4), 0);
            }
        };
        h.extend_from_slice(b"CDF");
        h.push(version_byte(self.format));
        put(&mut h, self.numrecs, cw);
        if self.dims.is_empty() {
            put(&mut h, 0, 4);
            put(&mut h, 0, cw);
        } else {
            put(&mut h, u64::from(TAG_DIMENSION), 4);
            put(&mut h, self.dims.len() as u64, cw);
            for (name, len) in &self.dims {
                put_name(&mut h, name);
                put(&mut h, *len, cw);
            }
        }
        put_atts(&mut h, &self.gatts);
        if self.vars.is_empty() {
            put(&mut h, 0, 4);
            put(&mut h, 0, cw);
        } else {
            put(&mut h, u64::from(TAG_VARIABLE), 4);
            put(&mut h, self.vars.len() as u64, cw);
            for v in &self.vars {
                put_name(&mut h, &v.name);
                put(&mut h, v.dimids.len() as u64, cw);
                for &d in &v.dimids {
                    put(&mut h, d, cw);
                }
                put_atts(&mut h, &v.atts);
                put(&mut h, u64::from(v.ty.code()), 4);
                // "Note on vsize": 2^32 - 1 stands for sizes that do not fit 32 bits
                let vsize = if cw == 4 && v.place.vsize > u64::from(u32::MAX) - 3 {
                    u64::from(u32::MAX)
                } else {
                    v.place.vsize
                };
                put(&mut h, vsize, cw);
                put(&mut h, v.place.begin, ow);
            }
        }
        h
    }

    /// The write pass.
    fn write<W: Write>(
        &self,
        out: &mut W,
        ds: &Dataset,
        src: &dyn DataSource,
        opts: &WriteOptions,
    ) -> Result<(), ClassicError> {
        let mut w = Sink { out, written: 0 };
        w.put(&self.header)?;
        if self.dims.is_empty() && self.gatts.is_empty() && self.vars.is_empty() {
            // netCDF-C leaves a completely empty file at one 4096-byte I/O block of zeros
            let pad = EMPTY_FILE_LEN.saturating_sub(self.header.len() as u64);
            return w.pattern(&[], false, pad);
        }
        for v in self.vars.iter().filter(|v| !v.place.record) {
            let full: Vec<u64> = v.shape.clone();
            let start = vec![0; full.len()];
            if v.given_records > 0 {
                stream(&mut w, ds, src, v, &start, &full)?;
            } else {
                w.pattern(&v.fill, v.fill_on, v.place.bytes)?;
            }
            w.pattern_from(
                &v.fill,
                v.fill_on,
                v.place.bytes,
                v.place.vsize - v.place.bytes,
            )?;
        }
        self.write_records(&mut w, ds, src, opts)?;
        let header_len = self.header.len() as u64;
        if header_len > HEADER_CHUNK {
            let min_len = header_len.next_multiple_of(HEADER_CHUNK);
            w.pattern(&[], false, min_len.saturating_sub(w.written))?;
        }
        Ok(())
    }

    /// The records' layout for [`DataSource::stored_records`], when records hold the record
    /// variables back to back with no padding and every record comes from the source.
    fn record_layout(&self, recs: &[&PlanVar]) -> Option<RecordLayout> {
        let dense = recs.len() == 1 || recs.iter().all(|v| v.place.vsize == v.place.bytes);
        let sum: u64 = recs.iter().map(|v| v.place.bytes).sum();
        let all = recs.iter().all(|v| v.given_records >= self.numrecs);
        (dense && all && sum == self.recsize).then(|| RecordLayout {
            recsize: self.recsize,
            vars: recs.iter().map(|v| (v.id, v.place.bytes)).collect(),
        })
    }

    /// Records as the source stores them ([`DataSource::stored_records`]), `per_batch` at a
    /// time: a thread reads the next batch while this one writes the last. Returns the record
    /// from which the source did not offer them (`numrecs` when it offered all).
    fn write_stored_records<W: Write>(
        &self,
        w: &mut Sink<'_, W>,
        ds: &Dataset,
        src: &dyn DataSource,
        layout: &RecordLayout,
        per_batch: u64,
        first: &PlanVar,
    ) -> Result<u64, ClassicError> {
        type Batch = (u64, u64, Option<Result<Vec<u8>, nc_dataset::DataError>>);
        let numrecs = self.numrecs;
        let recsize = self.recsize;
        let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(1);
        // written buffers go back to the reader: no fresh pages per batch
        let (back, spare) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::scope(|scope| {
            scope.spawn(move || {
                let mut r0 = 0;
                while r0 < numrecs {
                    let n = per_batch.min(numrecs - r0);
                    let mut buf = spare.try_recv().unwrap_or_default();
                    buf.clear();
                    let got = src
                        .stored_records(ds, r0, n, layout, &mut buf)
                        .map(|r| r.map(|()| buf));
                    let go_on = matches!(got, Some(Ok(_)));
                    if tx.send((r0, n, got)).is_err() || !go_on {
                        return;
                    }
                    r0 += n;
                }
            });
            let mut done = 0;
            for (r0, n, got) in rx {
                match got {
                    Some(Ok(buf)) if buf.len() as u64 == n * recsize => {
                        w.put(&buf)?;
                        done = r0 + n;
                        let _ = back.send(buf);
                    }
                    Some(Err(source)) => {
                        return Err(ClassicError::Source {
                            var: first.name.clone(),
                            source,
                        })
                    }
                    _ => return Ok(r0),
                }
            }
            Ok(done)
        })
    }

    /// The records, interleaved.
    fn write_records<W: Write>(
        &self,
        w: &mut Sink<'_, W>,
        ds: &Dataset,
        src: &dyn DataSource,
        opts: &WriteOptions,
    ) -> Result<(), ClassicError> {
        let recs: Vec<&PlanVar> = self.vars.iter().filter(|v| v.place.record).collect();
        if recs.is_empty() || self.numrecs == 0 {
            return Ok(());
        }
        // record padding is filled in fill mode regardless of per-variable _NoFill (netCDF-C)
        let pad_fill = opts.fill;
        let single = recs.len() == 1;
        let pad_of = |v: &PlanVar| {
            if single {
                0
            } else {
                v.place.vsize - v.place.bytes
            }
        };
        if self.recsize > 0 && self.recsize <= SLAB {
            // batches of whole records: read each variable's slab once per batch
            let per_batch = (SLAB / self.recsize).max(1);
            // records stored as the output stores them: moved whole, a batch read while the
            // one before is written
            let mut r0 = match self.record_layout(&recs) {
                Some(layout) => {
                    self.write_stored_records(w, ds, src, &layout, per_batch, recs[0])?
                }
                None => 0,
            };
            while r0 < self.numrecs {
                let n = per_batch.min(self.numrecs - r0);
                let mut bufs = Vec::with_capacity(recs.len());
                for v in &recs {
                    bufs.push(record_bytes(ds, src, v, r0, n, pad_fill)?);
                }
                for r in 0..n as usize {
                    for (v, b) in recs.iter().zip(&bufs) {
                        let sz = v.place.bytes as usize;
                        w.put(&b[r * sz..(r + 1) * sz])?;
                        w.pattern_from(&v.fill, pad_fill, v.place.bytes, pad_of(v))?;
                    }
                }
                r0 += n;
            }
        } else {
            for r in 0..self.numrecs {
                for v in &recs {
                    if r < v.given_records {
                        let mut start = vec![0; v.shape.len()];
                        let mut count = v.shape.clone();
                        start[0] = r;
                        count[0] = 1;
                        stream(w, ds, src, v, &start, &count)?;
                    } else {
                        w.pattern(&v.fill, pad_fill, v.place.bytes)?;
                    }
                    w.pattern_from(&v.fill, pad_fill, v.place.bytes, pad_of(v))?;
                }
            }
        }
        Ok(())
    }
}

/// Records `r0 .. r0 + n` of a record variable as bytes (unread records as fill or zeros).
fn record_bytes(
    ds: &Dataset,
    src: &dyn DataSource,
    v: &PlanVar,
    r0: u64,
    n: u64,
    fill: bool,
) -> Result<Vec<u8>, ClassicError> {
    let total = (n * v.place.bytes) as usize;
    let mut buf = Vec::with_capacity(total);
    let have = v.given_records.saturating_sub(r0).min(n);
    if have > 0 && v.place.elems > 0 {
        let mut start = vec![0; v.shape.len()];
        let mut count = v.shape.clone();
        start[0] = r0;
        count[0] = have;
        buf = read_be(ds, src, v, &start, &count)?;
    }
    let missing = total.saturating_sub(buf.len());
    if fill {
        buf.extend(v.fill.iter().cycle().take(missing));
    } else {
        buf.resize(total, 0);
    }
    Ok(buf)
}

/// A slab from the source as big-endian bytes: the source's little-endian bytes swapped in
/// place when it offers them, else its typed values encoded.
fn read_be(
    ds: &Dataset,
    src: &dyn DataSource,
    v: &PlanVar,
    start: &[u64],
    count: &[u64],
) -> Result<Vec<u8>, ClassicError> {
    let Some(le) = src.read_le_bytes(ds, v.id, Slab::new(start, count)) else {
        let vals = read_checked(ds, src, v, start, count)?;
        let mut buf = Vec::new();
        encode_be(&vals, &mut buf);
        return Ok(buf);
    };
    let mut bytes = le.map_err(|source| ClassicError::Source {
        var: v.name.clone(),
        source,
    })?;
    let expected: u64 = count.iter().product();
    let size = ext_size(v.ty);
    if bytes.len() as u64 != expected * size {
        return Err(ClassicError::SourceMismatch {
            var: v.name.clone(),
            expected,
            got: bytes.len() as u64 / size,
            ty: v.ty.cdl_name(),
            got_ty: v.ty.cdl_name(),
        });
    }
    // element sizes known to the compiler: the swaps are vectorised
    match size {
        2 => crate::read::reverse_each::<2>(&mut bytes),
        4 => crate::read::reverse_each::<4>(&mut bytes),
        8 => crate::read::reverse_each::<8>(&mut bytes),
        _ => {}
    }
    Ok(bytes)
}

/// Read a slab from the source and check its type and length.
fn read_checked(
    ds: &Dataset,
    src: &dyn DataSource,
    v: &PlanVar,
    start: &[u64],
    count: &[u64],
) -> Result<Values, ClassicError> {
    let vals = src
        .read(ds, v.id, Slab::new(start, count))
        .map_err(|source| ClassicError::Source {
            var: v.name.clone(),
            source,
        })?;
    let expected: u64 = count.iter().product();
    if vals.atomic_type() != Some(v.ty) || vals.len() as u64 != expected {
        return Err(ClassicError::SourceMismatch {
            var: v.name.clone(),
            expected,
            got: vals.len() as u64,
            ty: v.ty.cdl_name(),
            got_ty: vals
                .atomic_type()
                .map_or("non-atomic", AtomicType::cdl_name),
        });
    }
    Ok(vals)
}

/// Write the slab `start`/`count` of `v` in row-major order, reading at most about [`SLAB`]
/// bytes at a time.
fn stream<W: Write>(
    w: &mut Sink<'_, W>,
    ds: &Dataset,
    src: &dyn DataSource,
    v: &PlanVar,
    start: &[u64],
    count: &[u64],
) -> Result<(), ClassicError> {
    let rank = count.len();
    if count.contains(&0) {
        return Ok(());
    }
    let xsz = ext_size(v.ty);
    let mut buf = Vec::new();
    if rank == 0 {
        let vals = read_checked(ds, src, v, start, count)?;
        encode_be(&vals, &mut buf);
        return w.put(&buf);
    }
    // inner(j) = values in one index step of dimension j
    let inner = |j: usize| count[j + 1..].iter().product::<u64>();
    let mut j = rank - 1;
    while j > 0 && inner(j - 1).saturating_mul(xsz) <= SLAB {
        j -= 1;
    }
    let step = (SLAB / inner(j).saturating_mul(xsz).max(1)).max(1);
    let mut idx = vec![0u64; j];
    let mut s = start.to_vec();
    let mut c = count.to_vec();
    loop {
        for d in 0..j {
            s[d] = start[d] + idx[d];
            c[d] = 1;
        }
        let mut k = 0;
        while k < count[j] {
            s[j] = start[j] + k;
            c[j] = step.min(count[j] - k);
            buf = read_be(ds, src, v, &s, &c)?;
            w.put(&buf)?;
            k += c[j];
        }
        if !nc_dataset::next_index(&mut idx, count) {
            return Ok(());
        }
    }
}

/// The output, with I/O errors mapped and a count of bytes written.
struct Sink<'a, W: Write> {
    out: &'a mut W,
    written: u64,
}

impl<W: Write> Sink<'_, W> {
    fn put(&mut self, b: &[u8]) -> Result<(), ClassicError> {
        self.written += b.len() as u64;
        self.out.write_all(b).map_err(|e| ClassicError::Io {
            what: "writing the file".into(),
            source: e,
        })
    }

    /// `n` bytes of the fill pattern (or zeros when `fill` is false).
    fn pattern(&mut self, one: &[u8], fill: bool, n: u64) -> Result<(), ClassicError> {
        self.pattern_from(one, fill, 0, n)
    }

    /// `n` bytes of the fill pattern as it continues at byte `at` of the variable (padding
    /// continues the pattern of the values before it).
    fn pattern_from(
        &mut self,
        one: &[u8],
        fill: bool,
        at: u64,
        n: u64,
    ) -> Result<(), ClassicError> {
        const BLOCK: usize = 64 * 1024;
        if n == 0 {
            return Ok(());
        }
        if n <= 8 {
            // record padding: no allocation
            let mut small = [0u8; 8];
            if fill && !one.is_empty() {
                let skip = (at % one.len() as u64) as usize;
                for (d, s) in small.iter_mut().zip(one.iter().cycle().skip(skip)) {
                    *d = *s;
                }
            }
            return self.put(&small[..n as usize]);
        }
        let block: Vec<u8> = if fill && !one.is_empty() {
            let skip = (at % one.len() as u64) as usize;
            one.iter()
                .cycle()
                .skip(skip)
                .take(BLOCK.min(n as usize).next_multiple_of(one.len()))
                .copied()
                .collect()
        } else {
            vec![0u8; BLOCK.min(n as usize)]
        };
        let mut left = n;
        while left > 0 {
            let k = (block.len() as u64).min(left) as usize;
            self.put(&block[..k])?;
            left -= k as u64;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_continues_and_blocks_repeat_whole_values() {
        let mut out = Vec::new();
        let mut s = Sink {
            out: &mut out,
            written: 0,
        };
        assert!(s.pattern_from(&[0x80, 0x01], true, 6, 2).is_ok());
        assert!(s.pattern_from(&[0x81], true, 5, 3).is_ok());
        assert!(s.pattern_from(&[0x81], false, 5, 3).is_ok());
        assert_eq!(out, [0x80, 0x01, 0x81, 0x81, 0x81, 0, 0, 0]);
        let mut big = Vec::new();
        let mut s = Sink {
            out: &mut big,
            written: 0,
        };
        assert!(s.pattern(&[1, 2, 3, 4, 5, 6, 7, 8], true, 200_000).is_ok());
        assert_eq!(big.len(), 200_000);
        assert!(big
            .chunks(8)
            .all(|c| c == &[1, 2, 3, 4, 5, 6, 7, 8][..c.len()]));
    }
}
