//! Virtual datasets (data layout class 3): the mapping block in the global heap, dataspace
//! selections, and reading a hyperslab of a virtual dataset from its source datasets.
//!
//! HDF5 File Format Specification v3: IV.A.2.i (data layout message version 4, virtual storage:
//! global heap collection address and object index), III.F (global heap block for virtual
//! datasets: version, entry count, then per entry the source file name, the source dataset
//! name, the source selection and the virtual selection, closed by a lookup3 checksum) and
//! VIII.A (dataspace selection encoding: none, points, hyperslabs, all).
//!
//! The k-th element of a mapping's virtual selection takes the value of the k-th element of
//! its source selection, both counted in selection order: row-major over the selected
//! coordinates for hyperslabs and "all", listed order for points. Virtual elements no mapping
//! covers, or whose source is missing, read as the virtual dataset's fill value.

use crate::meta::VarInfo;
use crate::read::ReadCache;
use crate::Hdf5Error;

/// Most dimensions a dataspace has (HDF5's `H5S_MAX_RANK`).
const MAX_RANK: usize = 32;
/// Most blocks of an irregular hyperslab, and most points of a point selection, we take.
const MAX_BLOCKS: u64 = 1 << 22;
/// Most coordinates (elements times rank) of an irregular hyperslab we enumerate when it is
/// not a product of per-dimension intervals.
const MAX_ENUMERATED: u64 = 1 << 22;
/// The unlimited count or block of a hyperslab (`H5S_UNLIMITED`).
pub(crate) const UNLIMITED: u64 = u64::MAX;

/// A dataspace selection as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Selection {
    /// Nothing selected.
    None,
    /// The whole extent.
    All,
    /// Points, in their listed order (`rank` coordinates each).
    Points { rank: usize, coords: Vec<u64> },
    /// A regular hyperslab: per dimension start, stride, count, block (`UNLIMITED` allowed in
    /// count and block).
    Regular {
        start: Vec<u64>,
        stride: Vec<u64>,
        count: Vec<u64>,
        block: Vec<u64>,
    },
    /// An irregular hyperslab: blocks with their first and last (inclusive) coordinates.
    Blocks {
        rank: usize,
        blocks: Vec<(Vec<u64>, Vec<u64>)>,
    },
}

/// One mapping of a virtual dataset: which source, which elements of it, which of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Source file name as stored ("." is the virtual dataset's own file).
    pub file: String,
    /// Source dataset path in that file.
    pub dataset: String,
    /// Selection in the source dataset.
    pub source: Selection,
    /// Selection in the virtual dataset.
    pub virtual_sel: Selection,
}

/// The mappings of a virtual dataset, sources resolved when the file was opened.
pub(crate) struct Virtual {
    pub maps: Vec<Source>,
}

impl std::fmt::Debug for Virtual {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Virtual")
            .field("mappings", &self.maps.len())
            .finish()
    }
}

/// Where the elements of one mapping come from.
pub(crate) enum Source {
    /// The source file or dataset is not there: the elements read as the fill value.
    Missing,
    /// The source cannot be used: reading the virtual dataset fails with this reason.
    Unusable(String),
    /// The source dataset, ready to read.
    Found(Box<Found>),
}

/// A source dataset found: its storage, its name for messages, the two selections resolved,
/// and its own read caches.
pub(crate) struct Found {
    pub info: VarInfo,
    pub name: String,
    pub vsel: Resolved,
    pub ssel: Resolved,
    pub cache: ReadCache,
}

/// A source file or dataset name with HDF5's `%%` escape undone; an error for the
/// printf-style `%b` (block number) names of unlimited mappings, which are not supported.
pub(crate) fn literal_name(name: &str) -> Result<String, String> {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            _ => {
                return Err(format!(
                "source name \"{name}\" is printf-style (%b, an unlimited mapping): not supported"
            ))
            }
        }
    }
    Ok(out)
}

/// Most blocks an unlimited mapping is expanded into.
const MAX_UNLIMITED_BLOCKS: u64 = 4096;

/// `name` with the printf-style block number `%b` replaced by `block` (`%%` kept for
/// [`literal_name`]); an error for any other `%` sequence.
fn printf_name(name: &str, block: u64) -> Result<String, String> {
    let mut out = String::with_capacity(name.len() + 8);
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push_str("%%"),
            Some('b') => out.push_str(&block.to_string()),
            other => {
                return Err(format!(
                "source name \"{name}\": printf-style sequence %{} is not known (only %b and %%)",
                other.map(String::from).unwrap_or_default()
            ))
            }
        }
    }
    Ok(out)
}

/// True when a name uses HDF5's printf-style block number.
fn is_printf(name: &str) -> bool {
    name.replace("%%", "").contains('%')
}

/// The one unlimited dimension of a regular hyperslab, with that hyperslab's fields.
fn unlimited_dim(sel: &Selection) -> Result<Option<usize>, String> {
    let Selection::Regular { count, block, .. } = sel else {
        return Ok(None);
    };
    if block.contains(&UNLIMITED) {
        return Err("an unlimited hyperslab block is not supported".to_string());
    }
    let dims: Vec<usize> = (0..count.len())
        .filter(|&d| count[d] == UNLIMITED)
        .collect();
    match dims.as_slice() {
        [] => Ok(None),
        [d] => Ok(Some(*d)),
        _ => Err("a hyperslab unlimited in several dimensions is not supported".to_string()),
    }
}

/// `sel` (regular) narrowed to its `i`-th block along dimension `d`.
fn nth_block(sel: &Selection, d: usize, i: u64) -> Option<Selection> {
    let Selection::Regular {
        start,
        stride,
        count,
        block,
    } = sel
    else {
        return None;
    };
    let mut start = start.clone();
    let mut count = count.clone();
    start[d] = stride[d].checked_mul(i)?.checked_add(start[d])?;
    count[d] = 1;
    Some(Selection::Regular {
        start,
        stride: stride.clone(),
        count,
        block: block.clone(),
    })
}

/// For a printf-style unlimited mapping: its unlimited dimension and where its last
/// available block ends, probing block numbers 0, 1, ... until `exists(file, dataset)` says
/// a source is missing (HDF5's default printf gap of 0). `None` for other mappings.
pub(crate) fn printf_extent(
    e: &Entry,
    mut exists: impl FnMut(&str, &str) -> bool,
) -> Option<(usize, u64)> {
    if !(is_printf(&e.file) || is_printf(&e.dataset)) {
        return None;
    }
    let d = unlimited_dim(&e.virtual_sel).ok()??;
    let Selection::Regular {
        start,
        stride,
        block,
        ..
    } = &e.virtual_sel
    else {
        return None;
    };
    let mut n = 0u64;
    while n < MAX_UNLIMITED_BLOCKS {
        let file = printf_name(&e.file, n)
            .and_then(|f| literal_name(&f))
            .ok()?;
        let dset = printf_name(&e.dataset, n)
            .and_then(|f| literal_name(&f))
            .ok()?;
        if !exists(&file, &dset) {
            break;
        }
        n += 1;
    }
    let end = match n {
        0 => 0,
        n => stride[d]
            .checked_mul(n - 1)?
            .checked_add(start[d])?
            .checked_add(block[d])?,
    };
    Some((d, end))
}

/// True for a mapping whose virtual selection is unlimited.
pub(crate) fn is_unlimited(e: &Entry) -> bool {
    matches!(unlimited_dim(&e.virtual_sel), Ok(Some(_)))
}

/// For an unlimited mapping of one source (unlimited source selection, no printf-style
/// name): its unlimited virtual dimension and where the virtual block matching the last
/// source block wholly inside `src_extent` ends. `None` for other mappings.
pub(crate) fn unlimited_extent(e: &Entry, src_extent: &[u64]) -> Option<(usize, u64)> {
    let d = unlimited_dim(&e.virtual_sel).ok()??;
    let sd = unlimited_dim(&e.source).ok()??;
    let (
        Selection::Regular {
            start,
            stride,
            block,
            ..
        },
        Selection::Regular {
            start: ss,
            stride: st,
            block: sb,
            ..
        },
    ) = (&e.virtual_sel, &e.source)
    else {
        return None;
    };
    let ext = *src_extent.get(sd)?;
    let first_end = ss[sd].checked_add(sb[sd])?;
    let n = if ext < first_end {
        0
    } else {
        (ext - first_end) / st[sd].max(1) + 1
    };
    let end = match n {
        0 => 0,
        n => stride[d]
            .checked_mul(n - 1)?
            .checked_add(start[d])?
            .checked_add(block[d])?,
    };
    Some((d, end))
}

/// An unlimited mapping (a virtual hyperslab with an unlimited count) as one mapping per
/// block that starts inside the virtual extent `vshape`: with printf-style source names
/// (`%b`) block `i` comes from the source named with `i`; otherwise the source selection is
/// unlimited too and block `i` comes from its `i`-th block. `None` for a limited mapping.
pub(crate) fn expand_unlimited(e: &Entry, vshape: &[u64]) -> Result<Option<Vec<Entry>>, String> {
    let printf = is_printf(&e.file) || is_printf(&e.dataset);
    let Some(d) = unlimited_dim(&e.virtual_sel)? else {
        if printf {
            return Err(format!(
                "source name \"{}\" \"{}\" is printf-style but the mapping is not unlimited",
                e.file, e.dataset
            ));
        }
        return Ok(None);
    };
    let Selection::Regular { start, stride, .. } = &e.virtual_sel else {
        return Ok(None);
    };
    let ext = vshape.get(d).copied().unwrap_or(0);
    let (s, t) = (start[d], stride[d].max(1));
    let n = if s >= ext { 0 } else { (ext - s).div_ceil(t) };
    if n > MAX_UNLIMITED_BLOCKS {
        return Err(format!(
            "an unlimited mapping of {n} blocks (at most {MAX_UNLIMITED_BLOCKS} are read)"
        ));
    }
    let source_dim = unlimited_dim(&e.source)?;
    if printf == source_dim.is_some() {
        return Err(if printf {
            "a printf-style mapping with an unlimited source selection is not supported".to_string()
        } else {
            "an unlimited mapping whose source selection is limited is not supported".to_string()
        });
    }
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let mut virtual_sel = nth_block(&e.virtual_sel, d, i)
            .ok_or_else(|| "unlimited mapping block overflows".to_string())?;
        // the last block may end past the extent: its first rows are mapped
        if let Selection::Regular { start, block, .. } = &mut virtual_sel {
            block[d] = block[d].min(ext - start[d]);
        }
        let (file, dataset, source) = match source_dim {
            Some(sd) => (
                e.file.clone(),
                e.dataset.clone(),
                nth_block(&e.source, sd, i)
                    .ok_or_else(|| "unlimited mapping block overflows".to_string())?,
            ),
            None => (
                printf_name(&e.file, i)?,
                printf_name(&e.dataset, i)?,
                e.source.clone(),
            ),
        };
        out.push(Entry {
            file,
            dataset,
            source,
            virtual_sel,
        });
    }
    Ok(Some(out))
}

/// Bounds-checked little-endian reads over a mapping block.
struct Cur<'a> {
    buf: &'a [u8],
    pos: usize,
    what: &'a str,
}

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Hdf5Error> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| {
                Hdf5Error::invalid(
                    self.what,
                    format!(
                        "virtual dataset mapping block ends early: {n} bytes wanted at byte {} of {}",
                        self.pos,
                        self.buf.len()
                    ),
                )
            })?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn uint(&mut self, n: usize) -> Result<u64, Hdf5Error> {
        let b = self.take(n)?;
        let mut w = [0u8; 8];
        w[..n.min(8)].copy_from_slice(&b[..n.min(8)]);
        Ok(u64::from_le_bytes(w))
    }

    fn u8(&mut self) -> Result<u8, Hdf5Error> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u64, Hdf5Error> {
        self.uint(4)
    }

    /// A value of an encode size of 2, 4 or 8 bytes; all ones is `UNLIMITED`.
    fn sized(&mut self, enc: usize) -> Result<u64, Hdf5Error> {
        let v = self.uint(enc)?;
        let ones = if enc >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * enc)) - 1
        };
        Ok(if v == ones { UNLIMITED } else { v })
    }

    fn cstr(&mut self) -> Result<String, Hdf5Error> {
        let rest = &self.buf[self.pos..];
        let n = rest.iter().position(|&b| b == 0).ok_or_else(|| {
            Hdf5Error::invalid(
                self.what,
                "virtual dataset mapping block: a name has no terminating NUL",
            )
        })?;
        let s = String::from_utf8_lossy(&rest[..n]).into_owned();
        self.pos += n + 1;
        Ok(s)
    }

    fn bad(&self, message: impl Into<String>) -> Hdf5Error {
        Hdf5Error::invalid(
            self.what,
            format!("virtual dataset mapping block: {}", message.into()),
        )
    }

    /// Room for `n` items of `size` bytes is left (checked before allocating).
    fn room(&self, n: u64, size: u64) -> Result<usize, Hdf5Error> {
        let left = (self.buf.len() - self.pos) as u64;
        match n.checked_mul(size) {
            Some(b) if b <= left => Ok(n as usize),
            _ => Err(self.bad(format!(
                "{n} items of {size} bytes do not fit in the {left} bytes left"
            ))),
        }
    }
}

/// The location of a virtual dataset's mapping block: the global heap collection address
/// and object index of a data layout message of class 3 (`None` for other layouts).
pub(crate) fn heap_id(layout: &[u8], os: u8) -> Option<(u64, u32)> {
    // version 4 or 5, class 3, then the collection address and the object index
    if !matches!(layout.first(), Some(4 | 5)) || layout.get(1) != Some(&3) {
        return None;
    }
    let os = usize::from(os);
    let a = layout.get(2..2 + os)?;
    let mut w = [0u8; 8];
    w[..os.min(8)].copy_from_slice(&a[..os.min(8)]);
    let i = layout.get(2 + os..2 + os + 4)?;
    Some((
        u64::from_le_bytes(w),
        u32::from_le_bytes([i[0], i[1], i[2], i[3]]),
    ))
}

/// Parse a mapping block (the global heap object, checksum verified). `ls` is the file's
/// size of lengths; `what` names the virtual dataset.
pub(crate) fn parse_block(block: &[u8], ls: u8, what: &str) -> Result<Vec<Entry>, Hdf5Error> {
    let body = crate::format::object_header::read::verified(
        block,
        0,
        &format!("{what}: virtual dataset mapping block"),
    )
    .map_err(|e| match e {
        Hdf5Error::Checksum {
            stored, computed, ..
        } => Hdf5Error::checksum(
            format!("{what}: virtual dataset mapping block"),
            stored,
            computed,
        ),
        e => e,
    })?;
    let mut c = Cur {
        buf: body,
        pos: 0,
        what,
    };
    let version = c.u8()?;
    if version > 1 {
        return Err(Hdf5Error::unsupported(
            what,
            format!(
                "virtual dataset mapping block version {version} (this reader knows versions 0 and 1)"
            ),
        ));
    }
    let ls = usize::from(ls);
    let n = c.uint(ls)?;
    // each entry holds two names (one byte each at least; version 1: a flags byte and
    // possibly no names) and two selections (12 bytes each)
    let n = c.room(n, if version == 0 { 26 } else { 25 })?;
    let mut out: Vec<Entry> = Vec::with_capacity(n);
    for i in 0..n {
        let (file, dataset) = if version == 0 {
            (c.cstr()?, c.cstr()?)
        } else {
            // version 1 (HDF5 2.0, file format 4.0): a name used before may be stored as
            // the index of the first entry holding it, and the file itself as a flag
            let flags = c.u8()?;
            if flags & !(SHARED_FILE | SHARED_DATASET | SAME_FILE) != 0
                || flags & (SHARED_FILE | SAME_FILE) == SHARED_FILE | SAME_FILE
            {
                return Err(c.bad(format!("entry {i}: flags {flags:#04x} are not known")));
            }
            let file = if flags & SAME_FILE != 0 {
                ".".to_string()
            } else if flags & SHARED_FILE != 0 {
                earlier(&mut c, &out, ls, i, "file")?.file.clone()
            } else {
                c.cstr()?
            };
            let dataset = if flags & SHARED_DATASET != 0 {
                earlier(&mut c, &out, ls, i, "dataset")?.dataset.clone()
            } else {
                c.cstr()?
            };
            (file, dataset)
        };
        let source = selection(&mut c)?;
        let virtual_sel = selection(&mut c)?;
        out.push(Entry {
            file,
            dataset,
            source,
            virtual_sel,
        });
    }
    Ok(out)
}

/// Version 1 entry flags: the source file name is that of an earlier entry (its index follows).
const SHARED_FILE: u8 = 0x01;
/// Version 1 entry flags: the source dataset name is that of an earlier entry (index follows).
const SHARED_DATASET: u8 = 0x02;
/// Version 1 entry flags: the source is in the virtual dataset's own file (".", no name stored).
const SAME_FILE: u8 = 0x04;

/// The earlier entry a version 1 shared name refers to (an index of `ls` bytes).
fn earlier<'e>(
    c: &mut Cur<'_>,
    entries: &'e [Entry],
    ls: usize,
    i: usize,
    which: &str,
) -> Result<&'e Entry, Hdf5Error> {
    let k = c.uint(ls)?;
    usize::try_from(k)
        .ok()
        .and_then(|k| entries.get(k))
        .ok_or_else(|| {
            c.bad(format!(
                "entry {i}: its {which} name is that of entry {k}, which is not an earlier entry"
            ))
        })
}

fn rank_of(c: &Cur<'_>, rank: u64) -> Result<usize, Hdf5Error> {
    if rank == 0 || rank > MAX_RANK as u64 {
        return Err(c.bad(format!("selection rank {rank} (1 to {MAX_RANK} expected)")));
    }
    Ok(rank as usize)
}

fn enc_size(c: &Cur<'_>, enc: u8) -> Result<usize, Hdf5Error> {
    match enc {
        2 | 4 | 8 => Ok(usize::from(enc)),
        e => Err(c.bad(format!("selection encode size {e} (2, 4 or 8 expected)"))),
    }
}

/// One serialised selection (spec VIII.A, "Dataspace Selection").
fn selection(c: &mut Cur<'_>) -> Result<Selection, Hdf5Error> {
    let ty = c.u32()?;
    let version = c.u32()?;
    match (ty, version) {
        (0 | 3, 1) => {
            c.take(8)?;
            Ok(if ty == 0 {
                Selection::None
            } else {
                Selection::All
            })
        }
        (1, 1) => {
            c.take(8)?; // reserved, length
            let r = c.u32()?;
            let rank = rank_of(c, r)?;
            let n = c.u32()?;
            points(c, rank, n, 4)
        }
        (1, 2) => {
            let e = c.u8()?;
            let enc = enc_size(c, e)?;
            let r = c.u32()?;
            let rank = rank_of(c, r)?;
            let n = c.uint(enc)?;
            points(c, rank, n, enc)
        }
        (2, 1) => {
            c.take(8)?; // reserved, length
            let r = c.u32()?;
            let rank = rank_of(c, r)?;
            let n = c.u32()?;
            blocks(c, rank, n, 4)
        }
        (2, 2) => {
            c.u8()?; // flags: always regular
            c.take(4)?; // length
            let r = c.u32()?;
            let rank = rank_of(c, r)?;
            regular(c, rank, 8)
        }
        (2, 3) => {
            let flags = c.u8()?;
            let e = c.u8()?;
            let enc = enc_size(c, e)?;
            let r = c.u32()?;
            let rank = rank_of(c, r)?;
            if flags & 1 != 0 {
                regular(c, rank, enc)
            } else {
                let n = c.uint(enc)?;
                blocks(c, rank, n, enc)
            }
        }
        (0..=3, v) => Err(c.bad(format!("selection type {ty} version {v} is not known"))),
        (t, _) => Err(c.bad(format!("selection type {t} (0 to 3 expected)"))),
    }
}

fn points(c: &mut Cur<'_>, rank: usize, n: u64, enc: usize) -> Result<Selection, Hdf5Error> {
    if n > MAX_BLOCKS {
        return Err(c.bad(format!("{n} points (at most {MAX_BLOCKS} are read)")));
    }
    let total = c.room(n.saturating_mul(rank as u64), enc as u64)?;
    let mut coords = Vec::with_capacity(total);
    for _ in 0..total {
        coords.push(c.uint(enc)?);
    }
    Ok(Selection::Points { rank, coords })
}

fn blocks(c: &mut Cur<'_>, rank: usize, n: u64, enc: usize) -> Result<Selection, Hdf5Error> {
    if n > MAX_BLOCKS {
        return Err(c.bad(format!(
            "{n} hyperslab blocks (at most {MAX_BLOCKS} are read)"
        )));
    }
    let n = c.room(n, 2 * rank as u64 * enc as u64)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let mut lo = Vec::with_capacity(rank);
        let mut hi = Vec::with_capacity(rank);
        for _ in 0..rank {
            lo.push(c.uint(enc)?);
        }
        for _ in 0..rank {
            hi.push(c.uint(enc)?);
        }
        if lo.iter().zip(&hi).any(|(a, b)| a > b) {
            return Err(c.bad(format!(
                "hyperslab block {lo:?}..{hi:?} ends before it starts"
            )));
        }
        out.push((lo, hi));
    }
    Ok(Selection::Blocks { rank, blocks: out })
}

fn regular(c: &mut Cur<'_>, rank: usize, enc: usize) -> Result<Selection, Hdf5Error> {
    let (mut start, mut stride, mut count, mut block) = (
        Vec::with_capacity(rank),
        Vec::with_capacity(rank),
        Vec::with_capacity(rank),
        Vec::with_capacity(rank),
    );
    for _ in 0..rank {
        start.push(c.sized(enc)?);
        stride.push(c.sized(enc)?);
        count.push(c.sized(enc)?);
        block.push(c.sized(enc)?);
    }
    Ok(Selection::Regular {
        start,
        stride,
        count,
        block,
    })
}

/// The selected coordinates of one dimension of a product selection.
#[derive(Debug, Clone)]
pub(crate) enum Axis {
    /// `count` blocks of `block` coordinates, `stride` apart, from `start` (stride >= block).
    Regular {
        start: u64,
        stride: u64,
        count: u64,
        block: u64,
    },
    /// Sorted, disjoint half-open intervals, with the number of coordinates before each.
    List(Vec<(u64, u64, u64)>),
}

impl Axis {
    fn len(&self) -> u64 {
        match self {
            Axis::Regular { count, block, .. } => count * block,
            Axis::List(v) => v.last().map_or(0, |&(lo, hi, before)| before + (hi - lo)),
        }
    }

    /// The coordinate of the `r`-th selected position (`r < len`).
    fn nth(&self, r: u64) -> u64 {
        match self {
            Axis::Regular {
                start,
                stride,
                block,
                ..
            } => {
                if *block == 0 {
                    return *start;
                }
                start + (r / block) * stride + r % block
            }
            Axis::List(v) => {
                let i = v.partition_point(|&(_, _, before)| before <= r) - 1;
                let (lo, _, before) = v[i];
                lo + (r - before)
            }
        }
    }

    /// The rank of coordinate `x` among the selected ones, when it is selected.
    fn rank(&self, x: u64) -> Option<u64> {
        match self {
            Axis::Regular {
                start,
                stride,
                count,
                block,
            } => {
                let d = x.checked_sub(*start)?;
                let (i, j) = (d / stride, d % stride);
                (i < *count && j < *block).then(|| i * block + j)
            }
            Axis::List(v) => {
                let i = v.partition_point(|&(lo, _, _)| lo <= x).checked_sub(1)?;
                let (lo, hi, before) = v[i];
                (x < hi).then(|| before + (x - lo))
            }
        }
    }
}

/// A selection resolved against an extent, ready to number its elements.
#[derive(Debug, Clone)]
pub(crate) enum Resolved {
    /// The product of per-dimension selections (all, regular and most irregular hyperslabs).
    Product(Vec<Axis>),
    /// Points in selection order (`rank` coordinates each).
    Points { rank: usize, coords: Vec<u64> },
}

impl Resolved {
    /// Coordinates held in memory (point lists; a product holds its intervals only).
    pub fn coords_held(&self) -> u64 {
        match self {
            Resolved::Product(axes) => axes
                .iter()
                .map(|a| match a {
                    Axis::List(v) => v.len() as u64,
                    Axis::Regular { .. } => 1,
                })
                .sum(),
            Resolved::Points { coords, .. } => coords.len() as u64,
        }
    }

    /// Number of selected elements.
    pub fn len(&self) -> u64 {
        match self {
            Resolved::Product(axes) => axes
                .iter()
                .try_fold(1u64, |a, x| a.checked_mul(x.len()))
                .unwrap_or(u64::MAX),
            Resolved::Points { rank, coords } => (coords.len() / (*rank).max(1)) as u64,
        }
    }

    /// The coordinates of the `k`-th selected element (`k < len`) into `out`.
    fn nth(&self, k: u64, out: &mut [u64]) {
        match self {
            Resolved::Product(axes) => {
                let mut k = k;
                for (d, a) in axes.iter().enumerate().rev() {
                    let n = a.len().max(1);
                    out[d] = a.nth(k % n);
                    k /= n;
                }
            }
            Resolved::Points { rank, coords } => {
                let p = k as usize * rank;
                out.copy_from_slice(&coords[p..p + rank]);
            }
        }
    }

    /// Call `f(position in the request, k)` for each selected element inside the request
    /// box `start`/`count` (row-major position), in row-major order of the request.
    fn for_each_in(&self, start: &[u64], count: &[u64], mut f: impl FnMut(u64, u64)) {
        match self {
            Resolved::Points { rank, coords } => {
                for (k, p) in coords.chunks_exact((*rank).max(1)).enumerate() {
                    let mut pos = 0u64;
                    let mut inside = p.len() == start.len();
                    for d in 0..start.len().min(p.len()) {
                        if p[d] < start[d] || p[d] - start[d] >= count[d] {
                            inside = false;
                            break;
                        }
                        pos = pos * count[d] + (p[d] - start[d]);
                    }
                    if inside {
                        f(pos, k as u64);
                    }
                }
            }
            Resolved::Product(axes) => {
                let rank = axes.len();
                if rank != start.len() {
                    return;
                }
                // per dimension: (offset in the request, rank in the axis) of selected coords
                let hits: Vec<Vec<(u64, u64)>> = (0..rank)
                    .map(|d| {
                        (0..count[d])
                            .filter_map(|o| axes[d].rank(start[d] + o).map(|r| (o, r)))
                            .collect()
                    })
                    .collect();
                if rank == 0 {
                    f(0, 0);
                    return;
                }
                if hits.iter().any(Vec::is_empty) {
                    return;
                }
                let lens: Vec<u64> = axes.iter().map(Axis::len).collect();
                let mut idx = vec![0usize; rank];
                loop {
                    // the position is inside the request (bounded); the selection's element
                    // number may not fit when a hostile extent is huge: such elements are
                    // skipped
                    let (mut pos, mut k) = (0u64, Some(0u64));
                    for d in 0..rank {
                        let (o, r) = hits[d][idx[d]];
                        pos = pos * count[d] + o;
                        k = k
                            .and_then(|k| k.checked_mul(lens[d]))
                            .and_then(|k| k.checked_add(r));
                    }
                    if let Some(k) = k {
                        f(pos, k);
                    }
                    let mut d = rank;
                    loop {
                        if d == 0 {
                            return;
                        }
                        d -= 1;
                        idx[d] += 1;
                        if idx[d] < hits[d].len() {
                            break;
                        }
                        idx[d] = 0;
                    }
                }
            }
        }
    }
}

/// Resolve `sel` against `extent`; an error message (for the user) when it does not fit or
/// uses what this reader does not handle.
pub(crate) fn resolve(sel: &Selection, extent: &[u64]) -> Result<Resolved, String> {
    let rank = extent.len();
    let fits = |r: usize| {
        if r == rank {
            Ok(())
        } else {
            Err(format!(
                "a selection of rank {r} on a dataspace of rank {rank}"
            ))
        }
    };
    match sel {
        Selection::None => Ok(Resolved::Points {
            rank: rank.max(1),
            coords: Vec::new(),
        }),
        Selection::All => Ok(Resolved::Product(
            extent
                .iter()
                .map(|&e| Axis::Regular {
                    start: 0,
                    stride: e.max(1),
                    count: 1,
                    block: e,
                })
                .collect(),
        )),
        Selection::Points { rank: r, coords } => {
            fits(*r)?;
            for p in coords.chunks_exact(*r) {
                if p.iter().zip(extent).any(|(&x, &e)| x >= e) {
                    return Err(format!("point {p:?} outside the extent {extent:?}"));
                }
            }
            Ok(Resolved::Points {
                rank: *r,
                coords: coords.clone(),
            })
        }
        Selection::Regular {
            start,
            stride,
            count,
            block,
        } => {
            fits(start.len())?;
            let mut axes = Vec::with_capacity(rank);
            for d in 0..rank {
                let (s, t, c, b) = (start[d], stride[d], count[d], block[d]);
                if c == UNLIMITED || b == UNLIMITED {
                    return Err(
                        "an unlimited mapping (count or block H5S_UNLIMITED) is not supported"
                            .to_string(),
                    );
                }
                let last = if c == 0 || b == 0 {
                    None
                } else {
                    (c - 1)
                        .checked_mul(t)
                        .and_then(|x| x.checked_add(s))
                        .and_then(|x| x.checked_add(b - 1))
                };
                if c > 1 && t < b {
                    return Err(format!(
                        "hyperslab stride {t} smaller than its block {b} (overlapping blocks)"
                    ));
                }
                match last {
                    Some(l) if l < extent[d] => {}
                    None if c == 0 || b == 0 => {}
                    _ => {
                        return Err(format!(
                            "hyperslab start {s} stride {t} count {c} block {b} runs past the extent {} of dimension {d}",
                            extent[d]
                        ))
                    }
                }
                axes.push(Axis::Regular {
                    start: s,
                    // one block: its stride means nothing, and HDF5 writes 1 there (the
                    // version 3 encoding of `lay[r] = src[r]`), less than the block
                    stride: if c <= 1 { b.max(1) } else { t.max(1) },
                    count: c,
                    block: b,
                });
            }
            Ok(Resolved::Product(axes))
        }
        Selection::Blocks { rank: r, blocks } => {
            fits(*r)?;
            for (lo, hi) in blocks {
                if hi.iter().zip(extent).any(|(&x, &e)| x >= e) {
                    return Err(format!(
                        "hyperslab block {lo:?}..{hi:?} outside the extent {extent:?}"
                    ));
                }
            }
            match product_of(blocks, rank) {
                Some(r) => Ok(r),
                None => enumerate(blocks, rank),
            }
        }
    }
}

/// The blocks as a product of per-dimension intervals, when they are exactly that (HDF5
/// stores a regular hyperslab as its blocks in the older encoding).
fn product_of(blocks: &[(Vec<u64>, Vec<u64>)], rank: usize) -> Option<Resolved> {
    let mut per: Vec<Vec<(u64, u64)>> = vec![Vec::new(); rank];
    for (lo, hi) in blocks {
        for d in 0..rank {
            per[d].push((lo[d], hi[d] + 1));
        }
    }
    for v in &mut per {
        v.sort_unstable();
        v.dedup();
        // disjoint intervals only
        if v.windows(2).any(|w| w[0].1 > w[1].0) {
            return None;
        }
    }
    let combos = per
        .iter()
        .try_fold(1u64, |a, v| a.checked_mul(v.len() as u64))?;
    if combos != blocks.len() as u64 {
        return None;
    }
    let mut seen = std::collections::HashSet::with_capacity(blocks.len());
    for (lo, hi) in blocks {
        let key: Vec<usize> = (0..rank)
            .map(|d| {
                per[d]
                    .binary_search(&(lo[d], hi[d] + 1))
                    .unwrap_or(usize::MAX)
            })
            .collect();
        if !seen.insert(key) {
            return None;
        }
    }
    Some(Resolved::Product(
        per.into_iter()
            .map(|v| {
                let mut before = 0u64;
                Axis::List(
                    v.into_iter()
                        .map(|(lo, hi)| {
                            let e = (lo, hi, before);
                            before += hi - lo;
                            e
                        })
                        .collect(),
                )
            })
            .collect(),
    ))
}

/// The union of the blocks as points in row-major order (bounded).
fn enumerate(blocks: &[(Vec<u64>, Vec<u64>)], rank: usize) -> Result<Resolved, String> {
    let mut total = 0u64;
    for (lo, hi) in blocks {
        let n = lo
            .iter()
            .zip(hi)
            .try_fold(1u64, |a, (l, h)| a.checked_mul(h - l + 1))
            .unwrap_or(u64::MAX);
        total = total.saturating_add(n);
    }
    if total.saturating_mul(rank as u64) > MAX_ENUMERATED {
        return Err(format!(
            "an irregular hyperslab of {total} elements of rank {rank} (at most {MAX_ENUMERATED} coordinates are handled)"
        ));
    }
    let mut pts: Vec<Vec<u64>> = Vec::with_capacity(total as usize);
    for (lo, hi) in blocks {
        let mut p = lo.clone();
        loop {
            pts.push(p.clone());
            if !step(&mut p, lo, hi) {
                break;
            }
        }
    }
    pts.sort_unstable();
    pts.dedup();
    Ok(Resolved::Points {
        rank,
        coords: pts.into_iter().flatten().collect(),
    })
}

/// Advance `p` to the next coordinates of the box `lo..=hi` in row-major order; false after
/// the last.
fn step(p: &mut [u64], lo: &[u64], hi: &[u64]) -> bool {
    for d in (0..p.len()).rev() {
        if p[d] < hi[d] {
            p[d] += 1;
            return true;
        }
        p[d] = lo[d];
    }
    false
}

/// For each element of the request box (`start`/`count` in the virtual dataset) that the
/// mapping covers: its position in the request and the coordinates of its source element,
/// when those lie inside the source extent `src_extent`.
pub(crate) fn pairs(
    virt: &Resolved,
    src: &Resolved,
    src_extent: &[u64],
    start: &[u64],
    count: &[u64],
    mut f: impl FnMut(u64, &[u64]),
) {
    let n = virt.len().min(src.len());
    let mut coords = vec![0u64; src_extent.len()];
    virt.for_each_in(start, count, |pos, k| {
        if k >= n {
            return;
        }
        src.nth(k, &mut coords);
        if coords.iter().zip(src_extent).all(|(c, e)| c < e) {
            f(pos, &coords);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(entries: &[(&str, &str, Vec<u8>, Vec<u8>)]) -> Vec<u8> {
        let mut b = vec![0u8];
        b.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        for (f, d, s, v) in entries {
            b.extend_from_slice(f.as_bytes());
            b.push(0);
            b.extend_from_slice(d.as_bytes());
            b.push(0);
            b.extend_from_slice(s);
            b.extend_from_slice(v);
        }
        let sum = crate::format::checksum::lookup3(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    }

    /// A version 1 block: each entry is its flags byte and the bytes after it (names or
    /// indexes, as the flags say), then its two selections.
    /// Flags, names or indexes, source selection, virtual selection.
    type EntryV1 = (u8, Vec<u8>, Vec<u8>, Vec<u8>);

    fn block_v1(entries: &[EntryV1]) -> Vec<u8> {
        let mut b = vec![1u8];
        b.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        for (flags, names, s, v) in entries {
            b.push(*flags);
            b.extend_from_slice(names);
            b.extend_from_slice(s);
            b.extend_from_slice(v);
        }
        let sum = crate::format::checksum::lookup3(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    }

    #[test]
    fn version_1_blocks_share_names_and_flag_the_own_file() {
        let names = |parts: &[&[u8]]| parts.concat();
        let idx = |k: u64| k.to_le_bytes().to_vec();
        let b = block_v1(&[
            (
                0,
                names(&[b"long_src.h5\0", b"a_long_name\0"]),
                all(),
                all(),
            ),
            (
                SHARED_FILE | SHARED_DATASET,
                names(&[&idx(0), &idx(0)]),
                all(),
                all(),
            ),
            (SAME_FILE | SHARED_DATASET, idx(1), all(), all()),
            (SHARED_FILE, names(&[&idx(0), b"own\0"]), all(), all()),
            (SAME_FILE, b"own\0".to_vec(), all(), all()),
        ]);
        let e = parse_block(&b, 8, "v").unwrap();
        let got: Vec<(&str, &str)> = e.iter().map(|e| (&*e.file, &*e.dataset)).collect();
        assert_eq!(
            got,
            [
                ("long_src.h5", "a_long_name"),
                ("long_src.h5", "a_long_name"),
                (".", "a_long_name"),
                ("long_src.h5", "own"),
                (".", "own"),
            ]
        );
        // an index to the entry itself or later, unknown flags, and both file forms: errors
        for (flags, names, why) in [
            (
                SHARED_FILE,
                idx(1),
                "entry 1: its file name is that of entry 1",
            ),
            (
                SHARED_DATASET,
                names(&[b"f\0", &idx(7)]),
                "its dataset name is that of entry 7",
            ),
            (
                0x08,
                b"f\0d\0".to_vec(),
                "entry 1: flags 0x08 are not known",
            ),
            (SHARED_FILE | SAME_FILE, idx(0), "flags 0x05 are not known"),
        ] {
            let b = block_v1(&[
                (0, b"f\0d\0".to_vec(), all(), all()),
                (flags, names, all(), all()),
            ]);
            let e = parse_block(&b, 8, "v").unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
        // version 2 is named
        let mut b = block_v1(&[]);
        b[0] = 2;
        let n = b.len() - 4;
        let sum = crate::format::checksum::lookup3(&b[..n]);
        b[n..].copy_from_slice(&sum.to_le_bytes());
        let e = parse_block(&b, 8, "v").unwrap_err().to_string();
        assert!(e.contains("mapping block version 2"), "{e}");
    }

    fn u32s(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn all() -> Vec<u8> {
        u32s(&[3, 1, 0, 0])
    }

    fn blocks_v1(rank: u32, blocks: &[(&[u32], &[u32])]) -> Vec<u8> {
        let mut v = vec![
            2,
            1,
            0,
            8 + blocks.len() as u32 * 2 * rank * 4,
            rank,
            blocks.len() as u32,
        ];
        for (lo, hi) in blocks {
            v.extend_from_slice(lo);
            v.extend_from_slice(hi);
        }
        u32s(&v)
    }

    #[test]
    fn parses_all_and_v1_blocks() {
        let b = block(&[(".", "own", all(), blocks_v1(1, &[(&[0], &[4])]))]);
        let e = parse_block(&b, 8, "dataset \"/v\"").unwrap();
        assert_eq!(
            e,
            vec![Entry {
                file: ".".into(),
                dataset: "own".into(),
                source: Selection::All,
                virtual_sel: Selection::Blocks {
                    rank: 1,
                    blocks: vec![(vec![0], vec![4])]
                },
            }]
        );
    }

    #[test]
    fn bad_checksum_and_truncation_are_errors() {
        let mut b = block(&[(".", "own", all(), all())]);
        b[3] ^= 1;
        let e = parse_block(&b, 8, "dataset \"/v\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("checksum mismatch") && e.contains("/v"), "{e}");
        // a count far beyond the block: refused before allocating
        let mut b = vec![0u8];
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        let sum = crate::format::checksum::lookup3(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        let e = parse_block(&b, 8, "dataset \"/v\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("do not fit"), "{e}");
        // a selection cut short
        let mut b = vec![0u8];
        b.extend_from_slice(&1u64.to_le_bytes());
        b.extend_from_slice(b".\0d\0");
        b.extend_from_slice(&u32s(&[2, 1, 0, 24, 1, 1000])[..]);
        let sum = crate::format::checksum::lookup3(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        let e = parse_block(&b, 8, "dataset \"/v\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("do not fit"), "{e}");
    }

    #[test]
    fn regular_v3_and_points_v2() {
        // hyperslab v3 regular, encode size 2: start 1 stride 3 count unlimited block 2
        let mut s = u32s(&[2, 3]);
        s.extend_from_slice(&[1, 2]);
        s.extend_from_slice(&1u32.to_le_bytes());
        for v in [1u16, 3, 0xffff, 2] {
            s.extend_from_slice(&v.to_le_bytes());
        }
        // points v2, encode size 4, rank 2, 2 points
        let mut p = u32s(&[1, 2]);
        p.push(4);
        p.extend_from_slice(&u32s(&[2, 2, 0, 1, 3, 4]));
        let b = block(&[("src.h5", "/a", s, p)]);
        let e = parse_block(&b, 8, "v").unwrap();
        assert_eq!(
            e[0].source,
            Selection::Regular {
                start: vec![1],
                stride: vec![3],
                count: vec![UNLIMITED],
                block: vec![2]
            }
        );
        assert_eq!(
            e[0].virtual_sel,
            Selection::Points {
                rank: 2,
                coords: vec![0, 1, 3, 4]
            }
        );
        let err = resolve(&e[0].source, &[100]).unwrap_err();
        assert!(err.contains("unlimited"), "{err}");
    }

    #[test]
    fn printf_mappings_expand_per_block() {
        let e = Entry {
            file: "src-%b.h5".into(),
            dataset: "d%%".into(),
            source: Selection::All,
            virtual_sel: Selection::Regular {
                start: vec![0],
                stride: vec![4],
                count: vec![UNLIMITED],
                block: vec![4],
            },
        };
        let v = expand_unlimited(&e, &[10]).unwrap().unwrap();
        let got: Vec<(String, String, Selection)> = v
            .into_iter()
            .map(|e| (e.file, e.dataset, e.virtual_sel))
            .collect();
        let reg = |s: u64, b: u64| Selection::Regular {
            start: vec![s],
            stride: vec![4],
            count: vec![1],
            block: vec![b],
        };
        assert_eq!(
            got,
            vec![
                ("src-0.h5".into(), "d%%".into(), reg(0, 4)),
                ("src-1.h5".into(), "d%%".into(), reg(4, 4)),
                ("src-2.h5".into(), "d%%".into(), reg(8, 2)),
            ]
        );
        assert_eq!(literal_name("d%%").unwrap(), "d%");
        let bad = Entry {
            file: "src-%d.h5".into(),
            ..e.clone()
        };
        assert!(expand_unlimited(&bad, &[10])
            .unwrap_err()
            .contains("%d is not known"));
        // printf-style names on a limited mapping
        let limited = Entry {
            virtual_sel: Selection::All,
            ..e
        };
        assert!(expand_unlimited(&limited, &[10])
            .unwrap_err()
            .contains("not unlimited"));
    }

    #[test]
    fn product_mapping_numbers_row_major() {
        // virtual: rows 0,2 / cols 0,2,4 of a 3x5 space; source: all of a 2x3 space
        let v = Selection::Regular {
            start: vec![0, 0],
            stride: vec![2, 2],
            count: vec![2, 3],
            block: vec![1, 1],
        };
        let vr = resolve(&v, &[3, 5]).unwrap();
        let sr = resolve(&Selection::All, &[2, 3]).unwrap();
        let mut got = Vec::new();
        pairs(&vr, &sr, &[2, 3], &[0, 0], &[3, 5], |pos, c| {
            got.push((pos, c.to_vec()))
        });
        assert_eq!(
            got,
            vec![
                (0, vec![0, 0]),
                (2, vec![0, 1]),
                (4, vec![0, 2]),
                (10, vec![1, 0]),
                (12, vec![1, 1]),
                (14, vec![1, 2]),
            ]
        );
        // the same as irregular blocks (HDF5's older encoding) gives the same numbering
        let blocks: Vec<(Vec<u64>, Vec<u64>)> = [0u64, 2]
            .iter()
            .flat_map(|&r| [0u64, 2, 4].map(move |c| (vec![r, c], vec![r, c])))
            .collect();
        let br = resolve(&Selection::Blocks { rank: 2, blocks }, &[3, 5]).unwrap();
        let mut got2 = Vec::new();
        pairs(&br, &sr, &[2, 3], &[0, 0], &[3, 5], |pos, c| {
            got2.push((pos, c.to_vec()))
        });
        assert_eq!(got, got2);
        // a sub-request sees its part only, positions relative to it
        let mut part = Vec::new();
        pairs(&vr, &sr, &[2, 3], &[2, 1], &[1, 4], |pos, c| {
            part.push((pos, c.to_vec()))
        });
        assert_eq!(part, vec![(1, vec![1, 1]), (3, vec![1, 2])]);
    }

    /// Mutated mapping blocks (checksum recomputed, so the parser sees them) never panic,
    /// and what parses resolves and maps without panicking either.
    #[test]
    fn mutated_blocks_never_panic() {
        let mut s = u32s(&[2, 3]);
        s.extend_from_slice(&[1, 2]);
        s.extend_from_slice(&2u32.to_le_bytes());
        for v in [0u16, 3, 2, 1, 1, 1, 4, 2] {
            s.extend_from_slice(&v.to_le_bytes());
        }
        let seed = block(&[
            (
                "src.h5",
                "/a",
                all(),
                blocks_v1(1, &[(&[0], &[4]), (&[7], &[9])]),
            ),
            (".", "b", s, blocks_v1(2, &[(&[0, 0], &[1, 3])])),
        ]);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..20_000 {
            let mut b = seed[..seed.len() - 4].to_vec();
            for _ in 0..1 + next() % 4 {
                let i = (next() % b.len() as u64) as usize;
                b[i] = match next() % 3 {
                    0 => next() as u8,
                    1 => 0xff,
                    _ => 0,
                };
            }
            if next() % 8 == 0 {
                b.truncate((next() % b.len() as u64) as usize);
            }
            let sum = crate::format::checksum::lookup3(&b);
            b.extend_from_slice(&sum.to_le_bytes());
            let Ok(entries) = parse_block(&b, 8, "v") else {
                continue;
            };
            for e in entries {
                let _ = expand_unlimited(&e, &[10, 8]);
                for ext in [&[10u64][..], &[10, 8][..], &[u64::MAX, u64::MAX][..]] {
                    if let (Ok(v), Ok(src)) =
                        (resolve(&e.virtual_sel, ext), resolve(&e.source, ext))
                    {
                        let start = vec![0; ext.len()];
                        let count: Vec<u64> = ext.iter().map(|&n| n.min(16)).collect();
                        pairs(&v, &src, ext, &start, &count, |_, _| {});
                    }
                }
            }
        }
    }

    #[test]
    fn irregular_union_is_row_major() {
        // two blocks side by side that are not a product: an L shape
        let blocks = vec![(vec![0, 0], vec![1, 0]), (vec![0, 1], vec![0, 1])];
        let r = resolve(&Selection::Blocks { rank: 2, blocks }, &[2, 2]).unwrap();
        let mut c = [0u64; 2];
        let order: Vec<Vec<u64>> = (0..r.len())
            .map(|k| {
                r.nth(k, &mut c);
                c.to_vec()
            })
            .collect();
        assert_eq!(order, vec![vec![0, 0], vec![0, 1], vec![1, 0]]);
        // an L shape of two million elements: refused before enumerating it
        let big = vec![
            (vec![0, 0], vec![(1 << 21) - 1, 0]),
            (vec![0, 1], vec![0, 1]),
        ];
        let err = resolve(
            &Selection::Blocks {
                rank: 2,
                blocks: big,
            },
            &[1 << 21, 2],
        )
        .unwrap_err();
        assert!(err.contains("at most 4194304 coordinates"), "{err}");
    }
}
